/**
 * The sync controllers' pure core (SPEC §4), entry point: `planMachineSync` and `planMachineSetSync` take what
 * one reconcile read, the injected converter and `now`, fork (§4.2, fork.ts), hand the branch to its planner —
 * plan-machine.ts or plan-machine-set.ts for a sync, deletion.ts for a deletion, plan-draft.ts for what both
 * kinds do alike — and fold the draft into one `SyncPlan`: the writes to make in order, the Synchronized
 * condition and synchronizedGeneration the MAPI object should end with (already folded into the plan's last
 * write, the MAPI status patch), the Events to record, and whether to requeue. No I/O, no clock.
 * The shell executes the writes in order (chaining resourceVersions per object, see writes.ts), stops at
 * the first failure (409 → requeue; an admission refusal → `refusedWriteCondition` from condition.ts),
 * reads storage live when a plan says `needsStorageCheck` and the deleting CAPI twin's owner chain when it
 * says `needsCascadeCheck`, confirms `confirmAbsent` live before acting on an absence, and writes nothing
 * else. Owner references are written only in creates, never in applies (§4.6). Planning on the result of a
 * plan's writes converges to zero writes (tested as a property).
 */
import { AUTHORITY } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import type { SynchronizedCondition, SyncKind } from "./condition.js";
import { mapiStatusWrite } from "./condition.js";
import type { DeletionPlan } from "./deletion.js";
import {
  planForeignTwinRelease,
  planMachineDeletion,
  planMachineSetDeletion,
  releaseOrphanInfraMachine,
} from "./deletion.js";
import type { Branch, DeletionAuthority } from "./fork.js";
import { forkMachine, forkMachineSet } from "./fork.js";
import type {
  CurrentAddress,
  Draft,
  ObjectAddress,
  Requeue,
  SourceAddress,
  ToCapiMode,
} from "./plan-draft.js";
import {
  type AuthorityAddress,
  authorityRead,
  emptyDraft,
  fromDeletion,
  planUnpausedTwin,
  propagateDeletion,
} from "./plan-draft.js";
import { machineToCapi, machineToMapi, mirrorCapiOnlyMachine } from "./plan-machine.js";
import { machineSetToCapi, machineSetToMapi } from "./plan-machine-set.js";
import type { MachineSetSnapshot, MachineSnapshot, SyncDeps } from "./snapshot.js";
import type { SyncEvent, SyncWrite } from "./writes.js";

export interface SyncPlan {
  branch: Branch;
  /** In order; the MAPI status write (condition + generation) is always last. */
  writes: SyncWrite[];
  /** The Synchronized condition the MAPI object should carry after the writes (undefined: leave it). */
  condition?: SynchronizedCondition;
  synchronizedGeneration?: number;
  events: SyncEvent[];
  requeue?: Requeue;
  /** A deletion step needs the live storage read (§4.6); the shell reads it and plans again. */
  needsStorageCheck?: boolean;
  /** A deletion step needs the live "went with its Cluster" read (§4.6); the shell reads it and plans again. */
  needsCascadeCheck?: boolean;
  /** What the reconcile waits for, for logs and tests. */
  waitingFor?: string;
  /**
   * The plan acts on the absence of this object (the authoritative twin, §4.2): the shell GETs it live
   * first and drops the plan's writes if it exists (a lagging or re-listing cache is not proof of deletion).
   */
  confirmAbsent?: ObjectAddress;
  /**
   * The plan's writes hold only while this MAPI object has the authority the plan read: pausing an unpaused
   * twin and marking it needs-attention (§4.2, under MachineAPI), and every deletion step (§3.5, §4.6). The
   * shell GETs it live first and drops them unless it is the same object (uid) with that authority — a lagging
   * cache can show MachineAPI after a handover to ClusterAPI made the twin rightly active (decision 80), or an
   * old Machine deleting under a name a new Machine has since taken (decision 167).
   */
  confirmAuthority?: AuthorityAddress;
  /**
   * The plan creates objects converted from this one (a twin, a mirror, an InfraMachine or template): the
   * shell GETs it live first and writes nothing unless it is the same object (uid), not being deleted, and,
   * for a MAPI object, of the authority the plan read (decision 148).
   */
  confirmSource?: SourceAddress;
  /**
   * The plan mirrors this authoritative object at a generation older than the one the MAPI copy records as
   * synchronised (a lagging cache, or a record that no longer holds): the shell GETs it live first and writes
   * nothing unless it is the same object at the generation read (decisions 160, 163).
   */
  confirmCurrent?: CurrentAddress;
}

