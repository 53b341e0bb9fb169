/**
 * SPEC §2.2 and I5: on a MachineSet whose status is ClusterAPI, the cluster autoscaler scales the MAPI copy
 * (through `scale`); the sync carries that `spec.replicas` to the authoritative CAPI copy instead of
 * undoing it — and only once every delete mark set on the MAPI copy's Machines is visible on their CAPI
 * copies (§4.4), so Cluster API removes the Machines the autoscaler chose. Planner table tests on the
 * in-memory world of builders.ts, plus the pure predicates.
 */
import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, MAPI_API_VERSION } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath } from "../../src/kube/object.js";
import { synchronizedGeneration } from "../../src/protocol/authority.js";
import { planMachineSetSync, type SyncPlan } from "../../src/sync/plan.js";
import {
  replicasSetOnMapiCopy,
  replicasToCarry,
  unmirroredDeleteMarks,
} from "../../src/sync/plan-machine-set.js";
import { syncSpecViolations } from "../migration/invariants.js";
import {
  awsMachineTemplate,
  CAPI_NS,
  capiCluster,
  capiMachine,
  capiMachineSet,
  DELETED_AT,
  deps,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  NOW,
  ownerRef,
  templateNameFor,
  World,
} from "./builders.js";

const SET = "workers";
const MAPI_MARK = "machine.openshift.io/delete-machine";
const CAPI_MARK = "cluster.x-k8s.io/delete-machine";

/** Plans one reconcile, and checks I5 on the plan (the replicas carry is one of its named exceptions). */
const plan = (world: World): SyncPlan => {
  const snapshot = world.machineSetSnapshot(SET);
  const p = planMachineSetSync(snapshot, deps(), NOW);
  expect(syncSpecViolations(p, snapshot.mapi, { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS })).toEqual(
    [],
  );
  return p;
};

/** Plans and executes until a plan makes no write, returning every plan. */
const settle = (world: World, max = 8): SyncPlan[] => {
  const plans: SyncPlan[] = [];
  for (let i = 0; i < max; i++) {
    const p = plan(world);
    plans.push(p);
    if (p.writes.length === 0) return plans;
    world.execute(p.writes);
  }
  throw new Error(`no fixed point after ${max} rounds: ${JSON.stringify(plans.at(-1)?.writes)}`);
};

const mapiSetOf = (w: World) => w.find(MAPI_API_VERSION, "MachineSet", MAPI_NS, SET);
const capiSetOf = (w: World) => w.find(CAPI_API_VERSION, "MachineSet", CAPI_NS, SET);
const replicasOf = (o: KubeObject | undefined) => getPath(o, ["spec", "replicas"]);

const setReplicas = (w: World, api: "mapi" | "capi", replicas: number): void =>
  api === "mapi"
    ? w.mutate(MAPI_API_VERSION, "MachineSet", MAPI_NS, SET, (o) => {
        o.spec = { ...o.spec, replicas };
      })
    : w.mutate(CAPI_API_VERSION, "MachineSet", CAPI_NS, SET, (o) => {
        o.spec = { ...o.spec, replicas };
        // A spec change: the API server moves the generation on.
        o.metadata = { ...o.metadata, generation: (o.metadata?.generation ?? 1) + 1 };
      });

const mark = (w: World, api: "mapi" | "capi", machine: string): void =>
  api === "mapi"
    ? w.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, machine, (o) => {
        o.metadata = { ...o.metadata, annotations: { ...o.metadata?.annotations, [MAPI_MARK]: "" } };
      })
    : w.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, machine, (o) => {
        o.metadata = { ...o.metadata, annotations: { ...o.metadata?.annotations, [CAPI_MARK]: "" } };
      });

/**
 * A migrated set at rest: MAPI copy ClusterAPI and synchronised from the unpaused CAPI copy, two member
 * Machines on each side. `memberAuthority` MachineAPI makes it a mixed set (its members not migrated).
 */
const migratedSet = (
  memberAuthority: "ClusterAPI" | "MachineAPI" = "ClusterAPI",
  authority = "ClusterAPI",
) => {
  const mapiSet = mapiMachineSet(SET, { authority });
  const capiSet = capiMachineSet(SET, { meta: { annotations: {} } });
  const members = ["workers-a", "workers-b"].flatMap((name) => [
    mapiMachine(name, { authority: memberAuthority, meta: { ownerReferences: [ownerRef(mapiSet)] } }),
    capiMachine(name, { meta: { ownerReferences: [ownerRef(capiSet)] } }),
  ]);
  const world = new World([
    infrastructure(),
    capiCluster(),
    mapiSet,
    capiSet,
    awsMachineTemplate(templateNameFor(SET, "m6i.xlarge"), { setName: SET }),
    ...members,
  ]);
  settle(world);
  return world;
};

