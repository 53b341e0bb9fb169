/**
 * The controller loop (controller-runtime semantics, SPEC §7): `reconcile(key)` returns
 * `{ requeueAfterMs? }` or throws; the runtime owns queueing, dedup, per-key backoff, terminal errors,
 * workers, metrics and logs, so controllers contain only their reconcile logic. Watches map informer
 * events to keys with small pure mappers (own name, twin by name, owner reference, label). A controller can
 * be started and stopped repeatedly (leadership comes and goes); each start gets a fresh queue, runs no worker
 * while a reconcile of an earlier start still runs (a key is never processed concurrently), waits until
 * every watched informer has applied a list begun after the start (SPEC §3.5: a standby's cache is as old as
 * its last event), and then replays every watched object once, as controller-runtime does on its initial list.
 */
import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import { childLogger } from "../logging.js";
import type { Clock } from "./clock.js";
import { ConflictError } from "./errors.js";
import type { Informer } from "./informer.js";
import type { RuntimeMetrics } from "./metrics.js";
import type { KubeObject } from "./object.js";
import { labelsOf, nameOf, ownerReferencesOf, statusOnlyChange } from "./object.js";
import type { WorkQueue } from "./workqueue.js";
import { createWorkQueue } from "./workqueue.js";

export interface ReconcileResult {
  /** Reconcile this key again after this long even if nothing changes (success resets its backoff). */
  requeueAfterMs?: number;
}

export interface ReconcileContext {
  logger: Logger;
  /** Aborted when the controller stops (e.g. leadership lost): stop before the next write. */
  signal: AbortSignal;
}

export type Reconciler = (
  key: string,
  context: ReconcileContext,
  // biome-ignore lint/suspicious/noConfusingVoidType: a reconciler with nothing to requeue just returns
) => Promise<ReconcileResult | undefined | void>;

/** An error that retrying cannot fix (bad input, unsupported platform): logged and counted, never retried. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TerminalError";
  }
}

/** Maps one object to the keys of the controller's queue it concerns. */
export type KeyMapper = (object: KubeObject) => readonly string[];

/** The object's own name: controllers keyed by name (SPEC §4), which also covers the twin in the other namespace. */
export const byName: KeyMapper = (o) => (nameOf(o) ? [nameOf(o)] : []);
/** The names of the object's owners of `kind` (and `apiVersion` when given). */
export const byOwner =
  (kind: string, apiVersion?: string): KeyMapper =>
  (o) =>
    ownerReferencesOf(o)
      .filter((r) => r.kind === kind && (apiVersion === undefined || r.apiVersion === apiVersion))
      .map((r) => r.name);
/** The value of label `key`, when set. */
export const byLabel =
  (key: string): KeyMapper =>
  (o) => {
    const v = labelsOf(o)[key];
    return v ? [v] : [];
  };
/** Every key any of `mappers` yields, once. */
export const anyOf =
  (...mappers: KeyMapper[]): KeyMapper =>
  (o) => [...new Set(mappers.flatMap((m) => m(o)))];

/**
 * What an update must change to concern a watch (controller-runtime's update predicate): an update for which
 * `updateConcerns` answers false maps to no key. Adds, deletes and the replay at start always map — a
 * predicate never hides that an object came or went.
 */
export interface WatchOptions {
  updateConcerns?: (before: KubeObject, after: KubeObject) => boolean;
}

/** For watches of objects whose status the reconcile never reads: a status-only update concerns nobody. */
export const beyondStatus: WatchOptions = {
  updateConcerns: (before, after) => !statusOnlyChange(before, after),
};

export type ReconcileOutcome = "success" | "error" | "requeue_after" | "terminal_error";

/**
 * controller-runtime's accounting: a terminal error is an error (`result="error"`, counted in
 * `reconcile_errors_total`) that is also counted in `terminal_reconcile_errors_total` and not retried.
 */
