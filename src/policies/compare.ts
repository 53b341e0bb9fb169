/**
 * Comparing JSON values and naming what changed, for the policies' messages: deep equality with `null` and a
 * missing key equal (as the API server's pruning makes them), how the keys of a labels/annotations map
 * changed, a bounded list of paths, and JSON that never throws. Like ./diff.ts (which names the changed
 * paths), every function here is linear in its input and safe at any depth (SPEC §2.1).
 */

import { absent, own, SHALLOW_DEPTH } from "./diff.js";
import { guardedChanges } from "./keys.js";
import { remembered, runToEnd, STEP_NODES, slicing, stepped } from "./slices.js";

/** Deep equality of JSON values, with `null` and missing object keys equal. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // In slices (a large review) no fast path: its recursion could not stop at a slice's end.
  if (slicing()) return stepped("sameJson", [a, b], () => deepSameJson(a, b));
  return shallowSameJson(a, b, 0) ?? runToEnd(deepSameJson(a, b));
}

/** `sameJson` by recursion, or undefined past SHALLOW_DEPTH (a difference found before that still counts). */
function shallowSameJson(a: unknown, b: unknown, depth: number): boolean | undefined {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null)
    return absent(a) && absent(b);
  if (depth === SHALLOW_DEPTH) return undefined;
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const items = a as unknown[];
    const others = b as unknown[];
    if (items.length !== others.length) return false;
    for (let i = 0; i < items.length; i++) {
      const same = shallowSameJson(items[i], others[i], depth + 1);
      if (same !== true) return same;
    }
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  // Every own key of either side once, as a union would, without building one.
  for (const key of Object.keys(x)) {
    const same = shallowSameJson(x[key], own(y, key), depth + 1);
    if (same !== true) return same;
  }
  for (const key of Object.keys(y)) if (!Object.hasOwn(x, key) && !absent(y[key])) return false;
  return true;
}

/** `sameJson` with an explicit stack, for any depth; yields every STEP_NODES values (./slices.ts). */
function* deepSameJson(a: unknown, b: unknown): Generator<void, boolean> {
  const left: unknown[] = [a];
  const right: unknown[] = [b];
  let sinceYield = 0;
  const step = (): boolean => {
    if (++sinceYield < STEP_NODES) return false;
    sinceYield = 0;
    return true;
  };
  while (left.length > 0) {
    if (step()) yield;
    const x = left.pop();
    const y = right.pop();
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) {
      if (absent(x) && absent(y)) continue;
      return false;
    }
    const isArray = Array.isArray(x);
    if (isArray !== Array.isArray(y)) return false;
    if (isArray) {
      const items = x as unknown[];
      const others = y as unknown[];
      if (items.length !== others.length) return false;
      for (let i = 0; i < items.length; i++) {
        left.push(items[i]);
        right.push(others[i]);
        if (step()) yield;
      }
      continue;
    }
    const p = x as Record<string, unknown>;
    const q = y as Record<string, unknown>;
    for (const key of Object.keys(p)) {
      left.push(p[key]);
      right.push(own(q, key));
      if (step()) yield;
    }
    for (const key of Object.keys(q)) {
      if (!Object.hasOwn(p, key) && !absent(q[key])) return false;
      if (step()) yield;
    }
  }
  return true;
}

export type KeyChange = "added" | "changed" | "removed";

const everyKey = (): boolean => true;

/**
 * How each key of a string map (labels, annotations) that `kept` keeps changed: the `SORTED_CHANGES` smallest
 * in key order, then the rest as met — all of them in key order when there are few, as sorting would give.
 * Linear in the maps (keys.ts `guardedChanges`, decision 61): only kept changes are ordered, and at most
 * `SORTED_CHANGES` of them sorted, so a review of thousands of changed keys is not a sort of them all.
 */
export function keyChanges(
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
  kept: (key: string) => boolean = everyKey,
): { key: string; change: KeyChange }[] {
  // Computed once per decision run in slices: later slices run the decision again (./slices.ts).
  return remembered("keyChanges", [before, after, kept], () =>
    guardedChanges(before, after, kept).map((key) => ({
      key,
      change: !Object.hasOwn(after, key) ? "removed" : Object.hasOwn(before, key) ? "changed" : "added",
    })),
  );
}

/**
 * A list of paths for a message: up to `max` of them, then how many more. A path met again (the changes
 * `changedPaths` names by their holder or by a cut path) is listed once and counted among the more.
 */
export function listPaths(paths: readonly string[], max = 8): string {
  const shown: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < paths.length && shown.length < max; i++) {
    const path = paths[i]!;
    if (seen.has(path)) continue;
    seen.add(path);
    shown.push(path);
  }
  const more = paths.length - shown.length;
  return more === 0 ? shown.join(", ") : `${shown.join(", ")} and ${more} more`;
}
