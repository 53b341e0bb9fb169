/**
 * What the Machine and MachineSet sync planners share (SPEC §4): the `Draft` a reconcile's writes, condition
 * and Events are gathered in (plan.ts folds it into the `SyncPlan` the shell executes), and the steps both
 * kinds take alike — the checks before a conversion and the conversion's outcome (§4.5), guarded applies that
 * never carry owner references, status mirroring onto a CAPI object, the sync finalizer, the wait for a CAPI
 * `Cluster` (§4.6), the §4.2 response to an unpaused twin and the hand-offs to deletion.ts. Pure. What differs
 * between the kinds lives in plan-machine.ts and plan-machine-set.ts.
 */
import { ANNOTATIONS, AUTHORITY, CAPI_API_VERSION, FINALIZERS, MAPI_GROUP } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { generationOf, getPath, hasFinalizer, isDeleting, nameOf, namespaceOf } from "../kube/object.js";
import { appendAll } from "../lists.js";
import { statusAuthority, synchronizedGeneration } from "../protocol/authority.js";
import { isPaused, needsAttention, UNPAUSED_TWIN_DETECTED } from "../protocol/pause.js";
import type { Direction, SynchronizedCondition, SyncKind } from "./condition.js";
import { conversionFailed, unpausedTwinDetected, unsupportedOwner } from "./condition.js";
import type { ConversionResult } from "./conversion/types.js";
import type { DeletionPlan } from "./deletion.js";
import { planPropagateDeletionOfAuthoritative } from "./deletion.js";
import { PAUSE_ANNOTATIONS, unsupportedMachineOwner, unsupportedMachineSetOwner } from "./desired.js";
import { applyBody, statusPatch } from "./diff.js";
import type { SyncDeps } from "./snapshot.js";
import type { SyncEvent, SyncWrite } from "./writes.js";
import {
  addFinalizerWrite,
  annotateWrite,
  applyStatusWrite,
  createWrite,
  pauseWrite,
  refOf,
  SYNC_FIELD_MANAGER,
} from "./writes.js";

export type Requeue = "backoff" | { afterMs: number };

/** An object whose live state the shell confirms before the plan's writes (§4.2, §3.5). */
export interface ObjectAddress {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** The exact object read (not another one under the same name), where that matters. */
  uid?: string;
}

/** A plan being built: plan.ts folds the condition, generation and mirrored status into the last write. */
export interface Draft {
  writes: SyncWrite[];
  events: SyncEvent[];
  condition?: SynchronizedCondition;
  synchronizedGeneration?: number;
  mirroredMapiStatus?: Record<string, unknown>;
  requeue?: Requeue;
  needsStorageCheck?: boolean;
  needsCascadeCheck?: boolean;
  waitingFor?: string;
  confirmAbsent?: ObjectAddress;
  /** The writes hold only while this MAPI object has this authority: the shell reads it live first. */
  confirmAuthority?: AuthorityAddress;
  /** The plan creates objects converted from this one: the shell reads it live first (decision 148). */
  confirmSource?: SourceAddress;
  /** The plan mirrors this authoritative object as read, a view the MAPI copy is ahead of: read live first. */
  confirmCurrent?: CurrentAddress;
}

/** The MAPI object a plan's writes rest on, and the `status.authoritativeAPI` it read there (decisions 80, 167). */
export interface AuthorityAddress extends ObjectAddress {
  authority: string;
}

/** `mapi` as a plan read it: the same object (uid) with `authority` is what its writes rest on. */
export const authorityRead = (kind: SyncKind, mapi: KubeObject, authority: string): AuthorityAddress => ({
  apiVersion: mapi.apiVersion ?? "",
  kind: mapi.kind ?? kind,
  namespace: namespaceOf(mapi),
  name: nameOf(mapi),
  ...(mapi.metadata?.uid ? { uid: mapi.metadata.uid } : {}),
  authority,
});

/** The authoritative object a plan mirrors, and the generation it read (decisions 160, 163). */
export interface CurrentAddress extends ObjectAddress {
  generation: number;
}

