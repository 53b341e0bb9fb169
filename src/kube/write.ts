/**
 * SPEC §7's write discipline, written once for every controller (the sync's executor, the migration
 * controller, the simulated providers), so none hand-builds a risky write: `ObjectRef` (the object a write
 * goes to), THE finalizer patch (`test`s of uid, resourceVersion and list), THE merge patch (carrying its
 * resourceVersion), `sendGuardedPatch` (a stale read is one ConflictError), deletes with uid +
 * resourceVersion preconditions, and `isSubset` to skip writes whose desired state is already live
 * ("desired ⊆ live"). What to write is decided elsewhere.
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

/**
 * One incarnation of one object, as a guarded write names it: where to send the write and which object it
 * was computed for. `uid` is absent only for an object read without one (never from an API server).
 */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

export const refOf = (object: KubeObject): ObjectRef => {
  const ref: ObjectRef = {
    apiVersion: typeof object.apiVersion === "string" ? object.apiVersion : "",
    kind: typeof object.kind === "string" ? object.kind : "",
    namespace: namespaceOf(object),
    name: nameOf(object),
  };
  if (typeof object.metadata?.uid === "string") ref.uid = object.metadata.uid;
  return ref;
};

/** What a finalizer write was computed from: the incarnation, its version, and the list it showed. */
export interface FinalizersRead {
  uid?: string | undefined;
  resourceVersion: string;
  finalizers: readonly string[];
}

const finalizersReadOf = (object: KubeObject): FinalizersRead => ({
  uid: object.metadata?.uid,
  resourceVersion: object.metadata?.resourceVersion ?? "",
  finalizers: finalizersOf(object),
});

/**
 * Pure: THE finalizer write (SPEC §3.5, §7): a JSON Patch that sets the list to `next`, guarded by `test`s of
 * the uid (never another object under the same name), the resourceVersion (a late write — a lost reply, an
 * old leader's — fails instead of landing on a state it never saw, e.g. the same list again after a
 * roll-back put a finalizer back) and the list it edits. A list that was empty or absent is not tested
 * (`test` of an absent path fails; the resourceVersion covers it). `add` replaces a list that is there and
 * creates one that is not.
 */
export function finalizersPatch(read: FinalizersRead, next: readonly string[]): Operation[] {
  return [
    ...(read.uid !== undefined ? [{ op: "test" as const, path: "/metadata/uid", value: read.uid }] : []),
    { op: "test", path: "/metadata/resourceVersion", value: read.resourceVersion },
    ...(read.finalizers.length > 0
      ? [{ op: "test" as const, path: "/metadata/finalizers", value: [...read.finalizers] }]
      : []),
    { op: "add", path: "/metadata/finalizers", value: [...next] },
  ];
}

/** Pure: the guarded patch adding `finalizer` to what `object` shows, or undefined when it is already there. */
export function finalizerAddPatch(object: KubeObject, finalizer: string): Operation[] | undefined {
  const list = finalizersOf(object);
  if (list.includes(finalizer)) return undefined;
  return finalizersPatch(finalizersReadOf(object), [...list, finalizer]);
}

/** Pure: the guarded patch removing `finalizers` from what `object` shows, or undefined when it holds none. */
export function finalizerRemovePatch(
  object: KubeObject,
  finalizers: string | readonly string[],
): Operation[] | undefined {
  // A set, not a search of the list per finalizer: anyone who can update the object sets its length.
  const removing: ReadonlySet<string> = new Set(typeof finalizers === "string" ? [finalizers] : finalizers);
  const list = finalizersOf(object);
  if (!list.some((f) => removing.has(f))) return undefined;
  return finalizersPatch(
    finalizersReadOf(object),
    list.filter((f) => !removing.has(f)),
  );
}

/**
 * Pure: THE merge patch (SPEC §7): `patch` carrying, in `metadata.resourceVersion`, the version it was
 * computed from, so the server answers 409 when the object has moved on.
 */
export const mergePatchAt = (
  resourceVersion: string,
  patch: Record<string, unknown>,
): Record<string, unknown> => ({
  ...patch,
  metadata: { ...(isRecord(patch.metadata) ? patch.metadata : {}), resourceVersion },
});

/** A guarded write as sent: a merge patch built by `mergePatchAt` or a JSON Patch whose `test`s guard it. */
export type GuardedPatch =
  | { type: "merge"; body: Record<string, unknown>; subresource?: "status" }
  | { type: "json"; body: readonly Operation[] };

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

/**
 * Sends one guarded patch to `target` (of `type`) as `fieldManager`; answers the object the server wrote. A
 * stale read fails as ConflictError, whether the server said 409 (merge) or failed a `test` (JSON Patch).
 */
export async function sendGuardedPatch(
  client: KubeClient,
  type: ResourceType,
  target: Pick<ObjectRef, "namespace" | "name">,
  patch: GuardedPatch,
  fieldManager: string,
): Promise<KubeObject> {
  const sent: Patch =
    patch.type === "merge" ? { type: "merge", body: patch.body } : { type: "json", body: [...patch.body] };
  const options = {
    fieldManager,
    ...(patch.type === "merge" && patch.subresource ? { subresource: patch.subresource } : {}),
  };
  try {
    return await client.patch(type, target.namespace, target.name, sent, options);
  } catch (e) {
    throw patch.type === "json"
      ? staleTestAsConflict(e, `${type.kind} ${target.namespace}/${target.name}`)
      : e;
  }
}

export function createWriteHelpers(client: KubeClient, fieldManager: string): WriteHelpers {
  const send = (type: ResourceType, object: KubeObject, patch: GuardedPatch): Promise<KubeObject> =>
    sendGuardedPatch(client, type, refOf(object), patch, fieldManager);
  const helpers: WriteHelpers = {
    async ensureFinalizer(type, object, finalizer) {
      const ops = finalizerAddPatch(object, finalizer);
      return ops ? send(type, object, { type: "json", body: ops }) : object;
    },
    async removeFinalizer(type, object, finalizer) {
      const ops = finalizerRemovePatch(object, finalizer);
      return ops ? send(type, object, { type: "json", body: ops }) : object;
    },
    async patchWithPrecondition(type, live, patch, options) {
      if (isSubset(patch, live)) return live;
      return send(type, live, {
        type: "merge",
        body: mergePatchAt(live.metadata?.resourceVersion ?? "", patch),
        ...(options?.subresource ? { subresource: options.subresource } : {}),
      });
    },
    patchStatus: (type, live, status) =>
      helpers.patchWithPrecondition(type, live, { status }, { subresource: "status" }),
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
