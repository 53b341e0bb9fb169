/**
 * SPEC v5 §4.6 and §3.5 at the planner (issue 19): the user's choice travels per Machine (a MachineSet's
 * other copy is deleted with `Orphan`, a CAPI one only while paused with the marker, labelled templates go
 * with their CAPI MachineSet), a MachineSet deleted mid-handover is handled only after the roll-back,
 * deleting the CAPI `Cluster` is not a request for MAPI machines (`MirrorDeletedByCascade`), owner references
 * are set at creation only, no mirror is made under a deleting MAPI MachineSet, and an admin's delete of a
 * needs-attention twin is released without reaching the MAPI Machine. Each step: plan, execute on the
 * in-memory World (which enforces the API server's guards), look at what was written.
 */
import { describe, expect, it } from "vitest";
import {
  ANNOTATIONS,
  CAPI_API_VERSION,
  FINALIZERS,
  INFRA_API_VERSION,
  MAPI_API_VERSION,
} from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, finalizersOf } from "../../src/kube/object.js";
import { planMachineSetSync, planMachineSync, type SyncPlan } from "../../src/sync/plan.js";
import {
  awsMachine,
  awsMachineTemplate,
  CAPI_NS,
  CLUSTER_NAME,
  capiCluster,
  capiMachine,
  capiMachineSet,
  condition,
  DELETED_AT,
  deleting,
  deps,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  NOW,
  ownerRef,
  removeFinalizer,
  templateNameFor,
  World,
} from "./builders.js";

const synced = [condition("Synchronized", "True")];
const template = templateNameFor("workers", "m6i.xlarge");

/** One reconcile: plan, execute, and describe each write as `<kind> <target kind>@<side>[ detail]`. */
const describeWrites = (plan: SyncPlan): string[] =>
  plan.writes.map((w) => {
    if (w.kind === "create")
      return `create ${w.object.kind}@${w.object.metadata?.namespace === MAPI_NS ? "mapi" : "capi"}`;
    const target = `${w.target.kind}@${w.target.namespace === MAPI_NS ? "mapi" : "capi"}`;
    if (w.kind === "removeFinalizer") return `removeFinalizer ${target} ${w.finalizers.join(",")}`;
    if (w.kind === "delete" && w.propagationPolicy) return `delete ${target} ${w.propagationPolicy}`;
    return `${w.kind} ${target}`;
  });
const step = (world: World, plan: (w: World) => SyncPlan): string[] => {
  const p = plan(world);
  world.execute(p.writes);
  return describeWrites(p);
};
const machineStep = (world: World, name = "m") =>
  step(world, (w) => planMachineSync(w.machineSnapshot(name), deps(), NOW));
const setStep = (world: World) =>
  step(world, (w) => planMachineSetSync(w.machineSetSnapshot("workers"), deps(), NOW));

const find = (
  w: World,
  kind: "Machine" | "MachineSet" | "AWSMachine",
  side: "mapi" | "capi",
  name: string,
) =>
  kind === "AWSMachine"
    ? w.find(INFRA_API_VERSION, kind, CAPI_NS, name)
    : w.find(
        side === "mapi" ? MAPI_API_VERSION : CAPI_API_VERSION,
        kind,
        side === "mapi" ? MAPI_NS : CAPI_NS,
        name,
      );
const mark = (
  w: World,
  apiVersion: string,
  kind: string,
  ns: string,
  name: string,
  f: (o: KubeObject) => void,
) => w.mutate(apiVersion, kind, ns, name, f);
const removeCluster = (w: World): KubeObject => {
  const cluster = structuredClone(w.find(CAPI_API_VERSION, "Cluster", CAPI_NS, "ci-abc12") as KubeObject);
  mark(w, CAPI_API_VERSION, "Cluster", CAPI_NS, "ci-abc12", (o) => {
    o.metadata = { ...o.metadata, deletionTimestamp: DELETED_AT, finalizers: [] };
  });
  return cluster;
};

