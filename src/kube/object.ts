/**
 * The minimal shape of a Kubernetes object as the product reads it, and small pure accessors over it.
 * Objects are plain JSON; unknown fields are always preserved. Accessors never throw on odd shapes: a
 * field of the wrong type reads as absent.
 */
import { canonicalJson } from "../json-text.js";

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

/** kube's RFC 1123 subdomain (object names, API groups; at most 253 characters, checked apart). */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** kube's RFC 1123 label (namespaces, plurals, versions; at most 63 characters, checked apart). */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

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

/** Each name's first object in `objects`: a lookup by name, built once (a search per name is quadratic). */
export const firstByName = (objects: readonly KubeObject[]): Map<string, KubeObject> => {
  const byName = new Map<string, KubeObject>();
  for (const o of objects) {
    const name = nameOf(o);
    if (!byName.has(name)) byName.set(name, o);
  }
  return byName;
};

/** Reads a nested field by path segments; anything missing or not an object along the way reads as undefined. */
export const getPath = (o: unknown, path: readonly string[]): unknown => {
  let cur: unknown = o;
  for (const seg of path) {
    if (!isRecord(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
};

/**
 * The instant a Kubernetes `Time` or `MicroTime` field names, in ms since the epoch; undefined for anything
 * else (absent, empty, not a string, not a time). MicroTime's fraction is cut to the milliseconds it can hold.
 */
export const timeMs = (v: unknown): number | undefined => {
  if (typeof v !== "string" || v === "") return undefined;
  const ms = Date.parse(v.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(ms) ? undefined : ms;
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

/** Stable JSON: keys sorted, at any depth. Used for hashing and for order-insensitive comparison. */
export { canonicalJson };

/**
 * `canonicalJson(a) === canonicalJson(b)` without building either string: equal as JSON, key order aside
 * (a key holding `undefined` is absent; `undefined` in an array reads as `null`). Keys in `skip` are left
 * out at the top level. Stops at the first difference.
 */
export const jsonEqual = (a: unknown, b: unknown, skip?: ReadonlySet<string>): boolean => {
  if (a === b) return true;
  // Pairs still to compare, flat (`a`'s side, then `b`'s): an explicit stack, since a preserve-unknown field
  // can nest ~10,000 levels (kube's limit), deeper than the JavaScript stack. `skip` applies to the top only.
  const pending: unknown[] = [a, b];
  let top = true;
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    const leave = top ? skip : undefined;
    top = false;
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pending.push(x[i] ?? null, y[i] ?? null);
    } else if (isRecord(x)) {
      if (!isRecord(y)) return false;
      let defined = 0;
      for (const k of Object.keys(x)) {
        if (x[k] === undefined || leave?.has(k)) continue;
        defined++;
        if (y[k] === undefined) return false;
        pending.push(x[k], y[k]);
      }
      for (const k of Object.keys(y)) if (y[k] !== undefined && !leave?.has(k)) defined--;
      if (defined !== 0) return false;
    } else {
      return false;
    }
  }
  return true;
};

/**
 * `JSON.stringify(a) === JSON.stringify(b)` for JSON values, without building either string: the same keys in
 * the same order, the same arrays, the same scalars. Stricter than `jsonEqual` (key order counts), so a value
 * found identical can stand for the other anywhere, even where its text is read. Stops at the first
 * difference; an explicit stack, as `jsonEqual`.
 */
export const identicalJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  const pending: unknown[] = [a, b];
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pending.push(x[i], y[i]);
    } else if (isRecord(x)) {
      if (!isRecord(y)) return false;
      const xs = Object.keys(x);
      const ys = Object.keys(y);
      if (xs.length !== ys.length) return false;
      for (let i = 0; i < xs.length; i++) {
        const k = xs[i] as string;
        if (k !== ys[i]) return false;
        pending.push(x[k], y[k]);
      }
    } else {
      return false;
    }
  }
  return true;
};

/** Metadata the server rewrites on every write without the object saying anything new. */
const SERVER_BOOKKEEPING: ReadonlySet<string> = new Set(["resourceVersion", "managedFields"]);
const METADATA_AND_STATUS: ReadonlySet<string> = new Set(["metadata", "status"]);

/**
 * Whether `after` differs from `before` only in `status` and the server's bookkeeping (resourceVersion,
 * managedFields): what a write to the `/status` subresource changes. Labels, annotations, owners, finalizers,
 * a deletion and spec all count as more. (controller-runtime's GenerationChangedPredicate asks the same of
 * `metadata.generation`, which no metadata change moves.)
 */
export const statusOnlyChange = (before: KubeObject, after: KubeObject): boolean =>
  jsonEqual(before, after, METADATA_AND_STATUS) &&
  jsonEqual(before.metadata, after.metadata, SERVER_BOOKKEEPING);

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
  const merged = mergedCondition(old, next, now);
  if (merged === old) return conditions;
  return old ? conditions.map((c) => (c.type === next.type ? merged : c)) : [...conditions, merged];
};

/** `old` (a condition of `next`'s type, if any) with `next` set, as setCondition sets it; `old` itself when
 * nothing differs. */
export const mergedCondition = (
  old: Condition | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: Date,
): Condition => {
  const lastTransitionTime =
    old && old.status === next.status && old.lastTransitionTime
      ? old.lastTransitionTime
      : now.toISOString().replace(/\.\d{3}Z$/, "Z");
  const merged = { ...old, ...next, lastTransitionTime } as Condition;
  return old && canonicalJson(old) === canonicalJson(merged) ? old : merged;
};
