/**
 * The sync controllers' pure core (SPEC §4): `planMachineSync` and `planMachineSetSync` take what one
 * reconcile read, the injected converter and `now`, and return the writes to make in order, the
 * Synchronized condition and synchronizedGeneration the MAPI object should end with (already folded into the
 * plan's last write, the MAPI status patch), the Events to record, and whether to requeue. No I/O, no clock.
 * The shell executes the writes in order (chaining resourceVersions per object, see writes.ts), stops at
 * the first failure (409 → requeue; an admission refusal → `refusedWriteCondition` from condition.ts),
 * reads storage live when a plan says `needsStorageCheck` and the deleting CAPI twin's owner chain when it
 * says `needsCascadeCheck`, confirms `confirmAbsent` live before acting on an absence, and writes nothing
 * else. Owner references are written only in creates, never in applies (§4.6). Planning on the result of a plan's writes converges to zero writes
 * (tested as a property).
 */
import { ANNOTATIONS, AUTHORITY, CAPI_API_VERSION, FINALIZERS, LABELS, MAPI_GROUP } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import {
  annotationsOf,
  generationOf,
  getPath,
  hasFinalizer,
  isDeleting,
  labelsOf,
  nameOf,
  namespaceOf,
  ownerReferencesOf,
} from "../kube/object.js";
import type { SynchronizedCondition, SyncKind } from "./condition.js";
import {
  conversionFailed,
  infraMachineSpecMismatch,
  mapiStatusWrite,
  synchronized,
  unpausedTwinDetected,
  unsupportedOwner,
} from "./condition.js";
import type { DeletionPlan } from "./deletion.js";
import {
  planForeignTwinRelease,
  planMachineDeletion,
  planMachineSetDeletion,
  planPropagateDeletionOfAuthoritative,
  releaseOrphanInfraMachine,
} from "./deletion.js";
import {
  type AnnotationChanges,
  CREATED_FOR_GENERATION,
  capiMustBePaused,
  carryDeleteMarks,
  desiredCapiMachine,
  desiredCapiMachineSet,
  desiredMapi,
  forCreate,
  mirrorMapiMachine,
  PAUSE_ANNOTATIONS,
  unsupportedMachineOwner,
  unsupportedMachineSetOwner,
  withAnnotationChanges,
  withCarriedDeleteMarks,
} from "./desired.js";
import { applyBody, objectDiff, specPaths, statusPatch } from "./diff.js";
import type { Branch } from "./fork.js";
import {
  forkMachine,
  forkMachineSet,
  isPaused,
  isPausedWithMarker,
  needsAttention,
  reportsPaused,
  statusAuthorityOf,
} from "./fork.js";
import type { MachineSetSnapshot, MachineSnapshot, SyncDeps } from "./snapshot.js";
import { infrastructureRefOf } from "./snapshot.js";
import type { SyncEvent, SyncWrite } from "./writes.js";
import {
  addFinalizerWrite,
  annotateWrite,
  createWrite,
  deleteWrite,
  pauseWrite,
  refOf,
  removeFinalizersWrite,
  SYNC_FIELD_MANAGER,
} from "./writes.js";

export type Requeue = "backoff" | { afterMs: number };

export interface SyncPlan {
  branch: Branch;
  /** In order; the MAPI status write (condition + generation) is always last. */
  writes: SyncWrite[];
  /** The Synchronized condition the MAPI object should carry after the writes (undefined: leave it). */
  condition?: SynchronizedCondition;
  synchronizedGeneration?: number;
  events: SyncEvent[];
  requeue?: Requeue;
  /** A deletion step needs the live storage read (§4.6); the shell reads it and plans again. */
  needsStorageCheck?: boolean;
  /** A deletion step needs the live "went with its Cluster" read (§4.6); the shell reads it and plans again. */
  needsCascadeCheck?: boolean;
  /** What the reconcile waits for, for logs and tests. */
  waitingFor?: string;
  /**
   * The plan acts on the absence of this object (the authoritative twin, §4.2): the shell GETs it live
   * first and drops the plan's writes if it exists (a lagging or re-listing cache is not proof of deletion).
   */
  confirmAbsent?: { apiVersion: string; kind: string; namespace: string; name: string };
}

/** CAPI condition types status mirroring never writes or removes (SPEC §5.4). */
export const CAPI_UNTOUCHED_CONDITIONS: readonly string[] = Object.freeze([
  "Paused",
  "NodeHealthy",
  "UpToDate",
]);

