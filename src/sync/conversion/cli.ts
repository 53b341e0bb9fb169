/**
 * The `convert` subcommand (SPEC §5): converts MAPI ⇄ CAPI YAML files offline, for GitOps users who keep
 * manifests in git. The shell around documents.ts: parses flags, reads files or stdin, parses YAML and
 * prints converted objects on stdout, warnings and field errors on stderr. Exit codes: 0 converted, 1 some
 * object failed (the others are still printed), 2 bad usage.
 */
import { asksForHelp, type CommandFlags, dnsLabelProblem, parseFlags } from "../../config.js";
import { isRecord, type KubeObject } from "../../kube/object.js";
import { appendAll } from "../../lists.js";
import { parseYaml, stringifyYaml } from "../../yaml.js";
import { convertDocuments, type Direction, flattenDocuments } from "./documents.js";

export interface ConvertIO {
  stdin: NodeJS.ReadableStream;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  readFile(path: string): Promise<string>;
}

const CONVERT_USAGE = `Usage: convert --to capi|mapi --infrastructure FILE -f FILE [-f FILE ...] [-o yaml|json]

Converts Machine API Machines/MachineSets to Cluster API (--to capi) or back (--to mapi), offline.

  --to capi|mapi         direction of the conversion (required)
  --infrastructure FILE  the Infrastructure "cluster" object (oc get infrastructure cluster -o yaml) (required)
  -f, --filename FILE    input YAML or JSON, several documents and List kinds accepted; "-" reads stdin;
                         repeatable. --to mapi needs the AWSMachine/AWSMachineTemplate (and, for control
                         plane machines, the AWSCluster) documents beside the CAPI objects
  -o, --output FORMAT    yaml (default, one document per object) or json (a List when several)
  --capi-namespace NS    namespace of produced CAPI objects (default openshift-cluster-api)
  --mapi-namespace NS    namespace of produced MAPI objects (default openshift-machine-api)
  -h, --help             show this help

Converted objects go to stdout; warnings and field errors go to stderr, each prefixed by kind/name.
Exit status: 0 all converted, 1 an object failed to convert (the others are still printed), 2 bad usage.
`;

export interface ConvertFlags {
  to: Direction;
  infrastructure: string;
  files: string[];
  output: "yaml" | "json";
  capiNamespace: string;
  mapiNamespace: string;
}

export type ParsedFlags =
  | { kind: "help" }
  | { kind: "run"; flags: ConvertFlags }
  | { kind: "error"; message: string };

const FLAGS: CommandFlags = Object.freeze({
  to: { type: "string" },
  infrastructure: { type: "string" },
  filename: { type: "string", short: "f" },
  output: { type: "string", short: "o" },
  "capi-namespace": { type: "string" },
  "mapi-namespace": { type: "string" },
});

/** Pure flag parsing (config.ts `parseFlags`, on `util.parseArgs`); every error names the flag at fault. */
export const parseConvertFlags = (argv: readonly string[]): ParsedFlags => {
  if (asksForHelp(argv)) return { kind: "help" };
  const parsed = parseFlags(argv, FLAGS);
  if (!parsed.ok) return { kind: "error", message: parsed.error };
  if (parsed.rest.length > 0)
    return { kind: "error", message: `unexpected argument ${JSON.stringify(parsed.rest[0])}` };
  const values: Record<string, string> = {};
  const files: string[] = [];
  for (const { name, rawName, value } of parsed.occurrences) {
    if (value === "") return { kind: "error", message: `flag ${rawName} needs a value` };
    if (name === "filename") files.push(value);
    else if (values[name] !== undefined) return { kind: "error", message: `flag ${rawName} given twice` };
    else values[name] = value;
  }
  if (values.to === undefined) return { kind: "error", message: "flag --to is required (capi or mapi)" };
  if (values.to !== "capi" && values.to !== "mapi")
    return { kind: "error", message: `flag --to must be capi or mapi, not ${JSON.stringify(values.to)}` };
  if (values.infrastructure === undefined)
    return {
      kind: "error",
      message: "flag --infrastructure is required (the Infrastructure cluster object)",
    };
  if (files.length === 0) return { kind: "error", message: "flag -f is required (a file, or - for stdin)" };
  if (files.filter((f) => f === "-").length > 1)
    return { kind: "error", message: "flag -f - (stdin) may be given once" };
  // Stdin is read once: a second reader would find it empty (decision 187).
  if (values.infrastructure === "-" && files.includes("-"))
    return {
      kind: "error",
      message: "stdin may be given once: --infrastructure - and -f - would both read it",
    };
  const output = values.output ?? "yaml";
  if (output !== "yaml" && output !== "json")
    return { kind: "error", message: `flag -o must be yaml or json, not ${JSON.stringify(output)}` };
  for (const flag of ["capi-namespace", "mapi-namespace"]) {
    const value = values[flag];
    const problem = value === undefined ? undefined : dnsLabelProblem(value);
    if (problem) return { kind: "error", message: `flag --${flag} ${problem}, not ${JSON.stringify(value)}` };
  }
  return {
    kind: "run",
    flags: {
      to: values.to,
      infrastructure: values.infrastructure,
      files,
      output,
      capiNamespace: values["capi-namespace"] ?? "openshift-cluster-api",
      mapiNamespace: values["mapi-namespace"] ?? "openshift-machine-api",
    },
  };
};

