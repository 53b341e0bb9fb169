/**
 * The MAO stand-in's pure planners pinned to SPEC §1 and §1.1: copy spec → status when empty and return;
 * `Paused` from status; finalizer and provisioning ("" → Provisioning → Running) only while active;
 * terminate on deletion of an active Machine; a deleting Machine without the finalizer is ignored; the
 * MachineSet scales to `replicas` while MAPI-authoritative, new Machines taking the template's authority.
 */
import { describe, expect, it } from "vitest";
import { FINALIZERS, MAPI_API_VERSION } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath } from "../../src/kube/object.js";
import {
  mapiMachineFromTemplate,
  planMapiMachine,
  planMapiMachineSet,
  scaleDownVictim,
} from "../../src/simulate/mao.js";
import { EARLIER, mapiMachineOf, mapiMachineSetOf, NOW_MS } from "./builders.js";

const pausedFalse = {
  type: "Paused",
  status: "False",
  reason: "AuthoritativeAPIMachineAPI",
  message: "The AuthoritativeAPI status is set to 'MachineAPI'",
  severity: "",
  lastTransitionTime: EARLIER,
};
const pausedTrue = (authority: string) => ({
  type: "Paused",
  status: "True",
  reason: "AuthoritativeAPINotMachineAPI",
  message: `The AuthoritativeAPI status is set to '${authority}'`,
  severity: "Info",
  lastTransitionTime: EARLIER,
});

const PROVIDER_ID = "aws:///us-east-1a/i-0123456789abcdef0";

/** A MAPI Machine with status authority, acknowledgement and MAO's finalizer as MAO leaves it. */
const active = (status: Record<string, unknown> = {}, meta: KubeObject["metadata"] = {}, spec = {}) =>
  mapiMachineOf("m-0", {
    meta: { finalizers: [FINALIZERS.mapiMachine], ...meta },
    spec,
    status: { authoritativeAPI: "MachineAPI", conditions: [pausedFalse], ...status },
  });

const plan = (machine: KubeObject | undefined, provisioningDelayMs = 0) =>
  planMapiMachine({ machine, nowMs: NOW_MS, provisioningDelayMs });

