/**
 * The CAPI and CAPA stand-ins' pure planners pinned to SPEC §1 and §1.1: the CAPI `Paused` condition from
 * each object's own annotation; the CAPI Machine and MachineSet finalizers added before the pause check, as
 * real Cluster API does (so they sit on paused objects too); the CAPI Machine finalizer held until the
 * InfraMachine is gone; providerID,
 * nodeRef, Running and `infrastructureProvisioned` once the InfraMachine is provisioned; the CAPI
 * MachineSet scaling Machines *and AWSMachines from the template*; CAPA acting on an unpaused AWSMachine
 * even when its Machine is paused, adding its finalizer on the first unpaused reconcile.
 */
import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, FINALIZERS, INFRA_GROUP, LABELS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { getPath } from "../../src/kube/object.js";
import { CAPA_PROFILE } from "../../src/simulate/capa.js";
import { capiMachineFromTemplate, planCapiMachine, planCapiMachineSet } from "../../src/simulate/capi.js";
import { planInfraMachine } from "../../src/simulate/infra-provider.js";
import {
  awsMachineOf,
  awsMachineTemplateOf,
  capiMachineOf,
  capiMachineSetOf,
  EARLIER,
  NOW_MS,
  paused,
} from "./builders.js";

const notPaused = {
  type: "Paused",
  status: "False",
  reason: "NotPaused",
  message: "",
  lastTransitionTime: EARLIER,
};
const isPaused = {
  type: "Paused",
  status: "True",
  reason: "Paused",
  message: "Object is paused",
  lastTransitionTime: EARLIER,
};
const PROVIDER_ID = "aws:///us-east-1a/i-0123456789abcdef0";
const provisionedStatus = {
  conditions: [notPaused],
  ready: true,
  initialization: { provisioned: true, infrastructureProvisioned: true },
};

const machine = (meta: KubeObject["metadata"] = {}, spec = {}, status: Record<string, unknown> = {}) =>
  capiMachineOf("m-0", {
    meta: { uid: "machine-uid", finalizers: [FINALIZERS.capiMachine], ...meta },
    spec,
    status: { conditions: [meta.annotations ? isPaused : notPaused], ...status },
  });
const ownedByMachine = [
  { apiVersion: CAPI_API_VERSION, kind: "Machine", name: "m-0", uid: "machine-uid", controller: true },
];
const infra = (meta: KubeObject["metadata"] = {}, spec = {}, status?: Record<string, unknown>) =>
  awsMachineOf("m-0", {
    meta: { ownerReferences: ownedByMachine, finalizers: [FINALIZERS.awsMachine], ...meta },
    spec,
    status: status ?? { conditions: [notPaused] },
  });

