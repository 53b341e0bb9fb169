/** SPEC §5.4 status mirroring, both ways, with per-type condition merging. */
import { describe, expect, it } from "vitest";
import {
  capiMachineSetStatusToMapi,
  capiMachineStatusToMapi,
  formatSelector,
  mapiMachineSetStatusToCapi,
  mapiMachineStatusToCapi,
} from "../../../src/sync/conversion/index.js";
import { sharedWith } from "../../support/deep.js";
import {
  awsMachine,
  awsMachineSpec,
  capiMachine,
  infrastructure,
  mapiMachine,
  mapiMachineCreatedSince,
  mapiMachineSet,
  providerSpec,
} from "./builders.js";

const NOW = "2026-11-30T10:00:00Z";
const EARLIER = "2026-11-29T08:00:00Z";

const toCapi = (status: Record<string, unknown>, value = providerSpec(), capi = capiMachine()) => {
  const result = mapiMachineStatusToCapi(mapiMachine({ status, value }), infrastructure(), {
    now: NOW,
    capiMachine: capi,
  });
  if (!result.ok) throw new Error("conversion failed");
  return result.value;
};

const conditionStatus = (conditions: unknown, type: string) =>
  (conditions as { type: string; status: string }[]).find((c) => c.type === type)?.status;

describe("SPEC §5.4 MAPI Machine status → CAPI Machine", () => {
  it("phase, nodeRef.name, addresses, lastUpdated", () => {
    const addresses = [{ type: "InternalIP", address: "10.0.0.5" }];
    const { machineStatus } = toCapi({
      phase: "Running",
      nodeRef: { apiVersion: "v1", kind: "Node", name: "ip-10-0-0-5" },
      addresses,
      lastUpdated: EARLIER,
    });
    expect(machineStatus).toMatchObject({
      phase: "Running",
      nodeRef: { name: "ip-10-0-0-5" },
      addresses,
      lastUpdated: EARLIER,
    });
  });
  it.each([
    ["", false, false],
    ["Provisioning", false, false],
    ["Provisioned", true, false],
    ["Running", true, true],
    ["Deleting", true, true],
    ["Failed", false, false],
  ])("phase %j → infrastructureProvisioned %s, bootstrapDataSecretCreated %s", (phase, infra, bootstrap) => {
    expect(toCapi({ phase }).machineStatus.initialization).toEqual({
      infrastructureProvisioned: infra,
      bootstrapDataSecretCreated: bootstrap,
    });
  });
  it("conditions Available, Ready, BootstrapConfigReady, InfrastructureReady, Deleting, NodeReady derived from phase and nodeRef", () => {
    const running = toCapi({ phase: "Running", nodeRef: { name: "n" } }).machineStatus.conditions;
    expect(
      ["Available", "Ready", "BootstrapConfigReady", "InfrastructureReady", "Deleting", "NodeReady"].map(
        (t) => conditionStatus(running, t),
      ),
    ).toEqual(["True", "True", "True", "True", "False", "True"]);
    const deleting = toCapi({ phase: "Deleting", nodeRef: { name: "n" } }).machineStatus.conditions;
    expect(
      ["Available", "Ready", "InfrastructureReady", "Deleting", "NodeReady"].map((t) =>
        conditionStatus(deleting, t),
      ),
    ).toEqual(["False", "False", "True", "True", "False"]);
    const provisioning = toCapi({ phase: "Provisioning" }).machineStatus.conditions;
    expect(conditionStatus(provisioning, "InfrastructureReady")).toBe("False");
  });
  it("conditions merge per type: unchanged status keeps its lastTransitionTime, foreign types stay untouched", () => {
    const capi = capiMachine({
      status: {
        conditions: [
          { type: "Paused", status: "True", reason: "Paused", lastTransitionTime: EARLIER },
          { type: "NodeHealthy", status: "True", reason: "x", lastTransitionTime: EARLIER },
          { type: "UpToDate", status: "True", reason: "y", lastTransitionTime: EARLIER },
          { type: "Ready", status: "True", reason: "Ready", lastTransitionTime: EARLIER },
          { type: "Deleting", status: "True", reason: "Deleting", lastTransitionTime: EARLIER },
        ],
      },
    });
    const conditions = toCapi({ phase: "Running", nodeRef: { name: "n" } }, providerSpec(), capi)
      .machineStatus.conditions as {
      type: string;
      status: string;
      lastTransitionTime: string;
      reason: string;
    }[];
    const byType = Object.fromEntries(conditions.map((c) => [c.type, c]));
    expect(byType.Paused).toEqual({
      type: "Paused",
      status: "True",
      reason: "Paused",
      lastTransitionTime: EARLIER,
    });
    expect(byType.NodeHealthy?.lastTransitionTime).toBe(EARLIER);
    expect(byType.UpToDate?.lastTransitionTime).toBe(EARLIER);
    expect(byType.Ready?.lastTransitionTime).toBe(EARLIER);
    expect(byType.Deleting).toMatchObject({ status: "False", lastTransitionTime: NOW });
    expect(conditions.map((c) => c.type).sort()).toEqual([
      "Available",
      "BootstrapConfigReady",
      "Deleting",
      "InfrastructureReady",
      "NodeHealthy",
      "NodeReady",
      "Paused",
      "Ready",
      "UpToDate",
    ]);
  });
  it("never produces CAPI Paused, NodeHealthy or UpToDate", () => {
    const conditions = toCapi({ phase: "Running", nodeRef: { name: "n" } }, providerSpec(), capiMachine())
      .machineStatus.conditions as { type: string }[];
    expect(conditions.map((c) => c.type)).not.toContain("Paused");
    expect(conditions.map((c) => c.type)).not.toContain("NodeHealthy");
    expect(conditions.map((c) => c.type)).not.toContain("UpToDate");
  });
  it("deprecated.v1beta1.failureReason/failureMessage from errorReason/errorMessage", () => {
    expect(
      toCapi({ phase: "Failed", errorReason: "InvalidConfiguration", errorMessage: "bad AMI" }).machineStatus
        .deprecated,
    ).toEqual({
      v1beta1: { failureReason: "InvalidConfiguration", failureMessage: "bad AMI" },
    });
  });
});

