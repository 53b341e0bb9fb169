/**
 * The handover planner (SPEC §3): `planHandover(snapshot, now)` answers the one next step for a MAPI
 * Machine or MachineSet — steps 1–11 of §3.1, cancellation (§3.3) and deletion during a handover (§3.5).
 * It is pure and level-triggered: it reads only the snapshot, so re-planning after every observed change
 * returns the same step until the cache shows that step's write, and never skips ahead on a write it has
 * not seen. Per-kind differences come from the table in ./kinds.ts; the checks from ./preconditions.ts.
 */
import type { StableAuthority } from "../kube/kinds.js";
import { ANNOTATIONS, CONDITIONS, PAUSED_BY_VALUE } from "../kube/kinds.js";
import type { Condition, KubeObject } from "../kube/object.js";
import { annotationsOf, conditionsOf, isDeleting, setCondition } from "../kube/object.js";
import { opposite, specAuthority, statusAuthorityReading, synchronizedAPI } from "../protocol/authority.js";
import {
  encodePausedFalseAt,
  hasPauseMarker,
  isForeignUnderMachineAPI,
  isPaused,
  needsAttention,
  reportsPaused,
  UNPAUSED_TWIN_DETECTED,
} from "../protocol/pause.js";
import { SYNCHRONIZED_REASONS } from "../protocol/synchronized.js";
import type { HandoverKindDetails } from "./kinds.js";
import { HANDOVER_KINDS } from "./kinds.js";
import {
  addFinalizersStep,
  firstStep,
  holding,
  liftPauseStep,
  pauseStep,
  removeFinalizersStep,
} from "./object-steps.js";
import type { Problem } from "./preconditions.js";
import {
  describeObject,
  finalSyncProblem,
  involvedRoles,
  liftedPauseAcknowledgement,
  lostWriteProblem,
  memberProblem,
  migrationRefusals,
  pauseAcknowledgementProblem,
  pausedFalseAcknowledgement,
} from "./preconditions.js";
import type { HandoverSnapshot, Role } from "./snapshot.js";
import { objectOf, refOf } from "./snapshot.js";
import type { HandoverEvent, StatusPatch, Step } from "./steps.js";

/** The reason text of §3.3's ambiguous-source block; the README documents the manual fix under it. */
export const UNKNOWN_SOURCE_AUTHORITY = "UnknownSourceAuthority";

interface Context {
  s: HandoverSnapshot;
  mapi: KubeObject;
  details: HandoverKindDetails;
  old: StableAuthority;
  target: StableAuthority;
  now: Date;
}

const mapiName = (s: HandoverSnapshot): string => describeObject(s.kind, "mapi", s.mapi);

const normal = (reason: HandoverEvent["reason"], message: string): HandoverEvent => ({
  type: "Normal",
  reason,
  message,
});

const blockedStep = (message: string): Step => ({
  kind: "blocked",
  event: { type: "Warning", reason: "MigrationBlocked", message },
});

const problemStep = (p: Problem): Step =>
  p.waitFor === undefined
    ? blockedStep(p.message)
    : {
        kind: "wait",
        for: p.waitFor,
        // Step 7 asks for a requeue with backoff; every other wait is ended by a watched object changing.
        retry: p.waitFor === "finalSync" ? "backoff" : "onChange",
        event: normal(p.reason, p.message),
      };

/**
 * The full new condition list with `Synchronized=Unknown` for `reason`. Severity is dropped: MAPI
 * conditions carry it only with status False.
 */
const synchronizedUnknown = (mapi: KubeObject, reason: string, message: string, now: Date): Condition[] =>
  setCondition(
    conditionsOf(mapi),
    { type: CONDITIONS.synchronized, status: "Unknown", reason, message },
    now,
  ).map((c) => {
    if (c.type !== CONDITIONS.synchronized || !Object.hasOwn(c, "severity")) return c;
    const { severity: _dropped, ...rest } = c;
    return rest as Condition;
  });

// ---------------------------------------------------------------------------------------------------

