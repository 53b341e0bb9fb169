/**
 * The stand-ins of an OpenStack cluster against the local API server (SPEC §1.1, §5.5), mirroring the AWS
 * ones (providers.integration.test.ts): CAPO provisions an unpaused OpenStackMachine once a Machine owns it
 * (a server in the ledger, `openstack:///<uuid>`, status ready/ACTIVE) and Cluster API copies providerID and
 * runs the Machine; CAPO honours only its own pause; the CAPI Machine finalizer is held until the
 * OpenStackMachine is NotFound; a CAPI MachineSet stamps OpenStackMachines from its OpenStackMachineTemplate;
 * MAO provisions an OpenstackProviderSpec Machine. What differs from AWS on purpose: CAPO finds a server by
 * the Machine's name, so the server MAO made for the twin is adopted after a handover, never created again.
 */
import { describe, expect, it } from "vitest";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, getPath, isDeleting, nameOf } from "../../src/kube/object.js";
import { openstackPlatform } from "../../src/platforms/openstack/index.js";
import {
  CAPI_NS,
  capiOpenStackMachineOf,
  capiOpenStackMachineSetOf,
  controlledBy,
  MAPI_NS,
  mapiOpenStackMachineOf,
  OS_ZONE,
  openStackMachineOf,
  openStackMachineTemplateOf,
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

const { start } = standInClusters();
const startOpenStack = () => start({ platform: openstackPlatform });

const SERVER_PROVIDER_ID = /^openstack:\/\/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A CAPI Machine and its OpenStackMachine (owned by the Machine, as the sync creates them). */
const createPair = async (
  env: Env,
  name: string,
  options: { machine?: object; infra?: object; infraSpec?: Record<string, unknown> } = {},
) => {
  const machine = await env.admin.client.create(
    KINDS.capiMachine,
    capiOpenStackMachineOf(name, options.machine ? { meta: { annotations: { ...options.machine } } } : {}),
  );
  await env.admin.client.create(
    KINDS.openStackMachine,
    openStackMachineOf(name, {
      meta: {
        ownerReferences: [controlledBy(machine)],
        ...(options.infra ? { annotations: { ...options.infra } } : {}),
      },
      ...(options.infraSpec ? { spec: options.infraSpec } : {}),
    }),
  );
};
const capiRunning = (env: Env, name: string) =>
  eventually(`CAPI Machine ${name} Running`, async () => {
    const m = await get(env, KINDS.capiMachine, CAPI_NS, name);
    return getPath(m, ["status", "phase"]) === "Running" ? m : undefined;
  });

describe("CAPI and CAPO stand-ins on an OpenStack cluster", () => {
  it("unpaused: CAPO creates one server and reports it; CAPI copies providerID, names the node, runs the Machine", async () => {
    const env = await startOpenStack();
    expect(env.providers.infraProvider.name).toBe("capo");
    await createPair(env, "m-0");
    const machine = await capiRunning(env, "m-0");
    const infra = await get(env, KINDS.openStackMachine, CAPI_NS, "m-0");
    const [server] = env.providers.ledger.snapshot().instances;
    expect(server).toMatchObject({ machineName: "m-0", side: "ClusterAPI" });
    expect(infra.spec?.providerID).toMatch(SERVER_PROVIDER_ID);
    expect(infra.spec).toMatchObject({ instanceID: server?.instanceId, providerID: server?.providerID });
    expect(infra.status).toMatchObject({
      ready: true,
      instanceID: server?.instanceId,
      instanceState: "ACTIVE",
    });
    expect(machine.spec?.providerID).toBe(server?.providerID);
    expect(getPath(machine, ["status", "nodeRef", "name"])).toBe("m-0");
    expect(getPath(machine, ["status", "initialization", "infrastructureProvisioned"])).toBe(true);
    expect(machine.metadata?.finalizers).toEqual([FINALIZERS.capiMachine]);
    expect(infra.metadata?.finalizers).toEqual([FINALIZERS.openStackMachine]);
    for (const o of [machine, infra])
      expect(conditionOf(o, "Paused")).toMatchObject({ status: "False", reason: "NotPaused" });
    await quiesce(env);
    expect(writesBy(env, IDENTITY.capo)).toEqual([
      "patch infrastructure.cluster.x-k8s.io/openstackmachines",
      "patch infrastructure.cluster.x-k8s.io/openstackmachines/status",
    ]);
    expect(writesBy(env, IDENTITY.capi)).toEqual([
      "patch cluster.x-k8s.io/machines",
      "patch cluster.x-k8s.io/machines/status",
    ]);
    expect(writesBy(env, IDENTITY.capa)).toEqual([]);
    expect(writesBy(env, IDENTITY.mao)).toEqual([]);
    expect(env.providers.ledger.snapshot().instances).toHaveLength(1);
  });

  it("CAPO provisions an unpaused OpenStackMachine even when its Machine is paused", async () => {
    const env = await startOpenStack();
    await createPair(env, "m-0", { machine: paused });
    const infra = await eventually("the OpenStackMachine provisioned", async () => {
      const o = await get(env, KINDS.openStackMachine, CAPI_NS, "m-0");
      return getPath(o, ["status", "ready"]) === true ? o : undefined;
    });
    expect(infra.spec?.providerID).toMatch(SERVER_PROVIDER_ID);
    await quiesce(env);
    const machine = await get(env, KINDS.capiMachine, CAPI_NS, "m-0");
    expect(conditionOf(machine, "Paused")).toMatchObject({ status: "True", reason: "Paused" });
    expect(machine.spec?.providerID).toBeUndefined();
  });

  it("a paused OpenStackMachine gets Paused=True and nothing else: no finalizer, no server", async () => {
    const env = await startOpenStack();
    await createPair(env, "m-0", { machine: paused, infra: paused });
    await eventually(
      "Paused=True on the OpenStackMachine",
      async () =>
        conditionOf(await get(env, KINDS.openStackMachine, CAPI_NS, "m-0"), "Paused")?.status === "True",
    );
    await quiesce(env);
    const infra = await get(env, KINDS.openStackMachine, CAPI_NS, "m-0");
    expect(infra.metadata?.finalizers ?? []).toEqual([]);
    expect(infra.spec?.instanceID).toBeUndefined();
    expect(env.providers.ledger.snapshot().instances).toEqual([]);
  });

  it("the CAPI Machine keeps its finalizer until the OpenStackMachine is NotFound; the server is deleted once", async () => {
    const env = await startOpenStack();
    await createPair(env, "m-0");
    await capiRunning(env, "m-0");
    // CAPO stops for this OpenStackMachine (its own pause), so it will not release its finalizer.
    await env.admin.client.patch(KINDS.openStackMachine, CAPI_NS, "m-0", {
      type: "merge",
      body: { metadata: { annotations: paused } },
    });
    await eventually(
      "CAPO acknowledged the pause",
      async () =>
        conditionOf(await get(env, KINDS.openStackMachine, CAPI_NS, "m-0"), "Paused")?.status === "True",
    );
    await env.admin.client.delete(KINDS.capiMachine, CAPI_NS, "m-0");
    await eventually("the CAPI stand-in deleted the OpenStackMachine", async () =>
      isDeleting(await get(env, KINDS.openStackMachine, CAPI_NS, "m-0")),
    );
    await quiesce(env);
    const held = await get(env, KINDS.capiMachine, CAPI_NS, "m-0");
    expect(isDeleting(held)).toBe(true);
    expect(held.metadata?.finalizers).toEqual([FINALIZERS.capiMachine]);
    expect(env.providers.ledger.snapshot().instances[0]?.terminatedSeq).toBeUndefined();

    await env.admin.client.patch(KINDS.openStackMachine, CAPI_NS, "m-0", {
      type: "json",
      body: [{ op: "remove", path: "/metadata/annotations/cluster.x-k8s.io~1paused" }],
    });
    await eventually("the CAPI Machine gone", () => gone(env, KINDS.capiMachine, CAPI_NS, "m-0"));
    expect(await gone(env, KINDS.openStackMachine, CAPI_NS, "m-0")).toBe(true);
    const snapshot = env.providers.ledger.snapshot();
    expect(snapshot.instances).toMatchObject([
      {
        terminatedBy: "ClusterAPI",
        terminatedFor: { object: `OpenStackMachine ${CAPI_NS}/m-0`, deleting: true },
      },
    ]);
    expect(snapshot.events.filter((e) => e.type === "terminated")).toHaveLength(1);
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });

  it("a CAPI MachineSet scales Machines and OpenStackMachines from its OpenStackMachineTemplate, up and down", async () => {
    const env = await startOpenStack();
    await env.admin.client.create(KINDS.openStackMachineTemplate, openStackMachineTemplateOf("workers"));
    await env.admin.client.create(KINDS.capiMachineSet, capiOpenStackMachineSetOf("workers", 2));
    const runningPairs = (n: number) =>
      eventually(`${n} Running Machines with OpenStackMachines`, async () => {
        const machines = (await env.admin.client.list(KINDS.capiMachine, { namespace: CAPI_NS })).items;
        const infras = (await env.admin.client.list(KINDS.openStackMachine, { namespace: CAPI_NS })).items;
        const ok =
          machines.length === n &&
          infras.length === n &&
          machines.every((m) => getPath(m, ["status", "phase"]) === "Running");
        return ok ? { machines, infras } : undefined;
      });
    const { machines, infras } = await runningPairs(2);
    expect(infras.map(nameOf).sort()).toEqual(machines.map(nameOf).sort());
    for (const o of infras) {
      expect(o.spec?.flavor).toBe("m1.xlarge");
      expect(o.spec?.providerID).toMatch(SERVER_PROVIDER_ID);
      expect(o.metadata?.ownerReferences).toMatchObject([
        { kind: "Machine", name: nameOf(o), controller: true },
      ]);
    }
    for (const m of machines)
      expect(m.spec?.infrastructureRef).toMatchObject({ kind: "OpenStackMachine", name: nameOf(m) });

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
        "create infrastructure.cluster.x-k8s.io/openstackmachines",
        "delete cluster.x-k8s.io/machines",
        "delete infrastructure.cluster.x-k8s.io/openstackmachines",
      ]),
    );
  });
});

