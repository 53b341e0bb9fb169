/**
 * What the handover controller reports (SPEC §3.4), as pure functions over what it remembers per key and
 * what the cache shows: which Event a step is a transition to (one Event per transition, not per
 * reconcile), how long the next wait requeue is, the `direction` label, when a handover started, and the
 * rows of the gauges `migrations_in_progress`, `migration_stuck` and `synchronized_false`. The controller
 * shell (./controller.ts) keeps the memory and does the I/O; ./metrics.ts turns rows into series.
 */
import type { StableAuthority } from "../kube/kinds.js";
import { CONDITIONS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { conditionOf, nameOf } from "../kube/object.js";
import { specAuthority, statusAuthorityReading } from "../protocol/authority.js";
import { SYNCHRONIZED_REASONS } from "../protocol/synchronized.js";
import type { HandoverKind, Role } from "./snapshot.js";
import type { HandoverEvent, Step } from "./steps.js";
import { stepName } from "./steps.js";
import type { PatchRequest } from "./write.js";

/** A write of ours the cache may not show yet. */
export interface PendingWrite {
  role: Role;
  name: string;
  plannedResourceVersion: string;
}

/** What the shell remembers about one key between reconciles; lost on restart, rebuilt from the cache. */
export interface KeyMemory {
  /** The last Event emitted for this key (reason and message): a repeat of it is not a transition. */
  lastEvent?: { reason: string; message: string };
  /** `stepName` of the latest plan, and when (ms) that step was first planned: `migration_stuck`. */
  step?: string;
  stepSince?: number;
  /** The delay of the last wait requeue; doubles while the same wait repeats. */
  waitDelayMs?: number;
  /** When (ms) the handover started: the start write, or the cache's `AwaitingFinalSync` transition. */
  startedAt?: number;
  /**
   * The writes of the last reconcile that wrote (one, or a chain of them, decision 91): each target and the
   * resourceVersion it was planned from. While the cache still shows any of those resourceVersions, a write
   * has not been observed yet and re-planning from the cache would only repeat it (and get 409), so the
   * shell requeues instead.
   */
  pendingWrites?: readonly PendingWrite[];
  /**
   * A write whose reply never came (a transport failure or a 5xx): the server may have applied it, or may
   * still apply it up to its request timeout. Nothing is decided for the key until it is settled (SPEC §3.5).
   */
  unconfirmedWrite?: { request: PatchRequest; step: Step };
  /**
   * The `MigrationCompleted` Event of a step-10 write, held until step 11 is done (SPEC §3.1: the new
   * authority's side is active, not merely named in status).
   */
  pendingCompletion?: { event: HandoverEvent; subject: KubeObject };
}

export interface WaitBackoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_WAIT_BACKOFF: WaitBackoff = Object.freeze({ initialMs: 1_000, maxMs: 60_000 });

/** The event a step carries, if any. */
const eventOf = (step: Step): HandoverEvent | undefined => ("event" in step ? step.event : undefined);

/**
 * The Event to emit for `step`, or undefined. Start and cancellation ride on their write and are
 * emitted each time that write succeeds (each is a transition by itself; a second handover of the same
 * object repeats the same message legitimately). Waits and blocks are emitted only when their reason or
 * message differs from the last Event of this key, so a handover waiting for an hour reports once.
 */
export const transitionEvent = (memory: KeyMemory, step: Step): HandoverEvent | undefined => {
  const event = eventOf(step);
  if (!event) return undefined;
  // Held until step 11 is done; the shell emits it through `completionDue`.
  if (step.kind === "completeMigration") return undefined;
  if (step.kind !== "wait" && step.kind !== "blocked") return event;
  const last = memory.lastEvent;
  return last && last.reason === event.reason && last.message === event.message ? undefined : event;
};

/** Step 3's repairs, which finish step 11 after a completion (pause state and synchronizedAPI). */
const STEADY_REPAIRS: readonly Step["kind"][] = ["pause", "unpause", "setSynchronizedAPI"];

/**
 * Whether a held `MigrationCompleted` is due: the cache shows a stable status (the step-10 write landed)
 * and the plan is no longer one of step 3's repairs (step 11 is done). Also due when the object is gone.
 */
export const completionDue = (memory: KeyMemory, statusIsStable: boolean, step: Step): boolean =>
  memory.pendingCompletion !== undefined &&
  ((step.kind === "done" && step.why === "gone") || (statusIsStable && !STEADY_REPAIRS.includes(step.kind)));

/**
 * The requeue delay of a wait: `initialMs` when the key starts waiting at this step, doubling (up to
 * `maxMs`) while it keeps waiting at the same step. Progress (a write, another step) starts over.
 */
export const nextWaitDelay = (memory: KeyMemory, step: string, backoff: WaitBackoff): number =>
  memory.step === step && memory.waitDelayMs !== undefined
    ? Math.min(backoff.maxMs, memory.waitDelayMs * 2)
    : backoff.initialMs;

/** The memory after planning `step` at `now`: the stuck clock restarts only when the step changes. */
export const withStep = (memory: KeyMemory, step: string, now: number): KeyMemory =>
  memory.step === step && memory.stepSince !== undefined
    ? memory
    : { ...memory, step, stepSince: now, waitDelayMs: undefined };

/** The `direction` label: `MachineAPIToClusterAPI` or `ClusterAPIToMachineAPI`. */
export const directionOf = (from: StableAuthority, to: StableAuthority): string => `${from}To${to}`;

/** A handover is in progress while status is Migrating or spec asks for the other authority. */
export const handoverInProgress = (mapi: KubeObject): boolean => {
  const status = statusAuthorityReading(mapi);
  if (status === "Migrating") return true;
  if (status !== "MachineAPI" && status !== "ClusterAPI") return false;
  const spec = specAuthority(mapi);
  return spec !== undefined && spec !== status;
};

/**
 * When a handover already Migrating started, read from the cache: the start write sets
 * `Synchronized=Unknown` reason `AwaitingFinalSync`, whose lastTransitionTime is that write's time, until
 * the final sync replaces it. Used after a restart, when the start write is not remembered.
 */
export const startedAtOf = (mapi: KubeObject | undefined): number | undefined => {
  if (!mapi || statusAuthorityReading(mapi) !== "Migrating") return undefined;
  const c = conditionOf(mapi, CONDITIONS.synchronized);
  if (c?.reason !== SYNCHRONIZED_REASONS.awaitingFinalSync || !c.lastTransitionTime) return undefined;
  const at = Date.parse(c.lastTransitionTime);
  return Number.isNaN(at) ? undefined : at;
};

export interface GaugeRow<L extends string> {
  labels: Record<L, string>;
  value: number;
}

export interface GaugeRows {
  inProgress: GaugeRow<"kind" | "step">[];
  stuck: GaugeRow<"kind" | "name" | "step">[];
  synchronizedFalse: GaugeRow<"kind" | "reason">[];
}

export const NO_ROWS: GaugeRows = Object.freeze({ inProgress: [], stuck: [], synchronizedFalse: [] });

const countBy = <L extends string>(
  keys: readonly Record<L, string>[],
  keyOf: (labels: Record<L, string>) => string,
): GaugeRow<L>[] => {
  const out = new Map<string, GaugeRow<L>>();
  for (const labels of keys) {
    const k = keyOf(labels);
    const row = out.get(k);
    if (row) row.value++;
    else out.set(k, { labels, value: 1 });
  }
  return [...out.values()];
};

/** `synchronized_false{kind,reason}`: MAPI objects whose Synchronized condition is False, by reason. */
export const synchronizedFalseRows = (
  kind: HandoverKind,
  mapiObjects: readonly KubeObject[],
): GaugeRow<"kind" | "reason">[] =>
  countBy(
    mapiObjects
      .map((o) => conditionOf(o, CONDITIONS.synchronized))
      .filter((c) => c?.status === "False")
      .map((c) => ({ kind, reason: c?.reason ?? "" })),
    (l) => l.reason,
  );

/** One handover in progress as the cache shows it now, with the step the planner answers for it. */
export interface InProgress {
  name: string;
  step: Step;
}

/**
 * `migrations_in_progress{kind,step}` and `migration_stuck{kind,name,step}` for the handovers in progress.
 * A handover is stuck when the shell has planned the same step for it for `stuckAfterMs` or longer (the
 * memory says since when); a step the memory has not seen yet has just begun. Stuck is only reported:
 * nothing is ever cancelled because of it (SPEC §3.4).
 */
export const progressRows = (
  kind: HandoverKind,
  handovers: readonly InProgress[],
  memoryOf: (name: string) => KeyMemory | undefined,
  now: number,
  stuckAfterMs: number,
): Pick<GaugeRows, "inProgress" | "stuck"> => {
  const named = handovers
    .filter((h) => h.step.kind !== "done")
    .map((h) => ({ name: h.name, step: stepName(h.step) }));
  return {
    inProgress: countBy(
      named.map((h) => ({ kind, step: h.step })),
      (l) => l.step,
    ),
    stuck: named.map((h) => {
      const memory = memoryOf(h.name);
      const since = memory?.step === h.step ? memory.stepSince : undefined;
      return {
        labels: { kind, name: h.name, step: h.step },
        value: since !== undefined && now - since >= stuckAfterMs ? 1 : 0,
      };
    }),
  };
};

/** The names of `mapiObjects` whose handover is in progress. */
export const inProgressNames = (mapiObjects: readonly KubeObject[]): string[] =>
  mapiObjects.filter(handoverInProgress).map(nameOf);
