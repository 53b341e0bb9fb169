/**
 * The stand-ins against the local API server with the project's CRDs, each under its real controller's
 * identity and roles (SPEC §1.1): MAO provisions a MachineAPI Machine to Running; MAO ignores a deleting
 * Machine without its finalizer and the ledger reports the leaked instance; the CAPI Machine finalizer is held
 * until the AWSMachine is NotFound; CAPA provisions an unpaused AWSMachine whose Machine is paused; both
 * MachineSet stand-ins scale up and down; the request counters attribute every write to its identity.
 * Real time with zero provisioning delay; waits poll for state, never assert elapsed time.
 */
import { describe, expect, it } from "vitest";
import { NotFoundError } from "../../src/kube/errors.js";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, getPath, isDeleting, nameOf } from "../../src/kube/object.js";
import { createInstanceLedger, startMaoStandIn } from "../../src/simulate/index.js";
import { silentLogger } from "../kube/fakes.js";
import {
  awsMachineOf,
  awsMachineTemplateOf,
  CAPI_NS,
  capiMachineOf,
  capiMachineSetOf,
  controlledBy,
  MAPI_NS,
  mapiMachineOf,
  mapiMachineSetOf,
  paused,
} from "./builders.js";
import {
  type Env,
  eventually,
  existing,
  get,
  gone,
  IDENTITY,
  names,
  quiesce,
  standInClusters,
  writesBy,
} from "./stand-in-cluster.js";

const { start, startCluster, stopAfterTest } = standInClusters();

