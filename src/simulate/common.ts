/**
 * Small pure helpers the stand-ins share: how each acknowledges a pause (the MAPI `Paused` condition from
 * status.authoritativeAPI, the CAPI/CAPA/CAPO `Paused` condition from the object's own pause annotation),
 * timestamps, and EC2's node name of an instance and default zone (the AWS row of clouds.ts, which holds
 * every platform's). No I/O and no clock here: `now` is always passed in.
 */
import type { Condition, KubeObject } from "../kube/object.js";
import { conditionsOf, getPath, isDeleting, nameOf, setCondition } from "../kube/object.js";
import { isPaused } from "../protocol/pause.js";

/** Kubernetes `metav1.Time`: RFC 3339 to the second (the CRDs' date-time format, no milliseconds). */
export const timestamp = (nowMs: number): string => new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The string at `path`, or "" when absent or not a string. */
export const stringAt = (o: unknown, path: readonly string[]): string => {
  const v = getPath(o, path);
  return typeof v === "string" ? v : "";
};

/** Where a zone is not written anywhere the actuator looks, it launches in the simulated region's first zone. */
export const DEFAULT_ZONE = "us-east-1a";

/** Simulated EC2 private DNS name of an instance's node (stable per instance id). */
export const nodeNameFor = (instanceId: string): string => {
  const n = Number.parseInt(instanceId.slice(-6), 16) || 0;
  return `ip-10-0-${(n >> 8) & 0xff}-${n & 0xff}.ec2.internal`;
};

/**
 * The conditions with `Paused` set as MAO writes it (SPEC §1): False while its controllers act (status
 * `MachineAPI`), True once they stopped (`ClusterAPI`, `Migrating`). MAPI condition shape, so `severity`
 * is present (empty for False). Undefined when nothing would change.
 */
export function mapiPausedConditions(
  o: KubeObject,
  statusAuthority: string,
  nowMs: number,
): Condition[] | undefined {
  const active = statusAuthority === "MachineAPI";
  const before = conditionsOf(o);
  const after = setCondition(
    before,
    active
      ? {
          type: "Paused",
          status: "False",
          reason: "AuthoritativeAPIMachineAPI",
          message: "The AuthoritativeAPI status is set to 'MachineAPI'",
          severity: "",
        }
      : {
          type: "Paused",
          status: "True",
          reason: "AuthoritativeAPINotMachineAPI",
          message: `The AuthoritativeAPI status is set to '${statusAuthority}'`,
          severity: "Info",
        },
    new Date(nowMs),
  );
  return after === before ? undefined : [...after];
}

/**
 * The conditions with the CAPI v1beta2 `Paused` condition as Cluster API and CAPA write it: True (reason
 * `Paused`) while the object carries the pause annotation, False (`NotPaused`) otherwise; `reason` and
 * `lastTransitionTime` are required by the CRDs. Undefined when nothing would change.
 */
export function capiPausedConditions(o: KubeObject, nowMs: number): Condition[] | undefined {
  const paused = isPaused(o);
  const before = conditionsOf(o);
  const generation =
    typeof o.metadata?.generation === "number" ? { observedGeneration: o.metadata.generation } : {};
  const after = setCondition(
    before,
    paused
      ? { type: "Paused", status: "True", reason: "Paused", message: "Object is paused", ...generation }
      : { type: "Paused", status: "False", reason: "NotPaused", message: "", ...generation },
    new Date(nowMs),
  );
  return after === before ? undefined : [...after];
}

/** `spec.replicas` of a MachineSet; absent means 1, as both APIs default it. */
export const desiredReplicas = (set: KubeObject): number => {
  const replicas = getPath(set, ["spec", "replicas"]);
  return typeof replicas === "number" ? replicas : 1;
};

/**
 * A set's replicas as its controller counts them: cached children neither deleting nor just deleted, plus
 * children just created that the cache does not show yet. `live` are the cached ones a scale-down may pick.
 */
export function liveReplicas(
  children: readonly KubeObject[],
  pendingCreates: readonly string[],
  pendingDeletes: readonly string[],
): { live: KubeObject[]; count: number } {
  const live = children.filter((m) => !isDeleting(m) && !pendingDeletes.includes(nameOf(m)));
  const unseen = pendingCreates.filter((n) => !children.some((m) => nameOf(m) === n));
  return { live, count: live.length + unseen.length };
}

export const assertNever = (x: never): never => {
  throw new Error(`unhandled action ${JSON.stringify(x)}`);
};

/**
 * The replica counts a set controller reports once it has nothing to create or delete: every live child,
 * and the Running ones as ready and available. `fullyLabeled` adds MAPI's `fullyLabeledReplicas`.
 * Undefined when the set's status already says so.
 */
export function replicaStatus(
  set: KubeObject,
  live: readonly KubeObject[],
  fullyLabeled: boolean,
): Record<string, number> | undefined {
  const running = live.filter((m) => stringAt(m, ["status", "phase"]) === "Running").length;
  const desired: Record<string, number> = {
    replicas: live.length,
    readyReplicas: running,
    availableReplicas: running,
    ...(fullyLabeled ? { fullyLabeledReplicas: live.length } : {}),
    ...(typeof set.metadata?.generation === "number" ? { observedGeneration: set.metadata.generation } : {}),
  };
  const current = getPath(set, ["status"]);
  const same = Object.entries(desired).every(([k, v]) => getPath(current, [k]) === v);
  return same ? undefined : desired;
}
