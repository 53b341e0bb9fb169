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
export const pathOf = (segments: readonly (string | number)[]): string =>
  segments.reduce<string>((p, s) => pathJoin(p, s), "");

const absent = (v: unknown): boolean => v === undefined || v === null;

/**
 * Paths under `base` where `before` and `after` differ. A subtree that appears or disappears as a whole is
 * named once, at its root; arrays whose length changed are named as a whole (their items have no identity).
 */
export function changedPaths(before: unknown, after: unknown, base = ""): string[] {
  const out: string[] = [];
  walk(before, after, base, out);
  return out;
}

// Admission diffs whole specs where usually one field changed: equal subtrees are skipped with `sameJson`
// (no path string, no key sort), and only the keys that differ are sorted and named. The output is the same
// as naming every node and sorting every level would give (test/policies/diff.test.ts compares the two).
function walk(before: unknown, after: unknown, base: string, out: string[]): void {
  if (absent(before) && absent(after)) return;
  if (isRecord(before) && isRecord(after)) {
    const differing: string[] = [];
    for (const key of Object.keys(before)) if (!sameJson(before[key], after[key])) differing.push(key);
    for (const key of Object.keys(after))
      if (!Object.hasOwn(before, key) && !sameJson(before[key], after[key])) differing.push(key);
    if (differing.length > 1) differing.sort();
    for (const key of differing) walk(before[key], after[key], pathJoin(base, key), out);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    for (let i = 0; i < before.length; i++)
      if (!sameJson(before[i], after[i])) walk(before[i], after[i], pathJoin(base, i), out);
    return;
  }
  if (!sameJson(before, after)) out.push(base || "(root)");
}

/** Deep equality of JSON values, with `null` and missing object keys equal. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (absent(a) && absent(b)) return true;
  if (isRecord(a) && isRecord(b)) {
    // Every own key of either side once, as a union would, without building one.
    for (const key of Object.keys(a)) if (!sameJson(a[key], b[key])) return false;
    for (const key of Object.keys(b)) if (!Object.hasOwn(a, key) && !sameJson(a[key], b[key])) return false;
    return true;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  return false;
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
