/**
 * A controller work queue with client-go semantics (SPEC §7): adding a key that is already queued does
 * nothing, and a waiting worker takes a key only in the event loop's next check phase, one worker per
 * turn, so the adds of one round of I/O coalesce (decision 103); a key being processed is never handed out
 * again until `done`, and if it was re-added meanwhile it is queued once more then; failures back off per
 * key exponentially (5 ms doubling, capped at 1000 s) until `forget` resets them; `addAfter` delays a key
 * (the earliest pending delay wins). Time comes from an injected `Clock`, so tests never sleep. It reports
 * client-go's work queue metrics (./metrics.ts): a key counts as waiting from the add that made it dirty
 * until a worker gets it.
 */
import type { Clock, TimerHandle } from "./clock.js";
import { queueMetrics, type RuntimeMetrics } from "./metrics.js";

export interface WorkQueueOptions {
  name: string;
  clock: Clock;
  baseDelayMs?: number;
  maxDelayMs?: number;
  metrics?: RuntimeMetrics;
}

const DEFAULT_BASE_DELAY_MS = 5;
const DEFAULT_MAX_DELAY_MS = 1_000_000;

/** Delay before the `failures`-th retry: base · 2^(failures-1), capped. */
export const retryDelay = (failures: number, baseMs: number, maxMs: number): number =>
  Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));

export interface WorkQueue {
  add(key: string): void;
  addAfter(key: string, delayMs: number): void;
  /** Re-adds after the key's next backoff delay and counts a retry. */
  addRateLimited(key: string): void;
  /** Resets the key's backoff (after a success or a terminal error). */
  forget(key: string): void;
  numRequeues(key: string): number;
  /** Next key to process, or undefined once shut down. */
  get(): Promise<string | undefined>;
  done(key: string): void;
  len(): number;
  /** Keys currently being processed. */
  processing(): readonly string[];
  shutdown(): void;
  isShutdown(): boolean;
}

export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const { clock, name } = options;
  const base = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const max = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const queue: string[] = [];
  const dirty = new Set<string>();
  const active = new Set<string>();
  const failures = new Map<string, number>();
  const delayed = new Map<string, { at: number; timer: TimerHandle }>();
  const waiters: ((key: string | undefined) => void)[] = [];
  let shuttingDown = false;

  const metrics = queueMetrics(options.metrics, name, clock);

  const take = (): string | undefined => {
    const key = queue.shift();
    if (key === undefined) return undefined;
    dirty.delete(key);
    active.add(key);
    metrics.started(key, dirty.size);
    return key;
  };

  // A waiting worker takes its key in the loop's next check phase (setImmediate), as client-go's worker
  // goroutine takes it after `Add` returns, and later: every add of the same key before then finds it still
  // queued and coalesces into one reconcile — an event's old and new object, the other events of one watch
  // chunk, and the events of one write arriving on other watch streams in the same round of I/O (each a turn
  // of its own). One waiter per check phase: each reconcile starts in a turn of its own, after the
  // process.nextTick callbacks that send the previous one's requests, so they reach the API server before
  // the next reconcile plans, not after every handed worker has (decision 103).
  let handing = false;
  const handToWaiter = (): void => {
    handing = false;
    if (waiters.length === 0 || queue.length === 0) return;
    const waiter = waiters.shift() as (key: string | undefined) => void;
    waiter(take());
    if (waiters.length > 0 && queue.length > 0) {
      handing = true;
      setImmediate(handToWaiter);
    }
  };
  const push = (key: string): void => {
    queue.push(key);
    if (waiters.length > 0 && !handing) {
      handing = true;
      setImmediate(handToWaiter);
    }
  };

  const self: WorkQueue = {
    add(key) {
      if (shuttingDown || dirty.has(key)) return;
      dirty.add(key);
      metrics.added(key, dirty.size);
      if (active.has(key)) return;
      push(key);
    },
    addAfter(key, delayMs) {
      if (shuttingDown) return;
      if (delayMs <= 0) return self.add(key);
      const at = clock.now() + delayMs;
      const pending = delayed.get(key);
      if (pending && pending.at <= at) return;
      pending?.timer.cancel();
      const timer = clock.setTimeout(() => {
        delayed.delete(key);
        self.add(key);
      }, delayMs);
      delayed.set(key, { at, timer });
    },
    addRateLimited(key) {
      const n = (failures.get(key) ?? 0) + 1;
      failures.set(key, n);
      metrics.retried();
      self.addAfter(key, retryDelay(n, base, max));
    },
    forget: (key) => void failures.delete(key),
    numRequeues: (key) => failures.get(key) ?? 0,
    get() {
      if (shuttingDown) return Promise.resolve(undefined);
      if (waiters.length === 0) {
        const key = take();
        if (key !== undefined) return Promise.resolve(key);
      }
      return new Promise((resolve) => waiters.push(resolve));
    },
    done(key) {
      active.delete(key);
      metrics.finished(key);
      if (dirty.has(key) && !shuttingDown) push(key);
    },
    len: () => queue.length,
    processing: () => [...active],
    shutdown() {
      shuttingDown = true;
      metrics.close();
      for (const d of delayed.values()) d.timer.cancel();
      delayed.clear();
      for (const w of waiters.splice(0)) w(undefined);
    },
    isShutdown: () => shuttingDown,
  };
  return self;
}
