/**
 * SPEC §4.6 deletion, one step per reconcile: propagate a deletion to the twin(s) that were not deleted,
 * then release finalizers in the exact order of the authority in force, one write per object per step,
 * each guarded by what was read. While Migrating only the delete is propagated (§3.5: the migration
 * controller resolves the handover and the now-active side finishes). Before any write here the live-read
 * "storage of either twin is being deleted" flag must be known and false (`StorageBeingRemoved`).
 * Objects the product does not manage under MachineAPI (an unpaused or needs-attention CAPI twin, §4.2) are
 * never deleted or released. Pure.
 */
import { AUTHORITY, FINALIZERS, LABELS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { finalizersOf, hasFinalizer, isDeleting, labelsOf } from "../kube/object.js";
import type { SynchronizedCondition, SyncKind } from "./condition.js";
import { storageBeingRemoved } from "./condition.js";
import type { DeletionAuthority } from "./fork.js";
import { isForeignUnderMachineAPI } from "./fork.js";
import type { MachineSetSnapshot, MachineSnapshot } from "./snapshot.js";
import type { SyncWrite } from "./writes.js";
import { deleteWrite, removeFinalizersWrite, removeOwnerReferenceWrite } from "./writes.js";

export interface DeletionPlan {
  writes: SyncWrite[];
  condition?: SynchronizedCondition;
  /** What the next step waits for (another controller's finalizer), for logs and tests. */
  waitingFor?: string;
  /** The plan would write, but the live storage read has not been done: read it and plan again. */
  needsStorageCheck?: boolean;
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

const machineDeletionStep = (s: MachineSnapshot, authority: DeletionAuthority): DeletionPlan => {
  const { mapi, capi, infraMachine: infra } = s;
  const managed = (o: KubeObject | undefined): o is KubeObject =>
    o !== undefined && !(authority === AUTHORITY.machineAPI && isForeignUnderMachineAPI(o));
  const machineDeleting = isDeleting(mapi) || (managed(capi) && isDeleting(capi));

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
  if (infra && hasFinalizer(infra, FINALIZERS.sync)) {
    const providers = clusterApiFinalizers(infra);
    if (providers.length > 0) {
      return { writes: [], waitingFor: `${providers.join(", ")} on the InfraMachine (instance termination)` };
    }
    return { writes: present([removeFinalizersWrite(infra, [FINALIZERS.sync])]) };
  }
  if (!machineDeleting && !isDeleting(capi)) return { writes: [] };
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

/** §4.6 MachineSets: MAPI-authoritative deletes both and the labelled templates; CAPI-authoritative orphans. */
export const planMachineSetDeletion = (s: MachineSetSnapshot, authority: DeletionAuthority): DeletionPlan =>
  guarded("MachineSet", s.storageBeingRemoved, machineSetDeletionStep(s, authority));

const machineSetDeletionStep = (s: MachineSetSnapshot, authority: DeletionAuthority): DeletionPlan => {
  const { mapi, capi } = s;
  const managed = (o: KubeObject | undefined): o is KubeObject =>
    o !== undefined && !(authority === AUTHORITY.machineAPI && isForeignUnderMachineAPI(o));

  if (authority === "unknown") {
    return {
      writes: present([
        capi && isDeleting(capi) ? removeFinalizersWrite(capi, [FINALIZERS.sync]) : undefined,
      ]),
    };
  }
  if (authority === AUTHORITY.migrating) {
    return {
      writes: present([
        mapi && !isDeleting(mapi) ? deleteWrite(mapi) : undefined,
        managed(capi) && !isDeleting(capi) ? deleteWrite(capi) : undefined,
      ]),
    };
  }

  if (authority === AUTHORITY.machineAPI) {
    const templates = s.templates.filter(
      (t) => labelsOf(t)[LABELS.templateMachineSet] === s.name && !isDeleting(t),
    );
    const propagate = present([
      mapi && !isDeleting(mapi) ? deleteWrite(mapi) : undefined,
      managed(capi) && !isDeleting(capi) ? deleteWrite(capi) : undefined,
      ...templates.map(deleteWrite),
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
  if (isDeleting(capi) && mapi && !isDeleting(mapi)) return { writes: [deleteWrite(mapi)] };
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
 * §4.2 ClusterAPI without the CAPI twin, once synchronized: the authoritative object was deleted, so the
 * MAPI copy is deleted too (never recreated from the mirror); §4.6 then releases it.
 */
export const planPropagateDeletionOfAuthoritative = (
  kind: SyncKind,
  mapi: KubeObject,
  storage: boolean | undefined,
): DeletionPlan => guarded(kind, storage, { writes: isDeleting(mapi) ? [] : [deleteWrite(mapi)] });
