import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, FINALIZERS, INFRA_API_VERSION, MAPI_API_VERSION } from "../../src/kube/kinds.js";
import { finalizersOf } from "../../src/kube/object.js";
import { planMachineSetSync, planMachineSync, type SyncPlan } from "../../src/sync/plan.js";
import {
  awsMachine,
  awsMachineTemplate,
  CAPI_NS,
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

/** One reconcile: plan, execute, and describe each write as `<kind> <target kind>[ finalizers]`. */
const step = (world: World, plan: (w: World) => SyncPlan): string[] => {
  const p = plan(world);
  world.execute(p.writes);
  return p.writes.map((w) => {
    const target =
      "target" in w ? `${w.target.kind}@${w.target.namespace === MAPI_NS ? "mapi" : "capi"}` : "";
    return w.kind === "removeFinalizer"
      ? `${w.kind} ${target} ${w.finalizers.join(",")}`
      : `${w.kind} ${target}`;
  });
};
const machineStep = (world: World) =>
  step(world, (w) => planMachineSync(w.machineSnapshot("m"), deps(), NOW));
const setStep = (world: World) =>
  step(world, (w) => planMachineSetSync(w.machineSetSnapshot("workers"), deps(), NOW));

const mapiOf = (w: World) => w.find(MAPI_API_VERSION, "Machine", MAPI_NS, "m");
const capiOf = (w: World) => w.find(CAPI_API_VERSION, "Machine", CAPI_NS, "m");
const infraOf = (w: World) => w.find(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "m");
const dropFinalizer = (w: World, apiVersion: string, kind: string, ns: string, f: string) =>
  w.mutate(apiVersion, kind, ns, "m", (o) => removeFinalizer(o, f));
const markDeleting = (w: World, apiVersion: string, kind: string) =>
  w.mutate(apiVersion, kind, CAPI_NS, "m", (o) => {
    o.metadata = { ...o.metadata, deletionTimestamp: DELETED_AT };
  });

const machineAPIWorld = (deleted: "mapi" | "capi") => {
  const mapi = mapiMachine("m", {
    meta: { finalizers: [FINALIZERS.mapiMachine, FINALIZERS.sync] },
    status: { conditions: synced },
  });
  const capi = capiMachine("m", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] } });
  const infra = awsMachine("m", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] } });
  return new World([
    infrastructure(),
    capiCluster(),
    deleted === "mapi" ? deleting(mapi) : mapi,
    deleted === "capi" ? deleting(capi) : capi,
    infra,
  ]);
};

const clusterAPIWorld = (deleted: "mapi" | "capi") => {
  const mapi = mapiMachine("m", {
    authority: "ClusterAPI",
    meta: { finalizers: [FINALIZERS.mapiMachine, FINALIZERS.sync] },
    status: { conditions: synced },
  });
  const capi = capiMachine("m", {
    meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] },
  });
  const infra = awsMachine("m", {
    meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] },
  });
  return new World([
    infrastructure(),
    capiCluster(),
    deleted === "mapi" ? deleting(mapi) : mapi,
    deleted === "capi" ? deleting(capi) : capi,
    infra,
  ]);
};

describe("§4.6 Machines, MachineAPI authoritative", () => {
  it.each(["mapi", "capi"] as const)(
    "deleting the %s copy: propagate, wait for MAO, then InfraMachine → CAPI Machine → MAPI Machine, one write each",
    (deleted) => {
      const world = machineAPIWorld(deleted);
      const propagated = machineStep(world);
      expect(propagated).toEqual(
        deleted === "mapi"
          ? ["delete Machine@capi", "delete AWSMachine@capi"]
          : ["delete Machine@mapi", "delete AWSMachine@capi"],
      );
      // MAO has not terminated the instance yet: nothing is released.
      expect(machineStep(world)).toEqual([]);
      dropFinalizer(world, MAPI_API_VERSION, "Machine", MAPI_NS, FINALIZERS.mapiMachine);
      expect(machineStep(world)).toEqual([
        `removeFinalizer AWSMachine@capi ${FINALIZERS.sync},${FINALIZERS.awsMachine}`,
      ]);
      expect(infraOf(world)).toBeUndefined();
      expect(machineStep(world)).toEqual([
        `removeFinalizer Machine@capi ${FINALIZERS.sync},${FINALIZERS.capiMachine}`,
      ]);
      expect(capiOf(world)).toBeUndefined();
      expect(machineStep(world)).toEqual([`removeFinalizer Machine@mapi ${FINALIZERS.sync}`]);
      expect(mapiOf(world)).toBeUndefined();
      expect(machineStep(world)).toEqual([]);
    },
  );
});