const NEEDS_ATTENTION_VALUE = "UnpausedTwinDetected";

interface Draft {
  writes: SyncWrite[];
  events: SyncEvent[];
  condition?: SynchronizedCondition;
  synchronizedGeneration?: number;
  mirroredMapiStatus?: Record<string, unknown>;
  requeue?: Requeue;
  needsStorageCheck?: boolean;
  needsCascadeCheck?: boolean;
  waitingFor?: string;
  confirmAbsent?: SyncPlan["confirmAbsent"];
}

const emptyDraft = (): Draft => ({ writes: [], events: [] });

const push = (draft: Draft, write: SyncWrite | undefined): void => {
  if (write) draft.writes.push(write);
};

/** Folds the condition, generation and mirrored MAPI status into the one last status write. */
const finish = (branch: Branch, mapi: KubeObject | undefined, draft: Draft, now: Date): SyncPlan => {
  const writes = [...draft.writes];
  const wantsStatus =
    draft.condition !== undefined || draft.synchronizedGeneration !== undefined || draft.mirroredMapiStatus;
  const statusWrite =
    mapi && wantsStatus
      ? mapiStatusWrite(mapi, {
          now,
          ...(draft.condition ? { condition: draft.condition } : {}),
          ...(draft.synchronizedGeneration !== undefined
            ? { synchronizedGeneration: draft.synchronizedGeneration }
            : {}),
          ...(draft.mirroredMapiStatus ? { mirrored: draft.mirroredMapiStatus } : {}),
        })
      : undefined;
  if (statusWrite) writes.push(statusWrite);
  // Conversion warnings are reported when converted content is written or the condition changes, not on
  // every reconcile a status change triggers.
  const reportable =
    writes.some((w) => w.kind === "create" || w.kind === "apply") ||
    (statusWrite?.kind === "applyStatus" &&
      statusWrite.changedPaths.includes("status.conditions[Synchronized]"));
  const events = reportable ? draft.events : draft.events.filter((e) => e.reason !== "ConversionWarning");
  return {
    branch,
    writes,
    ...(draft.condition ? { condition: draft.condition } : {}),
    ...(draft.synchronizedGeneration !== undefined
      ? { synchronizedGeneration: draft.synchronizedGeneration }
      : {}),
    events,
    ...(draft.requeue ? { requeue: draft.requeue } : {}),
    ...(draft.needsStorageCheck ? { needsStorageCheck: true } : {}),
    ...(draft.needsCascadeCheck ? { needsCascadeCheck: true } : {}),
    ...(draft.waitingFor ? { waitingFor: draft.waitingFor } : {}),
    ...(draft.confirmAbsent && writes.length > 0 ? { confirmAbsent: draft.confirmAbsent } : {}),
  };
};

/** §4.2 ClusterAPI without a twin after a sync: delete the MAPI copy, once the twin is known gone. */
const propagateDeletion = (
  kind: SyncKind,
  mapi: KubeObject,
  storage: boolean | undefined,
  deps: SyncDeps,
): Draft => ({
  ...fromDeletion(planPropagateDeletionOfAuthoritative(kind, mapi, storage)),
  confirmAbsent: {
    apiVersion: CAPI_API_VERSION,
    kind,
    namespace: deps.settings.capiNamespace,
    name: nameOf(mapi),
  },
});

const fromDeletion = (plan: DeletionPlan): Draft => ({
  writes: plan.writes,
  events: [],
  ...(plan.condition ? { condition: plan.condition } : {}),
  ...(plan.needsStorageCheck ? { needsStorageCheck: true } : {}),
  ...(plan.needsCascadeCheck ? { needsCascadeCheck: true } : {}),
  ...(plan.waitingFor ? { waitingFor: plan.waitingFor } : {}),
});

/**
 * What a server-side apply of the sync sends: never ownerReferences. The sync sets them when it creates an
 * object and never re-adds or changes them afterwards (§4.6), so an orphaning is the user's and stays.
 */
const forApply = (desired: KubeObject): KubeObject => {
  if (desired.metadata?.ownerReferences === undefined) return desired;
  const { ownerReferences: _atCreationOnly, ...metadata } = desired.metadata;
  return { ...desired, metadata };
};

/**
 * §4.6: no CAPI object is created while the CAPI `Cluster` is absent or being deleted (a cascade under way,
 * or none made yet); the mirror is created once a Cluster exists. Returns what creation waits for.
 */
