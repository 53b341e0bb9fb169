/**
 * SPEC §4.2 and §3.2 I1: one owner for pausing an unpaused CAPI twin under MachineAPI (decision 53). The
 * sync controllers and the migration controller both look at such a twin; only the sync pauses it, and it
 * always marks it `needs-attention`, reports `Synchronized=False UnpausedTwinDetected` and a Warning Event.
 * Here both pure planners run against one in-memory world (test/sync/builders.ts' `World`, which enforces
 * the resourceVersion guards), in both orders, until neither writes: the outcome must not depend on which
 * controller reconciled first. The migration planner's steps go through `requestOf`, as its shell sends them.
 */
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import {
  ANNOTATIONS,
  CAPI_API_VERSION,
  CONDITIONS,
  INFRA_API_VERSION,
  MAPI_API_VERSION,
  PAUSED_BY_VALUE,
} from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { annotationsOf, conditionOf, getPath, isRecord } from "../../src/kube/object.js";
import { planHandover } from "../../src/migration/planner.js";
import type { HandoverKind, HandoverSnapshot } from "../../src/migration/snapshot.js";
import type { Step } from "../../src/migration/steps.js";
import { requestOf } from "../../src/migration/write.js";
import { planMachineSetSync, planMachineSync } from "../../src/sync/plan.js";
import type { SyncEvent } from "../../src/sync/writes.js";
import {
  awsMachine,
  CAPI_NS,
  capiCluster,
  capiMachine,
  capiMachineSet,
  deps,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  NOW,
  World,
} from "./builders.js";

type Controller = "migration" | "sync";
type Role = "capi" | "infraMachine";

const NAME = "race";
const apiVersionOf = (role: Role): string => (role === "capi" ? CAPI_API_VERSION : INFRA_API_VERSION);

const handoverSnapshot = (world: World, kind: HandoverKind): HandoverSnapshot => {
  const mapi = world.find(MAPI_API_VERSION, kind, MAPI_NS, NAME);
  const capi = world.find(CAPI_API_VERSION, kind, CAPI_NS, NAME);
  const infraMachine = world.find(INFRA_API_VERSION, "AWSMachine", CAPI_NS, NAME);
  return {
    kind,
    ...(mapi ? { mapi: structuredClone(mapi) } : {}),
    ...(capi ? { capi: structuredClone(capi) } : {}),
    ...(kind === "Machine" && infraMachine ? { infraMachine: structuredClone(infraMachine) } : {}),
    ...(kind === "MachineSet" ? { members: { mapi: [], capi: [] } } : {}),
  };
};

/** RFC 7386 JSON merge patch: objects merge, null deletes, everything else replaces. */
const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
};

/** One migration reconcile: plan, then send the step's one request with its resourceVersion guard. */
const reconcileMigration = (world: World, kind: HandoverKind, steps: Step[]): boolean => {
  const step = planHandover(handoverSnapshot(world, kind), NOW);
  steps.push(step);
  const request = requestOf(step);
  if (!request) return false;
  const t = request.target;
  world.mutate(t.apiVersion, t.kind, t.namespace, t.name, (o) => {
    if (o.metadata?.resourceVersion !== t.resourceVersion) throw new Error(`409 ${t.kind} ${t.name}`);
    const next: KubeObject =
      request.patchType === "application/merge-patch+json"
        ? (mergePatch(o, request.body) as KubeObject)
        : jsonpatch.applyPatch(structuredClone(o), request.body, true, false).newDocument;
    const kept = request.patchType === "application/merge-patch+json" && request.subresource === "status";
    o.metadata = kept ? o.metadata : next.metadata;
    o.status = kept ? next.status : o.status;
  });
  return true;
};

/** One sync reconcile: plan and execute every write of the plan, in order. */
const reconcileSync = (world: World, kind: HandoverKind, events: SyncEvent[]): boolean => {
  const plan =
    kind === "Machine"
      ? planMachineSync(world.machineSnapshot(NAME), deps(), NOW)
      : planMachineSetSync(world.machineSetSnapshot(NAME), deps(), NOW);
  events.push(...plan.events);
  world.execute(plan.writes);
  return plan.writes.length > 0;
};

