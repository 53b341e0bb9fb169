/**
 * Client factory: turns the product's settings into a client-node `KubeConfig` — in-cluster service
 * account, kubeconfig files (found as kubectl finds them: `resolveKubeconfig`), or (local mode) the
 * kubeconfig text the embedded API server wrote — and builds the transport and REST client on top. Errors
 * name the setting or the variable that caused them, and the file. Kubeconfig text is read and checked here
 * (`readKubeconfigText`) before client-node sees it: client-node throws JavaScript errors, or silently reads
 * nothing, on text that is not a kubeconfig. Which mode `serve` runs in is decided in config.ts.
 */
import { readFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { parseYaml } from "../yaml.js";
import type { ClientOptions, KubeClient } from "./client.js";
import { createKubeClient } from "./client.js";
import type { Transport, TransportOptions } from "./transport.js";
import { kubeConfigTransport } from "./transport.js";

export type KubeConfigSource =
  | { inCluster: true }
  | { kubeconfigPath: string; context?: string }
  /** Files merged in order (KUBECONFIG); `origin` names where they came from in messages. */
  | { kubeconfigPaths: readonly string[]; origin: string; context?: string }
  | { kubeconfigText: string; context?: string };

export type KubeconfigResolution =
  | { kind: "files"; paths: string[]; origin: string }
  | { kind: "in-cluster" }
  | { kind: "none"; reason: string };

/**
 * Where a cluster command finds its cluster, as kubectl does (SPEC §9): `explicit` (`--kubeconfig`; the
 * installer passes its `kubeconfig` setting, which its MACHINE_API_MIGRATION_ variable may also give); else
 * `KUBECONFIG`, a `:`-separated list whose missing entries are skipped and the rest merged (a `KUBECONFIG`
 * naming no existing file is not a reason to look in the home directory — kubectl does not either); else
 * `$HOME/.kube/config`; else, in a pod, its service account. `explicitOrigin` names `explicit` in messages
 * (default: the setting). Pure: the environment and the file check are passed in.
 */
export function resolveKubeconfig(input: {
  explicit: string | undefined;
  explicitOrigin?: string;
  env: Readonly<Record<string, string | undefined>>;
  exists: (path: string) => boolean;
}): KubeconfigResolution {
  const { explicit, env, exists } = input;
  if (explicit)
    return {
      kind: "files",
      paths: [explicit],
      origin: input.explicitOrigin ?? `setting kubeconfig (--kubeconfig ${explicit})`,
    };
  const listed = (env.KUBECONFIG ?? "").split(delimiter).filter((p) => p.length > 0);
  const inPod = Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
  if (listed.length > 0) {
    const paths = listed.filter(exists);
    if (paths.length > 0) return { kind: "files", paths, origin: `KUBECONFIG (${paths.join(delimiter)})` };
    if (inPod) return { kind: "in-cluster" };
    return { kind: "none", reason: `KUBECONFIG (${listed.join(delimiter)}) names no existing file` };
  }
  const home = env.HOME ? join(env.HOME, ".kube", "config") : undefined;
  if (home && exists(home)) return { kind: "files", paths: [home], origin: home };
  if (inPod) return { kind: "in-cluster" };
  return {
    kind: "none",
    reason: "no kubeconfig found (--kubeconfig, KUBECONFIG, ~/.kube/config) and not in a pod",
  };
}

/** The source to connect with for a resolution that found something. */
export function sourceOf(
  found: Exclude<KubeconfigResolution, { kind: "none" }>,
  context: string | undefined,
): KubeConfigSource {
  if (found.kind === "in-cluster") return { inCluster: true };
  return { kubeconfigPaths: found.paths, origin: found.origin, ...(context ? { context } : {}) };
}

/** What one kubeconfig's text holds, as kubectl's clientcmd reads it. */
export type KubeconfigText =
  /** No file content, whitespace, comments, `{}` or only `apiVersion`/`kind`: an empty config. */
  | { kind: "empty" }
  | { kind: "config"; config: Record<string, unknown> }
  | { kind: "not-yaml"; why: string }
  | { kind: "not-kubeconfig"; why: string };

/** The entries client-node reads from each list, and the fields it uses as strings or objects without checking. */
const ENTRY_FIELDS = [
  {
    list: "clusters",
    body: "cluster",
    strings: [
      "server",
      "certificate-authority",
      "certificate-authority-data",
      "tls-server-name",
      "proxy-url",
    ],
    mappings: [],
  },
  {
    list: "users",
    body: "user",
    strings: [
      "token",
      "token-file",
      "client-certificate",
      "client-certificate-data",
      "client-key",
      "client-key-data",
      "username",
      "password",
      "as",
    ],
    mappings: ["exec", "auth-provider"],
  },
  { list: "contexts", body: "context", strings: ["cluster", "user", "namespace"], mappings: [] },
] as const;

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const typeName = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "a list"
      : isMapping(value)
        ? "a mapping"
        : `a ${typeof value}`;

/** The first field whose type client-node would trip over (a TypeError, or a number read as a file descriptor). */
function shapeProblem(config: Record<string, unknown>): string | undefined {
  const current = config["current-context"];
  if (current != null && typeof current !== "string")
    return `current-context is ${typeName(current)}, not a string`;
  for (const { list, body, strings, mappings } of ENTRY_FIELDS) {
    const entries = config[list];
    if (entries == null) continue;
    if (!Array.isArray(entries)) return `${list} is ${typeName(entries)}, not a list`;
    for (const [i, entry] of entries.entries()) {
      const at = `${list}[${i}]`;
      if (!isMapping(entry)) return `${at} is ${typeName(entry)}, not a mapping`;
      if (entry.name != null && typeof entry.name !== "string")
        return `${at}.name is ${typeName(entry.name)}, not a string`;
      const fields = entry[body];
      if (fields == null) continue;
      if (!isMapping(fields)) return `${at}.${body} is ${typeName(fields)}, not a mapping`;
      for (const field of strings)
        if (fields[field] != null && typeof fields[field] !== "string")
          return `${at}.${body}.${field} is ${typeName(fields[field])}, not a string`;
      for (const field of mappings)
        if (fields[field] != null && !isMapping(fields[field]))
          return `${at}.${body}.${field} is ${typeName(fields[field])}, not a mapping`;
    }
  }
  return undefined;
}

/**
 * Reads one kubeconfig's text as kubectl does: an empty file (clientcmd checks for no bytes; whitespace,
 * comments and `{}` decode to the same empty config) is an empty config, which merges as nothing. Anything
 * else must be one YAML mapping whose fields have the types client-node reads them as. Pure.
 */
export function readKubeconfigText(text: string): KubeconfigText {
  const parsed = parseYaml(text);
  if (!parsed.ok) return { kind: "not-yaml", why: parsed.problem.message };
  const documents = parsed.values.filter((value) => value !== null);
  if (documents.length > 1)
    return {
      kind: "not-kubeconfig",
      why: `it holds ${documents.length} YAML documents, where a kubeconfig is one`,
    };
  const config = documents[0];
  if (config === undefined) return { kind: "empty" };
  if (!isMapping(config))
    return {
      kind: "not-kubeconfig",
      why: `it is ${typeName(config)}, not a mapping of clusters, users and contexts`,
    };
  const problem = shapeProblem(config);
  if (problem) return { kind: "not-kubeconfig", why: problem };
  const holdsNothing =
    ENTRY_FIELDS.every(({ list }) => ((config[list] as unknown[] | null | undefined) ?? []).length === 0) &&
    !config["current-context"];
  return holdsNothing ? { kind: "empty" } : { kind: "config", config };
}

export class KubeConfigError extends Error {
  override name = "KubeConfigError";
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** One kubeconfig to merge: `name` is how messages call it (its path), `directory` anchors relative paths. */
interface KubeconfigInput {
  name: string;
  text: () => string;
  directory?: string;
}

const inputsOf = (source: Exclude<KubeConfigSource, { inCluster: true }>): KubeconfigInput[] =>
  "kubeconfigText" in source
    ? [{ name: "it", text: () => source.kubeconfigText }]
    : ("kubeconfigPath" in source ? [source.kubeconfigPath] : source.kubeconfigPaths).map((path) => ({
        name: path,
        text: () => readFileSync(path, "utf8"),
        directory: dirname(path),
      }));

const listed = (names: readonly string[]): string =>
  names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;

/**
 * kubectl's merge of kubeconfigs: empty ones contribute nothing, the first to name a cluster, user or context
 * wins, and the first current-context set wins. Relative certificate paths stay relative to their own file.
 * Nothing left to connect with is refused here, naming the empty files, as kubectl has no cluster either.
 */
function loadMerged(inputs: readonly KubeconfigInput[], what: string): KubeConfig {
  const kc = new KubeConfig();
  const empty: string[] = [];
  for (const input of inputs) {
    let text: string;
    try {
      text = input.text();
    } catch (e) {
      const message = errorText(e);
      throw new KubeConfigError(
        `cannot load ${what}: ${message.includes(input.name) ? message : `${input.name}: ${message}`}`,
      );
    }
    const read = readKubeconfigText(text);
    if (read.kind === "not-yaml")
      throw new KubeConfigError(`cannot load ${what}: ${input.name}: ${read.why}`);
    if (read.kind === "not-kubeconfig")
      throw new KubeConfigError(`cannot load ${what}: ${input.name} is not a kubeconfig: ${read.why}`);
    if (read.kind === "empty") {
      empty.push(input.name);
      continue;
    }
    const next = new KubeConfig();
    try {
      // JSON is YAML: client-node reads exactly the values checked above.
      next.loadFromString(JSON.stringify(read.config));
      if (input.directory) next.makePathsAbsolute(input.directory);
    } catch (e) {
      throw new KubeConfigError(`cannot load ${what}: ${input.name}: ${errorText(e)}`);
    }
    const has = (list: readonly { name: string }[], name: string) => list.some((x) => x.name === name);
    for (const c of next.clusters) if (!has(kc.clusters, c.name)) kc.addCluster(c);
    for (const u of next.users) if (!has(kc.users, u.name)) kc.addUser(u);
    for (const c of next.contexts) if (!has(kc.contexts, c.name)) kc.addContext(c);
    if (!kc.currentContext && next.currentContext) kc.setCurrentContext(next.currentContext);
  }
  if (kc.clusters.length === 0 && kc.contexts.length === 0) {
    const which = empty.length === 0 ? "" : ` (${listed(empty)} ${empty.length === 1 ? "is" : "are"} empty)`;
    throw new KubeConfigError(
      `${what} holds no clusters or contexts${which}; name a kubeconfig that has the cluster, as "oc config view --minify --flatten" writes it`,
    );
  }
  return kc;
}

function loadInCluster(): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromCluster();
  } catch (e) {
    throw new KubeConfigError(`cannot load ${describeSource({ inCluster: true })}: ${errorText(e)}`);
  }
  return kc;
}

