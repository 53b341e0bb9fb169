/**
 * SPEC §4.6 deletion, one step per reconcile: propagate a deletion to the twin(s) that were not deleted,
 * then release finalizers in the exact order of the authority in force, one write per object per step,
 * each guarded by what was read. While Migrating a Machine's delete is only propagated (§3.5: the migration
 * controller resolves the handover and the now-active side finishes); a MachineSet's is not even propagated
 * until the handover is rolled back. Before any write here the live-read "storage of either twin is being
 * deleted" flag must be known and false (`StorageBeingRemoved`); before a CAPI-side delete reaches a MAPI
 * object that is not ClusterAPI, the live-read "this is the Cluster's cascade" flag must be known and false
 * (a cascade releases the paused mirror instead, `MirrorDeletedByCascade`). A MachineSet's other copy is
 * deleted with `propagationPolicy: Orphan`, a CAPI one only while paused with the marker, so each member
 * Machine follows its own twin. Objects the product does not manage under MachineAPI (an unpaused or
 * needs-attention CAPI twin, §4.2) are never deleted with the MAPI object; an admin's delete of one is
 * released here without reaching the MAPI object. Pure.
 */
import { ANNOTATIONS, AUTHORITY, FINALIZERS, LABELS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { finalizersOf, getPath, hasFinalizer, isDeleting, labelsOf, nameOf } from "../kube/object.js";
import {
  isForeignUnderMachineAPI,
  isPaused,
  isPausedWithMarker,
  UNPAUSED_TWIN_DETECTED,
} from "../protocol/pause.js";
import type { SynchronizedCondition, SyncKind } from "./condition.js";
import { mirrorDeletedByCascade, storageBeingRemoved } from "./condition.js";
import { PAUSE_ANNOTATIONS } from "./desired.js";
import type { DeletionAuthority } from "./fork.js";
import type { MachineSetSnapshot, MachineSnapshot } from "./snapshot.js";
import type { SyncWrite } from "./writes.js";
import {
  deleteWrite,
  pauseWrite,
  removeFinalizersWrite,
  removeOwnerReferenceWrite,
  unpauseWrite,
} from "./writes.js";

export interface DeletionPlan {
  writes: SyncWrite[];
  condition?: SynchronizedCondition;
  /** What the next step waits for (another controller's finalizer), for logs and tests. */
  waitingFor?: string;
  /** The plan would write, but the live storage read has not been done: read it and plan again. */
  needsStorageCheck?: boolean;
  /** The step depends on whether the CAPI twin goes with its Cluster: read it live and plan again. */
  needsCascadeCheck?: boolean;
}

/** Finalizers of CAPI and its providers (`*.cluster.x-k8s.io`), which the InfraMachine's owner removes. */
const clusterApiFinalizers = (o: KubeObject | undefined): string[] =>
  finalizersOf(o).filter((f) => f.includes("cluster.x-k8s.io"));

const present = (writes: (SyncWrite | undefined)[]): SyncWrite[] =>
  writes.filter((w): w is SyncWrite => w !== undefined);

/** Applies the §4.6 storage guard to a step: nothing is written unless storage is known to stay. */
const guarded = (kind: SyncKind, storage: boolean | undefined, plan: DeletionPlan): DeletionPlan => {
  if (plan.writes.length === 0) return plan;
  if (storage === undefined) return { writes: [], needsStorageCheck: true };
  if (storage) return { writes: [], condition: storageBeingRemoved(kind) };
  return plan;
};

/** §4.2 both absent: release an InfraMachine still holding the sync finalizer (only ours). */
export const releaseOrphanInfraMachine = (s: MachineSnapshot): DeletionPlan =>
  guarded("Machine", s.storageBeingRemoved, {
    writes: present([s.infraMachine && removeFinalizersWrite(s.infraMachine, [FINALIZERS.sync])]),
  });

/** §4.6 Machines, both authorities; §3.5 propagate-only while Migrating; "unknown" = MAPI object gone. */
export const planMachineDeletion = (s: MachineSnapshot, authority: DeletionAuthority): DeletionPlan =>
  guarded("Machine", s.storageBeingRemoved, machineDeletionStep(s, authority));

/**
 * A CAPI-side delete that would reach a MAPI object that is not ClusterAPI: the CAPI twin is deleting, the
 * MAPI object is not. Whether it is the Cluster's cascade decides between propagating and releasing.
 */
const capiSideDeleteOfMirror = (
  mapi: KubeObject | undefined,
  capi: KubeObject | undefined,
  authority: DeletionAuthority,
): boolean =>
  (authority === AUTHORITY.machineAPI || authority === AUTHORITY.migrating) &&
  mapi !== undefined &&
  !isDeleting(mapi) &&
  isDeleting(capi);

/**
 * Whether a CAPI-side delete is the Cluster's cascade, or the plan that must come first: storage is read (and
 * reported) before the owner chain, since a deleting namespace takes the Cluster with it and may already have
 * taken the product's permission to read there.
 */
const cascadeVerdict = (
  kind: SyncKind,
  s: { storageBeingRemoved?: boolean; clusterCascade?: boolean },
): boolean | DeletionPlan => {
  if (s.storageBeingRemoved === undefined) return { writes: [], needsStorageCheck: true };
  if (s.storageBeingRemoved) return { writes: [], condition: storageBeingRemoved(kind) };
  if (s.clusterCascade === undefined) return { writes: [], needsCascadeCheck: true };
  return s.clusterCascade;
};

const machineDeletionStep = (s: MachineSnapshot, authority: DeletionAuthority): DeletionPlan => {
  const { mapi, capi, infraMachine: infra } = s;
  const managed = (o: KubeObject | undefined): o is KubeObject =>
    o !== undefined && !(authority === AUTHORITY.machineAPI && isForeignUnderMachineAPI(o));
  const machineDeleting = isDeleting(mapi) || (managed(capi) && isDeleting(capi));

  if (managed(capi) && capiSideDeleteOfMirror(mapi, capi, authority)) {
    const cascade = cascadeVerdict("Machine", s);
    if (typeof cascade !== "boolean") return cascade;
    if (cascade) {
      // Never propagated to the MAPI object; while Migrating the handover ends at MachineAPI first (§3.5).
      return authority === AUTHORITY.machineAPI
        ? releaseCascadedMirror(s, capi, managed)
        : {
            writes: [],
            waitingFor: "the handover to end at MachineAPI (the CAPI twin went with its Cluster)",
          };
    }
  }

  if (machineDeleting && authority !== "unknown") {
    const propagate = present([
      mapi && !isDeleting(mapi) ? deleteWrite(mapi) : undefined,
      managed(capi) && !isDeleting(capi) ? deleteWrite(capi) : undefined,
      // Under ClusterAPI the CAPI Machine controller drains and then deletes its InfraMachine itself.
      authority === AUTHORITY.machineAPI && managed(infra) && !isDeleting(infra)
        ? deleteWrite(infra)
        : undefined,
    ]);
    if (propagate.length > 0) return { writes: propagate };
  }
  if (authority === AUTHORITY.migrating) return { writes: [] };

  if (authority === AUTHORITY.machineAPI) {
    if (hasFinalizer(mapi, FINALIZERS.mapiMachine)) {
      return {
        writes: [],
        waitingFor: `${FINALIZERS.mapiMachine} on the MAPI Machine (instance termination)`,
      };
    }
    if (managed(infra) && isDeleting(infra)) {
      const w = removeFinalizersWrite(infra, [...clusterApiFinalizers(infra), FINALIZERS.sync]);
      if (w) return { writes: [w] };
    }
    if (managed(capi) && isDeleting(capi)) {
      const w = removeFinalizersWrite(capi, [FINALIZERS.capiMachine, FINALIZERS.sync]);
      if (w) return { writes: [w] };
    }
    return { writes: present([mapi && removeFinalizersWrite(mapi, [FINALIZERS.sync])]) };
  }

  // ClusterAPI, or the MAPI object already gone ("unknown"): the CAPI side's own controllers go first.
  if (
    authority === AUTHORITY.clusterAPI &&
    isDeleting(capi) &&
    !hasFinalizer(capi, FINALIZERS.capiMachine) &&
    infra &&
    !isDeleting(infra) &&
    !isPaused(infra)
  ) {
    // Cluster API never adds its finalizer to a deleting Machine, so a Machine deleted before its first
    // reconcile (the Cluster's cascade, say) never has its InfraMachine deleted by Cluster API: the sync does,
    // as Cluster API would have, and the provider terminates the instance (decision 199).
    return { writes: [deleteWrite(infra)] };
  }
  if (infra && hasFinalizer(infra, FINALIZERS.sync)) {
    const providers = clusterApiFinalizers(infra);
    if (providers.length > 0) {
      return { writes: [], waitingFor: `${providers.join(", ")} on the InfraMachine (instance termination)` };
    }
    return { writes: present([removeFinalizersWrite(infra, [FINALIZERS.sync])]) };
  }
  if (!machineDeleting && !isDeleting(capi)) return { writes: [] };
  if (
    authority === "unknown" &&
    isDeleting(capi) &&
    isPausedWithMarker(capi) &&
    clusterApiFinalizers(infra).length === 0
  ) {
    // The MAPI Machine is gone and the mirror is still paused by the product: Cluster API never removes its
    // own finalizer from a paused Machine, and no InfraMachine holds a provider's finalizer (no instance left
    // to terminate) — release the mirror, Cluster API's finalizer and ours.
    return {
      writes: present([capi && removeFinalizersWrite(capi, [FINALIZERS.capiMachine, FINALIZERS.sync])]),
    };
  }
  if (hasFinalizer(capi, FINALIZERS.capiMachine)) {
    return { writes: [], waitingFor: `${FINALIZERS.capiMachine} on the CAPI Machine` };
  }
  return {
    writes: present([
      capi && removeFinalizersWrite(capi, [FINALIZERS.sync]),
      mapi && removeFinalizersWrite(mapi, [FINALIZERS.mapiMachine, FINALIZERS.sync]),
    ]),
  };
};

/**
 * §4.6 a MachineAPI Machine's paused mirror went with its Cluster: the mirror (InfraMachine, then CAPI
 * Machine) is released while paused, so no provider acts on it; the MAPI Machine and its instance stay.
 */
const releaseCascadedMirror = (
  s: MachineSnapshot,
  capi: KubeObject,
  managed: (o: KubeObject | undefined) => o is KubeObject,
): DeletionPlan => {
  const infra = s.infraMachine;
  const condition = mirrorDeletedByCascade("Machine", capi);
  if (managed(infra) && !isDeleting(infra)) return { writes: [deleteWrite(infra)], condition };
  if (managed(infra)) {
    const w = removeFinalizersWrite(infra, [...clusterApiFinalizers(infra), FINALIZERS.sync]);
    if (w) return { writes: [w], condition };
  }
  return {
    writes: present([removeFinalizersWrite(capi, [FINALIZERS.capiMachine, FINALIZERS.sync])]),
    condition,
  };
};

/** The instance an object names: `spec.instanceID`, else the last segment of `spec.providerID`. */
const instanceOf = (o: KubeObject | undefined): string | undefined => {
  const id = getPath(o, ["spec", "instanceID"]);
  if (typeof id === "string" && id !== "") return id;
  const providerID = getPath(o, ["spec", "providerID"]);
  if (typeof providerID !== "string" || providerID === "") return undefined;
  return providerID.split("/").pop() || undefined;
};

const NEEDS_ATTENTION = { ...PAUSE_ANNOTATIONS, [ANNOTATIONS.needsAttention]: UNPAUSED_TWIN_DETECTED };

/**
 * §4.2: an admin deletes a CAPI twin the product does not manage under MachineAPI (unpaused or marked
 * needs-attention). Its delete never reaches the MAPI object. Whatever goes is paused first, so no provider
 * acts on it, except an InfraMachine carrying an instance other than the MAPI Machine's: that one alone is
 * unpaused so its provider terminates the duplicate, and is released once the provider is done. The rest is
 * released paused: the InfraMachine, then the CAPI Machine (or the CAPI MachineSet).
 */
export const planForeignTwinRelease = (
  kind: SyncKind,
  s: { mapi?: KubeObject; capi?: KubeObject; infraMachine?: KubeObject; storageBeingRemoved?: boolean },
): DeletionPlan => guarded(kind, s.storageBeingRemoved, foreignTwinReleaseStep(kind, s));

const foreignTwinReleaseStep = (
  kind: SyncKind,
  s: { mapi?: KubeObject; capi?: KubeObject; infraMachine?: KubeObject },
): DeletionPlan => {
  const { mapi, capi } = s;
  const infra = kind === "Machine" ? s.infraMachine : undefined;
  const capiGoing = capi !== undefined && isForeignUnderMachineAPI(capi) && isDeleting(capi);
  const ownFinalizer = kind === "Machine" ? FINALIZERS.capiMachine : FINALIZERS.capiMachineSet;
  if (capiGoing && !isPaused(capi)) return { writes: [pauseWrite(capi, NEEDS_ATTENTION)] };
  if (infra && !isDeleting(infra) && capiGoing) {
    // The InfraMachine is part of the twin being deleted; paused, nobody acts on it but this plan.
    return { writes: [isPaused(infra) ? deleteWrite(infra) : pauseWrite(infra, NEEDS_ATTENTION)] };
  }
  if (infra && isDeleting(infra) && (capiGoing || isForeignUnderMachineAPI(infra))) {
    const duplicate = instanceOf(infra) !== undefined && instanceOf(infra) !== instanceOf(mapi);
    if (!duplicate) {
      if (!isPaused(infra)) return { writes: [pauseWrite(infra, NEEDS_ATTENTION)] };
      const w = removeFinalizersWrite(infra, [...clusterApiFinalizers(infra), FINALIZERS.sync]);
      if (w) return { writes: [w] };
    } else {
      if (isPaused(infra))
        return { writes: [unpauseWrite(infra, [ANNOTATIONS.paused, ANNOTATIONS.pausedBy])] };
      const providers = clusterApiFinalizers(infra);
      if (providers.length > 0)
        return {
          writes: [],
          waitingFor: `${providers.join(", ")} on the InfraMachine (termination of duplicate ${instanceOf(infra)})`,
        };
      const w = removeFinalizersWrite(infra, [FINALIZERS.sync]);
      if (w) return { writes: [w] };
    }
    return { writes: [], waitingFor: `the InfraMachine ${nameOf(infra)} to go away` };
  }
  if (!capiGoing) return { writes: [] };
  if (infra) return { writes: [], waitingFor: `the InfraMachine ${nameOf(infra)} to go away` };
  return { writes: present([removeFinalizersWrite(capi, [ownFinalizer, FINALIZERS.sync])]) };
};

/**
 * §4.6 MachineSets. The other copy is deleted with `Orphan`, a CAPI one only while paused with the marker;
 * labelled templates go with the CAPI MachineSet they were made for. MAPI-authoritative: deleting either
 * copy deletes both; a CAPI copy that went with its Cluster is released instead. CAPI-authoritative:
 * deleting the MAPI copy orphans its Machines; deleting the CAPI copy deletes the MAPI copy. Migrating:
 * nothing until the handover is rolled back (§3.5).
 */
export const planMachineSetDeletion = (s: MachineSetSnapshot, authority: DeletionAuthority): DeletionPlan =>
  guarded("MachineSet", s.storageBeingRemoved, machineSetDeletionStep(s, authority));

const machineSetDeletionStep = (s: MachineSetSnapshot, authority: DeletionAuthority): DeletionPlan => {
  const { mapi, capi } = s;
  const managed = (o: KubeObject | undefined): o is KubeObject =>
    o !== undefined && !(authority === AUTHORITY.machineAPI && isForeignUnderMachineAPI(o));
  // Never one another CAPI MachineSet still uses; its last user going away brings this key back (snapshot.ts).
  const labelledTemplates = s.templates
    .filter(
      (t) =>
        labelsOf(t)[LABELS.templateMachineSet] === s.name &&
        !isDeleting(t) &&
        !(s.templatesReferencedElsewhere ?? []).includes(nameOf(t)),
    )
    .map((t) => deleteWrite(t));

  if (authority === "unknown") {
    // The MAPI copy is gone: a deleting (or gone) CAPI copy takes its labelled templates, then loses ours.
    if (capi && !isDeleting(capi)) return { writes: [] };
    if (labelledTemplates.length > 0) return { writes: labelledTemplates };
    return { writes: present([capi && removeFinalizersWrite(capi, [FINALIZERS.sync])]) };
  }
  if (authority === AUTHORITY.migrating) {
    // Propagated only once the roll-back to synchronizedAPI is seen: an unpaused CAPI set deletes its Machines.
    return {
      writes: [],
      waitingFor: "the handover to be rolled back before a MachineSet deletion is handled",
    };
  }

  if (authority === AUTHORITY.machineAPI) {
    if (managed(capi) && capiSideDeleteOfMirror(mapi, capi, authority)) {
      const cascade = cascadeVerdict("MachineSet", s);
      if (typeof cascade !== "boolean") return cascade;
      if (cascade) return releaseCascadedMachineSet(capi, labelledTemplates);
    }
    const deleteCapi = managed(capi) && !isDeleting(capi);
    if (deleteCapi && !isPausedWithMarker(capi)) {
      return {
        writes: [],
        waitingFor: "the pause marker on the CAPI MachineSet (only a paused one is deleted)",
      };
    }
    const propagate = present([
      mapi && !isDeleting(mapi) ? deleteWrite(mapi, "Orphan") : undefined,
      deleteCapi ? deleteWrite(capi, "Orphan") : undefined,
      // A foreign CAPI MachineSet stays, and so do the templates it may use.
      ...(capi === undefined || managed(capi) ? labelledTemplates : []),
    ]);
    if (propagate.length > 0) return { writes: propagate };
    if (managed(capi) && isDeleting(capi)) {
      // The paused CAPI MachineSet's own finalizer goes before ours (its controller is paused).
      const own = removeFinalizersWrite(capi, [FINALIZERS.capiMachineSet]);
      if (own) return { writes: [own] };
      const sync = removeFinalizersWrite(capi, [FINALIZERS.sync]);
      if (sync) return { writes: [sync] };
    }
    return { writes: present([mapi && removeFinalizersWrite(mapi, [FINALIZERS.sync])]) };
  }

  // ClusterAPI.
  if (isDeleting(capi)) {
    const propagate = present([
      mapi && !isDeleting(mapi) ? deleteWrite(mapi, "Orphan") : undefined,
      ...labelledTemplates,
    ]);
    if (propagate.length > 0) return { writes: propagate };
  }
  if (!isDeleting(mapi)) return { writes: [] };
  const mapiUid = mapi?.metadata?.uid ?? "";
  const orphaning = present(s.mapiMachines.map((m) => removeOwnerReferenceWrite(m, mapiUid)));
  if (orphaning.length > 0) return { writes: orphaning };
  // Ours leaves the CAPI copy first, so a MAPI copy that vanishes never strands it (CAPI-only sets are ignored).
  const capiSync = capi && removeFinalizersWrite(capi, [FINALIZERS.sync]);
  if (capiSync) return { writes: [capiSync] };
  return { writes: present([mapi && removeFinalizersWrite(mapi, [FINALIZERS.sync])]) };
};

/**
 * §4.6 a MachineAPI set's paused CAPI mirror went with its Cluster: its labelled templates go with it, then
 * it is released (its own finalizer, then ours). The MAPI MachineSet and every Machine stay.
 */
const releaseCascadedMachineSet = (capi: KubeObject, labelledTemplates: SyncWrite[]): DeletionPlan => {
  const condition = mirrorDeletedByCascade("MachineSet", capi);
  if (labelledTemplates.length > 0) return { writes: labelledTemplates, condition };
  const own = removeFinalizersWrite(capi, [FINALIZERS.capiMachineSet]);
  if (own) return { writes: [own], condition };
  return { writes: present([removeFinalizersWrite(capi, [FINALIZERS.sync])]), condition };
};

/**
 * §4.2 ClusterAPI without the CAPI twin, once synchronized: the authoritative object was deleted, so the
 * MAPI copy is deleted too (never recreated from the mirror); §4.6 then releases it.
 */
export const planPropagateDeletionOfAuthoritative = (
  kind: SyncKind,
  mapi: KubeObject,
  storage: boolean | undefined,
): DeletionPlan => guarded(kind, storage, { writes: isDeleting(mapi) ? [] : [deleteWrite(mapi)] });
