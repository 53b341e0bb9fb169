/**
 * The Machine sync planner (SPEC §4.3, §4.4 for Machines): MAPI → CAPI — the CAPI Machine and its
 * InfraMachine, including the guarded InfraMachine replacement — CAPI → MAPI, the MAPI mirror of a CAPI-only
 * Machine of a mirrored MachineSet (§4.2), and the delete marks carried both ways (§4.4). Each function returns
 * the `Draft` of one branch of the fork; plan.ts chooses the branch and folds the draft into the plan.
 * Deletion lives in deletion.ts, the MachineSet planner in plan-machine-set.ts. Pure.
 */
import { AUTHORITY, FINALIZERS, MAPI_GROUP } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import {
  annotationsOf,
  generationOf,
  getPath,
  isDeleting,
  jsonEqual,
  nameOf,
  ownerReferencesOf,
} from "../kube/object.js";
import { machineSetSelects } from "../kube/selector.js";
import { appendAll } from "../lists.js";
import { statusAuthority } from "../protocol/authority.js";
import { isPausedWithMarker, needsAttention, reportsPaused } from "../protocol/pause.js";
import {
  conversionFailed,
  infraMachineMissing,
  infraMachineSpecMismatch,
  mirrorWouldBeAdopted,
  storageBeingRemoved,
  synchronized,
} from "./condition.js";
import {
  type AnnotationChanges,
  CREATED_FOR_GENERATION,
  capiMustBePaused,
  carryDeleteMarks,
  desiredCapiMachine,
  desiredMapi,
  forCreate,
  mirrorMapiMachine,
  withAnnotationChanges,
  withCarriedDeleteMarks,
} from "./desired.js";
import { objectDiff, specPaths } from "./diff.js";
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
  warningEvents,
} from "./plan-draft.js";
import type { MachineSnapshot, SyncDeps } from "./snapshot.js";
import { infrastructureRefOf } from "./snapshot.js";
import type { SyncWrite } from "./writes.js";
import { annotateWrite, deleteWrite, removeFinalizersWrite } from "./writes.js";

/**
 * §4.6: a MachineSet's member gets its CAPI Machine only once the set's CAPI twin exists and is not being
 * deleted, so that the owner reference it is created with is the right one for good.
 */
const memberNotReady = (
  mapi: KubeObject,
  capiTwinOfMapiOwner: KubeObject | undefined,
): string | undefined => {
  const owner = ownerReferencesOf(mapi).find(
    (r) => r.controller === true && r.kind === "MachineSet" && r.apiVersion.startsWith(`${MAPI_GROUP}/`),
  );
  if (!owner) return undefined;
  if (!capiTwinOfMapiOwner) return `the CAPI twin of MachineSet ${owner.name}`;
  if (isDeleting(capiTwinOfMapiOwner)) return `the deleting CAPI MachineSet ${owner.name} to go`;
  return undefined;
};

/**
 * Whether an update of a MachineSet concerns the Machines of either API it controls (§4.1): a Machine's plan
 * reads of its sets only their identity (the owner reference, §4.3), their deletion (§4.6) and a CAPI set's
 * selector (whether it would adopt a mirror, §4.6) — not the replicas an autoscaler or `oc scale` writes, nor
 * labels, annotations, finalizers, template or status, each of which woke every member (decision 144).
 */
export const ownerSetFactsChanged = (before: KubeObject, after: KubeObject): boolean =>
  before.metadata?.uid !== after.metadata?.uid ||
  isDeleting(before) !== isDeleting(after) ||
  !jsonEqual(getPath(before, ["spec", "selector"]), getPath(after, ["spec", "selector"]));

/** How soon a mirror held back for a set that would adopt it is looked at again without any event. */
const ADOPTION_RECHECK_MS = 30_000;

/**
 * §4.6: the CAPI MachineSet that would adopt `machine` once created — one whose selector matches its labels,
 * when no controller owns it. Cluster API's MachineSet controller adopts such Machines, and a deleting set
 * deletes them: a mirror it took would be Cluster API's to delete, and that delete would reach the MAPI Machine.
 */
const adoptingSet = (
  machine: KubeObject,
  sets: readonly KubeObject[] | undefined,
): KubeObject | undefined => {
  if (ownerReferencesOf(machine).some((r) => r.controller === true)) return undefined;
  return sets?.find((set) => machineSetSelects(set, machine));
};

/** The delete-mark write for one copy of a Machine (§4.4), when anything changes. */
const deleteMarkWrite = (o: KubeObject, changes: AnnotationChanges): SyncWrite | undefined =>
  Object.keys(changes).length > 0 ? annotateWrite(o, changes, "deleteMark") : undefined;

