/**
 * "Desired ⊆ live" (SPEC §4.3): which fields the sync sets differ from the live object, the server-side
 * apply body to send only when some do, and the status patch of §5.4 (mirrored fields plus conditions merged
 * per type, never touching the condition types the sync does not own). Fields present only in the live
 * object — server and provider defaults, other controllers' keys — never cause a write. Pure.
 */
import type { Condition, KubeObject } from "../kube/object.js";
import { conditionsOf, isRecord, jsonEqual, mergedCondition } from "../kube/object.js";
import { appendAll } from "../lists.js";

const isEmptyContainer = (v: unknown): boolean =>
  (Array.isArray(v) && v.length === 0) || (isRecord(v) && Object.keys(v).length === 0);

const join = (path: string, key: string | number): string =>
  typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;

/**
 * The paths under `path` where `desired` is not contained in `live`. Objects: every key of desired must be
 * contained in live's value. Arrays: same length, element-wise containment (lists the converter emits are
 * atomic). Scalars: strictly equal. An empty object or list in desired is satisfied by an absent one,
 * because servers drop empty containers and a write that cannot stick would repeat forever.
 */
export const subsetDiff = (desired: unknown, live: unknown, path = ""): string[] => {
  const out: string[] = [];
  collectSubsetDiff(desired, live, path, out);
  return out;
};

/** subsetDiff's walk, appending to one list (the reconcile runs it on every event; no array per node). */
const collectSubsetDiff = (desired: unknown, live: unknown, path: string, out: string[]): void => {
  if (desired === undefined) return;
  // null in an apply means "absent"; a server never stores it, so an absent live value satisfies it.
  if (desired === null) {
    if (live !== null && live !== undefined) out.push(path);
    return;
  }
  if (live === undefined && isEmptyContainer(desired)) return;
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) {
      out.push(path);
      return;
    }
    for (let i = 0; i < desired.length; i++) collectSubsetDiff(desired[i], live[i], join(path, i), out);
    return;
  }
  if (isRecord(desired)) {
    if (!isRecord(live)) {
      out.push(path);
      return;
    }
    for (const k of Object.keys(desired)) collectSubsetDiff(desired[k], live[k], join(path, k), out);
    return;
  }
  if (desired !== live) out.push(path);
};

/** Owner references are a map keyed by uid: each desired one must be in live; others' refs are fine. */
const collectOwnerReferenceDiff = (desired: KubeObject, live: KubeObject, out: string[]): void => {
  const want = desired.metadata?.ownerReferences ?? [];
  const have = Array.isArray(live.metadata?.ownerReferences) ? live.metadata.ownerReferences : [];
  want.forEach((ref, i) => {
    const match = have.find((h) => h.uid === ref.uid);
    if (match) collectSubsetDiff(ref, match, `metadata.ownerReferences[${i}]`, out);
    else out.push(`metadata.ownerReferences[${i}]`);
  });
};

/** The fields of `desired` (labels, annotations, owner references, spec) that `live` does not have. */
export const objectDiff = (desired: KubeObject, live: KubeObject): string[] => {
  const out: string[] = [];
  collectSubsetDiff(desired.metadata?.labels ?? {}, live.metadata?.labels ?? {}, "metadata.labels", out);
  collectSubsetDiff(
    desired.metadata?.annotations ?? {},
    live.metadata?.annotations ?? {},
    "metadata.annotations",
    out,
  );
  collectOwnerReferenceDiff(desired, live, out);
  collectSubsetDiff(desired.spec ?? {}, live.spec ?? {}, "spec", out);
  return out;
};

/** Only the spec paths of a diff (InfraMachines: a spec change needs a replacement, metadata does not). */
export const specPaths = (paths: readonly string[]): string[] =>
  paths.filter((p) => p === "spec" || p.startsWith("spec."));

/**
 * The server-side apply body for `desired` against `live`, or undefined when desired ⊆ live. The body is
 * the whole desired object (apply semantics: keys the sync stops setting are removed), pinned to the
 * resourceVersion read. Finalizers are never part of it (they change only by guarded JSON Patch).
 */
