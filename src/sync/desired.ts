/**
 * The desired twins (SPEC §4.3, §4.4): what the controllers add to a converter result before it is
 * compared with the live object — owner references, the `set-name` label, the template label, the pause
 * annotation with its marker, the sync finalizer on creates, the InfraMachine's replacement record — and
 * what they strip from a CAPI→MAPI result (never `spec.authoritativeAPI`, `spec.template.spec.authoritativeAPI`,
 * `selector` or finalizers). Also the unsupported-owner checks and the delete marks carried both ways with
 * their record, the one exception to one-way sync. Pure; the converter itself never sets any of this (§5).
 */
import type { StatusAuthority } from "../kube/kinds.js";
import {
  ANNOTATIONS,
  AUTHORITY,
  CAPI_API_VERSION,
  DELETE_MARKS,
  FINALIZERS,
  KINDS,
  LABELS,
  PAUSED_BY_VALUE,
  PRODUCT_PREFIX,
} from "../kube/kinds.js";
import type { KubeObject, OwnerReference } from "../kube/object.js";
import { annotationsOf, generationOf, isRecord, nameOf, ownerReferencesOf } from "../kube/object.js";

/**
 * Records on an InfraMachine the MAPI generation it was created for, so "at most one replacement per MAPI
 * generation" (§4.3) survives restarts and leader changes without a write to the authoritative MAPI object.
 */
export const CREATED_FOR_GENERATION = `${PRODUCT_PREFIX}/created-for-generation`;