describe("MAO stand-in with the OpenStack actuator", () => {
  it("provisions an OpenstackProviderSpec Machine: openstack:///<uuid>, providerStatus ACTIVE, flavor and zone labels", async () => {
    const env = await startOpenStack();
    await env.admin.client.create(KINDS.mapiMachine, mapiOpenStackMachineOf("worker-0"));
    const running = await eventually("Running", async () => {
      const m = await get(env, KINDS.mapiMachine, MAPI_NS, "worker-0");
      return getPath(m, ["status", "phase"]) === "Running" ? m : undefined;
    });
    const [server] = env.providers.ledger.snapshot().instances;
    expect(server).toMatchObject({ machineName: "worker-0", side: "MachineAPI" });
    expect(running.spec?.providerID).toBe(server?.providerID);
    expect(running.spec?.providerID).toMatch(SERVER_PROVIDER_ID);
    expect(getPath(running, ["status", "providerStatus"])).toEqual({
      instanceId: server?.instanceId,
      instanceState: "ACTIVE",
    });
    expect(running.metadata?.labels).toMatchObject({
      "machine.openshift.io/instance-type": "m1.xlarge",
      "machine.openshift.io/zone": OS_ZONE,
    });
    expect(running.metadata?.annotations).toMatchObject({ "machine.openshift.io/instance-state": "ACTIVE" });
    expect(getPath(running, ["status", "nodeRef", "name"])).toBe("worker-0");

    await env.admin.client.delete(KINDS.mapiMachine, MAPI_NS, "worker-0");
    await eventually("the Machine gone", () => gone(env, KINDS.mapiMachine, MAPI_NS, "worker-0"));
    expect(env.providers.ledger.snapshot().instances).toMatchObject([
      { terminatedBy: "MachineAPI", terminatedFor: { deleting: true } },
    ]);
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });
});

