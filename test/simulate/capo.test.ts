/**
 * The stand-ins on OpenStack (SPEC §1.1, §5.5), pure parts: the CAPO OpenStackMachine planner mirroring
 * CAPA's (its own pause, its finalizer on the first unpaused reconcile, a server once a Machine owns it, a
 * delete on deletion); the CAPI planners resolving OpenStack's kinds (a template stamps an OpenStackMachine,
 * `status.ready` is v1beta1's "provisioned", the node is named after the server); MAO's actuator on an
 * OpenstackProviderSpec; and the simulated cloud and ledger with OpenStack servers.
 */
import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, CAPO_API_VERSION, FINALIZERS, INFRA_GROUP } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { getPath } from "../../src/kube/object.js";
import { awsPlatform } from "../../src/platforms/aws/index.js";
import { openstackPlatform } from "../../src/platforms/openstack/index.js";
import { capiMachineFromTemplate, planCapiMachine } from "../../src/simulate/capi.js";
import { CAPO_PROFILE, provisionedStatus } from "../../src/simulate/capo.js";
import {
  AWS_CLOUD,
  cloudOf,
  findLaunched,
  instanceIdOfProviderID,
  nodeNameOfProviderID,
  OPENSTACK_CLOUD,
} from "../../src/simulate/clouds.js";
import { infraProviderOf } from "../../src/simulate/index.js";
import { planInfraMachine } from "../../src/simulate/infra-provider.js";
import { createInstanceLedger } from "../../src/simulate/ledger.js";
import { instanceLabels, planMapiMachine } from "../../src/simulate/mao.js";
import {
  awsMachineOf,
  capiOpenStackMachineOf,
  capiOpenStackMachineSetOf,
  EARLIER,
  mapiOpenStackMachineOf,
  NOW_MS,
  OS_ZONE,
  openStackMachineOf,
  openStackMachineTemplateOf,
  paused,
} from "./builders.js";

const SERVER = "3f7c2a9e-1b4d-4e6f-8a2c-0000000000a1";
const PROVIDER_ID = `openstack:///${SERVER}`;
const notPaused = {
  type: "Paused",
  status: "False",
  reason: "NotPaused",
  message: "",
  lastTransitionTime: EARLIER,
};
const isPaused = { ...notPaused, status: "True", reason: "Paused", message: "Object is paused" };
const ownedByMachine = [
  { apiVersion: CAPI_API_VERSION, kind: "Machine", name: "m-0", uid: "machine-uid", controller: true },
];

/** An OpenStackMachine as CAPO leaves it after its first unpaused reconcile: owned, finalizer, Paused=False. */
const osm = (meta: KubeObject["metadata"] = {}, spec = {}, status?: Record<string, unknown>) =>
  openStackMachineOf("m-0", {
    meta: { ownerReferences: ownedByMachine, finalizers: [FINALIZERS.openStackMachine], ...meta },
    spec,
    status: status ?? { conditions: [meta.annotations ? isPaused : notPaused] },
  });
const provisioned = { conditions: [notPaused], ...provisionedStatus(SERVER) };

