/**
 * The safety invariants I1–I4 of SPEC §3.2 as pure checks over observed snapshots, for the integration
 * and model tests to call after every observed change. `checkInvariants(before, after)` checks what one
 * change can break (I1, I3, I4); I2 needs the history of acknowledgements, so `observeInvariants` folds
 * snapshots one at a time through an immutable state and `invariantViolations(history)` runs the fold.
 * I5 is about the sync controllers: `syncSpecViolations(plan, mapi)` checks one sync plan's writes against
 * the authority the plan was made under, with the three exceptions SPEC §3.2 names. I6 is the instance
 * ledger's (src/simulate/ledger.ts).
 *
 * Test-only code (issue 18): the product never checks these at run time, so it lives with the tests that
 * use it — the migration worlds, the integration harness, the model campaign and the reliability suite.
 */
import type { StableAuthority } from "../../src/kube/kinds.js";
import { CONDITIONS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath } from "../../src/kube/object.js";
import { HANDOVER_KINDS } from "../../src/migration/kinds.js";
import type { HandoverSnapshot } from "../../src/migration/snapshot.js";
import { objectOf } from "../../src/migration/snapshot.js";
import {
  type StatusAuthorityReading,
  statusAuthorityReading,
  synchronizedAPI,
  synchronizedGeneration,
} from "../../src/protocol/authority.js";
import { isPaused } from "../../src/protocol/pause.js";
import type { Branch } from "../../src/sync/fork.js";
import type { SyncWrite } from "../../src/sync/writes.js";

export interface Violation {
  invariant: "I1" | "I2" | "I3" | "I4" | "I5";
  message: string;
}

const statusOf = (s: HandoverSnapshot | undefined): StatusAuthorityReading =>
  s?.mapi ? statusAuthorityReading(s.mapi) : "absent";

const isStable = (v: StatusAuthorityReading): v is StableAuthority =>
  v === "MachineAPI" || v === "ClusterAPI";

/** §1: the MAPI side is active when status is MachineAPI. */
export const mapiActive = (s: HandoverSnapshot): boolean => statusOf(s) === "MachineAPI";

/** §1: the CAPI side is active when its twin (Machine or InfraMachine; or MachineSet) lacks the pause. */
export const capiActive = (s: HandoverSnapshot): boolean =>
  HANDOVER_KINDS[s.kind].pauseTargets.some((role) => {
    const object = objectOf(s, role);
    return object !== undefined && !isPaused(object);
  });

/** I1 on one observed state. */
export const singleWriterViolations = (s: HandoverSnapshot): Violation[] =>
  mapiActive(s) && capiActive(s)
    ? [
        {
          invariant: "I1",
          message: "both the MAPI side (status MachineAPI) and the CAPI side (unpaused) are active",
        },
      ]
    : [];

const sameObject = (a: HandoverSnapshot | undefined, b: HandoverSnapshot | undefined): boolean =>
  a?.mapi?.metadata?.uid === undefined || a.mapi.metadata.uid === b?.mapi?.metadata?.uid;

/**
 * I1 on `after`, I3 and I4 on the change. `origin` is the stable authority the current handover started
 * from when the caller knows it; otherwise `before`'s synchronizedAPI stands for it.
 */
export const checkInvariants = (
  before: HandoverSnapshot | undefined,
  after: HandoverSnapshot,
  origin?: StableAuthority,
): Violation[] => {
  const out = singleWriterViolations(after);
  if (!before?.mapi || !after.mapi || !sameObject(before, after)) return out;
  const from = statusOf(before);
  const to = statusOf(after);
  if (isStable(from) && isStable(to) && from !== to)
    out.push({ invariant: "I3", message: `status.authoritativeAPI went ${from} → ${to} without Migrating` });
  if (from !== "absent" && to === "absent")
    out.push({ invariant: "I3", message: `status.authoritativeAPI was removed (was ${from})` });
  const g0 = synchronizedGeneration(before.mapi);
  const g1 = synchronizedGeneration(after.mapi);
  if (g1 < g0) {
    const source = origin ?? synchronizedAPI(before.mapi);
    const completion =
      from === "Migrating" && isStable(to) && g1 === 0 && (source === undefined || to !== source);
    if (!completion)
      out.push({
        invariant: "I4",
        message: `status.synchronizedGeneration decreased ${g0} → ${g1} outside the step-10 write`,
      });
  }
  return out;
};

/** Acknowledgement progress of one acknowledger: Paused=False seen in its stable state, then Paused=True. */
interface AckProgress {
  falseSeen: boolean;
  trueAfter: boolean;
}

export interface InvariantState {
  previous?: HandoverSnapshot;
  /** The stable authority before the current Migrating period, once observed. */
  origin?: StableAuthority;
  everMachineAPI: boolean;
  everClusterAPI: boolean;
  mapiAck: AckProgress;
  capiAcks: Readonly<Record<string, AckProgress>>;
}

export const initialInvariantState: InvariantState = Object.freeze({
  everMachineAPI: false,
  everClusterAPI: false,
  mapiAck: { falseSeen: false, trueAfter: false },
  capiAcks: {},
});

const advance = (p: AckProgress, pausedStatus: string | undefined, inStableState: boolean): AckProgress => {
  if (inStableState && pausedStatus === "False") return { falseSeen: true, trueAfter: false };
  if (p.falseSeen && pausedStatus === "True") return { falseSeen: true, trueAfter: true };
  return p;
};

