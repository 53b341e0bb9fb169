/**
 * Issue 23, sync differences from upstream's controllers (SPEC §4.2, §4.3, §4.5): a CAPI Machine whose
 * InfraMachine does not exist, and a CAPI MachineSet owned by something other than the Cluster (a
 * MachineDeployment), each end in `Synchronized=False` with a reason instead of silence or a mirror.
 */
import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, FINALIZERS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { planMachineSetSync, planMachineSync, type SyncPlan } from "../../src/sync/plan.js";
import {
  awsMachineTemplate,
  capiCluster,
  capiMachine,
  capiMachineSet,
  condition,
  deps,
  infrastructure,
  mapiMachine,
  mapiMachineSet,
  NOW,
  templateNameFor,
  World,
} from "./builders.js";

const kinds = (plan: SyncPlan) =>
  plan.writes.map((w) => `${w.kind} ${"target" in w ? w.target.kind : w.object.kind}`);

const machineDeploymentRef = {
  apiVersion: CAPI_API_VERSION,
  kind: "MachineDeployment",
  name: "workers-md",
  uid: "md-uid-1",
  controller: true,
  blockOwnerDeletion: true,
};

describe("§4.5 a CAPI Machine whose InfraMachine does not exist", () => {
  it("ClusterAPI (CAPI → MAPI) → Synchronized=False, reason FailedToGetCAPIInfraResources, naming the InfraMachine", () => {
    const mapi = mapiMachine("m", {
      authority: "ClusterAPI",
      meta: { finalizers: [FINALIZERS.sync] },
      status: { conditions: [condition("Synchronized", "True"), condition("Paused", "True")] },
    });
    const capi = capiMachine("m", {
      meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] },
      status: { phase: "Running" },
    });
    const world = new World([infrastructure(), capiCluster(), mapi, capi]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.condition).toMatchObject({
      status: "False",
      reason: "FailedToGetCAPIInfraResources",
      message:
        "CAPI Machine openshift-cluster-api/m references AWSMachine openshift-cluster-api/m, which does not exist; the Machine cannot be synchronized until it does",
    });
    expect(kinds(plan)).toEqual(["applyStatus Machine"]);
  });
});

describe("§4.3 a CAPI MachineSet owned by something other than the Cluster (a MachineDeployment)", () => {
  const template = templateNameFor("workers", "m6i.xlarge");
  const world = (authority: "MachineAPI" | "ClusterAPI", extra: KubeObject[] = []) =>
    new World([
      infrastructure(),
      capiCluster(),
      mapiMachineSet("workers", {
        authority,
        meta: { finalizers: [FINALIZERS.sync] },
        status: { conditions: [condition("Synchronized", "True")] },
      }),
      capiMachineSet("workers", {
        meta: {
          ...(authority === "ClusterAPI" ? { annotations: {} } : {}),
          finalizers: [FINALIZERS.sync],
          ownerReferences: [machineDeploymentRef],
        },
        spec: { replicas: 5 },
      }),
      awsMachineTemplate(template, { setName: "workers", instanceType: "r6i.large" }),
      ...extra,
    ]);

  it.each(["ClusterAPI", "MachineAPI"] as const)(
    "%s: nothing is mirrored; Synchronized=False, reason UnsupportedOwnerReference, naming the owner",
    (authority) => {
      const w = world(authority);
      const plan = planMachineSetSync(w.machineSetSnapshot("workers"), deps(), NOW);
      expect(kinds(plan)).toEqual(["applyStatus MachineSet"]);
      expect(plan.condition).toMatchObject({
        status: "False",
        reason: "UnsupportedOwnerReference",
        message:
          "CAPI MachineSet openshift-cluster-api/workers is owned by MachineDeployment workers-md; MachineSets owned by anything but the Cluster are not synchronized (their owner drives them)",
      });
      expect(plan.synchronizedGeneration).toBeUndefined();
      expect(plan.requeue).toBeUndefined();
    },
  );
  it("an ownerReference to the Cluster alone is supported (the sync sets it)", () => {
    const cluster = capiCluster();
    const w = new World([
      infrastructure(),
      cluster,
      mapiMachineSet("workers", {
        authority: "ClusterAPI",
        meta: { finalizers: [FINALIZERS.sync] },
        status: { conditions: [condition("Synchronized", "True")] },
      }),
      capiMachineSet("workers", {
        meta: {
          annotations: {},
          finalizers: [FINALIZERS.sync],
          ownerReferences: [
            {
              apiVersion: cluster.apiVersion ?? "",
              kind: "Cluster",
              name: cluster.metadata?.name ?? "",
              uid: cluster.metadata?.uid ?? "",
              blockOwnerDeletion: true,
            },
          ],
        },
      }),
      awsMachineTemplate(template, { setName: "workers" }),
    ]);
    const plan = planMachineSetSync(w.machineSetSnapshot("workers"), deps(), NOW);
    expect(plan.condition).toMatchObject({ status: "True" });
  });
});
