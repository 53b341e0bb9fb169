/**
 * The `Synchronized` condition of SPEC §4.5, as the sync writes it on the MAPI object: every reason and
 * message the product shows an admin lives here, tested verbatim. Also the one status write that carries
 * the condition and `synchronizedGeneration` together (written only when either changes, guarded by the
 * resourceVersion read). Pure.
 */

import { type FieldError, formatFieldError } from "../kube/field-error.js";
import { CONDITIONS, MAPI_GROUP } from "../kube/kinds.js";
import type { Condition, KubeObject } from "../kube/object.js";
import { isDeleting, nameOf, namespaceOf } from "../kube/object.js";
import { UNPAUSED_TWIN_DETECTED } from "../protocol/pause.js";
import { SYNCHRONIZED_REASONS } from "../protocol/synchronized.js";
import { statusPatch } from "./diff.js";
import type { SyncWrite } from "./writes.js";
import { applyStatusWrite } from "./writes.js";

export type SyncKind = "Machine" | "MachineSet";
export type Direction = "MAPItoCAPI" | "CAPItoMAPI";

/** The condition the sync wants on the MAPI object (lastTransitionTime is decided by setCondition). */
export type SynchronizedCondition = Omit<Condition, "lastTransitionTime"> & {
  type: "Synchronized";
  status: "True" | "False";
  reason: string;
  message: string;
};

/** The reasons the sync writes: the protocol's two success reasons (src/protocol) and its own failures. */
export const REASONS = Object.freeze({
  resourceSynchronized: SYNCHRONIZED_REASONS.resourceSynchronized,
  finalSyncComplete: SYNCHRONIZED_REASONS.finalSyncComplete,
  unpausedTwinDetected: UNPAUSED_TWIN_DETECTED,
  infraMachineSpecMismatch: "InfraMachineSpecMismatch",
  storageBeingRemoved: "StorageBeingRemoved",
  unsupportedOwner: "UnsupportedOwnerReference",
  mirrorDeletedByCascade: "MirrorDeletedByCascade",
  /** Upstream's reason when the CAPI Machine's InfraMachine cannot be read (issue 23). */
  failedToGetCAPIInfraResources: "FailedToGetCAPIInfraResources",
  /** A CAPI MachineSet would adopt the mirror the sync is to create (§4.6). */
  mirrorWouldBeAdopted: "MirrorWouldBeAdopted",
});

const sides = (direction: Direction) =>
  direction === "MAPItoCAPI" ? (["MAPI", "CAPI"] as const) : (["CAPI", "MAPI"] as const);

const trueCondition = (reason: string, message: string): SynchronizedCondition => ({
  type: "Synchronized",
  status: "True",
  reason,
  message,
  severity: "",
});
const falseCondition = (reason: string, message: string): SynchronizedCondition => ({
  type: "Synchronized",
  status: "False",
  reason,
  message,
  severity: "Error",
});

/** `Successfully synchronized MAPI Machine to CAPI` (reason FinalSyncComplete for the final sync). */
export const synchronized = (kind: SyncKind, direction: Direction, final = false): SynchronizedCondition => {
  const [from, to] = sides(direction);
  return trueCondition(
    final ? REASONS.finalSyncComplete : REASONS.resourceSynchronized,
    `Successfully synchronized ${from} ${kind} to ${to}`,
  );
};

/** Reason `FailedToConvertMAPIMachineToCAPI` (etc.), message = every field error joined. */
export const conversionFailed = (
  kind: SyncKind,
  direction: Direction,
  errors: readonly FieldError[],
): SynchronizedCondition => {
  const [from, to] = sides(direction);
  return falseCondition(`FailedToConvert${from}${kind}To${to}`, errors.map(formatFieldError).join("; "));
};

/**
 * Reason `FailedToUpdateCAPIMachine` (etc.) when the API server refused one of the sync's own writes
 * (admission, validation), with the server's message. The shell calls this; a 409 is a requeue instead.
 */
export const updateRefused = (
  kind: SyncKind,
  side: "MAPI" | "CAPI",
  target: { kind: string; namespace: string; name: string },
  serverMessage: string,
): SynchronizedCondition =>
  falseCondition(
    `FailedToUpdate${side}${kind}`,
    `writing ${target.kind} ${target.namespace}/${target.name} was refused: ${serverMessage}`,
  );

/**
 * The condition for a plan write the API server refused (not a 409): which side and kind follow from the
 * write's target (a MAPI group object is the MAPI side; anything else — Machine, InfraMachine, template —
 * the CAPI side of this kind).
 */
export const refusedWriteCondition = (
  kind: SyncKind,
  write: SyncWrite,
  serverMessage: string,
): SynchronizedCondition => {
  const target =
    write.kind === "create"
      ? {
          apiVersion: write.object.apiVersion ?? "",
          kind: write.object.kind ?? "",
          namespace: namespaceOf(write.object),
          name: nameOf(write.object),
        }
      : write.target;
  const side = target.apiVersion.startsWith(`${MAPI_GROUP}/`) ? "MAPI" : "CAPI";
  return updateRefused(kind, side, target, serverMessage);
};