describe("§2.2 the autoscaler's replicas on a ClusterAPI MachineSet", () => {
  it("starts at rest: Synchronized=True from the CAPI copy's generation, replicas equal", () => {
    const world = migratedSet();
    expect(conditionOf(mapiSetOf(world), "Synchronized")?.status).toBe("True");
    expect(synchronizedGeneration(mapiSetOf(world))).toBe(capiSetOf(world)?.metadata?.generation);
    expect([replicasOf(mapiSetOf(world)), replicasOf(capiSetOf(world))]).toEqual([2, 2]);
  });

  const cases: { name: string; memberAuthority: "ClusterAPI" | "MachineAPI"; to: number }[] = [
    { name: "scale up of a migrated set", memberAuthority: "ClusterAPI", to: 4 },
    { name: "scale up of a mixed set", memberAuthority: "MachineAPI", to: 3 },
    {
      name: "scale down of a migrated set (no mark: Cluster API chooses)",
      memberAuthority: "ClusterAPI",
      to: 1,
    },
  ];
  for (const c of cases) {
    it(`carries the MAPI copy's replicas to the CAPI copy: ${c.name}`, () => {
      const world = migratedSet(c.memberAuthority);
      setReplicas(world, "mapi", c.to);
      const first = plan(world);
      const carry = first.writes.find((w) => w.kind === "setReplicas");
      expect(carry).toMatchObject({ kind: "setReplicas", replicas: c.to, target: { kind: "MachineSet" } });
      expect(carry && "target" in carry ? carry.target.namespace : undefined).toBe(CAPI_NS);
      settle(world);
      expect([replicasOf(mapiSetOf(world)), replicasOf(capiSetOf(world))]).toEqual([c.to, c.to]);
      // The MAPI copy is in sync with the generation the carry made, so nothing moves afterwards.
      expect(synchronizedGeneration(mapiSetOf(world))).toBe(capiSetOf(world)?.metadata?.generation);
      expect(conditionOf(mapiSetOf(world), "Synchronized")?.status).toBe("True");
      expect(plan(world).writes).toEqual([]);
    });
  }

  for (const memberAuthority of ["ClusterAPI", "MachineAPI"] as const) {
    it(`waits while a delete mark is not yet mirrored, then carries (${memberAuthority === "ClusterAPI" ? "migrated" : "mixed"} set)`, () => {
      const world = migratedSet(memberAuthority);
      mark(world, "mapi", "workers-b");
      setReplicas(world, "mapi", 1);
      const waiting = plan(world);
      expect(waiting.writes.some((w) => w.kind === "setReplicas")).toBe(false);
      expect(waiting.waitingFor).toContain("workers-b");
      expect(waiting.requeue).toBe("backoff");
      world.execute(waiting.writes);
      // The autoscaler's value is not undone while the sync waits.
      expect([replicasOf(mapiSetOf(world)), replicasOf(capiSetOf(world))]).toEqual([1, 2]);
      // The Machine sync carries the mark (§4.4); then the set's replicas follow.
      mark(world, "capi", "workers-b");
      expect(plan(world).writes.find((w) => w.kind === "setReplicas")).toMatchObject({ replicas: 1 });
      settle(world);
      expect([replicasOf(mapiSetOf(world)), replicasOf(capiSetOf(world))]).toEqual([1, 1]);
    });
  }

  it("a mark on a Machine that is already being deleted does not hold the carry", () => {
    const world = migratedSet();
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "workers-b", (o) => {
      o.metadata = {
        ...o.metadata,
        deletionTimestamp: DELETED_AT,
        annotations: { ...o.metadata?.annotations, [MAPI_MARK]: "" },
      };
    });
    setReplicas(world, "mapi", 1);
    expect(plan(world).writes.find((w) => w.kind === "setReplicas")).toMatchObject({ replicas: 1 });
  });

  it("the CAPI copy changed since the last sync: the authoritative copy wins, nothing is carried", () => {
    const world = migratedSet();
    setReplicas(world, "capi", 5);
    setReplicas(world, "mapi", 3);
    const plans = settle(world);
    expect(plans.flatMap((p) => p.writes).some((w) => w.kind === "setReplicas")).toBe(false);
    expect([replicasOf(mapiSetOf(world)), replicasOf(capiSetOf(world))]).toEqual([5, 5]);
  });

  it("a CAPI scale is mirrored to the MAPI copy as before", () => {
    const world = migratedSet();
    setReplicas(world, "capi", 3);
    settle(world);
    expect([replicasOf(mapiSetOf(world)), replicasOf(capiSetOf(world))]).toEqual([3, 3]);
  });

  it("a view of the CAPI copy older than the MAPI copy's synchronizedGeneration writes only once confirmed live (decision 160)", () => {
    // The model campaign's failure (seed 20261252): a new leader's lagging cache showed the CAPI copy before the
    // user's scale; its mirror put the MAPI copy's replicas back, and the carry then took that for the
    // autoscaler's and scaled the CAPI copy down.
    const world = migratedSet();
    const before = structuredClone(capiSetOf(world) as KubeObject);
    setReplicas(world, "capi", 3);
    settle(world);
    const lagging = { ...world.machineSetSnapshot(SET), capi: before };
    const stale = planMachineSetSync(lagging, deps(), NOW);
    expect(stale.writes.length).toBeGreaterThan(0);
    expect(stale.confirmCurrent).toEqual({
      apiVersion: CAPI_API_VERSION,
      kind: "MachineSet",
      namespace: CAPI_NS,
      name: SET,
      uid: before.metadata?.uid,
      generation: before.metadata?.generation,
    });
    // A view at the generation the MAPI copy records, or later, is written from without a live read.
    expect(plan(world).confirmCurrent).toBeUndefined();
    setReplicas(world, "capi", 4);
    expect(plan(world).confirmCurrent).toBeUndefined();
  });
});