describe("CAPO OpenStackMachine stand-in (SPEC §1, §1.1)", () => {
  const pausedMachine = capiOpenStackMachineOf("m-0", { meta: { annotations: paused } });
  const plan = (o: KubeObject | undefined, owner: KubeObject | undefined = pausedMachine) =>
    planInfraMachine(CAPO_PROFILE, { infraMachine: o, ownerMachine: owner, nowMs: NOW_MS });
  const cases: Array<[string, KubeObject | undefined, string]> = [
    ["gone: nothing", undefined, "none"],
    ["writes Paused from its own annotation", openStackMachineOf("m-0"), "setConditions"],
    ["paused by its own annotation: nothing", osm({ annotations: paused }), "none"],
    [
      "adds openstackmachine.infrastructure.cluster.x-k8s.io on its first unpaused reconcile",
      osm({ finalizers: [] }),
      "addFinalizer",
    ],
    ["never adds its finalizer while paused", osm({ annotations: paused, finalizers: [] }), "none"],
    ["gives an OpenStackMachine without an instance ID a server", osm(), "createInstance"],
    ["waits for a Machine to own it before creating a server", osm({ ownerReferences: [] }), "none"],
    [
      "an instance ID already there: reports provisioned without a new server",
      osm({}, { instanceID: SERVER, providerID: PROVIDER_ID }),
      "setProvisioned",
    ],
    ["provisioned: nothing", osm({}, { instanceID: SERVER, providerID: PROVIDER_ID }, provisioned), "none"],
    [
      "deleting: deletes the server and removes its finalizer",
      osm({ deletionTimestamp: EARLIER }, { instanceID: SERVER }),
      "terminate",
    ],
    ["deleting while paused: nothing", osm({ deletionTimestamp: EARLIER, annotations: paused }), "none"],
    [
      "deleting without its finalizer: nothing",
      osm({ deletionTimestamp: EARLIER, finalizers: [FINALIZERS.sync] }),
      "none",
    ],
  ];
  it.each(cases)("%s", (_name, o, kind) => {
    expect(plan(o).kind).toBe(kind);
  });

  it("writes Paused=True with reason and lastTransitionTime when its own annotation appears", () => {
    expect(plan(osm({ annotations: paused }, {}, { conditions: [notPaused] }))).toEqual({
      kind: "setConditions",
      conditions: [{ ...isPaused, lastTransitionTime: "2026-11-30T10:00:00Z" }],
    });
  });
  it("acts on an unpaused OpenStackMachine even when its Machine is paused (CAPO reads only its own annotation)", () => {
    expect(plan(osm(), pausedMachine)).toEqual({ kind: "createInstance", zone: OS_ZONE });
  });
  it("creates the server in Nova's default zone when the Machine names none", () => {
    expect(plan(osm(), capiOpenStackMachineOf("m-0", { spec: { failureDomain: "" } }))).toEqual({
      kind: "createInstance",
      zone: "nova",
    });
  });
  it("reports status as status.ts reads it: ready, instanceID, instanceState ACTIVE", () => {
    expect(plan(osm({}, { instanceID: SERVER, providerID: PROVIDER_ID }))).toEqual({
      kind: "setProvisioned",
      instanceId: SERVER,
    });
    expect(provisionedStatus(SERVER)).toEqual({ ready: true, instanceID: SERVER, instanceState: "ACTIVE" });
  });
  it("a status left by the sync (ready without instanceID) is not CAPO's report: it writes its own", () => {
    const mirrored = { conditions: [notPaused], ready: true, instanceState: "ACTIVE" };
    expect(plan(osm({}, { instanceID: SERVER, providerID: PROVIDER_ID }, mirrored)).kind).toBe(
      "setProvisioned",
    );
  });
  it("deletes the instance ID's server, read from status when spec has none", () => {
    expect(plan(osm({ deletionTimestamp: EARLIER }, { instanceID: SERVER }))).toEqual({
      kind: "terminate",
      instanceId: SERVER,
    });
    expect(
      plan(osm({ deletionTimestamp: EARLIER }, {}, { conditions: [notPaused], instanceID: SERVER })),
    ).toEqual({ kind: "terminate", instanceId: SERVER });
    expect(plan(osm({ deletionTimestamp: EARLIER }))).toEqual({
      kind: "terminate",
      instanceId: undefined,
    });
  });
});

