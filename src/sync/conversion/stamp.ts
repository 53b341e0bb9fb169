/**
 * Status mirroring in two steps, so the part that reads objects can be remembered while the clock moves on:
 * an unstamped conversion (pure in its objects, no clock) leaves `lastTransitionTime` off the conditions
 * whose status changed or that are new and names where they are; `stampNow` puts `now` there. A mirrored
 * status is exactly `stampNow(unstamped, now)`: nothing else in it depends on the clock. The converters of
 * status.ts are written as that composition, so a memo of the unstamped step (src/sync/converter.ts) returns
 * what they return by construction.
 */
import { cloneJson } from "../../json-text.js";
import { isRecord } from "../../kube/object.js";

/** Keys from a result's root to one condition object that is to carry `lastTransitionTime: now`. */
export type StampPath = readonly (string | number)[];

export interface Unstamped<T> {
  /** The result with `lastTransitionTime` absent on the objects `stamps` name (the other keys in place). */
  readonly result: T;
  readonly stamps: readonly StampPath[];
}

/** A result that needs no clock. */
export const unstamped = <T>(result: T, stamps: readonly StampPath[] = []): Unstamped<T> => ({
  result,
  stamps,
});

const setAlong = (node: unknown, path: StampPath, at: number, now: string): unknown => {
  if (at === path.length) return { ...(node as Record<string, unknown>), lastTransitionTime: now };
  const key = path[at] as string | number;
  if (Array.isArray(node)) {
    const copy = [...node];
    copy[key as number] = setAlong(node[key as number], path, at + 1, now);
    return copy;
  }
  if (!isRecord(node)) throw new Error(`stamp path ${JSON.stringify(path)} leaves the result at ${at}`);
  return { ...node, [key]: setAlong(node[key], path, at + 1, now) };
};

/**
 * `u.result` with `lastTransitionTime: now` appended to every object a stamp names. Only the objects on those
 * paths are copied; the rest is shared with `u.result` (which may be a remembered, frozen result), and with no
 * stamps `u.result` itself is returned. Appending keeps the key order a converter writing `{ ...c, now }`
 * would produce, so serialised results are byte-identical too.
 */
export const stampNow = <T>(u: Unstamped<T>, now: string): T => {
  let result: unknown = u.result;
  for (const path of u.stamps) result = setAlong(result, path, 0, now);
  return result as T;
};

/**
 * A produced condition's lastTransitionTime: the one it had while its status is unchanged, else "stamp it"
 * (undefined), the rule of SPEC §5.4 every mirrored condition follows.
 */
export const keptTransitionTime = (
  before: Record<string, unknown> | undefined,
  status: unknown,
): string | undefined =>
  before !== undefined && before.status === status && typeof before.lastTransitionTime === "string"
    ? before.lastTransitionTime
    : undefined;

/** A copy of a kept condition: spread when its values are all scalars, as conditions are; else a deep copy. */
const copyCondition = (c: Record<string, unknown>): Record<string, unknown> => {
  for (const key in c) {
    const v = c[key];
    if (typeof v === "object" && v !== null) return cloneJson(c);
  }
  return { ...c };
};

/**
 * The conditions already in `holder.conditions` (a status or a providerStatus), as copies. A mirrored status
 * keeps the conditions it does not produce, and holds copies of them rather than the cached object's own:
 * the sync's memoising converter freezes what it hands out without walking its inputs (src/sync/converter.ts),
 * so a converted result must share no object with them.
 */
export const keptConditions = (holder: unknown): Record<string, unknown>[] =>
  isRecord(holder) && Array.isArray(holder.conditions)
    ? holder.conditions.filter(isRecord).map(copyCondition)
    : [];