/**
 * Folds one observed snapshot into the state and returns the violations it shows. I2: the CAPI side
 * becomes active only after the MAPI object reported Paused=True after Paused=False in its MachineAPI
 * period (unless it never was MachineAPI: born ClusterAPI); status becomes MachineAPI from Migrating only
 * after every CAPI acknowledger did the same in its ClusterAPI period, or as a cancel back to MachineAPI.
 */
export const observeInvariants = (
  state: InvariantState,
  s: HandoverSnapshot,
): { state: InvariantState; violations: Violation[] } => {
  const base = sameObject(state.previous, s) ? state : initialInvariantState;
  const prev = base.previous;
  const violations = checkInvariants(prev, s, base.origin);
  const from = statusOf(prev);
  const to = statusOf(s);

  if (prev && !capiActive(prev) && capiActive(s) && base.everMachineAPI && !base.mapiAck.trueAfter)
    violations.push({
      invariant: "I2",
      message:
        "the CAPI side became active before the MAPI object acknowledged Paused=True after Paused=False",
    });
  if (from === "Migrating" && to === "MachineAPI") {
    const source = base.origin ?? (prev?.mapi ? synchronizedAPI(prev.mapi) : undefined);
    const acks = HANDOVER_KINDS[s.kind].acknowledgers.ClusterAPI;
    const acknowledged = acks.every((a) => base.capiAcks[a.key]?.trueAfter === true);
    if (source !== "MachineAPI" && base.everClusterAPI && !acknowledged)
      violations.push({
        invariant: "I2",
        message:
          "status became MachineAPI before every CAPI acknowledger reported Paused=True after Paused=False",
      });
  }

  const capiAcks: Record<string, AckProgress> = { ...base.capiAcks };
  for (const a of HANDOVER_KINDS[s.kind].acknowledgers.ClusterAPI) {
    const paused = conditionOf(objectOf(s, a.role), CONDITIONS.paused)?.status;
    capiAcks[a.key] = advance(
      capiAcks[a.key] ?? { falseSeen: false, trueAfter: false },
      paused,
      to === "ClusterAPI",
    );
  }
  const mapiPaused = conditionOf(s.mapi, CONDITIONS.paused)?.status;
  // The origin of a Migrating period is the stable value just before it; the write that ends the period
  // is judged by it, and the next stable observation starts a new period.
  const origin =
    to === "Migrating"
      ? isStable(from)
        ? from
        : base.origin
      : isStable(to) && from !== "Migrating"
        ? to
        : base.origin;
  return {
    state: {
      previous: s,
      origin,
      everMachineAPI: base.everMachineAPI || to === "MachineAPI",
      everClusterAPI: base.everClusterAPI || to === "ClusterAPI",
      mapiAck: advance(base.mapiAck, mapiPaused, to === "MachineAPI"),
      capiAcks,
    },
    violations,
  };
};

/** Every violation along an observed history of one object's snapshots. */
export const invariantViolations = (history: readonly HandoverSnapshot[]): Violation[] => {
  let state = initialInvariantState;
  const out: Violation[] = [];
  for (const s of history) {
    const r = observeInvariants(state, s);
    state = r.state;
    out.push(...r.violations);
  }
  return out;
};

/**
 * I5 on one sync plan: the sync controllers never write the spec of the side that is active — the MAPI
 * namespace under status MachineAPI, the CAPI namespace under ClusterAPI (while Migrating both sides are
 * paused, and with no status the sync does nothing) — except: creating the missing twin of an object born
 * ClusterAPI (§4.2); carrying delete marks (§4.4: annotations, never spec); carrying the autoscaler's
 * `replicas` to a ClusterAPI MachineSet (§2.2: only `spec.replicas` of the CAPI MachineSet, only to the
 * value the MAPI copy holds). `mapi` is the MAPI object the plan was made from.
 */
export const syncSpecViolations = (
  plan: { branch: Branch; writes: readonly SyncWrite[] },
  mapi: KubeObject | undefined,
  namespaces: { mapiNamespace: string; capiNamespace: string },
): Violation[] => {
  const status = mapi ? statusAuthorityReading(mapi) : "absent";
  if (!isStable(status)) return [];
  const active = status === "MachineAPI" ? namespaces.mapiNamespace : namespaces.capiNamespace;
  const out: Violation[] = [];
  for (const w of plan.writes) {
    const target =
      w.kind === "create"
        ? { kind: String(w.object.kind), namespace: String(w.object.metadata?.namespace ?? "") }
        : { kind: w.target.kind, namespace: w.target.namespace };
    if (target.namespace !== active) continue;
    const what = `${w.kind} of ${target.kind} ${target.namespace}`;
    switch (w.kind) {
      case "create":
        if (plan.branch.kind !== "createBornClusterAPITwin")
          out.push({ invariant: "I5", message: `${what} under ${status}: the active side is created` });
        break;
      case "apply":
        if (w.body.spec !== undefined)
          out.push({ invariant: "I5", message: `${what} under ${status} writes the active side's spec` });
        break;
      case "setReplicas": {
        const carried = getPath(mapi, ["spec", "replicas"]);
        if (status !== "ClusterAPI" || target.kind !== "MachineSet" || w.replicas !== carried)
          out.push({
            invariant: "I5",
            message: `${what} under ${status} sets replicas ${w.replicas}, not the autoscaler's ${String(carried)} on a ClusterAPI MachineSet`,
          });
        break;
      }
      default:
        // Status, finalizers, owner references, pause and annotations (delete marks among them): not spec.
        break;
    }
  }
  return out;
};