describe("CAPO finds servers by name (never a second server for one Machine)", () => {
  it("the server MAO created for the twin is adopted by an OpenStackMachine naming it, as the sync writes it after a handover", async () => {
    const env = await startOpenStack();
    await env.admin.client.create(KINDS.mapiMachine, mapiOpenStackMachineOf("worker-0"));
    const mapi = await eventually("Running", async () => {
      const m = await get(env, KINDS.mapiMachine, MAPI_NS, "worker-0");
      return getPath(m, ["status", "phase"]) === "Running" ? m : undefined;
    });
    // What the converter writes for the twin: the MAPI providerID, no instanceID (CAPO fills that in).
    await createPair(env, "worker-0", {
      infraSpec: { ...openStackMachineOf("worker-0").spec, providerID: mapi.spec?.providerID },
    });
    const infra = await eventually("the OpenStackMachine reports the server", async () => {
      const o = await get(env, KINDS.openStackMachine, CAPI_NS, "worker-0");
      return getPath(o, ["status", "ready"]) === true ? o : undefined;
    });
    await quiesce(env);
    const [server, ...others] = env.providers.ledger.snapshot().instances;
    expect(others).toEqual([]);
    expect(server).toMatchObject({ machineName: "worker-0", side: "MachineAPI" });
    expect(infra.spec).toMatchObject({ instanceID: server?.instanceId, providerID: mapi.spec?.providerID });
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });

  it("a server the ledger never saw (seeded with its providerID) is adopted, not created", async () => {
    const env = await startOpenStack();
    const providerID = "openstack:///3f7c2a9e-1b4d-4e6f-8a2c-5a3c9e1b7d2f";
    await createPair(env, "m-0", { infraSpec: { ...openStackMachineOf("m-0").spec, providerID } });
    await capiRunning(env, "m-0");
    await quiesce(env);
    expect(env.providers.ledger.snapshot().instances).toMatchObject([
      {
        machineName: "m-0",
        side: "existing",
        providerID,
        instanceId: "3f7c2a9e-1b4d-4e6f-8a2c-5a3c9e1b7d2f",
      },
    ]);
    expect(getPath(await get(env, KINDS.openStackMachine, CAPI_NS, "m-0"), ["spec", "instanceID"])).toBe(
      "3f7c2a9e-1b4d-4e6f-8a2c-5a3c9e1b7d2f",
    );
  });

  it("half of CAPO's and CAPI's writes fail: still exactly one server per Machine, all Running", async () => {
    const env = await startOpenStack();
    env.server.faults.set({
      rate500: 0.5,
      seed: 11,
      match: { verbs: ["patch", "create", "delete"], users: [IDENTITY.capo, IDENTITY.capi] },
    });
    for (const name of ["m-0", "m-1", "m-2"]) await createPair(env, name);
    await eventually(
      "every Machine Running",
      async () => {
        const capi = (await env.admin.client.list(KINDS.capiMachine, { namespace: CAPI_NS })).items;
        return capi.length === 3 && capi.every((m) => getPath(m, ["status", "phase"]) === "Running");
      },
      20_000,
    );
    env.server.faults.clear();
    const instances = env.providers.ledger.snapshot().instances;
    expect(instances.map((i) => i.machineName).sort()).toEqual(["m-0", "m-1", "m-2"]);
    expect(await names(env, KINDS.openStackMachine, CAPI_NS)).toHaveLength(3);
    expect(env.providers.ledger.violations(await existing(env))).toEqual([]);
  });
});
