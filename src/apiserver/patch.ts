/**
 * The three classic patch formats, as pure functions from (current object, patch body) to a new object:
 * JSON merge patch (RFC 7386), JSON patch (RFC 6902, via fast-json-patch, `test` honoured) and strategic
 * merge patch for built-in kinds (lists merged by their patchMergeKey, `$patch`, `$setElementOrder`,
 * `$retainKeys`, `$deleteFromPrimitiveList` directives). Server-side apply lives in managed-fields.ts.
 * Inputs are never mutated.
 */
import jsonpatch from "fast-json-patch";
import { boundedJson, cloneJson } from "../json-text.js";
import { isRecord } from "../kube/object.js";

export class PatchError extends Error {
  constructor(
    message: string,
    /** 422 for a failed `test` op (kube answers Invalid), 400 for malformed patches, 413 for too many ops. */
    readonly code: 400 | 413 | 422 = 400,
  ) {
    super(message);
  }
}

/** kube-apiserver's bounds on a JSON patch (decision 138): its operations, and what its copies may add. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

/**
 * RFC 7386: null deletes, objects merge level by level, anything else replaces. Walked with an explicit stack
 * (a patch can nest as deep as an object, 10,000 levels; recursion answered 500 from ~4,000, decision 139);
 * keys are set as own properties, so a key spelled `__proto__` is data.
 */
