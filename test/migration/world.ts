/**
 * Test support for the handover planner: builders for real-shaped MAPI/CAPI/AWS objects in a stable
 * state, a tiny in-memory executor that applies a planner step to a snapshot the way the API server would
 * (resourceVersion preconditions, no new finalizers on deleting objects), and stand-ins for the other
 * controllers (MAO, CAPI, CAPA, the sync) that flip Paused conditions, move their own finalizers and
 * write the final sync. Tests drive these by hand, in a fixed order, or in a random order (the model test).
 */

import jsonpatch from "fast-json-patch";
import type { StableAuthority } from "../../src/kube/kinds.js";
import {
  ANNOTATIONS,
  CAPI_API_VERSION,
  CONDITIONS,
  FINALIZERS,
  INFRA_API_VERSION,
  LABELS,
  MAPI_API_VERSION,
  PAUSED_BY_VALUE,
} from "../../src/kube/kinds.js";
import type { Condition, KubeObject } from "../../src/kube/object.js";
import {
  conditionOf,
  conditionsOf,
  finalizersOf,
  generationOf,
  getPath,
  isDeleting,
  isRecord,
  setCondition,
} from "../../src/kube/object.js";
import type { PlanOptions } from "../../src/migration/planner.js";
import { planHandover } from "../../src/migration/planner.js";
import type { HandoverKind, HandoverSnapshot, Role } from "../../src/migration/snapshot.js";
import { objectOf } from "../../src/migration/snapshot.js";
import type { Step } from "../../src/migration/steps.js";
import { isWrite } from "../../src/migration/steps.js";
import { requestOf } from "../../src/migration/write.js";
import {
  statusAuthorityReading,
  synchronizedAPI,
  synchronizedGeneration,
} from "../../src/protocol/authority.js";
import { isPaused, pauseAcknowledged } from "../../src/protocol/pause.js";
import { SYNCHRONIZED_REASONS } from "../../src/protocol/synchronized.js";
import { invariantViolations } from "./invariants.js";

export const MAPI_NS = "openshift-machine-api";
export const CAPI_NS = "openshift-cluster-api";
export const T0 = Date.parse("2026-11-30T09:00:00Z");
export const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

export const clone = <T>(v: T): T => structuredClone(v);

const pausedCondition = (status: "True" | "False", at: number): Condition => ({
  type: CONDITIONS.paused,
  status,
  reason: status === "True" ? "AuthoritativeAPINotMachineAPI" : "AuthoritativeAPIMachineAPI",
  lastTransitionTime: iso(at),
});

const capiPausedCondition = (status: "True" | "False", at: number): Condition => ({
  type: CONDITIONS.paused,
  status,
  reason: status === "True" ? "Paused" : "NotPaused",
  lastTransitionTime: iso(at),
});

