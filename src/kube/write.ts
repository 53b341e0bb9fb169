/**
 * Write helpers that carry SPEC §7's write discipline for every controller, so no controller hand-builds a
 * risky write: merge patches that include the `resourceVersion` they were computed from, finalizer
 * changes as JSON Patch guarded by a `test` of the exact list read, deletes with uid + resourceVersion
 * preconditions, server-side apply under a named field manager, and `isSubset` to skip writes whose
 * desired state is already live ("desired ⊆ live"). A stale read surfaces as `ConflictError` (requeue).
 */
import type { Operation } from "fast-json-patch";
import type { KubeClient, Patch } from "./client.js";
import { ConflictError, InvalidError } from "./errors.js";
import type { ResourceType } from "./kinds.js";
import type { KubeObject } from "./object.js";
import { finalizersOf, isRecord, nameOf, namespaceOf } from "./object.js";

/** Pure: does `live` already have everything `desired` says? Objects: every key of desired equal in live;
 * arrays: same length and element-wise subset; scalars: strictly equal. `undefined` in desired matches only
 * an absent key; `null` matches null or absent (a merge patch's "delete"). */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (desired === null) return live === null || live === undefined;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(live) && live.length === desired.length && desired.every((d, i) => isSubset(d, live[i]))
    );
  }
  if (isRecord(desired)) {
    if (!isRecord(live)) return false;
    return Object.entries(desired).every(([k, v]) =>
      v === undefined ? !Object.hasOwn(live, k) : isSubset(v, Object.hasOwn(live, k) ? live[k] : undefined),
    );
  }
  return desired === live;
}

/** Pure: the JSON Patch adding `finalizer` to what `object` shows, or undefined when it is already there. */
export function finalizerAddPatch(object: KubeObject, finalizer: string): Operation[] | undefined {
  const list = finalizersOf(object);
  if (list.includes(finalizer)) return undefined;
  if (!Array.isArray(object.metadata?.finalizers)) {
    // No list to test: `test` of an absent path fails, so guard with the resourceVersion instead.
    return [
      { op: "test", path: "/metadata/resourceVersion", value: object.metadata?.resourceVersion ?? "" },
      { op: "add", path: "/metadata/finalizers", value: [finalizer] },
    ];
  }
  return [
    { op: "test", path: "/metadata/finalizers", value: list },
    { op: "add", path: "/metadata/finalizers/-", value: finalizer },
  ];
}

/** Pure: the JSON Patch removing `finalizer` from what `object` shows, or undefined when it is not there. */
export function finalizerRemovePatch(object: KubeObject, finalizer: string): Operation[] | undefined {
  const list = finalizersOf(object);
  const index = list.indexOf(finalizer);
  if (index < 0) return undefined;
  return [
    { op: "test", path: "/metadata/finalizers", value: list },
    { op: "remove", path: `/metadata/finalizers/${index}` },
  ];
}

export interface WriteHelpers {
  /** Adds `finalizer` unless present; returns the written object, or `object` when nothing was sent. */
  ensureFinalizer(type: ResourceType, object: KubeObject, finalizer: string): Promise<KubeObject>;
  removeFinalizer(type: ResourceType, object: KubeObject, finalizer: string): Promise<KubeObject>;
  /** Merge patch `patch` guarded by `live`'s resourceVersion; skipped when `patch ⊆ live`. */
  patchWithPrecondition(
    type: ResourceType,
    live: KubeObject,
    patch: Record<string, unknown>,
    options?: { subresource?: "status" },
  ): Promise<KubeObject>;
  /** `patchWithPrecondition` of `{ status }` through the status subresource. */
  patchStatus(type: ResourceType, live: KubeObject, status: Record<string, unknown>): Promise<KubeObject>;
  /** Server-side apply of `object` as `fieldManager` (force: the product owns the fields it applies). */
  applyObject(
    type: ResourceType,
    object: KubeObject,
    fieldManager: string,
    force?: boolean,
  ): Promise<KubeObject>;
  /** Deletes exactly the object read: uid + resourceVersion preconditions. */
  deleteWithPreconditions(
    type: ResourceType,
    object: KubeObject,
    propagationPolicy?: "Foreground" | "Background" | "Orphan",
  ): Promise<unknown>;
}

/**
 * kube-apiserver answers a failed JSON Patch `test` with 422 and no field causes; for our guarded patches
 * that means "what you read is stale", the same as a 409, so callers see one error class for both. A 422
 * with causes (e.g. no new finalizers on a deleting object) stays an InvalidError.
 */
const staleTestAsConflict = (e: unknown, what: string): unknown =>
  e instanceof InvalidError && e.causes.length === 0
    ? new ConflictError(
        409,
        "Conflict",
        `${what} changed since it was read (JSON Patch test failed): ${e.message}`,
      )
    : e;

export function createWriteHelpers(client: KubeClient, fieldManager: string): WriteHelpers {
  const guardedJsonPatch = async (
    type: ResourceType,
    object: KubeObject,
    ops: Operation[],
  ): Promise<KubeObject> => {
    const patch: Patch = { type: "json", body: ops };
    try {
      return await client.patch(type, namespaceOf(object), nameOf(object), patch, { fieldManager });
    } catch (e) {
      throw staleTestAsConflict(
        e,
        `metadata.finalizers of ${type.kind} ${namespaceOf(object)}/${nameOf(object)}`,
      );
    }
  };
  const helpers: WriteHelpers = {
    async ensureFinalizer(type, object, finalizer) {
      const ops = finalizerAddPatch(object, finalizer);
      return ops ? guardedJsonPatch(type, object, ops) : object;
    },
    async removeFinalizer(type, object, finalizer) {
      const ops = finalizerRemovePatch(object, finalizer);
      return ops ? guardedJsonPatch(type, object, ops) : object;
    },
    async patchWithPrecondition(type, live, patch, options) {
      if (isSubset(patch, live)) return live;
      const metadata = isRecord(patch.metadata) ? patch.metadata : {};
      const body = { ...patch, metadata: { ...metadata, resourceVersion: live.metadata?.resourceVersion } };
      return client.patch(
        type,
        namespaceOf(live),
        nameOf(live),
        { type: "merge", body },
        { fieldManager, ...(options?.subresource ? { subresource: options.subresource } : {}) },
      );
    },
    patchStatus: (type, live, status) =>
      helpers.patchWithPrecondition(type, live, { status }, { subresource: "status" }),
    applyObject(type, object, manager, force = true) {
      return client.patch(type, namespaceOf(object), nameOf(object), {
        type: "apply",
        body: object,
        fieldManager: manager,
        force,
      });
    },
    deleteWithPreconditions(type, object, propagationPolicy) {
      const preconditions: { uid?: string; resourceVersion?: string } = {};
      if (object.metadata?.uid) preconditions.uid = object.metadata.uid;
      if (object.metadata?.resourceVersion) preconditions.resourceVersion = object.metadata.resourceVersion;
      return client.delete(type, namespaceOf(object), nameOf(object), {
        preconditions,
        ...(propagationPolicy ? { propagationPolicy } : {}),
      });
    },
  };
  return helpers;
}
