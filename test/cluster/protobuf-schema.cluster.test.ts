/**
 * The local server's protobuf schema (src/apiserver/protobuf/schema.ts) against Kubernetes' own `.proto`
 * definitions (issue 22): every field number the table lists has that name and a matching type in the
 * generated.proto of the k8s.io/api and k8s.io/apimachinery versions the control plane is built from, and
 * every field of those messages is listed — but a kind's `status`, which the server owns and never reads from
 * a body. A message the table does not have whole would make the decoder drop what a client sent.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type FieldSpec, MESSAGES, type MessageName } from "../../src/apiserver/protobuf/schema.js";
import { pinnedModuleDir } from "./control-plane.js";
import { GENERATED_FILE, generate } from "./protobuf-generate.js";

/** Where each message of the table is defined: module, package directory, and the message's name there. */
const SOURCES: Record<MessageName, { module: "api" | "apimachinery"; dir: string; name?: string }> = {
  TypeMeta: { module: "apimachinery", dir: "pkg/runtime" },
  Unknown: { module: "apimachinery", dir: "pkg/runtime" },
  ObjectMeta: { module: "apimachinery", dir: "pkg/apis/meta/v1" },
  OwnerReference: { module: "apimachinery", dir: "pkg/apis/meta/v1" },
  ManagedFieldsEntry: { module: "apimachinery", dir: "pkg/apis/meta/v1" },
  FieldsV1: { module: "apimachinery", dir: "pkg/apis/meta/v1" },
  LabelSelector: { module: "apimachinery", dir: "pkg/apis/meta/v1" },
  LabelSelectorRequirement: { module: "apimachinery", dir: "pkg/apis/meta/v1" },
  FieldSelectorRequirement: { module: "apimachinery", dir: "pkg/apis/meta/v1" },
  ConfigMap: { module: "api", dir: "core/v1" },
  Secret: { module: "api", dir: "core/v1" },
  Namespace: { module: "api", dir: "core/v1" },
  NamespaceSpec: { module: "api", dir: "core/v1" },
  NamespaceStatus: { module: "api", dir: "core/v1" },
  NamespaceCondition: { module: "api", dir: "core/v1" },
  ObjectReference: { module: "api", dir: "core/v1" },
  LocalObjectReference: { module: "api", dir: "core/v1" },
  ServiceAccount: { module: "api", dir: "core/v1" },
  PolicyRule: { module: "api", dir: "rbac/v1" },
  AggregationRule: { module: "api", dir: "rbac/v1" },
  Role: { module: "api", dir: "rbac/v1" },
  ClusterRole: { module: "api", dir: "rbac/v1" },
  Subject: { module: "api", dir: "rbac/v1" },
  RoleRef: { module: "api", dir: "rbac/v1" },
  RoleBinding: { module: "api", dir: "rbac/v1" },
  ClusterRoleBinding: { module: "api", dir: "rbac/v1" },
  PriorityClass: { module: "api", dir: "scheduling/v1" },
  PodDisruptionBudget: { module: "api", dir: "policy/v1" },
  PodDisruptionBudgetSpec: { module: "api", dir: "policy/v1" },
  SelfSubjectAccessReview: { module: "api", dir: "authorization/v1" },
  SelfSubjectAccessReviewSpec: { module: "api", dir: "authorization/v1" },
  ResourceAttributes: { module: "api", dir: "authorization/v1" },
  NonResourceAttributes: { module: "api", dir: "authorization/v1" },
  FieldSelectorAttributes: { module: "api", dir: "authorization/v1" },
  LabelSelectorAttributes: { module: "api", dir: "authorization/v1" },
  SelfSubjectRulesReview: { module: "api", dir: "authorization/v1" },
  SelfSubjectRulesReviewSpec: { module: "api", dir: "authorization/v1" },
  SelfSubjectReview: { module: "api", dir: "authentication/v1" },
};

interface ProtoField {
  label: string;
  type: string;
  name: string;
}

/** `message Name { … }` of a generated.proto: field number → label, type and name (comments skipped). */
const messageFields = (text: string, name: string): Map<number, ProtoField> | undefined => {
  const start = text.indexOf(`\nmessage ${name} {`);
  if (start < 0) return undefined;
  const end = text.indexOf("\n}", start);
  const fields = new Map<number, ProtoField>();
  for (const line of text.slice(start, end).split("\n")) {
    const m = /^\s*(optional|repeated)?\s*(map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*(\d+);/.exec(line);
    if (m) fields.set(Number(m[4]), { label: m[1] ?? "", type: m[2]!, name: m[3]! });
  }
  return fields;
};

/** Whether the table's type of a field is what the .proto declares. */
const typeMatches = (spec: FieldSpec, proto: ProtoField): boolean => {
  const t = spec.type;
  const last = proto.type.split(".").pop() ?? proto.type;
  if ((proto.label === "repeated") !== (spec.repeated === true)) return false;
  switch (t.kind) {
    case "string":
      return proto.type === "string";
    case "bytes":
    case "json":
      return proto.type === "bytes";
    case "bool":
      return proto.type === "bool";
    case "int32":
      return proto.type === "int32";
    case "int64":
      return proto.type === "int64";
    case "time":
      return last === "Time";
    case "intOrString":
      return last === "IntOrString";
    case "quantity":
      return last === "Quantity";
    case "double":
      return proto.type === "double";
    case "messageMap":
      return proto.type.startsWith("map<string,");
    case "message":
      return last === t.message;
    case "map":
      return proto.type === `map<string, ${t.value}>`;
  }
};

const texts = new Map<string, string>();
beforeAll(async () => {
  const dirs = {
    api: await pinnedModuleDir("k8s.io/api"),
    apimachinery: await pinnedModuleDir("k8s.io/apimachinery"),
  };
  for (const source of Object.values(SOURCES)) {
    const file = join(dirs[source.module], source.dir, "generated.proto");
    if (!texts.has(file)) texts.set(file, await readFile(file, "utf8"));
  }
  for (const [name, source] of Object.entries(SOURCES))
    texts.set(name, texts.get(join(dirs[source.module], source.dir, "generated.proto"))!);
}, 300_000);

describe("the protobuf schema is Kubernetes' own (issue 22)", () => {
  it.each(Object.keys(MESSAGES) as MessageName[])(
    "%s: every field as generated.proto has it, and all of them",
    (name) => {
      const proto = messageFields(texts.get(name)!, SOURCES[name].name ?? name);
      expect(proto, `message ${name} in generated.proto`).toBeDefined();
      const table: Readonly<Record<number, FieldSpec>> = MESSAGES[name];
      const wrong = Object.entries(table).flatMap(([no, spec]) => {
        const p = proto!.get(Number(no));
        return p && p.name === spec.name && typeMatches(spec, p)
          ? []
          : [`${no}: ${spec.name} vs ${JSON.stringify(p)}`];
      });
      expect(wrong).toEqual([]);
      const missing = [...proto!.entries()]
        .filter(([no, p]) => table[no] === undefined && p.name !== "status")
        .map(([no, p]) => `${no}: ${p.name}`);
      expect(missing).toEqual([]);
    },
  );
});

describe("the generated workload messages are current (issue 22)", () => {
  it("src/apiserver/protobuf/generated.ts is what `npm run gen:protobuf` writes from the pinned sources", async () => {
    // biome formats the committed file; compare what it means, not its layout.
    const squash = (text: string) => text.replace(/\s+/g, "").replace(/,([}\]])/g, "$1");
    expect(squash(await readFile(GENERATED_FILE, "utf8"))).toBe(squash(await generate()));
  }, 300_000);
});