const countOutcome = (metrics: RuntimeMetrics, controller: string, outcome: ReconcileOutcome): void => {
  const terminal = outcome === "terminal_error";
  metrics.reconcileTotal.inc({ controller, result: terminal ? "error" : outcome });
  if (terminal || outcome === "error") metrics.reconcileErrors.inc({ controller });
  if (terminal) metrics.terminalReconcileErrors.inc({ controller });
};

/** Series a dashboard expects from the start, as controller-runtime creates them when a controller starts. */
const initialiseSeries = (metrics: RuntimeMetrics, controller: string, workers: number): void => {
  for (const result of ["success", "error", "requeue_after"])
    metrics.reconcileTotal.inc({ controller, result }, 0);
  metrics.reconcileErrors.inc({ controller }, 0);
  metrics.terminalReconcileErrors.inc({ controller }, 0);
  metrics.activeWorkers.set({ controller }, 0);
  metrics.maxConcurrentReconciles.set({ controller }, workers);
};

export interface ControllerOptions {
  name: string;
  reconcile: Reconciler;
  clock: Clock;
  logger: Logger;
  metrics?: RuntimeMetrics;
  /** Keys processed in parallel (never the same key twice at once). Default 1. */
  workers?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export interface Controller {
  readonly name: string;
  /** Maps every add/update/delete of `informer` to keys (updates as `options` say). Register before `start`. */
  watch(informer: Informer, mapper: KeyMapper, options?: WatchOptions): void;
  enqueue(key: string): void;
  enqueueAfter(key: string, delayMs: number): void;
  /**
   * Waits until every watched informer has applied a list begun after this call (before an informer's first
   * sync, that first list) and until every reconcile of an earlier start has returned, replays their objects,
   * then runs the workers. Resolves without running when
   * `stop` comes first; rejects, leaving the controller stopped, when an informer stops first.
   */
  start(): Promise<void>;
  /**
   * Stops handing out keys at once and resolves when every in-flight reconcile has returned — those of earlier
   * starts too, which a start waits for before running any worker.
   */
  stop(): Promise<void>;
  isRunning(): boolean;
  /** The current queue (a new one per start); undefined while stopped. */
  queue(): WorkQueue | undefined;
}

export function createController(options: ControllerOptions): Controller {
  const { name, clock, metrics } = options;
  const logger = childLogger(options.logger, name);
  const watches: { informer: Informer; mapper: KeyMapper }[] = [];
  let queue: WorkQueue | undefined;
  let abort: AbortController | undefined;
  let starting: Promise<void> | undefined;
  // Every start's workers until they have all returned: a stopped batch may still be reconciling when
  // leadership comes back, and a key must never be processed by two batches at once (SPEC §7).
  const batches = new Set<Promise<void>>();
  /** Resolves once every batch running now (started or stopped) has returned; a later start runs none before. */
  const drainedNow = async (): Promise<void> => {
    await Promise.all([...batches]);
  };

  const enqueueAll = (keys: readonly string[]): void => {
    for (const k of keys) queue?.add(k);
  };

  const processOne = async (q: WorkQueue, key: string, signal: AbortSignal): Promise<void> => {
    const log = logger.child({ key });
    const startedAt = clock.now();
    let outcome: ReconcileOutcome;
    metrics?.activeWorkers.inc({ controller: name });
    try {
      const result = await options.reconcile(key, { logger: log, signal });
      q.forget(key);
      if (result && result.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
        q.addAfter(key, result.requeueAfterMs);
        outcome = "requeue_after";
      } else outcome = "success";
      log.debug({ outcome }, "reconciled");
    } catch (e) {
      if (e instanceof TerminalError) {
        q.forget(key);
        outcome = "terminal_error";
        log.error({ err: e.message }, "reconcile failed permanently; not retrying");
      } else {
        q.addRateLimited(key);
        outcome = "error";
        const retries = q.numRequeues(key);
        // A conflict is the write discipline working (someone wrote first): worth a line, not an alarm.
        if (e instanceof ConflictError) log.info({ err: e.message, retries }, "conflict; requeued");
        else
          log.error(
            { err: e instanceof Error ? e.message : String(e), retries },
            "reconcile failed; backing off",
          );
      }
    } finally {
      metrics?.activeWorkers.dec({ controller: name });
      metrics?.reconcileTime.observe({ controller: name }, (clock.now() - startedAt) / 1000);
    }
    if (metrics) countOutcome(metrics, name, outcome);
  };

  const worker = async (q: WorkQueue, signal: AbortSignal): Promise<void> => {
    for (;;) {
      const key = await q.get();
      if (key === undefined) return;
      try {
        await processOne(q, key, signal);
      } finally {
        q.done(key);
      }
    }
  };

  const self: Controller = {
    name,
    watch(informer, mapper, options = {}) {
      watches.push({ informer, mapper });
      const { updateConcerns } = options;
      informer.addHandlers({
        onAdd: (o) => enqueueAll(mapper(o)),
        onUpdate: (before, after) => {
          if (updateConcerns && !updateConcerns(before, after)) return;
          enqueueAll([...mapper(before), ...mapper(after)]);
        },
        onDelete: (o) => enqueueAll(mapper(o)),
      });
    },
    enqueue: (key) => queue?.add(key),
    enqueueAfter: (key, delayMs) => queue?.addAfter(key, delayMs),
    async start() {
      if (queue) return starting;
      const q = createWorkQueue({
        name,
        clock,
        ...(metrics ? { metrics } : {}),
        ...(options.baseDelayMs !== undefined ? { baseDelayMs: options.baseDelayMs } : {}),
        ...(options.maxDelayMs !== undefined ? { maxDelayMs: options.maxDelayMs } : {}),
      });
      const a = new AbortController();
      // Every request of every worker listens on this signal (decision 198): a few workers' parallel live reads
      // pass Node's default of 10 listeners, which is not a leak (each request removes its own when it returns).
      setMaxListeners(0, a.signal);
      queue = q;
      abort = a;
      // The queue takes events from now on; nothing is handed out before the workers start.
      const attempt = (async () => {
        const startedAt = clock.now();
        const informers = [...new Set(watches.map((w) => w.informer))];
        // Called in this turn for every informer: controllers started together share each informer's list.
        const caughtUp = Promise.all(informers.map((i) => i.freshList()));
        // The previous start's workers, stopped with leadership, may still be reconciling: none of this
        // start's runs before they have all returned (a key is never processed concurrently).
        const previous = drainedNow();
        const calledOff = new Promise<void>((resolve) => a.signal.addEventListener("abort", () => resolve()));
        try {
          await Promise.race([Promise.all([caughtUp, previous]), calledOff]);
        } catch (e) {
          if (a.signal.aborted) return;
          if (queue === q) {
            queue = undefined;
            abort = undefined;
          }
          q.shutdown();
          throw e;
        }
        // A stop during the wait: this start is called off (a later start waits for its own lists).
        if (a.signal.aborted) return;
        logger.info(
          {
            informers: informers.length,
            objects: informers.reduce((sum, i) => sum + i.list().length, 0),
            waitedMs: clock.now() - startedAt,
          },
          "caught up with a fresh list",
        );
        for (const w of watches) for (const o of w.informer.list()) for (const k of w.mapper(o)) q.add(k);
        const count = Math.max(1, options.workers ?? 1);
        if (metrics) initialiseSeries(metrics, name, count);
        const batch = Promise.all(Array.from({ length: count }, () => worker(q, a.signal))).then(
          () => undefined,
        );
        batches.add(batch);
        const forget = (): void => void batches.delete(batch);
        batch.then(forget, forget);
        logger.info({ workers: count }, "controller started");
      })();
      starting = attempt;
      try {
        await attempt;
      } finally {
        if (starting === attempt) starting = undefined;
      }
    },
    async stop() {
      const q = queue;
      if (q) {
        abort?.abort();
        q.shutdown();
        queue = undefined;
      }
      // Every batch still running, this start's and any earlier one a restart was waiting on; none can begin
      // after this line (a pending start was called off above).
      await drainedNow();
      if (q) logger.info("controller stopped");
    },
    isRunning: () => queue !== undefined,
    queue: () => queue,
  };
  return self;
}
