import { parseLabelSelector } from "../apiserver/selectors.js";
import type { Clock } from "../kube/clock.js";
import type { StableAuthority } from "../kube/kinds.js";
import { KINDS } from "../kube/kinds.js";
import { conditionOf, getPath, type KubeObject } from "../kube/object.js";
import { appendAll } from "../lists.js";
import type { HandoverKind } from "../migration/snapshot.js";
import type { EventReason } from "../migration/steps.js";
import type { ConvertibilityCheck, ObjectStore } from "../policies/types.js";
import { specAuthority, statusAuthorityReading } from "../protocol/authority.js";
import type { Support } from "../supported.js";
import {
  eventTimeMs,
  flipTimeOf,
  type HandoverOutcome,
  type HandoverWatch,
  itemKey,
  judgeHandover,
  lastReport,
  type MigrationPlan,
  type PlanItem,
  planMigration,
  planSummaryLine,
  resolutionLines,
  SYNCHRONIZED_FALSE_GRACE_MS,
} from "./migrate-plan.js";
import { errorText, type Namespaces } from "./shell.js";

/** The field manager of the flips (shown in managedFields). */
export const MIGRATE_FIELD_MANAGER = "machine-api-migration-migrate";

export type MigrateEvent =
  | { event: "wave"; wave: number; group: string; objects: string[] }
  | { event: "flipped"; kind: HandoverKind; name: string; wave: number }
  | { event: "completed"; kind: HandoverKind; name: string; seconds: number }
  | { event: "refused"; kind: HandoverKind; name: string; message: string }
  | { event: "failed"; kind: HandoverKind; name: string; reason: string; message: string }
  /** A tracked object deleted during the run: reported, and the run goes on (SPEC §12; decision 185). */
  | { event: "gone"; kind: HandoverKind; name: string; message: string }
  | { event: "interrupted"; message: string };

export interface Progress {
  wave: number;
  group: string;
  done: number;
  objects: number;
  inFlight: number;
  blocked: number;
}

/** Where the run's output goes: a live line on a terminal, one line per event otherwise, or JSON lines. */
export interface Reporter {
  plan(plan: MigrationPlan): void;
  event(e: MigrateEvent): void;
  progress(p: Progress): void;
  /** The closing lines (summary, what is left open and how to resolve it). */
  end(lines: string[], summary: Record<string, unknown>): void;
}

export interface MigrateOptions extends Namespaces {
  target: StableAuthority;
  selector?: string;
  machineSetsOnly: boolean;
  maxInFlight: number;
  dryRun: boolean;
  timeoutMs: number;
}

export interface MigrateDeps {
  /** The watched view (the informer cache in production). */
  store: ObjectStore;
  /** Calls `onChange` on every watch event; returns the unsubscribe. */
  subscribe(onChange: () => void): () => void;
  /**
   * Writes spec.authoritativeAPI; resolves with the object as written, whose managedFields date the flip on
   * the API server's clock (`flipTimeOf`), and rejects with the API server's (admission's) message when refused.
   */
  flip(kind: HandoverKind, name: string, target: StableAuthority): Promise<KubeObject | undefined>;
  /**
   * The MAPI object as the API server has it, managedFields included (the watched view keeps none): a
   * handover found open is timed, and its Events judged, from its flip. Undefined if it cannot be read.
   */
  read(kind: HandoverKind, name: string): Promise<KubeObject | undefined>;
  /**
   * The Events about the MAPI object, from the API server (the watch keeps only MigrationBlocked ones, decision
   * 151): read for a handover that is stuck, to say what the controller last reported.
   */
  events(kind: HandoverKind, name: string): Promise<KubeObject[]>;
  support: Support;
  controllers: { running: boolean; detail: string };
  clock: Clock;
  reporter: Reporter;
  /** The converters' check (src/sync/conversion by default); a parameter so tests can pass a fake. */
  checkConvertible?: ConvertibilityCheck;
  /** SIGINT subscription (process in production). */
  onInterrupt(handler: () => void): () => void;
}