describe("§4.6 the user's choice travels per Machine (MachineSets)", () => {
  const machineAPISet = (deleted: "mapi" | "capi", capiAnnotations?: Record<string, string>) =>
    new World([
      infrastructure(),
      capiCluster(),
      (deleted === "mapi" ? deleting : (o: KubeObject) => o)(
        mapiMachineSet("workers", {
          meta: { finalizers: [FINALIZERS.sync] },
          status: { conditions: synced },
        }),
      ),
      (deleted === "capi" ? deleting : (o: KubeObject) => o)(
        capiMachineSet("workers", {
          meta: {
            finalizers: [FINALIZERS.sync, FINALIZERS.capiMachineSet],
            ...(capiAnnotations ? { annotations: capiAnnotations } : {}),
          },
        }),
      ),
      awsMachineTemplate(template, { setName: "workers" }),
    ]);

  it.each(["mapi", "capi"] as const)(
    "MachineAPI, %s copy deleted: the other copy is deleted with propagationPolicy Orphan (so no Machine of either API goes with it), the labelled template too",
    (deleted) => {
      const world = machineAPISet(deleted);
      expect(setStep(world).sort()).toEqual(
        [
          deleted === "mapi" ? "delete MachineSet@capi Orphan" : "delete MachineSet@mapi Orphan",
          "delete AWSMachineTemplate@capi",
        ].sort(),
      );
      expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.capiMachineSet}`]);
      expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.sync}`]);
      expect(setStep(world)).toEqual([`removeFinalizer MachineSet@mapi ${FINALIZERS.sync}`]);
      expect(setStep(world)).toEqual([]);
    },
  );

  it("MachineAPI: a CAPI MachineSet paused without the product's marker is not deleted (only a paused, marked one is); the sync waits", () => {
    const world = machineAPISet("mapi", { [ANNOTATIONS.paused]: "" });
    const plan = planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW);
    expect(plan.writes).toEqual([]);
    expect(plan.waitingFor).toBe("the pause marker on the CAPI MachineSet (only a paused one is deleted)");
  });

  it("MachineAPI: an unpaused (foreign) CAPI MachineSet is never deleted with the MAPI copy, nor the templates it may use", () => {
    const world = machineAPISet("mapi", {});
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@mapi ${FINALIZERS.sync}`]);
    expect(find(world, "MachineSet", "capi", "workers")?.metadata?.deletionTimestamp).toBeUndefined();
    expect(world.find(INFRA_API_VERSION, "AWSMachineTemplate", CAPI_NS, template)).toBeDefined();
  });

  it("ClusterAPI, CAPI copy gone before the MAPI copy: the labelled template goes with the CAPI MachineSet it was made for", () => {
    const world = new World([
      infrastructure(),
      capiCluster(),
      deleting(capiMachineSet("workers", { meta: { annotations: {}, finalizers: [FINALIZERS.sync] } })),
      awsMachineTemplate(template, { setName: "workers" }),
      awsMachineTemplate("workers-by-hand"),
    ]);
    expect(setStep(world)).toEqual(["delete AWSMachineTemplate@capi"]);
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.sync}`]);
    expect(world.find(INFRA_API_VERSION, "AWSMachineTemplate", CAPI_NS, "workers-by-hand")).toBeDefined();
  });

  it("a CAPI-only set (its MAPI copy was deleted and orphaned it, none of our finalizers left) deleted later: its labelled template still goes with it", () => {
    const world = new World([
      infrastructure(),
      capiCluster(),
      deleting(
        capiMachineSet("workers", { meta: { annotations: {}, finalizers: [FINALIZERS.capiMachineSet] } }),
      ),
      awsMachineTemplate(template, { setName: "workers" }),
    ]);
    expect(setStep(world)).toEqual(["delete AWSMachineTemplate@capi"]);
    expect(setStep(world)).toEqual([]);
    expect(finalizersOf(find(world, "MachineSet", "capi", "workers"))).toEqual([FINALIZERS.capiMachineSet]);
  });

  it("§3.5 Migrating from MachineAPI, CAPI mirror deleted: nothing until the roll-back to MachineAPI, then both copies go (the MAPI one with Orphan)", () => {
    const world = new World([
      infrastructure(),
      capiCluster(),
      mapiMachineSet("workers", { authority: "Migrating", meta: { finalizers: [FINALIZERS.sync] } }),
      deleting(
        capiMachineSet("workers", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.capiMachineSet] } }),
      ),
      awsMachineTemplate(template, { setName: "workers" }),
    ]);
    expect(setStep(world)).toEqual([]);
    expect(find(world, "MachineSet", "mapi", "workers")?.metadata?.deletionTimestamp).toBeUndefined();
    mark(world, MAPI_API_VERSION, "MachineSet", MAPI_NS, "workers", (o) => {
      o.status = { ...o.status, authoritativeAPI: "MachineAPI" };
    });
    expect(setStep(world).sort()).toEqual([
      "delete AWSMachineTemplate@capi",
      "delete MachineSet@mapi Orphan",
    ]);
  });
});

