/**
 * What the bench waits for in a Machine or MachineSet, read the same way wherever the object comes from: the
 * admin's watch (bench/handover.ts) or the local API server's storage (bench/apiserver.ts).
 */
import { KINDS, type ResourceType, type StableAuthority } from "../src/kube/kinds.js";
import { conditionOf, getPath, type KubeObject } from "../src/kube/object.js";
import { statusAuthorityReading, synchronizedAPI } from "../src/protocol/authority.js";

/** The MAPI kind the bench hands over. */
export type HandedOver = "Machine" | "MachineSet";

export const mapiTypeOf = (kind: HandedOver): ResourceType =>
  kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet;

/** Handed over to `authority` and synchronized: what a finished handover leaves. */
export const steadyUnder = (o: KubeObject, authority: StableAuthority): boolean =>
  statusAuthorityReading(o) === authority &&
  synchronizedAPI(o) === authority &&
  conditionOf(o, "Synchronized")?.status === "True";

/** A Machine provisioned by MAO and synchronized under MachineAPI. */
export const provisioned = (o: KubeObject): boolean =>
  getPath(o, ["status", "phase"]) === "Running" && steadyUnder(o, "MachineAPI");

/**
 * Whether `get` finds every one of `names` steady under `authority`, starting at `from` (the names before it
 * were found steady by an earlier call). Steady names before the first one that is not are skipped next time,
 * so waiting on a fleet costs a look at each name once, plus a full pass at the end: `true` only when that
 * pass finds every name steady at once. Returns where the next call starts.
 */
export function steadyFrom(
  names: readonly string[],
  from: number,
  authority: StableAuthority,
  get: (name: string) => KubeObject | undefined,
): { all: boolean; next: number } {
  const steady = (name: string): boolean => {
    const o = get(name);
    return o !== undefined && steadyUnder(o, authority);
  };
  let i = from;
  while (i < names.length && steady(names[i] as string)) i++;
  if (i < names.length) return { all: false, next: i };
  const first = names.findIndex((name) => !steady(name));
  return first < 0 ? { all: true, next: names.length } : { all: false, next: first };
}
