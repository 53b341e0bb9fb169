import { describe, expect, it } from "vitest";
import {
  ANNOTATIONS,
  CAPI_API_VERSION,
  FINALIZERS,
  INFRA_API_VERSION,
  LABELS,
  MAPI_API_VERSION,
} from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { annotationsOf, conditionOf, finalizersOf, getPath, labelsOf } from "../../src/kube/object.js";
import { refusedWriteCondition, updateRefused } from "../../src/sync/condition.js";
import { CREATED_FOR_GENERATION } from "../../src/sync/desired.js";
import { planMachineSetSync, planMachineSync, type SyncPlan } from "../../src/sync/plan.js";
import type { SyncConverter } from "../../src/sync/snapshot.js";
import type { SyncWrite } from "../../src/sync/writes.js";
import {
  awsMachine,
  awsMachineTemplate,
  CAPI_NS,
  capiCluster,
  capiMachine,
  capiMachineSet,
  condition,
  deps,
  fakeConverter,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  NOW,
  ownerRef,
  providerSpec,
  templateNameFor,
  World,
} from "./builders.js";

const kinds = (plan: SyncPlan) =>
  plan.writes.map((w) => `${w.kind} ${"target" in w ? w.target.kind : w.object.kind}`);
const synchronizedOf = (o: KubeObject | undefined) => conditionOf(o, "Synchronized");

/** Plans and executes until a plan makes no write (or `max` rounds), returning every plan. */
const settleMachine = (world: World, name = "m", max = 8): SyncPlan[] => {
  const plans: SyncPlan[] = [];
  for (let i = 0; i < max; i++) {
    const plan = planMachineSync(world.machineSnapshot(name), deps(), NOW);
    plans.push(plan);
    if (plan.writes.length === 0) return plans;
    world.execute(plan.writes);
  }
  throw new Error(`no fixed point after ${max} rounds: ${JSON.stringify(plans.at(-1)?.writes)}`);
};
const settleMachineSet = (world: World, name = "workers", max = 8): SyncPlan[] => {
  const plans: SyncPlan[] = [];
  for (let i = 0; i < max; i++) {
    const plan = planMachineSetSync(world.machineSetSnapshot(name), deps(), NOW);
    plans.push(plan);
    if (plan.writes.length === 0) return plans;
    world.execute(plan.writes);
  }
  throw new Error(`no fixed point after ${max} rounds: ${JSON.stringify(plans.at(-1)?.writes)}`);
};

const mapiOf = (w: World, name = "m") => w.find(MAPI_API_VERSION, "Machine", MAPI_NS, name);
const capiOf = (w: World, name = "m") => w.find(CAPI_API_VERSION, "Machine", CAPI_NS, name);
const infraOf = (w: World, name = "m") => w.find(INFRA_API_VERSION, "AWSMachine", CAPI_NS, name);

const base = () => [infrastructure(), capiCluster()];