describe("§4.6 deleting the CAPI Cluster is not a request for MAPI machines", () => {
  const machineAPIMachine = () =>
    new World([
      infrastructure(),
      capiCluster(),
      mapiMachine("m", {
        meta: { finalizers: [FINALIZERS.mapiMachine, FINALIZERS.sync] },
        status: { conditions: synced },
      }),
      deleting(
        capiMachine("m", {
          meta: {
            finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine],
            ownerReferences: [ownerRef(capiCluster(), false)],
          },
        }),
      ),
      awsMachine("m", { meta: { finalizers: [FINALIZERS.sync] } }),
    ]);

  it("the live cascade read not done yet: nothing is written, the shell is asked for it", () => {
    const world = machineAPIMachine();
    world.clusterCascade = undefined;
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan).toMatchObject({ writes: [], needsCascadeCheck: true });
  });

  it("storage is read before the owner chain: unknown → the storage read is asked for; being removed → StorageBeingRemoved, no cascade read", () => {
    const world = machineAPIMachine();
    world.clusterCascade = undefined;
    world.storageBeingRemoved = undefined;
    expect(planMachineSync(world.machineSnapshot("m"), deps(), NOW)).toMatchObject({
      writes: [],
      needsStorageCheck: true,
    });
    world.storageBeingRemoved = true;
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.needsCascadeCheck).toBeUndefined();
    expect(describeWrites(plan)).toEqual(["applyStatus Machine@mapi"]);
    expect(plan.condition).toMatchObject({ status: "False", reason: "StorageBeingRemoved" });
  });

  it("MachineAPI Machine whose mirror went with its Cluster: the paused mirror is released (InfraMachine, then CAPI Machine), the MAPI Machine never deleted; MirrorDeletedByCascade; recreated once a Cluster exists again", () => {
    const world = machineAPIMachine();
    world.clusterCascade = true;
    const first = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(first.condition).toMatchObject({
      status: "False",
      reason: "MirrorDeletedByCascade",
      message:
        "CAPI Machine openshift-cluster-api/m was deleted with its Cluster; this MAPI Machine stays authoritative and its instances are not affected. The CAPI mirror is recreated once a Cluster exists again",
    });
    world.execute(first.writes);
    expect(describeWrites(first)).toEqual(["delete AWSMachine@capi", "applyStatus Machine@mapi"]);
    expect(machineStep(world)).toEqual([`removeFinalizer AWSMachine@capi ${FINALIZERS.sync}`]);
    expect(machineStep(world)).toEqual([
      `removeFinalizer Machine@capi ${FINALIZERS.sync},${FINALIZERS.capiMachine}`,
    ]);
    const mapi = find(world, "Machine", "mapi", "m");
    expect(mapi?.metadata?.deletionTimestamp).toBeUndefined();
    expect(finalizersOf(mapi)).toEqual([FINALIZERS.mapiMachine, FINALIZERS.sync]);
    expect(conditionOf(mapi, "Synchronized")?.reason).toBe("MirrorDeletedByCascade");

    // The Cluster is gone: no CAPI object is created, the condition stays.
    const old = removeCluster(world);
    world.clusterCascade = undefined;
    const waiting = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(waiting.writes).toEqual([]);
    expect(waiting.waitingFor).toBe("a CAPI Cluster to exist before any CAPI object is created");

    // The platform recreates its Cluster (same name, new uid): the mirror is recreated, owned by the new one.
    world.put({ ...old, metadata: { ...old.metadata, uid: "cluster-uid-2", resourceVersion: "900" } });
    expect(machineStep(world)).toEqual([
      "create Machine@capi",
      "create AWSMachine@capi",
      "applyStatus Machine@mapi",
    ]);
    expect(find(world, "Machine", "capi", "m")?.metadata?.ownerReferences).toMatchObject([
      { kind: "Cluster", uid: "cluster-uid-2" },
    ]);
    expect(conditionOf(find(world, "Machine", "mapi", "m"), "Synchronized")?.status).toBe("True");
  });

  it("a Cluster being deleted: no CAPI object is created for a MachineAPI Machine", () => {
    const world = new World([infrastructure(), capiCluster(), mapiMachine("m")]);
    removeCluster(world);
    world.put({
      ...capiCluster(),
      metadata: {
        ...capiCluster().metadata,
        deletionTimestamp: DELETED_AT,
        finalizers: ["cluster.cluster.x-k8s.io"],
      },
    });
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.writes.filter((w) => w.kind === "create")).toEqual([]);
    expect(plan.waitingFor).toBe("the CAPI Cluster ci-abc12, being deleted, to be gone and recreated");
  });

  it("§3.5 Migrating: a cascade is never propagated to the MAPI Machine either (the handover ends at MachineAPI first)", () => {
    const world = machineAPIMachine();
    mark(world, MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.status = { ...o.status, authoritativeAPI: "Migrating", synchronizedAPI: "ClusterAPI" };
    });
    world.clusterCascade = true;
    for (let i = 0; i < 3; i++) expect(machineStep(world)).toEqual([]);
    expect(find(world, "Machine", "mapi", "m")?.metadata?.deletionTimestamp).toBeUndefined();
    // Not a cascade (a user's delete): propagated as before.
    world.clusterCascade = false;
    expect(machineStep(world)).toEqual(["delete Machine@mapi"]);
  });

  it("ClusterAPI Machine: the cascade is Cluster API's own deletion of the authoritative side; the MAPI mirror follows (no live read needed)", () => {
    const world = new World([
      infrastructure(),
      capiCluster(),
      mapiMachine("m", {
        authority: "ClusterAPI",
        meta: { finalizers: [FINALIZERS.sync] },
        status: { conditions: synced },
      }),
      deleting(
        capiMachine("m", {
          meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] },
        }),
      ),
      awsMachine("m", { meta: { annotations: {} } }),
    ]);
    world.clusterCascade = undefined;
    expect(machineStep(world)).toEqual(["delete Machine@mapi"]);
  });

  it("MachineAPI MachineSet whose CAPI mirror went with its Cluster: the template goes, the mirror is released, the MAPI set stays; recreated with the Cluster", () => {
    const world = new World([
      infrastructure(),
      capiCluster(),
      mapiMachineSet("workers", { meta: { finalizers: [FINALIZERS.sync] }, status: { conditions: synced } }),
      deleting(
        capiMachineSet("workers", {
          meta: {
            finalizers: [FINALIZERS.sync, FINALIZERS.capiMachineSet],
            ownerReferences: [ownerRef(capiCluster(), false)],
          },
        }),
      ),
      awsMachineTemplate(template, { setName: "workers" }),
    ]);
    world.clusterCascade = undefined;
    expect(planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW)).toMatchObject({
      writes: [],
      needsCascadeCheck: true,
    });
    world.clusterCascade = true;
    expect(setStep(world)).toEqual(["delete AWSMachineTemplate@capi", "applyStatus MachineSet@mapi"]);
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.capiMachineSet}`]);
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.sync}`]);
    expect(find(world, "MachineSet", "capi", "workers")).toBeUndefined();
    const mapi = find(world, "MachineSet", "mapi", "workers");
    expect(mapi?.metadata?.deletionTimestamp).toBeUndefined();
    expect(conditionOf(mapi, "Synchronized")?.reason).toBe("MirrorDeletedByCascade");

    const old = removeCluster(world);
    world.clusterCascade = undefined;
    expect(setStep(world)).toEqual([]);
    world.put({ ...old, metadata: { ...old.metadata, uid: "cluster-uid-2", resourceVersion: "900" } });
    expect(setStep(world)).toEqual([
      "create AWSMachineTemplate@capi",
      "create MachineSet@capi",
      "applyStatus MachineSet@mapi",
    ]);
    expect(find(world, "MachineSet", "capi", "workers")?.metadata?.ownerReferences).toMatchObject([
      { kind: "Cluster", uid: "cluster-uid-2" },
    ]);
  });
});

