import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/kube/kinds.js";
import { nameOf } from "../../src/kube/object.js";
import {
  conversionFailed,
  storageBeingRemoved,
  synchronized,
  unsupportedOwner,
} from "../../src/sync/condition.js";
import {
  defaultInfraTypeResolver,
  infrastructureRefOf,
  machineKeysFor,
  machineSetKeysFor,
  storageToCheck,
} from "../../src/sync/snapshot.js";
import { nestedObjects } from "../support/deep.js";
import {
  awsMachine,
  awsMachineTemplate,
  capiCluster,
  capiMachine,
  capiMachineSet,
  infrastructure,
  mapiMachine,
  mapiMachineSet,
  ownerRef,
  templateNameFor,
  World,
} from "./builders.js";

describe("snapshot readers (SPEC §4.1)", () => {
  it("a Machine snapshot holds both twins, the InfraMachine by infrastructureRef, the owners both ways, Infrastructure and Cluster", () => {
    const mapiSet = mapiMachineSet("workers");
    const capiSet = capiMachineSet("workers");
    const world = new World([
      infrastructure(),
      capiCluster(),
      mapiSet,
      capiSet,
      mapiMachine("m", { meta: { ownerReferences: [ownerRef(mapiSet)] } }),
      capiMachine("m", {
        meta: { ownerReferences: [ownerRef(capiSet)] },
        spec: {
          infrastructureRef: {
            apiGroup: "infrastructure.cluster.x-k8s.io",
            kind: "AWSMachine",
            name: "m-infra",
          },
        },
      }),
      awsMachine("m-infra"),
      awsMachine("m"),
    ]);
    const s = world.machineSnapshot("m");
    expect(nameOf(s.infraMachine)).toBe("m-infra");
    expect(nameOf(s.capiTwinOfMapiOwner)).toBe("workers");
    expect(nameOf(s.capiOwnerMachineSet)).toBe("workers");
    expect(s.mapiTwinOfCapiOwner?.kind).toBe("MachineSet");
    expect(s.cluster?.kind).toBe("Cluster");
    expect(s.infrastructure?.kind).toBe("Infrastructure");
    expect(s.storageBeingRemoved).toBe(false);
  });

  it("without a CAPI Machine the InfraMachine is looked up by the same name (both-absent release)", () => {
    const s = new World([awsMachine("m")]).machineSnapshot("m");
    expect(nameOf(s.infraMachine)).toBe("m");
    expect(s.mapi).toBeUndefined();
  });

  it("a MachineSet snapshot holds labelled templates, the referenced hand-made one, and the MAPI Machines it owns", () => {
    const mapiSet = mapiMachineSet("workers");
    const world = new World([
      infrastructure(),
      mapiSet,
      capiMachineSet("workers", { template: "workers-by-hand" }),
      awsMachineTemplate(templateNameFor("workers", "m6i.xlarge"), { setName: "workers" }),
      awsMachineTemplate("workers-by-hand"),
      awsMachineTemplate("unrelated"),
      awsMachineTemplate("others-12345678", { setName: "others" }),
      mapiMachine("workers-a", { meta: { ownerReferences: [ownerRef(mapiSet)] } }),
      mapiMachine("standalone"),
    ]);
    const s = world.machineSetSnapshot("workers");
    expect(s.templates.map(nameOf).sort()).toEqual([
      templateNameFor("workers", "m6i.xlarge"),
      "workers-by-hand",
    ]);
    expect(s.mapiMachines.map(nameOf)).toEqual(["workers-a"]);
  });

  it("infrastructure references: v1beta2 apiGroup, tolerated v1beta1 apiVersion, unknown kinds unresolved", () => {
    expect(infrastructureRefOf(capiMachine("m"))).toEqual({
      apiGroup: "infrastructure.cluster.x-k8s.io",
      kind: "AWSMachine",
      name: "m",
    });
    const legacy = capiMachine("m", {
      spec: {
        infrastructureRef: {
          apiVersion: "infrastructure.cluster.x-k8s.io/v1beta1",
          kind: "AWSMachine",
          name: "x",
        },
      },
    });
    expect(infrastructureRefOf(legacy)?.apiGroup).toBe("infrastructure.cluster.x-k8s.io");
    expect(
      defaultInfraTypeResolver({
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "AWSMachineTemplate",
        name: "t",
      }),
    ).toBe(KINDS.awsMachineTemplate);
    expect(
      defaultInfraTypeResolver({
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "GCPMachine",
        name: "g",
      }),
    ).toBeUndefined();
  });
});