describe("§4.3 MAPI → CAPI Machine", () => {
  it("creates the CAPI Machine and InfraMachine paused, marked and with the sync finalizer; MAPI gets the finalizer by JSON Patch", () => {
    const world = new World([...base(), mapiMachine("m")]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(kinds(plan)).toEqual([
      "addFinalizer Machine",
      "create Machine",
      "create AWSMachine",
      "applyStatus Machine",
    ]);
    const creates = plan.writes.filter(
      (w): w is Extract<SyncWrite, { kind: "create" }> => w.kind === "create",
    );
    for (const { object } of creates) {
      expect(annotationsOf(object)[ANNOTATIONS.paused]).toBe("");
      expect(annotationsOf(object)[ANNOTATIONS.pausedBy]).toBe("machine-api-migration");
      expect(finalizersOf(object)).toEqual([FINALIZERS.sync]);
    }
    const add = plan.writes[0] as Extract<SyncWrite, { kind: "addFinalizer" }>;
    expect(add.patch[0]).toEqual({ op: "test", path: "/metadata/uid", value: mapiOf(world)?.metadata?.uid });
    expect(plan.condition).toMatchObject({
      status: "True",
      reason: "ResourceSynchronized",
      message: "Successfully synchronized MAPI Machine to CAPI",
    });
    expect(plan.synchronizedGeneration).toBe(1);
  });

  it("reaches a fixed point: the second round mirrors status, then nothing; owner references only as created (none on an InfraMachine created beside its Machine)", () => {
    const world = new World([...base(), mapiMachine("m")]);
    const plans = settleMachine(world);
    expect(plans.at(-1)?.writes).toEqual([]);
    // Owner references are set at creation and never afterwards (§4.6): the CAPI Machine's uid did not exist
    // yet when its InfraMachine was created, and Cluster API's Machine controller adopts it once active.
    expect(infraOf(world)?.metadata?.ownerReferences).toBeUndefined();
    for (const plan of plans.slice(1))
      for (const w of plan.writes)
        if (w.kind === "apply") expect(w.body.metadata?.ownerReferences).toBeUndefined();
    expect(getPath(capiOf(world), ["status", "phase"])).toBe("Running");
    // The converter produced a Paused condition; status mirroring never writes that type.
    expect(conditionOf(capiOf(world), "Paused")).toBeUndefined();
    expect(synchronizedOf(mapiOf(world))?.status).toBe("True");
    expect(getPath(mapiOf(world), ["status", "synchronizedGeneration"])).toBe(1);
  });

  it("standalone Machine: CAPI Machine owned by the Cluster (non-controller); set member: by the CAPI MachineSet twin (controller) with set-name", () => {
    const standalone = new World([...base(), mapiMachine("m")]);
    settleMachine(standalone);
    expect(capiOf(standalone)?.metadata?.ownerReferences).toEqual([
      {
        apiVersion: CAPI_API_VERSION,
        kind: "Cluster",
        name: "ci-abc12",
        uid: "cluster-uid",
        blockOwnerDeletion: true,
      },
    ]);
    const mapiSet = mapiMachineSet("workers");
    const capiSet = capiMachineSet("workers");
    const member = new World([
      ...base(),
      mapiSet,
      capiSet,
      mapiMachine("m", { meta: { ownerReferences: [ownerRef(mapiSet)] } }),
    ]);
    settleMachine(member);
    expect(capiOf(member)?.metadata?.ownerReferences).toEqual([ownerRef(capiSet)]);
    expect(labelsOf(capiOf(member))[LABELS.capiSetName]).toBe("workers");
  });

  it("desired ⊆ live: fields only the server or other controllers set never cause a write", () => {
    const world = new World([...base(), mapiMachine("m")]);
    settleMachine(world);
    world.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, "m", (o) => {
      o.metadata = { ...o.metadata, labels: { ...labelsOf(o), "user.example.com/team": "a" } };
      o.spec = {
        ...o.spec,
        bootstrap: { dataSecretName: "worker-user-data" },
        deletion: { nodeDrainTimeoutSeconds: 0 },
      };
    });
    world.mutate(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m", (o) => {
      o.spec = { ...o.spec, cloudInit: {}, instanceMetadataOptions: { httpEndpoint: "enabled" } };
    });
    expect(planMachineSync(world.machineSnapshot("m"), deps(), NOW).writes).toEqual([]);
  });

  it("desired ⊆ live: a converter field that differs is applied with server-side apply as machine-api-migration-sync", () => {
    const world = new World([...base(), mapiMachine("m")]);
    settleMachine(world);
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.spec = { ...o.spec, providerID: "aws:///us-east-1a/i-0abc" };
      o.metadata = { ...o.metadata, generation: 2 };
    });
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    const apply = plan.writes.find((w) => w.kind === "apply" && w.target.kind === "Machine");
    expect(apply).toMatchObject({
      kind: "apply",
      fieldManager: "machine-api-migration-sync",
      changedPaths: ["spec.providerID"],
      body: { metadata: { resourceVersion: capiOf(world)?.metadata?.resourceVersion } },
    });
  });

  it("I5: under MachineAPI no write touches the MAPI spec; the only MAPI writes are finalizer, delete mark and status", () => {
    const world = new World([...base(), mapiMachine("m")]);
    const plans = settleMachine(world);
    const mapiUid = mapiOf(world)?.metadata?.uid;
    const mapiWrites = plans
      .flatMap((p) => p.writes)
      .filter((w) => "target" in w && w.target.uid === mapiUid);
    expect(new Set(mapiWrites.map((w) => w.kind))).toEqual(new Set(["addFinalizer", "applyStatus"]));
  });

  it("§4.4 delete marks: a mark set on the paused CAPI copy is copied to the MAPI Machine as an annotation", () => {
    const world = new World([...base(), mapiMachine("m")]);
    settleMachine(world);
    world.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, "m", (o) => {
      o.metadata = {
        ...o.metadata,
        annotations: { ...annotationsOf(o), "cluster.x-k8s.io/delete-machine": "true" },
      };
    });
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.writes[0]).toMatchObject({
      kind: "annotate",
      why: "deleteMark",
      target: { kind: "Machine", namespace: MAPI_NS },
      annotations: { "machine.openshift.io/delete-machine": "true" },
    });
    world.execute(plan.writes);
    expect(settleMachine(world).at(-1)?.writes).toEqual([]);
  });

  it("§4.5 conversion failure → Synchronized=False with every field error, generation unchanged, backoff", () => {
    const mapi = mapiMachine("m", { spec: { providerSpec: providerSpec("m6i.xlarge", { deviceIndex: 1 }) } });
    const world = new World([...base(), mapi]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.condition).toMatchObject({
      status: "False",
      reason: "FailedToConvertMAPIMachineToCAPI",
      message: "spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
    });
    expect(plan.synchronizedGeneration).toBeUndefined();
    expect(plan.requeue).toBe("backoff");
    expect(kinds(plan)).toEqual(["addFinalizer Machine", "applyStatus Machine"]);
    const status = plan.writes.at(-1) as Extract<SyncWrite, { kind: "applyStatus" }>;
    expect(status.status.synchronizedGeneration).toBeUndefined();
  });

  it("§4.5 conversion warnings → ConversionWarning Event while the condition can still be True", () => {
    const mapi = mapiMachine("m", {
      spec: {
        providerSpec: providerSpec("m6i.xlarge", { warn: "missing ebs configuration for block device" }),
      },
    });
    const world = new World([...base(), mapi]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.events).toContainEqual({
      type: "Warning",
      reason: "ConversionWarning",
      message: "missing ebs configuration for block device",
    });
    expect(plan.condition?.status).toBe("True");
    world.execute(plan.writes);
    settleMachine(world);
    // A later reconcile that only mirrors status does not repeat the warning.
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.status = { ...o.status, phase: "Provisioned" };
    });
    const later = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(later.writes.length).toBeGreaterThan(0);
    expect(later.events).toEqual([]);
  });

  it("§4.5 the API server refusing the sync's write → FailedToUpdateCAPIMachine with the server's message", () => {
    expect(
      updateRefused(
        "Machine",
        "CAPI",
        { kind: "Machine", namespace: CAPI_NS, name: "m" },
        "admission webhook denied",
      ),
    ).toMatchObject({
      status: "False",
      reason: "FailedToUpdateCAPIMachine",
      message: "writing Machine openshift-cluster-api/m was refused: admission webhook denied",
    });
  });

  it("§4.5 a refused plan write maps to the side and kind of its target", () => {
    const world = new World([...base(), mapiMachine("m")]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    const [addMapiFinalizer, createCapi, createInfra] = plan.writes;
    expect(refusedWriteCondition("Machine", addMapiFinalizer as SyncWrite, "denied").reason).toBe(
      "FailedToUpdateMAPIMachine",
    );
    expect(refusedWriteCondition("Machine", createCapi as SyncWrite, "denied").reason).toBe(
      "FailedToUpdateCAPIMachine",
    );
    expect(refusedWriteCondition("Machine", createInfra as SyncWrite, "denied")).toMatchObject({
      reason: "FailedToUpdateCAPIMachine",
      message: "writing AWSMachine openshift-cluster-api/m was refused: denied",
    });
  });

  it("§4.3 Machines owned by a ControlPlaneMachineSet are unsupported: Synchronized=False, no requeue, no write but the condition", () => {
    const cpms = {
      apiVersion: "machine.openshift.io/v1",
      kind: "ControlPlaneMachineSet",
      name: "cluster",
      uid: "cpms",
      controller: true,
    };
    const world = new World([...base(), mapiMachine("m", { meta: { ownerReferences: [cpms] } })]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.condition).toMatchObject({ status: "False", reason: "UnsupportedOwnerReference" });
    expect(plan.requeue).toBeUndefined();
    expect(kinds(plan)).toEqual(["applyStatus Machine"]);
  });

  it("the Synchronized condition is written only when it changes (quiet reconcile → zero writes)", () => {
    const world = new World([...base(), mapiMachine("m")]);
    settleMachine(world);
    const before = synchronizedOf(mapiOf(world));
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), new Date("2026-12-01T00:00:00Z"));
    expect(plan.writes).toEqual([]);
    expect(synchronizedOf(mapiOf(world))).toEqual(before);
  });
});