describe("MAO stand-in against the local API server", () => {
  it("provisions a MachineAPI Machine to Running with a providerID and Paused=False, as machine-api-controllers", async () => {
    const env = await start();
    await env.admin.client.create(KINDS.mapiMachine, mapiMachineOf("worker-0"));
    const running = await eventually("Running", async () => {
      const m = await get(env, KINDS.mapiMachine, MAPI_NS, "worker-0");
      return getPath(m, ["status", "phase"]) === "Running" ? m : undefined;
    });
    const [instance] = env.providers.ledger.snapshot().instances;
    expect(instance).toMatchObject({ machineName: "worker-0", side: "MachineAPI" });
    expect(running.spec?.providerID).toBe(instance?.providerID);
    expect(running.spec?.providerID).toMatch(/^aws:\/\/\/us-east-1a\/i-[0-9a-f]+$/);
    expect(running.metadata?.finalizers).toEqual([FINALIZERS.mapiMachine]);
    // What the AWS actuator labels a Machine with once its instance exists (OpenShift's printer columns).
    expect(running.metadata?.labels).toMatchObject({
      "machine.openshift.io/instance-type": "m6i.xlarge",
      "machine.openshift.io/zone": "us-east-1a",
    });
    expect(running.metadata?.annotations).toMatchObject({ "machine.openshift.io/instance-state": "running" });
    expect(getPath(running, ["status", "authoritativeAPI"])).toBe("MachineAPI");
    expect(getPath(running, ["status", "nodeRef", "name"])).toMatch(/\.ec2\.internal$/);
    expect(conditionOf(running, "Paused")).toMatchObject({
      status: "False",
      reason: "AuthoritativeAPIMachineAPI",
      lastTransitionTime: expect.any(String),
    });
    await quiesce(env);
    expect(writesBy(env, IDENTITY.mao)).toEqual([
      "patch machine.openshift.io/machines",
      "patch machine.openshift.io/machines/status",
    ]);
    expect(writesBy(env, IDENTITY.capi)).toEqual([]);
    expect(writesBy(env, IDENTITY.capa)).toEqual([]);
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });

  it("terminates the instance and removes its finalizer when an active Machine is deleted", async () => {
    const env = await start();
    await env.admin.client.create(KINDS.mapiMachine, mapiMachineOf("worker-0"));
    await eventually("a providerID", async () =>
      getPath(await get(env, KINDS.mapiMachine, MAPI_NS, "worker-0"), ["spec", "providerID"]),
    );
    await env.admin.client.delete(KINDS.mapiMachine, MAPI_NS, "worker-0");
    await eventually("the Machine gone", () => gone(env, KINDS.mapiMachine, MAPI_NS, "worker-0"));
    const [instance] = env.providers.ledger.snapshot().instances;
    expect(instance).toMatchObject({ terminatedBy: "MachineAPI", terminatedFor: { deleting: true } });
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });

  it("MAO crashed between launching the instance and writing providerID: its successor finds the instance by its tags and terminates it", async () => {
    const env = await start();
    // MAO's finalizer is already there, so providerID is the only spec write MAO makes: make every one fail.
    env.server.faults.set({
      rate500: 1,
      match: { verbs: ["patch"], resources: ["machine.openshift.io/machines"], users: [IDENTITY.mao] },
    });
    await env.admin.client.create(
      KINDS.mapiMachine,
      mapiMachineOf("worker-0", { meta: { finalizers: [FINALIZERS.mapiMachine] } }),
    );
    await eventually(
      "an instance launched",
      async () => env.providers.ledger.snapshot().instances.length === 1,
    );
    await env.providers.mao.stop();
    env.server.faults.clear();
    const orphaned = await get(env, KINDS.mapiMachine, MAPI_NS, "worker-0");
    expect(orphaned.spec?.providerID).toBeUndefined();
    await env.admin.client.delete(KINDS.mapiMachine, MAPI_NS, "worker-0");

    const successor = await startMaoStandIn({
      connection: env.as(IDENTITY.mao),
      mapiNamespace: MAPI_NS,
      capiNamespace: CAPI_NS,
      logger: silentLogger(),
      ledger: env.providers.ledger,
    });
    stopAfterTest(() => successor.stop());
    await eventually("the Machine gone", () => gone(env, KINDS.mapiMachine, MAPI_NS, "worker-0"));
    expect(env.providers.ledger.snapshot().instances).toMatchObject([
      { machineName: "worker-0", terminatedBy: "MachineAPI" },
    ]);
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });

  it("ignores a deleting Machine without machine.machine.openshift.io: the instance leaks and the ledger says so", async () => {
    const env = await start();
    await env.admin.client.create(KINDS.mapiMachine, mapiMachineOf("worker-0"));
    const running = await eventually("Running", async () => {
      const m = await get(env, KINDS.mapiMachine, MAPI_NS, "worker-0");
      return getPath(m, ["status", "phase"]) === "Running" ? m : undefined;
    });
    // Someone swaps MAO's finalizer for another one, then the user deletes the Machine.
    await env.admin.client.patch(KINDS.mapiMachine, MAPI_NS, "worker-0", {
      type: "json",
      body: [
        { op: "test", path: "/metadata/finalizers", value: running.metadata?.finalizers },
        { op: "replace", path: "/metadata/finalizers", value: [FINALIZERS.sync] },
      ],
    });
    await env.admin.client.delete(KINDS.mapiMachine, MAPI_NS, "worker-0");
    await quiesce(env);
    const deleting = await get(env, KINDS.mapiMachine, MAPI_NS, "worker-0");
    expect(isDeleting(deleting)).toBe(true);
    expect(deleting.metadata?.finalizers).toEqual([FINALIZERS.sync]);
    const [instance] = env.providers.ledger.snapshot().instances;
    expect(instance?.terminatedSeq).toBeUndefined();

    await env.admin.client.patch(KINDS.mapiMachine, MAPI_NS, "worker-0", {
      type: "json",
      body: [{ op: "remove", path: "/metadata/finalizers/0" }],
    });
    await eventually("the Machine gone", () => gone(env, KINDS.mapiMachine, MAPI_NS, "worker-0"));
    expect(env.providers.ledger.violations(await existing(env))).toEqual([
      `instance ${instance?.instanceId} (MachineAPI) is running but neither Machine worker-0 nor its twin exists: leaked`,
    ]);
  });

  it("a MachineSet scales Machines up and down while MAPI-authoritative; scale-down terminates", async () => {
    const env = await start();
    const set = await env.admin.client.create(KINDS.mapiMachineSet, mapiMachineSetOf(2));
    const setName = nameOf(set);
    const runningMachines = async (n: number) =>
      eventually(`${n} Running Machines`, async () => {
        const items = (await env.admin.client.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items;
        const live = items.filter((m) => !isDeleting(m));
        return items.length === n && live.every((m) => getPath(m, ["status", "phase"]) === "Running")
          ? live
          : undefined;
      });
    const two = await runningMachines(2);
    for (const m of two) {
      expect(m.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "MachineSet", name: setName });
      expect(m.spec?.authoritativeAPI).toBe("MachineAPI");
    }
    await env.admin.client.patch(KINDS.mapiMachineSet, MAPI_NS, setName, {
      type: "merge",
      body: { spec: { replicas: 1 } },
    });
    await runningMachines(1);
    await quiesce(env);
    const snapshot = env.providers.ledger.snapshot();
    expect(snapshot.instances).toHaveLength(2);
    expect(snapshot.instances.filter((i) => i.terminatedSeq !== undefined)).toHaveLength(1);
    expect(snapshot.deletionsRequested).toHaveLength(1);
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
    const reported = await eventually("status.replicas 1", async () => {
      const s = await get(env, KINDS.mapiMachineSet, MAPI_NS, setName);
      return getPath(s, ["status", "readyReplicas"]) === 1 ? s : undefined;
    });
    expect(reported.status).toMatchObject({ replicas: 1, availableReplicas: 1, fullyLabeledReplicas: 1 });
    expect(writesBy(env, IDENTITY.mao)).toContain("create machine.openshift.io/machines");
    expect(writesBy(env, IDENTITY.mao)).toContain("delete machine.openshift.io/machines");
  });

  it("a MachineSet that is not MAPI-authoritative does not scale", async () => {
    const env = await start();
    const set = mapiMachineSetOf(2, { spec: { authoritativeAPI: "ClusterAPI" } });
    await env.admin.client.create(KINDS.mapiMachineSet, set);
    const acknowledged = await eventually("Paused=True", async () => {
      const s = await get(env, KINDS.mapiMachineSet, MAPI_NS, nameOf(set));
      return conditionOf(s, "Paused")?.status === "True" ? s : undefined;
    });
    expect(getPath(acknowledged, ["status", "authoritativeAPI"])).toBe("ClusterAPI");
    await quiesce(env);
    expect(await names(env, KINDS.mapiMachine, MAPI_NS)).toEqual([]);
  });
});