describe("SPEC §5.4 MAPI Machine status → AWSMachine status", () => {
  it("instanceState from providerStatus; ready = (instanceState == running)", () => {
    expect(toCapi({ providerStatus: { instanceState: "running" } }).infraMachineStatus).toMatchObject({
      instanceState: "running",
      ready: true,
    });
    expect(toCapi({ providerStatus: { instanceState: "pending" } }).infraMachineStatus).toMatchObject({
      instanceState: "pending",
      ready: false,
    });
  });
  it("interruptible = spot", () => {
    expect(toCapi({}, providerSpec({ spotMarketOptions: {} })).infraMachineStatus.interruptible).toBe(true);
    expect(toCapi({}, providerSpec({ marketType: "Spot" })).infraMachineStatus.interruptible).toBe(true);
    expect(toCapi({}).infraMachineStatus.interruptible).toBe(false);
  });
  it("dedicatedHost", () => {
    expect(
      toCapi({ providerStatus: { dedicatedHost: { id: "h-01234567" } } }).infraMachineStatus.dedicatedHost,
    ).toEqual({ id: "h-01234567" });
  });
});

describe("SPEC §5.4 CAPI Machine status → MAPI Machine", () => {
  const toMapi = (capiStatus: Record<string, unknown>, infraMachine = awsMachine(), mapi = mapiMachine()) => {
    const result = capiMachineStatusToMapi(
      capiMachine({ status: capiStatus }),
      infraMachine,
      infrastructure(),
      { now: NOW, mapiMachine: mapi },
    );
    if (!result.ok) throw new Error("conversion failed");
    return result.value.status;
  };
  it.each([
    ["", undefined],
    ["Pending", undefined],
    ["Unknown", undefined],
    ["Provisioning", "Provisioning"],
    ["Provisioned", "Provisioned"],
    ["Running", "Running"],
    ["Deleting", "Deleting"],
    ["Deleted", "Deleting"],
    ["Failed", "Failed"],
  ])("phase %j → %j", (capi, mapi) => {
    expect(toMapi({ phase: capi }).phase).toBe(mapi);
  });
  it("nodeRef {name, apiVersion v1, kind Node}; addresses; failure → errorReason/errorMessage", () => {
    const status = toMapi({
      nodeRef: { name: "n1" },
      addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
      deprecated: { v1beta1: { failureReason: "CreateError", failureMessage: "boom" } },
    });
    expect(status).toMatchObject({
      nodeRef: { apiVersion: "v1", kind: "Node", name: "n1" },
      addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
      errorReason: "CreateError",
      errorMessage: "boom",
    });
  });
  it("providerStatus {instanceId, instanceState, MachineCreation condition}", () => {
    const infraMachine = awsMachine({
      spec: awsMachineSpec({ instanceID: "i-1" }),
      status: { instanceState: "running" },
    });
    expect(toMapi({}, infraMachine).providerStatus).toEqual({
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "AWSMachineProviderStatus",
      instanceId: "i-1",
      instanceState: "running",
      conditions: [
        {
          type: "MachineCreation",
          status: "True",
          reason: "MachineCreationSucceeded",
          message: "Machine successfully created",
          lastTransitionTime: NOW,
        },
      ],
    });
  });
  it("MachineCreation keeps its lastTransitionTime while its status is unchanged", () => {
    const infraMachine = awsMachine({ spec: awsMachineSpec({ instanceID: "i-1" }) });
    const mapi = mapiMachineCreatedSince(EARLIER);
    const providerStatus = toMapi({}, infraMachine, mapi).providerStatus as {
      conditions: { lastTransitionTime: string }[];
    };
    expect(providerStatus.conditions[0]?.lastTransitionTime).toBe(EARLIER);
  });
  it("never produces MAPI Paused or Synchronized, nor authoritativeAPI/synchronized* fields", () => {
    const status = toMapi({ phase: "Running" });
    expect(status).not.toHaveProperty("conditions");
    expect(status).not.toHaveProperty("authoritativeAPI");
    expect(status).not.toHaveProperty("synchronizedGeneration");
    expect(status).not.toHaveProperty("synchronizedAPI");
  });
});