const clusterNotReady = (s: { cluster?: KubeObject }): string | undefined => {
  if (!s.cluster) return "a CAPI Cluster to exist before any CAPI object is created";
  if (isDeleting(s.cluster))
    return `the CAPI Cluster ${nameOf(s.cluster)}, being deleted, to be gone and recreated`;
  return undefined;
};

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

const warningEvents = (warnings: readonly string[]): SyncEvent[] =>
  warnings.map((message) => ({ type: "Warning", reason: "ConversionWarning", message }));

/** The sync finalizer on an object that is not deleting (the API server refuses new finalizers then). */
const ensureSyncFinalizer = (draft: Draft, o: KubeObject | undefined): void => {
  if (o && !isDeleting(o) && !hasFinalizer(o, FINALIZERS.sync))
    push(draft, addFinalizerWrite(o, FINALIZERS.sync));
};

/** The delete-mark write for one copy of a Machine (§4.4), when anything changes. */
const deleteMarkWrite = (o: KubeObject, changes: AnnotationChanges): SyncWrite | undefined =>
  Object.keys(changes).length > 0 ? annotateWrite(o, changes, "deleteMark") : undefined;

const applyWrite = (
  desired: KubeObject,
  live: KubeObject,
  diff?: readonly string[],
): SyncWrite | undefined => {
  const result = applyBody(desired, live, diff);
  if (!result) return undefined;
  return {
    kind: "apply",
    target: refOf(live),
    resourceVersion: live.metadata?.resourceVersion ?? "",
    fieldManager: SYNC_FIELD_MANAGER,
    body: result.body,
    changedPaths: result.changedPaths,
  };
};

const capiStatusWrite = (
  live: KubeObject,
  mirrored: Record<string, unknown>,
  now: Date,
): SyncWrite | undefined => {
  const patch = statusPatch(live, mirrored, { untouched: CAPI_UNTOUCHED_CONDITIONS, now });
  if (!patch) return undefined;
  return {
    kind: "applyStatus",
    target: refOf(live),
    resourceVersion: live.metadata?.resourceVersion ?? "",
    status: patch.status,
    changedPaths: patch.changedPaths,
  };
};

/** §4.2: pause (with the marker) and mark needs-attention; nothing else is ever done to such a twin. */
const planUnpausedTwin = (
  kind: SyncKind,
  twins: readonly (KubeObject | undefined)[],
  capi: KubeObject | undefined,
): Draft => {
  const draft = emptyDraft();
  const present = twins.filter((o): o is KubeObject => o !== undefined);
  for (const o of present) {
    if (!isPaused(o)) {
      push(
        draft,
        pauseWrite(o, { ...PAUSE_ANNOTATIONS, [ANNOTATIONS.needsAttention]: NEEDS_ATTENTION_VALUE }),
      );
    } else if (!needsAttention(o)) {
      push(
        draft,
        annotateWrite(o, { [ANNOTATIONS.needsAttention]: NEEDS_ATTENTION_VALUE }, "needsAttention"),
      );
    }
  }
  const instanceId = present
    .map((o) => getPath(o, ["spec", "instanceID"]) ?? getPath(o, ["spec", "providerID"]))
    .find((v): v is string => typeof v === "string" && v !== "");
  draft.condition = unpausedTwinDetected(kind, capi ?? present[0] ?? {}, instanceId);
  if (draft.writes.length > 0) {
    const names = present.map((o) => `${o.kind} ${namespaceOf(o)}/${nameOf(o)}`).join(" and ");
    draft.events.push({
      type: "Warning",
      reason: "UnpausedTwinDetected",
      message:
        `${names} existed unpaused while MAPI is authoritative` +
        `${instanceId ? ` (instance ${instanceId})` : ""}; paused and marked needs-attention for an admin to decide`,
    });
  }
  return draft;
};

// ------------------------------------------------------------------------------------------------ Machines