describe("§2.2 replicasToCarry and its predicates (pure)", () => {
  const at = (generation: number, replicas: number, synced: number, authority = "ClusterAPI") => {
    const mapi = mapiMachineSet(SET, {
      authority,
      spec: { replicas },
      status: { synchronizedGeneration: synced },
    });
    const capi = capiMachineSet(SET, { meta: { annotations: {}, generation }, spec: { replicas: 2 } });
    return { mapi, capi };
  };
  const rows: {
    name: string;
    generation: number;
    replicas: number;
    synced: number;
    authority?: string;
    kind: string;
  }[] = [
    { name: "copies agree", generation: 3, replicas: 2, synced: 3, kind: "none" },
    { name: "MAPI copy scaled since the last sync", generation: 3, replicas: 5, synced: 3, kind: "carry" },
    { name: "CAPI copy changed since the last sync", generation: 4, replicas: 5, synced: 3, kind: "none" },
    {
      name: "status MachineAPI: MAPI → CAPI carries it anyway",
      generation: 3,
      replicas: 5,
      synced: 3,
      authority: "MachineAPI",
      kind: "none",
    },
    {
      name: "status Migrating: both paused, the final sync decides",
      generation: 3,
      replicas: 5,
      synced: 3,
      authority: "Migrating",
      kind: "none",
    },
  ];
  for (const r of rows) {
    it(`${r.name} → ${r.kind}`, () => {
      const { mapi, capi } = at(r.generation, r.replicas, r.synced, r.authority);
      const snapshot = { name: SET, mapi, capi, templates: [], mapiMachines: [], capiMachines: [] };
      expect(replicasToCarry(snapshot).kind).toBe(r.kind);
    });
  }

  it("replicasSetOnMapiCopy: the MAPI copy's value, or undefined", () => {
    expect(replicasSetOnMapiCopy(at(3, 5, 3).mapi, at(3, 5, 3).capi)).toBe(5);
    expect(replicasSetOnMapiCopy(at(4, 5, 3).mapi, at(4, 5, 3).capi)).toBeUndefined();
  });

  it("unmirroredDeleteMarks: marked MAPI Machines whose CAPI copy has no mark (or no copy), deleting ones aside", () => {
    const marked = (name: string, extra: Record<string, unknown> = {}) =>
      mapiMachine(name, { meta: { annotations: { [MAPI_MARK]: "" }, ...extra } });
    const mapiMachines = [
      marked("mirrored"),
      marked("not-yet"),
      marked("no-twin"),
      marked("deleting", { deletionTimestamp: DELETED_AT }),
      mapiMachine("unmarked"),
    ];
    const capiMachines = [
      capiMachine("mirrored", { meta: { annotations: { [CAPI_MARK]: "" } } }),
      capiMachine("not-yet"),
      capiMachine("unmarked"),
    ];
    expect(unmirroredDeleteMarks(mapiMachines, capiMachines)).toEqual(["no-twin", "not-yet"]);
  });

  it("unmirroredDeleteMarks over 100,000 marked Machines finds each twin by name (decision 142)", () => {
    // Anyone who can annotate Machines can mark a whole set; the twin of each was searched for in the set.
    const names = Array.from({ length: 100_000 }, (_, i) => `m-${String(i).padStart(6, "0")}`);
    const mapiMachines = names.map((name) => ({
      metadata: { name, annotations: { [MAPI_MARK]: "" } },
    }));
    const capiMachines: KubeObject[] = names.map((name, i) => ({
      metadata: { name, annotations: i === 0 ? {} : ({ [CAPI_MARK]: "" } as Record<string, string>) },
    }));
    capiMachines.reverse();
    expect(unmirroredDeleteMarks(mapiMachines, capiMachines)).toEqual([names[0]]);
  });
});
