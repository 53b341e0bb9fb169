/**
 * The fork of SPEC §4.2: from the twins as read, which kind of reconcile this is. One pure function for
 * Machines and MachineSets alike, returning a tagged branch; what each branch writes lives in plan.ts and
 * deletion.ts. The pause predicates, the authority accessors and the step-6 check of §3.1 that gates the final
 * sync are src/protocol's.
 */
import type { StableAuthority } from "../kube/kinds.js";
import { AUTHORITY, CONDITIONS, FINALIZERS, LABELS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { conditionOf, hasFinalizer, isDeleting, labelsOf } from "../kube/object.js";
import { statusAuthority, synchronizedAPI } from "../protocol/authority.js";
import {
  ACKNOWLEDGER_KEYS,
  awaitedPauseAcknowledgers as awaitedAcknowledgers,
  isForeignUnderMachineAPI,
} from "../protocol/pause.js";
import type { SyncKind } from "./condition.js";
import type { MachineSetSnapshot, MachineSnapshot } from "./snapshot.js";

export type DeletionAuthority = StableAuthority | "Migrating" | "unknown";

export type Branch =
  /** Neither Machine exists; release an InfraMachine still holding the sync finalizer. */
  | { kind: "bothAbsent"; releaseInfraMachine: boolean }
  /** Something is being deleted: §4.6 (or, while Migrating, §3.5's propagate-only rule). */
  | { kind: "deleting"; authority: DeletionAuthority }
  | { kind: "ignore"; reason: string }
  | { kind: "mirrorCapiOnlyMachine" }
  | { kind: "mapiToCapi" }
  | { kind: "capiToMapi" }
  | { kind: "createBornClusterAPITwin" }
  | { kind: "propagateDeletionOfAuthoritative" }
  | { kind: "finalSync"; direction: StableAuthority }
  | { kind: "noop"; reason: string }
  | { kind: "unpausedTwinDetected"; unpaused: KubeObject[] }
  /**
   * Under MachineAPI an admin deletes a CAPI twin the product does not manage (§4.2 needs-attention): it is
   * released without its delete ever reaching the MAPI object (a duplicate instance is terminated first).
   */
  | { kind: "releaseForeignTwin" };

export type BranchKind = Branch["kind"];

/** A MAPI object that never carried a Synchronized condition was born ClusterAPI (§4.2). */
const neverSynchronized = (mapi: KubeObject): boolean =>
  conditionOf(mapi, CONDITIONS.synchronized) === undefined;

export interface ForkInput {
  kind: SyncKind;
  mapi?: KubeObject;
  capi?: KubeObject;
  /** Machines only. */
  infraMachine?: KubeObject;
  /**
   * MachineSets only: templates labelled for this set (made by the sync) that are not being deleted. They go
   * with the CAPI MachineSet they were made for, whichever API is authoritative (§4.6), even once the MAPI
   * copy is gone.
   */
  labelledTemplates?: boolean;
  /**
   * Machines only: the CAPI Machine's controlling CAPI MachineSet has a MAPI twin, and neither copy of that
   * set is being deleted (a mirror owned by a deleting MAPI set would be collected with it, and its delete
   * propagated to the authoritative CAPI Machine, §4.6).
   */
  mirroredOwner?: boolean;
}

/**
 * §3.1 step 6: the acknowledgers of `oldAuthority` all report Paused=True with a lastTransitionTime not
 * earlier than the Paused=False recorded for them. Returns who is still awaited (empty when it holds). The
 * check is src/protocol's, the same one the migration planner waits on.
 */
export const awaitedPauseAcknowledgers = (input: ForkInput, oldAuthority: StableAuthority): string[] =>
  input.mapi ? awaitedAcknowledgers(input, oldAuthority) : [ACKNOWLEDGER_KEYS.mapi];

/**
 * `capi` was being deleted before `mapi` was created (both times the API server's, to the second; the same
 * second counts as after, so a delete asked for right after a create is still propagated).
 */
const deletedBeforeCreated = (capi: KubeObject | undefined, mapi: KubeObject): boolean => {
  const deletedAt = Date.parse(capi?.metadata?.deletionTimestamp ?? "");
  const createdAt = Date.parse(mapi.metadata?.creationTimestamp ?? "");
  return deletedAt < createdAt;
};

export const fork = (input: ForkInput): Branch => {
  const { kind, mapi, capi, infraMachine } = input;
  const infraDeleting = kind === "Machine" && isDeleting(infraMachine);
  if (!mapi && (!capi || isDeleting(capi)) && kind === "MachineSet" && input.labelledTemplates) {
    return { kind: "deleting", authority: "unknown" };
  }
  if (!mapi && !capi) {
    return { kind: "bothAbsent", releaseInfraMachine: hasFinalizer(infraMachine, FINALIZERS.sync) };
  }
  if (!mapi) {
    // Without the MAPI object there is no authority record: only release what still holds our finalizer.
    const holdsSync =
      (isDeleting(capi) && hasFinalizer(capi, FINALIZERS.sync)) ||
      (infraDeleting && hasFinalizer(infraMachine, FINALIZERS.sync));
    if (holdsSync) return { kind: "deleting", authority: "unknown" };
    if (kind === "MachineSet") return { kind: "ignore", reason: "CAPI-only MachineSets are never mirrored" };
    if (isDeleting(capi)) return { kind: "ignore", reason: "the CAPI-only Machine is being deleted" };
    return input.mirroredOwner
      ? { kind: "mirrorCapiOnlyMachine" }
      : {
          kind: "ignore",
          reason:
            "the CAPI-only Machine is not owned by a mirrored MachineSet (or that set is being deleted)",
        };
  }
  if (deletedBeforeCreated(capi, mapi)) {
    // §4.6 "propagated only when it was requested for that object": this CAPI object was being deleted before
    // the MAPI object existed, so it is the twin of an earlier one of that name. It is released as if its
    // MAPI object were gone (plan.ts plans an "unknown" deletion without the MAPI object), and the new one
    // waits for it to go before it gets a twin of its own.
    const earlier = fork({ ...input, mapi: undefined });
    return earlier.kind === "deleting"
      ? earlier
      : { kind: "noop", reason: `the CAPI twin of an earlier MAPI ${kind} of this name to go away` };
  }
  const status = statusAuthority(mapi);
  if (!status) return { kind: "noop", reason: "status.authoritativeAPI is not set yet" };
  const foreignTwin = status === AUTHORITY.machineAPI && isForeignUnderMachineAPI(capi);
  const machineDeleting = isDeleting(mapi) || (isDeleting(capi) && !foreignTwin);
  if (status === AUTHORITY.migrating) {
    if (machineDeleting || infraDeleting) return { kind: "deleting", authority: AUTHORITY.migrating };
    const direction = synchronizedAPI(mapi);
    if (!direction) return { kind: "noop", reason: "Migrating without status.synchronizedAPI" };
    if (direction === AUTHORITY.clusterAPI && !capi) {
      return { kind: "noop", reason: "Migrating from ClusterAPI but the CAPI twin is gone" };
    }
    const awaited = awaitedPauseAcknowledgers(input, direction);
    if (awaited.length > 0)
      return { kind: "noop", reason: `waiting for Paused=True from ${awaited.join(", ")}` };
    return { kind: "finalSync", direction };
  }
  if (machineDeleting) return { kind: "deleting", authority: status };
  if (status === AUTHORITY.clusterAPI && infraDeleting) return { kind: "deleting", authority: status };
  if (status === AUTHORITY.machineAPI) {
    const unpaused = [capi, kind === "Machine" ? infraMachine : undefined].filter(
      (o): o is KubeObject => o !== undefined && isForeignUnderMachineAPI(o),
    );
    if (unpaused.some(isDeleting)) return { kind: "releaseForeignTwin" };
    return unpaused.length > 0 ? { kind: "unpausedTwinDetected", unpaused } : { kind: "mapiToCapi" };
  }
  if (capi) return { kind: "capiToMapi" };
  return neverSynchronized(mapi)
    ? { kind: "createBornClusterAPITwin" }
    : { kind: "propagateDeletionOfAuthoritative" };
};

export const forkMachine = (s: MachineSnapshot): Branch =>
  fork({
    kind: "Machine",
    mapi: s.mapi,
    capi: s.capi,
    infraMachine: s.infraMachine,
    mirroredOwner:
      s.capiOwnerMachineSet !== undefined &&
      s.mapiTwinOfCapiOwner !== undefined &&
      !isDeleting(s.capiOwnerMachineSet) &&
      !isDeleting(s.mapiTwinOfCapiOwner),
  });

export const forkMachineSet = (s: MachineSetSnapshot): Branch =>
  fork({
    kind: "MachineSet",
    mapi: s.mapi,
    capi: s.capi,
    labelledTemplates: s.templates.some(
      (t) => labelsOf(t)[LABELS.templateMachineSet] === s.name && !isDeleting(t),
    ),
  });