describe("CAPI stand-in on OpenStack: CAPO's kinds and its v1beta1 contract", () => {
  const machine = (spec = {}, status: Record<string, unknown> = {}) =>
    capiOpenStackMachineOf("m-0", {
      meta: { uid: "machine-uid", finalizers: [FINALIZERS.capiMachine] },
      spec,
      status: { conditions: [notPaused], ...status },
    });
  const plan = (m: KubeObject, i: KubeObject | undefined) =>
    planCapiMachine({ machine: m, infraMachine: i, nowMs: NOW_MS });

  it("a v1beta1 InfraMachine is provisioned when status.ready is true: CAPI copies its providerID", () => {
    expect(plan(machine(), osm({}, { instanceID: SERVER, providerID: PROVIDER_ID }, provisioned))).toEqual({
      kind: "setProviderID",
      providerID: PROVIDER_ID,
    });
  });
  it("v1beta2's initialization fields do not make a v1beta1 InfraMachine provisioned", () => {
    const status = { conditions: [notPaused], initialization: { provisioned: true } };
    expect(plan(machine(), osm({}, { providerID: PROVIDER_ID }, status))).toEqual({
      kind: "none",
      why: "InfraMachine not provisioned",
    });
  });
  it("and status.ready does not make a v1beta2 AWSMachine provisioned (CAPA's contract is unchanged)", () => {
    const aws = awsMachineOf("m-0", {
      meta: { ownerReferences: ownedByMachine },
      spec: { providerID: "aws:///us-east-1a/i-0123456789abcdef0" },
      status: { ready: true },
    });
    expect(plan(machine(), aws)).toEqual({ kind: "none", why: "InfraMachine not provisioned" });
  });
  it("Running names the node after the server, which is named after the Machine", () => {
    expect(
      plan(
        machine({ providerID: PROVIDER_ID }),
        osm({}, { instanceID: SERVER, providerID: PROVIDER_ID }, provisioned),
      ),
    ).toMatchObject({ kind: "setRunning", nodeName: "m-0" });
  });
  it("an OpenStackMachineTemplate stamps an OpenStackMachine (v1beta1) that the Machine references", () => {
    const set = capiOpenStackMachineSetOf("workers", 1, { meta: { uid: "set-uid" } });
    const { machine: m, infraMachine } = capiMachineFromTemplate(
      set,
      openStackMachineTemplateOf("workers"),
      "workers-x7k2p",
    );
    expect(infraMachine).toMatchObject({
      apiVersion: CAPO_API_VERSION,
      kind: "OpenStackMachine",
      metadata: { name: "workers-x7k2p", ownerReferences: [{ kind: "MachineSet", uid: "set-uid" }] },
    });
    expect(infraMachine.spec).toEqual(
      getPath(openStackMachineTemplateOf("workers"), ["spec", "template", "spec"]),
    );
    expect(m.spec).toMatchObject({
      infrastructureRef: { apiGroup: INFRA_GROUP, kind: "OpenStackMachine", name: "workers-x7k2p" },
      failureDomain: "az-b",
    });
  });
});

describe("MAO stand-in with the OpenStack actuator (MAPO)", () => {
  const active = (status: Record<string, unknown> = {}, meta: KubeObject["metadata"] = {}, spec = {}) =>
    mapiOpenStackMachineOf("m-0", {
      meta: { finalizers: [FINALIZERS.mapiMachine], ...meta },
      spec,
      status: {
        authoritativeAPI: "MachineAPI",
        conditions: [
          {
            type: "Paused",
            status: "False",
            reason: "AuthoritativeAPIMachineAPI",
            message: "The AuthoritativeAPI status is set to 'MachineAPI'",
            severity: "",
            lastTransitionTime: EARLIER,
          },
        ],
        ...status,
      },
    });
  const plan = (m: KubeObject) =>
    planMapiMachine({ machine: m, nowMs: NOW_MS, provisioningDelayMs: 0, cloud: OPENSTACK_CLOUD });

  it("creates the server in the providerSpec's availabilityZone", () => {
    expect(plan(active({ phase: "Provisioning" }))).toEqual({ kind: "createInstance", zone: OS_ZONE });
  });
  it("Running reads the server UUID from openstack:///<uuid> and names the node after the Machine", () => {
    expect(plan(active({ phase: "Provisioning" }, {}, { providerID: PROVIDER_ID }))).toMatchObject({
      kind: "setRunning",
      instanceId: SERVER,
      nodeName: "m-0",
    });
  });
  it("deletes the providerID's server", () => {
    expect(plan(active({}, { deletionTimestamp: EARLIER }, { providerID: PROVIDER_ID }))).toEqual({
      kind: "terminate",
      instanceId: SERVER,
    });
  });
  it("labels the Machine with the flavor and zone (OpenStack has no region label)", () => {
    expect(instanceLabels(active(), OPENSTACK_CLOUD)).toEqual({
      "machine.openshift.io/instance-type": "m1.xlarge",
      "machine.openshift.io/zone": OS_ZONE,
    });
  });
});

