/**
 * The pause half of the authority protocol (SPEC §0, §1, §3.1 steps 4 and 6, §4.2): what pauses a CAPI
 * object and what marks the pause as the product's, how a controller acknowledges a pause (its `Paused`
 * condition), which objects acknowledge for each authority, the `paused-false-at` record step 4 leaves on the
 * MAPI object, and step 6's check against that record. The migration planner, the sync's fork, the simulated
 * providers and the test worlds all read these; nothing here writes. Pure; imports nothing but src/kube.
 */
import type { StableAuthority } from "../kube/kinds.js";
import { ANNOTATIONS, CONDITIONS, PAUSED_BY_VALUE } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { annotationsOf, canonicalJson, conditionOf, isRecord } from "../kube/object.js";

// --- the pause annotation and its marker (SPEC §0) ------------------------------------------------------

/** Presence alone pauses a CAPI object, whatever the value (SPEC §0). */
export const isPaused = (o: KubeObject | undefined): boolean =>
  Object.hasOwn(annotationsOf(o), ANNOTATIONS.paused);
/** The product's marker next to a pause: the product put it there and only the handover lifts it. */
export const hasPauseMarker = (o: KubeObject | undefined): boolean =>
  annotationsOf(o)[ANNOTATIONS.pausedBy] === PAUSED_BY_VALUE;
export const isPausedWithMarker = (o: KubeObject | undefined): boolean => isPaused(o) && hasPauseMarker(o);
/** The needs-attention value of a twin found unpaused under MachineAPI (SPEC §4.2), and its condition reason. */
export const UNPAUSED_TWIN_DETECTED = "UnpausedTwinDetected";
/** Marked by the sync when it found a twin unpaused under MachineAPI (SPEC §4.2). */
export const needsAttention = (o: KubeObject | undefined): boolean =>
  Object.hasOwn(annotationsOf(o), ANNOTATIONS.needsAttention);
/** The object's controller acknowledges that it stopped: `Paused=True`. */
export const reportsPaused = (o: KubeObject | undefined): boolean =>
  conditionOf(o, CONDITIONS.paused)?.status === "True";

/**
 * A CAPI object under MachineAPI that the product does not manage: unpaused (a user's twin created in a
 * race, SPEC §3.2 I1) or already marked needs-attention. The product never deletes, replaces or releases it.
 */
export const isForeignUnderMachineAPI = (o: KubeObject | undefined): boolean =>
  o !== undefined && (!isPaused(o) || needsAttention(o));

// --- acknowledgers (SPEC §3.1 steps 4 and 6) ------------------------------------------------------------

export type HandoverKind = "Machine" | "MachineSet";
/** The objects of one handover, by the part they play. */
export type Role = "mapi" | "capi" | "infraMachine";

/** Keys of the `paused-false-at` record, one per acknowledger. */
export const ACKNOWLEDGER_KEYS = Object.freeze({
  mapi: "mapi",
  capiMachine: "capiMachine",
  infraMachine: "infraMachine",
  capiMachineSet: "capiMachineSet",
});

/** An object whose `Paused` condition is an authority's acknowledgement, and its key in `paused-false-at`. */
export interface Acknowledger {
  role: Role;
  key: string;
}

/**
 * Whose `Paused` condition says that an authority's controllers stopped (True) or act (False). CAPA
 * reconciles an AWSMachine by its own pause, not its Machine's, so both acknowledge for ClusterAPI (SPEC §1).
 */
export const ACKNOWLEDGERS: Readonly<
  Record<HandoverKind, Readonly<Record<StableAuthority, readonly Acknowledger[]>>>
> = Object.freeze({
  Machine: {
    MachineAPI: [{ role: "mapi", key: ACKNOWLEDGER_KEYS.mapi }],
    ClusterAPI: [
      { role: "capi", key: ACKNOWLEDGER_KEYS.capiMachine },
      { role: "infraMachine", key: ACKNOWLEDGER_KEYS.infraMachine },
    ],
  },
  MachineSet: {
    MachineAPI: [{ role: "mapi", key: ACKNOWLEDGER_KEYS.mapi }],
    ClusterAPI: [{ role: "capi", key: ACKNOWLEDGER_KEYS.capiMachineSet }],
  },
});

/** The objects of one handover, as the sync's fork and the migration planner both hold them. */
export interface HandoverObjects {
  kind: HandoverKind;
  mapi?: KubeObject;
  capi?: KubeObject;
  /** Machines only. */
  infraMachine?: KubeObject;
}