/**
 * The pause targets that carry no pause under status MachineAPI. Every path the product takes to MachineAPI
 * pauses the CAPI side first (twins are created paused, step 5 and §3.5 pause before status changes), so such
 * a twin is a user's, created in a race with a stale admission cache: SPEC §4.2's case. The sync controllers
 * own it — they pause it *and* mark it needs-attention, report `UnpausedTwinDetected` and warn — so the
 * planner never pauses it itself: a pause without the mark would hide the race from the admin whenever this
 * controller reconciled first (decision 53).
 */
const unpausedUnderMachineAPI = (s: HandoverSnapshot): Role[] =>
  HANDOVER_KINDS[s.kind].pauseTargets.filter((role) => {
    const object = objectOf(s, role);
    return object !== undefined && !isPaused(object);
  });

/** A handover waits while a twin of §4.2 is unpaused: the sync pauses and flags it, and a person decides. */
const unpausedTwinWait = (s: HandoverSnapshot, roles: readonly Role[]): Step => ({
  kind: "wait",
  for: "sync",
  retry: "onChange",
  event: normal(
    "WaitingForSync",
    `${roles.map((role) => describeObject(s.kind, role, objectOf(s, role))).join(" and ")} is unpaused while MachineAPI is authoritative; the sync pauses it and marks it needs-attention for an admin to decide`,
  ),
});

/**
 * `uninstall-prepare` (SPEC §9) with a §4.2 twin under MachineAPI: the sync that would pause and flag it is
 * about to be removed, so the planner does what the sync does (src/sync/plan-draft.ts `planUnpausedTwin`) —
 * each present pause target is paused with the marker and marked needs-attention, the unpaused ones first (they
 * are the ones acting) — and never deletes or replaces it. Undefined when no target is foreign (unpaused or
 * already marked) or each is paused and marked (decision 181).
 */
const uninstallTwinPause = (s: HandoverSnapshot): Step | undefined => {
  const targets = HANDOVER_KINDS[s.kind].pauseTargets;
  if (!targets.some((role) => isForeignUnderMachineAPI(objectOf(s, role)))) return undefined;
  const flag = (role: Role, stopping: boolean): Step | undefined => {
    const object = objectOf(s, role);
    if (!object || isPaused(object) === stopping) return undefined;
    const add: Record<string, string> = {};
    if (!isPaused(object)) add[ANNOTATIONS.paused] = "";
    if (!isPaused(object) && !hasPauseMarker(object)) add[ANNOTATIONS.pausedBy] = PAUSED_BY_VALUE;
    if (!needsAttention(object)) add[ANNOTATIONS.needsAttention] = UNPAUSED_TWIN_DETECTED;
    return Object.keys(add).length === 0
      ? undefined
      : { kind: "pause", target: refOf(role, object), addAnnotations: add };
  };
  return firstStep(targets, (role) => flag(role, true)) ?? firstStep(targets, (role) => flag(role, false));
};

/**
 * Step 3's repairs under a stable status: `synchronizedAPI`, then the pause state that matches authority.
 * They run before step 4 too (spec ≠ status): a completed step 11 is finished before a new handover starts.
 * Under MachineAPI the planner adopts an existing pause (adds the marker); it leaves an unpaused twin to the
 * sync controllers (see `unpausedUnderMachineAPI`), and touches no pause while one is there — except for
 * `uninstall-prepare` (`resolveOpenHandovers`), where no sync will run again and the planner pauses and flags
 * that twin itself (`uninstallTwinPause`). Under ClusterAPI a deleting CAPI MachineSet is released, never
 * unpaused (§4.6; `liftPauseStep`).
 */
const stableRepair = (
  s: HandoverSnapshot,
  mapi: KubeObject,
  authority: StableAuthority,
  options: PlanOptions,
): Step | undefined => {
  if (synchronizedAPI(mapi) !== authority)
    return {
      kind: "setSynchronizedAPI",
      target: refOf("mapi", mapi),
      statusPatch: { synchronizedAPI: authority },
    };
  if (authority === "MachineAPI" && options.resolveOpenHandovers) {
    const flagged = uninstallTwinPause(s);
    if (flagged) return flagged;
  }
  if (authority === "MachineAPI" && unpausedUnderMachineAPI(s).length > 0) return undefined;
  const details = HANDOVER_KINDS[s.kind];
  return firstStep(details.pauseTargets, (role) =>
    authority === "MachineAPI" ? pauseStep(s, role) : liftPauseStep(s, role, details.releasedWhileDeleting),
  );
};