/** Folds the condition, generation and mirrored MAPI status into the one last status write. */
const finish = (branch: Branch, mapi: KubeObject | undefined, draft: Draft, now: Date): SyncPlan => {
  const writes = [...draft.writes];
  const wantsStatus =
    draft.condition !== undefined || draft.synchronizedGeneration !== undefined || draft.mirroredMapiStatus;
  const statusWrite =
    mapi && wantsStatus
      ? mapiStatusWrite(mapi, {
          now,
          ...(draft.condition ? { condition: draft.condition } : {}),
          ...(draft.synchronizedGeneration !== undefined
            ? { synchronizedGeneration: draft.synchronizedGeneration }
            : {}),
          ...(draft.mirroredMapiStatus ? { mirrored: draft.mirroredMapiStatus } : {}),
        })
      : undefined;
  if (statusWrite) writes.push(statusWrite);
  // Conversion warnings are reported when converted content is written or the condition changes, not on
  // every reconcile a status change triggers.
  const reportable =
    writes.some((w) => w.kind === "create" || w.kind === "apply") ||
    (statusWrite?.kind === "applyStatus" &&
      statusWrite.changedPaths.includes("status.conditions[Synchronized]"));
  const events = reportable ? draft.events : draft.events.filter((e) => e.reason !== "ConversionWarning");
  return {
    branch,
    writes,
    ...(draft.condition ? { condition: draft.condition } : {}),
    ...(draft.synchronizedGeneration !== undefined
      ? { synchronizedGeneration: draft.synchronizedGeneration }
      : {}),
    events,
    ...(draft.requeue ? { requeue: draft.requeue } : {}),
    ...(draft.needsStorageCheck ? { needsStorageCheck: true } : {}),
    ...(draft.needsCascadeCheck ? { needsCascadeCheck: true } : {}),
    ...(draft.waitingFor ? { waitingFor: draft.waitingFor } : {}),
    ...(draft.confirmAbsent && writes.length > 0 ? { confirmAbsent: draft.confirmAbsent } : {}),
    ...(draft.confirmAuthority && writes.length > 0 ? { confirmAuthority: draft.confirmAuthority } : {}),
    ...(draft.confirmCurrent && writes.length > 0 ? { confirmCurrent: draft.confirmCurrent } : {}),
    ...(draft.confirmSource && writes.some((w) => w.kind === "create")
      ? { confirmSource: draft.confirmSource }
      : {}),
  };
};

/**
 * What one kind's planner does on each branch of the fork, as data: plan.ts has one switch for both kinds,
 * and what differs between them is here (MachineSets have no InfraMachine and are never mirrored from CAPI).
 */
interface KindPlanner<S extends MachineSnapshot | MachineSetSnapshot> {
  kind: SyncKind;
  bothAbsent(s: S): Draft;
  mirrorCapiOnly(s: S, deps: SyncDeps): Draft;
  deletion(s: S, authority: DeletionAuthority): DeletionPlan;
  toCapi(s: S, deps: SyncDeps, now: Date, mode: ToCapiMode): Draft;
  toMapi(s: S, deps: SyncDeps, now: Date, final: boolean): Draft;
  /** The CAPI objects that carry the pause (§4.2): the Machine and its InfraMachine, or the MachineSet. */
  pauseTargets(s: S): (KubeObject | undefined)[];
}

const MACHINE: KindPlanner<MachineSnapshot> = {
  kind: "Machine",
  bothAbsent: (s) => fromDeletion(releaseOrphanInfraMachine(s)),
  mirrorCapiOnly: mirrorCapiOnlyMachine,
  deletion: planMachineDeletion,
  toCapi: machineToCapi,
  toMapi: machineToMapi,
  pauseTargets: (s) => [s.capi, s.infraMachine],
};

const MACHINE_SET: KindPlanner<MachineSetSnapshot> = {
  kind: "MachineSet",
  bothAbsent: emptyDraft,
  mirrorCapiOnly: emptyDraft,
  deletion: planMachineSetDeletion,
  toCapi: machineSetToCapi,
  toMapi: (s, deps, _now, final) => machineSetToMapi(s, deps, final),
  pauseTargets: (s) => [s.capi],
};

const draftOf = <S extends MachineSnapshot | MachineSetSnapshot>(
  planner: KindPlanner<S>,
  branch: Branch,
  s: S,
  deps: SyncDeps,
  now: Date,
): Draft => {
  switch (branch.kind) {
    case "bothAbsent":
      return branch.releaseInfraMachine ? planner.bothAbsent(s) : emptyDraft();
    case "deleting":
      return fromDeletion(
        // "unknown": no MAPI object of the twins' own; one may exist under their name (fork.ts) — never theirs.
        planner.deletion(branch.authority === "unknown" ? { ...s, mapi: undefined } : s, branch.authority),
        s.mapi && branch.authority !== "unknown"
          ? authorityRead(planner.kind, s.mapi, branch.authority)
          : undefined,
      );
    case "ignore":
    case "noop":
      return emptyDraft();
    case "mirrorCapiOnlyMachine":
      return planner.mirrorCapiOnly(s, deps);
    case "mapiToCapi":
      return planner.toCapi(s, deps, now, "steady");
    case "createBornClusterAPITwin":
      return planner.toCapi(s, deps, now, "born");
    case "capiToMapi":
      return planner.toMapi(s, deps, now, false);
    case "finalSync":
      return branch.direction === AUTHORITY.machineAPI
        ? planner.toCapi(s, deps, now, "final")
        : planner.toMapi(s, deps, now, true);
    case "propagateDeletionOfAuthoritative":
      return propagateDeletion(planner.kind, s.mapi as KubeObject, s.storageBeingRemoved, deps);
    case "unpausedTwinDetected":
      return planUnpausedTwin(planner.kind, planner.pauseTargets(s), s.capi, s.mapi as KubeObject);
    case "releaseForeignTwin":
      return fromDeletion(
        planForeignTwinRelease(planner.kind, s),
        authorityRead(planner.kind, s.mapi as KubeObject, AUTHORITY.machineAPI),
      );
    default:
      return assertNever(branch);
  }
};

/** SPEC §4 for one Machine name: fork (§4.2), then the branch's writes. */
export const planMachineSync = (s: MachineSnapshot, deps: SyncDeps, now: Date): SyncPlan => {
  const branch = forkMachine(s);
  return finish(branch, s.mapi, draftOf(MACHINE, branch, s, deps, now), now);
};

/** SPEC §4 for one MachineSet name. */
export const planMachineSetSync = (s: MachineSetSnapshot, deps: SyncDeps, now: Date): SyncPlan => {
  const branch = forkMachineSet(s);
  return finish(branch, s.mapi, draftOf(MACHINE_SET, branch, s, deps, now), now);
};

const assertNever = (x: never): never => {
  throw new Error(`unhandled sync branch ${JSON.stringify(x)}`);
};
