/**
 * Builds the planner's `HandoverSnapshot` from a read-only `ObjectStore` (the informer cache in
 * production, a map in tests): the MAPI object, its twin by name, the twin's InfraMachine through
 * `spec.infrastructureRef` (AWS: same name), and for MachineSets every Machine of both namespaces as
 * candidate members. Pure over the store; the shell calls it at the start of every reconcile.
 */
import type { ResourceType } from "../kube/kinds.js";
import { INFRA_GROUP, KINDS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { getPath } from "../kube/object.js";
import type { ObjectStore } from "../policies/types.js";
import type { HandoverKind, HandoverSnapshot } from "./snapshot.js";

export interface SnapshotNamespaces {
  mapiNamespace: string;
  capiNamespace: string;
}

const groupOf = (ref: unknown): string | undefined => {
  const apiGroup = getPath(ref, ["apiGroup"]);
  if (typeof apiGroup === "string") return apiGroup;
  const apiVersion = getPath(ref, ["apiVersion"]);
  return typeof apiVersion === "string" && apiVersion.includes("/") ? apiVersion.split("/")[0] : undefined;
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
  infraMachineTypes: readonly ResourceType[] = [KINDS.awsMachine],
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
    const ref = getPath(capi, ["spec", "infrastructureRef"]);
    const refKind = getPath(ref, ["kind"]);
    const refName = getPath(ref, ["name"]);
    const refGroup = groupOf(ref);
    // Without a twin (or a ref) the AWS convention applies: the InfraMachine has the Machine's name.
    const type =
      typeof refKind === "string"
        ? infraMachineTypes.find(
            (t) => t.kind === refKind && (refGroup === undefined || t.group === refGroup),
          )
        : infraMachineTypes.find((t) => t.group === INFRA_GROUP);
    if (typeof refKind === "string" && type === undefined) unsynced.add(`${refKind} (not watched)`);
    if (type) {
      const infra = read(type, capiNamespace, typeof refName === "string" ? refName : name);
      if (infra) snapshot.infraMachine = infra;
    }
  } else {
    snapshot.members = {
      mapi: list(KINDS.mapiMachine, mapiNamespace),
      capi: list(KINDS.capiMachine, capiNamespace),
    };
  }
  if (unsynced.size > 0) snapshot.unsyncedKinds = [...unsynced].sort();
  return snapshot;
};
