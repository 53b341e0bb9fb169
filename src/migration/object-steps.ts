/**
 * The planner's one-object steps (SPEC §3.1 steps 3, 5, 8, 9, 11 and §3.3): add or remove the pause and its
 * marker on one CAPI object, add or remove an authority's controller finalizers on one object. Each returns
 * undefined when the object already is as the step would make it, so planner.ts can take the first step that
 * is still to do. Which objects and which finalizers come from the table in ./kinds.ts. Pure.
 */
import { ANNOTATIONS, PAUSED_BY_VALUE } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { annotationsOf, finalizersOf, isDeleting } from "../kube/object.js";
import { hasPauseMarker, isPaused, isPausedWithMarker } from "../protocol/pause.js";
import type { FinalizerHolder } from "./kinds.js";
import { resolveFinalizers } from "./kinds.js";
import type { HandoverSnapshot, Role } from "./snapshot.js";
import { objectOf, refOf } from "./snapshot.js";
import type { Step } from "./steps.js";

export const pauseStep = (s: HandoverSnapshot, role: Role): Step | undefined => {
  const object = objectOf(s, role);
  if (!object) return undefined;
  const add: Record<string, string> = {};
  // An existing pause (an admin's) is adopted by adding the marker; its value is left as it is.
  if (!isPaused(object)) add[ANNOTATIONS.paused] = "";
  if (!hasPauseMarker(object)) add[ANNOTATIONS.pausedBy] = PAUSED_BY_VALUE;
  return Object.keys(add).length === 0
    ? undefined
    : { kind: "pause", target: refOf(role, object), addAnnotations: add };
};

/** Only a marked pause is removed: a pause without the marker is an admin's and is never touched. */
export const unpauseStep = (s: HandoverSnapshot, role: Role): Step | undefined => {
  const object = objectOf(s, role);
  if (!object || !hasPauseMarker(object)) return undefined;
  const present = annotationsOf(object);
  const remove = [ANNOTATIONS.paused, ANNOTATIONS.pausedBy].filter((k) => Object.hasOwn(present, k));
  return { kind: "unpause", target: refOf(role, object), removeAnnotations: remove };
};

/**
 * Lifts ClusterAPI's pause from one CAPI object (steps 3 and 11, and a roll-back to ClusterAPI). A deleting
 * object listed in `released` (./kinds.ts) keeps the product's pause, and loses its paused controller's own
 * finalizers instead (SPEC §4.6: a roll-back never unpauses a deleting CAPI MachineSet); one paused by an admin
 * is left alone, as always.
 */
export const liftPauseStep = (
  s: HandoverSnapshot,
  role: Role,
  released: readonly FinalizerHolder[],
): Step | undefined => {
  const object = objectOf(s, role);
  const holder = released.find((h) => h.role === role);
  if (object && holder && isDeleting(object))
    return isPausedWithMarker(object) ? removeFinalizersStep(s, holder, { fromDeleting: true }) : undefined;
  return unpauseStep(s, role);
};

export const firstStep = <T>(items: readonly T[], plan: (item: T) => Step | undefined): Step | undefined => {
  for (const item of items) {
    const step = plan(item);
    if (step) return step;
  }
  return undefined;
};

export interface Holding {
  object: KubeObject | undefined;
  /** The holder's concrete finalizers; undefined when the platform finalizer is unknown. */
  finalizers: string[] | undefined;
  present: string[];
  missing: string[];
}

export const holding = (s: HandoverSnapshot, holder: FinalizerHolder): Holding => {
  const object = objectOf(s, holder.role);
  const finalizers = resolveFinalizers(holder, object);
  const have = finalizersOf(object);
  return {
    object,
    finalizers,
    present: (finalizers ?? []).filter((f) => have.includes(f)),
    missing: (finalizers ?? []).filter((f) => !have.includes(f)),
  };
};

export const addFinalizersStep = (s: HandoverSnapshot, holder: FinalizerHolder): Step | undefined => {
  const h = holding(s, holder);
  // The API server refuses new finalizers on a deleting object; such objects follow §3.5 instead.
  if (!h.object || isDeleting(h.object) || h.missing.length === 0) return undefined;
  return {
    kind: "addFinalizers",
    target: refOf(holder.role, h.object),
    finalizers: h.missing,
    observed: finalizersOf(h.object),
  };
};

export const removeFinalizersStep = (
  s: HandoverSnapshot,
  holder: FinalizerHolder,
  options: { fromDeleting: boolean },
): Step | undefined => {
  const h = holding(s, holder);
  if (!h.object || h.present.length === 0) return undefined;
  if (isDeleting(h.object) && !options.fromDeleting) return undefined;
  return {
    kind: "removeFinalizers",
    target: refOf(holder.role, h.object),
    finalizers: h.present,
    observed: finalizersOf(h.object),
  };
};
