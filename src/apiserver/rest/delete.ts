/**
 * DELETE of one object: the uid and resourceVersion preconditions, the propagation policy (Background,
 * Foreground and Orphan become kube's finalizers), admission, and then either the removal of an object
 * nothing holds or its deletionTimestamp — the garbage collector and namespace controller
 * (../controllers.ts) finish what finalizers hold. Final removal itself is the write path's.
 */
import type { KubeObject } from "../../kube/object.js";
import { meta } from "../object-meta.js";
import { invalid } from "../status.js";
import type { ResourceInfo } from "../types.js";
import { resourceKey } from "../types.js";
import { deleteOptions } from "./admit.js";
import { type DeleteOptions, type DeleteRequest, FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from "./request.js";
import { asVersion, checkDeletePrecondition, isDeleting, isNamespaces, nextGeneration } from "./strategy.js";
import type { WritePath } from "./write-path.js";

/** The propagation policy a request asks for (Background when it names none); 422 for an unknown one. */
const propagationPolicyOf = (options: DeleteOptions): string => {
  const policy = options.propagationPolicy ?? (options.orphanDependents === true ? "Orphan" : "Background");
  if (!["Background", "Foreground", "Orphan"].includes(policy))
    throw invalid("meta.k8s.io", "DeleteOptions", "", [
      {
        reason: "FieldValueNotSupported",
        field: "propagationPolicy",
        message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
      },
    ]);
  return policy;
};

/** The object's finalizers once the policy's own is added (not to an object already being deleted). */
const finalizersFor = (old: KubeObject, policy: string): string[] => {
  const finalizers = [...(old.metadata?.finalizers ?? [])];
  const add =
    policy === "Orphan" ? ORPHAN_FINALIZER : policy === "Foreground" ? FOREGROUND_FINALIZER : undefined;
  if (add && !finalizers.includes(add) && !isDeleting(old)) finalizers.push(add);
  return finalizers;
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
  const finalizers = finalizersFor(old, policy);
  // The object moved during the admission round trip: decide again on its current state.
  const moved = (): boolean =>
    write.deps.storage.get(key, old.metadata?.namespace ?? "", name)?.metadata?.resourceVersion !==
    old.metadata?.resourceVersion;
  if (finalizers.length === 0 && !isNamespaces(res)) {
    if (ctx.dryRun) return { object: asRead(old), gone: true };
    if (moved()) return deleteObject(write, request);
    return { object: asRead(write.removeFinally(key, old)), gone: true };
  }
  if (isDeleting(old)) return { object: asRead(old), gone: false };
  if (!ctx.dryRun && moved()) return deleteObject(write, request);
  const next = markedDeleting(res, old, finalizers, write.now());
  if (ctx.dryRun) return { object: asRead(next), gone: false };
  return { object: asRead(write.persist(key, next)), gone: false };
};