export interface MigrateResult {
  code: 0 | 1;
  moved: number;
  failures: number;
  interrupted: boolean;
}

export const mapiType = (kind: HandoverKind) =>
  kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet;
const capiType = (kind: HandoverKind) => (kind === "Machine" ? KINDS.capiMachine : KINDS.capiMachineSet);

/** A handover the run waits for (see `tracked` in `migrate`). */
interface Tracked {
  kind: HandoverKind;
  name: string;
  watch: HandoverWatch;
  flippedAt: number | undefined;
}

/** The reason of the Events a blocked handover records (the planner's vocabulary), and what `migrate` watches. */
const BLOCKED_REASON: EventReason = "MigrationBlocked";
/** The field selector of the one Event watch `migrate` needs (decision 151). */
export const BLOCKED_EVENTS = `reason=${BLOCKED_REASON}`;

/** The newest `MigrationBlocked` Event per MAPI object (`Kind/name`): its time and message. */
const blockedEvents = (
  store: ObjectStore,
  namespace: string,
): Map<string, { at: number; message: string }> => {
  const out = new Map<string, { at: number; message: string }>();
  for (const e of store.list(KINDS.event, namespace)) {
    if (e.reason !== BLOCKED_REASON) continue;
    const kind = getPath(e, ["involvedObject", "kind"]);
    const name = getPath(e, ["involvedObject", "name"]);
    if (typeof kind !== "string" || typeof name !== "string") continue;
    const at = eventTimeMs(e);
    if (at === undefined) continue;
    const key = `${kind}/${name}`;
    const previous = out.get(key);
    if (!previous || previous.at <= at) out.set(key, { at, message: String(e.message ?? "") });
  }
  return out;
};

/**
 * Reads of handovers found open sent at once: a resumed run may find hundreds open (a person's `oc patch` loop),
 * and the API server's in-flight limit and priority queues are shared with the controllers.
 */
export const READS_AT_ONCE = 10;

/** `read` of every item, `READS_AT_ONCE` at a time, the answers in the items' order. */
const readInBatches = async <T, R>(items: readonly T[], read: (item: T) => Promise<R>): Promise<R[]> => {
  const answers: R[] = [];
  for (let start = 0; start < items.length; start += READS_AT_ONCE)
    appendAll(answers, await Promise.all(items.slice(start, start + READS_AT_ONCE).map(read)));
  return answers;
};

/** How long the run waits, with nothing to flip, for objects that only wait on the controllers. */
export const SETTLE_MS = 10_000;

/** Blocked only by handover waits the controllers resolve themselves (WaitingForSync, WaitingForProvisioning). */
const waitsOnControllers = (item: PlanItem): boolean =>
  item.state === "blocked" &&
  item.blockers.length > 0 &&
  item.blockers.every((b) => b.source === "handover" && b.rule !== "MigrationBlocked");

/**
 * Event timestamps have whole seconds, as have managedFields' times: an Event in the second of the flip counts.
 */
const EVENT_CLOCK_SLACK_MS = 1_000;

