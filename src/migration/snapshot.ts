/**
 * What the handover planner sees (SPEC §3): one snapshot of the MAPI object, its CAPI twin, the twin's
 * InfraMachine (Machines) and the candidate member Machines (MachineSets), as the informer cache holds
 * them, plus small pure accessors for the authority fields of SPEC §1. The shell builds snapshots; nothing
 * here reads a cache or a clock.
 */
import type { StableAuthority, StatusAuthority } from "../kube/kinds.js";
import { ANNOTATIONS, AUTHORITY, PAUSED_BY_VALUE } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { annotationsOf, getPath, nameOf, namespaceOf } from "../kube/object.js";

export type HandoverKind = "Machine" | "MachineSet";

/** The objects of one handover, by the part they play. */
export type Role = "mapi" | "capi" | "infraMachine";

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
 * The object a write goes to, with the resourceVersion the step was computed from: the shell sends it as
 * a precondition (SPEC §7), so a write planned from a stale snapshot fails with 409 instead of landing.
 */
export interface ObjectRef {
  role: Role;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
  resourceVersion: string;
}

export const refOf = (role: Role, object: KubeObject): ObjectRef => {
  const ref: ObjectRef = {
    role,
    apiVersion: typeof object.apiVersion === "string" ? object.apiVersion : "",
    kind: typeof object.kind === "string" ? object.kind : "",
    namespace: namespaceOf(object),
    name: nameOf(object),
    resourceVersion:
      typeof object.metadata?.resourceVersion === "string" ? object.metadata.resourceVersion : "",
  };
  if (typeof object.metadata?.uid === "string") ref.uid = object.metadata.uid;
  return ref;
};

export const objectOf = (snapshot: HandoverSnapshot, role: Role): KubeObject | undefined =>
  role === "mapi" ? snapshot.mapi : role === "capi" ? snapshot.capi : snapshot.infraMachine;

const isStable = (v: unknown): v is StableAuthority =>
  v === AUTHORITY.machineAPI || v === AUTHORITY.clusterAPI;

export const opposite = (a: StableAuthority): StableAuthority =>
  a === AUTHORITY.machineAPI ? AUTHORITY.clusterAPI : AUTHORITY.machineAPI;

/**
 * `spec.authoritativeAPI`. The CRD defaults an omitted value to MachineAPI, so absent reads as MachineAPI;
 * a value outside the enum reads as undefined (admission rule `authority-enum` refuses it).
 */
export const specAuthorityOf = (mapi: KubeObject): StableAuthority | undefined => {
  const v = getPath(mapi, ["spec", "authoritativeAPI"]);
  if (v === undefined || v === "") return AUTHORITY.machineAPI;
  return isStable(v) ? v : undefined;
};

export type StatusAuthorityReading = StatusAuthority | "absent" | "invalid";

export const statusAuthorityOf = (mapi: KubeObject): StatusAuthorityReading => {
  const v = getPath(mapi, ["status", "authoritativeAPI"]);
  if (v === undefined || v === "") return "absent";
  return isStable(v) || v === AUTHORITY.migrating ? v : "invalid";
};

export const synchronizedAPIOf = (mapi: KubeObject): StableAuthority | undefined => {
  const v = getPath(mapi, ["status", "synchronizedAPI"]);
  return isStable(v) ? v : undefined;
};

export const synchronizedGenerationOf = (mapi: KubeObject): number => {
  const v = getPath(mapi, ["status", "synchronizedGeneration"]);
  return typeof v === "number" ? v : 0;
};

export const phaseOf = (o: KubeObject | undefined): string => {
  const v = getPath(o, ["status", "phase"]);
  return typeof v === "string" ? v : "";
};

/** Presence alone pauses a CAPI object (SPEC §0), whatever the value. */
export const hasPause = (o: KubeObject | undefined): boolean =>
  o !== undefined && Object.hasOwn(annotationsOf(o), ANNOTATIONS.paused);

export const hasPauseMarker = (o: KubeObject | undefined): boolean =>
  annotationsOf(o)[ANNOTATIONS.pausedBy] === PAUSED_BY_VALUE;
