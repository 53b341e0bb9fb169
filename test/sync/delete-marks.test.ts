/**
 * SPEC §4.4 delete marks, the one exception to one-way sync: a mark added to either copy of a Machine reaches
 * the other, and a mark removed from either copy is removed from the other (issue 19 #5: a withdrawn mark
 * came back from the other copy, and the next scale-down picked the Machine the user had un-marked). The
 * sync tells an addition on one side from a removal on the other by what it last carried, recorded on the
 * MAPI Machine (`machine-api-migration.openshift.io/synced-delete-marks`). First the pure three-way decision
 * as a table, then the planner driven to a fixed point on an in-memory world, under both authorities and in
 * the final sync of a handover.
 */
import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, FINALIZERS, INFRA_API_VERSION, MAPI_API_VERSION } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { annotationsOf } from "../../src/kube/object.js";
import { carryDeleteMarks, SYNCED_DELETE_MARKS } from "../../src/sync/desired.js";
import { planMachineSync, type SyncPlan } from "../../src/sync/plan.js";
import type { SyncWrite } from "../../src/sync/writes.js";
import {
  awsMachine,
  CAPI_NS,
  capiCluster,
  capiMachine,
  condition,
  deps,
  infrastructure,
  LATER,
  MAPI_NS,
  mapiMachine,
  NOW,
  pausedAnnotations,
  World,
} from "./builders.js";

const MAPI_MARK = "machine.openshift.io/delete-machine";
const MAPI_OLD_MARK = "machine.openshift.io/cluster-api-delete-machine";
const CAPI_MARK = "cluster.x-k8s.io/delete-machine";
const BOTH = JSON.stringify([CAPI_MARK, MAPI_MARK]);

// ------------------------------------------------------------------------------------- the pure decision

const withAnnotations = (o: KubeObject, annotations: Record<string, string>): KubeObject => ({
  ...o,
  metadata: { ...(o.metadata ?? {}), annotations: { ...annotationsOf(o), ...annotations } },
});

interface MarkCase {
  name: string;
  mapi: Record<string, string>;
  /** undefined: the CAPI copy does not exist yet (the sync is about to create it). */
  capi: Record<string, string> | undefined;
  marked: boolean;
  mapiChanges: Record<string, string | null>;
  capiChanges: Record<string, string | null>;
}