/**
 * A view of the authoritative CAPI copy older than the generation the MAPI copy records it was synchronised
 * from is a lagging cache (a new leader's) or a record that no longer holds. Mirrored as it stands, it would put
 * the MAPI copy's spec back and ask for a lower synchronizedGeneration, which the CRD's transition rule refuses
 * (I4); for a MachineSet the replicas carry would then take the difference for the autoscaler's and scale the
 * CAPI copy down (decision 160). The draft asks the shell to confirm the view live first (decision 163 for
 * Machines).
 */
export const confirmIfBehind = (draft: Draft, capi: KubeObject, mapi: KubeObject): void => {
  if (generationOf(capi) < synchronizedGeneration(mapi))
    draft.confirmCurrent = { ...addressOf(capi), generation: generationOf(capi) };
};

/** The object a create is converted from, as the plan read it: its identity and, for MAPI, its authority. */
export interface SourceAddress extends ObjectAddress {
  /** `status.authoritativeAPI` as read ("" when unset); absent for a CAPI source, which has none. */
  authority?: string;
}

/**
 * A create of `object`, converted from `source`: the create, and the live read of the source it waits on. A
 * lagging cache (a new leader's, a held watch) can still show a source the API server deleted; a twin made from
 * it is one nobody deletes — paused, or, for a Machine born ClusterAPI, an instance nobody asked for.
 */
export const createFrom = (draft: Draft, source: KubeObject, object: KubeObject): void => {
  push(draft, createWrite(object));
  draft.confirmSource ??= {
    ...addressOf(source),
    ...(source.apiVersion?.startsWith(`${MAPI_GROUP}/`) ? { authority: statusAuthority(source) ?? "" } : {}),
  };
};

/** Where `o` is, and which object it is (its uid), for a live read. */
export const addressOf = (o: KubeObject): ObjectAddress => ({
  apiVersion: o.apiVersion ?? "",
  kind: o.kind ?? "",
  namespace: namespaceOf(o),
  name: nameOf(o),
  ...(o.metadata?.uid ? { uid: o.metadata.uid } : {}),
});

/** How a MAPI → CAPI sync runs: steady, the final sync of a handover (§4.2), or the twin of a born-ClusterAPI object. */
export type ToCapiMode = "steady" | "final" | "born";

/** CAPI condition types status mirroring never writes or removes (SPEC §5.4). */
const CAPI_UNTOUCHED_CONDITIONS: readonly string[] = Object.freeze(["Paused", "NodeHealthy", "UpToDate"]);

export const emptyDraft = (): Draft => ({ writes: [], events: [] });

export const push = (draft: Draft, write: SyncWrite | undefined): void => {
  if (write) draft.writes.push(write);
};

export const fromDeletion = (plan: DeletionPlan, read?: AuthorityAddress): Draft => ({
  writes: plan.writes,
  events: [],
  ...(read ? { confirmAuthority: read } : {}),
  ...(plan.condition ? { condition: plan.condition } : {}),
  ...(plan.needsStorageCheck ? { needsStorageCheck: true } : {}),
  ...(plan.needsCascadeCheck ? { needsCascadeCheck: true } : {}),
  ...(plan.waitingFor ? { waitingFor: plan.waitingFor } : {}),
});

