/**
 * Turns a planner step into the one request that carries it out (SPEC §7 write discipline), so the
 * controller shell only sends what it is given: status and annotation changes are kube/write.ts's merge
 * patch carrying the resourceVersion the step was planned from (a stale plan gets 409); finalizer changes
 * are its finalizer patch, whose `test`s guard the uid, resourceVersion and list that were read. Pure;
 * nothing here talks to a server.
 */
import type { Operation } from "fast-json-patch";
import { finalizersPatch, mergePatchAt } from "../kube/write.js";
import type { ObjectRef } from "./snapshot.js";
import type { Step } from "./steps.js";

export type PatchRequest =
  | {
      target: ObjectRef;
      subresource?: "status";
      patchType: "application/merge-patch+json";
      body: Record<string, unknown>;
    }
  | { target: ObjectRef; patchType: "application/json-patch+json"; body: Operation[] };

const withoutUndefined = (o: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const metadataPatch = (target: ObjectRef, metadata: Record<string, unknown>): PatchRequest => ({
  target,
  patchType: "application/merge-patch+json",
  body: mergePatchAt(target.resourceVersion, { metadata }),
});

/**
 * kube/write.ts's finalizer patch, from what the step was planned from: `test`s of the uid, the
 * resourceVersion and the list observed (SPEC §3.5), then the list after the change. A write whose reply
 * was lost, or an old leader's, can still reach the server later; it must fail rather than land on a state
 * it never saw — the same list again after a roll-back put a finalizer back, or a new object under the
 * same name.
 */
const finalizerPatch = (target: ObjectRef, observed: readonly string[], next: string[]): PatchRequest => ({
  target,
  patchType: "application/json-patch+json",
  body: finalizersPatch(
    { uid: target.uid, resourceVersion: target.resourceVersion, finalizers: observed },
    next,
  ),
});

/** The request that executes `step`, or undefined for steps that write nothing (done, wait, blocked). */
export const requestOf = (step: Step): PatchRequest | undefined => {
  switch (step.kind) {
    case "done":
    case "wait":
    case "blocked":
      return undefined;
    case "initStatus":
    case "setSynchronizedAPI":
    case "startMigration":
    case "completeMigration":
    case "cancelMigration":
      return {
        target: step.target,
        subresource: "status",
        patchType: "application/merge-patch+json",
        body: mergePatchAt(step.target.resourceVersion, { status: withoutUndefined(step.statusPatch) }),
      };
    case "pause":
      return metadataPatch(step.target, { annotations: { ...step.addAnnotations } });
    case "unpause":
      return metadataPatch(step.target, {
        annotations: Object.fromEntries(step.removeAnnotations.map((k) => [k, null])),
      });
    case "recordPausedFalseAt":
      return metadataPatch(step.target, { annotations: { [step.annotation]: step.value } });
    case "addFinalizers":
      return finalizerPatch(step.target, step.observed, [
        ...step.observed,
        ...step.finalizers.filter((f) => !step.observed.includes(f)),
      ]);
    case "removeFinalizers":
      return finalizerPatch(
        step.target,
        step.observed,
        step.observed.filter((f) => !step.finalizers.includes(f)),
      );
    default: {
      const unreachable: never = step;
      return unreachable;
    }
  }
};
