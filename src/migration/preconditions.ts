/**
 * The pure checks of a handover (SPEC §3.1 steps 4, 6 and 7): is everything synchronised, did the old
 * authority acknowledge its stable state and later its stop, is the Machine provisioned, do the member
 * Machines of a MachineSet have twins on the new side, is anything being deleted, is the owner supported.
 * The planner uses them; admission and preflight reuse `migrationRefusals` to say "a migration would be
 * refused now, and why". Each check answers a `Problem` (event reason + message for a cluster admin) or
 * nothing.
 */
import type { StableAuthority } from "../kube/kinds.js";
import { ANNOTATIONS, CONDITIONS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import {
  conditionOf,
  firstByName,
  generationOf,
  getPath,
  isDeleting,
  labelsOf,
  nameOf,
  namespaceOf,
  ownerReferencesOf,
} from "../kube/object.js";
import { labelSelectorMatcher } from "../kube/selector.js";
import { opposite, synchronizedGeneration as synchronizedGenerationOf } from "../protocol/authority.js";
import {
  decodePausedFalseAt,
  isPaused,
  pauseAcknowledgements,
  pausedTransitionTime,
  reportsPaused,
} from "../protocol/pause.js";
import { SYNCHRONIZED_REASONS } from "../protocol/synchronized.js";
import { HANDOVER_KINDS, INFRA_MACHINE_FINALIZERS } from "./kinds.js";
import type { HandoverKind, HandoverSnapshot, Role } from "./snapshot.js";
import { objectOf, phaseOf } from "./snapshot.js";
import type { EventReason, WaitFor } from "./steps.js";

export interface Problem {
  reason: Extract<
    EventReason,
    "WaitingForSync" | "WaitingForProvisioning" | "WaitingForPause" | "MigrationBlocked"
  >;
  /** What the planner waits for; absent when a person must act (MigrationBlocked). */
  waitFor?: WaitFor;
  message: string;
}

const blocked = (message: string): Problem => ({ reason: "MigrationBlocked", message });

/** "MAPI Machine openshift-machine-api/worker-a", "AWSMachine openshift-cluster-api/worker-a". */
export const describeObject = (kind: HandoverKind, role: Role, object: KubeObject | undefined): string => {
  const label =
    role === "mapi"
      ? `MAPI ${kind}`
      : role === "capi"
        ? `CAPI ${kind}`
        : typeof object?.kind === "string" && object.kind !== ""
          ? object.kind
          : "InfraMachine";
  return object ? `${label} ${namespaceOf(object)}/${nameOf(object)}` : label;
};

const describeRole = (s: HandoverSnapshot, role: Role): string =>
  describeObject(s.kind, role, objectOf(s, role));

/** The roles of the objects a handover involves: the MAPI object, its twin and (Machines) the InfraMachine. */
export const involvedRoles = (kind: HandoverKind): readonly Role[] =>
  kind === "Machine" ? ["mapi", "capi", "infraMachine"] : ["mapi", "capi"];

/** Involved objects that carry a deletionTimestamp. */
const deletingRoles = (s: HandoverSnapshot): Role[] =>
  involvedRoles(s.kind).filter((role) => isDeleting(objectOf(s, role)));

/**
 * Rule `migration-unsupported-owner` (SPEC §2.3, §4.3): Machines owned by a ControlPlaneMachineSet and
 * MachineSets with any owner reference cannot be handed over. Returns why, or undefined.
 */
const unsupportedOwnerOf = (kind: HandoverKind, mapi: KubeObject): string | undefined => {
  const owners = ownerReferencesOf(mapi);
  if (kind === "MachineSet") {
    const first = owners[0];
    return first
      ? `it is owned by ${first.kind} ${first.name}; MachineSets with owner references are not supported`
      : undefined;
  }
  const cpms = owners.find((o) => o.kind === "ControlPlaneMachineSet");
  return cpms
    ? `it is owned by ControlPlaneMachineSet ${cpms.name}; control-plane Machines are not supported`
    : undefined;
};

const conditionText = (object: KubeObject | undefined, type: string): string => {
  const c = conditionOf(object, type);
  if (!c) return `${type} is not set`;
  const why = [c.reason, c.message].filter((x) => typeof x === "string" && x !== "").join(": ");
  return `${type} is ${c.status}${why ? ` (${why})` : ""}`;
};

/**
 * Step 4, first bullet: `Synchronized=True` and `synchronizedGeneration` equal to the generation of the
 * current authoritative object (the MAPI object when leaving MachineAPI, its CAPI twin when leaving
 * ClusterAPI).
 */
const synchronizationProblem = (s: HandoverSnapshot, from: StableAuthority): Problem | undefined => {
  const mapi = s.mapi;
  if (!mapi) return undefined;
  if (!s.capi && from === "ClusterAPI")
    return blocked(
      `${describeRole(s, "mapi")} is ClusterAPI-authoritative but its ${describeObject(s.kind, "capi", undefined)} twin does not exist; there is nothing to hand over`,
    );
  if (!s.capi)
    return {
      reason: "WaitingForSync",
      waitFor: "sync",
      message: `${describeRole(s, "mapi")} has no ${describeObject(s.kind, "capi", undefined)} twin yet; the sync creates it`,
    };
  if (s.kind === "Machine" && !s.infraMachine)
    return {
      reason: "WaitingForSync",
      waitFor: "sync",
      message: `${describeRole(s, "capi")} has no InfraMachine yet; the sync creates it`,
    };
  const synced = conditionOf(mapi, CONDITIONS.synchronized);
  if (synced?.status !== "True")
    return {
      reason: "WaitingForSync",
      waitFor: "sync",
      message: `${describeRole(s, "mapi")}: ${conditionText(mapi, CONDITIONS.synchronized)}; the migration waits for a successful sync`,
    };
  const authoritative: Role = from === "MachineAPI" ? "mapi" : "capi";
  const wanted = generationOf(objectOf(s, authoritative));
  const have = synchronizedGenerationOf(mapi);
  if (have !== wanted)
    return {
      reason: "WaitingForSync",
      waitFor: "sync",
      message: `${describeRole(s, "mapi")}: status.synchronizedGeneration is ${have} but ${describeRole(s, authoritative)} is at generation ${wanted}; waiting for the sync`,
    };
  return undefined;
};

/**
 * Step 4, second bullet: every acknowledger of the authority being left reports `Paused=False`. On
 * success, the value of the `paused-false-at` annotation: each acknowledger's lastTransitionTime by key.
 */
export const pausedFalseAcknowledgement = (
  s: HandoverSnapshot,
  from: StableAuthority,
): { ok: true; record: Record<string, string> } | { ok: false; problem: Problem } => {
  const record: Record<string, string> = {};
  for (const ack of HANDOVER_KINDS[s.kind].acknowledgers[from]) {
    const object = objectOf(s, ack.role);
    const at = pausedTransitionTime(object, "False");
    if (at === undefined && conditionOf(object, CONDITIONS.paused)?.status === "False")
      return {
        ok: false,
        problem: blocked(
          `${describeObject(s.kind, ack.role, object)} reports Paused=False without a lastTransitionTime, so its acknowledgement cannot be recorded`,
        ),
      };
    if (at === undefined)
      return {
        ok: false,
        problem: {
          // SPEC §3.1 step 4 reports every unmet precondition as WaitingForSync, WaitingForProvisioning or
          // MigrationBlocked; an acknowledgement the old controllers have not written yet is a sync of state.
          reason: "WaitingForSync",
          waitFor: "pauseAck",
          message: `${describeObject(s.kind, ack.role, object)}: ${conditionText(object, CONDITIONS.paused)}; waiting for the ${from} controllers to report Paused=False (they have not acknowledged the current state)`,
        },
      };
    record[ack.key] = at;
  }
  return { ok: true, record };
};

/** Step 4, third bullet (Machines): the instance exists with a providerID on the side being left. */
const provisioningProblem = (s: HandoverSnapshot, from: StableAuthority): Problem | undefined => {
  const rule = HANDOVER_KINDS[s.kind].provisioning[from];
  if (!rule) return undefined;
  const object = objectOf(s, rule.role);
  const why = rule.check(object);
  return why === undefined
    ? undefined
    : {
        reason: "WaitingForProvisioning",
        waitFor: "provisioning",
        message: `${describeObject(s.kind, rule.role, object)} is not provisioned: ${why}; the migration waits until it is`,
      };
};

const groupOf = (apiVersion: unknown): string =>
  typeof apiVersion === "string" && apiVersion.includes("/")
    ? apiVersion.slice(0, apiVersion.indexOf("/"))
    : "";

/** Whether `machine` has an owner reference to `set` (uid when both have one, else group, kind and name). */
const isOwnedBy = (machine: KubeObject, set: KubeObject): boolean =>
  ownerReferencesOf(machine).some((o) => {
    if (typeof set.metadata?.uid === "string" && typeof o.uid === "string" && o.uid !== "")
      return o.uid === set.metadata.uid;
    return o.kind === set.kind && o.name === nameOf(set) && groupOf(o.apiVersion) === groupOf(set.apiVersion);
  });

/**
 * The Machines each copy of a MachineSet owns, by name, among a snapshot's candidate members: what a live read
 * of the members by selector must fetch beside its LIST (read-snapshot.ts, decision 143).
 */
export const ownedMemberNames = (s: HandoverSnapshot): { mapi: string[]; capi: string[] } => {
  const owned = (set: KubeObject | undefined, machines: readonly KubeObject[] | undefined): string[] =>
    set ? (machines ?? []).filter((m) => isOwnedBy(m, set)).map(nameOf) : [];
  return { mapi: owned(s.mapi, s.members?.mapi), capi: owned(s.capi, s.members?.capi) };
};

/** Whether `set`'s selector selects a Machine, compiled once per check (decision 145). */
const selectorOf = (set: KubeObject): ((machine: KubeObject) => boolean) => {
  const matches = labelSelectorMatcher(getPath(set, ["spec", "selector"]));
  return (machine) => matches(labelsOf(machine));
};

/**
 * Step 4, fourth bullet (MachineSets): every Machine the old-side MachineSet owns or selects has a twin on
 * the new side that the new-side MachineSet owns and selects, is not deleting, and whose MAPI copy is
 * `Synchronized=True` — otherwise the new side's controller would create extra instances.
 */
export const memberProblem = (s: HandoverSnapshot, from: StableAuthority): Problem | undefined => {
  if (s.kind !== "MachineSet" || !s.mapi || !s.capi) return undefined;
  const oldRole: Role = from === "MachineAPI" ? "mapi" : "capi";
  const newRole: Role = oldRole === "mapi" ? "capi" : "mapi";
  const oldSet = oldRole === "mapi" ? s.mapi : s.capi;
  const newSet = oldRole === "mapi" ? s.capi : s.mapi;
  const oldMachines = (oldRole === "mapi" ? s.members?.mapi : s.members?.capi) ?? [];
  const newMachines = (oldRole === "mapi" ? s.members?.capi : s.members?.mapi) ?? [];
  const newApi = opposite(from) === "ClusterAPI" ? "CAPI" : "MAPI";
  const oldApi = from === "ClusterAPI" ? "CAPI" : "MAPI";
  const setName = describeObject("MachineSet", newRole, newSet);
  const twinsByName = firstByName(newMachines);
  const oldSelects = selectorOf(oldSet);
  const newSelects = selectorOf(newSet);
  for (const member of oldMachines) {
    if (!isOwnedBy(member, oldSet) && !oldSelects(member)) continue;
    const name = nameOf(member);
    const memberText = `${oldApi} Machine ${namespaceOf(member)}/${name}`;
    const twin = twinsByName.get(name);
    if (!twin)
      return {
        reason: "WaitingForSync",
        waitFor: "sync",
        message: `member ${memberText} has no ${newApi} twin yet; handing over now would make ${setName} create an extra instance`,
      };
    const twinText = `${newApi} Machine ${namespaceOf(twin)}/${name}`;
    if (isDeleting(twin))
      return blocked(
        `member ${memberText} has a twin ${twinText} that is being deleted; wait for the deletion to finish`,
      );
    // An unowned twin stays unowned: the sync sets owner references only when it creates an object (SPEC §4.6,
    // decision 149). Only a person can end this; say so rather than wait on the sync for ever.
    if (!ownerReferencesOf(twin).some((ref) => ref.controller === true))
      return blocked(
        `member ${twinText} has no controller owner (its MachineSet was deleted with --cascade=orphan, or its owner reference removed), and the sync never re-adds owner references, so ${setName} would not count it and would create an extra instance; cancel the migration (set spec.authoritativeAPI back to ${from})`,
      );
    if (!isOwnedBy(twin, newSet) || !newSelects(twin))
      return {
        reason: "WaitingForSync",
        waitFor: "sync",
        message: `member ${twinText} is not owned and selected by ${setName}; waiting for the sync`,
      };
    const mapiCopy = oldRole === "mapi" ? member : twin;
    if (conditionOf(mapiCopy, CONDITIONS.synchronized)?.status !== "True")
      return {
        reason: "WaitingForSync",
        waitFor: "sync",
        message: `member MAPI Machine ${namespaceOf(mapiCopy)}/${name}: ${conditionText(mapiCopy, CONDITIONS.synchronized)}; waiting for the sync`,
      };
  }
  return undefined;
};

/** The platform InfraMachine finalizer must be known for a Machine handover (steps 8 and 9 move it). */
const infraMachineKindProblem = (s: HandoverSnapshot): Problem | undefined => {
  if (s.kind !== "Machine" || !s.infraMachine) return undefined;
  const kind = typeof s.infraMachine.kind === "string" ? s.infraMachine.kind : "";
  return INFRA_MACHINE_FINALIZERS[kind] === undefined
    ? blocked(
        `${describeRole(s, "infraMachine")} is of a kind whose controller finalizer is unknown; only ${Object.keys(INFRA_MACHINE_FINALIZERS).join(", ")} can be handed over`,
      )
    : undefined;
};

/**
 * Every reason SPEC §3.1 step 4 would not start a handover away from `from` now, most serious first
 * (blocked before waiting). Empty when it would start. Admission and preflight reuse this.
 */
export const migrationRefusals = (s: HandoverSnapshot, from: StableAuthority): Problem[] => {
  const mapi = s.mapi;
  if (!mapi) return [];
  const problems: Problem[] = [];
  const owner = unsupportedOwnerOf(s.kind, mapi);
  if (owner) problems.push(blocked(`${describeRole(s, "mapi")} cannot be migrated: ${owner}`));
  for (const role of deletingRoles(s))
    problems.push(blocked(`${describeRole(s, role)} is being deleted; a migration cannot start`));
  const infraKind = infraMachineKindProblem(s);
  if (infraKind) problems.push(infraKind);
  const checks = [
    synchronizationProblem(s, from),
    (() => {
      const ack = pausedFalseAcknowledgement(s, from);
      return ack.ok ? undefined : ack.problem;
    })(),
    provisioningProblem(s, from),
    memberProblem(s, from),
  ];
  for (const p of checks) if (p) problems.push(p);
  return problems;
};

/**
 * Step 6: every acknowledger of the old authority reports `Paused=True` with a lastTransitionTime not
 * earlier than its `Paused=False` time recorded in step 4 (a True left over from an earlier period does
 * not count). The final sync (SPEC §4.2) starts only once this holds.
 */
export const pauseAcknowledgementProblem = (
  s: HandoverSnapshot,
  old: StableAuthority,
  options: { ending?: boolean } = {},
): Problem | undefined => {
  // The check itself is src/protocol's (the sync's fork gates the final sync on the same one); this turns the
  // first acknowledger not yet acknowledged, in table order, into the planner's words.
  const first = pauseAcknowledgements(s, old, options).find((a) => a.state !== "acknowledged");
  if (!first) return undefined;
  const what = describeObject(s.kind, first.ack.role, first.object);
  if (first.state === "unrecorded")
    return blocked(
      `${describeRole(s, "mapi")} carries no recorded Paused=False time for ${what} (annotation ${ANNOTATIONS.pausedFalseAt}), so a fresh Paused=True cannot be told from a stale one; cancel the migration (set spec.authoritativeAPI back to ${old}) and start it again`,
    );
  return {
    reason: "WaitingForPause",
    waitFor: "pauseAck",
    message:
      first.state === "awaited" && first.pausedAt !== undefined && first.since !== undefined
        ? `waiting for ${what} to report Paused=True again: its Paused=True at ${first.pausedAt} is older than its Paused=False at ${first.since}`
        : `waiting for ${what} to report Paused=True (${conditionText(first.object, CONDITIONS.paused)})`,
  };
};

/**
 * Step 6 after a roll-back lifted a pause while Migrating (SPEC §3.3 then a cancel of the cancel, or §3.5
 * completing after it): an acknowledger of the old authority whose pause is gone may have acted since, so
 * its Paused=True from before the lift must not count. Before it is paused again it must report the lift —
 * Paused=False later than its recorded time, which becomes the new record (`record`, the whole new value);
 * while it still shows Paused=True without its pause, the lift is not acknowledged yet (a problem to wait
 * on: its controller runs, so the False comes). `{ ok: true }` alone: nothing was lifted, or it is recorded.
 */
export const liftedPauseAcknowledgement = (
  s: HandoverSnapshot,
  old: StableAuthority,
): { ok: true; record?: Record<string, string> } | { ok: false; problem: Problem } => {
  const details = HANDOVER_KINDS[s.kind];
  const recorded = decodePausedFalseAt(s.mapi) ?? {};
  const next: Record<string, string> = { ...recorded };
  let changed = false;
  for (const ack of details.acknowledgers[old]) {
    if (!details.pauseTargets.includes(ack.role)) continue;
    const object = objectOf(s, ack.role);
    if (!object || isPaused(object)) continue;
    if (reportsPaused(object))
      return {
        ok: false,
        problem: {
          reason: "WaitingForPause",
          waitFor: "pauseAck",
          message: `waiting for ${describeObject(s.kind, ack.role, object)} to report Paused=False: a roll-back lifted its pause and its Paused=True is from before, so it is paused again only once it acknowledged the lift`,
        },
      };
    const at = pausedTransitionTime(object, "False");
    const since = recorded[ack.key];
    if (at !== undefined && (since === undefined || Date.parse(at) > Date.parse(since))) {
      next[ack.key] = at;
      changed = true;
    }
  }
  return changed ? { ok: true, record: next } : { ok: true };
};

/**
 * Step 7's lost-write guard (Machines): the old side went back to Provisioning, so the instance may exist
 * without a providerID.
 */
export const lostWriteProblem = (s: HandoverSnapshot, old: StableAuthority): Problem | undefined => {
  if (s.kind !== "Machine") return undefined;
  const role: Role = old === "MachineAPI" ? "mapi" : "capi";
  return phaseOf(objectOf(s, role)) === "Provisioning"
    ? blocked(
        `${describeRole(s, role)} moved back to phase Provisioning during the migration: the instance may exist without a providerID; cancel the migration (set spec.authoritativeAPI back to ${old})`,
      )
    : undefined;
};

/**
 * Step 7: `Synchronized=True` reason `FinalSyncComplete` and `synchronizedGeneration` equal to the old
 * authority's generation. Step 4 set `Synchronized=Unknown` (AwaitingFinalSync), so a FinalSyncComplete
 * left from an earlier handover cannot satisfy this.
 */
export const finalSyncProblem = (s: HandoverSnapshot, old: StableAuthority): Problem | undefined => {
  const mapi = s.mapi;
  if (!mapi) return undefined;
  const c = conditionOf(mapi, CONDITIONS.synchronized);
  if (c?.status !== "True" || c.reason !== SYNCHRONIZED_REASONS.finalSyncComplete)
    return {
      reason: "WaitingForSync",
      waitFor: "finalSync",
      message: `waiting for the final sync from ${old}: ${conditionText(mapi, CONDITIONS.synchronized)}`,
    };
  const authoritative: Role = old === "MachineAPI" ? "mapi" : "capi";
  const wanted = generationOf(objectOf(s, authoritative));
  const have = synchronizedGenerationOf(mapi);
  return have === wanted
    ? undefined
    : {
        reason: "WaitingForSync",
        waitFor: "finalSync",
        message: `waiting for the final sync from ${old}: status.synchronizedGeneration is ${have} but ${describeRole(s, authoritative)} is at generation ${wanted}`,
      };
};