describe("simulated clouds and the ledger with OpenStack servers", () => {
  it("a server created in the OpenStack cloud has a UUID and providerID openstack:///<uuid>", () => {
    const ledger = createInstanceLedger({ random: () => 0.5 });
    const r = ledger.created({
      machineName: "m-0",
      side: "ClusterAPI",
      zone: "az-a",
      cloud: OPENSTACK_CLOUD,
    });
    expect(r.instanceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.providerID).toBe(`openstack:///${r.instanceId}`);
    expect(instanceIdOfProviderID(r.providerID)).toBe(r.instanceId);
    const next = ledger.created({
      machineName: "m-1",
      side: "ClusterAPI",
      zone: "az-a",
      cloud: OPENSTACK_CLOUD,
    });
    expect(next.instanceId).not.toBe(r.instanceId);
  });
  it("each cloud reads only its own providerIDs", () => {
    expect(OPENSTACK_CLOUD.instanceIdOf("aws:///us-east-1a/i-0123456789abcdef0")).toBeUndefined();
    expect(AWS_CLOUD.instanceIdOf(PROVIDER_ID)).toBeUndefined();
    expect(instanceIdOfProviderID("aws:///us-east-1a/i-0123456789abcdef0")).toBe("i-0123456789abcdef0");
    expect(instanceIdOfProviderID("openstack:///not-a-uuid")).toBeUndefined();
    expect(nodeNameOfProviderID(PROVIDER_ID, "m-0")).toBe("m-0");
    expect(nodeNameOfProviderID("aws:///us-east-1a/i-0000000000000102", "m-0")).toBe(
      "ip-10-0-1-2.ec2.internal",
    );
  });
  it("an OpenStack actuator finds either side's server by name; an AWS one only its own by tag", () => {
    const ledger = createInstanceLedger();
    const server = ledger.created({
      machineName: "m-0",
      side: "MachineAPI",
      zone: "az-a",
      cloud: OPENSTACK_CLOUD,
    });
    expect(findLaunched(OPENSTACK_CLOUD, ledger, "m-0", "ClusterAPI")).toEqual(server);
    expect(findLaunched(AWS_CLOUD, ledger, "m-0", "ClusterAPI")).toBeUndefined();
    expect(findLaunched(AWS_CLOUD, ledger, "m-0", "MachineAPI")).toEqual(server);
    ledger.terminated({
      instanceId: server.instanceId,
      machineName: "m-0",
      by: "ClusterAPI",
      object: "OpenStackMachine m-0",
      deleting: true,
    });
    expect(findLaunched(OPENSTACK_CLOUD, ledger, "m-0", "ClusterAPI")).toBeUndefined();
  });
  it("a seeded server is adopted from its providerID and found by name", () => {
    const ledger = createInstanceLedger();
    ledger.recordExisting({ machineName: "m-0", providerID: PROVIDER_ID });
    expect(ledger.findLiveNamed("m-0")).toMatchObject({ instanceId: SERVER, side: "existing" });
  });
  it("the ledger's invariants hold for servers: created twice, leaked, deleted without a delete", () => {
    const ledger = createInstanceLedger();
    const a = ledger.created({
      machineName: "m-0",
      side: "MachineAPI",
      zone: "az-a",
      cloud: OPENSTACK_CLOUD,
    });
    const b = ledger.created({
      machineName: "m-0",
      side: "ClusterAPI",
      zone: "az-a",
      cloud: OPENSTACK_CLOUD,
    });
    const c = ledger.created({
      machineName: "m-1",
      side: "ClusterAPI",
      zone: "az-a",
      cloud: OPENSTACK_CLOUD,
    });
    ledger.terminated({
      instanceId: c.instanceId,
      machineName: "m-1",
      by: "ClusterAPI",
      object: "OpenStackMachine openshift-cluster-api/m-1",
      deleting: false,
    });
    expect(ledger.violations({ mapi: [], capi: [] })).toEqual([
      `Machine m-0: instance ${b.instanceId} (ClusterAPI) was created while ${a.instanceId} (MachineAPI) was still running: created twice`,
      `instance ${a.instanceId} (MachineAPI) is running but neither Machine m-0 nor its twin exists: leaked`,
      `instance ${b.instanceId} (ClusterAPI) is running but neither Machine m-0 nor its twin exists: leaked`,
      `instance ${c.instanceId} was terminated by ClusterAPI for OpenStackMachine openshift-cluster-api/m-1, which was not being deleted`,
    ]);
  });
});

describe("one platform, one infrastructure provider", () => {
  it("AWS runs CAPA and OpenStack runs CAPO, each with its cloud", () => {
    expect(infraProviderOf(awsPlatform).name).toBe("capa");
    expect(infraProviderOf(openstackPlatform).name).toBe("capo");
    expect(cloudOf(awsPlatform)).toBe(AWS_CLOUD);
    expect(cloudOf(openstackPlatform)).toBe(OPENSTACK_CLOUD);
  });
  it("a platform without stand-ins is refused by name", () => {
    const gcp = { ...awsPlatform, platform: "GCP" };
    expect(() => infraProviderOf(gcp)).toThrow(
      'no simulated infrastructure provider for platform "GCP": supported are AWS, OpenStack',
    );
    expect(() => cloudOf(gcp)).toThrow(
      'no simulated providers for platform "GCP": supported are AWS, OpenStack',
    );
  });
});