describe("CAPI and CAPA stand-ins against the local API server", () => {
  /** A CAPI Machine and its AWSMachine (owned by the Machine, as the sync creates them). */
  const createPair = async (
    env: Env,
    name: string,
    annotations: { machine?: object; infra?: object } = {},
  ) => {
    const machine = await env.admin.client.create(
      KINDS.capiMachine,
      capiMachineOf(name, annotations.machine ? { meta: { annotations: { ...annotations.machine } } } : {}),
    );
    await env.admin.client.create(
      KINDS.awsMachine,
      awsMachineOf(name, {
        meta: {
          ownerReferences: [controlledBy(machine)],
          ...(annotations.infra ? { annotations: { ...annotations.infra } } : {}),
        },
      }),
    );
  };
  const capiRunning = (env: Env, name: string) =>
    eventually(`CAPI Machine ${name} Running`, async () => {
      const m = await get(env, KINDS.capiMachine, CAPI_NS, name);
      return getPath(m, ["status", "phase"]) === "Running" ? m : undefined;
    });

  it("unpaused: CAPA provisions the AWSMachine, CAPI copies providerID, nodeRef, Running, infrastructureProvisioned", async () => {
    const env = await start();
    await createPair(env, "m-0");
    const machine = await capiRunning(env, "m-0");
    const infra = await get(env, KINDS.awsMachine, CAPI_NS, "m-0");
    expect(infra.spec?.instanceID).toMatch(/^i-[0-9a-f]+$/);
    expect(infra.spec?.providerID).toBe(`aws:///us-east-1a/${infra.spec?.instanceID}`);
    expect(machine.spec?.providerID).toBe(infra.spec?.providerID);
    expect(getPath(machine, ["status", "initialization", "infrastructureProvisioned"])).toBe(true);
    expect(getPath(machine, ["status", "nodeRef", "name"])).toMatch(/\.ec2\.internal$/);
    expect(machine.metadata?.finalizers).toEqual([FINALIZERS.capiMachine]);
    expect(infra.metadata?.finalizers).toEqual([FINALIZERS.awsMachine]);
    for (const o of [machine, infra])
      expect(conditionOf(o, "Paused")).toMatchObject({ status: "False", reason: "NotPaused" });
    await quiesce(env);
    expect(writesBy(env, IDENTITY.capa)).toEqual([
      "patch infrastructure.cluster.x-k8s.io/awsmachines",
      "patch infrastructure.cluster.x-k8s.io/awsmachines/status",
    ]);
    expect(writesBy(env, IDENTITY.capi)).toEqual([
      "patch cluster.x-k8s.io/machines",
      "patch cluster.x-k8s.io/machines/status",
    ]);
    expect(writesBy(env, IDENTITY.mao)).toEqual([]);
    expect(env.providers.ledger.snapshot().instances).toMatchObject([
      { machineName: "m-0", side: "ClusterAPI" },
    ]);
  });

  it("CAPA provisions an unpaused AWSMachine even when its Machine is paused", async () => {
    const env = await start();
    await createPair(env, "m-0", { machine: paused });
    const infra = await eventually("the AWSMachine provisioned", async () => {
      const a = await get(env, KINDS.awsMachine, CAPI_NS, "m-0");
      return getPath(a, ["status", "initialization", "provisioned"]) === true ? a : undefined;
    });
    expect(infra.spec?.instanceID).toMatch(/^i-/);
    expect(getPath(infra, ["status", "initialization", "infrastructureProvisioned"])).toBe(true);
    await quiesce(env);
    const machine = await get(env, KINDS.capiMachine, CAPI_NS, "m-0");
    expect(conditionOf(machine, "Paused")).toMatchObject({ status: "True", reason: "Paused" });
    expect(machine.spec?.providerID).toBeUndefined();
    // Cluster API adds its own finalizer before it checks the pause (SPEC v5 §3.1 step 9); nothing else moved.
    expect(machine.metadata?.finalizers ?? []).toEqual([FINALIZERS.capiMachine]);
  });

  it("a paused AWSMachine gets Paused=True and nothing else", async () => {
    const env = await start();
    await createPair(env, "m-0", { machine: paused, infra: paused });
    await eventually("Paused=True on the AWSMachine", async () => {
      const a = await get(env, KINDS.awsMachine, CAPI_NS, "m-0");
      return conditionOf(a, "Paused")?.status === "True";
    });
    await quiesce(env);
    const infra = await get(env, KINDS.awsMachine, CAPI_NS, "m-0");
    expect(infra.metadata?.finalizers ?? []).toEqual([]);
    expect(infra.spec?.instanceID).toBeUndefined();
    expect(env.providers.ledger.snapshot().instances).toEqual([]);
  });

  it("the CAPI Machine keeps its finalizer until the AWSMachine is NotFound", async () => {
    const env = await start();
    await createPair(env, "m-0");
    await capiRunning(env, "m-0");
    // CAPA stops for this AWSMachine (its own pause), so it will not release its finalizer.
    await env.admin.client.patch(KINDS.awsMachine, CAPI_NS, "m-0", {
      type: "merge",
      body: { metadata: { annotations: paused } },
    });
    await eventually(
      "CAPA acknowledged the pause",
      async () => conditionOf(await get(env, KINDS.awsMachine, CAPI_NS, "m-0"), "Paused")?.status === "True",
    );
    await env.admin.client.delete(KINDS.capiMachine, CAPI_NS, "m-0");
    await eventually("the CAPI stand-in deleted the AWSMachine", async () =>
      isDeleting(await get(env, KINDS.awsMachine, CAPI_NS, "m-0")),
    );
    await quiesce(env);
    const held = await get(env, KINDS.capiMachine, CAPI_NS, "m-0");
    expect(isDeleting(held)).toBe(true);
    expect(held.metadata?.finalizers).toEqual([FINALIZERS.capiMachine]);
    expect(env.providers.ledger.snapshot().instances[0]?.terminatedSeq).toBeUndefined();

    await env.admin.client.patch(KINDS.awsMachine, CAPI_NS, "m-0", {
      type: "json",
      body: [{ op: "remove", path: "/metadata/annotations/cluster.x-k8s.io~1paused" }],
    });
    await eventually("the CAPI Machine gone", () => gone(env, KINDS.capiMachine, CAPI_NS, "m-0"));
    expect(await gone(env, KINDS.awsMachine, CAPI_NS, "m-0")).toBe(true);
    expect(env.providers.ledger.snapshot().instances[0]).toMatchObject({
      terminatedBy: "ClusterAPI",
      terminatedFor: { object: `AWSMachine ${CAPI_NS}/m-0`, deleting: true },
    });
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });

  it("a CAPI MachineSet scales Machines and their AWSMachines from the template, up and down", async () => {
    const env = await start();
    await env.admin.client.create(KINDS.awsMachineTemplate, awsMachineTemplateOf("workers"));
    await env.admin.client.create(KINDS.capiMachineSet, capiMachineSetOf("workers", 2));
    const runningPairs = (n: number) =>
      eventually(`${n} Running Machines with AWSMachines`, async () => {
        const machines = (await env.admin.client.list(KINDS.capiMachine, { namespace: CAPI_NS })).items;
        const infras = (await env.admin.client.list(KINDS.awsMachine, { namespace: CAPI_NS })).items;
        const ok =
          machines.length === n &&
          infras.length === n &&
          machines.every((m) => getPath(m, ["status", "phase"]) === "Running");
        return ok ? { machines, infras } : undefined;
      });
    const { machines, infras } = await runningPairs(2);
    expect(infras.map(nameOf).sort()).toEqual(machines.map(nameOf).sort());
    for (const a of infras) {
      expect(a.spec?.instanceType).toBe("m6i.xlarge");
      expect(a.spec?.providerID).toMatch(/^aws:\/\/\/us-east-1b\//);
      expect(a.metadata?.ownerReferences).toMatchObject([
        { kind: "Machine", name: nameOf(a), controller: true },
      ]);
    }
    const set = await eventually("status.readyReplicas 2", async () => {
      const s = await get(env, KINDS.capiMachineSet, CAPI_NS, "workers");
      return getPath(s, ["status", "readyReplicas"]) === 2 ? s : undefined;
    });
    expect(set.metadata?.finalizers).toEqual([FINALIZERS.capiMachineSet]);
    expect(set.status).toMatchObject({ replicas: 2, availableReplicas: 2, observedGeneration: 1 });

    await env.admin.client.patch(KINDS.capiMachineSet, CAPI_NS, "workers", {
      type: "merge",
      body: { spec: { replicas: 1 } },
    });
    await runningPairs(1);
    await quiesce(env);
    const snapshot = env.providers.ledger.snapshot();
    expect(snapshot.instances).toHaveLength(2);
    expect(snapshot.instances.filter((i) => i.terminatedSeq !== undefined)).toHaveLength(1);
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
    expect(writesBy(env, IDENTITY.capi)).toEqual(
      expect.arrayContaining([
        "create cluster.x-k8s.io/machines",
        "create infrastructure.cluster.x-k8s.io/awsmachines",
        "delete cluster.x-k8s.io/machines",
        "delete infrastructure.cluster.x-k8s.io/awsmachines",
      ]),
    );
  });

  it("a paused CAPI MachineSet acknowledges and does not scale", async () => {
    const env = await start();
    await env.admin.client.create(KINDS.awsMachineTemplate, awsMachineTemplateOf("workers"));
    await env.admin.client.create(
      KINDS.capiMachineSet,
      capiMachineSetOf("workers", 2, { meta: { annotations: paused } }),
    );
    await eventually(
      "Paused=True",
      async () =>
        conditionOf(await get(env, KINDS.capiMachineSet, CAPI_NS, "workers"), "Paused")?.status === "True",
    );
    await quiesce(env);
    expect(await names(env, KINDS.capiMachine, CAPI_NS)).toEqual([]);
  });
});

describe("stand-ins under faults and crashes", () => {
  it("half of the stand-ins' writes fail: still exactly one instance per Machine, all Running", async () => {
    const env = await start();
    env.server.faults.set({
      rate500: 0.5,
      seed: 7,
      match: { verbs: ["patch", "create", "delete"], users: Object.values(IDENTITY) },
    });
    for (const name of ["worker-0", "worker-1", "worker-2"])
      await env.admin.client.create(KINDS.mapiMachine, mapiMachineOf(name));
    for (const name of ["m-0", "m-1"]) {
      const machine = await env.admin.client.create(KINDS.capiMachine, capiMachineOf(name));
      await env.admin.client.create(
        KINDS.awsMachine,
        awsMachineOf(name, { meta: { ownerReferences: [controlledBy(machine)] } }),
      );
    }
    await eventually(
      "every Machine Running",
      async () => {
        const mapi = (await env.admin.client.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items;
        const capi = (await env.admin.client.list(KINDS.capiMachine, { namespace: CAPI_NS })).items;
        return [...mapi, ...capi].every((m) => getPath(m, ["status", "phase"]) === "Running");
      },
      20_000,
    );
    // Fault-free, MAO needs exactly 4 status writes per Machine (authority, Paused, Provisioning, Running):
    // more proves writes failed and were retried.
    const statusPatches =
      env.server.counters.snapshot().byKey[`patch machine.openshift.io/machines/status ${IDENTITY.mao}`] ?? 0;
    expect(statusPatches).toBeGreaterThan(12);
    const instances = env.providers.ledger.snapshot().instances;
    expect(instances.map((i) => i.machineName).sort()).toEqual([
      "m-0",
      "m-1",
      "worker-0",
      "worker-1",
      "worker-2",
    ]);
    env.server.faults.clear();
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });
});

describe("leader-elected stand-ins", () => {
  it("a crashed MAO leader's successor terminates the instance its predecessor created, once", async () => {
    const { as, admin } = await startCluster();
    const ledger = createInstanceLedger({ requireRecordedDeletes: true });
    const replica = () =>
      startMaoStandIn({
        connection: as(IDENTITY.mao),
        mapiNamespace: MAPI_NS,
        capiNamespace: CAPI_NS,
        logger: silentLogger(),
        ledger,
        leaderElection: true,
        leaseTimings: { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 50 },
      });
    const replicas = [await replica(), await replica()];
    stopAfterTest(() => Promise.all(replicas.map((r) => r.stop())).then(() => undefined));
    const leader = await eventually("a leader", async () => replicas.find((r) => r.leading()));
    const follower = replicas.find((r) => r !== leader)!;
    expect(follower.leading()).toBe(false);

    await admin.client.create(KINDS.mapiMachine, mapiMachineOf("worker-0"));
    await eventually("Running", async () => {
      const m = await admin.client.get(KINDS.mapiMachine, MAPI_NS, "worker-0");
      return getPath(m, ["status", "phase"]) === "Running";
    });
    await leader.stop(); // a crash: the Lease is not released
    ledger.deletionRequested("worker-0", "the test deletes it");
    await admin.client.delete(KINDS.mapiMachine, MAPI_NS, "worker-0");
    await eventually("the successor leads", async () => follower.leading());
    await eventually("the Machine gone", async () => {
      try {
        await admin.client.get(KINDS.mapiMachine, MAPI_NS, "worker-0");
        return false;
      } catch (e) {
        return e instanceof NotFoundError;
      }
    });
    const snapshot = ledger.snapshot();
    expect(snapshot.instances).toHaveLength(1);
    expect(snapshot.events.filter((e) => e.type === "terminated")).toHaveLength(1);
    expect(ledger.violations({ mapi: [], capi: [] })).toEqual([]);
  });
});