const readStream = async (stream: NodeJS.ReadableStream): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
};

/**
 * Every YAML (or JSON) document of one source, parsed within the project's YAML bounds (src/yaml.ts): the
 * error names the source and the document's line; `bound` when a bound refused the text rather than its syntax.
 */
const parseDocuments = (
  text: string,
  source: string,
): { ok: true; docs: unknown[] } | { ok: false; message: string; bound: boolean } => {
  const parsed = parseYaml(text);
  if (!parsed.ok) {
    const { bound, message } = parsed.problem;
    return { ok: false, message: `${source}: ${bound ? "" : "invalid YAML: "}${message}`, bound };
  }
  return { ok: true, docs: parsed.values };
};

const render = (objects: KubeObject[], output: "yaml" | "json"): string => {
  if (output === "json") {
    const value = objects.length === 1 ? objects[0] : { apiVersion: "v1", kind: "List", items: objects };
    return `${JSON.stringify(value, null, 2)}\n`;
  }
  return objects.map((o) => stringifyYaml(o, { lineWidth: 0 })).join("---\n");
};

export const runConvert = async (argv: string[], io: ConvertIO): Promise<number> => {
  const parsed = parseConvertFlags(argv);
  if (parsed.kind === "help") {
    io.stdout.write(CONVERT_USAGE);
    return 0;
  }
  if (parsed.kind === "error") {
    io.stderr.write(`error: ${parsed.message}\n\n${CONVERT_USAGE}`);
    return 2;
  }
  const { flags } = parsed;
  const read = async (
    path: string,
  ): Promise<{ ok: true; docs: unknown[] } | { ok: false; message: string; bound: boolean }> => {
    let text: string;
    try {
      text = path === "-" ? await readStream(io.stdin) : await io.readFile(path);
    } catch (err) {
      return {
        ok: false,
        message: `cannot read ${path === "-" ? "stdin" : path}: ${(err as Error).message}`,
        bound: false,
      };
    }
    return parseDocuments(text, path === "-" ? "<stdin>" : path);
  };

  const infraDocs = await read(flags.infrastructure);
  // Beyond a bound is a usage error (exit 2), as a flag's value beyond its bound is; invalid YAML is not.
  if (!infraDocs.ok) {
    io.stderr.write(`error: --infrastructure: ${infraDocs.message}\n`);
    return infraDocs.bound ? 2 : 1;
  }
  const infrastructure = flattenDocuments(infraDocs.docs).find((d) => d.kind === "Infrastructure");
  if (infrastructure === undefined || !isRecord(infrastructure)) {
    io.stderr.write(`error: --infrastructure: ${flags.infrastructure} holds no Infrastructure object\n`);
    return 1;
  }
  const documents: unknown[] = [];
  for (const file of flags.files) {
    const docs = await read(file);
    if (!docs.ok) {
      io.stderr.write(`error: ${docs.message}\n`);
      return docs.bound ? 2 : 1;
    }
    appendAll(documents, docs.docs);
  }

  const result = convertDocuments(documents, infrastructure, {
    to: flags.to,
    capiNamespace: flags.capiNamespace,
    mapiNamespace: flags.mapiNamespace,
  });
  for (const warning of result.warnings) io.stderr.write(`Warning: ${warning}\n`);
  for (const error of result.errors) io.stderr.write(`${error}\n`);
  if (result.objects.length > 0) io.stdout.write(render(result.objects, flags.output));
  if (result.failed > 0) {
    io.stderr.write(`error: ${result.failed} object(s) failed to convert\n`);
    return 1;
  }
  if (result.objects.length === 0) {
    io.stderr.write(
      `error: nothing to convert: no ${flags.to === "capi" ? "Machine API" : "Cluster API"} Machines or MachineSets in the input\n`,
    );
    return 1;
  }
  return 0;
};