describe("§4.6 Machines, ClusterAPI authoritative", () => {
  it.each(["mapi", "capi"] as const)(
    "deleting the %s copy: propagate to the other Machine only, wait for CAPA and CAPI, then release",
    (deleted) => {
      const world = clusterAPIWorld(deleted);
      expect(machineStep(world)).toEqual([
        deleted === "mapi" ? "delete Machine@capi" : "delete Machine@mapi",
      ]);
      // The InfraMachine is the CAPI Machine controller's to delete; CAPA still holds it.
      expect(infraOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
      expect(machineStep(world)).toEqual([]);
      markDeleting(world, INFRA_API_VERSION, "AWSMachine");
      expect(machineStep(world)).toEqual([]);
      dropFinalizer(world, INFRA_API_VERSION, "AWSMachine", CAPI_NS, FINALIZERS.awsMachine);
      expect(machineStep(world)).toEqual([`removeFinalizer AWSMachine@capi ${FINALIZERS.sync}`]);
      expect(infraOf(world)).toBeUndefined();
      // The CAPI Machine controller removes its finalizer once the InfraMachine is gone.
      expect(machineStep(world)).toEqual([]);
      dropFinalizer(world, CAPI_API_VERSION, "Machine", CAPI_NS, FINALIZERS.capiMachine);
      expect(machineStep(world)).toEqual([
        `removeFinalizer Machine@capi ${FINALIZERS.sync}`,
        `removeFinalizer Machine@mapi ${FINALIZERS.mapiMachine},${FINALIZERS.sync}`,
      ]);
      expect(capiOf(world)).toBeUndefined();
      expect(mapiOf(world)).toBeUndefined();
    },
  );

  it("an InfraMachine deleted alone under ClusterAPI only loses our finalizer once its provider is done; nothing is propagated", () => {
    const world = clusterAPIWorld("mapi");
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      delete o.metadata?.deletionTimestamp;
    });
    markDeleting(world, INFRA_API_VERSION, "AWSMachine");
    expect(machineStep(world)).toEqual([]);
    dropFinalizer(world, INFRA_API_VERSION, "AWSMachine", CAPI_NS, FINALIZERS.awsMachine);
    expect(machineStep(world)).toEqual([`removeFinalizer AWSMachine@capi ${FINALIZERS.sync}`]);
    expect(mapiOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
    expect(capiOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
  });
});

describe("§3.5 deletion while Migrating", () => {
  it("only propagates the delete to the twin and removes no finalizer", () => {
    const world = machineAPIWorld("mapi");
    world.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "m", (o) => {
      o.status = { ...o.status, authoritativeAPI: "Migrating", synchronizedAPI: "MachineAPI" };
      removeFinalizer(o, FINALIZERS.mapiMachine);
    });
    expect(machineStep(world)).toEqual(["delete Machine@capi"]);
    for (let i = 0; i < 3; i++) expect(machineStep(world)).toEqual([]);
    expect(finalizersOf(mapiOf(world))).toEqual([FINALIZERS.sync]);
    expect(finalizersOf(capiOf(world))).toEqual([FINALIZERS.sync, FINALIZERS.capiMachine]);
    expect(infraOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
  });
});

describe("§4.6 StorageBeingRemoved", () => {
  it("storage of a twin being deleted: nothing propagated, no finalizer removed, Synchronized=False StorageBeingRemoved", () => {
    const world = machineAPIWorld("mapi");
    world.storageBeingRemoved = true;
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.writes.map((w) => w.kind)).toEqual(["applyStatus"]);
    expect(plan.condition).toMatchObject({ status: "False", reason: "StorageBeingRemoved" });
  });

  it("the live storage read not done yet: no write at all, the shell is asked to read it", () => {
    const world = machineAPIWorld("capi");
    world.storageBeingRemoved = undefined;
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan).toMatchObject({ writes: [], needsStorageCheck: true });
  });

  it("releasing finalizers is guarded too", () => {
    const world = machineAPIWorld("mapi");
    machineStep(world);
    dropFinalizer(world, MAPI_API_VERSION, "Machine", MAPI_NS, FINALIZERS.mapiMachine);
    world.storageBeingRemoved = true;
    const plan = planMachineSync(world.machineSnapshot("m"), deps(), NOW);
    expect(plan.writes.some((w) => w.kind === "removeFinalizer")).toBe(false);
  });
});

