/**
 * Builds the planner's `HandoverSnapshot` from a read-only `ObjectStore` (the informer cache in
 * production, a map in tests): the MAPI object, its twin by name, the twin's InfraMachine through
 * `spec.infrastructureRef` (AWS: same name), and for MachineSets every Machine of both namespaces as
 * candidate members (the controller asks for them only while the handover is open, `readsMembers`, the only
 * time the planner looks at them). Pure over the store; the shell calls it at the start of every reconcile.
 * Its live counterpart, which only the controller uses, reads the same objects from the API server (GET, and
 * LIST for members while the live MAPI copy's handover is open) before any write.
 */
import type { KubeClient } from "../kube/client.js";
import { getOrAbsent } from "../kube/client.js";
import type { ResourceType } from "../kube/kinds.js";
import { INFRA_GROUP, INFRASTRUCTURE_REF_PATHS, KINDS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { firstByName, getPath, nameOf } from "../kube/object.js";
import { labelSelectorQuery } from "../kube/selector.js";
import { DEFAULT_PLATFORM, servedPlatform } from "../platforms/registry.js";
import type { ObjectStore } from "../policies/types.js";
import { readsMembers } from "./planner.js";
import type { HandoverKind, HandoverSnapshot } from "./snapshot.js";

export interface SnapshotNamespaces {
  mapiNamespace: string;
  capiNamespace: string;
}

export interface SnapshotReadOptions {
  /**
   * A MachineSet's candidate members: `always` (the default: preflight asks what a handover would find if it
   * started now) or `whenPlanned`, only when `planHandover` will read them (`readsMembers`: the handover is
   * open) — the controller's reconciles, which a fleet's Machines would otherwise each make read the fleet.
   */
  members?: "always" | "whenPlanned";
}

const groupOf = (ref: unknown): string | undefined => {
  const apiGroup = getPath(ref, ["apiGroup"]);
  if (typeof apiGroup === "string") return apiGroup;
  const apiVersion = getPath(ref, ["apiVersion"]);
  return typeof apiVersion === "string" && apiVersion.includes("/") ? apiVersion.split("/")[0] : undefined;
};

/** Where a CAPI Machine's InfraMachine is: its watched type (undefined when not watched) and name. */
const infraMachineOf = (
  capi: KubeObject | undefined,
  name: string,
  infraMachineTypes: readonly ResourceType[],
): { type: ResourceType | undefined; name: string; unwatched?: string } => {
  const ref = getPath(capi, INFRASTRUCTURE_REF_PATHS.machine);
  const refKind = getPath(ref, ["kind"]);
  const refName = getPath(ref, ["name"]);
  const refGroup = groupOf(ref);
  // Without a twin (or a ref) the providers' convention applies: the InfraMachine has the Machine's name.
  const type =
    typeof refKind === "string"
      ? infraMachineTypes.find((t) => t.kind === refKind && (refGroup === undefined || t.group === refGroup))
      : infraMachineTypes.find((t) => t.group === INFRA_GROUP);
  return {
    type,
    name: typeof refName === "string" ? refName : name,
    ...(typeof refKind === "string" && type === undefined ? { unwatched: `${refKind} (not watched)` } : {}),
  };
};

/**
 * The snapshot of the handover of MAPI `kind` `name`. `infraMachineTypes` are the InfraMachine kinds the
 * cache watches; a reference to any other kind is reported in `unsyncedKinds`, so the planner waits
 * instead of reading the InfraMachine as deleted.
 */
export const readHandoverSnapshot = (
  store: ObjectStore,
  kind: HandoverKind,
  name: string,
  namespaces: SnapshotNamespaces,
  infraMachineTypes: readonly ResourceType[] = [
    servedPlatform(store.get(KINDS.infrastructure, "", "cluster")).infraMachine,
  ],
  options: SnapshotReadOptions = {},
): HandoverSnapshot => {
  const { mapiNamespace, capiNamespace } = namespaces;
  const unsynced = new Set<string>();
  // Kind.group, as kubectl names a resource: "Machine" alone would not say which API.
  const label = (type: ResourceType): string => (type.group ? `${type.kind}.${type.group}` : type.kind);
  const read = (type: ResourceType, namespace: string, objectName: string): KubeObject | undefined => {
    if (!store.freshness(type).synced) unsynced.add(label(type));
    return store.get(type, namespace, objectName);
  };
  const list = (type: ResourceType, namespace: string): readonly KubeObject[] => {
    if (!store.freshness(type).synced) unsynced.add(label(type));
    return store.list(type, namespace);
  };

  const snapshot: HandoverSnapshot = { kind };
  const mapi = read(kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet, mapiNamespace, name);
  const capi = read(kind === "Machine" ? KINDS.capiMachine : KINDS.capiMachineSet, capiNamespace, name);
  if (mapi) snapshot.mapi = mapi;
  if (capi) snapshot.capi = capi;

  if (kind === "Machine") {
    const where = infraMachineOf(capi, name, infraMachineTypes);
    if (where.unwatched) unsynced.add(where.unwatched);
    if (where.type) {
      const infra = read(where.type, capiNamespace, where.name);
      if (infra) snapshot.infraMachine = infra;
    }
  } else if (options.members !== "whenPlanned" || readsMembers(mapi)) {
    snapshot.members = {
      mapi: list(KINDS.mapiMachine, mapiNamespace),
      capi: list(KINDS.capiMachine, capiNamespace),
    };
  }
  if (unsynced.size > 0) snapshot.unsyncedKinds = [...unsynced].sort();
  return snapshot;
};

/**
 * The same snapshot read live from the API server (SPEC §3.5): a GET of each object involved — the InfraMachine
 * through the *live* twin's reference — and, for MachineSets whose live MAPI copy has its handover open, the
 * candidate members read afresh (`readMembersLive`; `knownOwned` from the cache).
 * NotFound reads as absent; any other error is thrown (nothing is decided from a partial view).
 */
export const readLiveHandoverSnapshot = async (
  client: Pick<KubeClient, "get" | "list">,
  kind: HandoverKind,
  name: string,
  namespaces: SnapshotNamespaces,
  infraMachineTypes: readonly ResourceType[] = [DEFAULT_PLATFORM.infraMachine],
  knownOwned: KnownOwned = NONE_KNOWN,
): Promise<HandoverSnapshot> => {
  const { mapiNamespace, capiNamespace } = namespaces;
  const read = (type: ResourceType, namespace: string, objectName: string) =>
    getOrAbsent(client, type, namespace, objectName);
  const snapshot: HandoverSnapshot = { kind };
  const [mapi, capi] = await Promise.all([
    read(kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet, mapiNamespace, name),
    read(kind === "Machine" ? KINDS.capiMachine : KINDS.capiMachineSet, capiNamespace, name),
  ]);
  if (mapi) snapshot.mapi = mapi;
  if (capi) snapshot.capi = capi;
  if (kind === "Machine") {
    const where = infraMachineOf(capi, name, infraMachineTypes);
    if (where.unwatched) snapshot.unsyncedKinds = [where.unwatched];
    const infra = where.type ? await read(where.type, capiNamespace, where.name) : undefined;
    if (infra) snapshot.infraMachine = infra;
  } else if (readsMembers(mapi)) {
    snapshot.members = await readMembersLive(client, { mapi, capi }, namespaces, knownOwned);
  }
  return snapshot;
};

/** Past this many Machines to fetch one by one beside a LIST by selector, a side's namespace is listed whole. */
export const MAX_MEMBER_GETS = 50;

/**
 * The candidate members of a MachineSet handover, live (decision 143): every Machine either copy of the set
 * owns or selects, and the twin by name of each — what `memberProblem` reads — without listing every Machine
 * of both namespaces before every write (10 writes per set, each two LISTs of the whole fleet). Each side is
 * listed by its set's selector, as the API server selects; then fetched one by one: the Machines the cache
 * shows the set owning that the LIST did not return (owned, no longer selected), and the twin of every
 * Machine found whose set does not select it. A side whose selector cannot be a query (`labelSelectorQuery`),
 * or with more than `MAX_MEMBER_GETS` to fetch, is listed whole, as before. Sorted by name, as a LIST answers.
 */
const readMembersLive = async (
  client: Pick<KubeClient, "get" | "list">,
  sets: { mapi?: KubeObject | undefined; capi?: KubeObject | undefined },
  namespaces: SnapshotNamespaces,
  knownOwned: KnownOwned,
): Promise<{ mapi: KubeObject[]; capi: KubeObject[] }> => {
  const sides = (["mapi", "capi"] as const).map((role) => ({
    role,
    type: role === "mapi" ? KINDS.mapiMachine : KINDS.capiMachine,
    namespace: role === "mapi" ? namespaces.mapiNamespace : namespaces.capiNamespace,
    query: labelSelectorQuery(getPath(sets[role], ["spec", "selector"])),
  }));
  const listed = await Promise.all(
    sides.map(async (side) => {
      const { items } = await client.list(side.type, {
        namespace: side.namespace,
        ...(side.query !== undefined ? { labelSelector: side.query } : {}),
      });
      return firstByName(items);
    }),
  );
  const absent = [new Set<string>(), new Set<string>()] as const;
  /** Adds the named Machines of side `i` the map lacks: fetched one by one, or the side listed whole. */
  const complete = async (i: 0 | 1, names: Iterable<string>): Promise<void> => {
    const side = sides[i]!;
    const found = listed[i]!;
    if (side.query === undefined) return; // listed whole already
    const missing = [...new Set(names)].filter((n) => n !== "" && !found.has(n) && !absent[i].has(n));
    if (missing.length > MAX_MEMBER_GETS) {
      const { items } = await client.list(side.type, { namespace: side.namespace });
      for (const m of items) found.set(nameOf(m), m);
      side.query = undefined;
      return;
    }
    const fetched = await Promise.all(missing.map((n) => getOrAbsent(client, side.type, side.namespace, n)));
    fetched.forEach((m, at) => {
      if (m) found.set(nameOf(m), m);
      else absent[i].add(missing[at]!);
    });
  };
  await Promise.all([complete(0, knownOwned.mapi), complete(1, knownOwned.capi)]);
  const [mapiFound, capiFound] = listed as [Map<string, KubeObject>, Map<string, KubeObject>];
  await Promise.all([complete(0, [...capiFound.keys()]), complete(1, [...mapiFound.keys()])]);
  const byName = (found: Map<string, KubeObject>): KubeObject[] =>
    [...found.keys()].sort().map((n) => found.get(n)!);
  return { mapi: byName(mapiFound), capi: byName(capiFound) };
};

/** The Machines the cache shows each copy of the set owning (names): a LIST by selector misses those it no longer selects. */
export interface KnownOwned {
  readonly mapi: readonly string[];
  readonly capi: readonly string[];
}

const NONE_KNOWN: KnownOwned = { mapi: [], capi: [] };
