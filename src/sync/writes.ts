/**
 * The writes a sync plan asks the shell to make (SPEC §7 write discipline), as a tagged union, with pure
 * builders for each. Every write names its target exactly (kind, namespace, name, uid) and carries the
 * guard it was computed from: a resourceVersion, a JSON Patch `test` of what was read, or delete
 * preconditions. The shell executes a plan's writes in order and stops at the first failure (409 →
 * requeue). When a plan holds several writes to one object, the shell sends each later one with the
 * resourceVersion its own previous write to that object returned ("chaining"): sound, because that
 * previous write was itself guarded, so the object is exactly what was read plus our change.
 */
import type { Operation } from "fast-json-patch";
import type { KubeObject } from "../kube/object.js";
import { finalizersOf, ownerReferencesOf } from "../kube/object.js";
import type { ObjectRef } from "../kube/write.js";
import { finalizerAddPatch, finalizerRemovePatch, refOf } from "../kube/write.js";

// The target of a sync write is the one ObjectRef of kube/write.ts; re-exported for the planner's imports.
export { type ObjectRef, refOf };

/** The field manager of every server-side apply the sync makes (SPEC §4.3). */
export const SYNC_FIELD_MANAGER = "machine-api-migration-sync";

const rvOf = (o: KubeObject): string => o.metadata?.resourceVersion ?? "";

export type SyncWrite =
  /** POST the complete object (paused, marked and finalized as the plan decided). */
  | { kind: "create"; object: KubeObject }
  /** Server-side apply of `body` (which carries metadata.resourceVersion) as SYNC_FIELD_MANAGER. */
  | {
      kind: "apply";
      target: ObjectRef;
      resourceVersion: string;
      fieldManager: string;
      body: KubeObject;
      changedPaths: string[];
    }
  /** JSON merge patch of the status subresource: `{metadata: {resourceVersion}, status: patch}`. */
  | {
      kind: "applyStatus";
      target: ObjectRef;
      resourceVersion: string;
      status: Record<string, unknown>;
      changedPaths: string[];
    }
  | {
      kind: "addFinalizer";
      target: ObjectRef;
      finalizer: string;
      resourceVersion: string;
      patch: Operation[];
    }
  | {
      kind: "removeFinalizer";
      target: ObjectRef;
      finalizers: string[];
      resourceVersion: string;
      patch: Operation[];
    }
  /**
   * DELETE with uid + resourceVersion preconditions. `Orphan` when the sync deletes a MachineSet's other copy
   * (SPEC §4.6): the user's choice travels per Machine, so the collector must leave that copy's Machines.
   */
  | {
      kind: "delete";
      target: ObjectRef;
      preconditions: { uid: string; resourceVersion: string };
      propagationPolicy?: "Orphan";
    }
  | {
      kind: "removeOwnerReference";
      target: ObjectRef;
      ownerUid: string;
      resourceVersion: string;
      patch: Operation[];
    }
  /** Merge patch of metadata.annotations guarded by the resourceVersion read. */
  | {
      kind: "annotate";
      target: ObjectRef;
      resourceVersion: string;
      /** A null value removes the key (a withdrawn delete mark, §4.4). */
      annotations: Record<string, string | null>;
      why: "needsAttention" | "deleteMark";
    }
  /**
   * JSON Patch of `spec.replicas` guarded by the resourceVersion and the replicas read: the autoscaler's
   * scaling carried to a ClusterAPI MachineSet (SPEC §2.2). Never an apply: a partial apply under the sync's
   * field manager would drop every field the sync applied to the set while it was a MachineAPI mirror.
   */
  | {
      kind: "setReplicas";
      target: ObjectRef;
      replicas: number;
      resourceVersion: string;
      patch: Operation[];
    }
  /** Merge patch adding the pause annotation and the pause marker, guarded by the resourceVersion read. */
  | { kind: "pause"; target: ObjectRef; resourceVersion: string; annotations: Record<string, string> }
  /**
   * Merge patch removing the pause annotation and marker (set to null), guarded by the resourceVersion read:
   * only ever on a deleting needs-attention InfraMachine that carries a duplicate instance (SPEC §4.2), so
   * its provider terminates that instance.
   */
  | { kind: "unpause"; target: ObjectRef; resourceVersion: string; annotations: string[] };

