import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, FINALIZERS, INFRA_API_VERSION, MAPI_API_VERSION } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { finalizersOf, hasFinalizer, isDeleting } from "../../src/kube/object.js";
import { planMachineSync } from "../../src/sync/plan.js";
import type { SyncWrite } from "../../src/sync/writes.js";
import {
  awsMachine,
  CAPI_NS,
  capiCluster,
  capiMachine,
  condition,
  deps,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  NOW,
  removeFinalizer,
  World,
} from "./builders.js";

type Authority = "MachineAPI" | "ClusterAPI";

const objects = (w: World) => ({
  mapi: w.find(MAPI_API_VERSION, "Machine", MAPI_NS, "m"),
  capi: w.find(CAPI_API_VERSION, "Machine", CAPI_NS, "m"),
  infra: w.find(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m"),
});

const start = (authority: Authority, deleted: "mapi" | "capi"): World => {
  const stamp = (o: KubeObject, yes: boolean) =>
    yes ? { ...o, metadata: { ...o.metadata, deletionTimestamp: "2026-11-30T09:59:00Z" } } : o;
  const paused = authority === "MachineAPI" ? {} : { annotations: {} };
  return new World([
    infrastructure(),
    capiCluster(),
    stamp(
      mapiMachine("m", {
        authority,
        meta: { finalizers: [FINALIZERS.mapiMachine, FINALIZERS.sync] },
        status: { conditions: [condition("Synchronized", "True")] },
      }),
      deleted === "mapi",
    ),
    stamp(
      capiMachine("m", { meta: { ...paused, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] } }),
      deleted === "capi",
    ),
    awsMachine("m", { meta: { ...paused, finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] } }),
  ]);
};

/** One action of the active side's real controllers (SPEC §1.1 stand-ins); false when it had nothing to do. */
const providerAct = (w: World, authority: Authority): boolean => {
  const { mapi, capi, infra } = objects(w);
  if (authority === "MachineAPI") {
    if (isDeleting(mapi) && hasFinalizer(mapi, FINALIZERS.mapiMachine)) {
      w.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => removeFinalizer(o, FINALIZERS.mapiMachine));
      return true;
    }
    return false;
  }
  if (isDeleting(infra) && hasFinalizer(infra, FINALIZERS.awsMachine)) {
    w.mutate(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m", (o) => removeFinalizer(o, FINALIZERS.awsMachine));
    return true;
  }
  if (isDeleting(capi) && infra && !isDeleting(infra)) {
    w.mutate(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m", (o) => {
      o.metadata = { ...o.metadata, deletionTimestamp: "2026-11-30T10:00:00Z" };
    });
    return true;
  }
  if (isDeleting(capi) && !infra && hasFinalizer(capi, FINALIZERS.capiMachine)) {
    w.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, "m", (o) => removeFinalizer(o, FINALIZERS.capiMachine));
    return true;
  }
  return false;
};

/** The finalizers only the active side's own controllers may remove (they mean "instance terminated"). */
const forbiddenRemovals = (
  writes: readonly SyncWrite[],
  authority: Authority,
  before: ReturnType<typeof objects>,
) =>
  writes.filter((w) => {
    if (w.kind !== "removeFinalizer") return false;
    if (authority === "MachineAPI")
      return w.target.namespace === MAPI_NS && w.finalizers.includes(FINALIZERS.mapiMachine);
    if (w.target.kind === "AWSMachine") return w.finalizers.includes(FINALIZERS.awsMachine);
    if (w.target.namespace === CAPI_NS) return w.finalizers.includes(FINALIZERS.capiMachine);
    // Under ClusterAPI the MAPI Machine's MAO finalizer goes only after CAPI released the instance.
    return (
      w.finalizers.includes(FINALIZERS.mapiMachine) &&
      (before.infra !== undefined || hasFinalizer(before.capi, FINALIZERS.capiMachine))
    );
  });

describe("§4.6 deletion model (property): any interleaving of sync and provider steps is safe and terminates", () => {
  it("never releases the active side's instance finalizers early, never deletes the InfraMachine under ClusterAPI, and ends with nothing left", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Authority>("MachineAPI", "ClusterAPI"),
        fc.constantFrom<"mapi" | "capi">("mapi", "capi"),
        fc.array(fc.boolean(), { minLength: 0, maxLength: 30 }),
        (authority, deleted, schedule) => {
          const world = start(authority, deleted);
          const step = (syncTurn: boolean) => {
            if (!syncTurn) return providerAct(world, authority);
            const before = objects(world);
            const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
            expect(forbiddenRemovals(plan.writes, authority, before)).toEqual([]);
            if (authority === "ClusterAPI") {
              expect(
                plan.writes.filter((w) => w.kind === "delete" && w.target.kind === "AWSMachine"),
              ).toEqual([]);
            }
            world.execute(plan.writes);
            return plan.writes.length > 0;
          };
          for (const syncTurn of schedule) step(syncTurn);
          // Then let everyone run until quiet: the deletion must complete.
          for (let i = 0; i < 30; i++) {
            const moved = step(true) || step(false);
            if (!moved) break;
          }
          const left = objects(world);
          expect(
            [left.mapi, left.capi, left.infra]
              .filter((o) => o !== undefined)
              .map((o) => `${o?.kind} ${finalizersOf(o)}`),
          ).toEqual([]);
        },
      ),
      { numRuns: 200, seed: 4242 },
    );
  });
});