describe("§4.3 guarded InfraMachine replacement", () => {
  /** A settled world, then the MAPI providerSpec changes to m6i.2xlarge at generation 2. */
  const changed = (adjustInfra?: (o: KubeObject) => void) => {
    const world = new World([...base(), mapiMachine("m")]);
    settleMachine(world);
    world.mutate(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m", (o) => {
      o.status = { ...o.status, conditions: [condition("Paused", "True")] };
      o.metadata = { ...o.metadata, finalizers: [...finalizersOf(o), FINALIZERS.awsMachine] };
      adjustInfra?.(o);
    });
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.spec = { ...o.spec, providerSpec: providerSpec("m6i.2xlarge") };
      o.metadata = { ...o.metadata, generation: 2 };
    });
    return world;
  };

  it("replaces: delete with uid+resourceVersion preconditions, then finalizers from that uid only, then a new paused InfraMachine", () => {
    const world = changed();
    const old = infraOf(world) as KubeObject;
    const first = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    const del = first.writes.find((w) => w.kind === "delete");
    expect(del).toEqual({
      kind: "delete",
      target: expect.objectContaining({ kind: "AWSMachine", uid: old.metadata?.uid }),
      preconditions: { uid: old.metadata?.uid, resourceVersion: old.metadata?.resourceVersion },
    });
    expect(first.condition).toBeUndefined();
    world.execute(first.writes);
    const second = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    const release = second.writes.find((w) => w.kind === "removeFinalizer");
    expect(release).toMatchObject({
      target: { uid: old.metadata?.uid },
      finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine],
    });
    expect((release as Extract<SyncWrite, { kind: "removeFinalizer" }>).patch[0]).toEqual({
      op: "test",
      path: "/metadata/uid",
      value: old.metadata?.uid,
    });
    world.execute(second.writes);
    settleMachine(world);
    const fresh = infraOf(world) as KubeObject;
    expect(fresh.metadata?.uid).not.toBe(old.metadata?.uid);
    expect(fresh.spec?.instanceType).toBe("m6i.2xlarge");
    expect(annotationsOf(fresh)[ANNOTATIONS.pausedBy]).toBe("machine-api-migration");
    expect(annotationsOf(fresh)[CREATED_FOR_GENERATION]).toBe("2");
    expect(synchronizedOf(mapiOf(world))).toMatchObject({ status: "True" });
  });

  it("§4.6: a deleting paused InfraMachine is released only once a live read shows its storage is not going, and StorageBeingRemoved is reported while it is", () => {
    const world = changed();
    world.execute(planMachineSync(world.machineSnapshot("m"), deps(), NOW).writes);
    world.storageBeingRemoved = undefined;
    const unread = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(unread.writes.filter((w) => w.kind === "removeFinalizer")).toEqual([]);
    expect(unread.needsStorageCheck).toBe(true);
    world.storageBeingRemoved = true;
    const going = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(going.writes.filter((w) => w.kind === "removeFinalizer")).toEqual([]);
    // Reported, not only waited on: the storage may go before the CAPI Machine is seen deleting — its
    // InfraMachine's CRD alone, or a namespace controller that reaches the InfraMachines first.
    expect(going.condition).toMatchObject({ status: "False", reason: "StorageBeingRemoved" });
    expect(going.writes.map((w) => w.kind)).toEqual(["applyStatus"]);
    world.storageBeingRemoved = false;
    const kept = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(kept.writes.some((w) => w.kind === "removeFinalizer")).toBe(true);
  });

  const refusals: [string, (o: KubeObject) => void][] = [
    [
      "pause without the product's marker (an admin's pause)",
      (o) => {
        delete o.metadata?.annotations?.[ANNOTATIONS.pausedBy];
      },
    ],
    [
      "marked needs-attention",
      (o) => {
        o.metadata = {
          ...o.metadata,
          annotations: { ...annotationsOf(o), [ANNOTATIONS.needsAttention]: "x" },
        };
      },
    ],
    [
      "not reporting Paused=True",
      (o) => {
        o.status = { conditions: [condition("Paused", "False")] };
      },
    ],
    [
      "already replaced for this MAPI generation",
      (o) => {
        o.metadata = { ...o.metadata, annotations: { ...annotationsOf(o), [CREATED_FOR_GENERATION]: "2" } };
      },
    ],
  ];
  it.each(refusals)(
    "refuses when the InfraMachine is %s → InfraMachineSpecMismatch naming the fields, nothing deleted",
    (_n, adjust) => {
      const world = changed(adjust);
      const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
      expect(plan.writes.some((w) => w.kind === "delete" || w.kind === "removeFinalizer")).toBe(false);
      if (plan.branch.kind === "mapiToCapi") {
        expect(plan.condition).toMatchObject({
          status: "False",
          reason: "InfraMachineSpecMismatch",
          message: expect.stringContaining("spec.instanceType"),
        });
      } else {
        // A needs-attention InfraMachine is the product's hands-off case (§4.2).
        expect(plan.condition?.reason).toBe("UnpausedTwinDetected");
      }
    },
  );

  it("refuses while Migrating (final sync): only MachineAPI may replace", () => {
    const world = changed();
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.status = {
        ...o.status,
        authoritativeAPI: "Migrating",
        synchronizedAPI: "MachineAPI",
        conditions: [condition("Paused", "True", "2026-11-30T09:30:00Z")],
      };
      o.metadata = {
        ...o.metadata,
        annotations: { [ANNOTATIONS.pausedFalseAt]: JSON.stringify({ mapi: "2026-11-30T09:00:00Z" }) },
      };
    });
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.branch.kind).toBe("finalSync");
    expect(plan.writes.some((w) => w.kind === "delete")).toBe(false);
    expect(plan.condition?.reason).toBe("InfraMachineSpecMismatch");
  });

  it("at most one replacement per generation: a new InfraMachine that still differs is reported, not deleted again", () => {
    // A defaulting webhook that changes a converter field makes the fresh object differ again.
    const world = changed();
    const rounds: SyncPlan[] = [];
    for (let i = 0; i < 6; i++) {
      const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
      rounds.push(plan);
      world.execute(plan.writes);
      const infra = infraOf(world);
      if (infra && infra.spec?.instanceType === "m6i.2xlarge") {
        world.mutate(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m", (o) => {
          o.spec = { ...o.spec, ami: { id: "ami-defaulted" } };
          o.status = { conditions: [condition("Paused", "True")] };
        });
      }
    }
    expect(rounds.flatMap((p) => p.writes).filter((w) => w.kind === "delete")).toHaveLength(1);
    expect(rounds.at(-1)?.condition).toMatchObject({
      reason: "InfraMachineSpecMismatch",
      message: expect.stringContaining("spec.ami.id"),
    });
  });
});

