/**
 * What the one-shot admin commands (`preflight`, `uninstall-prepare`) share: reading their own flags out of
 * the argument list before the shared settings table sees it, connecting to the cluster the settings name,
 * and reading every machine object once into an in-memory store (no informers: they list once and exit).
 * The pure report and plan logic lives in ./preflight.ts and ./uninstall.ts, not here.
 */
import { type Config, parseConfig, runMode } from "../config.js";
import type { KubeClient } from "../kube/client.js";
import { connect, KubeConfigError, type KubeConnection } from "../kube/config.js";
import { NotFoundError } from "../kube/errors.js";
import { KINDS, type ResourceType } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { type MemoryStore, memoryStore } from "../policies/memory-store.js";

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** A flag of a subcommand alone: `--name`, or with a value `--name V`, `--name=V` (and short aliases). */
export interface OwnFlag {
  names: readonly string[];
  takesValue: boolean;
}

export type OwnFlags =
  | { ok: true; values: Map<string, string>; rest: string[] }
  | { ok: false; error: string };

/**
 * Takes the subcommand's own flags out of `args` (keyed by their first name) and leaves the rest for
 * `parseConfig`, which refuses flags it does not know.
 */
export function takeOwnFlags(args: readonly string[], flags: readonly OwnFlag[]): OwnFlags {
  const values = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const flag = flags.find((f) => f.names.includes(name));
    if (!flag) {
      rest.push(arg);
      continue;
    }
    const key = flag.names[0]!;
    if (!flag.takesValue) {
      if (eq >= 0) return { ok: false, error: `flag ${name} takes no value` };
      values.set(key, "true");
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === "") return { ok: false, error: `flag ${name} needs a value` };
    values.set(key, value);
  }
  return { ok: true, values, rest };
}

export type Connected =
  | { ok: true; config: Config; connection: KubeConnection }
  | { ok: false; error: string };

/**
 * Settings and a connection for a command that acts on a cluster: `--kubeconfig`, or the pod's service
 * account. Local mode has no cluster to inspect, so it is a usage error here.
 */
export function connectFromSettings(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Connected {
  const parsed = parseConfig(args, env);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  if (parsed.rest.length > 0)
    return { ok: false, error: `unexpected argument ${JSON.stringify(parsed.rest[0])}` };
  const config = parsed.config;
  const mode = runMode(config, env);
  if (mode === "local")
    return {
      ok: false,
      error: `${command} acts on a cluster: set kubeconfig (--kubeconfig FILE) or run it in a pod`,
    };
  try {
    const connection =
      mode === "in-cluster" ? connect({ inCluster: true }) : connect({ kubeconfigPath: config.kubeconfig! });
    return { ok: true, config, connection };
  } catch (e) {
    if (e instanceof KubeConfigError) return { ok: false, error: e.message };
    throw e;
  }
}

export interface Namespaces {
  mapiNamespace: string;
  capiNamespace: string;
}

/** Every kind the reports and plans read, and where. */
export const readKinds = (ns: Namespaces): ReadonlyArray<readonly [ResourceType, string | undefined]> => [
  [KINDS.infrastructure, undefined],
  [KINDS.mapiMachine, ns.mapiNamespace],
  [KINDS.mapiMachineSet, ns.mapiNamespace],
  [KINDS.capiMachine, ns.capiNamespace],
  [KINDS.capiMachineSet, ns.capiNamespace],
  [KINDS.awsMachine, ns.capiNamespace],
  [KINDS.awsMachineTemplate, ns.capiNamespace],
  [KINDS.awsCluster, ns.capiNamespace],
];

/** Lists a kind; a kind the cluster does not serve (CRD not installed) reads as empty. */
export async function listOrEmpty(
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
  const lists = await Promise.all(
    readKinds(ns).map(([type, namespace]) => listOrEmpty(client, type, namespace)),
  );
  return memoryStore(lists.flat());
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
