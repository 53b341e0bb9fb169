/**
 * Time as a dependency. Every piece of the runtime that waits (work queue delays, watch backoff, silence
 * watchdog, lease renewal) asks a `Clock`, so tests drive time with `createManualClock` instead of
 * sleeping. Nothing here knows about Kubernetes.
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch: wall time, which NTP or a resumed VM can step either way. */
  now(): number;
  /**
   * Milliseconds on a clock no wall-clock step moves (`performance.now()`), for timing how long something
   * lasted — a Lease's expiry, as client-go times it on Go's monotonic reading. Only differences mean anything.
   * A clock without one is timed on `now`.
   */
  monotonic?(): number;
  /** Runs `fn` after `ms`; the handle cancels it. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn: () => void, ms: number): TimerHandle => {
    const t = setTimeout(fn, Math.max(0, ms));
    // A pending retry must never keep a process alive that is otherwise done.
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
});

/** Resolves after `ms` on `clock`, or at once (with `false`) when `signal` aborts. */
export const sleep = (clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = (): void => {
      handle.cancel();
      resolve(false);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

export interface ManualClock extends Clock {
  /** Moves with `now` (time moves only by `advance`). */
  monotonic(): number;
  /** Moves time forward, firing due timers in order and letting promises settle between them. */
  advance(ms: number): Promise<void>;
  /** Number of timers not yet fired or cancelled. */
  pending(): number;
}

/** Lets every already-queued promise continuation and I/O callback run. */
export const flushMicrotasks = async (rounds = 5): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
};

/** A clock for tests: time moves only when `advance` is called. */
export function createManualClock(start = 1_700_000_000_000): ManualClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    monotonic: () => now,
    setTimeout(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return { cancel: () => void timers.delete(id) };
    },
    async advance(ms) {
      const target = now + ms;
      await flushMicrotasks();
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers)
          if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
        if (!next) break;
        timers.delete(next[0]);
        now = Math.max(now, next[1].at);
        next[1].fn();
        await flushMicrotasks();
      }
      now = target;
      await flushMicrotasks();
    },
    pending: () => timers.size,
  };
}