export function kubeConfigFor(source: KubeConfigSource): KubeConfig {
  const kc = "inCluster" in source ? loadInCluster() : loadMerged(inputsOf(source), describeSource(source));
  if ("context" in source && source.context) {
    // client-node accepts any name here and then finds no cluster; kubectl names the missing context.
    if (!kc.getContextObject(source.context))
      throw new KubeConfigError(
        `context "${source.context}" (--context) is not in ${describeSource(source)}`,
      );
    kc.setCurrentContext(source.context);
  }
  const cluster = kc.getCurrentCluster();
  // client-node builds "https://undefined:undefined" outside a pod instead of failing.
  if ("inCluster" in source && (!cluster?.server || cluster.server.includes("undefined"))) {
    throw new KubeConfigError(
      "cannot load in-cluster service account configuration: not running in a pod (no Kubernetes service address); set kubeconfig (--kubeconfig) instead",
    );
  }
  if (!cluster?.server) {
    const what =
      "kubeconfigPath" in source
        ? `setting kubeconfig (${source.kubeconfigPath})`
        : "kubeconfigPaths" in source
          ? source.origin
          : "the configuration";
    throw new KubeConfigError(`${what} has no current cluster with a server address`);
  }
  return kc;
}

const describeSource = (source: KubeConfigSource): string =>
  "inCluster" in source
    ? "in-cluster service account configuration"
    : "kubeconfigPath" in source
      ? `setting kubeconfig (--kubeconfig ${source.kubeconfigPath})`
      : "kubeconfigPaths" in source
        ? source.origin
        : "the local API server's kubeconfig";

export interface KubeConnection {
  kubeConfig: KubeConfig;
  transport: Transport;
  client: KubeClient;
}

export function connect(
  source: KubeConfigSource,
  options: TransportOptions = {},
  clientOptions: ClientOptions = {},
): KubeConnection {
  const kubeConfig = kubeConfigFor(source);
  const transport = kubeConfigTransport(kubeConfig, options);
  return { kubeConfig, transport, client: createKubeClient(transport, clientOptions) };
}