describe("§4.2 / §4.6 leftovers", () => {
  it("both Machines gone: an InfraMachine still holding the sync finalizer loses only ours", () => {
    const world = new World([
      infrastructure(),
      awsMachine("m", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] } }),
    ]);
    expect(machineStep(world)).toEqual([`removeFinalizer AWSMachine@capi ${FINALIZERS.sync}`]);
    expect(finalizersOf(infraOf(world))).toEqual([FINALIZERS.awsMachine]);
  });

  it("MAPI Machine already gone, CAPI Machine deleting with our finalizer: wait for CAPI's own, then release ours", () => {
    const world = new World([
      infrastructure(),
      deleting(
        capiMachine("m", {
          meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] },
        }),
      ),
    ]);
    expect(machineStep(world)).toEqual([]);
    dropFinalizer(world, CAPI_API_VERSION, "Machine", CAPI_NS, FINALIZERS.capiMachine);
    expect(machineStep(world)).toEqual([`removeFinalizer Machine@capi ${FINALIZERS.sync}`]);
    expect(capiOf(world)).toBeUndefined();
  });
});

describe("§4.6 a paused mirror left deleting after its MAPI Machine went (issue 19's campaign, seed 20261222 run 276)", () => {
  // A lagging cache released the MAPI Machine (MAO had terminated the instance) before the mirror's
  // finalizers: paused by the product, Cluster API never removes its own finalizer, and waiting for it would
  // hold the mirror forever.
  const pausedMirror = () =>
    deleting(capiMachine("m", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] } }));

  it("no InfraMachine: the product releases the paused mirror's finalizers, Cluster API's and its own", () => {
    const world = new World([infrastructure(), pausedMirror()]);
    expect(machineStep(world)).toEqual([
      `removeFinalizer Machine@capi ${FINALIZERS.sync},${FINALIZERS.capiMachine}`,
    ]);
    expect(capiOf(world)).toBeUndefined();
  });

  it("an InfraMachine still holding CAPA's finalizer (an instance may exist): nothing is released", () => {
    const world = new World([
      infrastructure(),
      pausedMirror(),
      deleting(awsMachine("m", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] } })),
    ]);
    expect(machineStep(world)).toEqual([]);
    expect(finalizersOf(capiOf(world))).toEqual([FINALIZERS.sync, FINALIZERS.capiMachine]);
  });
});

