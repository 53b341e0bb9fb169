/**
 * The cluster's clock, as its API server's answers tell it: each answer's `Date` header (RFC 9110: whole
 * seconds). The admin commands run on a person's machine, whose clock may be minutes off the cluster's, and
 * judge times the cluster wrote — a Lease's `renewTime`, on the leader's clock — against it: a clock ahead
 * would see the product's held Lease as expired, one behind would see an expired Lease as held (client-go's
 * leader election avoids the same skew by timing what it observed, which a one-shot command cannot).
 *
 * The offset is taken from the first answer with a `Date` and kept, so the clock this gives never jumps back
 * by the header's rounding in the middle of a run. Until an answer is seen it is this machine's clock.
 */
import type { Clock } from "./clock.js";
import type { RestClientResponse } from "./metrics.js";

/**
 * How far the cluster's clock is ahead of this one (negative: behind), from a `Date` header received at
 * `receivedAt` on this clock: the header's second is taken at its middle, so the error is at most half a
 * second plus the answer's time in flight. Undefined for a missing or unreadable header.
 */
export function dateOffsetMs(date: string | undefined, receivedAt: number): number | undefined {
  if (date === undefined) return undefined;
  const at = Date.parse(date);
  return Number.isNaN(at) ? undefined : at + 500 - receivedAt;
}

export interface ClusterClock extends Clock {
  /** Told of each answer: a transport's `onResponse`. */
  observe(response: RestClientResponse): void;
  /** The offset in use, once an answer carried a `Date`; undefined before. */
  offsetMs(): number | undefined;
}

/** `local` moved by the cluster's offset; its timers are `local`'s (a duration is the same on both). */
export function clusterClock(local: Clock): ClusterClock {
  let offset: number | undefined;
  return {
    observe(response) {
      offset ??= dateOffsetMs(response.date, local.now());
    },
    offsetMs: () => offset,
    now: () => local.now() + (offset ?? 0),
    setTimeout: (fn, ms) => local.setTimeout(fn, ms),
  };
}

/** Below this a skew is within what the Date header can tell (its second, the answer's time in flight). */
export const CLOCK_SKEW_NOTE_MS = 10_000;

/**
 * A line for a command's report when this machine's clock is off the cluster's by `CLOCK_SKEW_NOTE_MS` or more
 * (`offsetMs`: the cluster's clock ahead of this one), so a person whose Lease judgement surprised them sees why.
 */
export function clockSkewNote(offsetMs: number | undefined): string | undefined {
  if (offsetMs === undefined || Math.abs(offsetMs) < CLOCK_SKEW_NOTE_MS) return undefined;
  const seconds = Math.round(Math.abs(offsetMs) / 1000);
  return `note: this machine's clock is ${seconds} s ${offsetMs > 0 ? "behind" : "ahead of"} the cluster's (its API server's Date header); the cluster's times were judged on the cluster's clock`;
}