export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isRecord(patch)) return patch;
  const root: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  const pending: [Record<string, unknown>, Record<string, unknown>][] = [[root, patch]];
  while (pending.length > 0) {
    const [base, p] = pending.pop() as [Record<string, unknown>, Record<string, unknown>];
    for (const [k, v] of Object.entries(p)) {
      if (v === null) {
        delete base[k];
        continue;
      }
      let value = v;
      if (isRecord(v)) {
        const before = Object.hasOwn(base, k) ? base[k] : undefined;
        value = isRecord(before) ? { ...before } : {};
        pending.push([value as Record<string, unknown>, v]);
      }
      Object.defineProperty(base, k, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  return root;
};

const DOCUMENT_ERRORS = new Set([
  "OPERATION_OP_INVALID",
  "OPERATION_FROM_UNRESOLVABLE",
  "TEST_OPERATION_FAILED",
  "OPERATION_PATH_UNRESOLVABLE",
  "OPERATION_PATH_CANNOT_ADD",
  "OPERATION_PATH_ILLEGAL_ARRAY_INDEX",
  "OPERATION_VALUE_OUT_OF_BOUNDS",
]);

/** RFC 6902. A failed `test` is a 422 (kube: "the server rejected our request due to an error in our request"). */
export const jsonPatch = (target: unknown, given: unknown): unknown => {
  if (!Array.isArray(given)) throw new PatchError("json patch must be an array of operations");
  if (given.length > MAX_JSON_PATCH_OPERATIONS)
    throw new PatchError(
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${given.length}`,
      413,
    );
  const ops = given.map(asKubeReadsOp);
  try {
    return applyCopyingPaths(target, ops) ?? applyToClone(target, ops);
  } catch (e) {
    if (e instanceof PatchError) throw e;
    const err = e as { name?: string; message?: string };
    // Ops that cannot apply to this document (a failed test, a path that is not there) are 422 on kube;
    // malformed ops are 400.
    if (err.name !== undefined && DOCUMENT_ERRORS.has(err.name))
      throw new PatchError(`the server rejected our request due to an error in our request`, 422);
    throw new PatchError(`json patch failed: ${String(err.message ?? e).split("\n")[0]}`);
  }
};

/**
 * An operation as kube's JSON patch library (evanphx/json-patch) reads it: a missing `value` of add, replace
 * or test is JSON null, and a path without its leading "/" loses its first segment (`metadata/labels` is
 * `/labels`; one of a single segment applies nowhere). Odd, but what a cluster does with a hand-written patch.
 */
const asKubeReadsOp = (op: unknown): unknown => {
  if (!isRecord(op)) return op;
  let out = op;
  if (["add", "replace", "test"].includes(String(op.op)) && !("value" in op)) out = { ...out, value: null };
  if (typeof op.path === "string" && op.path !== "" && !op.path.startsWith("/")) {
    const rest = op.path.indexOf("/");
    if (rest < 0) throw new PatchError("the server rejected our request due to an error in our request", 422);
    out = { ...out, path: op.path.slice(rest) };
  }
  return out;
};

/** fast-json-patch on a deep copy of the target, op by op. */
const applyToClone = (target: unknown, ops: unknown[]): unknown => {
  let document = cloneJson(target);
  const copies = copyBudget();
  for (let i = 0; i < ops.length; i++) {
    copies.spend(document, ops[i]);
    document = jsonpatch.applyOperation(
      document,
      ops[i] as jsonpatch.Operation,
      true,
      true,
      true,
      i,
    ).newDocument;
  }
  return document;
};

/**
 * What the patch's `copy` ops have added so far, refused past MAX_JSON_PATCH_COPY_BYTES of JSON: each copy
 * can double the object, and 30 of them in a 2 KB patch would need gigabytes (the local server's process ran
 * out of memory). A copy is measured before it is made, at most up to what the budget has left.
 */
const copyBudget = () => {
  let spent = 0;
  return {
    spend(document: unknown, op: unknown): void {
      if (!isRecord(op) || op.op !== "copy" || typeof op.from !== "string") return;
      let value: unknown;
      try {
        value = jsonpatch.getValueByPointer(document, op.from);
      } catch {
        return; // an unresolvable `from` is the library's error to report
      }
      const left = MAX_JSON_PATCH_COPY_BYTES - spent;
      const size = boundedJson(value, left).length;
      if (size > left)
        // kube's library names the limit; its handler answers as for any patch that cannot apply.
        throw new PatchError("the server rejected our request due to an error in our request", 422);
      spent += size;
    },
  };
};

/**
 * fast-json-patch applied op by op, as applyPatch does, to a document that shares all but the maps and
 * lists an op changes with the target: before each op, every container on its `path` (and a move's `from`)
 * down to the one the op changes is replaced by a shallow copy. The same result as on a deep copy, without
 * copying the whole object for a patch of a few fields. Undefined when a path cannot be followed that far
 * (root ops, missing or non-container steps, odd indexes, banned keys): the caller then patches a deep copy,
 * and nothing of the target was changed on the way.
 */
const applyCopyingPaths = (target: unknown, ops: unknown[]): unknown => {
  if (!isRecord(target) && !Array.isArray(target)) return undefined;
  const fresh = new Set<object>();
  const copy = (v: Record<string, unknown> | unknown[]): Record<string, unknown> | unknown[] => {
    const c = Array.isArray(v) ? v.slice() : { ...v };
    fresh.add(c);
    return c;
  };
  let document = copy(target);
  const copies = copyBudget();
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (!isRecord(op) || typeof op.path !== "string" || op.path === "") return undefined;
    copies.spend(document, op);
    if (op.op !== "test" && op.op !== "_get") {
      if (!copyAlong(document, op.path, fresh, copy)) return undefined;
      if (op.op === "move" && (typeof op.from !== "string" || !copyAlong(document, op.from, fresh, copy)))
        return undefined;
    }
    document = jsonpatch.applyOperation(document, op as unknown as jsonpatch.Operation, true, true, true, i)
      .newDocument as Record<string, unknown> | unknown[];
  }
  return document;
};

const INDEX = /^[0-9]+$/;
const BANNED = new Set(["__proto__", "prototype", "constructor"]);

/**
 * Replaces each container on `pointer` before its last step with a copy (those made in this patch are kept).
 * False when a step is not an own map key or an in-range list index leading to a map or list.
 */
const copyAlong = (
  document: Record<string, unknown> | unknown[],
  pointer: string,
  fresh: Set<object>,
  copy: (v: Record<string, unknown> | unknown[]) => Record<string, unknown> | unknown[],
): boolean => {
  const keys = pointer.split("/");
  if (keys[0] !== "") return false;
  let cur: Record<string, unknown> | unknown[] = document;
  for (let t = 1; t < keys.length - 1; t++) {
    const key = keys[t]!.replace(/~1/g, "/").replace(/~0/g, "~");
    if (BANNED.has(key)) return false;
    let next: unknown;
    if (Array.isArray(cur)) {
      if (!INDEX.test(key) || Number(key) >= cur.length) return false;
      next = cur[Number(key)];
    } else {
      if (!Object.hasOwn(cur, key)) return false;
      next = cur[key];
    }
    if (!isRecord(next) && !Array.isArray(next)) return false;
    const own = fresh.has(next) ? next : copy(next);
    if (Array.isArray(cur)) cur[Number(key)] = own;
    else cur[key] = own;
    cur = own;
  }
  return true;
};

/**
 * patchMergeKey by list field name, for the built-in lists that matter (kube's Go struct tags). A list not
 * named here is replaced wholesale, except primitive lists named in MERGE_PRIMITIVE, which are unioned.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  imagePullSecrets: "name",
  webhooks: "name",
  conditions: "type",
  ownerReferences: "uid",
  hostAliases: "ip",
  topologySpreadConstraints: "topologyKey",
  // Container ports merge by containerPort; Service ports by port (handled in keyFor).
  ports: "containerPort",
};
const MERGE_PRIMITIVE = new Set(["finalizers"]);

const keyFor = (field: string, items: readonly unknown[]): string | undefined => {
  const key = MERGE_KEYS[field];
  if (field === "ports" && items.some((i) => isRecord(i) && "port" in i && !("containerPort" in i)))
    return "port";
  return key;
};

const SET_ORDER = "$setElementOrder/";
const DELETE_PRIMITIVE = "$deleteFromPrimitiveList/";

/** An item's merge key, or undefined when it has none (an item without it matches nothing). */
const keyOf = (item: unknown, key: string): unknown => (isRecord(item) ? item[key] : undefined);

/**
 * Lists merged by key through maps, not a search of the list per patch item: a patch of 20,000 finalizers or
 * owner references took seconds, 200,000 minutes (decision 140). The same result as the searches: a patch item
 * meets the first remaining item of its key, a deleted one is gone for the items after it.
 */
const mergeList = (field: string, current: unknown, patch: unknown[]): unknown[] => {
  const base = Array.isArray(current) ? current : [];
  if (patch.some((p) => isRecord(p) && p.$patch === "replace"))
    return patch.filter((p) => !(isRecord(p) && p.$patch === "replace"));
  if (MERGE_PRIMITIVE.has(field) && patch.every((p) => typeof p !== "object")) {
    const out = [...base];
    const seen = new Set(base);
    for (const p of patch)
      if (!seen.has(p)) {
        seen.add(p);
        out.push(p);
      }
    return out;
  }
  const key = keyFor(field, [...base, ...patch]);
  if (!key) return patch.map((p) => strategicMerge(undefined, p));
  const out: (unknown | typeof GONE)[] = [...base];
  /** Where each key's items stand in `out`, in order; deleted ones are skipped as they are met. */
  const at = new Map<unknown, number[]>();
  const file = (item: unknown, index: number): void => {
    const k = keyOf(item, key);
    if (k === undefined) return;
    const list = at.get(k);
    if (list) list.push(index);
    else at.set(k, [index]);
  };
  out.forEach(file);
  const first = (k: unknown): number => {
    const list = k === undefined ? undefined : at.get(k);
    while (list && list.length > 0 && out[list[0]!] === GONE) list.shift();
    return list && list.length > 0 ? list[0]! : -1;
  };
  for (const item of patch) {
    const idx = first(keyOf(item, key));
    if (isRecord(item) && item.$patch === "delete") {
      if (idx >= 0) out[idx] = GONE;
      continue;
    }
    if (idx >= 0) out[idx] = strategicMerge(out[idx], item);
    else {
      out.push(strategicMerge(undefined, item));
      file(item, out.length - 1);
    }
  }
  return out.filter((item) => item !== GONE);
};
const GONE: unique symbol = Symbol("deleted");

/** Orders `list` as `$setElementOrder` says; items not named keep their relative order at the end. */
const applyOrder = (list: unknown[], order: unknown[], key: string | undefined): unknown[] => {
  // Each item's place in the order, looked up once: the first entry of its key (or value).
  const places = new Map<unknown, number>();
  order.forEach((o, i) => {
    const k = key ? keyOf(o, key) : o;
    if ((!key || k !== undefined) && !places.has(k)) places.set(k, i);
  });
  const position = (item: unknown): number => {
    const k = key ? keyOf(item, key) : item;
    return key && k === undefined ? -1 : (places.get(k) ?? -1);
  };
  const placed = list.map((item) => ({ item, place: position(item) }));
  const named = placed.filter((p) => p.place >= 0).sort((a, b) => a.place - b.place);
  return [...named.map((p) => p.item), ...placed.filter((p) => p.place < 0).map((p) => p.item)];
};

/** Strategic merge patch for built-in kinds. */
export const strategicMerge = (target: unknown, patch: unknown): unknown => {
  if (!isRecord(patch)) return patch;
  if (patch.$patch === "replace") {
    const { $patch: _, ...rest } = patch;
    return strategicMerge(undefined, rest);
  }
  if (patch.$patch === "delete") return undefined;
  let base: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  const retain = Array.isArray(patch.$retainKeys) ? new Set(patch.$retainKeys.map(String)) : undefined;
  if (retain) base = Object.fromEntries(Object.entries(base).filter(([k]) => retain.has(k)));
  const orders: Array<[string, unknown[]]> = [];
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$patch" || k === "$retainKeys") continue;
    if (k.startsWith(SET_ORDER)) {
      if (Array.isArray(v)) orders.push([k.slice(SET_ORDER.length), v]);
      continue;
    }
    if (k.startsWith(DELETE_PRIMITIVE)) {
      const field = k.slice(DELETE_PRIMITIVE.length);
      const drop = Array.isArray(v) ? v : [];
      const dropped = new Set(drop);
      if (Array.isArray(base[field])) base[field] = (base[field] as unknown[]).filter((x) => !dropped.has(x));
      continue;
    }
    if (v === null) delete base[k];
    else if (Array.isArray(v)) base[k] = mergeList(k, base[k], v);
    else {
      const merged = strategicMerge(base[k], v);
      if (merged === undefined) delete base[k];
      else base[k] = merged;
    }
  }
  for (const [field, order] of orders) {
    const list = base[field];
    if (Array.isArray(list)) base[field] = applyOrder(list, order, keyFor(field, list));
  }
  return base;
};