/**
 * Step 4. Two writes when every precondition holds: first the `paused-false-at` record on the MAPI
 * object's metadata, then the status. They cannot be one write (metadata and status are different
 * subresources), and the record must come first: the status write carries the resourceVersion of a
 * snapshot that already shows the record, so status never becomes Migrating without the record step 6
 * compares against, and a crash in between leaves only a harmless annotation in a stable state.
 */
const planStart = (
  s: HandoverSnapshot,
  mapi: KubeObject,
  from: StableAuthority,
  to: StableAuthority,
  now: Date,
): Step => {
  const unpaused = from === "MachineAPI" ? unpausedUnderMachineAPI(s) : [];
  if (unpaused.length > 0) return unpausedTwinWait(s, unpaused);
  const refusal = migrationRefusals(s, from)[0];
  if (refusal) return problemStep(refusal);
  const ack = pausedFalseAcknowledgement(s, from);
  if (!ack.ok) return problemStep(ack.problem);
  const value = encodePausedFalseAt(ack.record);
  if (annotationsOf(mapi)[ANNOTATIONS.pausedFalseAt] !== value)
    return {
      kind: "recordPausedFalseAt",
      target: refOf("mapi", mapi),
      annotation: ANNOTATIONS.pausedFalseAt,
      value,
    };
  const statusPatch: StatusPatch = {
    authoritativeAPI: "Migrating",
    synchronizedAPI: from,
    conditions: synchronizedUnknown(
      mapi,
      SYNCHRONIZED_REASONS.awaitingFinalSync,
      `Waiting for the final synchronization from ${from} before ${to} takes over`,
      now,
    ),
  };
  return {
    kind: "startMigration",
    target: refOf("mapi", mapi),
    statusPatch,
    from,
    to,
    event: normal("MigrationStarted", `Migration of ${mapiName(s)} from ${from} to ${to} started`),
  };
};

/**
 * §3.3: the old authority of a handover whose status lacks `synchronizedAPI` (begun by another
 * implementation), inferred from the pause state; undefined when it cannot be told.
 */
const inferSourceAuthority = (s: HandoverSnapshot): StableAuthority | undefined => {
  const capi = s.capi;
  if (!capi) return undefined;
  if (!isPaused(capi) || hasPauseMarker(capi)) return "ClusterAPI";
  if (reportsPaused(s.mapi)) return undefined;
  return "MachineAPI";
};

/**
 * §3.5: step 9 has begun when one of the old authority's holding finalizers is gone (or the object that held
 * it is). Only the old side is read: a view of the new side that lacks a step-8 finalizer (a cache behind, a
 * lost reply) must not turn a handover past step 9 into a roll-back — the old side could not take the
 * instance back once an object is deleting, and the roll-back would release the new side's finalizers. The
 * shell plans every write from live reads (SPEC §3.5), so this is never decided from the cache alone.
 */
const stepNineBegun = (c: Context): boolean =>
  c.details.holdingFinalizers[c.old].some((holder) => {
    const h = holding(c.s, holder);
    if (h.object === undefined) return true;
    return h.finalizers !== undefined && h.missing.length > 0;
  });

/**
 * Step 6 after a roll-back lifted a pause while Migrating (a cancel, then a cancel of the cancel; or a delete
 * turning that roll-back into a completion): the old controllers may have acted meanwhile, so their
 * acknowledgement of the lift is recorded before the pause goes back on, and only a Paused=True after it
 * counts. Undefined when no pause was lifted or the record already holds the lift.
 */
const liftedPauseStep = (c: Context): Step | undefined => {
  const lifted = liftedPauseAcknowledgement(c.s, c.old);
  if (!lifted.ok) return problemStep(lifted.problem);
  if (!lifted.record) return undefined;
  return {
    kind: "recordPausedFalseAt",
    target: refOf("mapi", c.mapi),
    annotation: ANNOTATIONS.pausedFalseAt,
    value: encodePausedFalseAt(lifted.record),
  };
};

