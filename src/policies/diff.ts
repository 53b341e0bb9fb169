/**
 * A small pure diff of two JSON values that names what changed as field paths, in one notation used by
 * every message: dots for plain field names (`spec.providerSpec.value.instanceType`), brackets with a JSON
 * string for label/annotation keys and any key with dots or slashes (`metadata.labels["machine.openshift.io/foo"]`),
 * `[i]` for array items. `null` and a missing key read the same, as they do for the API server's pruning.
 */
import { isRecord } from "../kube/object.js";

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;
/** Maps whose keys are data, not field names: always bracketed, so `metadata.labels["team"]` reads as a key. */
const KEYED_MAP = /(^|\.)(labels|annotations|matchLabels)$/;

/** Appends one segment to a path in the notation above. */
export const pathJoin = (base: string, key: string | number): string => {
  if (typeof key === "number") return `${base}[${key}]`;
  if (PLAIN_KEY.test(key) && !KEYED_MAP.test(base)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
};

/** Joins segments from the root: `pathOf(["metadata", "labels", "a/b"])` → `metadata.labels["a/b"]`. */
export const pathOf = (segments: readonly (string | number)[]): string => pathFrom("", segments);

const pathFrom = (base: string, segments: readonly (string | number)[]): string =>
  segments.reduce<string>((p, s) => pathJoin(p, s), base);

const absent = (v: unknown): boolean => v === undefined || v === null;

/**
 * Paths under `base` where `before` and `after` differ. A subtree that appears or disappears as a whole is
 * named once, at its root; arrays whose length changed are named as a whole (their items have no identity).
 */
export function changedPaths(before: unknown, after: unknown, base = ""): string[] {
  const walk: Walk = { base, segments: [], out: [] };
  walkValue(before, after, walk);
  return walk.out;
}

/**
 * One pass over both trees. Admission diffs whole specs where usually one field changed, so nothing is built
 * for a node that is equal: the path is a stack of segments turned into a string only for a change, and keys
 * are visited in the objects' own order, the changes of one object then put in key order only when more than
 * one key changed. The result is what naming every node and sorting every level's keys would give
 * (test/policies/diff.test.ts compares the two).
 */
interface Walk {
  readonly base: string;
  readonly segments: (string | number)[];
  readonly out: string[];
}

function walkValue(before: unknown, after: unknown, walk: Walk): void {
  if (before === after || (absent(before) && absent(after))) return;
  if (isRecord(before) && isRecord(after)) {
    const start = walk.out.length;
    // Keys that produced paths, and where their paths end in `out`; only built once a key produced some.
    let changedKeys: string[] | undefined;
    let ends: number[] | undefined;
    let inOrder = true;
    const keysOfBefore = Object.keys(before);
    const keysOfAfter = Object.keys(after);
    for (let i = 0; i < keysOfBefore.length + keysOfAfter.length; i++) {
      const fromBefore = i < keysOfBefore.length;
      const key = fromBefore ? keysOfBefore[i]! : keysOfAfter[i - keysOfBefore.length]!;
      if (!fromBefore && Object.hasOwn(before, key)) continue;
      const mark = walk.out.length;
      walk.segments.push(key);
      walkValue(before[key], after[key], walk);
      walk.segments.pop();
      if (walk.out.length === mark) continue;
      changedKeys ??= [];
      ends ??= [];
      if (changedKeys.length > 0 && key < changedKeys[changedKeys.length - 1]!) inOrder = false;
      changedKeys.push(key);
      ends.push(walk.out.length);
    }
    if (!inOrder && changedKeys && ends) putInKeyOrder(walk.out, start, changedKeys, ends);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    for (let i = 0; i < before.length; i++) {
      walk.segments.push(i);
      walkValue(before[i], after[i], walk);
      walk.segments.pop();
    }
    return;
  }
  if (!sameJson(before, after)) walk.out.push(pathFrom(walk.base, walk.segments) || "(root)");
}

/** Reorders `out` from `start` so each key's run of paths (ending at `ends[i]`) comes in key order. */
function putInKeyOrder(out: string[], start: number, keys: readonly string[], ends: readonly number[]): void {
  const runs = keys.map((key, i) => ({ key, paths: out.slice(i === 0 ? start : ends[i - 1], ends[i]) }));
  runs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  out.length = start;
  for (const run of runs) out.push(...run.paths);
}

/** Deep equality of JSON values, with `null` and missing object keys equal. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null)
    return absent(a) && absent(b);
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const items = a as unknown[];
    const others = b as unknown[];
    if (items.length !== others.length) return false;
    for (let i = 0; i < items.length; i++) if (!sameJson(items[i], others[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  // Every own key of either side once, as a union would, without building one.
  for (const key of Object.keys(x)) if (!sameJson(x[key], y[key])) return false;
  for (const key of Object.keys(y)) if (!Object.hasOwn(x, key) && !sameJson(x[key], y[key])) return false;
  return true;
}

export type KeyChange = "added" | "changed" | "removed";

/** How each key of a string map (labels, annotations) changed, in key order. */
export function keyChanges(
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
): { key: string; change: KeyChange }[] {
  // Every rule that guards metadata calls this on every UPDATE, where usually nothing changed: look at each
  // key once and sort only the changes, which is the order sorting every key would give.
  const out: { key: string; change: KeyChange }[] = [];
  for (const key of Object.keys(before)) {
    if (!Object.hasOwn(after, key)) out.push({ key, change: "removed" });
    else if (before[key] !== after[key]) out.push({ key, change: "changed" });
  }
  for (const key of Object.keys(after)) if (!Object.hasOwn(before, key)) out.push({ key, change: "added" });
  if (out.length > 1) out.sort(byKey);
  return out;
}

const byKey = (a: { key: string }, b: { key: string }): number =>
  a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/** A list of paths for a message: all of them up to `max`, then how many more. */
export const listPaths = (paths: readonly string[], max = 8): string =>
  paths.length <= max ? paths.join(", ") : `${paths.slice(0, max).join(", ")} and ${paths.length - max} more`;

/** JSON for a message; never throws (odd values print as their type). */
export const safeJson = (v: unknown): string => {
  try {
    return JSON.stringify(v) ?? "null";
  } catch {
    return `<${typeof v}>`;
  }
};