/** The InfraMachine part of §4.3, including the guarded replacement. Returns whether it is in sync. */
const planInfraMachine = (
  draft: Draft,
  s: MachineSnapshot,
  desired: KubeObject,
  mode: ToCapiMode,
): "synced" | "pending" | "mismatch" => {
  const live = s.infraMachine;
  const mapi = s.mapi as KubeObject;
  if (!live) {
    const blocked = clusterNotReady(s);
    if (blocked) {
      draft.waitingFor = blocked;
      return "pending";
    }
    createFrom(draft, mapi, forCreate(desired));
    return "synced";
  }
  const replaceable =
    statusAuthority(mapi) === AUTHORITY.machineAPI &&
    mode === "steady" &&
    isPausedWithMarker(live) &&
    !needsAttention(live);
  if (isDeleting(live)) {
    // Our replacement (or a deletion of the paused mirror): release exactly that uid, then recreate — but
    // never while its storage is going (SPEC §4.6: a namespace or CRD being deleted removes no finalizer).
    if (replaceable && s.storageBeingRemoved === undefined) {
      draft.needsStorageCheck = true;
    } else if (replaceable && s.storageBeingRemoved) {
      // Reported as well as held (§4.6): this can be the first sign, before the CAPI Machine is seen deleting.
      draft.condition = storageBeingRemoved("Machine");
      draft.waitingFor = "storage being removed: the deleting InfraMachine keeps its finalizers";
    } else if (replaceable) {
      push(
        draft,
        removeFinalizersWrite(live, [
          ...(live.metadata?.finalizers ?? []).filter((f) => f.includes("cluster.x-k8s.io")),
          FINALIZERS.sync,
        ]),
      );
    } else {
      draft.waitingFor = "the deleting InfraMachine to go away";
    }
    return "pending";
  }
  const applied = forApply(desired);
  const diff = objectDiff(applied, live);
  const specDiff = specPaths(diff);
  if (specDiff.length === 0) {
    push(draft, applyWrite(applied, live, diff));
    return "synced";
  }
  const alreadyReplacedThisGeneration =
    annotationsOf(live)[CREATED_FOR_GENERATION] === String(generationOf(mapi));
  if (replaceable && reportsPaused(live) && !alreadyReplacedThisGeneration) {
    push(draft, deleteWrite(live));
    return "pending";
  }
  draft.condition = infraMachineSpecMismatch(live, specDiff);
  draft.waitingFor = !replaceable
    ? "InfraMachine replacement refused: needs MachineAPI, the product's pause marker and no needs-attention"
    : !reportsPaused(live)
      ? "InfraMachine replacement waits for its Paused=True"
      : "InfraMachine was already replaced for this MAPI generation";
  return "mismatch";
};

/** §4.3 for a Machine: its CAPI Machine and InfraMachine from the MAPI Machine, and the mirrored status. */
export const machineToCapi = (s: MachineSnapshot, deps: SyncDeps, now: Date, mode: ToCapiMode): Draft => {
  const draft = emptyDraft();
  const mapi = s.mapi as KubeObject;
  const notReady = notReadyToConvert(draft, "Machine", mapi, s.infrastructure);
  if (notReady || !s.infrastructure) return notReady ?? draft;
  if (mode !== "final") ensureSyncFinalizer(draft, mapi);
  const converted = takeConversion(
    draft,
    "Machine",
    "MAPItoCAPI",
    deps.converter.mapiMachineToCapi(mapi, s.infrastructure, { capiNamespace: deps.settings.capiNamespace }),
  );
  if ("failed" in converted) return converted.failed;
  const status = statusAuthority(mapi);
  const desired = desiredCapiMachine({
    converted: converted.value,
    mapi,
    status: status ?? AUTHORITY.machineAPI,
    ...(s.capiTwinOfMapiOwner ? { capiTwinOfMapiOwner: s.capiTwinOfMapiOwner } : {}),
    ...(s.cluster ? { cluster: s.cluster } : {}),
    ...(s.capi ? { liveCapi: s.capi } : {}),
    ...(s.infraMachine ? { liveInfraMachine: s.infraMachine } : {}),
    paused: capiMustBePaused(status),
  });
  // Delete marks travel both ways (§4.4): the CAPI copy changes first, the MAPI copy and its record after.
  const marks = carryDeleteMarks(mapi, s.capi);
  const machine = withCarriedDeleteMarks(desired.machine, s.capi, marks.capi);

  if (!s.capi) {
    const blocked = clusterNotReady(s) ?? memberNotReady(mapi, s.capiTwinOfMapiOwner);
    if (blocked) return { ...draft, waitingFor: blocked };
    const adopter = adoptingSet(machine, s.capiMachineSets);
    if (adopter)
      return {
        ...draft,
        condition: mirrorWouldBeAdopted(mapi, adopter),
        waitingFor: `CAPI MachineSet ${nameOf(adopter)}, which would adopt the mirror, to go or stop selecting it`,
        requeue: { afterMs: ADOPTION_RECHECK_MS },
      };
    createFrom(draft, mapi, forCreate(machine));
  } else {
    push(draft, applyWrite(forApply(machine), s.capi));
    push(draft, deleteMarkWrite(s.capi, marks.capi));
    if (mode !== "final") ensureSyncFinalizer(draft, s.capi);
  }
  push(draft, deleteMarkWrite(mapi, marks.mapi));
  const infra = planInfraMachine(draft, s, desired.infraMachine, mode);
  if (infra === "synced" && s.infraMachine && mode !== "final") ensureSyncFinalizer(draft, s.infraMachine);

  if (mode !== "born" && s.capi) {
    const mirrored = deps.converter.mapiMachineStatusToCapi(mapi, s.infrastructure, {
      now: now.toISOString(),
      capiMachine: s.capi,
    });
    if (mirrored.ok) {
      push(draft, capiStatusWrite(s.capi, mirrored.value.machineStatus, now));
      if (s.infraMachine && infra === "synced") {
        push(draft, capiStatusWrite(s.infraMachine, mirrored.value.infraMachineStatus, now));
      }
    }
  }
  if (infra === "synced") {
    draft.condition = synchronized("Machine", "MAPItoCAPI", mode === "final");
    draft.synchronizedGeneration = generationOf(mapi);
  }
  return draft;
};