export const applyBody = (
  desired: KubeObject,
  live: KubeObject,
  /** `objectDiff(desired, live)` when the caller already has it (one walk, not two). */
  diff?: readonly string[],
): { body: KubeObject; changedPaths: string[] } | undefined => {
  const changedPaths = diff ? [...diff] : objectDiff(desired, live);
  if (changedPaths.length === 0) return undefined;
  const { finalizers: _finalizers, ...metadata } = desired.metadata ?? {};
  const body: KubeObject = {
    apiVersion: desired.apiVersion ?? live.apiVersion,
    kind: desired.kind ?? live.kind,
    metadata: {
      ...metadata,
      name: live.metadata?.name,
      namespace: live.metadata?.namespace,
      resourceVersion: live.metadata?.resourceVersion,
    },
    ...(desired.spec !== undefined ? { spec: desired.spec } : {}),
  };
  return { body, changedPaths };
};

/** The timestamps a condition comparison ignores: a condition is "the same" whatever they say. */
const CONDITION_TIMES: ReadonlySet<string> = new Set(["lastTransitionTime", "lastUpdateTime"]);

/** `before` already says all `next` says (times aside): canonical JSON equality, without building it. */
const conditionHolds = (before: Condition, next: Omit<Condition, "lastTransitionTime">): boolean =>
  jsonEqual(before, { ...before, ...next }, CONDITION_TIMES);

/**
 * SPEC §5.4 mirroring: the status merge patch that brings `live`'s status up to `mirrored`, or undefined.
 * Conditions are merged per type onto live's list (a type's lastTransitionTime moves only with its status);
 * types in `untouched` are neither written nor removed, whatever the converter produced. `own` conditions
 * (the sync's own Synchronized) and `extra` fields (synchronizedGeneration) are set on top.
 */
export const statusPatch = (
  live: KubeObject | undefined,
  mirrored: Record<string, unknown> | undefined,
  opts: {
    untouched: readonly string[];
    now: Date;
    own?: readonly Omit<Condition, "lastTransitionTime">[];
    extra?: Record<string, unknown>;
  },
): { status: Record<string, unknown>; changedPaths: string[] } | undefined => {
  const liveStatus = isRecord(live?.status) ? live.status : {};
  const patch: Record<string, unknown> = {};
  const changedPaths: string[] = [];
  const { conditions: mirroredConditions, ...fields } = { ...(mirrored ?? {}), ...(opts.extra ?? {}) };
  for (const [key, value] of Object.entries(fields)) {
    const diff = subsetDiff(value, liveStatus[key], `status.${key}`);
    if (diff.length > 0) {
      patch[key] = value;
      appendAll(changedPaths, diff);
    }
  }
  const liveConditions = conditionsOf(live);
  const produced = (Array.isArray(mirroredConditions) ? mirroredConditions : []).filter(
    (c): c is Condition =>
      isRecord(c) &&
      typeof c.type === "string" &&
      typeof c.status === "string" &&
      !opts.untouched.includes(c.type),
  );
  const merged = mergedConditions(liveConditions, [...produced, ...(opts.own ?? [])], opts.now);
  if (merged) {
    patch.conditions = merged.conditions;
    for (const type of merged.changed) changedPaths.push(`status.conditions[${type}]`);
  }
  return changedPaths.length === 0 ? undefined : { status: patch, changedPaths };
};

/**
 * `live` with each of `updates` set in turn, as setCondition sets it (the first condition of a type is the
 * one read, every one of that type is replaced, a new type goes last) — in one pass with a map by type, not
 * a search of the list per update: anyone who can write a Machine's status can leave ~50,000 conditions, and
 * this runs on the event loop that answers the webhook (decision 137). Undefined when nothing changes;
 * otherwise the new list, and the types changed in its order (once per condition replaced).
 */
function mergedConditions(
  live: readonly Condition[],
  updates: readonly Omit<Condition, "lastTransitionTime">[],
  now: Date,
): { conditions: Condition[]; changed: string[] } | undefined {
  const current = new Map<string, Condition>();
  for (const c of live) if (!current.has(c.type)) current.set(c.type, c);
  const inLive = new Set(current.keys());
  const changed = new Set<string>();
  for (const c of updates) {
    const { lastTransitionTime: _t, ...next } = c as Condition;
    const before = current.get(next.type);
    if (before && conditionHolds(before, next)) continue;
    const merged = mergedCondition(before, next, now);
    if (merged === before) continue;
    current.set(next.type, merged);
    changed.add(next.type);
  }
  if (changed.size === 0) return undefined;
  const conditions = live.map((c) => (changed.has(c.type) ? (current.get(c.type) as Condition) : c));
  for (const [type, c] of current) if (!inLive.has(type)) conditions.push(c);
  return { conditions, changed: conditions.filter((c) => changed.has(c.type)).map((c) => c.type) };
}