export const PAUSE_ANNOTATIONS: Readonly<Record<string, string>> = Object.freeze({
  [ANNOTATIONS.paused]: "",
  [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE,
});

/** The CAPI twin must be paused (with the marker) whenever MAPI is or was just authoritative (§0). */
export const capiMustBePaused = (status: StatusAuthority | undefined): boolean =>
  status === AUTHORITY.machineAPI || status === AUTHORITY.migrating;

const withoutProductAnnotations = (annotations: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(annotations).filter(([k]) => !k.startsWith(`${PRODUCT_PREFIX}/`)));

/**
 * A converter result with the controllers' metadata cleared (it should carry none; be sure). A shallow copy:
 * everything here and below replaces what it changes instead of editing it, so the converter's result (which
 * a memoising converter hands out again, frozen) is never written to.
 */
const base = (converted: KubeObject): KubeObject => {
  const { status: _status, ...o } = converted;
  const metadata = { ...(o.metadata ?? {}) };
  delete metadata.finalizers;
  delete metadata.ownerReferences;
  delete metadata.resourceVersion;
  delete metadata.uid;
  delete metadata.generation;
  delete metadata.creationTimestamp;
  delete metadata.managedFields;
  metadata.annotations = withoutProductAnnotations(annotationsOf(converted));
  o.metadata = metadata;
  return o;
};

const setAnnotations = (o: KubeObject, extra: Record<string, string>): void => {
  o.metadata = { ...(o.metadata ?? {}), annotations: { ...annotationsOf(o), ...extra } };
};
const setLabel = (o: KubeObject, key: string, value: string): void => {
  o.metadata = { ...(o.metadata ?? {}), labels: { ...(o.metadata?.labels ?? {}), [key]: value } };
};
const setOwner = (o: KubeObject, ref: OwnerReference): void => {
  o.metadata = { ...(o.metadata ?? {}), ownerReferences: [ref] };
};

const ownerRefTo = (owner: KubeObject, controller: boolean): OwnerReference | undefined => {
  const uid = owner.metadata?.uid;
  if (!uid) return undefined;
  return {
    apiVersion: owner.apiVersion ?? CAPI_API_VERSION,
    kind: owner.kind ?? "",
    name: nameOf(owner),
    uid,
    ...(controller ? { controller: true } : {}),
    blockOwnerDeletion: true,
  };
};

/** The create body: the desired object with the sync finalizer (every twin the sync creates holds it, §4.6). */
export const forCreate = (desired: KubeObject): KubeObject => ({
  ...desired,
  metadata: { ...(desired.metadata ?? {}), finalizers: [FINALIZERS.sync] },
});

const controllerRef = (o: KubeObject | undefined, kind: string, groupPrefix: string) =>
  ownerReferencesOf(o).find(
    (r) => r.controller === true && r.kind === kind && r.apiVersion.startsWith(`${groupPrefix}/`),
  );

/** Machines owned by a ControlPlaneMachineSet are not synchronized (§4.3); returns the owner's description. */
export const unsupportedMachineOwner = (mapi: KubeObject): string | undefined => {
  const cpms = ownerReferencesOf(mapi).find((r) => r.kind === "ControlPlaneMachineSet");
  return cpms ? `ControlPlaneMachineSet ${cpms.name}` : undefined;
};

/** MachineSets with any owner reference are not synchronized (§4.3). */
export const unsupportedMachineSetOwner = (mapi: KubeObject): string | undefined => {
  const ref = ownerReferencesOf(mapi)[0];
  return ref ? `${ref.kind} ${ref.name}` : undefined;
};

/**
 * A CAPI MachineSet owned by anything but the CAPI `Cluster` (a MachineDeployment) is driven by that owner:
 * never mirrored nor handed over (upstream: `Synchronized=False`). The sync itself sets only the Cluster.
 */
export const unsupportedCapiMachineSetOwner = (capi: KubeObject | undefined): string | undefined => {
  const ref = ownerReferencesOf(capi).find(
    (r) => !(r.kind === KINDS.capiCluster.kind && r.apiVersion.startsWith(`${KINDS.capiCluster.group}/`)),
  );
  return ref ? `${ref.kind} ${ref.name}` : undefined;
};

export interface DesiredCapiMachineInput {
  converted: { machine: KubeObject; infraMachine: KubeObject };
  mapi: KubeObject;
  status: StatusAuthority;
  /** The CAPI MachineSet twin of the MAPI Machine's MAPI owner, when it has one. */
  capiTwinOfMapiOwner?: KubeObject;
  cluster?: KubeObject;
  liveCapi?: KubeObject;
  liveInfraMachine?: KubeObject;
  /** Born-ClusterAPI twins are created unpaused (§4.2). */
  paused: boolean;
}

/** §4.3 MAPI → CAPI Machine: the CAPI Machine and InfraMachine the sync wants. */
export const desiredCapiMachine = (
  input: DesiredCapiMachineInput,
): { machine: KubeObject; infraMachine: KubeObject } => {
  const machine = base(input.converted.machine);
  const infraMachine = base(input.converted.infraMachine);
  const mapiOwner = controllerRef(input.mapi, "MachineSet", "machine.openshift.io");
  if (mapiOwner) {
    setLabel(machine, LABELS.capiSetName, mapiOwner.name);
    const ref = input.capiTwinOfMapiOwner && ownerRefTo(input.capiTwinOfMapiOwner, true);
    if (ref) setOwner(machine, ref);
  } else if (input.cluster) {
    const ref = ownerRefTo(input.cluster, false);
    if (ref) setOwner(machine, ref);
  }
  const machineRef = input.liveCapi && ownerRefTo(input.liveCapi, true);
  if (machineRef) setOwner(infraMachine, machineRef);
  if (input.paused) {
    setAnnotations(machine, PAUSE_ANNOTATIONS);
    setAnnotations(infraMachine, PAUSE_ANNOTATIONS);
  }
  // Keep the record the live InfraMachine carries (apply would otherwise remove it); a new one gets ours.
  const recorded = annotationsOf(input.liveInfraMachine)[CREATED_FOR_GENERATION];
  setAnnotations(infraMachine, { [CREATED_FOR_GENERATION]: recorded ?? String(generationOf(input.mapi)) });
  return { machine, infraMachine };
};

export interface DesiredCapiMachineSetInput {
  converted: { machineSet: KubeObject; infraTemplate: KubeObject };
  mapi: KubeObject;
  cluster?: KubeObject;
  paused: boolean;
}

/** §4.3 MAPI → CAPI MachineSet: the CAPI MachineSet (owned by the Cluster) and its labelled template. */
export const desiredCapiMachineSet = (
  input: DesiredCapiMachineSetInput,
): { machineSet: KubeObject; infraTemplate: KubeObject } => {
  const machineSet = base(input.converted.machineSet);
  const infraTemplate = base(input.converted.infraTemplate);
  const ref = input.cluster && ownerRefTo(input.cluster, false);
  if (ref) setOwner(machineSet, ref);
  setLabel(infraTemplate, LABELS.templateMachineSet, nameOf(input.mapi));
  if (input.paused) {
    setAnnotations(machineSet, PAUSE_ANNOTATIONS);
    setAnnotations(infraTemplate, PAUSE_ANNOTATIONS);
  }
  return { machineSet, infraTemplate };
};

/** `o` without the field at `path` (a copy along the path when it is there; `o` itself when it is not). */
const withoutPath = (
  o: Record<string, unknown>,
  [head, ...rest]: readonly string[],
): Record<string, unknown> => {
  if (head === undefined || !Object.hasOwn(o, head)) return o;
  if (rest.length === 0) {
    const { [head]: _removed, ...kept } = o;
    return kept;
  }
  const child = o[head];
  if (!isRecord(child)) return o;
  const next = withoutPath(child, rest);
  return next === child ? o : { ...o, [head]: next };
};

/**
 * §4.4 CAPI → MAPI: the converted MAPI object without what the sync must never write into an existing MAPI
 * object: `spec.authoritativeAPI`, `spec.template.spec.authoritativeAPI`, `spec.selector`, finalizers.
 */
export const desiredMapi = (converted: KubeObject): KubeObject => {
  const o = base(converted);
  if (isRecord(o.spec)) {
    o.spec = [["authoritativeAPI"], ["template", "spec", "authoritativeAPI"], ["selector"]].reduce(
      withoutPath,
      o.spec,
    );
  }
  return o;
};

/** §4.2: the MAPI mirror of a CAPI-only Machine of a mirrored set: ClusterAPI, owned by that MAPI set. */
export const mirrorMapiMachine = (converted: KubeObject, mapiMachineSet: KubeObject): KubeObject => {
  const o = desiredMapi(converted);
  o.spec = { ...(o.spec ?? {}), authoritativeAPI: AUTHORITY.clusterAPI };
  const ref = ownerRefTo(mapiMachineSet, true);
  if (ref) setOwner(o, ref);
  return forCreate(o);
};

/**
 * §4.4: what the sync last carried, recorded on the MAPI Machine — the delete marks (keys, sorted, as JSON) the
 * two copies carried when the sync last saw them agree; absent when neither was marked. A mark on one copy
 * only is then told apart: an addition there when nothing is recorded, a removal from the other copy when a
 * mark is. It lives on the object, so a restart or a new leader decides the same way.
 */
export const SYNCED_DELETE_MARKS = `${PRODUCT_PREFIX}/synced-delete-marks`;

/** Each copy's own spellings, the ones its MachineSet controller honours. */
const MAPI_MARKS = DELETE_MARKS.filter((k) => k.startsWith("machine.openshift.io/"));
const CAPI_MARKS = DELETE_MARKS.filter((k) => k.startsWith("cluster.x-k8s.io/"));
const MAPI_MARK = MAPI_MARKS[0] ?? "machine.openshift.io/delete-machine";
const CAPI_MARK = CAPI_MARKS[0] ?? "cluster.x-k8s.io/delete-machine";

/** Annotation changes for one object, as a JSON merge patch of `metadata.annotations`: null removes a key. */
export type AnnotationChanges = Record<string, string | null>;

export interface CarriedDeleteMarks {
  /** Whether the Machine is marked for deletion once the marks are carried. */
  marked: boolean;
  /** Changes to the MAPI Machine's annotations, the record included; empty when none. */
  mapi: AnnotationChanges;
  /** Changes to the CAPI Machine's annotations (or, when it does not exist yet, the marks it is created with). */
  capi: AnnotationChanges;
}

const recordsAMark = (mapi: KubeObject): boolean => {
  const text = annotationsOf(mapi)[SYNCED_DELETE_MARKS];
  if (text === undefined) return false;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) && parsed.length > 0;
  } catch {
    // Only controllers may write it (rule product-annotations); unreadable reads as "nothing carried".
    return false;
  }
};