export type SyncWriteKind = SyncWrite["kind"];

export const createWrite = (object: KubeObject): SyncWrite => ({ kind: "create", object });

/** The status merge patch of `live` that a computed status difference asks for; none when nothing differs. */
export const applyStatusWrite = (
  live: KubeObject,
  patch: { status: Record<string, unknown>; changedPaths: string[] } | undefined,
): SyncWrite | undefined =>
  patch && {
    kind: "applyStatus",
    target: refOf(live),
    resourceVersion: live.metadata?.resourceVersion ?? "",
    status: patch.status,
    changedPaths: patch.changedPaths,
  };

/** kube/write.ts's finalizer patch: guarded by the uid, the resourceVersion and the list read. */
export const addFinalizerWrite = (o: KubeObject, finalizer: string): SyncWrite | undefined => {
  const patch = finalizerAddPatch(o, finalizer);
  if (!patch) return undefined;
  return { kind: "addFinalizer", target: refOf(o), finalizer, resourceVersion: rvOf(o), patch };
};

/** One write removing every listed finalizer the object holds; undefined when it holds none of them. */
export const removeFinalizersWrite = (
  o: KubeObject,
  finalizers: readonly string[],
): SyncWrite | undefined => {
  const patch = finalizerRemovePatch(o, finalizers);
  if (!patch) return undefined;
  const named = new Set(finalizers);
  const removing = finalizersOf(o).filter((f) => named.has(f));
  return { kind: "removeFinalizer", target: refOf(o), finalizers: removing, resourceVersion: rvOf(o), patch };
};

export const deleteWrite = (o: KubeObject, propagationPolicy?: "Orphan"): SyncWrite => ({
  kind: "delete",
  target: refOf(o),
  preconditions: { uid: o.metadata?.uid ?? "", resourceVersion: rvOf(o) },
  ...(propagationPolicy ? { propagationPolicy } : {}),
});

export const removeOwnerReferenceWrite = (o: KubeObject, ownerUid: string): SyncWrite | undefined => {
  const refs = ownerReferencesOf(o);
  if (!refs.some((r) => r.uid === ownerUid)) return undefined;
  const patch: Operation[] = [
    { op: "test", path: "/metadata/uid", value: o.metadata?.uid ?? "" },
    { op: "test", path: "/metadata/ownerReferences", value: refs },
    { op: "replace", path: "/metadata/ownerReferences", value: refs.filter((r) => r.uid !== ownerUid) },
  ];
  return { kind: "removeOwnerReference", target: refOf(o), ownerUid, resourceVersion: rvOf(o), patch };
};

/** §2.2: `spec.replicas` of `o` from what was read to `replicas`. */
export const setReplicasWrite = (o: KubeObject, replicas: number): SyncWrite => ({
  kind: "setReplicas",
  target: refOf(o),
  replicas,
  resourceVersion: rvOf(o),
  patch: [
    { op: "test", path: "/metadata/uid", value: o.metadata?.uid ?? "" },
    { op: "test", path: "/metadata/resourceVersion", value: rvOf(o) },
    { op: "test", path: "/spec/replicas", value: (o.spec as { replicas?: unknown } | undefined)?.replicas },
    { op: "replace", path: "/spec/replicas", value: replicas },
  ],
});

export const annotateWrite = (
  o: KubeObject,
  annotations: Record<string, string | null>,
  why: "needsAttention" | "deleteMark",
): SyncWrite => ({ kind: "annotate", target: refOf(o), resourceVersion: rvOf(o), annotations, why });

export const pauseWrite = (o: KubeObject, annotations: Record<string, string>): SyncWrite => ({
  kind: "pause",
  target: refOf(o),
  resourceVersion: rvOf(o),
  annotations,
});

export const unpauseWrite = (o: KubeObject, annotations: readonly string[]): SyncWrite => ({
  kind: "unpause",
  target: refOf(o),
  resourceVersion: rvOf(o),
  annotations: [...annotations],
});

/** An event the shell records on the MAPI object (SPEC §4.2, §4.5). */
export interface SyncEvent {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}