const completeStep = (c: Context, why?: string): Step => ({
  kind: "completeMigration",
  target: refOf("mapi", c.mapi),
  to: c.target,
  statusPatch: {
    authoritativeAPI: c.target,
    synchronizedAPI: c.target,
    synchronizedGeneration: 0,
    conditions: synchronizedUnknown(
      c.mapi,
      SYNCHRONIZED_REASONS.authoritativeAPIChanged,
      `Authoritative API changed from ${c.old} to ${c.target}; waiting for the first synchronization`,
      c.now,
    ),
  },
  event: normal(
    "MigrationCompleted",
    `Migration of ${mapiName(c.s)} from ${c.old} to ${c.target} completed${why ? ` (${why})` : ""}`,
  ),
});

const cancelStep = (c: Context, why: string): Step => ({
  kind: "cancelMigration",
  target: refOf("mapi", c.mapi),
  to: c.old,
  statusPatch: {
    authoritativeAPI: c.old,
    synchronizedAPI: c.old,
    conditions: synchronizedUnknown(
      c.mapi,
      SYNCHRONIZED_REASONS.migrationCancelled,
      `Migration to ${c.target} cancelled; ${c.old} is authoritative`,
      c.now,
    ),
  },
  event: normal("MigrationCancelled", `Migration of ${mapiName(c.s)} to ${c.target} cancelled: ${why}`),
});

/** Steps 5–10. Everything is re-checked on every plan, so a regression stops the handover where it is. */
const planForward = (c: Context): Step => {
  const relift = liftedPauseStep(c);
  if (relift) return relift;
  // Step 5 (leaving ClusterAPI), and while Migrating the CAPI side stays paused whichever the direction.
  const pause = firstStep(c.details.pauseTargets, (role) => pauseStep(c.s, role));
  if (pause) return pause;
  const steps6and7 = [
    pauseAcknowledgementProblem(c.s, c.old),
    lostWriteProblem(c.s, c.old),
    finalSyncProblem(c.s, c.old),
    memberProblem(c.s, c.old),
  ];
  for (const p of steps6and7) if (p) return problemStep(p);
  for (const holder of c.details.takeOverFinalizers[c.target]) {
    if (holding(c.s, holder).finalizers === undefined)
      return blockedStep(
        `${describeObject(c.s.kind, holder.role, objectOf(c.s, holder.role))} is of a kind whose controller finalizer is unknown; cancel the migration`,
      );
  }
  const step8 = firstStep(c.details.takeOverFinalizers[c.target], (h) => addFinalizersStep(c.s, h));
  if (step8) return step8;
  const step9 = firstStep(c.details.holdingFinalizers[c.old], (h) =>
    removeFinalizersStep(c.s, h, { fromDeleting: false }),
  );
  return step9 ?? completeStep(c);
};

/**
 * §3.3 (and the roll-back branch of §3.5): (1) back to ClusterAPI, remove the marked pauses — except from a
 * deleting CAPI MachineSet, which keeps its pause and loses Cluster API's own finalizer instead (§4.6; see
 * `releasedWhileDeleting` in ./kinds.ts), so the delete completes as the user asked; (3) re-add the
 * old side's holding finalizers (step 9's) where missing; (2) remove the new side's holding finalizers that
 * step 8 added, from objects that are not deleting; (4) the status write, which carries the event (5). (3)
 * runs before (2): see below. Under a stable authority the other side holds none of its holding finalizers
 * (step 9 removed them; CAPA adds its own only while unpaused, and twins are created paused), so every one
 * found here is one step 8 added. Cluster API's own finalizers stay: it would add them back at once.
 */