/** The delete-mark keys an object carries once `changes` are applied. */
const marksAfter = (annotations: Record<string, string>, changes: AnnotationChanges): string[] =>
  DELETE_MARKS.filter((k) =>
    Object.hasOwn(changes, k) ? changes[k] !== null : Object.hasOwn(annotations, k),
  );

/**
 * §4.4: delete marks travel both ways (so scale-down works on mixed sets), additions and removals alike. The
 * copies agree → nothing moves. They disagree → the record decides: nothing recorded means the marked copy
 * gained a mark (carried to the other copy, in its own spelling and value); a recorded mark means the other
 * copy lost it (removed from the marked copy, every spelling). The record follows the result. `capi`
 * undefined: the CAPI copy is about to be created, with the MAPI copy's mark.
 */
export const carryDeleteMarks = (mapi: KubeObject, capi: KubeObject | undefined): CarriedDeleteMarks => {
  const mapiAnnotations = annotationsOf(mapi);
  const capiAnnotations = annotationsOf(capi);
  const mapiMark = MAPI_MARKS.find((k) => Object.hasOwn(mapiAnnotations, k));
  const capiMark = CAPI_MARKS.find((k) => Object.hasOwn(capiAnnotations, k));
  const mapiMarked = mapiMark !== undefined;
  const capiMarked = capi === undefined ? mapiMarked : capiMark !== undefined;
  const marked = mapiMarked === capiMarked ? mapiMarked : !recordsAMark(mapi);
  const mapiChanges: AnnotationChanges = {};
  const capiChanges: AnnotationChanges = {};
  if (marked) {
    if (mapiMark === undefined)
      mapiChanges[MAPI_MARK] = capiMark === undefined ? "" : (capiAnnotations[capiMark] ?? "");
    if (capi === undefined || capiMark === undefined)
      capiChanges[CAPI_MARK] = mapiMark === undefined ? "" : (mapiAnnotations[mapiMark] ?? "");
  } else {
    for (const k of DELETE_MARKS) {
      if (Object.hasOwn(mapiAnnotations, k)) mapiChanges[k] = null;
      if (Object.hasOwn(capiAnnotations, k)) capiChanges[k] = null;
    }
  }
  const carried = marked
    ? [...new Set([...marksAfter(mapiAnnotations, mapiChanges), ...marksAfter(capiAnnotations, capiChanges)])]
    : [];
  const record = carried.length > 0 ? JSON.stringify(carried.sort()) : undefined;
  if (record !== mapiAnnotations[SYNCED_DELETE_MARKS]) mapiChanges[SYNCED_DELETE_MARKS] = record ?? null;
  return { marked, mapi: mapiChanges, capi: capiChanges };
};

