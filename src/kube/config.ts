/**
 * Client factory: turns the product's settings into a client-node `KubeConfig` — in-cluster service
 * account, kubeconfig files (found as kubectl finds them: `resolveKubeconfig`), or (local mode) the
 * kubeconfig text the embedded API server wrote — and builds the transport and REST client on top. Errors
 * name the setting or the variable that caused them. Which mode `serve` runs in is decided in config.ts.
 */
import { delimiter, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
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
 * Where a cluster command finds its cluster, as kubectl does (SPEC §9): the `kubeconfig` setting
 * (`--kubeconfig`, or its MACHINE_API_MIGRATION_ variable); else `KUBECONFIG`, a `:`-separated list whose
 * missing entries are skipped and the rest merged (a `KUBECONFIG` naming no existing file is not a reason to
 * look in the home directory — kubectl does not either); else `$HOME/.kube/config`; else, in a pod, its
 * service account. Pure: the environment and the file check are passed in.
 */
export function resolveKubeconfig(input: {
  explicit: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  exists: (path: string) => boolean;
}): KubeconfigResolution {
  const { explicit, env, exists } = input;
  if (explicit)
    return { kind: "files", paths: [explicit], origin: `setting kubeconfig (--kubeconfig ${explicit})` };
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

/**
 * kubectl's merge of several kubeconfig files: the first file to name a cluster, user or context wins, and
 * the first current-context set wins. Relative certificate paths stay relative to their own file.
 */
function loadMerged(kc: KubeConfig, paths: readonly string[]): void {
  kc.loadFromFile(paths[0]!);
  for (const path of paths.slice(1)) {
    const next = new KubeConfig();
    next.loadFromFile(path);
    const has = (list: readonly { name: string }[], name: string) => list.some((x) => x.name === name);
    for (const c of next.clusters) if (!has(kc.clusters, c.name)) kc.addCluster(c);
    for (const u of next.users) if (!has(kc.users, u.name)) kc.addUser(u);
    for (const c of next.contexts) if (!has(kc.contexts, c.name)) kc.addContext(c);
    if (!kc.currentContext && next.currentContext) kc.setCurrentContext(next.currentContext);
  }
}

export class KubeConfigError extends Error {
  override name = "KubeConfigError";
}

export function kubeConfigFor(source: KubeConfigSource): KubeConfig {
  const kc = new KubeConfig();
  try {
    if ("inCluster" in source) kc.loadFromCluster();
    else if ("kubeconfigPath" in source) kc.loadFromFile(source.kubeconfigPath);
    else if ("kubeconfigPaths" in source) loadMerged(kc, source.kubeconfigPaths);
    else kc.loadFromString(source.kubeconfigText);
  } catch (e) {
    throw new KubeConfigError(
      `cannot load ${describeSource(source)}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
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