const markCases: MarkCase[] = [
  {
    name: "§4.4 delete marks: no mark on either copy and no record — nothing to carry",
    mapi: {},
    capi: {},
    marked: false,
    mapiChanges: {},
    capiChanges: {},
  },
  {
    name: "§4.4 delete marks: a mark added to the MAPI copy reaches the CAPI copy, and is recorded",
    mapi: { [MAPI_MARK]: "true" },
    capi: {},
    marked: true,
    mapiChanges: { [SYNCED_DELETE_MARKS]: BOTH },
    capiChanges: { [CAPI_MARK]: "true" },
  },
  {
    name: "§4.4 delete marks: a mark added to the CAPI copy reaches the MAPI copy, and is recorded",
    mapi: {},
    capi: { [CAPI_MARK]: "2026-11-30" },
    marked: true,
    mapiChanges: { [MAPI_MARK]: "2026-11-30", [SYNCED_DELETE_MARKS]: BOTH },
    capiChanges: {},
  },
  {
    name: "§4.4 delete marks: the older MAPI spelling is a mark too and reaches the CAPI copy as cluster.x-k8s.io/delete-machine",
    mapi: { [MAPI_OLD_MARK]: "" },
    capi: {},
    marked: true,
    mapiChanges: { [SYNCED_DELETE_MARKS]: JSON.stringify([CAPI_MARK, MAPI_OLD_MARK]) },
    capiChanges: { [CAPI_MARK]: "" },
  },
  {
    name: "§4.4 delete marks: both copies marked but nothing recorded (an upgrade) — only the record is written",
    mapi: { [MAPI_MARK]: "true" },
    capi: { [CAPI_MARK]: "true" },
    marked: true,
    mapiChanges: { [SYNCED_DELETE_MARKS]: BOTH },
    capiChanges: {},
  },
  {
    name: "§4.4 delete marks: both copies marked as recorded — nothing to write",
    mapi: { [MAPI_MARK]: "true", [SYNCED_DELETE_MARKS]: BOTH },
    capi: { [CAPI_MARK]: "true" },
    marked: true,
    mapiChanges: {},
    capiChanges: {},
  },
  {
    name: "§4.4 delete marks: a mark removed from the CAPI copy is removed from the MAPI copy (every spelling) and the record goes",
    mapi: { [MAPI_MARK]: "true", [MAPI_OLD_MARK]: "", [SYNCED_DELETE_MARKS]: BOTH },
    capi: {},
    marked: false,
    mapiChanges: { [MAPI_MARK]: null, [MAPI_OLD_MARK]: null, [SYNCED_DELETE_MARKS]: null },
    capiChanges: {},
  },
  {
    name: "§4.4 delete marks: a mark removed from the MAPI copy is removed from the CAPI copy (a MAPI spelling copied there too)",
    mapi: { [SYNCED_DELETE_MARKS]: BOTH },
    capi: { [CAPI_MARK]: "true", [MAPI_OLD_MARK]: "" },
    marked: false,
    mapiChanges: { [SYNCED_DELETE_MARKS]: null },
    capiChanges: { [CAPI_MARK]: null, [MAPI_OLD_MARK]: null },
  },
  {
    name: "§4.4 delete marks: removed from both copies — only the record goes",
    mapi: { [SYNCED_DELETE_MARKS]: BOTH },
    capi: {},
    marked: false,
    mapiChanges: { [SYNCED_DELETE_MARKS]: null },
    capiChanges: {},
  },
  {
    name: "§4.4 delete marks: a record the sync cannot read counts as nothing carried (the mark is an addition)",
    mapi: { [SYNCED_DELETE_MARKS]: "{not json" },
    capi: { [CAPI_MARK]: "true" },
    marked: true,
    mapiChanges: { [MAPI_MARK]: "true", [SYNCED_DELETE_MARKS]: BOTH },
    capiChanges: {},
  },
  {
    name: "§4.4 delete marks: a CAPI copy about to be created carries the MAPI copy's mark, and it is recorded",
    mapi: { [MAPI_MARK]: "true" },
    capi: undefined,
    marked: true,
    mapiChanges: { [SYNCED_DELETE_MARKS]: BOTH },
    capiChanges: { [CAPI_MARK]: "true" },
  },
  {
    name: "§4.4 delete marks: a CAPI copy about to be created while the record says marked — the MAPI copy decides",
    mapi: { [SYNCED_DELETE_MARKS]: BOTH },
    capi: undefined,
    marked: false,
    mapiChanges: { [SYNCED_DELETE_MARKS]: null },
    capiChanges: {},
  },
];

describe("§4.4 carryDeleteMarks: an addition on one copy told from a removal on the other", () => {
  it.each(markCases)("$name", (c) => {
    const mapi = withAnnotations(mapiMachine("m"), c.mapi);
    const capi = c.capi === undefined ? undefined : withAnnotations(capiMachine("m"), c.capi);
    expect(carryDeleteMarks(mapi, capi)).toEqual({
      marked: c.marked,
      mapi: c.mapiChanges,
      capi: c.capiChanges,
    });
  });
});

// ----------------------------------------------------------------------------- the planner, to a fixed point

const settle = (world: World, max = 8): SyncPlan[] => {
  const plans: SyncPlan[] = [];
  for (let i = 0; i < max; i++) {
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    plans.push(plan);
    if (plan.writes.length === 0) return plans;
    world.execute(plan.writes);
  }
  throw new Error(`no fixed point after ${max} rounds: ${JSON.stringify(plans.at(-1)?.writes)}`);
};

