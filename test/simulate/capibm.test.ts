/**
 * The stand-ins on PowerVS (SPEC §1.1, §5.5), pure parts: the CAPIBM IBMPowerVSMachine planner (its own
 * pause, its finalizer on the first unpaused reconcile, an instance once a Machine owns it, the instance ID
 * where CAPIBM keeps it — `status.instanceID` — and a delete on deletion); MAO's actuator on a
 * PowerVSMachineProviderConfig (no zone, the system type as instance type, the provider status status.ts
 * reads); and the simulated cloud and ledger with PowerVS instances.
 */
import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, FINALIZERS, INFRA_API_VERSION, INFRA_GROUP } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { POWERVS_DEMO, powervsProviderSpec } from "../../src/local/seed.js";
import { openstackPlatform } from "../../src/platforms/openstack/index.js";
import { powervsPlatform } from "../../src/platforms/powervs/index.js";
import { planCapiMachine } from "../../src/simulate/capi.js";
import { CAPIBM_PROFILE, provisionedStatus } from "../../src/simulate/capibm.js";
import {
  cloudOf,
  findLaunched,
  instanceIdOfProviderID,
  nodeNameOfProviderID,
  OPENSTACK_CLOUD,
  POWERVS_CLOUD,
} from "../../src/simulate/clouds.js";
import { infraProviderOf } from "../../src/simulate/index.js";
import { planInfraMachine } from "../../src/simulate/infra-provider.js";
import { createInstanceLedger } from "../../src/simulate/ledger.js";
import { instanceLabels, planMapiMachine } from "../../src/simulate/mao.js";
import { CAPI_NS, capiMachineOf, EARLIER, mapiMachineOf, NOW_MS, paused } from "./builders.js";

const INSTANCE = "7c1d9e2a-0b3f-4a5c-8d6e-9f0a1b2c3d4e";
const PROVIDER_ID = `ibmpowervs://dal/dal10/${POWERVS_DEMO.serviceInstanceID}/${INSTANCE}`;
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

/** An IBMPowerVSMachine spec as the converter writes it for the demo's worker providerSpec. */
const ibmPowerVSSpec = (extra: Record<string, unknown> = {}) => ({
  serviceInstance: { id: POWERVS_DEMO.serviceInstanceID },
  image: { name: "rhcos-demo" },
  network: { name: "demo-network" },
  sshKey: "demo-key",
  systemType: "s922",
  processorType: "Shared",
  processors: "0.5",
  memoryGiB: 32,
  ...extra,
});

/** An IBMPowerVSMachine as CAPIBM leaves it after its first unpaused reconcile: owned, finalizer, Paused=False. */
const pvsm = (
  meta: KubeObject["metadata"] = {},
  spec = {},
  status?: Record<string, unknown>,
): KubeObject => ({
  apiVersion: INFRA_API_VERSION,
  kind: "IBMPowerVSMachine",
  metadata: {
    name: "m-0",
    namespace: CAPI_NS,
    ownerReferences: ownedByMachine,
    finalizers: [FINALIZERS.ibmPowerVSMachine],
    ...meta,
  },
  spec: ibmPowerVSSpec(spec),
  status: status ?? { conditions: [meta.annotations ? isPaused : notPaused] },
});
const provisioned = { conditions: [notPaused], ...provisionedStatus(INSTANCE) };

/** A CAPI Machine whose InfraMachine is the IBMPowerVSMachine of its name (PowerVS has no failure domain). */
const capiPowerVSMachineOf = (meta: KubeObject["metadata"] = {}, spec: Record<string, unknown> = {}) => {
  const m = capiMachineOf("m-0", {
    meta,
    spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: "IBMPowerVSMachine", name: "m-0" }, ...spec },
  });
  const { failureDomain: _none, ...rest } = m.spec ?? {};
  return { ...m, spec: rest };
};