/** The run itself, over injected dependencies (tests drive it with a memory store and a fake flip). */
export async function migrate(options: MigrateOptions, deps: MigrateDeps): Promise<MigrateResult> {
  const { store, clock, reporter } = deps;
  const ns = options.mapiNamespace;
  const selects = (() => {
    const p = parseLabelSelector(options.selector);
    return typeof p === "string" ? () => false : p;
  })();
  const plan = (): MigrationPlan =>
    planMigration({
      store,
      namespaces: options,
      support: deps.support,
      target: options.target,
      selects,
      machineSetsOnly: options.machineSetsOnly,
      maxInFlight: options.maxInFlight,
      controllers: deps.controllers,
      ...(deps.checkConvertible ? { checkConvertible: deps.checkConvertible } : {}),
    });
  const first = plan();
  reporter.plan(first);
  const result: MigrateResult = { code: 1, moved: 0, failures: 0, interrupted: false };
  // A selector that selects nothing is most likely a typo (`role=wroker`): the closing lines say so.
  const nothingSelected = (p: MigrationPlan): string[] =>
    options.selector !== undefined && p.summary.objects === 0
      ? [
          `no MAPI MachineSet or Machine in ${ns} matches --selector ${JSON.stringify(options.selector)}: nothing to move`,
        ]
      : [];
  if (options.dryRun) {
    const code = first.summary.blocked === 0 && first.refusals.length === 0 ? 0 : 1;
    reporter.end(
      [
        ...nothingSelected(first),
        first.summary.blocked > 0 || first.refusals.length > 0
          ? "dry run: nothing was changed; the blocked objects above would not move."
          : "dry run: nothing was changed.",
      ],
      { code, dryRun: true, ...first.summary },
    );
    return { ...result, code };
  }
  if (first.refusals.length > 0) {
    reporter.end(["nothing was changed."], { code: result.code, ...first.summary, refused: first.refusals });
    return result;
  }

  /**
   * `flippedAt`: the flip as the API server dated it (managedFields), against which the controller's Events are
   * judged — the run's clock is a guess of the cluster's (the CLI's, from a Date header, to half a second) or
   * this machine's; undefined when unknown (then `since`).
   */
  const tracked = new Map<string, Tracked>();
  const leftOpen: Array<{ kind: HandoverKind; name: string }> = [];
  let stopping = false;
  let abandoned = false;
  let wave = 0;
  let group = "";
  let dirty = true;
  let wakeUp: (() => void) | undefined;
  const changed = () => {
    dirty = true;
    wakeUp?.();
  };
  const unsubscribe = deps.subscribe(changed);
  const stopInterrupts = deps.onInterrupt(() => {
    if (!result.interrupted) {
      stopping = true;
      result.interrupted = true;
      reporter.event({
        event: "interrupted",
        message: `interrupted: starting no more flips; waiting for ${tracked.size} open handover${tracked.size === 1 ? "" : "s"} (Ctrl-C again to leave ${tracked.size === 1 ? "it" : "them"} to the controllers)`,
      });
    } else {
      abandoned = true;
      reporter.event({
        event: "interrupted",
        message: `interrupted again: leaving ${tracked.size} open handover${tracked.size === 1 ? "" : "s"} to the controllers`,
      });
    }
    changed();
  });
  /**
   * `since`, on the run's clock: now for a flip of this run; for a handover found open, when its spec was
   * written (the API server's time of the flip; now if later, or unknown).
   */
  const track = (kind: HandoverKind, name: string, flippedAt: number | undefined, found: boolean) => {
    const now = clock.now();
    const since = found ? Math.min(now, flippedAt ?? now) : now;
    tracked.set(itemKey({ kind, name }), {
      kind,
      name,
      watch: { target: options.target, since, specSeen: false },
      flippedAt,
    });
  };
  /**
   * Handovers found open: their flips are read from the API server, as the watched view keeps no managedFields
   * (timed from now instead, a MigrationBlocked Event recorded before the run would not count, and the run
   * would wait out --timeout and say Stuck).
   */
  const trackFound = async (items: readonly PlanItem[]): Promise<void> => {
    const flips = await readInBatches(items, (i) =>
      deps.read(i.kind, i.name).then(flipTimeOf, () => undefined),
    );
    for (const [n, i] of items.entries()) track(i.kind, i.name, flips[n], true);
  };

  /**
   * For a stuck handover that never began: what the planner sees keeping it from beginning, as the controller's
   * Event said — an Event may have expired (kube-apiserver's --event-ttl, an hour by default) or never come.
   */
  const notBegun = (fresh: MigrationPlan, key: string): string => {
    const item = fresh.items.find((i) => itemKey(i) === key);
    const blockers = item?.state === "open" ? (item.notBegun ?? []) : [];
    return blockers.length > 0 ? `; it has not begun: ${blockers.map((b) => b.message).join("; ")}` : "";
  };

  /** What the controller last reported about a stuck handover (decision 156); a failed read is said, not thrown. */
  const lastWord = (kind: HandoverKind, name: string, since: number, now: number): Promise<string> =>
    deps.events(kind, name).then(
      (events) => lastReport(events, since, now),
      (e: unknown) => `; the controller's Events about it could not be read: ${errorText(e)}`,
    );

  /** Since when a handover's Events count: its flip as the API server dated it, less the clocks' slack. */
  const countsFrom = (t: Tracked): number => (t.flippedAt ?? t.watch.since) - EVENT_CLOCK_SLACK_MS;

  const judge = async (): Promise<void> => {
    if (tracked.size === 0) return;
    /** Planned once per judgement, and only when a handover is stuck. */
    let replanned: MigrationPlan | undefined;
    /** Stuck with nothing the plan sees: reported with the controller's last word, read after the loop. */
    const unexplained: { t: Tracked; message: string }[] = [];
    const now = clock.now();
    const blocked = blockedEvents(store, ns);
    let ended = false;
    for (const [key, t] of tracked) {
      const mapi = store.get(mapiType(t.kind), ns, t.name);
      const twin = store.get(capiType(t.kind), options.capiNamespace, t.name);
      if (specAuthority(mapi) === options.target) t.watch.specSeen = true;
      const synced = conditionOf(mapi, "Synchronized");
      if (synced?.status === "False") t.watch.synchronizedFalseSince ??= now;
      else delete t.watch.synchronizedFalseSince;
      const event = blocked.get(key);
      if (event && event.at >= countsFrom(t)) t.watch.blockedEvent = event.message;
      const outcome: HandoverOutcome = judgeHandover(mapi, twin, t.watch, now, options.timeoutMs);
      if (outcome.outcome === "running") continue;
      tracked.delete(key);
      ended = true;
      if (outcome.outcome === "complete") {
        result.moved++;
        counts.done++;
        reporter.event({
          event: "completed",
          kind: t.kind,
          name: t.name,
          seconds: Math.round((now - t.watch.since) / 100) / 10,
        });
        continue;
      }
      // SPEC §12's stop conditions do not list a deletion: the object is reported gone and the run goes on
      // (decision 185). The controllers end a handover hit by a delete (§3.5).
      if (outcome.reason === "Gone") {
        reporter.event({ event: "gone", kind: t.kind, name: t.name, message: outcome.message });
        continue;
      }
      result.failures++;
      stopping = true;
      // At its target the object has moved: what failed is its sync, and nothing is left open (decision 184).
      if (outcome.completed) {
        result.moved++;
        counts.done++;
      } else if (outcome.reason !== "Cancelled") leftOpen.push({ kind: t.kind, name: t.name });
      let message = outcome.message;
      if (outcome.reason === "Stuck") {
        replanned ??= plan();
        const why = notBegun(replanned, key);
        if (!why) {
          unexplained.push({ t, message });
          continue;
        }
        message += why;
      }
      reporter.event({ event: "failed", kind: t.kind, name: t.name, reason: outcome.reason, message });
    }
    // A resumed run may find hundreds stuck at once: their Events are read as their flips were, in batches.
    const words = await readInBatches(unexplained, ({ t }) => lastWord(t.kind, t.name, countsFrom(t), now));
    for (const [n, { t, message }] of unexplained.entries())
      reporter.event({
        event: "failed",
        kind: t.kind,
        name: t.name,
        reason: "Stuck",
        message: message + words[n],
      });
    if (ended) progress();
  };

  /** The next time a judgement can change without a watch event: a timeout or the Synchronized=False grace. */
  const nextDeadline = (): number | undefined => {
    const grace = Math.min(SYNCHRONIZED_FALSE_GRACE_MS, options.timeoutMs);
    const times = [...tracked.values()].flatMap(({ watch }) => [
      watch.since + options.timeoutMs,
      ...(watch.synchronizedFalseSince !== undefined ? [watch.synchronizedFalseSince + grace] : []),
    ]);
    return times.length > 0 ? times.reduce((a, b) => Math.min(a, b)) : undefined;
  };

  const waitForChange = async (until?: number): Promise<void> => {
    if (dirty) return;
    const deadline = until ?? nextDeadline();
    await new Promise<void>((resolve) => {
      const timer = deadline === undefined ? undefined : clock.setTimeout(resolve, deadline - clock.now());
      wakeUp = () => {
        timer?.cancel();
        resolve();
      };
    });
    wakeUp = undefined;
  };

  /** The last plan's counts, plus what completed since: the live line needs no re-plan per event. */
  let counts = { done: first.summary.done, objects: first.summary.objects, blocked: first.summary.blocked };
  const progress = (current?: MigrationPlan) => {
    if (current)
      counts = {
        done: current.summary.done,
        objects: current.summary.objects,
        blocked: current.summary.blocked,
      };
    reporter.progress({ wave, group, ...counts, inFlight: tracked.size });
  };

  let idleSince: number | undefined;
  await trackFound(first.items.filter((i) => i.state === "open"));
  try {
    for (;;) {
      dirty = false;
      await judge();
      if (abandoned) {
        // One whose status already is the target has nothing left to cancel (decision 184).
        for (const t of tracked.values())
          if (statusAuthorityReading(store.get(mapiType(t.kind), ns, t.name)) !== options.target)
            leftOpen.push({ kind: t.kind, name: t.name });
        tracked.clear();
        break;
      }
      if (tracked.size === 0) {
        if (stopping) break;
        const current = plan();
        const open = current.items.filter((i) => i.state === "open");
        if (open.length > 0) {
          // Someone (or a refused cancel) left a handover open since the last look: wait for it too.
          await trackFound(open);
          progress(current);
          continue;
        }
        const next = current.waves[0];
        if (!next || next.length === 0) {
          // Objects that only wait on the controllers (a sync, a provisioning) may become ready in a moment,
          // e.g. the members of a MachineSet that has just moved: give them a bounded while, on watches.
          idleSince ??= clock.now();
          const settleUntil = idleSince + SETTLE_MS;
          if (current.items.some(waitsOnControllers) && clock.now() < settleUntil) {
            await waitForChange(settleUntil);
            continue;
          }
          break;
        }
        idleSince = undefined;
        wave++;
        // By key, not a search of the fleet per object of the wave (decision 146).
        const byKey = new Map(current.items.map((i) => [itemKey(i), i]));
        const items = next.map((key) => byKey.get(key)!);
        group = items[0]!.group;
        reporter.event({ event: "wave", wave, group, objects: next });
        for (const item of items) {
          if (stopping) break;
          try {
            const written = await deps.flip(item.kind, item.name, options.target);
            track(item.kind, item.name, flipTimeOf(written), false);
            reporter.event({ event: "flipped", kind: item.kind, name: item.name, wave });
          } catch (e) {
            result.failures++;
            stopping = true;
            reporter.event({ event: "refused", kind: item.kind, name: item.name, message: errorText(e) });
          }
        }
        progress(current);
        continue;
      }
      await waitForChange();
    }
  } finally {
    unsubscribe();
    stopInterrupts();
  }

  const last = plan();
  const allDone = last.summary.done === last.summary.objects;
  result.code = allDone && result.failures === 0 && !result.interrupted ? 0 : 1;
  const lines = [
    ...nothingSelected(last),
    `${result.code === 0 ? "done" : "stopped"}: moved ${result.moved} object${result.moved === 1 ? "" : "s"} to ${options.target} in this run; ${planSummaryLine(last)}`,
  ];
  const blocked = last.items.filter((i) => i.state === "blocked");
  if (blocked.length > 0)
    lines.push(
      `${blocked.length} blocked: ${blocked.map((i) => `${i.kind} ${ns}/${i.name}`).join(", ")} (migrate --dry-run or preflight says why)`,
    );
  appendAll(lines, resolutionLines(leftOpen, ns, options.target));
  if (result.code !== 0 && leftOpen.length === 0 && !allDone)
    lines.push(
      `Run migrate --to ${options.target} again once the cause is fixed: it continues where this run stopped.`,
    );
  reporter.end(lines, {
    code: result.code,
    moved: result.moved,
    failures: result.failures,
    interrupted: result.interrupted,
    leftOpen: leftOpen.map(itemKey),
    ...last.summary,
  });
  return result;
}