/** §4.4 for a Machine: the MAPI Machine from its CAPI Machine and InfraMachine, and the mirrored status. */
export const machineToMapi = (s: MachineSnapshot, deps: SyncDeps, now: Date, final: boolean): Draft => {
  const draft = emptyDraft();
  const mapi = s.mapi as KubeObject;
  const capi = s.capi as KubeObject;
  const notReady = notReadyToConvert(draft, "Machine", mapi, s.infrastructure);
  if (notReady || !s.infrastructure) return notReady ?? draft;
  if (!s.infraMachine) {
    // Upstream says so on the MAPI object; the InfraMachine's own watch brings the Machine back (no requeue).
    const ref = infrastructureRefOf(capi);
    return {
      ...draft,
      condition: infraMachineMissing(capi, ref?.kind ?? "InfraMachine", ref?.name ?? nameOf(capi)),
      waitingFor: "the CAPI Machine's InfraMachine",
    };
  }
  if (!final) {
    ensureSyncFinalizer(draft, mapi);
    ensureSyncFinalizer(draft, capi);
    ensureSyncFinalizer(draft, s.infraMachine);
  }
  const converted = takeConversion(
    draft,
    "Machine",
    "CAPItoMAPI",
    deps.converter.capiMachineToMapi(capi, s.infraMachine, s.infrastructure, {
      mapiNamespace: deps.settings.mapiNamespace,
      ...(s.infraCluster ? { infraCluster: s.infraCluster } : {}),
    }),
  );
  if ("failed" in converted) return converted.failed;
  // Delete marks travel both ways (§4.4), the one write the sync makes to the active CAPI side. It goes first:
  // the MAPI copy's record moves only once the CAPI copy has.
  const marks = carryDeleteMarks(mapi, capi);
  push(draft, deleteMarkWrite(capi, marks.capi));
  const desired = withCarriedDeleteMarks(desiredMapi(converted.value.machine), mapi, marks.mapi);
  push(draft, applyWrite(desired, mapi));
  push(draft, deleteMarkWrite(mapi, marks.mapi));
  const mirrored = deps.converter.capiMachineStatusToMapi(capi, s.infraMachine, s.infrastructure, {
    now: now.toISOString(),
    mapiMachine: mapi,
  });
  if (mirrored.ok) draft.mirroredMapiStatus = mirrored.value.status;
  confirmIfBehind(draft, capi, mapi);
  draft.condition = synchronized("Machine", "CAPItoMAPI", final);
  draft.synchronizedGeneration = generationOf(capi);
  return draft;
};

/** §4.2: the MAPI mirror of a CAPI Machine that a mirrored CAPI MachineSet created. */
export const mirrorCapiOnlyMachine = (s: MachineSnapshot, deps: SyncDeps): Draft => {
  const draft = emptyDraft();
  const capi = s.capi as KubeObject;
  const mapiSet = s.mapiTwinOfCapiOwner as KubeObject;
  if (!s.infrastructure) return { ...draft, requeue: "backoff", waitingFor: "Infrastructure cluster" };
  if (!s.infraMachine) return { ...draft, waitingFor: "the CAPI Machine's InfraMachine" };
  const converted = deps.converter.capiMachineToMapi(capi, s.infraMachine, s.infrastructure, {
    mapiNamespace: deps.settings.mapiNamespace,
    ...(s.infraCluster ? { infraCluster: s.infraCluster } : {}),
  });
  if (!converted.ok) {
    // No MAPI object exists to carry a condition: say it with an Event and retry.
    draft.events.push({
      type: "Warning",
      reason: "FailedToConvertCAPIMachineToMAPI",
      message: conversionFailed("Machine", "CAPItoMAPI", converted.errors).message,
    });
    return { ...draft, requeue: "backoff" };
  }
  appendAll(draft.events, warningEvents(converted.warnings));
  // Hold the CAPI side first: a CAPI Machine that vanished before its mirror was ever synchronized would
  // make the mirror look born ClusterAPI, and the sync would create a twin (an instance) nobody asked for.
  ensureSyncFinalizer(draft, capi);
  ensureSyncFinalizer(draft, s.infraMachine);
  // The mirror is born agreeing with its CAPI copy's delete mark, and records it (§4.4).
  const mirror = mirrorMapiMachine(converted.value.machine, mapiSet);
  createFrom(draft, capi, withAnnotationChanges(mirror, carryDeleteMarks(mirror, capi).mapi));
  return draft;
};
