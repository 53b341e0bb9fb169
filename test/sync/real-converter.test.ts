import { describe, expect, it } from "vitest";
import { ANNOTATIONS, CAPI_API_VERSION, INFRA_API_VERSION, MAPI_API_VERSION } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { annotationsOf, conditionOf } from "../../src/kube/object.js";
import { conversionConverter } from "../../src/sync/converter.js";
import { planMachineSetSync, planMachineSync, type SyncPlan } from "../../src/sync/plan.js";
import {
  CAPI_NS,
  CLUSTER_NAME,
  capiCluster,
  deps,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  NOW,
  World,
} from "./builders.js";

/** A worker providerSpec as `oc get machine -o yaml` shows one. */
const realProviderSpec = () => ({
  value: {
    apiVersion: "machine.openshift.io/v1beta1",
    kind: "AWSMachineProviderConfig",
    ami: { id: "ami-0123456789abcdef0" },
    instanceType: "m6i.xlarge",
    blockDevices: [{ ebs: { encrypted: true, volumeSize: 120, volumeType: "gp3" } }],
    credentialsSecret: { name: "aws-cloud-credentials" },
    iamInstanceProfile: { id: `${CLUSTER_NAME}-worker-profile` },
    placement: { availabilityZone: "us-east-1a", region: "us-east-1" },
    securityGroups: [{ filters: [{ name: "tag:Name", values: [`${CLUSTER_NAME}-node`] }] }],
    subnet: { filters: [{ name: "tag:Name", values: [`${CLUSTER_NAME}-subnet-private-us-east-1a`] }] },
    tags: [{ name: `kubernetes.io/cluster/${CLUSTER_NAME}`, value: "owned" }],
    userDataSecret: { name: "worker-user-data" },
  },
});

const labels = {
  "machine.openshift.io/cluster-api-cluster": CLUSTER_NAME,
  "machine.openshift.io/cluster-api-machine-role": "worker",
  "machine.openshift.io/cluster-api-machine-type": "worker",
};

const settle = (plan: () => SyncPlan, world: World, max = 8): SyncPlan[] => {
  const plans: SyncPlan[] = [];
  for (let i = 0; i < max; i++) {
    const p = plan();
    plans.push(p);
    if (p.writes.length === 0) return plans;
    world.execute(p.writes);
  }
  throw new Error(`no fixed point: ${JSON.stringify(plans.at(-1)?.writes, null, 1)}`);
};

/** What the handover (src/migration) does by the end: status ClusterAPI, the CAPI side unpaused. */
const handOverToClusterAPI = (world: World, mapiKind: string, capiObjects: [string, string, string][]) => {
  world.mutate(MAPI_API_VERSION, mapiKind, MAPI_NS, "worker", (o) => {
    o.status = {
      ...o.status,
      authoritativeAPI: "ClusterAPI",
      synchronizedAPI: "ClusterAPI",
      synchronizedGeneration: 0,
    };
  });
  for (const [apiVersion, kind, name] of capiObjects) {
    world.mutate(apiVersion, kind, CAPI_NS, name, (o) => {
      const a = { ...annotationsOf(o) };
      delete a[ANNOTATIONS.paused];
      delete a[ANNOTATIONS.pausedBy];
      o.metadata = { ...o.metadata, annotations: a };
    });
  }
};

const realDeps = () => deps(conversionConverter);

describe("with the real converter (src/sync/conversion)", () => {
  it("a Machine syncs MAPI → CAPI to a quiet fixed point, and after a handover CAPI → MAPI finds nothing to write to the spec", () => {
    const mapi = mapiMachine("worker", {
      meta: { labels },
      spec: { providerSpec: realProviderSpec(), providerID: "aws:///us-east-1a/i-0abc123def4567890" },
    });
    const world = new World([infrastructure(), capiCluster(), mapi]);
    const plans = settle(() => planMachineSync(world.machineSnapshot("worker"), realDeps(), NOW), world);
    expect(plans[0]?.condition).toMatchObject({ status: "True", reason: "ResourceSynchronized" });
    // Quiet means quiet at any later time too (no clock-derived field keeps changing).
    expect(
      planMachineSync(world.machineSnapshot("worker"), realDeps(), new Date("2027-01-01T00:00:00Z")).writes,
    ).toEqual([]);
    const capi = world.find(CAPI_API_VERSION, "Machine", CAPI_NS, "worker") as KubeObject;
    expect(annotationsOf(capi)[ANNOTATIONS.pausedBy]).toBe("machine-api-migration");
    expect(world.find(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "worker")?.spec?.instanceType).toBe(
      "m6i.xlarge",
    );

    handOverToClusterAPI(world, "Machine", [
      [CAPI_API_VERSION, "Machine", "worker"],
      [INFRA_API_VERSION, "AWSMachine", "worker"],
    ]);
    const back = planMachineSync(world.machineSnapshot("worker"), realDeps(), NOW);
    expect(back.branch.kind).toBe("capiToMapi");
    const specApply = back.writes.find((w) => w.kind === "apply" && w.target.namespace === MAPI_NS);
    expect(
      specApply && "changedPaths" in specApply
        ? specApply.changedPaths.filter((p) => p.startsWith("spec"))
        : [],
    ).toEqual([]);
    settle(() => planMachineSync(world.machineSnapshot("worker"), realDeps(), NOW), world);
    expect(
      planMachineSync(world.machineSnapshot("worker"), realDeps(), new Date("2027-01-01T00:00:00Z")).writes,
    ).toEqual([]);
    expect(
      conditionOf(world.find(MAPI_API_VERSION, "Machine", MAPI_NS, "worker"), "Synchronized"),
    ).toMatchObject({
      status: "True",
      message: "Successfully synchronized CAPI Machine to MAPI",
    });
  });

  it("a MachineSet syncs to a labelled hashed template and a paused CAPI MachineSet, quiet afterwards", () => {
    const set = mapiMachineSet("worker");
    const template = (
      set.spec as {
        template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
      }
    ).template;
    template.spec.providerSpec = realProviderSpec();
    template.metadata.labels = { ...template.metadata.labels, ...labels };
    const world = new World([infrastructure(), capiCluster(), set]);
    const plans = settle(
      () => planMachineSetSync(world.machineSetSnapshot("worker"), realDeps(), NOW),
      world,
    );
    expect(plans.at(-1)?.writes).toEqual([]);
    expect(
      planMachineSetSync(world.machineSetSnapshot("worker"), realDeps(), new Date("2027-01-01T00:00:00Z"))
        .writes,
    ).toEqual([]);
    const templates = world.all().filter((o) => o.kind === "AWSMachineTemplate");
    expect(templates).toHaveLength(1);
    expect(templates[0]?.metadata?.name).toMatch(/^worker-[0-9a-f]{8}$/);
    expect(
      conditionOf(world.find(MAPI_API_VERSION, "MachineSet", MAPI_NS, "worker"), "Synchronized")?.status,
    ).toBe("True");
  });
});