describe("CAPIBM IBMPowerVSMachine stand-in (SPEC §1, §1.1)", () => {
  const pausedMachine = capiPowerVSMachineOf({ annotations: paused });
  const plan = (o: KubeObject | undefined, owner: KubeObject | undefined = pausedMachine) =>
    planInfraMachine(CAPIBM_PROFILE, { infraMachine: o, ownerMachine: owner, nowMs: NOW_MS });
  const cases: Array<[string, KubeObject | undefined, string]> = [
    ["gone: nothing", undefined, "none"],
    ["writes Paused from its own annotation", pvsm({ finalizers: [] }, {}, {}), "setConditions"],
    ["paused by its own annotation: nothing", pvsm({ annotations: paused }), "none"],
    [
      "adds ibmpowervsmachine.infrastructure.cluster.x-k8s.io on its first unpaused reconcile",
      pvsm({ finalizers: [] }),
      "addFinalizer",
    ],
    ["never adds its finalizer while paused", pvsm({ annotations: paused, finalizers: [] }), "none"],
    ["gives an IBMPowerVSMachine without an instance ID an instance", pvsm(), "createInstance"],
    ["waits for a Machine to own it before creating an instance", pvsm({ ownerReferences: [] }), "none"],
    [
      "an instance ID in status (the sync's mirror): reports provisioned without a new instance",
      pvsm({}, { providerID: PROVIDER_ID }, { conditions: [notPaused], instanceID: INSTANCE }),
      "setProvisioned",
    ],
    [
      "only the providerID it wrote at launch: reports provisioned without a new instance",
      pvsm({}, { providerID: PROVIDER_ID }),
      "setProvisioned",
    ],
    ["provisioned: nothing", pvsm({}, { providerID: PROVIDER_ID }, provisioned), "none"],
    [
      "deleting: deletes the instance and removes its finalizer",
      pvsm({ deletionTimestamp: EARLIER }, { providerID: PROVIDER_ID }, provisioned),
      "terminate",
    ],
    ["deleting while paused: nothing", pvsm({ deletionTimestamp: EARLIER, annotations: paused }), "none"],
    [
      "deleting without its finalizer: nothing",
      pvsm({ deletionTimestamp: EARLIER, finalizers: [FINALIZERS.sync] }),
      "none",
    ],
  ];
  it.each(cases)("%s", (_name, o, kind) => {
    expect(plan(o).kind).toBe(kind);
  });

  it("writes Paused=True with reason and lastTransitionTime when its own annotation appears", () => {
    expect(plan(pvsm({ annotations: paused }, {}, { conditions: [notPaused] }))).toEqual({
      kind: "setConditions",
      conditions: [{ ...isPaused, lastTransitionTime: "2026-11-30T10:00:00Z" }],
    });
  });
  it("acts on an unpaused IBMPowerVSMachine even when its Machine is paused (it reads only its own annotation)", () => {
    expect(plan(pvsm(), pausedMachine)).toEqual({ kind: "createInstance", zone: POWERVS_DEMO.zone });
  });
  it("creates the instance in the workspace's zone: PowerVS Machines name no failure domain", () => {
    expect(plan(pvsm(), capiPowerVSMachineOf())).toEqual({ kind: "createInstance", zone: "dal10" });
  });
  it("reports status as status.ts reads it: ready, instanceID, instanceState ACTIVE", () => {
    expect(plan(pvsm({}, { providerID: PROVIDER_ID }))).toEqual({
      kind: "setProvisioned",
      instanceId: INSTANCE,
    });
    expect(provisionedStatus(INSTANCE)).toEqual({
      ready: true,
      instanceID: INSTANCE,
      instanceState: "ACTIVE",
    });
  });
  it("a status left by the sync (ready without instanceID) is not CAPIBM's report: it writes its own", () => {
    const mirrored = { conditions: [notPaused], ready: true, instanceState: "ACTIVE" };
    expect(plan(pvsm({}, { providerID: PROVIDER_ID }, mirrored))).toEqual({
      kind: "setProvisioned",
      instanceId: INSTANCE,
    });
  });
  it("deletes the instance of status.instanceID, else of the providerID, else looks it up by name", () => {
    expect(
      plan(pvsm({ deletionTimestamp: EARLIER }, {}, { conditions: [notPaused], instanceID: INSTANCE })),
    ).toEqual({ kind: "terminate", instanceId: INSTANCE });
    expect(plan(pvsm({ deletionTimestamp: EARLIER }, { providerID: PROVIDER_ID }))).toEqual({
      kind: "terminate",
      instanceId: INSTANCE,
    });
    expect(plan(pvsm({ deletionTimestamp: EARLIER }))).toEqual({ kind: "terminate", instanceId: undefined });
  });
  it("acts as capi-ibmcloud-manager on IBMPowerVSMachines with CAPIBM's finalizer", () => {
    expect(CAPIBM_PROFILE).toMatchObject({
      controllerName: "simulated-capibm-ibmpowervsmachine",
      fieldManager: "capi-ibmcloud-manager",
      type: {
        group: INFRA_GROUP,
        version: "v1beta2",
        kind: "IBMPowerVSMachine",
        plural: "ibmpowervsmachines",
      },
      finalizer: "ibmpowervsmachine.infrastructure.cluster.x-k8s.io",
      cloud: POWERVS_CLOUD,
    });
  });
});