type ToCapiMode = "steady" | "final" | "born";

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
    push(draft, createWrite(forCreate(desired)));
    return "synced";
  }
  const status = statusAuthorityOf(mapi);
  const replaceable =
    status === AUTHORITY.machineAPI && mode === "steady" && isPausedWithMarker(live) && !needsAttention(live);
  if (isDeleting(live)) {
    // Our replacement (or a deletion of the paused mirror): release exactly that uid, then recreate.
    if (replaceable) {
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

const syncMachineToCapi = (s: MachineSnapshot, deps: SyncDeps, now: Date, mode: ToCapiMode): Draft => {
  const draft = emptyDraft();
  const mapi = s.mapi as KubeObject;
  const owner = unsupportedMachineOwner(mapi);
  if (owner) return { ...draft, condition: unsupportedOwner("Machine", mapi, owner) };
  if (!s.infrastructure) return { ...draft, requeue: "backoff", waitingFor: "Infrastructure cluster" };
  if (mode !== "final") ensureSyncFinalizer(draft, mapi);
  const converted = deps.converter.mapiMachineToCapi(mapi, s.infrastructure, {
    capiNamespace: deps.settings.capiNamespace,
  });
  if (!converted.ok) {
    return {
      ...draft,
      condition: conversionFailed("Machine", "MAPItoCAPI", converted.errors),
      requeue: "backoff",
    };
  }
  draft.events.push(...warningEvents(converted.warnings));
  const status = statusAuthorityOf(mapi);
  const desired = desiredCapiMachine({
    converted: converted.value,
    mapi,
    status: status ?? AUTHORITY.machineAPI,
    ...(s.capiTwinOfMapiOwner ? { capiTwinOfMapiOwner: s.capiTwinOfMapiOwner } : {}),
    ...(s.cluster ? { cluster: s.cluster } : {}),
    ...(s.capi ? { liveCapi: s.capi } : {}),
    ...(s.infraMachine ? { liveInfraMachine: s.infraMachine } : {}),
    paused: capiMustBePaused(statusAuthorityOf(mapi)),
  });
  // Delete marks travel both ways (§4.4): the CAPI copy changes first, the MAPI copy and its record after.
  const marks = carryDeleteMarks(mapi, s.capi);
  const machine = withCarriedDeleteMarks(desired.machine, s.capi, marks.capi);

  if (!s.capi) {
    const blocked = clusterNotReady(s) ?? memberNotReady(mapi, s.capiTwinOfMapiOwner);
    if (blocked) return { ...draft, waitingFor: blocked };
    push(draft, createWrite(forCreate(machine)));
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

const syncMachineToMapi = (s: MachineSnapshot, deps: SyncDeps, now: Date, final: boolean): Draft => {
  const draft = emptyDraft();
  const mapi = s.mapi as KubeObject;
  const capi = s.capi as KubeObject;
  const owner = unsupportedMachineOwner(mapi);
  if (owner) return { ...draft, condition: unsupportedOwner("Machine", mapi, owner) };
  if (!s.infrastructure) return { ...draft, requeue: "backoff", waitingFor: "Infrastructure cluster" };
  if (!s.infraMachine) return { ...draft, waitingFor: "the CAPI Machine's InfraMachine" };
  if (!final) {
    ensureSyncFinalizer(draft, mapi);
    ensureSyncFinalizer(draft, capi);
    ensureSyncFinalizer(draft, s.infraMachine);
  }
  const converted = deps.converter.capiMachineToMapi(capi, s.infraMachine, s.infrastructure, {
    mapiNamespace: deps.settings.mapiNamespace,
    ...(s.infraCluster ? { awsCluster: s.infraCluster } : {}),
  });
  if (!converted.ok) {
    return {
      ...draft,
      condition: conversionFailed("Machine", "CAPItoMAPI", converted.errors),
      requeue: "backoff",
    };
  }
  draft.events.push(...warningEvents(converted.warnings));
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
  draft.condition = synchronized("Machine", "CAPItoMAPI", final);
  draft.synchronizedGeneration = generationOf(capi);
  return draft;
};

const mirrorCapiOnlyMachine = (s: MachineSnapshot, deps: SyncDeps): Draft => {
  const draft = emptyDraft();
  const capi = s.capi as KubeObject;
  const mapiSet = s.mapiTwinOfCapiOwner as KubeObject;
  if (!s.infrastructure) return { ...draft, requeue: "backoff", waitingFor: "Infrastructure cluster" };
  if (!s.infraMachine) return { ...draft, waitingFor: "the CAPI Machine's InfraMachine" };
  const converted = deps.converter.capiMachineToMapi(capi, s.infraMachine, s.infrastructure, {
    mapiNamespace: deps.settings.mapiNamespace,
    ...(s.infraCluster ? { awsCluster: s.infraCluster } : {}),
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
  draft.events.push(...warningEvents(converted.warnings));
  // Hold the CAPI side first: a CAPI Machine that vanished before its mirror was ever synchronized would
  // make the mirror look born ClusterAPI, and the sync would create a twin (an instance) nobody asked for.
  ensureSyncFinalizer(draft, capi);
  ensureSyncFinalizer(draft, s.infraMachine);
  // The mirror is born agreeing with its CAPI copy's delete mark, and records it (§4.4).
  const mirror = mirrorMapiMachine(converted.value.machine, mapiSet);
  push(draft, createWrite(withAnnotationChanges(mirror, carryDeleteMarks(mirror, capi).mapi)));
  return draft;
};

/** SPEC §4 for one Machine name: fork (§4.2), then the branch's writes. */
export const planMachineSync = (s: MachineSnapshot, deps: SyncDeps, now: Date): SyncPlan => {
  const branch = forkMachine(s);
  const draft = machineDraft(branch, s, deps, now);
  return finish(branch, s.mapi, draft, now);
};

const machineDraft = (branch: Branch, s: MachineSnapshot, deps: SyncDeps, now: Date): Draft => {
  switch (branch.kind) {
    case "bothAbsent":
      return branch.releaseInfraMachine ? fromDeletion(releaseOrphanInfraMachine(s)) : emptyDraft();
    case "deleting":
      return fromDeletion(planMachineDeletion(s, branch.authority));
    case "ignore":
    case "noop":
      return emptyDraft();
    case "mirrorCapiOnlyMachine":
      return mirrorCapiOnlyMachine(s, deps);
    case "mapiToCapi":
      return syncMachineToCapi(s, deps, now, "steady");
    case "createBornClusterAPITwin":
      return syncMachineToCapi(s, deps, now, "born");
    case "capiToMapi":
      return syncMachineToMapi(s, deps, now, false);
    case "finalSync":
      return branch.direction === AUTHORITY.machineAPI
        ? syncMachineToCapi(s, deps, now, "final")
        : syncMachineToMapi(s, deps, now, true);
    case "propagateDeletionOfAuthoritative":
      return propagateDeletion("Machine", s.mapi as KubeObject, s.storageBeingRemoved, deps);
    case "unpausedTwinDetected":
      return planUnpausedTwin("Machine", [s.capi, s.infraMachine], s.capi);
    case "releaseForeignTwin":
      return fromDeletion(planForeignTwinRelease("Machine", s));
    default:
      return assertNever(branch);
  }
};

// --------------------------------------------------------------------------------------------- MachineSets

const isLabelledFor = (template: KubeObject, setName: string): boolean =>
  labelsOf(template)[LABELS.templateMachineSet] === setName;

const syncMachineSetToCapi = (s: MachineSetSnapshot, deps: SyncDeps, now: Date, mode: ToCapiMode): Draft => {
  const draft = emptyDraft();
  const mapi = s.mapi as KubeObject;
  const owner = unsupportedMachineSetOwner(mapi);
  if (owner) return { ...draft, condition: unsupportedOwner("MachineSet", mapi, owner) };
  if (!s.infrastructure) return { ...draft, requeue: "backoff", waitingFor: "Infrastructure cluster" };
  if (mode !== "final") ensureSyncFinalizer(draft, mapi);
  const converted = deps.converter.mapiMachineSetToCapi(mapi, s.infrastructure, {
    capiNamespace: deps.settings.capiNamespace,
  });
  if (!converted.ok) {
    return {
      ...draft,
      condition: conversionFailed("MachineSet", "MAPItoCAPI", converted.errors),
      requeue: "backoff",
    };
  }
  draft.events.push(...warningEvents(converted.warnings));
  const desired = desiredCapiMachineSet({
    converted: converted.value,
    mapi,
    ...(s.cluster ? { cluster: s.cluster } : {}),
    paused: capiMustBePaused(statusAuthorityOf(mapi)),
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
    } else push(draft, createWrite(desired.infraTemplate));
  } else if (isDeleting(liveTemplate)) {
    templateReady = false;
    draft.waitingFor = `the deleting template ${templateName} to go away`;
  } else {
    const { spec: _immutable, ...metadataOnly } = desired.infraTemplate;
    push(draft, applyWrite(metadataOnly, liveTemplate));
  }
  const twinReady = s.capi !== undefined || (templateReady && !blocked);
  if (!s.capi) {
    if (twinReady) push(draft, createWrite(forCreate(desired.machineSet)));
    else draft.waitingFor ??= blocked;
  } else {
    if (templateReady) push(draft, applyWrite(forApply(desired.machineSet), s.capi));
    if (mode !== "final") ensureSyncFinalizer(draft, s.capi);
  }
  // Outdated labelled templates go only once the live set points at the new one; hand-made ones stay.
  const referenced = infrastructureRefOf(s.capi)?.name;
  const outdated = s.templates.filter(
    (t) =>
      isLabelledFor(t, s.name) && nameOf(t) !== templateName && nameOf(t) !== referenced && !isDeleting(t),
  );
  const pointsAtNew = referenced === templateName;
  if (pointsAtNew) for (const t of outdated) push(draft, deleteWrite(t));
  const stale = s.templates.some(
    (t) => isLabelledFor(t, s.name) && nameOf(t) !== templateName && !isDeleting(t),
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

const syncMachineSetToMapi = (s: MachineSetSnapshot, deps: SyncDeps, final: boolean): Draft => {
  const draft = emptyDraft();
  const mapi = s.mapi as KubeObject;
  const capi = s.capi as KubeObject;
  const owner = unsupportedMachineSetOwner(mapi);
  if (owner) return { ...draft, condition: unsupportedOwner("MachineSet", mapi, owner) };
  if (!s.infrastructure) return { ...draft, requeue: "backoff", waitingFor: "Infrastructure cluster" };
  const referenced = infrastructureRefOf(capi)?.name;
  const template = s.templates.find((t) => nameOf(t) === referenced);
  if (!template) return { ...draft, waitingFor: `the CAPI MachineSet's template ${referenced ?? "(none)"}` };
  if (!final) {
    ensureSyncFinalizer(draft, mapi);
    ensureSyncFinalizer(draft, capi);
  }
  const converted = deps.converter.capiMachineSetToMapi(capi, template, s.infrastructure, {
    mapiNamespace: deps.settings.mapiNamespace,
  });
  if (!converted.ok) {
    return {
      ...draft,
      condition: conversionFailed("MachineSet", "CAPItoMAPI", converted.errors),
      requeue: "backoff",
    };
  }
  draft.events.push(...warningEvents(converted.warnings));
  push(draft, applyWrite(desiredMapi(converted.value.machineSet), mapi));
  const mirrored = deps.converter.capiMachineSetStatusToMapi(capi);
  if (mirrored.ok) draft.mirroredMapiStatus = mirrored.value.status;
  draft.condition = synchronized("MachineSet", "CAPItoMAPI", final);
  draft.synchronizedGeneration = generationOf(capi);
  return draft;
};

/** SPEC §4 for one MachineSet name. */
export const planMachineSetSync = (s: MachineSetSnapshot, deps: SyncDeps, now: Date): SyncPlan => {
  const branch = forkMachineSet(s);
  const draft = machineSetDraft(branch, s, deps, now);
  return finish(branch, s.mapi, draft, now);
};

const machineSetDraft = (branch: Branch, s: MachineSetSnapshot, deps: SyncDeps, now: Date): Draft => {
  switch (branch.kind) {
    case "bothAbsent":
    case "ignore":
    case "noop":
    case "mirrorCapiOnlyMachine":
      return emptyDraft();
    case "deleting":
      return fromDeletion(planMachineSetDeletion(s, branch.authority));
    case "mapiToCapi":
      return syncMachineSetToCapi(s, deps, now, "steady");
    case "createBornClusterAPITwin":
      return syncMachineSetToCapi(s, deps, now, "born");
    case "capiToMapi":
      return syncMachineSetToMapi(s, deps, false);
    case "finalSync":
      return branch.direction === AUTHORITY.machineAPI
        ? syncMachineSetToCapi(s, deps, now, "final")
        : syncMachineSetToMapi(s, deps, true);
    case "propagateDeletionOfAuthoritative":
      return propagateDeletion("MachineSet", s.mapi as KubeObject, s.storageBeingRemoved, deps);
    case "unpausedTwinDetected":
      return planUnpausedTwin("MachineSet", [s.capi], s.capi);
    case "releaseForeignTwin":
      return fromDeletion(planForeignTwinRelease("MachineSet", s));
    default:
      return assertNever(branch);
  }
};

const assertNever = (x: never): never => {
  throw new Error(`unhandled sync branch ${JSON.stringify(x)}`);
};