const planRollback = (c: Context, why: string): Step => {
  if (c.old === "ClusterAPI") {
    const lift = firstStep(c.details.pauseTargets, (role) =>
      liftPauseStep(c.s, role, c.details.releasedWhileDeleting),
    );
    if (lift) return lift;
  }
  // Make before break, as steps 8–9 do going forward: the old side gets its finalizers back (3) before the new
  // side's are removed (2). In SPEC §3.3's literal order a delete landing between (2) and (3) would find neither
  // side holding the object — the old side's finalizer cannot be re-added once it is deleting — so nobody would
  // terminate the instance (found by the model campaign, test/model).
  const undo9 = firstStep(c.details.holdingFinalizers[c.old], (h) => addFinalizersStep(c.s, h));
  if (undo9) return undo9;
  const undo8 = firstStep(c.details.holdingFinalizers[c.target], (h) =>
    removeFinalizersStep(c.s, h, { fromDeleting: false }),
  );
  return undo8 ?? cancelStep(c, why);
};

/**
 * §3.5 once step 9 has begun: steps 9–10 (step 11 is the steady state's unpause). As going forward, the CAPI
 * side is paused while Migrating whichever the direction — a cancel back to ClusterAPI may already have lifted
 * the pauses when a delete turns it into a completion to MachineAPI — and MachineAPI takes over only once
 * the CAPI controllers acknowledged the pause again (found by the model campaign: status MachineAPI with the
 * CAPI twin unpaused, both sides active).
 */
const planCompletion = (c: Context, why: string): Step => {
  const relift = liftedPauseStep(c);
  if (relift) return relift;
  const pause = firstStep(c.details.pauseTargets, (role) => pauseStep(c.s, role));
  if (pause) return pause;
  // Only CAPI can have been un-paused during the handover (a cancel's first writes); MAO stays paused while
  // status is Migrating, and its step-6 acknowledgement stands.
  const unacknowledged =
    c.old === "ClusterAPI" ? pauseAcknowledgementProblem(c.s, c.old, { ending: true }) : undefined;
  if (unacknowledged) return problemStep(unacknowledged);
  const step9 = firstStep(c.details.holdingFinalizers[c.old], (h) =>
    removeFinalizersStep(c.s, h, { fromDeleting: true }),
  );
  return step9 ?? completeStep(c, why);
};

/** Involved objects that are being deleted or already gone (a gone twin is the end of a deletion). */
const endingRoles = (s: HandoverSnapshot): Role[] =>
  involvedRoles(s.kind).filter((role) => {
    const object = objectOf(s, role);
    return object === undefined || isDeleting(object);
  });

const planMigrating = (
  s: HandoverSnapshot,
  mapi: KubeObject,
  spec: StableAuthority,
  now: Date,
  options: PlanOptions,
): Step => {
  const old = synchronizedAPI(mapi);
  if (old === undefined) {
    const inferred = inferSourceAuthority(s);
    if (inferred === undefined)
      return blockedStep(
        `${UNKNOWN_SOURCE_AUTHORITY}: ${mapiName(s)} is Migrating without status.synchronizedAPI and its CAPI twin is paused without the ${ANNOTATIONS.pausedBy} marker (or absent) while Paused=True, so the old authority cannot be told; see the README section "UnknownSourceAuthority" for the manual fix`,
      );
    // Write the inference down first: it reads the pause state, which the next steps change.
    return {
      kind: "setSynchronizedAPI",
      target: refOf("mapi", mapi),
      statusPatch: { synchronizedAPI: inferred },
    };
  }
  const c: Context = { s, mapi, details: HANDOVER_KINDS[s.kind], old, target: opposite(old), now };
  const ending = endingRoles(s);
  if (ending.length > 0) {
    const what = ending
      .map((role) => {
        const object = objectOf(s, role);
        return `${describeObject(s.kind, role, object)} is ${object ? "being deleted" : "gone"}`;
      })
      .join(", ");
    return stepNineBegun(c)
      ? planCompletion(c, `${what}; ${c.target} performs the deletion`)
      : planRollback(c, `${what}; ${c.old} stays authoritative and performs the deletion`);
  }
  if (options.resolveOpenHandovers)
    return stepNineBegun(c)
      ? planCompletion(c, "resolved before the product is removed")
      : planRollback(c, "resolved before the product is removed");
  if (spec === old) return planRollback(c, `spec.authoritativeAPI was set back to ${old}`);
  return planForward(c);
};

export interface PlanOptions {
  /**
   * `cli uninstall-prepare --resolve-migrations` (SPEC §9): end every open handover now — complete it
   * where step 9 has begun, as §3.5 does, otherwise cancel it as §3.3 does — and never start a new one.
   */
  resolveOpenHandovers?: boolean;
}