describe("SPEC §5.4 a mirrored status shares no object with the statuses it merges into", () => {
  // The sync's memoising converter freezes what it hands out without walking the inputs (src/sync/converter.ts):
  // a mirrored status holds copies of the conditions it keeps, never the cached objects' own.
  const kept = (type: string) => ({ type, status: "True", reason: type, lastTransitionTime: EARLIER });
  it("MAPI → CAPI: the CAPI Machine's conditions it keeps are copies", () => {
    const capi = capiMachine({
      status: { conditions: [kept("Paused"), kept("NodeHealthy"), kept("Ready")] },
    });
    const mapi = mapiMachine({
      status: { phase: "Running", nodeRef: { name: "n" }, addresses: [{ type: "x" }] },
    });
    const result = mapiMachineStatusToCapi(mapi, infrastructure(), { now: NOW, capiMachine: capi });
    expect(result.ok && result.value.machineStatus.conditions).toContainEqual(kept("Paused"));
    expect(sharedWith(result, [mapi, capi, infrastructure()])).toEqual([]);
  });
  it.each([
    ["with MachineCreation produced", awsMachine({ spec: awsMachineSpec({ instanceID: "i-1" }) })],
    ["without MachineCreation produced", awsMachine()],
  ])("CAPI → MAPI: the providerStatus conditions it keeps are copies (%s)", (_, infraMachine) => {
    const mapi = mapiMachine({
      status: { providerStatus: { conditions: [kept("Other"), kept("MachineCreation")] } },
    });
    const capi = capiMachine({ status: { phase: "Running" } });
    const result = capiMachineStatusToMapi(capi, infraMachine, infrastructure(), {
      now: NOW,
      mapiMachine: mapi,
    });
    expect(
      result.ok && (result.value.status.providerStatus as { conditions: unknown[] }).conditions,
    ).toContainEqual(kept("Other"));
    expect(sharedWith(result, [mapi, capi, infraMachine, infrastructure()])).toEqual([]);
  });
  it("a kept condition holding an object is copied whole", () => {
    const odd = { ...kept("Odd"), details: { nested: [{ a: 1 }] } };
    const capi = capiMachine({ status: { conditions: [odd] } });
    const mapi = mapiMachine({ status: { phase: "Running" } });
    const result = mapiMachineStatusToCapi(mapi, infrastructure(), { now: NOW, capiMachine: capi });
    expect(result.ok && result.value.machineStatus.conditions).toContainEqual(odd);
    expect(sharedWith(result, [mapi, capi])).toEqual([]);
  });
});

describe("SPEC §5.4 MachineSet status", () => {
  it("MAPI → CAPI: replicas, ready/available counts, selector string, errorReason/errorMessage", () => {
    const ms = mapiMachineSet({ name: "workers" });
    ms.status = {
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 1,
      errorReason: "InvalidConfiguration",
      errorMessage: "x",
    };
    const result = mapiMachineSetStatusToCapi(ms, infrastructure());
    expect(result.ok && result.value.status).toEqual({
      selector:
        "cluster.x-k8s.io/cluster-name=demo-x7k2p,machine.openshift.io/cluster-api-machineset=workers",
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 1,
      deprecated: {
        v1beta1: {
          fullyLabeledReplicas: 3,
          readyReplicas: 2,
          availableReplicas: 1,
          failureReason: "InvalidConfiguration",
          failureMessage: "x",
        },
      },
    });
  });
  it("CAPI → MAPI: replicas, fullyLabeled/ready/available counts, errorReason/errorMessage", () => {
    const result = capiMachineSetStatusToMapi({
      status: {
        replicas: 3,
        readyReplicas: 2,
        availableReplicas: 2,
        deprecated: { v1beta1: { fullyLabeledReplicas: 3, failureReason: "R", failureMessage: "M" } },
      },
    });
    expect(result.ok && result.value.status).toEqual({
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      errorReason: "R",
      errorMessage: "M",
    });
  });
  it("selector string formats match expressions like kubectl", () => {
    expect(
      formatSelector({
        matchLabels: { b: "2", a: "1" },
        matchExpressions: [
          { key: "c", operator: "In", values: ["y", "x"] },
          { key: "d", operator: "NotIn", values: ["z"] },
          { key: "e", operator: "Exists" },
          { key: "f", operator: "DoesNotExist" },
        ],
      }),
    ).toBe("a=1,b=2,c in (x,y),d notin (z),e,!f");
  });
});