describe("§4.2 unpaused twin detected", () => {
  it("pauses Machine and InfraMachine with the marker, marks needs-attention, Warning Event with the instance, never deletes", () => {
    const capi = capiMachine("m", {
      meta: { annotations: {}, finalizers: [FINALIZERS.capiMachine] },
      spec: { providerID: "aws:///us-east-1a/i-0user" },
    });
    const infra = awsMachine("m", { meta: { annotations: {}, finalizers: [FINALIZERS.awsMachine] } });
    const world = new World([...base(), mapiMachine("m"), capi, infra]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(kinds(plan)).toEqual(["pause Machine", "pause AWSMachine", "applyStatus Machine"]);
    expect(plan.writes[0]).toMatchObject({
      annotations: {
        [ANNOTATIONS.paused]: "",
        [ANNOTATIONS.pausedBy]: "machine-api-migration",
        [ANNOTATIONS.needsAttention]: "UnpausedTwinDetected",
      },
    });
    expect(plan.condition).toMatchObject({ status: "False", reason: "UnpausedTwinDetected" });
    expect(plan.events[0]).toMatchObject({
      type: "Warning",
      reason: "UnpausedTwinDetected",
      message: expect.stringContaining("i-0user"),
    });
    // Decision 80: the MachineAPI authority the writes rest on is confirmed live first (uid included).
    expect(plan.confirmAuthority).toMatchObject({
      kind: "Machine",
      name: "m",
      namespace: MAPI_NS,
      authority: "MachineAPI",
    });
    expect(plan.confirmAuthority?.uid).toBe(world.machineSnapshot("m").mapi?.metadata?.uid);
    world.execute(plan.writes);
    const again = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(again.writes).toEqual([]);
    expect(again.events).toEqual([]);
  });

  it("deleting the MAPI Machine never deletes or releases the needs-attention twin", () => {
    const capi = capiMachine("m", { meta: { annotations: {}, finalizers: [FINALIZERS.capiMachine] } });
    const world = new World([
      ...base(),
      mapiMachine("m", { meta: { finalizers: [FINALIZERS.sync] } }),
      capi,
      awsMachine("m", { meta: { annotations: {} } }),
    ]);
    world.execute(planMachineSync(world.machineSnapshot("m"), deps(), NOW).writes);
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.metadata = { ...o.metadata, deletionTimestamp: NOW.toISOString() };
    });
    const releases: ReturnType<typeof planMachineSync>[] = [];
    for (let i = 0; i < 4; i++) {
      const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
      if (plan.writes.length > 0) releases.push(plan);
      world.execute(plan.writes);
    }
    // Decision 167: each release rests on MachineAPI as read, confirmed live before it is written.
    expect(releases.length).toBeGreaterThan(0);
    for (const plan of releases) expect(plan.confirmAuthority).toMatchObject({ authority: "MachineAPI" });
    expect(mapiOf(world)).toBeUndefined();
    expect(capiOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
    expect(finalizersOf(capiOf(world))).toEqual([FINALIZERS.capiMachine]);
    expect(infraOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
  });
});

describe("§4.4 CAPI → MAPI Machine", () => {
  const clusterApiWorld = (capiOpts = {}) => {
    const mapi = mapiMachine("m", {
      authority: "ClusterAPI",
      meta: { finalizers: [FINALIZERS.sync], labels: { "user.example.com/keep": "yes" } },
      status: { conditions: [condition("Synchronized", "True"), condition("Paused", "True")] },
    });
    const capi = capiMachine("m", {
      meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] },
      status: { phase: "Running" },
      ...capiOpts,
    });
    const infra = awsMachine("m", {
      meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] },
      spec: { instanceType: "m6i.4xlarge" },
    });
    return new World([...base(), mapi, capi, infra]);
  };

  it("applies converted content to MAPI without authoritativeAPI, selector or finalizers; generation of the CAPI Machine", () => {
    const world = clusterApiWorld();
    world.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, "m", (o) => {
      o.metadata = { ...o.metadata, generation: 7 };
    });
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    const apply = plan.writes.find((w) => w.kind === "apply") as Extract<SyncWrite, { kind: "apply" }>;
    expect(apply.target.kind).toBe("Machine");
    expect(apply.target.namespace).toBe(MAPI_NS);
    expect(apply.body.spec?.authoritativeAPI).toBeUndefined();
    expect(apply.body.metadata?.finalizers).toBeUndefined();
    expect(getPath(apply.body, ["spec", "providerSpec", "value", "instanceType"])).toBe("m6i.4xlarge");
    expect(plan.condition).toMatchObject({
      status: "True",
      message: "Successfully synchronized CAPI Machine to MAPI",
    });
    expect(plan.synchronizedGeneration).toBe(7);
    world.execute(plan.writes);
    const mapi = mapiOf(world);
    expect(getPath(mapi, ["spec", "authoritativeAPI"])).toBe("ClusterAPI");
    expect(labelsOf(mapi)["user.example.com/keep"]).toBe("yes");
    expect(settleMachine(world).at(-1)?.writes).toEqual([]);
  });

  it("I5: under ClusterAPI the active CAPI side gets no spec write — only a delete mark copied from MAPI", () => {
    const world = clusterApiWorld();
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.metadata = { ...o.metadata, annotations: { "machine.openshift.io/delete-machine": "2026-11-30" } };
    });
    const plans = settleMachine(world);
    const capiUid = capiOf(world)?.metadata?.uid;
    const infraUid = infraOf(world)?.metadata?.uid;
    const active = plans
      .flatMap((p) => p.writes)
      .filter((w) => "target" in w && (w.target.uid === capiUid || w.target.uid === infraUid));
    expect(active.map((w) => w.kind)).toEqual(["annotate"]);
    expect(annotationsOf(capiOf(world))["cluster.x-k8s.io/delete-machine"]).toBe("2026-11-30");
  });

  it("a view of the CAPI Machine older than the MAPI copy's synchronizedGeneration writes only once confirmed live (decision 163)", () => {
    // A new leader's lagging view of CAPI Machines: mirrored as it stands, it would put the MAPI Machine's spec
    // back (here its providerID) and ask for a synchronizedGeneration lower than the one recorded, which the
    // CRD's transition rule refuses — each refusal a Warning Event on a Machine in sync.
    const world = clusterApiWorld();
    settleMachine(world);
    const before = structuredClone(capiOf(world) as KubeObject);
    world.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, "m", (o) => {
      o.spec = { ...o.spec, providerID: "aws:///us-east-1a/i-0abc" };
      o.metadata = { ...o.metadata, generation: 2 };
    });
    settleMachine(world);
    expect(getPath(mapiOf(world), ["status", "synchronizedGeneration"])).toBe(2);
    const stale = planMachineSync({ ...world.machineSnapshot("m"), capi: before }, deps(), NOW);
    expect(stale.writes.length).toBeGreaterThan(0);
    expect(stale.confirmCurrent).toEqual({
      apiVersion: CAPI_API_VERSION,
      kind: "Machine",
      namespace: CAPI_NS,
      name: "m",
      uid: before.metadata?.uid,
      generation: 1,
    });
    // A view at the generation the MAPI copy records, or later, is written from without a live read.
    expect(planMachineSync(world.machineSnapshot("m"), deps(), NOW).confirmCurrent).toBeUndefined();
    world.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, "m", (o) => {
      o.metadata = { ...o.metadata, generation: 3 };
    });
    const newer = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(newer.writes.length).toBeGreaterThan(0);
    expect(newer.confirmCurrent).toBeUndefined();
  });

  it("mirrors CAPI status into MAPI status and never touches MAPI Paused", () => {
    const world = clusterApiWorld();
    settleMachine(world);
    expect(getPath(mapiOf(world), ["status", "phase"])).toBe("Running");
    expect(conditionOf(mapiOf(world), "Paused")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-11-30T09:00:00Z",
    });
  });
});

