/**
 * Writes src/apiserver/protobuf/generated.ts: the protobuf messages of the workload kinds kubectl's generators
 * send (`kubectl create deployment`, …), taken from Kubernetes' own sources at the control plane's pinned
 * versions — field numbers and types from generated.proto, JSON names, `omitempty`, pointers and inlining from
 * the Go structs' tags in types.go. The hand-written tables (schema.ts) cover the small kinds; a Deployment's
 * PodSpec alone is about a hundred messages. Run with `npm run gen:protobuf`; the real-control-plane suite
 * (protobuf-schema.cluster.test.ts) fails when the committed file differs from what this writes.
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { MESSAGES } from "../../src/apiserver/protobuf/schema.js";
import { pinnedModuleDir } from "./control-plane.js";

/** The top-level kinds generated, `apiVersion/kind` → package (module-relative directory). */
export const GENERATED_KINDS: Readonly<Record<string, { module: "api"; dir: string; message: string }>> = {
  "apps/v1/Deployment": { module: "api", dir: "apps/v1", message: "Deployment" },
  "v1/Service": { module: "api", dir: "core/v1", message: "Service" },
};

/** Packages whose messages a generated kind may reach. */
const PACKAGES = [
  { module: "api", dir: "apps/v1", proto: "k8s.io.api.apps.v1" },
  { module: "api", dir: "core/v1", proto: "k8s.io.api.core.v1" },
  { module: "apimachinery", dir: "pkg/apis/meta/v1", proto: "k8s.io.apimachinery.pkg.apis.meta.v1" },
] as const;

/** Messages with a JSON form of their own (decode.ts knows them), and the hand-written ones reused by name. */
const SPECIAL: Readonly<Record<string, string>> = {
  "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "time",
  "k8s.io.apimachinery.pkg.api.resource.Quantity": "quantity",
  "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "intOrString",
};
/** Messages schema.ts writes by hand (the same definitions): generated kinds refer to them by name. */
const HAND_WRITTEN: ReadonlySet<string> = new Set(Object.keys(MESSAGES));

interface ProtoField {
  repeated: boolean;
  type: string;
  name: string;
  number: number;
}

interface GoField {
  json: string;
  omitempty: boolean;
  pointer: boolean;
}

const parseProto = (text: string): Map<string, ProtoField[]> => {
  const out = new Map<string, ProtoField[]>();
  for (const m of text.matchAll(/\nmessage (\w+) \{([\s\S]*?)\n\}/g)) {
    const fields: ProtoField[] = [];
    for (const f of m[2]!.matchAll(/^\s*(optional|repeated)?\s*(map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*(\d+);/gm))
      fields.push({ repeated: f[1] === "repeated", type: f[2]!, name: f[3]!, number: Number(f[4]) });
    out.set(m[1]!, fields);
  }
  return out;
};

/** Go struct fields by protobuf field number: `json:"name,omitempty"`, a pointer, `json:",inline"`. */
const parseGo = (text: string): Map<string, Map<number, GoField>> => {
  const out = new Map<string, Map<number, GoField>>();
  for (const m of text.matchAll(/\ntype (\w+) struct \{([\s\S]*?)\n\}/g)) {
    const fields = new Map<number, GoField>();
    for (const line of m[2]!.split("\n")) {
      const f = /^\s*(?:\w+\s+)?(\*?)[\w.[\]*]+\s+`json:"([^"]*)"[^`]*protobuf:"\w+,(\d+),/.exec(line);
      if (!f) continue;
      const [json = "", ...opts] = f[2]!.split(",");
      fields.set(Number(f[3]), { json, omitempty: opts.includes("omitempty"), pointer: f[1] === "*" });
    }
    out.set(m[1]!, fields);
  }
  return out;
};

type Entry = { name: string; type: string; repeated?: boolean; keepZero?: boolean; inline?: boolean };