describe("watch mapping (SPEC §4.1)", () => {
  const settings = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };

  it("MachineSync: an InfraMachine maps to its owning CAPI Machine, else to its own name", () => {
    const capi = capiMachine("m");
    expect(machineKeysFor(awsMachine("m-infra", { meta: { ownerReferences: [ownerRef(capi)] } }))).toEqual([
      "m",
    ]);
    expect(machineKeysFor(awsMachine("lonely"))).toEqual(["lonely"]);
    expect(machineKeysFor(mapiMachine("x"))).toEqual(["x"]);
  });

  it("MachineSetSync: a template maps via its label and via every CAPI MachineSet referencing it", () => {
    const world = new World([
      capiMachineSet("workers", { template: "workers-by-hand" }),
      capiMachineSet("other"),
    ]);
    expect(machineSetKeysFor(awsMachineTemplate("workers-by-hand"), world, settings)).toEqual(["workers"]);
    expect(machineSetKeysFor(awsMachineTemplate("t-1", { setName: "infra" }), world, settings)).toEqual([
      "infra",
    ]);
    expect(machineSetKeysFor(awsMachineTemplate("nobody"), world, settings)).toEqual([]);
  });

  it("§4.6 the live storage read covers both namespaces and the twins' CRDs", () => {
    expect(storageToCheck("Machine", settings)).toEqual({
      namespaces: ["openshift-machine-api", "openshift-cluster-api"],
      customResourceDefinitions: [
        "machines.machine.openshift.io",
        "machines.cluster.x-k8s.io",
        "awsmachines.infrastructure.cluster.x-k8s.io",
      ],
    });
    expect(storageToCheck("MachineSet", settings).customResourceDefinitions).toEqual([
      "machinesets.machine.openshift.io",
      "machinesets.cluster.x-k8s.io",
      "awsmachinetemplates.infrastructure.cluster.x-k8s.io",
    ]);
  });
});

describe("Synchronized condition texts (SPEC §4.5)", () => {
  it.each([
    [
      synchronized("Machine", "MAPItoCAPI"),
      "ResourceSynchronized",
      "Successfully synchronized MAPI Machine to CAPI",
    ],
    [
      synchronized("Machine", "CAPItoMAPI", true),
      "FinalSyncComplete",
      "Successfully synchronized CAPI Machine to MAPI",
    ],
    [
      synchronized("MachineSet", "MAPItoCAPI"),
      "ResourceSynchronized",
      "Successfully synchronized MAPI MachineSet to CAPI",
    ],
    [
      conversionFailed("MachineSet", "CAPItoMAPI", [
        { path: "spec.template.spec.version", value: "v1.30", message: "version is not supported" },
        { path: "spec.deletion.nodeDeletionTimeoutSeconds", value: 30, message: "must be 10" },
      ]),
      "FailedToConvertCAPIMachineSetToMAPI",
      'spec.template.spec.version: Invalid value: "v1.30": version is not supported; spec.deletion.nodeDeletionTimeoutSeconds: Invalid value: 30: must be 10',
    ],
    [
      unsupportedOwner("Machine", mapiMachine("master-0"), "ControlPlaneMachineSet cluster"),
      "UnsupportedOwnerReference",
      "MAPI Machine openshift-machine-api/master-0 is owned by ControlPlaneMachineSet cluster; Machines with such owners are not synchronized",
    ],
    [
      storageBeingRemoved("Machine"),
      "StorageBeingRemoved",
      "a namespace or CustomResourceDefinition of this Machine's twins is being deleted; no deletion is propagated and no finalizer is removed until that settles",
    ],
  ])("%#: %s", (c, reason, message) => {
    expect(c.reason).toBe(reason);
    expect(c.message).toBe(message);
  });
});

describe("a conversion failure's message is bounded whatever the value (SPEC §2.1, §5)", () => {
  // kube-apiserver stores a Machine whose providerSpec holds a value ~9,990 levels deep (its decoder's
  // limit is 10,000 with managedFields); JSON.stringify overflows the stack near 5,000.
  it.each([
    ["nested as deep as kube-apiserver stores", nestedObjects(9_990)],
    ["a 1 MiB string", "x".repeat(1 << 20)],
    ["300,000 keys wide", Object.fromEntries(Array.from({ length: 300_000 }, (_, i) => [`k${i}`, i]))],
  ])("%s: the field is named, the value cut short", (_shape, value) => {
    const c = conversionFailed("Machine", "MAPItoCAPI", [
      { path: "spec.providerSpec.value.crafted", value, message: "unsupported field" },
    ]);
    expect(c.reason).toBe("FailedToConvertMAPIMachineToCAPI");
    expect(c.message.startsWith("spec.providerSpec.value.crafted: Invalid value: ")).toBe(true);
    expect(c.message.endsWith(": unsupported field")).toBe(true);
    expect(c.message.length).toBeLessThan(400);
  });
});