describe("§4.2 other Machine branches", () => {
  it("mirrorCapiOnlyMachine: the MAPI mirror gets spec.authoritativeAPI ClusterAPI and a controller ownerReference to the MAPI MachineSet", () => {
    const mapiSet = mapiMachineSet("workers", { authority: "ClusterAPI" });
    const capiSet = capiMachineSet("workers", { meta: { annotations: {} } });
    const capi = capiMachine("workers-x", {
      meta: { annotations: {}, finalizers: [], ownerReferences: [ownerRef(capiSet)] },
    });
    const world = new World([
      ...base(),
      mapiSet,
      capiSet,
      capi,
      awsMachine("workers-x", { meta: { annotations: {}, finalizers: [] } }),
    ]);
    const plan = planMachineSync(world.machineSnapshot("workers-x"), deps(), NOW);
    expect(plan.branch.kind).toBe("mirrorCapiOnlyMachine");
    // The CAPI side is held by our finalizer before the mirror exists (it must never vanish unseen).
    expect(kinds(plan)).toEqual(["addFinalizer Machine", "addFinalizer AWSMachine", "create Machine"]);
    const created = (plan.writes[2] as Extract<SyncWrite, { kind: "create" }>).object;
    expect(created.metadata?.namespace).toBe(MAPI_NS);
    expect(created.spec?.authoritativeAPI).toBe("ClusterAPI");
    expect(created.metadata?.ownerReferences).toEqual([ownerRef(mapiSet)]);
    world.execute(plan.writes);
    // The CAPI Machine is deleted before the mirror was ever synchronized: deletion, never a new twin.
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "workers-x", (o) => {
      o.status = { authoritativeAPI: "ClusterAPI", synchronizedAPI: "ClusterAPI" };
    });
    world.mutate(CAPI_API_VERSION, "Machine", CAPI_NS, "workers-x", (o) => {
      o.metadata = { ...o.metadata, deletionTimestamp: NOW.toISOString() };
    });
    const next = planMachineSync(world.machineSnapshot("workers-x"), deps(), NOW);
    expect(next.branch).toEqual({ kind: "deleting", authority: "ClusterAPI" });
    expect(kinds(next)).toEqual(["delete Machine"]);
    // Decision 167: a deletion step rests on the MAPI copy's authority as read; the shell confirms it live.
    expect(next.confirmAuthority).toMatchObject({
      kind: "Machine",
      name: "workers-x",
      namespace: MAPI_NS,
      authority: "ClusterAPI",
      uid: mapiOf(world, "workers-x")?.metadata?.uid,
    });
  });

  it("createBornClusterAPITwin: the twin of an object born ClusterAPI is created unpaused", () => {
    const world = new World([...base(), mapiMachine("m", { authority: "ClusterAPI" })]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.branch.kind).toBe("createBornClusterAPITwin");
    const creates = plan.writes.filter(
      (w): w is Extract<SyncWrite, { kind: "create" }> => w.kind === "create",
    );
    expect(creates.map((c) => c.object.kind)).toEqual(["Machine", "AWSMachine"]);
    for (const c of creates) expect(annotationsOf(c.object)[ANNOTATIONS.paused]).toBeUndefined();
    world.execute(plan.writes);
    // From now on the CAPI twin exists: CAPI → MAPI.
    expect(planMachineSync(world.machineSnapshot("m"), deps(), NOW).branch.kind).toBe("capiToMapi");
  });

  it("propagateDeletionOfAuthoritative: the MAPI mirror is deleted (never recreated) once storage is known to stay", () => {
    const mapi = mapiMachine("m", {
      authority: "ClusterAPI",
      status: { conditions: [condition("Synchronized", "True")] },
    });
    const world = new World([...base(), mapi]);
    world.storageBeingRemoved = undefined;
    const unchecked = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(unchecked).toMatchObject({ writes: [], needsStorageCheck: true });
    world.storageBeingRemoved = false;
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.writes).toEqual([
      {
        kind: "delete",
        target: expect.objectContaining({ kind: "Machine", namespace: MAPI_NS }),
        preconditions: expect.any(Object),
      },
    ]);
    // The shell confirms the authoritative twin is really gone (live GET) before deleting the mirror.
    expect(plan.confirmAbsent).toEqual({
      apiVersion: CAPI_API_VERSION,
      kind: "Machine",
      namespace: CAPI_NS,
      name: "m",
    });
  });

  it("a failing converter for a CAPI-only Machine is reported by Event (no MAPI object to hold a condition)", () => {
    const failing: SyncConverter = {
      ...fakeConverter(),
      capiMachineToMapi: () => ({
        ok: false,
        errors: [{ path: "spec.version", value: "1.30", message: "version is not supported" }],
      }),
    };
    const mapiSet = mapiMachineSet("workers", { authority: "ClusterAPI" });
    const capiSet = capiMachineSet("workers", { meta: { annotations: {} } });
    const capi = capiMachine("workers-x", {
      meta: { annotations: {}, finalizers: [], ownerReferences: [ownerRef(capiSet)] },
    });
    const world = new World([...base(), mapiSet, capiSet, capi, awsMachine("workers-x")]);
    const plan = planMachineSync(world.machineSnapshot("workers-x"), deps(failing), NOW);
    expect(plan.writes).toEqual([]);
    expect(plan.requeue).toBe("backoff");
    expect(plan.events[0]).toMatchObject({
      reason: "FailedToConvertCAPIMachineToMAPI",
      message: 'spec.version: Invalid value: "1.30": version is not supported',
    });
  });
});