const mapiOf = (w: World) => w.find(MAPI_API_VERSION, "Machine", MAPI_NS, "m");
const capiOf = (w: World) => w.find(CAPI_API_VERSION, "Machine", CAPI_NS, "m");
const marksOf = (o: KubeObject | undefined): Record<string, string> =>
  Object.fromEntries(
    Object.entries(annotationsOf(o)).filter(([k]) => [MAPI_MARK, MAPI_OLD_MARK, CAPI_MARK].includes(k)),
  );
const recordOf = (o: KubeObject | undefined): string | undefined => annotationsOf(o)[SYNCED_DELETE_MARKS];

/** A user (or the autoscaler) edits one copy's annotations: `null` removes a key. */
const annotate = (world: World, side: "MAPI" | "CAPI", changes: Record<string, string | null>): void => {
  const [apiVersion, namespace] = side === "MAPI" ? [MAPI_API_VERSION, MAPI_NS] : [CAPI_API_VERSION, CAPI_NS];
  world.mutate(apiVersion, "Machine", namespace, "m", (o) => {
    const annotations = { ...annotationsOf(o) };
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) delete annotations[k];
      else annotations[k] = v;
    }
    o.metadata = { ...(o.metadata ?? {}), annotations };
  });
};

/** MachineAPI: the sync created the paused CAPI mirror. */
const machineApiWorld = (): World => {
  const world = new World([infrastructure(), capiCluster(), mapiMachine("m")]);
  settle(world);
  return world;
};

/** ClusterAPI: an active CAPI Machine and its InfraMachine, the MAPI copy a mirror. */
const clusterApiWorld = (): World => {
  const world = new World([
    infrastructure(),
    capiCluster(),
    mapiMachine("m", {
      authority: "ClusterAPI",
      meta: { finalizers: [FINALIZERS.sync] },
      status: { conditions: [condition("Synchronized", "True"), condition("Paused", "True")] },
    }),
    capiMachine("m", {
      meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] },
      status: { phase: "Running" },
    }),
    awsMachine("m", { meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] } }),
  ]);
  settle(world);
  return world;
};

/**
 * Migrating from MachineAPI with step 6 of §3.1 done (the MAPI side acknowledged its pause after the recorded
 * Paused=False): the final sync runs.
 */
const finalSyncWorld = (): World => {
  const world = machineApiWorld();
  world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
    o.metadata = {
      ...(o.metadata ?? {}),
      annotations: {
        ...annotationsOf(o),
        "machine-api-migration.openshift.io/paused-false-at": JSON.stringify({
          mapi: "2026-11-30T09:00:00Z",
        }),
      },
    };
    o.spec = { ...(o.spec ?? {}), authoritativeAPI: "ClusterAPI" };
    o.status = {
      ...(o.status ?? {}),
      authoritativeAPI: "Migrating",
      synchronizedAPI: "MachineAPI",
      conditions: [condition("Synchronized", "Unknown"), condition("Paused", "True", LATER)],
    };
  });
  return world;
};

const worlds: [string, () => World][] = [
  ["MachineAPI", machineApiWorld],
  ["ClusterAPI", clusterApiWorld],
  ["Migrating (final sync)", finalSyncWorld],
];

