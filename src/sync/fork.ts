/**
 * The fork of SPEC §4.2: from the twins as read, which kind of reconcile this is. One pure function for
 * Machines and MachineSets alike, returning a tagged branch; what each branch writes lives in plan.ts and
 * deletion.ts. Also the small predicates on pause state and authority the rest of src/sync shares, and the
 * step-6 check of §3.1 (every acknowledger of the old authority reports Paused=True no earlier than the
 * Paused=False recorded for it) that gates the final sync.
 */
import type { StableAuthority, StatusAuthority } from "../kube/kinds.js";
import { ANNOTATIONS, AUTHORITY, CONDITIONS, FINALIZERS, LABELS, PAUSED_BY_VALUE } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import {
  annotationsOf,
  conditionOf,
  getPath,
  hasFinalizer,
  isDeleting,
  isRecord,
  labelsOf,
} from "../kube/object.js";
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

export const statusAuthorityOf = (mapi: KubeObject | undefined): StatusAuthority | undefined => {
  const v = getPath(mapi, ["status", "authoritativeAPI"]);
  return v === AUTHORITY.machineAPI || v === AUTHORITY.clusterAPI || v === AUTHORITY.migrating
    ? v
    : undefined;
};

export const synchronizedAPIOf = (mapi: KubeObject | undefined): StableAuthority | undefined => {
  const v = getPath(mapi, ["status", "synchronizedAPI"]);
  return v === AUTHORITY.machineAPI || v === AUTHORITY.clusterAPI ? v : undefined;
};

export const isPaused = (o: KubeObject | undefined): boolean =>
  Object.hasOwn(annotationsOf(o), ANNOTATIONS.paused);
export const isPausedWithMarker = (o: KubeObject | undefined): boolean =>
  isPaused(o) && annotationsOf(o)[ANNOTATIONS.pausedBy] === PAUSED_BY_VALUE;
export const needsAttention = (o: KubeObject | undefined): boolean =>
  Object.hasOwn(annotationsOf(o), ANNOTATIONS.needsAttention);
export const reportsPaused = (o: KubeObject | undefined): boolean =>
  conditionOf(o, CONDITIONS.paused)?.status === "True";

/**
 * A CAPI object under MachineAPI that the product does not manage: unpaused (a user's twin created in a
 * race, §3.2 I1) or already marked needs-attention. The product never deletes, replaces or releases it.
 */
export const isForeignUnderMachineAPI = (o: KubeObject | undefined): boolean =>
  o !== undefined && (!isPaused(o) || needsAttention(o));

/** A MAPI object that never carried a Synchronized condition was born ClusterAPI (§4.2). */
export const neverSynchronized = (mapi: KubeObject): boolean =>
  conditionOf(mapi, CONDITIONS.synchronized) === undefined;

/** Keys of the `paused-false-at` annotation (written by the migration planner at §3.1 step 4). */
export const ACKNOWLEDGER_KEYS = Object.freeze({
  mapi: "mapi",
  capiMachine: "capiMachine",
  infraMachine: "infraMachine",
  capiMachineSet: "capiMachineSet",
});

const recordedPausedFalseAt = (mapi: KubeObject): Record<string, string> => {
  const text = annotationsOf(mapi)[ANNOTATIONS.pausedFalseAt];
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isRecord(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
  } catch {
    return {};
  }
};

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
 * earlier than the Paused=False recorded for them. Returns who is still awaited (empty when it holds).
 */
export const awaitedPauseAcknowledgers = (input: ForkInput, oldAuthority: StableAuthority): string[] => {
  const mapi = input.mapi;
  if (!mapi) return [ACKNOWLEDGER_KEYS.mapi];
  const recorded = recordedPausedFalseAt(mapi);
  const acknowledgers: [string, KubeObject | undefined][] =
    oldAuthority === AUTHORITY.machineAPI
      ? [[ACKNOWLEDGER_KEYS.mapi, mapi]]
      : input.kind === "Machine"
        ? [
            [ACKNOWLEDGER_KEYS.capiMachine, input.capi],
            [ACKNOWLEDGER_KEYS.infraMachine, input.infraMachine],
          ]
        : [[ACKNOWLEDGER_KEYS.capiMachineSet, input.capi]];
  return acknowledgers
    .filter(([key, object]) => {
      const paused = conditionOf(object, CONDITIONS.paused);
      const since = recorded[key];
      if (!object || paused?.status !== "True" || !since || !paused.lastTransitionTime) return true;
      return Date.parse(paused.lastTransitionTime) < Date.parse(since);
    })
    .map(([key]) => key);
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
  const status = statusAuthorityOf(mapi);
  if (!status) return { kind: "noop", reason: "status.authoritativeAPI is not set yet" };
  const foreignTwin = status === AUTHORITY.machineAPI && isForeignUnderMachineAPI(capi);
  const machineDeleting = isDeleting(mapi) || (isDeleting(capi) && !foreignTwin);
  if (status === AUTHORITY.migrating) {
    if (machineDeleting || infraDeleting) return { kind: "deleting", authority: AUTHORITY.migrating };
    const direction = synchronizedAPIOf(mapi);
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
