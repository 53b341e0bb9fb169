/**
 * What the handover planner sees (SPEC §3): one snapshot of the MAPI object, its CAPI twin, the twin's
 * InfraMachine (Machines) and the candidate member Machines (MachineSets), as the informer cache holds
 * them. The shell builds snapshots; nothing here reads a cache or a clock. The authority fields and pause
 * predicates are src/protocol's.
 */
import type { KubeObject } from "../kube/object.js";
import { getPath } from "../kube/object.js";
import type { ObjectRef as KubeObjectRef } from "../kube/write.js";
import { refOf as kubeRefOf } from "../kube/write.js";
import type { HandoverKind, Role } from "../protocol/pause.js";
import { objectOfRole } from "../protocol/pause.js";

export type { HandoverKind, Role } from "../protocol/pause.js";

/**
 * Candidate member Machines of a MachineSet handover: the Machines of both namespaces that either
 * MachineSet might own or select. The planner itself decides which ones the old-side MachineSet owns or
 * selects (SPEC §3.1 step 4), so the shell may pass every Machine of each namespace or a prefiltered list.
 */
export interface MemberMachines {
  mapi: readonly KubeObject[];
  capi: readonly KubeObject[];
}

export interface HandoverSnapshot {
  kind: HandoverKind;
  /** The MAPI Machine or MachineSet; absent when it is gone from the cache. */
  mapi?: KubeObject;
  /** Its CAPI twin (same name, CAPI namespace). */
  capi?: KubeObject;
  /** Machines only: the InfraMachine the CAPI twin references (AWS: the AWSMachine of the same name). */
  infraMachine?: KubeObject;
  /** MachineSets only. */
  members?: MemberMachines;
  /**
   * Kinds whose informer has not synced. The planner reads "absent" as "deleted", which is only true of
   * a synced cache, so it waits while this is non-empty.
   */
  unsyncedKinds?: readonly string[];
}

/**
 * The object a write goes to (kube/write.ts's ObjectRef), the part it plays, and the resourceVersion the
 * step was computed from: the shell sends it as a precondition (SPEC §7), so a write planned from a stale
 * snapshot fails with 409 instead of landing.
 */
export interface ObjectRef extends KubeObjectRef {
  role: Role;
  resourceVersion: string;
}

export const refOf = (role: Role, object: KubeObject): ObjectRef => ({
  role,
  ...kubeRefOf(object),
  resourceVersion:
    typeof object.metadata?.resourceVersion === "string" ? object.metadata.resourceVersion : "",
});

export const objectOf = (snapshot: HandoverSnapshot, role: Role): KubeObject | undefined =>
  objectOfRole(snapshot, role);

/** The snapshot with `role`'s object replaced: the server's answer to a write of it (decision 91). */
export const withObject = (snapshot: HandoverSnapshot, role: Role, object: KubeObject): HandoverSnapshot => ({
  ...snapshot,
  [role]: object,
});

export const phaseOf = (o: KubeObject | undefined): string => {
  const v = getPath(o, ["status", "phase"]);
  return typeof v === "string" ? v : "";
};