const pauseAnnotations = (paused: boolean): Record<string, string> =>
  paused ? { [ANNOTATIONS.paused]: "", [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE } : {};

/** A MAPI Machine or MachineSet, its CAPI twin and (Machines) AWSMachine, all steady under `authority`. */
export const stableSnapshot = (
  kind: HandoverKind,
  authority: StableAuthority,
  name = "worker-a",
): HandoverSnapshot => {
  const capiActive = authority === "ClusterAPI";
  const mapiGeneration = 3;
  const capiGeneration = 2;
  const mapi: KubeObject = {
    apiVersion: MAPI_API_VERSION,
    kind,
    metadata: {
      name,
      namespace: MAPI_NS,
      uid: `uid-mapi-${name}`,
      resourceVersion: "1",
      generation: mapiGeneration,
      labels: kind === "Machine" ? {} : { [LABELS.templateMachineSet]: name },
      finalizers:
        kind === "Machine" && !capiActive ? [FINALIZERS.mapiMachine, FINALIZERS.sync] : [FINALIZERS.sync],
    },
    spec:
      kind === "Machine"
        ? { authoritativeAPI: authority, providerSpec: { value: { instanceType: "m6i.large" } } }
        : {
            authoritativeAPI: authority,
            replicas: 2,
            selector: { matchLabels: { [LABELS.templateMachineSet]: name } },
            template: {
              metadata: { labels: { [LABELS.templateMachineSet]: name } },
              spec: { authoritativeAPI: authority },
            },
          },
    status: {
      authoritativeAPI: authority,
      synchronizedAPI: authority,
      synchronizedGeneration: capiActive ? capiGeneration : mapiGeneration,
      ...(kind === "Machine" ? { phase: "Running" } : {}),
      conditions: [
        {
          type: CONDITIONS.synchronized,
          status: "True",
          reason: "ResourceSynchronized",
          message: "Successfully synchronized",
          lastTransitionTime: iso(T0 - 3_600_000),
        },
        pausedCondition(capiActive ? "True" : "False", T0 - 3_600_000),
      ],
    },
  };
  const capi: KubeObject = {
    apiVersion: CAPI_API_VERSION,
    kind,
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-capi-${name}`,
      resourceVersion: "2",
      generation: capiGeneration,
      annotations: pauseAnnotations(!capiActive),
      // Cluster API adds its own finalizer before it checks the pause, so a paused twin carries it too
      // (SPEC §3.1 step 9); only CAPA's (on the AWSMachine) marks the CAPI side as holding the instance.
      finalizers: [kind === "Machine" ? FINALIZERS.capiMachine : FINALIZERS.capiMachineSet, FINALIZERS.sync],
    },
    spec:
      kind === "Machine"
        ? {
            clusterName: "ci-abc12",
            infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name },
          }
        : {
            clusterName: "ci-abc12",
            replicas: 2,
            selector: { matchLabels: { [LABELS.capiSetName]: name } },
            template: { metadata: { labels: { [LABELS.capiSetName]: name } } },
          },
    status: {
      ...(kind === "Machine"
        ? { phase: "Running", initialization: { infrastructureProvisioned: true } }
        : {}),
      conditions: [capiPausedCondition(capiActive ? "False" : "True", T0 - 3_600_000)],
    },
  };
  const snapshot: HandoverSnapshot = { kind, mapi, capi };
  if (kind === "Machine")
    snapshot.infraMachine = {
      apiVersion: INFRA_API_VERSION,
      kind: "AWSMachine",
      metadata: {
        name,
        namespace: CAPI_NS,
        uid: `uid-aws-${name}`,
        resourceVersion: "3",
        generation: 1,
        annotations: pauseAnnotations(!capiActive),
        finalizers: capiActive ? [FINALIZERS.awsMachine, FINALIZERS.sync] : [FINALIZERS.sync],
        ownerReferences: [{ apiVersion: CAPI_API_VERSION, kind: "Machine", name, uid: `uid-capi-${name}` }],
      },
      spec: { instanceType: "m6i.large", providerID: "aws:///us-east-1a/i-0abc" },
      status: {
        ready: true,
        conditions: [capiPausedCondition(capiActive ? "False" : "True", T0 - 3_600_000)],
      },
    };
  else snapshot.members = membersOf(name, 2);
  return snapshot;
};

/** Member Machines of MachineSet `set`, twinned and synchronised on both sides. */
export const membersOf = (set: string, count: number): { mapi: KubeObject[]; capi: KubeObject[] } => {
  const mapi: KubeObject[] = [];
  const capi: KubeObject[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `${set}-${i}`;
    mapi.push({
      apiVersion: MAPI_API_VERSION,
      kind: "Machine",
      metadata: {
        name,
        namespace: MAPI_NS,
        uid: `uid-mapi-${name}`,
        labels: { [LABELS.templateMachineSet]: set },
        ownerReferences: [
          {
            apiVersion: MAPI_API_VERSION,
            kind: "MachineSet",
            name: set,
            uid: `uid-mapi-${set}`,
            controller: true,
          },
        ],
      },
      status: {
        conditions: [{ type: CONDITIONS.synchronized, status: "True", reason: "ResourceSynchronized" }],
      },
    });
    capi.push({
      apiVersion: CAPI_API_VERSION,
      kind: "Machine",
      metadata: {
        name,
        namespace: CAPI_NS,
        uid: `uid-capi-${name}`,
        labels: { [LABELS.capiSetName]: set },
        ownerReferences: [
          {
            apiVersion: CAPI_API_VERSION,
            kind: "MachineSet",
            name: set,
            uid: `uid-capi-${set}`,
            controller: true,
          },
        ],
      },
    });
  }
  return { mapi, capi };
};

/** A copy of the snapshot with `edit` applied to one object (created empty-metadata safe). */
export const edit = (s: HandoverSnapshot, role: Role, change: (o: KubeObject) => void): HandoverSnapshot => {
  const next = clone(s);
  const object = objectOf(next, role);
  if (!object) throw new Error(`no ${role} in snapshot`);
  change(object);
  return next;
};

export const setSpecAuthority = (s: HandoverSnapshot, a: StableAuthority): HandoverSnapshot =>
  edit(s, "mapi", (o) => {
    o.spec = { ...o.spec, authoritativeAPI: a };
  });

export const setStatusField = (o: KubeObject, field: string, value: unknown): void => {
  o.status = { ...o.status, [field]: value };
};

export const putCondition = (o: KubeObject, c: Condition): void => {
  const rest = conditionsOf(o).filter((x) => x.type !== c.type);
  o.status = { ...o.status, conditions: [...rest, c] };
};

export const markDeleting = (o: KubeObject, at: number): void => {
  o.metadata = { ...o.metadata, deletionTimestamp: iso(at), generation: generationOf(o) + 1 };
};

// ---------------------------------------------------------------------------------------------------
// The world: a snapshot, a resourceVersion counter and a clock, changed by the executor and the actors.

export interface World {
  s: HandoverSnapshot;
  rv: number;
  now: number;
}

export const worldOf = (s: HandoverSnapshot): World => ({ s, rv: 100, now: T0 });

const touch = (w: World, role: Role, change: (o: KubeObject) => void): World => {
  const rv = w.rv + 1;
  const s = edit(w.s, role, (o) => {
    change(o);
    o.metadata = { ...o.metadata, resourceVersion: String(rv) };
  });
  return { s, rv, now: w.now + 1000 };
};

export class ApiRefusal extends Error {}

/** RFC 7386 JSON merge patch: objects merge, null deletes, everything else replaces. */
const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isRecord(patch)) return clone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
};

/**
 * Executes one planner step like the shell and the API server would: the step becomes the request
 * `requestOf` builds, and that request is applied with the server's rules — a merge patch's
 * resourceVersion must match (409), a JSON Patch's `test` must hold, the status subresource changes only
 * status and the main resource never does, and a deleting object takes no new finalizer.
 */
export const applyStep = (w: World, step: Step): World => {
  const request = requestOf(step);
  if (!request) return w;
  const role = request.target.role;
  const current = objectOf(w.s, role);
  if (!current) throw new ApiRefusal(`404: ${role} ${request.target.name}`);
  let next: KubeObject;
  if (request.patchType === "application/merge-patch+json") {
    const rv = getPath(request.body, ["metadata", "resourceVersion"]);
    if (rv !== current.metadata?.resourceVersion)
      throw new ApiRefusal(`409: ${role} changed since the step was planned`);
    const patched = mergePatch(current, request.body) as KubeObject;
    next =
      request.subresource === "status"
        ? { ...clone(current), status: patched.status ?? {} }
        : { ...patched, status: clone(current.status) };
  } else {
    try {
      next = jsonpatch.applyPatch(clone(current), request.body, true, false).newDocument;
    } catch (e) {
      throw new ApiRefusal(`422: ${(e as Error).message}`);
    }
  }
  const before = finalizersOf(current);
  if (isDeleting(current) && finalizersOf(next).some((f) => !before.includes(f)))
    throw new ApiRefusal("422: new finalizers are refused on a deleting object");
  return touch(w, role, (o) => {
    for (const k of Object.keys(o)) delete o[k];
    Object.assign(o, next);
  });
};

/** Writes a Paused condition when it differs; lastTransitionTime moves only with status. */
const writePaused = (w: World, role: Role, status: "True" | "False"): World => {
  const o = objectOf(w.s, role);
  if (!o || conditionOf(o, CONDITIONS.paused)?.status === status) return w;
  return touch(w, role, (x) => {
    const next = setCondition(
      conditionsOf(x),
      { type: CONDITIONS.paused, status, reason: status === "True" ? "Paused" : "NotPaused" },
      new Date(w.now),
    );
    x.status = { ...x.status, conditions: [...next] };
  });
};

const ensureFinalizer = (w: World, role: Role, finalizer: string): World => {
  const o = objectOf(w.s, role);
  if (!o || isDeleting(o) || finalizersOf(o).includes(finalizer)) return w;
  return touch(w, role, (x) => {
    x.metadata = { ...x.metadata, finalizers: [...finalizersOf(x), finalizer] };
  });
};

export type ActorName = "mao" | "capi" | "capa" | "sync";
export const ACTORS: readonly ActorName[] = ["mao", "capi", "capa", "sync"];

/**
 * One reconcile of one stand-in controller (SPEC §1.1), returning the world unchanged when it has
 * nothing to do. MAO acknowledges with Paused from status and holds its finalizer while active; CAPI and
 * CAPA acknowledge from their own pause annotation; CAPA adds its finalizer while unpaused, Cluster API its
 * own whether paused or not (before its pause check, as the real controllers do); the sync writes
 * Synchronized/synchronizedGeneration, and while Migrating only the final sync, once step 6 holds.
 */
export const act = (w: World, actor: ActorName): World => {
  const s = w.s;
  switch (actor) {
    case "mao": {
      const mapi = s.mapi;
      if (!mapi) return w;
      const status = statusAuthorityReading(mapi);
      if (status === "absent" || status === "invalid") return w;
      const w1 = writePaused(w, "mapi", status === "MachineAPI" ? "False" : "True");
      return status === "MachineAPI" && s.kind === "Machine"
        ? ensureFinalizer(w1, "mapi", FINALIZERS.mapiMachine)
        : w1;
    }
    case "capi": {
      const capi = s.capi;
      if (!capi) return w;
      // Cluster API adds its finalizer before its pause check (never to a deleting object), then acknowledges.
      const finalizer = s.kind === "Machine" ? FINALIZERS.capiMachine : FINALIZERS.capiMachineSet;
      return writePaused(ensureFinalizer(w, "capi", finalizer), "capi", isPaused(capi) ? "True" : "False");
    }
    case "capa": {
      const infra = s.infraMachine;
      if (!infra) return w;
      const w1 = writePaused(w, "infraMachine", isPaused(infra) ? "True" : "False");
      return isPaused(infra) ? w1 : ensureFinalizer(w1, "infraMachine", FINALIZERS.awsMachine);
    }
    case "sync":
      return syncOnce(w);
  }
};

const syncOnce = (w: World): World => {
  const { mapi, capi } = w.s;
  if (!mapi || !capi) return w;
  if ([mapi, capi, w.s.infraMachine].some((o) => isDeleting(o))) return w;
  const status = statusAuthorityReading(mapi);
  let reason: string;
  let source: StableAuthority;
  if (status === "MachineAPI" || status === "ClusterAPI") {
    reason = SYNCHRONIZED_REASONS.resourceSynchronized;
    source = status;
  } else if (status === "Migrating") {
    const old = synchronizedAPI(mapi);
    if (!old || !pauseAcknowledged(w.s, old)) return w;
    reason = SYNCHRONIZED_REASONS.finalSyncComplete;
    source = old;
  } else return w;
  const generation = generationOf(source === "MachineAPI" ? mapi : capi);
  const current = conditionOf(mapi, CONDITIONS.synchronized);
  if (current?.status === "True" && current.reason === reason && synchronizedGeneration(mapi) === generation)
    return w;
  return touch(w, "mapi", (x) => {
    const next = setCondition(
      conditionsOf(x),
      {
        type: CONDITIONS.synchronized,
        status: "True",
        reason,
        message: `Successfully synchronized from ${source}`,
      },
      new Date(w.now),
    );
    x.status = { ...x.status, synchronizedGeneration: generation, conditions: [...next] };
  });
};

export interface Run {
  world: World;
  /** Every planner step, in order (writes and waits). */
  steps: Step[];
  /** Every observed state, starting with the first. */
  history: HandoverSnapshot[];
  /** The planner's answer once nothing changes any more. */
  last: Step;
}

/**
 * Drives planner and stand-ins in a fixed, fair order until nothing changes: the planner writes one step,
 * then each stand-in reconciles once; stops when a round changes nothing.
 */
export const runToRest = (start: World, options: PlanOptions = {}, maxRounds = 200): Run => {
  let world = start;
  const steps: Step[] = [];
  const history: HandoverSnapshot[] = [start.s];
  for (let round = 0; round < maxRounds; round++) {
    const step = planHandover(world.s, new Date(world.now), options);
    steps.push(step);
    let changed = false;
    if (isWrite(step)) {
      world = applyStep(world, step);
      history.push(world.s);
      changed = true;
    }
    for (const actor of ACTORS) {
      const next = act(world, actor);
      if (next !== world) {
        world = next;
        history.push(world.s);
        changed = true;
      }
    }
    if (!changed) return { world, steps, history, last: step };
  }
  throw new Error(`no rest after ${maxRounds} rounds; last steps: ${steps.slice(-5).map((s) => s.kind)}`);
};

export const violationsOf = (history: readonly HandoverSnapshot[]): string[] =>
  invariantViolations(history).map((v) => `${v.invariant}: ${v.message}`);