describe("§4.6 a mirror is never created for a CAPI MachineSet to adopt", () => {
  // Issue 19 (seed 20261227, run 106): a recreated mirror that an old, deleting CAPI set selected was adopted
  // and deleted by Cluster API, and the delete reached the MachineAPI Machine.
  it.each([
    [
      "a deleting set selects it",
      true,
      { "cluster.x-k8s.io/cluster-name": CLUSTER_NAME },
      "MirrorWouldBeAdopted",
    ],
    [
      "a live set selects it",
      false,
      { "cluster.x-k8s.io/cluster-name": CLUSTER_NAME },
      "MirrorWouldBeAdopted",
    ],
    ["no set selects it", true, { "cluster.x-k8s.io/cluster-name": "another-cluster" }, undefined],
  ])("a standalone Machine's mirror is not created when %s", (_, going, selector, reason) => {
    const old = capiMachineSet("old", {
      meta: { ownerReferences: [], ...(going ? { deletionTimestamp: DELETED_AT } : {}) },
      spec: { selector: { matchLabels: selector } },
    });
    const world = new World([infrastructure(), capiCluster(), old, mapiMachine("old-a")]);
    const plan = planMachineSync(world.machineSnapshot("old-a"), deps(), NOW);
    const creates = plan.writes.filter((w) => w.kind === "create");
    if (reason === undefined) {
      expect(creates).not.toEqual([]);
      return;
    }
    expect(creates).toEqual([]);
    expect(plan.condition).toMatchObject({ status: "False", reason });
    // Looked at again without an event too: the set's own event may reach the cache before this condition.
    expect(plan.requeue).toEqual({ afterMs: 30_000 });
  });
});