describe("MAO Machine stand-in (SPEC §1, §1.1)", () => {
  const cases: Array<[string, KubeObject | undefined, ReturnType<typeof plan>["kind"]]> = [
    ["a Machine that is gone: nothing", undefined, "none"],
    [
      "copies spec → status when status is empty, then returns",
      mapiMachineOf("m-0", { spec: { authoritativeAPI: "ClusterAPI" } }),
      "copyAuthority",
    ],
    [
      "writes Paused=False while status is MachineAPI",
      mapiMachineOf("m-0", { status: { authoritativeAPI: "MachineAPI" } }),
      "setConditions",
    ],
    [
      "writes Paused=True once status is Migrating",
      mapiMachineOf("m-0", { status: { authoritativeAPI: "Migrating", conditions: [pausedFalse] } }),
      "setConditions",
    ],
    [
      "paused (ClusterAPI) with Paused=True: no finalizer, no provisioning",
      mapiMachineOf("m-0", {
        status: { authoritativeAPI: "ClusterAPI", conditions: [pausedTrue("ClusterAPI")] },
      }),
      "none",
    ],
    [
      "adds machine.machine.openshift.io while active",
      mapiMachineOf("m-0", { status: { authoritativeAPI: "MachineAPI", conditions: [pausedFalse] } }),
      "addFinalizer",
    ],
    ['provisions: phase "" → Provisioning', active(), "startProvisioning"],
    [
      "provisions: Provisioning without providerID → create the instance",
      active({ phase: "Provisioning" }),
      "createInstance",
    ],
    [
      "provisions: Provisioning with a providerID → Running",
      active({ phase: "Provisioning", lastUpdated: EARLIER }, {}, { providerID: PROVIDER_ID }),
      "setRunning",
    ],
    [
      "a Machine handed back with a providerID goes Running without a new instance",
      active({}, {}, { providerID: PROVIDER_ID }),
      "setRunning",
    ],
    ["Running: nothing", active({ phase: "Running" }, {}, { providerID: PROVIDER_ID }), "none"],
    [
      "terminates on deletion of an active Machine",
      active({ phase: "Running" }, { deletionTimestamp: EARLIER }, { providerID: PROVIDER_ID }),
      "terminate",
    ],
    [
      "ignores a deleting Machine without its finalizer (the instance leaks, as with the real MAO)",
      active(
        { phase: "Running" },
        { deletionTimestamp: EARLIER, finalizers: [FINALIZERS.sync] },
        { providerID: PROVIDER_ID },
      ),
      "none",
    ],
    [
      "a deleting Machine under ClusterAPI is not MAO's: nothing, even with its finalizer",
      mapiMachineOf("m-0", {
        meta: { deletionTimestamp: EARLIER, finalizers: [FINALIZERS.mapiMachine] },
        spec: { providerID: PROVIDER_ID },
        status: { authoritativeAPI: "ClusterAPI", conditions: [pausedTrue("ClusterAPI")] },
      }),
      "none",
    ],
  ];
  it.each(cases)("%s", (_name, machine, kind) => {
    expect(plan(machine).kind).toBe(kind);
  });

  it("copies the spec authority, defaulting to MachineAPI", () => {
    const m = mapiMachineOf("m-0");
    delete m.spec?.authoritativeAPI;
    expect(plan(m)).toEqual({ kind: "copyAuthority", to: "MachineAPI" });
  });

  it("Paused=True keeps lastTransitionTime only while the status stays True", () => {
    const action = plan(
      mapiMachineOf("m-0", { status: { authoritativeAPI: "Migrating", conditions: [pausedFalse] } }),
    );
    if (action.kind !== "setConditions") throw new Error(action.kind);
    const paused = action.conditions.find((c) => c.type === "Paused");
    expect(paused).toMatchObject({ status: "True", reason: "AuthoritativeAPINotMachineAPI" });
    expect(paused?.lastTransitionTime).toBe("2026-11-30T10:00:00Z");
    const settled = mapiMachineOf("m-0", {
      status: { authoritativeAPI: "ClusterAPI", conditions: action.conditions },
    });
    const again = plan(settled);
    if (again.kind !== "setConditions") throw new Error(again.kind);
    expect(conditionOf({ status: { conditions: again.conditions } }, "Paused")?.lastTransitionTime).toBe(
      "2026-11-30T10:00:00Z",
    );
  });

  it("creates the instance in the providerSpec's zone", () => {
    expect(plan(active({ phase: "Provisioning" }))).toEqual({ kind: "createInstance", zone: "us-east-1a" });
  });

  it("paces Provisioning → Running by provisioningDelayMs from status.lastUpdated", () => {
    const m = active(
      { phase: "Provisioning", lastUpdated: "2026-11-30T09:59:59Z" },
      {},
      { providerID: PROVIDER_ID },
    );
    expect(plan(m, 5_000)).toEqual({ kind: "requeue", afterMs: 4_000 });
    expect(plan(m, 1_000).kind).toBe("setRunning");
  });

  it("Running names a node and the instance", () => {
    expect(plan(active({}, {}, { providerID: PROVIDER_ID }))).toMatchObject({
      kind: "setRunning",
      instanceId: "i-0123456789abcdef0",
    });
  });

  it("terminates the providerID's instance; a never-provisioned Machine just loses the finalizer", () => {
    expect(plan(active({}, { deletionTimestamp: EARLIER }, { providerID: PROVIDER_ID }))).toEqual({
      kind: "terminate",
      instanceId: "i-0123456789abcdef0",
    });
    expect(plan(active({}, { deletionTimestamp: EARLIER }))).toEqual({
      kind: "terminate",
      instanceId: undefined,
    });
  });
});

