/**
 * What the one-shot admin commands (`preflight`, `uninstall-prepare`) share: parsing their own flags with
 * the shared settings table, connecting to the cluster found as kubectl finds it,
 * and reading every machine object once into an in-memory store (no informers: they list once and exit).
 * The pure report and plan logic lives in ./preflight.ts and ./uninstall.ts, not here.
 */
import { existsSync } from "node:fs";
import { type CommandFlags, type Config, parseCommandLine } from "../config.js";
import type { KubeClient } from "../kube/client.js";
import { type Clock, systemClock } from "../kube/clock.js";
import { type ClusterClock, clusterClock } from "../kube/cluster-clock.js";
import {
  connect,
  KubeConfigError,
  type KubeConnection,
  resolveKubeconfig,
  sourceOf,
} from "../kube/config.js";
import { NotFoundError } from "../kube/errors.js";
import { KINDS, type ResourceType } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { DEFAULT_PLATFORM } from "../platforms/registry.js";
import { type MemoryStore, memoryStore } from "../policies/memory-store.js";
import { readServedPlatform } from "../supported.js";
import type { PlatformConverter } from "../sync/conversion/platform.js";

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export type Connected =
  | {
      ok: true;
      config: Config;
      flags: Record<string, string | true>;
      connection: KubeConnection;
      /** `clock` moved to the cluster's time by the first answer's Date header (cluster-clock.ts). */
      clusterClock: ClusterClock;
      /** Where the cluster was found, for messages: `--kubeconfig F`, `KUBECONFIG (…)`, `~/.kube/config`'s path. */
      source: string;
      /** The API server's URL, for messages. */
      server: string;
    }
  | { ok: false; error: string };

/** `--context`: every cluster command takes it, as kubectl does. */
const CONTEXT_FLAG: CommandFlags = { context: { type: "string" } };

/** `serve`'s kubeconfig variable, which the admin commands do not read (decision 183). */
const SERVE_KUBECONFIG_VARIABLE = "MACHINE_API_MIGRATION_KUBECONFIG";

/**
 * Settings, the command's own flags and a connection for a command that acts on a cluster. The cluster is
 * found exactly as kubectl finds it (SPEC §9; src/kube/config.ts `resolveKubeconfig`): `--kubeconfig`, else
 * `KUBECONFIG`, else `~/.kube/config`, else the pod's service account. `serve`'s own variable for the
 * `kubeconfig` setting is not read: left exported in a shell for a local `serve`, it would silently point
 * an admin command at another cluster than `kubectl` talks to (decision 183). With no cluster there is
 * nothing to inspect, which is a usage error here (local mode is `serve`'s alone).
 */
export function connectFromSettings(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  own: CommandFlags = {},
  exists: (path: string) => boolean = existsSync,
  clock: Clock = systemClock,
): Connected {
  // Only the flag gives the `kubeconfig` setting here: its variable is serve's.
  const settingsEnv = { ...env, [SERVE_KUBECONFIG_VARIABLE]: undefined };
  const parsed = parseCommandLine(args, settingsEnv, { ...own, ...CONTEXT_FLAG });
  if (!parsed.ok) return { ok: false, error: parsed.error };
  if (parsed.rest.length > 0)
    return { ok: false, error: `unexpected argument ${JSON.stringify(parsed.rest[0])}` };
  const { config, flags } = parsed;
  const found = resolveKubeconfig({
    explicit: config.kubeconfig,
    explicitOrigin: `--kubeconfig ${config.kubeconfig}`,
    env: settingsEnv,
    exists,
  });
  if (found.kind === "none") {
    const ignored = env[SERVE_KUBECONFIG_VARIABLE]
      ? `; ${SERVE_KUBECONFIG_VARIABLE} is serve's setting, which the admin commands do not read`
      : "";
    return {
      ok: false,
      error: `${command} acts on a cluster: set kubeconfig (--kubeconfig FILE, KUBECONFIG or ~/.kube/config) or run it in a pod (${found.reason}${ignored})`,
    };
  }
  const context = typeof flags.context === "string" ? flags.context : undefined;
  if (found.kind === "in-cluster" && context)
    return { ok: false, error: "--context needs a kubeconfig (--kubeconfig, KUBECONFIG or ~/.kube/config)" };
  const source =
    found.kind === "in-cluster"
      ? "the pod's service account"
      : `${found.origin}${context ? `, --context ${context}` : ""}`;
  try {
    const cluster = clusterClock(clock);
    const connection = connect(sourceOf(found, context), { onResponse: cluster.observe });
    const server = connection.kubeConfig.getCurrentCluster()?.server ?? "(no server)";
    return { ok: true, config, flags, connection, clusterClock: cluster, source, server };
  } catch (e) {
    if (e instanceof KubeConfigError) return { ok: false, error: e.message };
    throw e;
  }
}

export interface Namespaces {
  mapiNamespace: string;
  capiNamespace: string;
}

/** Every kind the reports and plans read, and where: the platform's infrastructure kinds among them. */
export const readKinds = (
  ns: Namespaces,
  platform: PlatformConverter = DEFAULT_PLATFORM,
): ReadonlyArray<readonly [ResourceType, string | undefined]> => [
  [KINDS.infrastructure, undefined],
  [KINDS.mapiMachine, ns.mapiNamespace],
  [KINDS.mapiMachineSet, ns.mapiNamespace],
  [KINDS.capiMachine, ns.capiNamespace],
  [KINDS.capiMachineSet, ns.capiNamespace],
  [platform.infraMachine, ns.capiNamespace],
  [platform.infraMachineTemplate, ns.capiNamespace],
  [platform.infraCluster, ns.capiNamespace],
];

/** Lists a kind; a kind the cluster does not serve (CRD not installed) reads as empty. */
async function listOrEmpty(
  client: KubeClient,
  type: ResourceType,
  namespace: string | undefined,
): Promise<KubeObject[]> {
  try {
    return (await client.list(type, namespace === undefined ? {} : { namespace })).items;
  } catch (e) {
    if (e instanceof NotFoundError) return [];
    throw e;
  }
}

/** One LIST per kind into a fresh memory store: the whole view a one-shot command works from. */
export async function readCluster(client: KubeClient, ns: Namespaces): Promise<MemoryStore> {
  const { platform } = await readServedPlatform(client);
  const lists = await Promise.all(
    readKinds(ns, platform).map(([type, namespace]) => listOrEmpty(client, type, namespace)),
  );
  return memoryStore(lists.flat());
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