describe("CAPI Machine stand-in (SPEC §1.1)", () => {
  const plan = (m: KubeObject | undefined, i: KubeObject | undefined) =>
    planCapiMachine({ machine: m, infraMachine: i, nowMs: NOW_MS });
  const cases: Array<[string, KubeObject | undefined, KubeObject | undefined, string]> = [
    ["gone: nothing", undefined, undefined, "none"],
    [
      "writes Paused from the pause annotation (no condition yet)",
      capiMachineOf("m-0", { meta: { finalizers: [FINALIZERS.capiMachine] } }),
      undefined,
      "setConditions",
    ],
    [
      "adds machine.cluster.x-k8s.io before anything else, the Paused condition included",
      capiMachineOf("m-0"),
      undefined,
      "addFinalizer",
    ],
    [
      "adds machine.cluster.x-k8s.io while paused: Cluster API adds it before its pause check (SPEC §3.1 step 9)",
      machine({ annotations: paused, finalizers: [FINALIZERS.sync] }),
      infra(),
      "addFinalizer",
    ],
    [
      "never adds machine.cluster.x-k8s.io to a deleting Machine, paused or not",
      machine({ annotations: paused, deletionTimestamp: EARLIER, finalizers: [FINALIZERS.sync] }),
      infra(),
      "none",
    ],
    [
      "deleting without machine.cluster.x-k8s.io: nothing (no finalizer is added back)",
      machine({ deletionTimestamp: EARLIER, finalizers: [FINALIZERS.sync] }),
      infra(),
      "none",
    ],
    [
      "writes Paused=True when the annotation appears",
      { ...machine(), metadata: { ...machine().metadata, annotations: paused } },
      infra(),
      "setConditions",
    ],
    ["paused: nothing else", machine({ annotations: paused }), infra(), "none"],
    ["adds machine.cluster.x-k8s.io while unpaused", machine({ finalizers: [] }), infra(), "addFinalizer"],
    ["waits for its InfraMachine", machine(), undefined, "none"],
    [
      "makes itself the controller owner of its InfraMachine",
      machine(),
      infra({ ownerReferences: [] }),
      "adoptInfraMachine",
    ],
    ["waits for the InfraMachine to be provisioned", machine(), infra(), "none"],
    [
      "copies providerID once the InfraMachine is provisioned",
      machine(),
      infra({}, { providerID: PROVIDER_ID, instanceID: "i-0123456789abcdef0" }, provisionedStatus),
      "setProviderID",
    ],
    [
      "then Running with a nodeRef and infrastructureProvisioned",
      machine({}, { providerID: PROVIDER_ID }),
      infra({}, { providerID: PROVIDER_ID }, provisionedStatus),
      "setRunning",
    ],
    [
      "Running (Ready and Available True): nothing",
      machine(
        {},
        { providerID: PROVIDER_ID },
        {
          phase: "Running",
          nodeRef: { name: "n" },
          initialization: { infrastructureProvisioned: true },
          conditions: [
            notPaused,
            { type: "Ready", status: "True", reason: "Ready", lastTransitionTime: EARLIER },
            { type: "Available", status: "True", reason: "Available", lastTransitionTime: EARLIER },
          ],
        },
      ),
      infra({}, { providerID: PROVIDER_ID }, provisionedStatus),
      "none",
    ],
    [
      "deleting: deletes its InfraMachine first",
      machine({ deletionTimestamp: EARLIER }),
      infra(),
      "deleteInfraMachine",
    ],
    [
      "deleting: holds its finalizer while the InfraMachine is still there (deleting, CAPA finalizer)",
      machine({ deletionTimestamp: EARLIER }),
      infra({ deletionTimestamp: EARLIER }),
      "none",
    ],
    [
      "deleting: removes its finalizer only once the InfraMachine is NotFound",
      machine({ deletionTimestamp: EARLIER }),
      undefined,
      "removeFinalizerIfInfraGone",
    ],
    [
      "deleting but paused: nothing",
      machine({ deletionTimestamp: EARLIER, annotations: paused }),
      undefined,
      "none",
    ],
  ];
  it.each(cases)("%s", (_name, m, i, kind) => {
    expect(plan(m, i).kind).toBe(kind);
  });

  it("the Paused condition carries reason and lastTransitionTime (the CRD requires both)", () => {
    const action = plan(
      capiMachineOf("m-0", {
        meta: { annotations: paused, generation: 3, finalizers: [FINALIZERS.capiMachine] },
      }),
      undefined,
    );
    expect(action).toEqual({
      kind: "setConditions",
      conditions: [
        {
          type: "Paused",
          status: "True",
          reason: "Paused",
          message: "Object is paused",
          observedGeneration: 3,
          lastTransitionTime: "2026-11-30T10:00:00Z",
        },
      ],
    });
  });

  it("copies the InfraMachine's providerID verbatim", () => {
    const action = plan(machine(), infra({}, { providerID: PROVIDER_ID }, provisionedStatus));
    expect(action).toEqual({ kind: "setProviderID", providerID: PROVIDER_ID });
  });
});