describe("MAO MachineSet stand-in (SPEC §1, §1.1)", () => {
  const set = (replicas: number, status: Record<string, unknown> = {}) =>
    mapiMachineSetOf(replicas, {
      meta: { uid: "set-uid" },
      status: { authoritativeAPI: "MachineAPI", conditions: [pausedFalse], ...status },
    });
  const child = (name: string, meta: KubeObject["metadata"] = {}) =>
    mapiMachineOf(name, { meta: { creationTimestamp: EARLIER, uid: `${name}-uid`, ...meta } });
  const planSet = (
    machineSet: KubeObject | undefined,
    machines: KubeObject[],
    pending: { creates?: string[]; deletes?: string[] } = {},
  ) =>
    planMapiMachineSet({
      machineSet,
      machines,
      pendingCreates: pending.creates ?? [],
      pendingDeletes: pending.deletes ?? [],
      nowMs: NOW_MS,
    });

  it("copies spec → status when empty", () => {
    expect(planSet(mapiMachineSetOf(1), [])).toEqual({ kind: "copyAuthority", to: "MachineAPI" });
  });

  it("writes Paused from status", () => {
    expect(planSet(mapiMachineSetOf(1, { status: { authoritativeAPI: "MachineAPI" } }), []).kind).toBe(
      "setConditions",
    );
  });

  it("scales up to replicas while MAPI-authoritative", () => {
    expect(planSet(set(2), [child("a")]).kind).toBe("createMachine");
    expect(planSet(set(1), [child("a")]).kind).not.toMatch(/Machine$/);
  });

  it("counts created Machines the cache does not show yet, and not the ones it just deleted", () => {
    expect(planSet(set(2), [child("a")], { creates: ["b"] }).kind).toBe("none");
    expect(planSet(set(1), [child("a"), child("b")], { deletes: ["b"] }).kind).not.toMatch(/Machine$/);
    expect(planSet(set(1), [child("a"), child("b", { deletionTimestamp: EARLIER })]).kind).not.toMatch(
      /Machine$/,
    );
  });

  it("reports replica counts once it has nothing to create or delete (Running = ready and available)", () => {
    const running = mapiMachineOf("b", { meta: { uid: "b-uid" }, status: { phase: "Running" } });
    const status = { replicas: 2, readyReplicas: 1, availableReplicas: 1, fullyLabeledReplicas: 2 };
    expect(planSet(set(2), [child("a"), running])).toEqual({ kind: "setReplicaStatus", status });
    expect(planSet(set(2, status), [child("a"), running]).kind).toBe("none");
    expect(planSet(set(3), [child("a"), running]).kind).toBe("createMachine");
  });

  it("scales down, delete-marked Machines first", () => {
    const marked = child("a", { annotations: { "machine.openshift.io/delete-machine": "true" } });
    const newer = child("b", { creationTimestamp: "2026-11-30T09:50:00Z" });
    const action = planSet(set(1), [marked, newer]);
    expect(action.kind).toBe("deleteMachine");
    if (action.kind === "deleteMachine") expect(action.machine.metadata?.name).toBe("a");
    expect(scaleDownVictim([child("a"), newer])?.metadata?.name).toBe("b");
  });

  it("does nothing while not MAPI-authoritative", () => {
    const s = mapiMachineSetOf(3, {
      meta: { uid: "set-uid" },
      status: { authoritativeAPI: "ClusterAPI", conditions: [pausedTrue("ClusterAPI")] },
    });
    expect(planSet(s, [])).toEqual({ kind: "none", why: "paused: status.authoritativeAPI is ClusterAPI" });
  });

  it("new Machines take spec.template.spec.authoritativeAPI and are controlled by the set", () => {
    const s = set(1);
    (getPath(s, ["spec", "template", "spec"]) as Record<string, unknown>).authoritativeAPI = "ClusterAPI";
    const m = mapiMachineFromTemplate(s);
    expect(m.spec?.authoritativeAPI).toBe("ClusterAPI");
    expect(m.metadata?.generateName).toBe(`${s.metadata?.name}-`);
    expect(m.metadata?.labels?.["machine.openshift.io/cluster-api-machineset"]).toBe(s.metadata?.name);
    expect(m.metadata?.ownerReferences).toEqual([
      {
        apiVersion: MAPI_API_VERSION,
        kind: "MachineSet",
        name: s.metadata?.name,
        uid: "set-uid",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });
});