/**
 * Whether `planHandover` reads the member Machines of the MachineSet whose MAPI copy is `mapiSet`: only
 * while its handover is open — status Migrating, or a stable status its spec no longer names (step 4 and
 * steps 6–7 check the members). A set that is steady, uninitialised or invalid plans from the set and its
 * twin alone, so its members' events need not wake it (watches.ts).
 */
export const readsMembers = (mapiSet: KubeObject | undefined): boolean => {
  if (!mapiSet) return false;
  const status = statusAuthorityReading(mapiSet);
  if (status === "Migrating") return true;
  const spec = specAuthority(mapiSet);
  return (status === "MachineAPI" || status === "ClusterAPI") && spec !== undefined && spec !== status;
};

/** SPEC §3.1: the next step of the handover of `snapshot.mapi`. Pure; `now` stamps condition transitions. */
export const planHandover = (s: HandoverSnapshot, now: Date, options: PlanOptions = {}): Step => {
  if (s.unsyncedKinds && s.unsyncedKinds.length > 0)
    return {
      kind: "wait",
      for: "cache",
      retry: "backoff",
      event: normal("WaitingForSync", `waiting for the cache of ${s.unsyncedKinds.join(", ")} to sync`),
    };
  const mapi = s.mapi;
  if (!mapi) return { kind: "done", why: "gone" };
  const spec = specAuthority(mapi);
  if (spec === undefined)
    return blockedStep(`${mapiName(s)}: spec.authoritativeAPI must be MachineAPI or ClusterAPI`);
  const status = statusAuthorityReading(mapi);
  switch (status) {
    case "invalid":
      return blockedStep(`${mapiName(s)}: status.authoritativeAPI holds an unknown value`);
    case "absent":
      return {
        kind: "initStatus",
        target: refOf("mapi", mapi),
        statusPatch: { authoritativeAPI: spec, synchronizedAPI: spec },
      };
    case "Migrating":
      return planMigrating(s, mapi, spec, now, options);
    case "MachineAPI":
    case "ClusterAPI":
      return (
        stableRepair(s, mapi, status, options) ??
        (spec === status || options.resolveOpenHandovers
          ? { kind: "done", why: "steady" }
          : planStart(s, mapi, status, spec, now))
      );
    default: {
      const unreachable: never = status;
      return unreachable;
    }
  }
};

/**
 * Which write may follow which within one reconcile (decision 91): the pairs whose second write SPEC §3.1
 * does not tie to the cache showing the first. Step 4's two writes; step 4 → step 5; step 5's, step 8's and
 * step 11's objects one after the other. Never across step 8 → 9 or 9 → 10 ("requeue until the cache shows
 * them"), nor into a wait. Step 10 → 11 is allowed by SPEC but measured slower: unpausing the CAPI side in
 * the same instant as the status write set the CAPI stand-ins going before the sync had mirrored the new
 * authority, and their status churn cost more sync reconciles and 409s than the reads it saved (decision 91).
 * Rules as data: a kind missing here ends the chain.
 */
const CHAINS: Partial<Record<Step["kind"], readonly Step["kind"][]>> = {
  recordPausedFalseAt: ["startMigration"],
  startMigration: ["pause"],
  pause: ["pause"],
  addFinalizers: ["addFinalizers"],
  unpause: ["unpause"],
};

/**
 * The write to send next in the same reconcile after `previous` landed, planned from `after` — the live
 * snapshot of this reconcile with the written object replaced by the server's answer to the write — or
 * undefined when the reconcile ends there. A deletion anywhere (SPEC §3.5) always ends it: those branches
 * decide between roll-back and completion, and each such decision gets reads of its own.
 */
export const chainedStep = (
  previous: Step,
  after: HandoverSnapshot,
  now: Date,
  options: PlanOptions = {},
): Step | undefined => {
  if (!CHAINS[previous.kind] || endingRoles(after).length > 0) return undefined;
  const next = planHandover(after, now, options);
  return CHAINS[previous.kind]?.includes(next.kind) ? next : undefined;
};