describe("MAO stand-in with the PowerVS actuator", () => {
  const active = (status: Record<string, unknown> = {}, meta: KubeObject["metadata"] = {}, spec = {}) => {
    const m = mapiMachineOf("m-0", {
      meta: { finalizers: [FINALIZERS.mapiMachine], ...meta },
      spec: { providerSpec: { value: powervsProviderSpec() }, ...spec },
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
    return m;
  };
  const plan = (m: KubeObject) =>
    planMapiMachine({ machine: m, nowMs: NOW_MS, provisioningDelayMs: 0, cloud: POWERVS_CLOUD });

  it("creates the instance in the workspace's zone: the providerSpec names none", () => {
    expect(plan(active({ phase: "Provisioning" }))).toEqual({ kind: "createInstance", zone: "dal10" });
  });
  it("Running reads the instance ID from ibmpowervs://<region>/<zone>/<workspace>/<id>, the node is the Machine's name", () => {
    expect(plan(active({ phase: "Provisioning" }, {}, { providerID: PROVIDER_ID }))).toMatchObject({
      kind: "setRunning",
      instanceId: INSTANCE,
      nodeName: "m-0",
    });
  });
  it("deletes the providerID's instance", () => {
    expect(plan(active({}, { deletionTimestamp: EARLIER }, { providerID: PROVIDER_ID }))).toEqual({
      kind: "terminate",
      instanceId: INSTANCE,
    });
  });
  it("labels the Machine with the system type only (no region or zone label on PowerVS)", () => {
    expect(instanceLabels(active(), POWERVS_CLOUD)).toEqual({ "machine.openshift.io/instance-type": "s922" });
  });
  it("writes the provider status src/platforms/powervs/status.ts reads: its kind, the instance, its workspace", () => {
    expect(POWERVS_CLOUD.providerStatus?.(INSTANCE, PROVIDER_ID)).toEqual({
      apiVersion: "machine.openshift.io/v1",
      kind: "PowerVSMachineProviderStatus",
      instanceId: INSTANCE,
      instanceState: "ACTIVE",
      serviceInstanceID: POWERVS_DEMO.serviceInstanceID,
    });
  });
});

describe("simulated clouds and the ledger with PowerVS instances", () => {
  it("an instance has a UUID and providerID ibmpowervs://<region>/<zone>/<workspace>/<id>", () => {
    const ledger = createInstanceLedger({ random: () => 0.5 });
    const r = ledger.created({ machineName: "m-0", side: "ClusterAPI", zone: "dal10", cloud: POWERVS_CLOUD });
    expect(r.instanceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-9[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.providerID).toBe(`ibmpowervs://dal/dal10/${POWERVS_DEMO.serviceInstanceID}/${r.instanceId}`);
    expect(instanceIdOfProviderID(r.providerID)).toBe(r.instanceId);
    expect(nodeNameOfProviderID(r.providerID, "m-0")).toBe("m-0");
    const next = ledger.created({
      machineName: "m-1",
      side: "ClusterAPI",
      zone: "dal10",
      cloud: POWERVS_CLOUD,
    });
    expect(next.instanceId).not.toBe(r.instanceId);
  });
  it("reads only its own providerIDs", () => {
    expect(POWERVS_CLOUD.instanceIdOf(`openstack:///${INSTANCE}`)).toBeUndefined();
    expect(OPENSTACK_CLOUD.instanceIdOf(PROVIDER_ID)).toBeUndefined();
    expect(POWERVS_CLOUD.instanceIdOf("ibmpowervs://dal/dal10/ws/not-a-uuid")).toBeUndefined();
    expect(POWERVS_CLOUD.instanceIdOf(PROVIDER_ID)).toBe(INSTANCE);
  });
  it("CAPIBM finds the instance MAO's actuator launched for the twin by name, and MAO CAPIBM's", () => {
    const ledger = createInstanceLedger();
    const instance = ledger.created({
      machineName: "m-0",
      side: "MachineAPI",
      zone: "dal10",
      cloud: POWERVS_CLOUD,
    });
    expect(findLaunched(POWERVS_CLOUD, ledger, "m-0", "ClusterAPI")).toEqual(instance);
    expect(findLaunched(POWERVS_CLOUD, ledger, "m-1", "MachineAPI")).toBeUndefined();
  });
  it("a seeded instance is adopted from its providerID and found by name", () => {
    const ledger = createInstanceLedger();
    ledger.recordExisting({ machineName: "m-0", providerID: PROVIDER_ID });
    expect(ledger.findLiveNamed("m-0")).toMatchObject({ instanceId: INSTANCE, side: "existing" });
  });
});

describe("PowerVS runs CAPIBM", () => {
  it("with the PowerVS cloud, beside OpenStack's CAPO", () => {
    expect(infraProviderOf(powervsPlatform)).toMatchObject({
      name: "capibm",
      leaseName: "controller-leader-elect-capibm-simulated",
    });
    expect(cloudOf(powervsPlatform)).toBe(POWERVS_CLOUD);
    expect(infraProviderOf(openstackPlatform).name).toBe("capo");
  });
});

describe("CAPI stand-in on PowerVS: CAPIBM serves v1beta2 at the v1beta1 contract", () => {
  it("an IBMPowerVSMachine is provisioned when status.ready is true: CAPI copies its providerID", () => {
    const machine = capiPowerVSMachineOf({ uid: "machine-uid", finalizers: [FINALIZERS.capiMachine] });
    const withStatus = { ...machine, status: { conditions: [notPaused] } };
    expect(
      planCapiMachine({
        machine: withStatus,
        infraMachine: pvsm({}, { providerID: PROVIDER_ID }, provisioned),
        nowMs: NOW_MS,
      }),
    ).toEqual({ kind: "setProviderID", providerID: PROVIDER_ID });
  });
  it("at launch CAPIBM writes only the providerID: its spec has no instance ID", () => {
    expect(CAPIBM_PROFILE.launchedSpec({ instanceId: INSTANCE, providerID: PROVIDER_ID })).toEqual({
      providerID: PROVIDER_ID,
    });
  });
});
