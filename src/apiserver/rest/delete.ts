/**
 * DELETE of one object: the uid and resourceVersion preconditions, the propagation policy (Background,
 * Foreground and Orphan become kube's finalizers), admission, and then either the removal of an object
 * nothing holds or its deletionTimestamp — the garbage collector and namespace controller
 * (../controllers.ts) finish what finalizers hold. Final removal itself is the write path's.
 */
import type { KubeObject } from "../../kube/object.js";
import { meta } from "../object-meta.js";
import type { ResourceInfo } from "../types.js";
import { resourceKey } from "../types.js";
import { deleteOptions } from "./admit.js";
import { type DeleteOptions, type DeleteRequest, FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from "./request.js";
import { asVersion, checkDeletePrecondition, isDeleting, isNamespaces, nextGeneration } from "./strategy.js";
import type { WritePath } from "./write-path.js";

/** The propagation policy admission is told of (Background when the request names none). */
const propagationPolicyOf = (options: DeleteOptions): string =>
  options.propagationPolicy ?? (options.orphanDependents === true ? "Orphan" : "Background");

/**
 * Whether the garbage collector's finalizer `which` belongs on the object after this delete (kube's
 * shouldOrphanDependents / shouldDeleteDependents): an explicit option decides, else a GC finalizer the object
 * already holds (the first one wins), else neither. The options were validated: not both kinds of option.
 */
const wantsGcFinalizer = (finalizers: readonly string[], options: DeleteOptions, which: string): boolean => {
  if (options.orphanDependents !== undefined) return which === ORPHAN_FINALIZER && options.orphanDependents;
  if (options.propagationPolicy !== undefined)
    return options.propagationPolicy === (which === ORPHAN_FINALIZER ? "Orphan" : "Foreground");
  const first = finalizers.find((f) => f === ORPHAN_FINALIZER || f === FOREGROUND_FINALIZER);
  return first === which;
};

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((f) => right.has(f));
};

/**
 * The object's finalizers after this delete (kube's deletionFinalizersForGarbageCollection): its own, then the
 * GC finalizers the options ask for. A second delete of a terminating object may change them too.
 */
export const finalizersFor = (old: KubeObject, options: DeleteOptions): string[] => {
  const current = old.metadata?.finalizers ?? [];
  const next = current.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  for (const gc of [ORPHAN_FINALIZER, FOREGROUND_FINALIZER])
    if (wantsGcFinalizer(current, options, gc)) next.push(gc);
  return sameSet(current, next) ? [...current] : next;
};

/** The object marked for deletion: deletionTimestamp set, generation moved; a Namespace turns Terminating. */
const markedDeleting = (
  res: ResourceInfo,
  old: KubeObject,
  finalizers: string[],
  now: string,
): KubeObject => {
  const m: Record<string, unknown> = {
    ...meta(old),
    finalizers,
    deletionTimestamp: now,
    deletionGracePeriodSeconds: 0,
  };
  // kube's BeforeDelete moves a generation only where there is one.
  if (Number(old.metadata?.generation) > 0) m.generation = nextGeneration(old);
  if (finalizers.length === 0) delete m.finalizers;
  const next: KubeObject = { ...old, metadata: m };
  return isNamespaces(res) ? { ...next, status: { ...(old.status ?? {}), phase: "Terminating" } } : next;
};

export const deleteObject = async (
  write: WritePath,
  request: DeleteRequest,
): Promise<{ object: KubeObject; gone: boolean }> => {
  const { ctx, res, version, namespace, name, options } = request;
  const key = resourceKey(res);
  const old = write.get(res, namespace, name);
  checkDeletePrecondition(res, old, "uid", options.preconditions?.uid);
  checkDeletePrecondition(res, old, "resourceVersion", options.preconditions?.resourceVersion);
  const policy = propagationPolicyOf(options);
  const asRead = (o: KubeObject): KubeObject => asVersion(res, version, o);
  const call = {
    ctx,
    res,
    version,
    operation: "DELETE" as const,
    object: null,
    oldObject: asRead(old),
    options: deleteOptions(ctx, policy),
  };
  await write.admit("mutate", call);
  await write.admit("validate", call);
  const finalizers = finalizersFor(old, options);
  // The object moved during the admission round trip: decide again on its current state.
  const moved = (): boolean =>
    write.deps.storage.get(key, old.metadata?.namespace ?? "", name)?.metadata?.resourceVersion !==
    old.metadata?.resourceVersion;
  if (finalizers.length === 0 && !isNamespaces(res)) {
    if (ctx.dryRun) return { object: asRead(old), gone: true };
    if (moved()) return deleteObject(write, request);
    return { object: asRead(write.removeFinally(key, old)), gone: true };
  }
  if (isDeleting(old) && sameSet(finalizers, old.metadata?.finalizers ?? []))
    return { object: asRead(old), gone: false };
  if (!ctx.dryRun && moved()) return deleteObject(write, request);
  const next = isDeleting(old)
    ? { ...old, metadata: { ...meta(old), finalizers } }
    : markedDeleting(res, old, finalizers, write.now());
  if (ctx.dryRun) return { object: asRead(next), gone: false };
  return { object: asRead(write.persist(key, next)), gone: false };
};
