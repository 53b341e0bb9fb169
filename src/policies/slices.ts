/**
 * Deciding a large review in slices (SPEC §2.1, decision 74): the walks over a review's objects that can be
 * long — `changedPaths`, `sameJson`, `keyChanges` — are generators that yield every `STEP_NODES` nodes, and
 * `decideInSlices` runs a whole decision with a budget of steps. When the budget is spent the walk in
 * progress keeps its state and the decision is abandoned (`SLICE_SPENT` is thrown through the engine); the
 * next slice runs the decision again from the start, and every walk it meets again — the same walk of the
 * same values, met in the same order, as a pure decision does — resumes where it stopped or answers its
 * remembered result. The last slice is a whole decision on its own, so its Decision is exactly the one-shot
 * one. Only the shell decides when a slice runs (src/server, with `setImmediate` between them); nothing here
 * knows about time or the event loop.
 *
 * Outside `decideInSlices` every walk runs to its end at once, as before. The one piece of module state, the
 * decision in progress, is set only for the duration of one synchronous slice and always restored.
 */

/** Nodes a walk handles between two yields: each yield is one step of a slice's budget. */
export const STEP_NODES = 1024;
/** Steps per slice: ~16 K nodes, a millisecond or two of walking on this machine. */
export const SLICE_STEPS = 16;

/** Thrown through a decision when its slice's budget is spent; only `decideInSlices` catches it. */
export const SLICE_SPENT: unique symbol = Symbol("slice spent");

interface Job {
  readonly kind: string;
  readonly args: readonly unknown[];
  steps: Generator<void, unknown> | undefined;
  done: boolean;
  result: unknown;
}

/**
 * Walks replaced by a different one at their place before the decision stops slicing: a rule that built
 * fresh nested values on every run would otherwise restart its walk forever.
 */
const MAX_REPLACED = 8;

class Slicing {
  readonly jobs: Job[] = [];
  cursor = 0;
  stepsLeft = 0;
  replaced = 0;
}

let current: Slicing | undefined;

/** Whether a decision is being run in slices (the fast paths then bound their work). */
export const slicing = (): boolean => current !== undefined;

/** Runs a generator to its end. */
export function runToEnd<T>(steps: Generator<void, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/**
 * The same value for this purpose: identical, or an array/object holding identical items (a rule that
 * filters or copies a list or map before comparing it builds a new one on every run of the decision).
 */
function sameArgument(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const key of keys) if (!Object.hasOwn(y, key) || x[key] !== y[key]) return false;
  return true;
}

const sameArguments = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((v, i) => sameArgument(v, b[i]));

/** This run's `cursor`-th walk if it is the same walk of the same values, else a fresh one in its place. */
function claim(s: Slicing, kind: string, args: readonly unknown[]): Job {
  const at = s.cursor++;
  const known = s.jobs[at];
  if (known && known.kind === kind && sameArguments(known.args, args)) return known;
  // A different walk here (the cluster view changed between slices): what followed is not reused either.
  if (known) s.replaced++;
  s.jobs.length = at;
  const job: Job = { kind, args, steps: undefined, done: false, result: undefined };
  s.jobs.push(job);
  return job;
}

/**
 * `steps()` run to its end — at once outside a sliced decision; within one, for as many steps as the slice
 * has left, resuming on the next slice. `kind` and `args` name the walk: equal on a later run, the same walk.
 */
export function stepped<T>(kind: string, args: readonly unknown[], steps: () => Generator<void, T>): T {
  const s = current;
  if (!s) return runToEnd(steps());
  const job = claim(s, kind, args);
  if (job.done) return job.result as T;
  job.steps ??= steps();
  while (s.stepsLeft > 0) {
    const next = job.steps.next();
    if (next.done) {
      job.done = true;
      job.result = next.value;
      job.steps = undefined;
      return next.value as T;
    }
    s.stepsLeft--;
  }
  throw SLICE_SPENT;
}

/**
 * `compute()`, computed once per sliced decision: a linear pass that has no steps of its own, which later
 * runs of the decision would otherwise repeat on every slice.
 */
export function remembered<T>(kind: string, args: readonly unknown[], compute: () => T): T {
  const s = current;
  if (!s) return compute();
  const job = claim(s, kind, args);
  if (!job.done) {
    job.result = compute();
    job.done = true;
  }
  return job.result as T;
}

/** One decision run in slices: `next()` runs one slice and returns the result, or undefined if not yet. */
export interface SlicedDecision<T> {
  next(): T | undefined;
}

/**
 * Runs `decideOnce` (a pure decision, the same call every time) in slices of `sliceSteps` steps. A slice
 * that finishes the decision returns its result; anything it throws but `SLICE_SPENT` is thrown as it is.
 */
export function decideInSlices<T>(decideOnce: () => T, sliceSteps = SLICE_STEPS): SlicedDecision<T> {
  const state = new Slicing();
  return {
    next(): T | undefined {
      const outer = current;
      current = state;
      state.cursor = 0;
      state.stepsLeft = state.replaced > MAX_REPLACED ? Number.POSITIVE_INFINITY : sliceSteps;
      try {
        return decideOnce();
      } catch (error) {
        if (error === SLICE_SPENT) return undefined;
        throw error;
      } finally {
        current = outer;
      }
    },
  };
}
