/**
 * What wakes the handover controller (SPEC §3): for each kind, the watches of its MAPI object, its CAPI twin,
 * the twin's InfraMachine and the set's members, each with the mapper from a watched object to the MAPI
 * names to reconcile. A member Machine wakes its set only while the set's handover is open (`readsMembers`):
 * a steady set's plan never reads its members, and a fleet's Machines change far more often than its sets.
 */
import type { KeyMapper } from "../kube/controller.js";
import { anyOf, byLabel, byName } from "../kube/controller.js";
import type { ResourceType } from "../kube/kinds.js";
import { CAPI_GROUP, KINDS, LABELS, MAPI_API_VERSION } from "../kube/kinds.js";
import { ownerReferencesOf } from "../kube/object.js";
import type { ObjectStore } from "../policies/types.js";
import { readsMembers } from "./planner.js";
import type { SnapshotNamespaces } from "./read-snapshot.js";
import type { HandoverKind } from "./snapshot.js";

/** The CAPI MachineSet that owns a CAPI Machine (any version of the CAPI group). */
const byCapiMachineSetOwner: KeyMapper = (o) =>
  ownerReferencesOf(o)
    .filter((r) => r.kind === "MachineSet" && r.apiVersion.startsWith(`${CAPI_GROUP}/`))
    .map((r) => r.name);

/** The CAPI Machine that owns an InfraMachine (AWS: also the same name). */
const byCapiMachineOwner: KeyMapper = (o) =>
  ownerReferencesOf(o)
    .filter((r) => r.kind === "Machine" && r.apiVersion.startsWith(`${CAPI_GROUP}/`))
    .map((r) => r.name);

const byMapiMachineSetOwner: KeyMapper = (o) =>
  ownerReferencesOf(o)
    .filter((r) => r.kind === "MachineSet" && r.apiVersion === MAPI_API_VERSION)
    .map((r) => r.name);

/**
 * The keys of the watches of one kind's controller (SPEC §3: MAPI object, twin, InfraMachine, members);
 * `store` (the controller's cache) tells which sets' handovers are open when a member changes.
 */
export const migrationWatches = (
  kind: HandoverKind,
  namespaces: SnapshotNamespaces,
  infraMachineTypes: readonly ResourceType[],
  store: Pick<ObjectStore, "get">,
): { type: ResourceType; namespace: string; mapper: KeyMapper }[] => {
  const { mapiNamespace, capiNamespace } = namespaces;
  // The set is read when the event comes: a set that opens later is woken by its own event, and its
  // reconcile then reads every member as the cache has it.
  const openSetsOnly =
    (mapper: KeyMapper): KeyMapper =>
    (o) =>
      mapper(o).filter((name) => readsMembers(store.get(KINDS.mapiMachineSet, mapiNamespace, name)));
  if (kind === "Machine")
    return [
      { type: KINDS.mapiMachine, namespace: mapiNamespace, mapper: byName },
      { type: KINDS.capiMachine, namespace: capiNamespace, mapper: byName },
      ...infraMachineTypes.map((type) => ({
        type,
        namespace: capiNamespace,
        mapper: anyOf(byCapiMachineOwner, byName),
      })),
    ];
  return [
    { type: KINDS.mapiMachineSet, namespace: mapiNamespace, mapper: byName },
    { type: KINDS.capiMachineSet, namespace: capiNamespace, mapper: byName },
    {
      type: KINDS.mapiMachine,
      namespace: mapiNamespace,
      mapper: openSetsOnly(anyOf(byMapiMachineSetOwner, byLabel(LABELS.templateMachineSet))),
    },
    {
      type: KINDS.capiMachine,
      namespace: capiNamespace,
      mapper: openSetsOnly(
        anyOf(byCapiMachineSetOwner, byLabel(LABELS.capiSetName), byLabel(LABELS.templateMachineSet)),
      ),
    },
  ];
};