describe("§4.6 owner references are set at creation and never changed after", () => {
  it("a set's member waits until the set's twin exists, then its CAPI Machine is created owned by it", () => {
    const mapiSet = mapiMachineSet("workers");
    const world = new World([
      infrastructure(),
      capiCluster(),
      mapiSet,
      mapiMachine("workers-a", { meta: { ownerReferences: [ownerRef(mapiSet)] } }),
    ]);
    const waiting = planMachineSync(world.machineSnapshot("workers-a"), deps(), NOW);
    expect(waiting.writes.filter((w) => w.kind === "create")).toEqual([]);
    expect(waiting.waitingFor).toBe("the CAPI twin of MachineSet workers");
    const capiSet = capiMachineSet("workers");
    world.put(capiSet);
    const created = planMachineSync(world.machineSnapshot("workers-a"), deps(), NOW);
    const machine = created.writes.find((w) => w.kind === "create" && w.object.kind === "Machine");
    expect(machine).toMatchObject({ object: { metadata: { ownerReferences: [ownerRef(capiSet)] } } });
  });

  it("an orphaned member (both copies' owner references removed by an orphaning delete) is never re-owned, not even by the Cluster", () => {
    const world = new World([
      infrastructure(),
      capiCluster(),
      mapiMachine("workers-a", { meta: { finalizers: [FINALIZERS.sync] }, status: { conditions: synced } }),
      capiMachine("workers-a", { meta: { ownerReferences: [] } }),
      awsMachine("workers-a"),
    ]);
    for (let i = 0; i < 3; i++) {
      const plan = planMachineSync(world.machineSnapshot("workers-a"), deps(), NOW);
      for (const w of plan.writes)
        if (w.kind === "apply") expect(w.body.metadata?.ownerReferences).toBeUndefined();
      world.execute(plan.writes);
    }
    expect(find(world, "Machine", "capi", "workers-a")?.metadata?.ownerReferences).toEqual([]);
  });

  it("a MachineSet's CAPI copy whose Cluster reference was removed keeps it removed", () => {
    const world = new World([
      infrastructure(),
      capiCluster(),
      mapiMachineSet("workers", { meta: { finalizers: [FINALIZERS.sync] }, status: { conditions: synced } }),
      capiMachineSet("workers", { meta: { ownerReferences: [] }, spec: { replicas: 3 } }),
      awsMachineTemplate(template, { setName: "workers" }),
    ]);
    const plan = planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW);
    const apply = plan.writes.find((w) => w.kind === "apply" && w.target.kind === "MachineSet");
    expect(apply).toBeDefined();
    if (apply?.kind === "apply") expect(apply.body.metadata?.ownerReferences).toBeUndefined();
  });
});

describe("§4.2/§4.6 no mirror under a deleting MAPI MachineSet", () => {
  it.each(["mapi", "capi"] as const)(
    "a CAPI-only Machine of a ClusterAPI set whose %s copy is being deleted gets no MAPI mirror (it would be collected with the set and its delete reach the CAPI Machine)",
    (deleted) => {
      const mapiSet = mapiMachineSet("workers", {
        authority: "ClusterAPI",
        meta: { finalizers: [FINALIZERS.sync] },
      });
      const capiSet = capiMachineSet("workers", { meta: { annotations: {} } });
      const world = new World([
        infrastructure(),
        capiCluster(),
        deleted === "mapi" ? deleting(mapiSet) : mapiSet,
        deleted === "capi" ? deleting(capiSet) : capiSet,
        capiMachine("workers-x", {
          meta: { annotations: {}, finalizers: [], ownerReferences: [ownerRef(capiSet)] },
        }),
        awsMachine("workers-x", { meta: { annotations: {}, finalizers: [] } }),
      ]);
      const plan = planMachineSync(world.machineSnapshot("workers-x"), deps(), NOW);
      expect(plan.branch.kind).toBe("ignore");
      expect(plan.writes).toEqual([]);
    },
  );
});