describe.each(worlds)("§4.4 delete marks under %s", (_authority, build) => {
  it.each([
    ["MAPI", { [MAPI_MARK]: "true" }, { [CAPI_MARK]: "true" }],
    ["CAPI", { [CAPI_MARK]: "true" }, { [MAPI_MARK]: "true" }],
  ] as const)(
    "§4.4 delete marks: a mark added to the %s copy reaches the other copy",
    (side, added, carried) => {
      const world = build();
      annotate(world, side, added);
      settle(world);
      const [self, other] = side === "MAPI" ? [mapiOf(world), capiOf(world)] : [capiOf(world), mapiOf(world)];
      expect(marksOf(self)).toEqual(added);
      expect(marksOf(other)).toEqual(carried);
      expect(recordOf(mapiOf(world))).toBe(BOTH);
    },
  );

  it.each(["MAPI", "CAPI"] as const)(
    "§4.4 delete marks: a mark removed from the %s copy is removed from the other copy, and stays removed",
    (side) => {
      const world = build();
      annotate(world, "MAPI", { [MAPI_MARK]: "true" });
      settle(world);
      expect(marksOf(capiOf(world))).toEqual({ [CAPI_MARK]: "true" });

      annotate(world, side, side === "MAPI" ? { [MAPI_MARK]: null } : { [CAPI_MARK]: null });
      const plans = settle(world);
      expect(marksOf(mapiOf(world))).toEqual({});
      expect(marksOf(capiOf(world))).toEqual({});
      expect(recordOf(mapiOf(world))).toBeUndefined();
      // The fixed point holds: a further reconcile writes nothing (the mark does not come back).
      expect(plans.at(-1)?.writes).toEqual([]);
      expect(planMachineSync(world.machineSnapshot("m"), deps(), NOW).writes).toEqual([]);
    },
  );

  it("§4.4 delete marks: a mark removed and added again is carried again", () => {
    const world = build();
    annotate(world, "CAPI", { [CAPI_MARK]: "first" });
    settle(world);
    annotate(world, "CAPI", { [CAPI_MARK]: null });
    settle(world);
    annotate(world, "MAPI", { [MAPI_MARK]: "second" });
    settle(world);
    expect(marksOf(capiOf(world))).toEqual({ [CAPI_MARK]: "second" });
    expect(marksOf(mapiOf(world))).toEqual({ [MAPI_MARK]: "second" });
  });
});

describe("§4.4 delete marks: the record moves only with the other copy", () => {
  const writeTo = (plan: SyncPlan, namespace: string, kind = "annotate"): number =>
    plan.writes.findIndex(
      (w: SyncWrite) => w.kind === kind && "target" in w && w.target.namespace === namespace,
    );

  it.each([
    ["MachineAPI", machineApiWorld],
    ["ClusterAPI", clusterApiWorld],
  ] as const)(
    "§4.4 delete marks (%s): the CAPI copy loses its mark before the record goes; a failed CAPI write changes nothing",
    (_authority, build) => {
      const world = build();
      annotate(world, "MAPI", { [MAPI_MARK]: "true" });
      settle(world);
      annotate(world, "MAPI", { [MAPI_MARK]: null });
      const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
      const capiWrite = writeTo(plan, CAPI_NS);
      const recordWrite = writeTo(plan, MAPI_NS);
      expect(capiWrite).toBeGreaterThanOrEqual(0);
      expect(recordWrite).toBeGreaterThan(capiWrite);
      expect(plan.writes[recordWrite]).toMatchObject({
        kind: "annotate",
        why: "deleteMark",
        annotations: { [SYNCED_DELETE_MARKS]: null },
      });
      // The CAPI write loses a race (another controller changed the CAPI Machine): the record is untouched,
      // so the next reconcile decides the same way instead of reading the lone CAPI mark as an addition.
      world.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, "m", (o) => {
        o.status = { ...(o.status ?? {}), observedGeneration: 2 };
      });
      expect(() => world.execute(plan.writes)).toThrow(/409/);
      expect(recordOf(mapiOf(world))).toBe(BOTH);
      settle(world);
      expect(marksOf(capiOf(world))).toEqual({});
      expect(marksOf(mapiOf(world))).toEqual({});
    },
  );

  it("§4.4 delete marks: an InfraMachine never carries a mark", () => {
    const world = machineApiWorld();
    annotate(world, "MAPI", { [MAPI_MARK]: "true" });
    settle(world);
    const infra = world.find(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m");
    expect(marksOf(infra)).toEqual({});
    expect(annotationsOf(infra)).toMatchObject(pausedAnnotations);
  });
});