describe("§4.3 MAPI → CAPI MachineSet", () => {
  const tplOf = (w: World, name: string) => w.find(INFRA_API_VERSION, "AWSMachineTemplate", CAPI_NS, name);
  const capiSetOf = (w: World) => w.find(CAPI_API_VERSION, "MachineSet", CAPI_NS, "workers");

  it("creates a labelled, hashed template and a paused CAPI MachineSet owned by the Cluster (non-controller, blockOwnerDeletion)", () => {
    const world = new World([...base(), mapiMachineSet("workers")]);
    settleMachineSet(world);
    const name = templateNameFor("workers", "m6i.xlarge");
    expect(labelsOf(tplOf(world, name))[LABELS.templateMachineSet]).toBe("workers");
    const set = capiSetOf(world);
    expect(set?.metadata?.ownerReferences).toEqual([
      {
        apiVersion: CAPI_API_VERSION,
        kind: "Cluster",
        name: "ci-abc12",
        uid: "cluster-uid",
        blockOwnerDeletion: true,
      },
    ]);
    expect(annotationsOf(set)[ANNOTATIONS.pausedBy]).toBe("machine-api-migration");
    expect(finalizersOf(set)).toEqual([FINALIZERS.sync]);
    expect(getPath(set, ["spec", "template", "spec", "infrastructureRef", "name"])).toBe(name);
    expect(
      conditionOf(world.find(MAPI_API_VERSION, "MachineSet", MAPI_NS, "workers"), "Synchronized"),
    ).toMatchObject({
      status: "True",
      message: "Successfully synchronized MAPI MachineSet to CAPI",
    });
  });

  it("template rotation: new template, set pointed at it, outdated labelled template deleted, hand-made kept; True only after that", () => {
    const handMade = awsMachineTemplate("workers-by-hand");
    const world = new World([...base(), mapiMachineSet("workers"), handMade]);
    settleMachineSet(world);
    const oldName = templateNameFor("workers", "m6i.xlarge");
    world.mutate(MAPI_API_VERSION, "MachineSet", MAPI_NS, "workers", (o) => {
      o.spec = {
        ...o.spec,
        template: { ...(o.spec?.template as object), spec: { providerSpec: providerSpec("c6i.large") } },
      };
      o.metadata = { ...o.metadata, generation: 2 };
    });
    const newName = templateNameFor("workers", "c6i.large");
    const first = planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW);
    expect(kinds(first).slice(0, 2)).toEqual(["create AWSMachineTemplate", "apply MachineSet"]);
    expect(first.writes.some((w) => w.kind === "delete")).toBe(false);
    expect(first.condition).toBeUndefined();
    world.execute(first.writes);
    const second = planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW);
    expect(
      second.writes.filter((w) => w.kind === "delete").map((w) => "target" in w && w.target.name),
    ).toEqual([oldName]);
    expect(second.condition).toBeUndefined();
    world.execute(second.writes);
    const plans = settleMachineSet(world);
    expect(tplOf(world, oldName)).toBeUndefined();
    expect(tplOf(world, newName)).toBeDefined();
    expect(tplOf(world, "workers-by-hand")).toBeDefined();
    expect(plans[0]?.condition).toMatchObject({ status: "True" });
    expect(
      getPath(world.find(MAPI_API_VERSION, "MachineSet", MAPI_NS, "workers"), [
        "status",
        "synchronizedGeneration",
      ]),
    ).toBe(2);
  });

  it("a MachineSet with owner references is unsupported: Synchronized=False, no requeue", () => {
    const owned = mapiMachineSet("workers", {
      meta: { ownerReferences: [{ apiVersion: "example.com/v1", kind: "Pool", name: "p", uid: "p" }] },
    });
    const plan = planMachineSetSync(new World([...base(), owned]).machineSetSnapshot("workers"), deps(), NOW);
    expect(plan.condition).toMatchObject({ status: "False", reason: "UnsupportedOwnerReference" });
    expect(plan.requeue).toBeUndefined();
    expect(kinds(plan)).toEqual(["applyStatus MachineSet"]);
  });

  it("MachineSet conversion failure → FailedToConvertMAPIMachineSetToCAPI", () => {
    const bad = mapiMachineSet("workers");
    (bad.spec as { template: { spec: Record<string, unknown> } }).template.spec.providerSpec = providerSpec(
      "x",
      { deviceIndex: 2 },
    );
    const plan = planMachineSetSync(new World([...base(), bad]).machineSetSnapshot("workers"), deps(), NOW);
    expect(plan.condition).toMatchObject({ reason: "FailedToConvertMAPIMachineSetToCAPI" });
  });
});