export const unpausedTwinDetected = (
  kind: SyncKind,
  twin: KubeObject,
  instanceId: string | undefined,
): SynchronizedCondition =>
  falseCondition(
    REASONS.unpausedTwinDetected,
    `CAPI ${kind} ${namespaceOf(twin)}/${nameOf(twin)} was found unpaused while MAPI is authoritative` +
      `${instanceId ? ` (instance ${instanceId})` : ""}; it has been paused and marked needs-attention.` +
      " Decide whether it or the MAPI copy owns the instance; the product will not replace or delete it.",
  );

export const infraMachineSpecMismatch = (
  infraMachine: KubeObject,
  fields: readonly string[],
): SynchronizedCondition =>
  falseCondition(
    REASONS.infraMachineSpecMismatch,
    `${infraMachine.kind ?? "InfraMachine"} ${namespaceOf(infraMachine)}/${nameOf(infraMachine)} differs from` +
      ` the MAPI providerSpec in ${fields.join(", ")} and cannot be replaced now`,
  );

export const storageBeingRemoved = (kind: SyncKind): SynchronizedCondition =>
  falseCondition(
    REASONS.storageBeingRemoved,
    `a namespace or CustomResourceDefinition of this ${kind}'s twins is being deleted;` +
      " no deletion is propagated and no finalizer is removed until that settles",
  );

/**
 * SPEC §4.6: the paused CAPI mirror went with its `Cluster`; that is not a request for the MAPI object, which
 * stays authoritative with its instance. The mirror comes back once a Cluster exists again.
 */
export const mirrorDeletedByCascade = (kind: SyncKind, mirror: KubeObject): SynchronizedCondition =>
  falseCondition(
    REASONS.mirrorDeletedByCascade,
    `CAPI ${kind} ${namespaceOf(mirror)}/${nameOf(mirror)} was deleted with its Cluster; this MAPI ${kind} stays` +
      " authoritative and its instances are not affected. The CAPI mirror is recreated once a Cluster exists again",
  );

export const unsupportedOwner = (kind: SyncKind, mapi: KubeObject, owner: string): SynchronizedCondition =>
  falseCondition(
    REASONS.unsupportedOwner,
    `MAPI ${kind} ${namespaceOf(mapi)}/${nameOf(mapi)} is owned by ${owner}; ${kind}s with such owners are` +
      " not synchronized",
  );

/** The CAPI Machine names an InfraMachine that does not exist: nothing to convert, and the user must know. */
export const infraMachineMissing = (
  capi: KubeObject,
  infraKind: string,
  infraName: string,
): SynchronizedCondition =>
  falseCondition(
    REASONS.failedToGetCAPIInfraResources,
    `CAPI Machine ${namespaceOf(capi)}/${nameOf(capi)} references ${infraKind} ${namespaceOf(capi)}/${infraName},` +
      " which does not exist; the Machine cannot be synchronized until it does",
  );

/**
 * A CAPI MachineSet's selector matches the mirror the sync is to create, which no controller would own: Cluster
 * API would adopt it — and count it, scale it down, or (deleting) delete it, which would reach this Machine.
 */
export const mirrorWouldBeAdopted = (mapi: KubeObject, set: KubeObject): SynchronizedCondition =>
  falseCondition(
    REASONS.mirrorWouldBeAdopted,
    `the CAPI mirror of MAPI Machine ${namespaceOf(mapi)}/${nameOf(mapi)} is not created: CAPI MachineSet` +
      ` ${namespaceOf(set)}/${nameOf(set)}${isDeleting(set) ? ", being deleted," : ""} selects its labels and would adopt it` +
      (isDeleting(set)
        ? " (and delete it); it is created once that MachineSet is gone"
        : "; change the Machine's labels or the MachineSet's selector so that they no longer match"),
  );

/** A CAPI object owned by another controller (a MachineDeployment): two controllers would drive one set. */
export const capiUnsupportedOwner = (
  kind: SyncKind,
  capi: KubeObject,
  owner: string,
): SynchronizedCondition =>
  falseCondition(
    REASONS.unsupportedOwner,
    `CAPI ${kind} ${namespaceOf(capi)}/${nameOf(capi)} is owned by ${owner}; ${kind}s owned by anything but the` +
      " Cluster are not synchronized (their owner drives them)",
  );

/** The MAPI untouched condition types when mirroring status into a MAPI object (SPEC §5.4). */
const MAPI_UNTOUCHED_CONDITIONS: readonly string[] = Object.freeze([
  CONDITIONS.paused,
  CONDITIONS.synchronized,
]);

/**
 * The single status write on the MAPI object: mirrored status (CAPI→MAPI), the Synchronized condition and
 * synchronizedGeneration — or undefined when the live status already says all of it.
 */
export const mapiStatusWrite = (
  mapi: KubeObject,
  opts: {
    now: Date;
    condition?: SynchronizedCondition;
    synchronizedGeneration?: number;
    mirrored?: Record<string, unknown>;
  },
): SyncWrite | undefined => {
  const patch = statusPatch(mapi, opts.mirrored, {
    untouched: MAPI_UNTOUCHED_CONDITIONS,
    now: opts.now,
    ...(opts.condition ? { own: [opts.condition] } : {}),
    ...(opts.synchronizedGeneration !== undefined
      ? { extra: { synchronizedGeneration: opts.synchronizedGeneration } }
      : {}),
  });
  return applyStatusWrite(mapi, patch);
};
