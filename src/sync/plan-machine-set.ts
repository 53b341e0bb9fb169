/**
 * The MachineSet sync planner (SPEC §4.3, §4.4 for MachineSets): MAPI → CAPI — the CAPI MachineSet and its
 * content-addressed InfraMachineTemplate, pointing the set at a new template and deleting outdated labelled
 * ones — and CAPI → MAPI, with the one carry the other way a ClusterAPI set allows: the autoscaler's
 * `replicas` (§2.2), once the delete marks it set are on the CAPI copies. Each function returns the `Draft` of one branch of the fork; plan.ts chooses the
 * branch and folds the draft into the plan. Deletion lives in deletion.ts, the Machine planner in
 * plan-machine.ts. Pure.
 */
import { AUTHORITY, DELETE_MARKS, LABELS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import {
  annotationsOf,
  firstByName,
  generationOf,
  getPath,
  isDeleting,
  isRecord,
  jsonEqual,
  labelsOf,
  nameOf,
  ownerReferencesOf,
} from "../kube/object.js";
import { statusAuthority, synchronizedGeneration } from "../protocol/authority.js";
import { capiUnsupportedOwner, synchronized } from "./condition.js";
import {
  capiMustBePaused,
  desiredCapiMachineSet,
  desiredMapi,
  forCreate,
  unsupportedCapiMachineSetOwner,
} from "./desired.js";
import type { Draft, ToCapiMode } from "./plan-draft.js";
import {
  applyWrite,
  capiStatusWrite,
  clusterNotReady,
  confirmIfBehind,
  createFrom,
  emptyDraft,
  ensureSyncFinalizer,
  forApply,
  notReadyToConvert,
  push,
  takeConversion,
} from "./plan-draft.js";
import type { MachineSetSnapshot, SyncDeps } from "./snapshot.js";
import { infrastructureRefOf } from "./snapshot.js";
import { deleteWrite, setReplicasWrite } from "./writes.js";

const isLabelledFor = (template: KubeObject, setName: string): boolean =>
  labelsOf(template)[LABELS.templateMachineSet] === setName;

/** §4.3 for a MachineSet: its CAPI MachineSet and template from the MAPI MachineSet, and the mirrored status. */
export const machineSetToCapi = (
  s: MachineSetSnapshot,
  deps: SyncDeps,
  now: Date,
  mode: ToCapiMode,
): Draft => {
  const draft = emptyDraft();
  const mapi = s.mapi as KubeObject;
  const notReady = notReadyToConvert(draft, "MachineSet", mapi, s.infrastructure);
  if (notReady || !s.infrastructure) return notReady ?? draft;
  const foreignOwner = unsupportedCapiMachineSetOwner(s.capi);
  if (s.capi && foreignOwner)
    return { ...draft, condition: capiUnsupportedOwner("MachineSet", s.capi, foreignOwner) };
  if (mode !== "final") ensureSyncFinalizer(draft, mapi);
  const converted = takeConversion(
    draft,
    "MachineSet",
    "MAPItoCAPI",
    deps.converter.mapiMachineSetToCapi(mapi, s.infrastructure, {
      capiNamespace: deps.settings.capiNamespace,
    }),
  );
  if ("failed" in converted) return converted.failed;
  const desired = desiredCapiMachineSet({
    converted: converted.value,
    mapi,
    ...(s.cluster ? { cluster: s.cluster } : {}),
    paused: capiMustBePaused(statusAuthority(mapi)),
  });
  // Templates are immutable and content-addressed: the right content has the right name (§4.3).
  const templateName = nameOf(desired.infraTemplate);
  const liveTemplate = s.templates.find((t) => nameOf(t) === templateName);
  const blocked = clusterNotReady(s);
  let templateReady = true;
  if (!liveTemplate) {
    if (blocked) {
      templateReady = false;
      draft.waitingFor = blocked;
    } else createFrom(draft, mapi, desired.infraTemplate);
  } else if (isDeleting(liveTemplate)) {
    templateReady = false;
    draft.waitingFor = `the deleting template ${templateName} to go away`;
  } else {
    const { spec: _immutable, ...metadataOnly } = desired.infraTemplate;
    push(draft, applyWrite(metadataOnly, liveTemplate));
  }
  const twinReady = s.capi !== undefined || (templateReady && !blocked);
  if (!s.capi) {
    if (twinReady) createFrom(draft, mapi, forCreate(desired.machineSet));
    else draft.waitingFor ??= blocked;
  } else {
    if (templateReady) push(draft, applyWrite(forApply(desired.machineSet), s.capi));
    if (mode !== "final") ensureSyncFinalizer(draft, s.capi);
  }
  // Outdated labelled templates go only once the live set points at the new one; hand-made ones stay.
  const referenced = infrastructureRefOf(s.capi)?.name;
  const outdated = s.templates.filter(
    (t) =>
      isLabelledFor(t, s.name) &&
      nameOf(t) !== templateName &&
      nameOf(t) !== referenced &&
      !isDeleting(t) &&
      !(s.templatesReferencedElsewhere ?? []).includes(nameOf(t)),
  );
  const pointsAtNew = referenced === templateName;
  if (pointsAtNew) for (const t of outdated) push(draft, deleteWrite(t));
  const stale = s.templates.some(
    (t) =>
      isLabelledFor(t, s.name) &&
      nameOf(t) !== templateName &&
      !isDeleting(t) &&
      !(s.templatesReferencedElsewhere ?? []).includes(nameOf(t)),
  );
  if (mode !== "born" && s.capi) {
    const mirrored = deps.converter.mapiMachineSetStatusToCapi(mapi, s.infrastructure);
    if (mirrored.ok) push(draft, capiStatusWrite(s.capi, mirrored.value.status, now));
  }
  if (templateReady && twinReady && !stale) {
    draft.condition = synchronized("MachineSet", "MAPItoCAPI", mode === "final");
    draft.synchronizedGeneration = generationOf(mapi);
  }
  return draft;
};

/** §4.4 for a MachineSet: the MAPI MachineSet from its CAPI MachineSet and template, and the mirrored status. */
export const machineSetToMapi = (s: MachineSetSnapshot, deps: SyncDeps, final: boolean): Draft => {
  const draft = emptyDraft();
  const mapi = s.mapi as KubeObject;
  const capi = s.capi as KubeObject;
  const notReady = notReadyToConvert(draft, "MachineSet", mapi, s.infrastructure);
  if (notReady || !s.infrastructure) return notReady ?? draft;
  const foreignOwner = unsupportedCapiMachineSetOwner(capi);
  if (foreignOwner) return { ...draft, condition: capiUnsupportedOwner("MachineSet", capi, foreignOwner) };
  const referenced = infrastructureRefOf(capi)?.name;
  const template = s.templates.find((t) => nameOf(t) === referenced);
  if (!template) return { ...draft, waitingFor: `the CAPI MachineSet's template ${referenced ?? "(none)"}` };
  if (!final) {
    ensureSyncFinalizer(draft, mapi);
    ensureSyncFinalizer(draft, capi);
  }
  const converted = takeConversion(
    draft,
    "MachineSet",
    "CAPItoMAPI",
    deps.converter.capiMachineSetToMapi(capi, template, s.infrastructure, {
      mapiNamespace: deps.settings.mapiNamespace,
    }),
  );
  if ("failed" in converted) return converted.failed;
  // §2.2: the autoscaler's replicas on the MAPI copy are carried to the CAPI copy, never undone by this apply.
  const carry = final ? NO_CARRY : replicasToCarry(s);
  const desired = desiredMapi(converted.value.machineSet);
  push(draft, applyWrite(carry.kind === "none" ? desired : withReplicas(desired, carry.replicas), mapi));
  const mirrored = deps.converter.capiMachineSetStatusToMapi(capi);
  if (mirrored.ok) draft.mirroredMapiStatus = mirrored.value.status;
  if (carry.kind === "wait") {
    draft.waitingFor = `the delete marks of ${carry.unmirrored.join(", ")} to reach their CAPI copies before carrying replicas ${carry.replicas}`;
    draft.requeue = "backoff";
    return draft;
  }
  if (carry.kind === "carry") push(draft, setReplicasWrite(capi, carry.replicas));
  confirmIfBehind(draft, capi, mapi);
  draft.condition = synchronized("MachineSet", "CAPItoMAPI", final);
  // The carry is a guarded patch of exactly what was read, so it makes the CAPI copy's next generation: the
  // MAPI copy is in sync with that one, and a later scale of the MAPI copy is told apart from a CAPI edit.
  draft.synchronizedGeneration = generationOf(capi) + (carry.kind === "carry" ? 1 : 0);
  return draft;
};

/**
 * SPEC §2.2: whether the sync carries `spec.replicas` of a ClusterAPI set's MAPI copy to its CAPI copy.
 * `none`: the copies agree, or the CAPI copy changed since the last sync (the authoritative copy wins, and
 * the sync mirrors it as usual). `wait`: someone other than the sync scaled the MAPI copy, but a delete mark
 * on one of its Machines is not yet on that Machine's CAPI copy — carrying now would let Cluster API remove
 * a Machine the autoscaler did not choose. `carry`: every such mark is visible there.
 */
export type ReplicasCarry =
  | { kind: "none" }
  | { kind: "wait"; replicas: number; unmirrored: string[] }
  | { kind: "carry"; replicas: number };

const NO_CARRY: ReplicasCarry = { kind: "none" };

const replicasOf = (o: KubeObject | undefined): number | undefined => {
  const v = getPath(o, ["spec", "replicas"]);
  return typeof v === "number" ? v : undefined;
};

const hasDeleteMark = (o: KubeObject | undefined): boolean =>
  DELETE_MARKS.some((k) => Object.hasOwn(annotationsOf(o), k));

/**
 * Whether an update of a member Machine changes what a MachineSet's plan reads of it: its owners (who is a
 * member, and whose owner reference §4.6 removes), whether it is being deleted, and whether it carries a
 * delete mark (§2.2, §4.4; of the CAPI copy only the mark is read). The watches of a set's Machines wake the
 * set for nothing else (controller.ts).
 */
export const memberFactsChanged = (before: KubeObject, after: KubeObject): boolean =>
  isDeleting(before) !== isDeleting(after) ||
  hasDeleteMark(before) !== hasDeleteMark(after) ||
  !jsonEqual(ownerReferencesOf(before), ownerReferencesOf(after));

/**
 * The MAPI copy's replicas were set by someone other than the sync when they differ from the CAPI copy's
 * while the CAPI copy is the generation the MAPI copy was last synchronised from: the sync's own writes only
 * ever make the MAPI copy equal to that generation (docs/decisions.md: why not managedFields).
 */
export const replicasSetOnMapiCopy = (mapi: KubeObject, capi: KubeObject): number | undefined => {
  const wanted = replicasOf(mapi);
  if (wanted === undefined || wanted === replicasOf(capi)) return undefined;
  if (synchronizedGeneration(mapi) !== generationOf(capi)) return undefined;
  return wanted;
};

/** Marked MAPI Machines of the set whose CAPI copy does not show a delete mark yet (names, sorted). */
export const unmirroredDeleteMarks = (
  mapiMachines: readonly KubeObject[],
  capiMachines: readonly KubeObject[],
): string[] => {
  const capiByName = firstByName(capiMachines);
  return mapiMachines
    .filter((m) => !isDeleting(m) && hasDeleteMark(m) && !hasDeleteMark(capiByName.get(nameOf(m))))
    .map(nameOf)
    .sort();
};

export const replicasToCarry = (s: MachineSetSnapshot): ReplicasCarry => {
  const { mapi, capi } = s;
  if (!mapi || !capi || isDeleting(mapi) || isDeleting(capi)) return NO_CARRY;
  if (statusAuthority(mapi) !== AUTHORITY.clusterAPI) return NO_CARRY;
  const replicas = replicasSetOnMapiCopy(mapi, capi);
  if (replicas === undefined) return NO_CARRY;
  const unmirrored = unmirroredDeleteMarks(s.mapiMachines, s.capiMachines ?? []);
  return unmirrored.length > 0 ? { kind: "wait", replicas, unmirrored } : { kind: "carry", replicas };
};

const withReplicas = (o: KubeObject, replicas: number): KubeObject => ({
  ...o,
  spec: { ...(isRecord(o.spec) ? o.spec : {}), replicas },
});