describe("§4.4 CAPI → MAPI MachineSet", () => {
  it("never writes spec.selector or spec.template.spec.authoritativeAPI into the MAPI MachineSet", () => {
    const tpl = awsMachineTemplate(templateNameFor("workers", "m6i.xlarge"), {
      setName: "workers",
      instanceType: "r6i.large",
    });
    const world = new World([
      ...base(),
      mapiMachineSet("workers", {
        authority: "ClusterAPI",
        meta: { finalizers: [FINALIZERS.sync] },
        status: { conditions: [condition("Synchronized", "True")] },
      }),
      capiMachineSet("workers", {
        meta: { annotations: {}, finalizers: [FINALIZERS.sync] },
        spec: { replicas: 5 },
      }),
      tpl,
    ]);
    const plan = planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW);
    const apply = plan.writes.find((w) => w.kind === "apply") as Extract<SyncWrite, { kind: "apply" }>;
    expect(apply.body.spec?.selector).toBeUndefined();
    expect(getPath(apply.body, ["spec", "template", "spec", "authoritativeAPI"])).toBeUndefined();
    expect(apply.body.spec?.replicas).toBe(5);
    expect(plan.condition).toMatchObject({ message: "Successfully synchronized CAPI MachineSet to MAPI" });
    world.execute(plan.writes);
    expect(settleMachineSet(world).at(-1)?.writes).toEqual([]);
  });
});

