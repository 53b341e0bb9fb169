/**
 * The planner's answer (SPEC §3.1, §3.3, §3.5): the one next step of a handover as a tagged union. Every
 * step that writes names its target with the resourceVersion it was computed from, and carries exactly
 * what to write; the shell executes it with one request and returns. Events (SPEC §3.4) ride on the steps
 * that are transitions; the shell emits one Event per transition. Nothing here executes anything.
 */
import type { StableAuthority, StatusAuthority } from "../kube/kinds.js";
import type { Condition } from "../kube/object.js";
import type { ObjectRef } from "./snapshot.js";

/** The reasons of the Events a handover records on the MAPI object (SPEC §3.4). */
export const EVENT_REASONS = [
  "MigrationStarted",
  "WaitingForPause",
  "WaitingForSync",
  "WaitingForProvisioning",
  "MigrationBlocked",
  "MigrationCompleted",
  "MigrationCancelled",
] as const;
export type EventReason = (typeof EVENT_REASONS)[number];

export interface HandoverEvent {
  type: "Normal" | "Warning";
  reason: EventReason;
  message: string;
}

/**
 * The new values of the status fields a step writes on the MAPI object (a merge patch on `/status`).
 * `conditions` is the whole new list, built with `setCondition`, so lastTransitionTime moves only with
 * status. Fields left out are not written.
 */
export interface StatusPatch {
  authoritativeAPI?: StatusAuthority;
  synchronizedAPI?: StableAuthority;
  synchronizedGeneration?: number;
  conditions?: readonly Condition[];
}

/** What a wait is for; also the `step` label of the metrics. */
export type WaitFor = "sync" | "pauseAck" | "provisioning" | "finalSync" | "cache";

export type Step =
  /** Nothing to do: the MAPI object is gone (step 1) or the state is steady (step 3). */
  | { kind: "done"; why: "gone" | "steady" }
  /** Step 2: first status write, `authoritativeAPI` and `synchronizedAPI` from spec. */
  | { kind: "initStatus"; target: ObjectRef; statusPatch: StatusPatch }
  /** Step 3 repair (or §3.3 inference while Migrating): write the missing or stale `synchronizedAPI`. */
  | { kind: "setSynchronizedAPI"; target: ObjectRef; statusPatch: StatusPatch }
  /** Add these annotations (pause `""` and/or the marker) to one CAPI object. */
  | { kind: "pause"; target: ObjectRef; addAnnotations: Record<string, string> }
  /** Remove the pause and the marker from one CAPI object that carries the marker. */
  | { kind: "unpause"; target: ObjectRef; removeAnnotations: readonly string[] }
  /** Step 4, first write: the acknowledgers' `Paused=False` lastTransitionTimes, as the annotation value. */
  | { kind: "recordPausedFalseAt"; target: ObjectRef; annotation: string; value: string }
  /** Step 4, second write: status → Migrating. */
  | {
      kind: "startMigration";
      target: ObjectRef;
      statusPatch: StatusPatch;
      from: StableAuthority;
      to: StableAuthority;
      event: HandoverEvent;
    }
  /**
   * `observed` is the finalizer list the step was planned from: the new list is computed from it, and the
   * request tests the uid and resourceVersion of that read (SPEC §3.5, §7).
   */
  | { kind: "addFinalizers"; target: ObjectRef; finalizers: readonly string[]; observed: readonly string[] }
  | {
      kind: "removeFinalizers";
      target: ObjectRef;
      finalizers: readonly string[];
      observed: readonly string[];
    }
  /** Step 10. */
  | {
      kind: "completeMigration";
      target: ObjectRef;
      statusPatch: StatusPatch;
      to: StableAuthority;
      event: HandoverEvent;
    }
  /** §3.3 (4), and the roll-back of §3.5. */
  | {
      kind: "cancelMigration";
      target: ObjectRef;
      statusPatch: StatusPatch;
      to: StableAuthority;
      event: HandoverEvent;
    }
  /**
   * Nothing to write yet. `retry: "onChange"` — a watched object will change (an acknowledgement, a
   * sync); `"backoff"` — requeue with backoff as well (SPEC §3.1 step 7).
   */
  | { kind: "wait"; for: WaitFor; retry: "onChange" | "backoff"; event: HandoverEvent }
  /** A person must act (cancel, fix an owner, remove a deletion…); no error, no requeue. */
  | { kind: "blocked"; event: HandoverEvent };

export type StepKind = Step["kind"];

/** The `step` label of `migrations_in_progress` and `migration_stuck`. */
export const stepName = (step: Step): string => (step.kind === "wait" ? `wait:${step.for}` : step.kind);

/** Whether executing the step writes to the API server. */
export const isWrite = (step: Step): boolean =>
  step.kind !== "done" && step.kind !== "wait" && step.kind !== "blocked";
