/**
 * `--seed demo-openstack` and `--seed demo-powervs` written into a cluster the way its actors would have
 * (src/local/demo.ts, issue 23): `seedInfrastructure` alone (what local mode writes before the process reads
 * its platform) and again, then `seedDemo` with and without the provisioned state — the OpenStack Infrastructure, the OpenStackCluster, the
 * Machines as MAPO reports them, and the handed-over Machine's OpenStackMachine under CAPO's finalizer, with
 * its server recorded and its status written by `capo`. No AWS object is written. On PowerVS the same with
 * CAPIBM's kinds: the instance in the IBMPowerVSMachine's status (CAPIBM keeps it there), written by `capibm`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FINALIZERS, KINDS, type ResourceType } from "../../src/kube/kinds.js";
import { getPath, type KubeObject, nameOf } from "../../src/kube/object.js";
import { seedDemo, seedInfrastructure } from "../../src/local/demo.js";
import { DEMO_INFRASTRUCTURE_NAME, POWERVS_DEMO } from "../../src/local/seed.js";
import { startPlainTestCluster, type TestCluster } from "../cluster/backend.js";

const ns = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };
const SERVER_PROVIDER_ID = /^openstack:\/\/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const list = async (cluster: TestCluster, type: ResourceType, namespace: string) =>
  (await cluster.clientAs("admin").list(type, { namespace })).items;

describe("--seed demo-openstack, provisioned (admission-only runs)", () => {
  let cluster: TestCluster;
  let machines: KubeObject[] = [];
  beforeAll(async () => {
    cluster = await startPlainTestCluster("demo-openstack-", ns);
    await seedInfrastructure(cluster, ns, "OpenStack");
    await seedDemo(cluster, ns, { provisioned: true, platform: "OpenStack" });
    machines = await list(cluster, KINDS.mapiMachine, ns.mapiNamespace);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("seedInfrastructure: an OpenStack Infrastructure with status, the Cluster and its OpenStackCluster", async () => {
    const admin = cluster.clientAs("admin");
    const infrastructure = await admin.get(KINDS.infrastructure, "", "cluster");
    expect(infrastructure.spec).toEqual({ platformSpec: { type: "OpenStack", openstack: {} } });
    expect(infrastructure.status).toMatchObject({
      infrastructureName: DEMO_INFRASTRUCTURE_NAME,
      platform: "OpenStack",
      platformStatus: { type: "OpenStack", openstack: { cloudName: "openstack" } },
    });
    const capiCluster = await admin.get(KINDS.capiCluster, ns.capiNamespace, DEMO_INFRASTRUCTURE_NAME);
    expect(getPath(capiCluster, ["spec", "infrastructureRef", "kind"])).toBe("OpenStackCluster");
    const openStackCluster = await admin.get(
      KINDS.openStackCluster,
      ns.capiNamespace,
      DEMO_INFRASTRUCTURE_NAME,
    );
    expect(openStackCluster.spec).toEqual({
      identityRef: { cloudName: "openstack", name: "openstack-cloud-credentials" },
    });
    expect(await list(cluster, KINDS.awsCluster, ns.capiNamespace)).toEqual([]);
  });

  it("seedInfrastructure and seedDemo again change nothing (they create only what is missing)", async () => {
    const versions = async () =>
      [
        ...(await cluster.clientAs("admin").list(KINDS.infrastructure)).items,
        ...(await list(cluster, KINDS.openStackCluster, ns.capiNamespace)),
        ...(await list(cluster, KINDS.mapiMachine, ns.mapiNamespace)),
        ...(await list(cluster, KINDS.openStackMachine, ns.capiNamespace)),
      ].map((o) => `${o.kind}/${nameOf(o)}@${o.metadata?.resourceVersion}`);
    const before = await versions();
    await seedInfrastructure(cluster, ns, "OpenStack");
    await seedDemo(cluster, ns, { provisioned: true, platform: "OpenStack" });
    expect(await versions()).toEqual(before);
  });

  it("the Machines as MAPO reports them: a server providerID, ACTIVE, the flavor and zone labels", () => {
    expect(machines).toHaveLength(3);
    for (const m of machines) {
      expect(m.spec?.providerID).toMatch(SERVER_PROVIDER_ID);
      expect(getPath(m, ["status", "providerStatus"])).toEqual({
        instanceId: String(m.spec?.providerID).slice("openstack:///".length),
        instanceState: "ACTIVE",
      });
      expect(getPath(m, ["status", "nodeRef", "name"])).toBe(nameOf(m));
      expect(m.metadata?.annotations?.["machine.openshift.io/instance-state"]).toBe("ACTIVE");
      expect(m.metadata?.labels).toMatchObject({
        "machine.openshift.io/instance-type": "m1.xlarge",
        "machine.openshift.io/zone": getPath(m, ["spec", "providerSpec", "value", "availabilityZone"]),
      });
    }
    expect(machines.filter((m) => m.metadata?.finalizers?.includes(FINALIZERS.mapiMachine))).toHaveLength(2);
  });

  it("the handed-over Machine's OpenStackMachine: CAPO's finalizer, its server recorded, ready (by capo)", async () => {
    const handedOver = machines.find((m) => m.spec?.authoritativeAPI === "ClusterAPI")!;
    const capiMachine = await cluster
      .clientAs("admin")
      .get(KINDS.capiMachine, ns.capiNamespace, nameOf(handedOver));
    expect(getPath(capiMachine, ["spec", "infrastructureRef", "kind"])).toBe("OpenStackMachine");
    const [openStackMachine, ...others] = await list(cluster, KINDS.openStackMachine, ns.capiNamespace);
    expect(others).toEqual([]);
    expect(nameOf(openStackMachine)).toBe(nameOf(handedOver));
    expect(openStackMachine?.metadata?.finalizers).toEqual([FINALIZERS.openStackMachine, FINALIZERS.sync]);
    expect(openStackMachine?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "Machine",
      uid: capiMachine.metadata?.uid,
      controller: true,
    });
    expect(openStackMachine?.spec).toMatchObject({
      providerID: handedOver.spec?.providerID,
      instanceID: String(handedOver.spec?.providerID).slice("openstack:///".length),
      flavor: "m1.xlarge",
    });
    expect(openStackMachine?.status).toMatchObject({ ready: true, instanceState: "ACTIVE" });
    // The product creates the twin; CAPO, under its own identity, records the server and reports it.
    const writes = Object.keys(cluster.counters().byKey).filter(
      (key) => key.includes("/openstackmachines") && !/^(get|list|watch) /.test(key),
    );
    expect(writes.sort()).toEqual([
      `create infrastructure.cluster.x-k8s.io/openstackmachines system:serviceaccount:${ns.capiNamespace}:machine-api-migration`,
      `update infrastructure.cluster.x-k8s.io/openstackmachines system:serviceaccount:${ns.capiNamespace}:capo-manager`,
      `update infrastructure.cluster.x-k8s.io/openstackmachines/status system:serviceaccount:${ns.capiNamespace}:capo-manager`,
    ]);
    expect(await list(cluster, KINDS.awsMachine, ns.capiNamespace)).toEqual([]);
  });
});

describe("--seed demo-openstack, for the stand-ins to provision", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startPlainTestCluster("demo-openstack-raw-", ns);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("writes the Infrastructure and the MAPI objects a user and the MachineSet controller create, no twins", async () => {
    await seedDemo(cluster, ns, { provisioned: false, platform: "OpenStack" });
    const infrastructure = await cluster.clientAs("admin").get(KINDS.infrastructure, "", "cluster");
    expect(getPath(infrastructure, ["status", "platformStatus", "type"])).toBe("OpenStack");
    expect(await list(cluster, KINDS.openStackCluster, ns.capiNamespace)).toHaveLength(1);
    const machines = await list(cluster, KINDS.mapiMachine, ns.mapiNamespace);
    expect(machines.map((m) => [nameOf(m), m.spec?.authoritativeAPI, m.spec?.providerID])).toEqual([
      [`${DEMO_INFRASTRUCTURE_NAME}-infra-0`, "ClusterAPI", undefined],
      [`${DEMO_INFRASTRUCTURE_NAME}-worker-az-a-4qzbx`, "MachineAPI", undefined],
      [`${DEMO_INFRASTRUCTURE_NAME}-worker-az-b-8n2vd`, "MachineAPI", undefined],
    ]);
    expect(
      machines
        .map((m) => getPath(m, ["spec", "providerSpec", "value", "kind"]))
        .every((k) => k === "OpenstackProviderSpec"),
    ).toBe(true);
    expect(await list(cluster, KINDS.openStackMachine, ns.capiNamespace)).toEqual([]);
  });
});

const PVM_PROVIDER_ID = new RegExp(
  `^ibmpowervs://dal/dal10/${POWERVS_DEMO.serviceInstanceID}/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`,
);
const pvmInstanceOf = (m: KubeObject | undefined) => PVM_PROVIDER_ID.exec(String(m?.spec?.providerID))?.[1];

describe("--seed demo-powervs, provisioned (admission-only runs)", () => {
  let cluster: TestCluster;
  let machines: KubeObject[] = [];
  beforeAll(async () => {
    cluster = await startPlainTestCluster("demo-powervs-", ns);
    await seedInfrastructure(cluster, ns, "PowerVS");
    await seedDemo(cluster, ns, { provisioned: true, platform: "PowerVS" });
    machines = await list(cluster, KINDS.mapiMachine, ns.mapiNamespace);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("seedInfrastructure: a PowerVS Infrastructure with status, the Cluster and its IBMPowerVSCluster", async () => {
    const admin = cluster.clientAs("admin");
    const infrastructure = await admin.get(KINDS.infrastructure, "", "cluster");
    expect(infrastructure.spec).toEqual({ platformSpec: { type: "PowerVS", powervs: {} } });
    expect(infrastructure.status).toMatchObject({
      infrastructureName: DEMO_INFRASTRUCTURE_NAME,
      platform: "PowerVS",
      platformStatus: {
        type: "PowerVS",
        powervs: { region: "dal", zone: "dal10", resourceGroup: POWERVS_DEMO.resourceGroup },
      },
    });
    const capiCluster = await admin.get(KINDS.capiCluster, ns.capiNamespace, DEMO_INFRASTRUCTURE_NAME);
    expect(getPath(capiCluster, ["spec", "infrastructureRef", "kind"])).toBe("IBMPowerVSCluster");
    const powerVSCluster = await admin.get(
      KINDS.ibmPowerVSCluster,
      ns.capiNamespace,
      DEMO_INFRASTRUCTURE_NAME,
    );
    expect(powerVSCluster.spec).toMatchObject({
      serviceInstance: { id: POWERVS_DEMO.serviceInstanceID },
      zone: "dal10",
    });
    expect(await list(cluster, KINDS.awsCluster, ns.capiNamespace)).toEqual([]);
    expect(await list(cluster, KINDS.openStackCluster, ns.capiNamespace)).toEqual([]);
  });

  it("seedInfrastructure and seedDemo again change nothing (they create only what is missing)", async () => {
    const versions = async () =>
      [
        ...(await cluster.clientAs("admin").list(KINDS.infrastructure)).items,
        ...(await list(cluster, KINDS.ibmPowerVSCluster, ns.capiNamespace)),
        ...(await list(cluster, KINDS.mapiMachine, ns.mapiNamespace)),
        ...(await list(cluster, KINDS.ibmPowerVSMachine, ns.capiNamespace)),
      ].map((o) => `${o.kind}/${nameOf(o)}@${o.metadata?.resourceVersion}`);
    const before = await versions();
    await seedInfrastructure(cluster, ns, "PowerVS");
    await seedDemo(cluster, ns, { provisioned: true, platform: "PowerVS" });
    expect(await versions()).toEqual(before);
  });

  it("the Machines as MAPI's PowerVS actuator reports them: a PVM instance in the workspace, ACTIVE, the system type", () => {
    expect(machines).toHaveLength(3);
    for (const m of machines) {
      const instanceId = pvmInstanceOf(m);
      expect(instanceId).toBeDefined();
      expect(getPath(m, ["status", "providerStatus"])).toEqual({
        apiVersion: "machine.openshift.io/v1",
        kind: "PowerVSMachineProviderStatus",
        instanceId,
        instanceState: "ACTIVE",
        serviceInstanceID: POWERVS_DEMO.serviceInstanceID,
      });
      expect(getPath(m, ["status", "nodeRef", "name"])).toBe(nameOf(m));
      expect(m.metadata?.annotations?.["machine.openshift.io/instance-state"]).toBe("ACTIVE");
      expect(m.metadata?.labels).toMatchObject({ "machine.openshift.io/instance-type": "s922" });
      // PowerVS has no failure domain: no zone label.
      expect(m.metadata?.labels?.["machine.openshift.io/zone"]).toBeUndefined();
    }
    expect(machines.filter((m) => m.metadata?.finalizers?.includes(FINALIZERS.mapiMachine))).toHaveLength(2);
  });

  it("the handed-over Machine's IBMPowerVSMachine: CAPIBM's finalizer, the instance in its status (by capibm)", async () => {
    const handedOver = machines.find((m) => m.spec?.authoritativeAPI === "ClusterAPI")!;
    const capiMachine = await cluster
      .clientAs("admin")
      .get(KINDS.capiMachine, ns.capiNamespace, nameOf(handedOver));
    expect(getPath(capiMachine, ["spec", "infrastructureRef", "kind"])).toBe("IBMPowerVSMachine");
    const [powerVSMachine, ...others] = await list(cluster, KINDS.ibmPowerVSMachine, ns.capiNamespace);
    expect(others).toEqual([]);
    expect(nameOf(powerVSMachine)).toBe(nameOf(handedOver));
    expect(powerVSMachine?.metadata?.finalizers).toEqual([FINALIZERS.ibmPowerVSMachine, FINALIZERS.sync]);
    expect(powerVSMachine?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "Machine",
      uid: capiMachine.metadata?.uid,
      controller: true,
    });
    expect(powerVSMachine?.spec).toMatchObject({
      providerID: handedOver.spec?.providerID,
      serviceInstance: { id: POWERVS_DEMO.serviceInstanceID },
      systemType: "s922",
    });
    // CAPIBM keeps the instance in its status, not its spec.
    expect(powerVSMachine?.spec?.instanceID).toBeUndefined();
    expect(powerVSMachine?.status).toMatchObject({
      ready: true,
      instanceID: pvmInstanceOf(handedOver),
      instanceState: "ACTIVE",
    });
    const writes = Object.keys(cluster.counters().byKey).filter(
      (key) => key.includes("/ibmpowervsmachines") && !/^(get|list|watch) /.test(key),
    );
    expect(writes.sort()).toEqual([
      `create infrastructure.cluster.x-k8s.io/ibmpowervsmachines system:serviceaccount:${ns.capiNamespace}:machine-api-migration`,
      `update infrastructure.cluster.x-k8s.io/ibmpowervsmachines/status system:serviceaccount:${ns.capiNamespace}:capi-ibmcloud-manager`,
    ]);
    expect(await list(cluster, KINDS.awsMachine, ns.capiNamespace)).toEqual([]);
    expect(await list(cluster, KINDS.openStackMachine, ns.capiNamespace)).toEqual([]);
  });
});

describe("--seed demo-powervs, for the stand-ins to provision", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startPlainTestCluster("demo-powervs-raw-", ns);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("writes the Infrastructure and the MAPI objects a user and the MachineSet controller create, no twins", async () => {
    await seedDemo(cluster, ns, { provisioned: false, platform: "PowerVS" });
    const infrastructure = await cluster.clientAs("admin").get(KINDS.infrastructure, "", "cluster");
    expect(getPath(infrastructure, ["status", "platformStatus", "type"])).toBe("PowerVS");
    expect(await list(cluster, KINDS.ibmPowerVSCluster, ns.capiNamespace)).toHaveLength(1);
    const machines = await list(cluster, KINDS.mapiMachine, ns.mapiNamespace);
    expect(machines.map((m) => [nameOf(m), m.spec?.authoritativeAPI, m.spec?.providerID])).toEqual([
      [`${DEMO_INFRASTRUCTURE_NAME}-infra-0`, "ClusterAPI", undefined],
      [`${DEMO_INFRASTRUCTURE_NAME}-worker-0-4qzbx`, "MachineAPI", undefined],
      [`${DEMO_INFRASTRUCTURE_NAME}-worker-1-8n2vd`, "MachineAPI", undefined],
    ]);
    expect(
      machines
        .map((m) => getPath(m, ["spec", "providerSpec", "value", "kind"]))
        .every((k) => k === "PowerVSMachineProviderConfig"),
    ).toBe(true);
    expect(await list(cluster, KINDS.ibmPowerVSMachine, ns.capiNamespace)).toEqual([]);
  });
});
