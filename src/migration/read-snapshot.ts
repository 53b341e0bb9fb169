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
import { NotFoundError } from "../kube/errors.js";
import type { ResourceType } from "../kube/kinds.js";
import { INFRA_GROUP, INFRASTRUCTURE_REF_PATHS, KINDS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { getPath } from "../kube/object.js";
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
 * through the *live* twin's reference — and, for MachineSets whose live MAPI copy has its handover open, a fresh
 * LIST of the Machines of both namespaces.
 * NotFound reads as absent; any other error is thrown (nothing is decided from a partial view).
 */
export const readLiveHandoverSnapshot = async (
  client: Pick<KubeClient, "get" | "list">,
  kind: HandoverKind,
  name: string,
  namespaces: SnapshotNamespaces,
  infraMachineTypes: readonly ResourceType[] = [DEFAULT_PLATFORM.infraMachine],
): Promise<HandoverSnapshot> => {
  const { mapiNamespace, capiNamespace } = namespaces;
  const read = async (type: ResourceType, namespace: string, objectName: string) => {
    try {
      return await client.get(type, namespace, objectName);
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  };
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
    const [mapiMachines, capiMachines] = await Promise.all([
      client.list(KINDS.mapiMachine, { namespace: mapiNamespace }),
      client.list(KINDS.capiMachine, { namespace: capiNamespace }),
    ]);
    snapshot.members = { mapi: mapiMachines.items, capi: capiMachines.items };
  }
  return snapshot;
};