describe("§4.6 MachineSets", () => {
  const current = templateNameFor("workers", "m6i.xlarge");

  it("MAPI authoritative: deleting either copy deletes both and the labelled templates (hand-made kept); machineset finalizer before ours", () => {
    for (const deleted of ["mapi", "capi"] as const) {
      const mapi = mapiMachineSet("workers", {
        meta: { finalizers: [FINALIZERS.sync] },
        status: { conditions: synced },
      });
      const capi = capiMachineSet("workers", {
        meta: { finalizers: [FINALIZERS.sync, FINALIZERS.capiMachineSet] },
      });
      const world = new World([
        infrastructure(),
        capiCluster(),
        deleted === "mapi" ? deleting(mapi) : mapi,
        deleted === "capi" ? deleting(capi) : capi,
        awsMachineTemplate(current, { setName: "workers" }),
        awsMachineTemplate("workers-0ld0ld00", { setName: "workers" }),
        awsMachineTemplate("workers-by-hand"),
      ]);
      expect(setStep(world).sort()).toEqual(
        [
          deleted === "mapi" ? "delete MachineSet@capi" : "delete MachineSet@mapi",
          "delete AWSMachineTemplate@capi",
          "delete AWSMachineTemplate@capi",
        ].sort(),
      );
      expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.capiMachineSet}`]);
      expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.sync}`]);
      expect(setStep(world)).toEqual([`removeFinalizer MachineSet@mapi ${FINALIZERS.sync}`]);
      expect(setStep(world)).toEqual([]);
      expect(
        world
          .all()
          .map((o) => `${o.kind}/${o.metadata?.name}`)
          .sort(),
      ).toEqual(["AWSMachineTemplate/workers-by-hand", "Cluster/ci-abc12", "Infrastructure/cluster"]);
    }
  });

  const clusterAPISet = (deleted: "mapi" | "capi") => {
    const mapi = mapiMachineSet("workers", {
      authority: "ClusterAPI",
      meta: { finalizers: [FINALIZERS.sync] },
      status: { conditions: synced },
    });
    const capi = capiMachineSet("workers", {
      meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachineSet] },
    });
    const members = ["workers-a", "workers-b"].map((n) =>
      mapiMachine(n, {
        authority: "ClusterAPI",
        meta: { ownerReferences: [ownerRef(mapi)], finalizers: [FINALIZERS.sync] },
      }),
    );
    const world = new World([
      infrastructure(),
      capiCluster(),
      deleted === "mapi" ? deleting(mapi) : mapi,
      deleted === "capi" ? deleting(capi) : capi,
      awsMachineTemplate(current, { setName: "workers" }),
      ...members,
    ]);
    return world;
  };

  it("CAPI authoritative, MAPI copy deleted: orphan every MAPI Machine first, then our finalizers; the CAPI set keeps running", () => {
    const world = clusterAPISet("mapi");
    expect(setStep(world)).toEqual([
      "removeOwnerReference Machine@mapi",
      "removeOwnerReference Machine@mapi",
    ]);
    for (const n of ["workers-a", "workers-b"]) {
      expect(world.find(MAPI_API_VERSION, "Machine", MAPI_NS, n)?.metadata?.ownerReferences).toEqual([]);
    }
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.sync}`]);
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@mapi ${FINALIZERS.sync}`]);
    const capi = world.find(CAPI_API_VERSION, "MachineSet", CAPI_NS, "workers");
    expect(capi?.metadata?.deletionTimestamp).toBeUndefined();
    expect(finalizersOf(capi)).toEqual([FINALIZERS.capiMachineSet]);
    expect(world.find(INFRA_API_VERSION, "AWSMachineTemplate", CAPI_NS, current)).toBeDefined();
    // The CAPI-only set that remains is ignored from now on.
    expect(planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW).branch.kind).toBe("ignore");
  });

  it("CAPI authoritative, CAPI copy deleted: the MAPI copy is deleted with Orphan, the labelled template with the CAPI set (and orphans its Machines before release)", () => {
    const world = clusterAPISet("capi");
    const first = planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW);
    expect(first.writes).toMatchObject([
      { kind: "delete", target: { kind: "MachineSet", namespace: MAPI_NS }, propagationPolicy: "Orphan" },
      { kind: "delete", target: { kind: "AWSMachineTemplate", name: current } },
    ]);
    expect(first.writes[1]).not.toHaveProperty("propagationPolicy");
    world.execute(first.writes);
    expect(setStep(world)).toEqual([
      "removeOwnerReference Machine@mapi",
      "removeOwnerReference Machine@mapi",
    ]);
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.sync}`]);
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@mapi ${FINALIZERS.sync}`]);
    expect(world.find(MAPI_API_VERSION, "MachineSet", MAPI_NS, "workers")).toBeUndefined();
    // CAPI's own finalizer stays for its controller.
    expect(finalizersOf(world.find(CAPI_API_VERSION, "MachineSet", CAPI_NS, "workers"))).toEqual([
      FINALIZERS.capiMachineSet,
    ]);
  });

  it("§3.5 Migrating: nothing is propagated until the handover is rolled back; then the row of synchronizedAPI applies (ClusterAPI: orphan)", () => {
    const mapi = mapiMachineSet("workers", {
      authority: "Migrating",
      status: { synchronizedAPI: "ClusterAPI" },
      meta: { finalizers: [FINALIZERS.sync], deletionTimestamp: DELETED_AT },
    });
    const world = new World([
      infrastructure(),
      capiCluster(),
      mapi,
      capiMachineSet("workers", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.capiMachineSet] } }),
      awsMachineTemplate(current, { setName: "workers" }),
    ]);
    for (let i = 0; i < 3; i++) expect(setStep(world)).toEqual([]);
    const waiting = planMachineSetSync(world.machineSetSnapshot("workers"), deps(), NOW);
    expect(waiting.waitingFor).toBe("the handover to be rolled back before a MachineSet deletion is handled");
    // The migration controller rolls back to synchronizedAPI (and unpauses the CAPI set); now §4.6 ClusterAPI.
    world.mutate(MAPI_API_VERSION, "MachineSet", MAPI_NS, "workers", (o) => {
      o.status = { ...o.status, authoritativeAPI: "ClusterAPI" };
    });
    world.mutate(CAPI_API_VERSION, "MachineSet", CAPI_NS, "workers", (o) => {
      o.metadata = { ...o.metadata, annotations: {} };
    });
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@capi ${FINALIZERS.sync}`]);
    expect(setStep(world)).toEqual([`removeFinalizer MachineSet@mapi ${FINALIZERS.sync}`]);
    const capi = world.find(CAPI_API_VERSION, "MachineSet", CAPI_NS, "workers");
    expect(capi?.metadata?.deletionTimestamp).toBeUndefined();
    expect(
      world.find(INFRA_API_VERSION, "AWSMachineTemplate", CAPI_NS, current)?.metadata?.deletionTimestamp,
    ).toBeUndefined();
  });
});

describe("§4.6 a deletion is propagated only when it was requested for that object: a name taken again", () => {
  /** A MAPI object created after the tests' deletes were asked for (DELETED_AT), under an old twin's name. */
  const CREATED_AFTER_DELETE = "2026-11-30T09:59:30Z";
  const FOREIGN = "example.com/audit";

  it.each([
    ["holding only someone else's finalizer", [FOREIGN]],
    [
      "still holding Cluster API's finalizer and ours (ours released by hand from the old MAPI Machine)",
      [FOREIGN, FINALIZERS.capiMachine, FINALIZERS.sync],
    ],
  ])(
    "MachineAPI: a new MAPI Machine is never deleted for its name's old CAPI twin, deleting since before it existed (%s)",
    (_, finalizers) => {
      const mapi = mapiMachine("m", {
        meta: {
          creationTimestamp: CREATED_AFTER_DELETE,
          finalizers: [FINALIZERS.mapiMachine, FINALIZERS.sync],
        },
      });
      const oldTwin = deleting(capiMachine("m", { meta: { finalizers } }));
      const world = new World([infrastructure(), capiCluster(), mapi, oldTwin]);
      const writes = machineStep(world);
      // Only the old twin's own release (as if its MAPI Machine were gone): never the new MAPI Machine.
      expect(writes.filter((w) => w.includes("@mapi"))).toEqual([]);
      expect(mapiOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
      expect(finalizersOf(mapiOf(world))).toEqual([FINALIZERS.mapiMachine, FINALIZERS.sync]);
      for (let i = 0; i < 3; i++) expect(machineStep(world).filter((w) => w.includes("@mapi"))).toEqual([]);
      // Someone else's finalizer is theirs: it holds the old twin until they let go.
      expect(finalizersOf(capiOf(world))).toEqual([FOREIGN]);
      expect(planMachineSync(world.machineSnapshot("m"), deps(), NOW).branch).toEqual({
        kind: "noop",
        reason: "the CAPI twin of an earlier MAPI Machine of this name to go away",
      });
      dropFinalizer(world, CAPI_API_VERSION, "Machine", CAPI_NS, FOREIGN);
      expect(capiOf(world)).toBeUndefined();
      // The old twin gone, the new Machine gets its own.
      expect(machineStep(world)).toContain("create ");
      expect(capiOf(world)).toMatchObject({ metadata: { name: "m" } });
      expect(capiOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
      expect(mapiOf(world)?.metadata?.deletionTimestamp).toBeUndefined();
    },
  );

  it("a CAPI twin deleted after the MAPI Machine was created is still propagated (the same second included)", () => {
    for (const created of ["2026-11-30T09:58:00Z", DELETED_AT]) {
      const mapi = mapiMachine("m", {
        meta: { creationTimestamp: created, finalizers: [FINALIZERS.mapiMachine, FINALIZERS.sync] },
      });
      const twin = deleting(
        capiMachine("m", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] } }),
      );
      const world = new World([infrastructure(), capiCluster(), mapi, twin]);
      expect(machineStep(world)).toEqual(["delete Machine@mapi"]);
    }
  });

  it("MachineAPI: a new MAPI MachineSet is never deleted for its name's old CAPI set, deleting since before it existed", () => {
    const mapi = mapiMachineSet("workers", {
      meta: { creationTimestamp: CREATED_AFTER_DELETE, finalizers: [FINALIZERS.sync] },
    });
    const oldSet = deleting(capiMachineSet("workers", { meta: { finalizers: [FOREIGN] } }));
    const world = new World([infrastructure(), capiCluster(), mapi, oldSet]);
    for (let i = 0; i < 3; i++) expect(setStep(world).filter((w) => w.includes("@mapi"))).toEqual([]);
    expect(
      world.find(MAPI_API_VERSION, "MachineSet", MAPI_NS, "workers")?.metadata?.deletionTimestamp,
    ).toBeUndefined();
  });
});

describe("§4.6 ClusterAPI: a CAPI Machine deleted before Cluster API ever reconciled it", () => {
  it("its InfraMachine is deleted by the sync (Cluster API never will: no finalizer of its own), then released in §4.6's order", () => {
    const mapi = mapiMachine("m", {
      authority: "ClusterAPI",
      meta: { finalizers: [FINALIZERS.sync] },
      status: { conditions: synced },
    });
    // Deleted (the Cluster's cascade) before Cluster API's first reconcile: only our finalizer holds it.
    const capi = capiMachine("m", { meta: { annotations: {}, finalizers: [FINALIZERS.sync] } });
    const infra = awsMachine("m", {
      meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] },
    });
    const world = new World([infrastructure(), capiCluster(), deleting(mapi), deleting(capi), infra]);
    expect(machineStep(world)).toEqual(["delete AWSMachine@capi"]);
    expect(machineStep(world)).toEqual([]);
    // CAPA terminates the instance and lets go.
    dropFinalizer(world, INFRA_API_VERSION, "AWSMachine", CAPI_NS, FINALIZERS.awsMachine);
    expect(machineStep(world)).toEqual([`removeFinalizer AWSMachine@capi ${FINALIZERS.sync}`]);
    expect(machineStep(world)).toEqual([
      `removeFinalizer Machine@capi ${FINALIZERS.sync}`,
      `removeFinalizer Machine@mapi ${FINALIZERS.sync}`,
    ]);
    expect(mapiOf(world)).toBeUndefined();
  });

  it("while Cluster API holds its finalizer, the InfraMachine is its to delete: the sync waits", () => {
    const mapi = mapiMachine("m", { authority: "ClusterAPI", meta: { finalizers: [FINALIZERS.sync] } });
    const capi = capiMachine("m", {
      meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] },
    });
    const infra = awsMachine("m", {
      meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] },
    });
    const world = new World([infrastructure(), capiCluster(), deleting(mapi), deleting(capi), infra]);
    expect(machineStep(world)).toEqual([]);
  });
});