export async function generate(): Promise<string> {
  const dirs = {
    api: await pinnedModuleDir("k8s.io/api"),
    apimachinery: await pinnedModuleDir("k8s.io/apimachinery"),
  };
  const proto = new Map<string, ProtoField[]>();
  const go = new Map<string, Map<number, GoField>>();
  for (const p of PACKAGES) {
    const base = join(dirs[p.module], p.dir);
    for (const [name, fields] of parseProto(await readFile(join(base, "generated.proto"), "utf8")))
      proto.set(`${p.proto}.${name}`, fields);
    for (const [name, fields] of parseGo(await readFile(join(base, "types.go"), "utf8")))
      go.set(`${p.proto}.${name}`, fields);
  }
  const packageOf = (kind: { dir: string }) => PACKAGES.find((p) => p.dir === kind.dir)!.proto;
  /** A field's type as the proto names it, made absolute from the message's package. */
  const absolute = (type: string, pkg: string): string => {
    if (type.startsWith(".")) return type.slice(1);
    if (/^[a-z0-9]+$/.test(type)) return type;
    return `${pkg}.${type}`;
  };
  const messages = new Map<string, Record<number, Entry>>();
  const shortName = (full: string): string => full.split(".").pop()!;
  const typeOf = (full: string, visit: (m: string) => void): string => {
    if (SPECIAL[full]) return `{ kind: "${SPECIAL[full]}" }`;
    if (/^(string|bool|int32|int64|bytes|double)$/.test(full)) return `{ kind: "${full}" }`;
    if (!proto.has(full)) throw new Error(`no message ${full}`);
    const name = shortName(full);
    if (!HAND_WRITTEN.has(name)) visit(full);
    return `{ kind: "message", message: "${name}" }`;
  };
  const visit = (full: string): void => {
    const name = shortName(full);
    if (messages.has(name)) return;
    const pkg = full.slice(0, full.length - name.length - 1);
    const fields = proto.get(full)!;
    const tags = go.get(full);
    if (!tags) throw new Error(`no Go struct for ${full}`);
    const entries: Record<number, Entry> = {};
    messages.set(name, entries);
    for (const f of fields) {
      const tag = tags.get(f.number);
      if (!tag) throw new Error(`${full}.${f.name} = ${f.number}: no Go field with that protobuf number`);
      const map = /^map<\s*string\s*,\s*([\w.]+)\s*>$/.exec(f.type);
      let type: string;
      if (map) {
        const value = absolute(map[1]!, pkg);
        type =
          value === "string" || value === "bytes"
            ? `{ kind: "map", value: "${value}" }`
            : `{ kind: "messageMap", value: ${typeOf(value, visit)} }`;
      } else type = typeOf(absolute(f.type, pkg), visit);
      entries[f.number] = {
        name: tag.json === "" ? f.name : tag.json,
        type,
        ...(f.repeated ? { repeated: true } : {}),
        ...(tag.pointer || !tag.omitempty ? { keepZero: true } : {}),
        ...(tag.json === "" ? { inline: true } : {}),
      };
    }
  };
  for (const kind of Object.values(GENERATED_KINDS)) visit(`${packageOf(kind)}.${kind.message}`);

  const lines = [
    "// Generated by test/cluster/protobuf-generate.ts (`npm run gen:protobuf`) from k8s.io/api and",
    "// k8s.io/apimachinery at the control plane's pinned versions: generated.proto for numbers and types,",
    "// types.go's tags for JSON names, omitempty, pointers and inlining. Do not edit.",
    'import type { GeneratedSchema } from "./schema.js";',
    "",
    "export const GENERATED: GeneratedSchema = {",
    "  topLevel: {",
    ...Object.entries(GENERATED_KINDS).map(([k, v]) => `    "${k}": "${v.message}",`),
    "  },",
    "  messages: {",
  ];
  for (const [name, entries] of [...messages].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`    ${name}: {`);
    for (const [no, e] of Object.entries(entries)) {
      const flags = [
        e.repeated ? "repeated: true" : "",
        e.keepZero ? "keepZero: true" : "",
        e.inline ? "inline: true" : "",
      ].filter(Boolean);
      lines.push(
        `      ${no}: { name: "${e.name}", type: ${e.type}${flags.length ? `, ${flags.join(", ")}` : ""} },`,
      );
    }
    lines.push("    },");
  }
  lines.push("  },", "};", "");
  return lines.join("\n");
}

export const GENERATED_FILE = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../src/apiserver/protobuf/generated.ts",
);

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(GENERATED_FILE, await generate());
  console.log(`wrote ${GENERATED_FILE}`);
}