export const objectOfRole = (objects: HandoverObjects, role: Role): KubeObject | undefined =>
  role === "mapi" ? objects.mapi : role === "capi" ? objects.capi : objects.infraMachine;

/** The lastTransitionTime of the object's `Paused` condition when it has this status and a time. */
export const pausedTransitionTime = (
  o: KubeObject | undefined,
  status: "True" | "False",
): string | undefined => {
  const c = conditionOf(o, CONDITIONS.paused);
  return c?.status === status && typeof c.lastTransitionTime === "string" && c.lastTransitionTime !== ""
    ? c.lastTransitionTime
    : undefined;
};

// --- the paused-false-at record (SPEC §3.1 step 4) ------------------------------------------------------

/** Each acknowledger's `Paused=False` lastTransitionTime by its key. */
export type PausedFalseRecord = Record<string, string>;

/** The annotation value for a record: canonical JSON, so equal records compare equal. */
export const encodePausedFalseAt = (record: PausedFalseRecord): string => canonicalJson(record);

/** The record step 4 left on the MAPI object, non-string times left out; undefined when absent or bad. */
export const decodePausedFalseAt = (mapi: KubeObject | undefined): PausedFalseRecord | undefined => {
  const raw = annotationsOf(mapi)[ANNOTATIONS.pausedFalseAt];
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!isRecord(parsed)) return undefined;
    const out: PausedFalseRecord = {};
    for (const [k, v] of Object.entries(parsed)) if (typeof v === "string") out[k] = v;
    return out;
  } catch {
    return undefined;
  }
};

// --- step 6: the old authority acknowledged its stop ----------------------------------------------------

/** Where one acknowledger of the old authority stands in step 6. */
export type PauseAcknowledgement =
  | { state: "acknowledged"; ack: Acknowledger; object: KubeObject | undefined }
  /** Step 4 recorded no `Paused=False` time for it: a fresh Paused=True cannot be told from a stale one. */
  | { state: "unrecorded"; ack: Acknowledger; object: KubeObject | undefined }
  /**
   * No `Paused=True` (`pausedAt` undefined), or one older than the recorded `Paused=False` (`since`), or a time
   * that does not parse (which never counts as fresh).
   */
  | {
      state: "awaited";
      ack: Acknowledger;
      object: KubeObject | undefined;
      pausedAt?: string;
      since?: string;
    };

/**
 * SPEC §3.1 step 6, for every acknowledger of `old` in table order: it reports `Paused=True` with a
 * lastTransitionTime not earlier than its `Paused=False` recorded in step 4 (a True left from an earlier period
 * does not count). `ending` (§3.5, a deletion during the handover): a gone acknowledger has nothing left to
 * stop and is skipped, and a missing record cannot hold up the deletion — a current `Paused=True` is enough.
 */
export const pauseAcknowledgements = (
  objects: HandoverObjects,
  old: StableAuthority,
  options: { ending?: boolean } = {},
): PauseAcknowledgement[] => {
  const recorded = decodePausedFalseAt(objects.mapi);
  const out: PauseAcknowledgement[] = [];
  for (const ack of ACKNOWLEDGERS[objects.kind][old]) {
    const object = objectOfRole(objects, ack.role);
    if (options.ending && !object) continue;
    const since = recorded?.[ack.key];
    if (since === undefined && !options.ending) {
      out.push({ state: "unrecorded", ack, object });
      continue;
    }
    const pausedAt = pausedTransitionTime(object, "True");
    const fresh =
      pausedAt !== undefined && (since === undefined || Date.parse(pausedAt) >= Date.parse(since));
    if (fresh) out.push({ state: "acknowledged", ack, object });
    else
      out.push({
        state: "awaited",
        ack,
        object,
        ...(pausedAt === undefined ? {} : { pausedAt }),
        ...(since === undefined ? {} : { since }),
      });
  }
  return out;
};

/** The keys of the acknowledgers step 6 still waits for; empty when the old authority acknowledged its stop. */
export const awaitedPauseAcknowledgers = (
  objects: HandoverObjects,
  old: StableAuthority,
  options: { ending?: boolean } = {},
): string[] =>
  pauseAcknowledgements(objects, old, options)
    .filter((a) => a.state !== "acknowledged")
    .map((a) => a.ack.key);

/** Whether step 6 holds: the old authority's controllers have stopped since the migration started. */
export const pauseAcknowledged = (objects: HandoverObjects, old: StableAuthority): boolean =>
  awaitedPauseAcknowledgers(objects, old).length === 0;
