/**
 * The minimal shape of a Kubernetes object as the product reads it, and small pure accessors over it.
 * Objects are plain JSON; unknown fields are always preserved. Accessors never throw on odd shapes: a
 * field of the wrong type reads as absent.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const stringMap = (v: unknown): Record<string, string> => {
  if (!isRecord(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) if (typeof val === "string") out[k] = val;
  return out;
};

export const nameOf = (o: KubeObject | undefined): string =>
  typeof o?.metadata?.name === "string" ? o.metadata.name : "";
export const namespaceOf = (o: KubeObject | undefined): string =>
  typeof o?.metadata?.namespace === "string" ? o.metadata.namespace : "";
export const labelsOf = (o: KubeObject | undefined): Record<string, string> => stringMap(o?.metadata?.labels);
export const annotationsOf = (o: KubeObject | undefined): Record<string, string> =>
  stringMap(o?.metadata?.annotations);
export const finalizersOf = (o: KubeObject | undefined): string[] =>
  Array.isArray(o?.metadata?.finalizers) ? o.metadata.finalizers.filter((f) => typeof f === "string") : [];
export const ownerReferencesOf = (o: KubeObject | undefined): OwnerReference[] =>
  Array.isArray(o?.metadata?.ownerReferences) ? o.metadata.ownerReferences.filter(isRecord) : [];
export const isDeleting = (o: KubeObject | undefined): boolean =>
  typeof o?.metadata?.deletionTimestamp === "string";
export const generationOf = (o: KubeObject | undefined): number =>
  typeof o?.metadata?.generation === "number" ? o.metadata.generation : 0;
export const hasFinalizer = (o: KubeObject | undefined, f: string): boolean => finalizersOf(o).includes(f);

/** Reads a nested field by path segments; anything missing or not an object along the way reads as undefined. */
export const getPath = (o: unknown, path: readonly string[]): unknown => {
  let cur: unknown = o;
  for (const seg of path) {
    if (!isRecord(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
};

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown" | string;
  reason?: string;
  message?: string;
  severity?: string;
  lastTransitionTime?: string;
  [key: string]: unknown;
}

/** Conditions at `status.conditions` (MAPI shape and CAPI v1beta2 shape alike). */
export const conditionsOf = (o: KubeObject | undefined): Condition[] => {
  const list = getPath(o, ["status", "conditions"]);
  return Array.isArray(list)
    ? list.filter(
        (c): c is Condition => isRecord(c) && typeof c.type === "string" && typeof c.status === "string",
      )
    : [];
};
export const conditionOf = (o: KubeObject | undefined, type: string): Condition | undefined =>
  conditionsOf(o).find((c) => c.type === type);

/** Stable JSON: keys sorted recursively. Used for hashing and for order-insensitive comparison. */
export const canonicalJson = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (isRecord(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
};

/**
 * `canonicalJson(a) === canonicalJson(b)` without building either string: equal as JSON, key order aside
 * (a key holding `undefined` is absent; `undefined` in an array reads as `null`). Keys in `skip` are left
 * out at the top level. Stops at the first difference.
 */
export const jsonEqual = (a: unknown, b: unknown, skip?: ReadonlySet<string>): boolean =>
  equalWithin(a, b, skip, 0);

/** Recursion this deep is well inside the JavaScript stack; deeper subtrees go to the explicit-stack walk. */
const RECURSION_DEPTH = 1_000;

/** jsonEqual's walk: recursive (fast on the objects every reconcile compares) down to RECURSION_DEPTH. */
const equalWithin = (
  a: unknown,
  b: unknown,
  skip: ReadonlySet<string> | undefined,
  depth: number,
): boolean => {
  if (a === b) return true;
  if (depth >= RECURSION_DEPTH) return equalDeep(a, b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++)
      if (!equalWithin(a[i] ?? null, b[i] ?? null, undefined, depth + 1)) return false;
    return true;
  }
  if (isRecord(a)) {
    if (!isRecord(b)) return false;
    let defined = 0;
    for (const k of Object.keys(a)) {
      if (a[k] === undefined || skip?.has(k)) continue;
      defined++;
      if (b[k] === undefined || !equalWithin(a[k], b[k], undefined, depth + 1)) return false;
    }
    for (const k of Object.keys(b)) if (b[k] !== undefined && !skip?.has(k)) defined--;
    return defined === 0;
  }
  return false;
};

/**
 * The same comparison with an explicit stack of pairs (flat: `a`'s side, then `b`'s), for what nests past
 * RECURSION_DEPTH: a preserve-unknown field can nest ~10,000 levels (kube's limit).
 */
const equalDeep = (a: unknown, b: unknown): boolean => {
  const pending: unknown[] = [a, b];
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pending.push(x[i] ?? null, y[i] ?? null);
    } else if (isRecord(x)) {
      if (!isRecord(y)) return false;
      let defined = 0;
      for (const k of Object.keys(x)) {
        if (x[k] === undefined) continue;
        defined++;
        if (y[k] === undefined) return false;
        pending.push(x[k], y[k]);
      }
      for (const k of Object.keys(y)) if (y[k] !== undefined) defined--;
      if (defined !== 0) return false;
    } else {
      return false;
    }
  }
  return true;
};

/**
 * Returns `conditions` with `next` set for its type. `lastTransitionTime` changes only when the status
 * changes (SPEC §1); otherwise the old one is kept. Returns the same array when nothing differs, so callers
 * can skip the write.
 */
export const setCondition = (
  conditions: readonly Condition[],
  next: Omit<Condition, "lastTransitionTime">,
  now: Date,
): readonly Condition[] => {
  const old = conditions.find((c) => c.type === next.type);
  const lastTransitionTime =
    old && old.status === next.status && old.lastTransitionTime
      ? old.lastTransitionTime
      : now.toISOString().replace(/\.\d{3}Z$/, "Z");
  const merged = { ...old, ...next, lastTransitionTime } as Condition;
  if (old && canonicalJson(old) === canonicalJson(merged)) return conditions;
  return old ? conditions.map((c) => (c.type === next.type ? merged : c)) : [...conditions, merged];
};
