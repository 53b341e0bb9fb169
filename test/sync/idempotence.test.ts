import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FINALIZERS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { planMachineSetSync, planMachineSync, type SyncPlan } from "../../src/sync/plan.js";
import type { SyncWrite } from "../../src/sync/writes.js";
import {
  awsMachine,
  awsMachineTemplate,
  CAPI_NS,
  capiCluster,
  capiMachine,
  capiMachineSet,
  condition,
  deps,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  NOW,
  ownerRef,
  providerSpec,
  templateNameFor,
  World,
} from "./builders.js";

const LATER_NOW = new Date("2026-12-24T00:00:00Z");
const INSTANCE_TYPES = ["m6i.xlarge", "m6i.2xlarge", "c6i.large"];

/** Plans and executes until quiet; returns every plan (throws when no fixed point within `max` rounds). */
const settle = (plan: () => SyncPlan, world: World, max = 10): SyncPlan[] => {
  const plans: SyncPlan[] = [];
  for (let i = 0; i < max; i++) {
    const p = plan();
    plans.push(p);
    if (p.writes.length === 0) return plans;
    world.execute(p.writes);
  }
  throw new Error(`no fixed point: ${JSON.stringify(plans.at(-1)?.writes, null, 1)}`);
};

const machineScenario = fc.record({
  authority: fc.constantFrom("MachineAPI", "ClusterAPI"),
  synchronizedBefore: fc.boolean(),
  mapiType: fc.constantFrom(...INSTANCE_TYPES),
  capi: fc.option(
    fc.record({
      paused: fc.boolean(),
      providerID: fc.option(fc.constant("aws:///us-east-1a/i-0abc"), { nil: undefined }),
      deleteMark: fc.boolean(),
      extraLabel: fc.boolean(),
    }),
    { nil: undefined },
  ),
  infra: fc.option(
    fc.record({ type: fc.constantFrom(...INSTANCE_TYPES), paused: fc.boolean(), ackPaused: fc.boolean() }),
    { nil: undefined },
  ),
  mapiDeleteMark: fc.boolean(),
  phase: fc.constantFrom("Provisioning", "Running"),
  member: fc.boolean(),
});
type MachineScenario = typeof machineScenario extends fc.Arbitrary<infer T> ? T : never;

const machineWorld = (s: MachineScenario): World => {
  const paused = (p: boolean) => (p ? undefined : { annotations: {} });
  const mapiSet = mapiMachineSet("workers");
  const capiSet = capiMachineSet("workers");
  const mapi = mapiMachine("m", {
    authority: s.authority,
    spec: { providerSpec: providerSpec(s.mapiType) },
    status: {
      phase: s.phase,
      ...(s.synchronizedBefore ? { conditions: [condition("Synchronized", "True")] } : {}),
    },
    meta: {
      ...(s.mapiDeleteMark ? { annotations: { "machine.openshift.io/delete-machine": "true" } } : {}),
      ...(s.member ? { ownerReferences: [ownerRef(mapiSet)] } : {}),
    },
  });
  const objects: KubeObject[] = [infrastructure(), capiCluster(), mapiSet, capiSet, mapi];
  if (s.capi) {
    const meta: Record<string, unknown> = { ...(paused(s.capi.paused) ?? {}) };
    if (s.capi.deleteMark) {
      meta.annotations = {
        ...((meta.annotations as object) ?? {
          "cluster.x-k8s.io/paused": "",
          "machine-api-migration.openshift.io/paused-by": "machine-api-migration",
        }),
        "cluster.x-k8s.io/delete-machine": "true",
      };
    }
    if (s.capi.extraLabel) meta.labels = { "user.example.com/owner": "team-a" };
    objects.push(
      capiMachine("m", {
        meta,
        spec: s.capi.providerID ? { providerID: s.capi.providerID } : {},
        status: { phase: "Running" },
      }),
    );
  }
  if (s.infra) {
    objects.push(
      awsMachine("m", {
        meta: { ...(paused(s.infra.paused) ?? {}), finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] },
        spec: { instanceType: s.infra.type },
        pausedCondition: s.infra.ackPaused ? "True" : "False",
      }),
    );
  }
  return new World(objects);
};

const activeSideSpecWrites = (writes: readonly SyncWrite[], authority: string): SyncWrite[] =>
  writes.filter((w) => {
    if (w.kind !== "apply" && w.kind !== "create") return false;
    const target = w.kind === "create" ? w.object : { metadata: { namespace: w.target.namespace } };
    const namespace = target.metadata?.namespace;
    return authority === "MachineAPI" ? namespace === MAPI_NS : namespace === CAPI_NS;
  });

describe("idempotence (property): planning on the result of a plan's writes converges to zero writes", () => {
  it("Machines: any starting state reaches a fixed point, stays quiet at a later `now`, and never writes the active side's spec (I5)", () => {
    fc.assert(
      fc.property(machineScenario, (s) => {
        const world = machineWorld(s);
        const plans = settle(() => planMachineSync(world.machineSnapshot("m"), deps(), NOW), world);
        expect(planMachineSync(world.machineSnapshot("m"), deps(), NOW).writes).toEqual([]);
        expect(planMachineSync(world.machineSnapshot("m"), deps(), LATER_NOW).writes).toEqual([]);
        const bornTwin = plans[0]?.branch.kind === "createBornClusterAPITwin";
        const spec = activeSideSpecWrites(
          plans.flatMap((p) => p.writes),
          s.authority,
        );
        if (!bornTwin) expect(spec).toEqual([]);
      }),
      { numRuns: 150, seed: 20261130 },
    );
  });

  it("MachineSets: any starting state (stale labelled templates, hand-made ones) reaches a fixed point with only the current template left labelled", () => {
    const scenario = fc.record({
      mapiType: fc.constantFrom(...INSTANCE_TYPES),
      capiExists: fc.boolean(),
      staleTemplates: fc.subarray(INSTANCE_TYPES),
      handMade: fc.boolean(),
    });
    fc.assert(
      fc.property(scenario, (s) => {
        const mapi = mapiMachineSet("workers");
        (mapi.spec as { template: { spec: Record<string, unknown> } }).template.spec.providerSpec =
          providerSpec(s.mapiType);
        const objects: KubeObject[] = [infrastructure(), capiCluster(), mapi];
        const stale = s.staleTemplates[0];
        if (s.capiExists)
          objects.push(
            capiMachineSet("workers", stale ? { template: templateNameFor("workers", stale) } : {}),
          );
        for (const t of s.staleTemplates) {
          objects.push(
            awsMachineTemplate(templateNameFor("workers", t), { setName: "workers", instanceType: t }),
          );
        }
        if (s.handMade) objects.push(awsMachineTemplate("workers-by-hand"));
        const world = new World(objects);
        const plans = settle(
          () => planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW),
          world,
        );
        expect(planMachineSetSync(world.machineSetSnapshot("workers"), deps(), LATER_NOW).writes).toEqual([]);
        const templates = world.all().filter((o) => o.kind === "AWSMachineTemplate");
        expect(templates.map((t) => t.metadata?.name).sort()).toEqual(
          [templateNameFor("workers", s.mapiType), ...(s.handMade ? ["workers-by-hand"] : [])].sort(),
        );
        expect(plans.at(-1)?.writes).toEqual([]);
      }),
      { numRuns: 80, seed: 20261130 },
    );
  });
});