describe("§4.2 final sync while Migrating", () => {
  const ack = (from: "MachineAPI" | "ClusterAPI") =>
    JSON.stringify(
      from === "MachineAPI"
        ? { mapi: "2026-11-30T09:00:00Z" }
        : { capiMachine: "2026-11-30T09:00:00Z", infraMachine: "2026-11-30T09:00:00Z" },
    );

  it("from MachineAPI: writes what differs, keeps the twin paused, adds no finalizer, then FinalSyncComplete", () => {
    const world = new World([...base(), mapiMachine("m")]);
    settleMachine(world);
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.spec = { ...o.spec, providerID: "aws:///us-east-1a/i-0late" };
      o.metadata = {
        ...o.metadata,
        generation: 3,
        annotations: { [ANNOTATIONS.pausedFalseAt]: ack("MachineAPI") },
      };
      o.status = {
        ...o.status,
        authoritativeAPI: "Migrating",
        synchronizedAPI: "MachineAPI",
        conditions: [
          { ...condition("Synchronized", "Unknown"), reason: "AwaitingFinalSync" },
          condition("Paused", "True", "2026-11-30T09:30:00Z"),
        ],
      };
    });
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.branch).toEqual({ kind: "finalSync", direction: "MachineAPI" });
    expect(plan.writes.some((w) => w.kind === "addFinalizer")).toBe(false);
    const apply = plan.writes.find((w) => w.kind === "apply") as Extract<SyncWrite, { kind: "apply" }>;
    expect(apply.changedPaths).toEqual(["spec.providerID"]);
    expect(annotationsOf(apply.body)[ANNOTATIONS.pausedBy]).toBe("machine-api-migration");
    expect(plan.condition).toMatchObject({ status: "True", reason: "FinalSyncComplete" });
    expect(plan.synchronizedGeneration).toBe(3);
  });

  it("from ClusterAPI: CAPI → MAPI with FinalSyncComplete and the CAPI Machine's generation", () => {
    const world = new World([
      ...base(),
      mapiMachine("m", {
        authority: "Migrating",
        meta: {
          finalizers: [FINALIZERS.sync],
          annotations: { [ANNOTATIONS.pausedFalseAt]: ack("ClusterAPI") },
        },
        status: { synchronizedAPI: "ClusterAPI", conditions: [condition("Synchronized", "True")] },
      }),
      capiMachine("m", {
        meta: { generation: 4 },
        status: { conditions: [condition("Paused", "True", "2026-11-30T09:30:00Z")] },
      }),
      awsMachine("m", { status: { conditions: [condition("Paused", "True", "2026-11-30T09:30:00Z")] } }),
    ]);
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.branch).toEqual({ kind: "finalSync", direction: "ClusterAPI" });
    expect(plan.condition).toMatchObject({
      reason: "FinalSyncComplete",
      message: "Successfully synchronized CAPI Machine to MAPI",
    });
    expect(plan.synchronizedGeneration).toBe(4);
    world.execute(plan.writes);
    expect(settleMachine(world).at(-1)?.writes).toEqual([]);
  });

  it("before step 6 holds nothing at all is written", () => {
    const world = new World([...base(), mapiMachine("m")]);
    settleMachine(world);
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.spec = { ...o.spec, providerID: "aws:///us-east-1a/i-0late" };
      o.status = { ...o.status, authoritativeAPI: "Migrating", synchronizedAPI: "MachineAPI" };
    });
    expect(planMachineSync(world.machineSnapshot("m"), deps(), NOW)).toMatchObject({
      branch: { kind: "noop" },
      writes: [],
    });
  });

  it("MachineSet unpaused CAPI twin under MachineAPI: paused and marked needs-attention, never replaced", () => {
    const world = new World([
      ...base(),
      mapiMachineSet("workers"),
      capiMachineSet("workers", { meta: { annotations: {}, finalizers: [] } }),
    ]);
    const plan = planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW);
    expect(kinds(plan)).toEqual(["pause MachineSet", "applyStatus MachineSet"]);
    expect(plan.condition?.reason).toBe("UnpausedTwinDetected");
  });
});