/** §4.2 ClusterAPI without a twin after a sync: delete the MAPI copy, once the twin is known gone. */
export const propagateDeletion = (
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

/**
 * What stops a sync before it converts anything, as the finished draft: an unsupported owner (§4.3, a
 * condition and no requeue) or no `Infrastructure` to convert with (requeue). Undefined: go on.
 */
export const notReadyToConvert = (
  draft: Draft,
  kind: SyncKind,
  mapi: KubeObject,
  infrastructure: KubeObject | undefined,
): Draft | undefined => {
  const owner = kind === "Machine" ? unsupportedMachineOwner(mapi) : unsupportedMachineSetOwner(mapi);
  if (owner) return { ...draft, condition: unsupportedOwner(kind, mapi, owner) };
  if (!infrastructure) return { ...draft, requeue: "backoff", waitingFor: "Infrastructure cluster" };
  return undefined;
};

/**
 * §4.5 a conversion's outcome: its warnings become `ConversionWarning` Events on the draft; a failure is the
 * finished draft — `Synchronized=False` with every field error, retried with backoff.
 */
export const takeConversion = <T>(
  draft: Draft,
  kind: SyncKind,
  direction: Direction,
  result: ConversionResult<T>,
): { value: T } | { failed: Draft } => {
  if (!result.ok)
    return {
      failed: { ...draft, condition: conversionFailed(kind, direction, result.errors), requeue: "backoff" },
    };
  appendAll(draft.events, warningEvents(result.warnings));
  return { value: result.value };
};

/**
 * What a server-side apply of the sync sends: never ownerReferences. The sync sets them when it creates an
 * object and never re-adds or changes them afterwards (§4.6), so an orphaning is the user's and stays.
 */
export const forApply = (desired: KubeObject): KubeObject => {
  if (desired.metadata?.ownerReferences === undefined) return desired;
  const { ownerReferences: _atCreationOnly, ...metadata } = desired.metadata;
  return { ...desired, metadata };
};

/**
 * §4.6: no CAPI object is created while the CAPI `Cluster` is absent or being deleted (a cascade under way,
 * or none made yet); the mirror is created once a Cluster exists. Returns what creation waits for.
 */
export const clusterNotReady = (s: { cluster?: KubeObject }): string | undefined => {
  if (!s.cluster) return "a CAPI Cluster to exist before any CAPI object is created";
  if (isDeleting(s.cluster))
    return `the CAPI Cluster ${nameOf(s.cluster)}, being deleted, to be gone and recreated`;
  return undefined;
};

export const warningEvents = (warnings: readonly string[]): SyncEvent[] =>
  warnings.map((message) => ({ type: "Warning", reason: "ConversionWarning", message }));

/** The sync finalizer on an object that is not deleting (the API server refuses new finalizers then). */
export const ensureSyncFinalizer = (draft: Draft, o: KubeObject | undefined): void => {
  if (o && !isDeleting(o) && !hasFinalizer(o, FINALIZERS.sync))
    push(draft, addFinalizerWrite(o, FINALIZERS.sync));
};

/** A server-side apply of what differs between `desired` and `live` (§4.3), or undefined when nothing does. */
export const applyWrite = (
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

/** Mirrored status onto a CAPI object (§5.4), leaving the CAPI controllers' own conditions alone. */
export const capiStatusWrite = (
  live: KubeObject,
  mirrored: Record<string, unknown>,
  now: Date,
): SyncWrite | undefined =>
  applyStatusWrite(live, statusPatch(live, mirrored, { untouched: CAPI_UNTOUCHED_CONDITIONS, now }));

/**
 * §4.2: pause (with the marker) and mark needs-attention; nothing else is ever done to such a twin. The sync
 * alone pauses an unpaused twin under MachineAPI — the migration planner leaves it here (decision 53).
 */
export const planUnpausedTwin = (
  kind: SyncKind,
  twins: readonly (KubeObject | undefined)[],
  capi: KubeObject | undefined,
  mapi: KubeObject,
): Draft => {
  const draft = emptyDraft();
  // Pausing and marking are taken back by no one but an admin: the MAPI authority they rest on is read live
  // (a new leader's cache can still show MachineAPI after a handover to ClusterAPI; decision 80).
  draft.confirmAuthority = authorityRead(kind, mapi, AUTHORITY.machineAPI);
  const present = twins.filter((o): o is KubeObject => o !== undefined);
  for (const o of present) {
    if (!isPaused(o)) {
      push(
        draft,
        pauseWrite(o, { ...PAUSE_ANNOTATIONS, [ANNOTATIONS.needsAttention]: UNPAUSED_TWIN_DETECTED }),
      );
    } else if (!needsAttention(o)) {
      push(
        draft,
        annotateWrite(o, { [ANNOTATIONS.needsAttention]: UNPAUSED_TWIN_DETECTED }, "needsAttention"),
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
      reason: UNPAUSED_TWIN_DETECTED,
      message:
        `${names} existed unpaused while MAPI is authoritative` +
        `${instanceId ? ` (instance ${instanceId})` : ""}; paused and marked needs-attention for an admin to decide`,
    });
  }
  return draft;
};