describe("§4.2 an admin resolves a needs-attention twin by deleting it; the delete never reaches the MAPI Machine", () => {
  const MAPI_INSTANCE = "i-0mapi00000000001";
  const needsAttention = {
    ...{ [ANNOTATIONS.paused]: "" },
    [ANNOTATIONS.needsAttention]: "UnpausedTwinDetected",
  };
  const twinWorld = (infraInstance: string | undefined) =>
    new World([
      infrastructure(),
      capiCluster(),
      mapiMachine("m", {
        meta: { finalizers: [FINALIZERS.mapiMachine, FINALIZERS.sync] },
        spec: { providerID: `aws:///us-east-1a/${MAPI_INSTANCE}` },
        status: { conditions: [condition("Synchronized", "False")] },
      }),
      deleting(
        capiMachine("m", { meta: { annotations: needsAttention, finalizers: [FINALIZERS.capiMachine] } }),
      ),
      awsMachine("m", {
        meta: { annotations: needsAttention, finalizers: [FINALIZERS.awsMachine] },
        ...(infraInstance ? { spec: { instanceID: infraInstance } } : {}),
      }),
    ]);

  it.each([
    ["the MAPI Machine's own instance", MAPI_INSTANCE],
    ["no instance", undefined],
  ])(
    "its InfraMachine carries %s: deleted and released while paused (no provider acts), then the CAPI Machine",
    (_, instance) => {
      const world = twinWorld(instance);
      expect(machineStep(world)).toEqual(["delete AWSMachine@capi"]);
      expect(machineStep(world)).toEqual([`removeFinalizer AWSMachine@capi ${FINALIZERS.awsMachine}`]);
      expect(find(world, "AWSMachine", "capi", "m")).toBeUndefined();
      expect(machineStep(world)).toEqual([`removeFinalizer Machine@capi ${FINALIZERS.capiMachine}`]);
      expect(find(world, "Machine", "capi", "m")).toBeUndefined();
      const mapi = find(world, "Machine", "mapi", "m");
      expect(mapi?.metadata?.deletionTimestamp).toBeUndefined();
      expect(finalizersOf(mapi)).toEqual([FINALIZERS.mapiMachine, FINALIZERS.sync]);
      // Then a new paused twin is made, as for any MachineAPI Machine without one.
      expect(machineStep(world)).toContain("create Machine@capi");
    },
  );

  it("its InfraMachine carries a duplicate instance: unpaused alone so its provider terminates it, released once the provider is done", () => {
    const world = twinWorld("i-0duplicate000002");
    expect(machineStep(world)).toEqual(["delete AWSMachine@capi"]);
    expect(machineStep(world)).toEqual(["unpause AWSMachine@capi"]);
    const infra = find(world, "AWSMachine", "capi", "m");
    expect(infra?.metadata?.annotations?.[ANNOTATIONS.paused]).toBeUndefined();
    expect(find(world, "Machine", "capi", "m")?.metadata?.annotations?.[ANNOTATIONS.paused]).toBe("");
    // CAPA has not terminated it yet: nothing is released.
    const waiting = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(waiting.writes).toEqual([]);
    expect(waiting.waitingFor).toContain("termination of duplicate i-0duplicate000002");
    mark(world, INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m", (o) =>
      removeFinalizer(o, FINALIZERS.awsMachine),
    );
    expect(find(world, "AWSMachine", "capi", "m")).toBeUndefined();
    expect(machineStep(world)).toEqual([`removeFinalizer Machine@capi ${FINALIZERS.capiMachine}`]);
    expect(find(world, "Machine", "mapi", "m")?.metadata?.deletionTimestamp).toBeUndefined();
  });

  it("an unpaused twin being deleted is paused first, so its controllers never act on the delete", () => {
    const world = twinWorld(MAPI_INSTANCE);
    mark(world, CAPI_API_VERSION, "Machine", CAPI_NS, "m", (o) => {
      o.metadata = { ...o.metadata, annotations: {} };
    });
    expect(machineStep(world)).toEqual(["pause Machine@capi"]);
    expect(find(world, "Machine", "capi", "m")?.metadata?.annotations?.[ANNOTATIONS.paused]).toBe("");
  });
});