/**
 * The desired object of an apply or create with the delete marks it may carry, so the apply and the mark
 * writes never undo each other: on an existing object exactly the live marks that are not being removed
 * (the apply neither adds a mark — that is the mark write's job — nor, owning one, drops it); on a create the
 * carried marks.
 */
export const withCarriedDeleteMarks = (
  desired: KubeObject,
  live: KubeObject | undefined,
  changes: AnnotationChanges,
): KubeObject => {
  const annotations = Object.fromEntries(
    Object.entries(annotationsOf(desired)).filter(([k]) => !DELETE_MARKS.includes(k)),
  );
  const source = live === undefined ? {} : annotationsOf(live);
  for (const k of DELETE_MARKS) {
    const change = Object.hasOwn(changes, k) ? changes[k] : undefined;
    if (live === undefined) {
      if (typeof change === "string") annotations[k] = change;
    } else if (change !== null && Object.hasOwn(source, k)) {
      annotations[k] = source[k] ?? "";
    }
  }
  return { ...desired, metadata: { ...(desired.metadata ?? {}), annotations } };
};

/** `o` with `changes` applied to its annotations (for a create body: nothing to remove there yet). */
export const withAnnotationChanges = (o: KubeObject, changes: AnnotationChanges): KubeObject => {
  const annotations: Record<string, string> = { ...annotationsOf(o) };
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) delete annotations[k];
    else annotations[k] = v;
  }
  return { ...o, metadata: { ...(o.metadata ?? {}), annotations } };
};