/** Each controller reconciles once per round, in `order`, until a round writes nothing. */
const runToRest = (world: World, kind: HandoverKind, order: readonly Controller[]) => {
  const events: SyncEvent[] = [];
  const steps: Step[] = [];
  for (let round = 0; round < 20; round++) {
    let wrote = false;
    for (const controller of order)
      wrote =
        (controller === "sync"
          ? reconcileSync(world, kind, events)
          : reconcileMigration(world, kind, steps)) || wrote;
    if (!wrote) return { events, steps };
  }
  throw new Error("no rest after 20 rounds");
};

const unpaused = { meta: { annotations: {} } };

interface Scenario {
  kind: HandoverKind;
  unpausedRoles: Role[];
  spec: "MachineAPI" | "ClusterAPI";
}

const worldFor = ({ kind, unpausedRoles, spec }: Scenario): World => {
  const status = { conditions: [{ type: CONDITIONS.synchronized, status: "True", reason: "Synced" }] };
  const opts = (role: Role) => (unpausedRoles.includes(role) ? unpaused : {});
  const objects =
    kind === "Machine"
      ? [
          mapiMachine(NAME, { spec: { authoritativeAPI: spec }, status }),
          capiMachine(NAME, { ...opts("capi"), spec: { providerID: "aws:///us-east-1a/i-0user" } }),
          awsMachine(NAME, opts("infraMachine")),
        ]
      : [
          mapiMachineSet(NAME, { spec: { authoritativeAPI: spec }, status }),
          capiMachineSet(NAME, opts("capi")),
        ];
  return new World([infrastructure(), capiCluster(), ...objects]);
};

const SCENARIOS: Scenario[] = [
  { kind: "Machine", unpausedRoles: ["capi"], spec: "MachineAPI" },
  { kind: "Machine", unpausedRoles: ["infraMachine"], spec: "MachineAPI" },
  { kind: "Machine", unpausedRoles: ["capi", "infraMachine"], spec: "MachineAPI" },
  { kind: "Machine", unpausedRoles: ["capi", "infraMachine"], spec: "ClusterAPI" },
  { kind: "MachineSet", unpausedRoles: ["capi"], spec: "MachineAPI" },
  { kind: "MachineSet", unpausedRoles: ["capi"], spec: "ClusterAPI" },
];
const ORDERS: (readonly Controller[])[] = [
  ["migration", "sync"],
  ["sync", "migration"],
];

describe("§4.2 / I1: an unpaused CAPI twin under MachineAPI is flagged whichever controller runs first", () => {
  for (const scenario of SCENARIOS)
    for (const order of ORDERS)
      it(`${scenario.kind}, unpaused ${scenario.unpausedRoles.join(" and ")}, spec ${scenario.spec}, ${order.join(" then ")}: paused, marked needs-attention, UnpausedTwinDetected`, () => {
        const world = worldFor(scenario);
        const { events, steps } = runToRest(world, scenario.kind, order);

        for (const role of scenario.unpausedRoles) {
          const o =
            role === "capi"
              ? world.find(CAPI_API_VERSION, scenario.kind, CAPI_NS, NAME)
              : world.find(apiVersionOf(role), "AWSMachine", CAPI_NS, NAME);
          expect(annotationsOf(o), role).toMatchObject({
            [ANNOTATIONS.paused]: "",
            [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE,
            [ANNOTATIONS.needsAttention]: "UnpausedTwinDetected",
          });
          expect(o?.metadata?.deletionTimestamp, role).toBeUndefined();
        }
        const mapi = world.find(MAPI_API_VERSION, scenario.kind, MAPI_NS, NAME);
        expect(conditionOf(mapi, CONDITIONS.synchronized)).toMatchObject({
          status: "False",
          reason: "UnpausedTwinDetected",
        });
        expect(events.filter((e) => e.reason === "UnpausedTwinDetected")).toEqual([
          expect.objectContaining({ type: "Warning" }),
        ]);
        // No handover starts over a twin an admin has to decide about; the migration controller never paused it.
        expect(getPath(mapi, ["status", "authoritativeAPI"])).toBe("MachineAPI");
        expect(steps.filter((s) => s.kind === "pause")).toEqual([]);
        expect(world.log.filter((w) => w.kind === "delete")).toEqual([]);
      });
});