describe("CAPI MachineSet stand-in (SPEC §1.1)", () => {
  const set = (replicas: number, meta: KubeObject["metadata"] = {}) =>
    capiMachineSetOf("workers", replicas, {
      meta: { uid: "set-uid", finalizers: [FINALIZERS.capiMachineSet], ...meta },
      status: { conditions: [meta.annotations ? isPaused : notPaused] },
    });
  const child = (name: string, meta: KubeObject["metadata"] = {}) =>
    capiMachineOf(name, { meta: { uid: `${name}-uid`, creationTimestamp: EARLIER, ...meta } });
  const plan = (
    s: KubeObject | undefined,
    machines: KubeObject[],
    template = awsMachineTemplateOf("workers"),
  ) =>
    planCapiMachineSet({
      machineSet: s,
      infraTemplate: template,
      machines,
      pendingCreates: [],
      pendingDeletes: [],
      newName: "workers-x7k2p",
      nowMs: NOW_MS,
    });

  it("writes Paused from its annotation", () => {
    expect(
      plan(capiMachineSetOf("workers", 1, { meta: { finalizers: [FINALIZERS.capiMachineSet] } }), []).kind,
    ).toBe("setConditions");
  });
  it("adds cluster.x-k8s.io/machineset while unpaused", () => {
    expect(plan(set(1, { finalizers: [] }), []).kind).toBe("addFinalizer");
  });
  it("adds cluster.x-k8s.io/machineset while paused, before its pause check (SPEC §3.1 step 9)", () => {
    expect(plan(set(3, { annotations: paused, finalizers: [FINALIZERS.sync] }), []).kind).toBe(
      "addFinalizer",
    );
    expect(plan(capiMachineSetOf("workers", 1), []).kind).toBe("addFinalizer");
  });
  it("never adds cluster.x-k8s.io/machineset to a deleting MachineSet, paused or not", () => {
    const deleting = { deletionTimestamp: EARLIER, finalizers: [FINALIZERS.sync] };
    expect(plan(set(1, { ...deleting, annotations: paused }), []).kind).toBe("none");
    expect(plan(set(1, deleting), []).kind).not.toBe("addFinalizer");
  });
  it("paused: does not scale", () => {
    expect(plan(set(3, { annotations: paused }), []).kind).toBe("none");
  });
  it("scales up with a Machine and an AWSMachine stamped from the template", () => {
    const action = plan(set(1), []);
    if (action.kind !== "createMachine") throw new Error(action.kind);
    expect(action.infraMachine).toMatchObject({
      kind: "AWSMachine",
      metadata: { name: "workers-x7k2p", labels: { [LABELS.capiSetName]: "workers" } },
    });
    expect(action.infraMachine.spec).toEqual(
      getPath(awsMachineTemplateOf("workers"), ["spec", "template", "spec"]),
    );
    expect(action.machine.spec?.infrastructureRef).toEqual({
      apiGroup: INFRA_GROUP,
      kind: "AWSMachine",
      name: "workers-x7k2p",
    });
    expect(action.machine.spec?.failureDomain).toBe("us-east-1b");
  });
  it("reports v1beta2 replica counts once steady (no fullyLabeledReplicas in CAPI)", () => {
    const running = capiMachineOf("b", { meta: { uid: "b-uid" }, status: { phase: "Running" } });
    expect(plan(set(2), [child("a"), running])).toEqual({
      kind: "setReplicaStatus",
      status: { replicas: 2, readyReplicas: 1, availableReplicas: 1 },
    });
  });
  it("waits when the infrastructure template is missing", () => {
    expect(
      planCapiMachineSet({
        machineSet: set(1),
        infraTemplate: undefined,
        machines: [],
        pendingCreates: [],
        pendingDeletes: [],
        newName: "x",
        nowMs: NOW_MS,
      }).kind,
    ).toBe("none");
  });
  it("scales down by deleting the Machine (its controller deletes the AWSMachine)", () => {
    const action = plan(set(1), [child("a"), child("b", { creationTimestamp: "2026-11-30T09:59:00Z" })]);
    expect(action).toMatchObject({ kind: "deleteMachine", machine: { metadata: { name: "b" } } });
  });
  it("deleting: deletes its Machines, then drops its finalizer", () => {
    expect(plan(set(1, { deletionTimestamp: EARLIER }), [child("a")]).kind).toBe("deleteMachine");
    expect(
      plan(set(1, { deletionTimestamp: EARLIER }), [child("a", { deletionTimestamp: EARLIER })]).kind,
    ).toBe("none");
    expect(plan(set(1, { deletionTimestamp: EARLIER }), []).kind).toBe("removeFinalizer");
  });
  it("stamped objects are controlled by the set (the Machine controller adopts the AWSMachine later)", () => {
    const s = set(1);
    const { machine: m, infraMachine } = capiMachineFromTemplate(s, awsMachineTemplateOf("workers"), "n");
    for (const o of [m, infraMachine])
      expect(o.metadata?.ownerReferences).toEqual([
        {
          apiVersion: CAPI_API_VERSION,
          kind: "MachineSet",
          name: "workers",
          uid: "set-uid",
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
  });
});

describe("CAPA AWSMachine stand-in (SPEC §1, §1.1)", () => {
  const plan = (a: KubeObject | undefined, owner?: KubeObject) =>
    planInfraMachine(CAPA_PROFILE, { infraMachine: a, ownerMachine: owner, nowMs: NOW_MS });
  const pausedMachine = machine({ annotations: paused });
  const cases: Array<[string, KubeObject | undefined, string]> = [
    ["gone: nothing", undefined, "none"],
    ["writes Paused from its own annotation", awsMachineOf("m-0"), "setConditions"],
    [
      "paused by its own annotation: nothing",
      infra({ annotations: paused }, {}, { conditions: [isPaused] }),
      "none",
    ],
    ["adds its finalizer on its first unpaused reconcile", infra({ finalizers: [] }), "addFinalizer"],
    ["provisions an AWSMachine without an instanceID", infra(), "createInstance"],
    ["waits for a Machine to own it before provisioning", infra({ ownerReferences: [] }), "none"],
    [
      "an instanceID set by the sync: reports provisioned without a new instance",
      infra({}, { instanceID: "i-0123456789abcdef0", providerID: PROVIDER_ID }),
      "setProvisioned",
    ],
    [
      "provisioned: nothing",
      infra({}, { instanceID: "i-0123456789abcdef0", providerID: PROVIDER_ID }, provisionedStatus),
      "none",
    ],
    [
      "deleting: terminates and removes its finalizer",
      infra({ deletionTimestamp: EARLIER }, { instanceID: "i-0123456789abcdef0" }),
      "terminate",
    ],
    [
      "deleting while paused: nothing",
      infra({ deletionTimestamp: EARLIER, annotations: paused }, {}, { conditions: [isPaused] }),
      "none",
    ],
  ];
  it.each(cases)("%s", (_name, a, kind) => {
    expect(plan(a, pausedMachine).kind).toBe(kind);
  });

  it("acts on an unpaused AWSMachine even when its Machine is paused (CAPA reads only its own annotation)", () => {
    expect(plan(infra(), pausedMachine)).toEqual({ kind: "createInstance", zone: "us-east-1a" });
  });
  it("terminates the instanceID's instance", () => {
    expect(plan(infra({ deletionTimestamp: EARLIER }, { instanceID: "i-0abc" }))).toEqual({
      kind: "terminate",
      instanceId: "i-0abc",
    });
  });
});
