/**
 * The sync controllers with the simulated providers of SPEC §1.1 (MAO, CAPI and CAPA stand-ins with their
 * real finalizer semantics and the instance ledger) against the local API server with the product's real
 * admission webhook: a Machine and a MachineSet under MachineAPI, a Machine born under ClusterAPI, each
 * through its deletion row of §4.6. The ledger proves the first duty after each: no instance created
 * twice, none leaked, none terminated that was not deleted. Users act as `admin`; nobody plays a provider
 * by hand here. Waiting polls for a state, never asserts elapsed time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError } from "../../src/kube/errors.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import { ANNOTATIONS, KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import { mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, PRODUCT, startHarness } from "./harness.js";

let h: Harness;

beforeAll(async () => {
  // The sync controllers alone (no migration controller), on one shared cache with admission.
  h = await startHarness({ name: "sync-providers", migration: false });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const waitFor = <T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> => h.waitFor(what, probe, timeoutMs);

const gone = (type: ResourceType, namespace: string, name: string) =>
  waitFor(`${type.kind} ${namespace}/${name} gone`, () =>
    h.admin.get(type, namespace, name).then(
      () => false,
      (e: unknown) => e instanceof NotFoundError,
    ),
  );

const instancesOf = (machineName: string) =>
  h.ledger.snapshot().instances.filter((i) => i.machineName === machineName);

/** Everyone idle several polls in a row: the simulation has converged. */
const quiesce = (): Promise<void> => h.quiesce(15_000);

const productMachineWrites = (): number => {
  let n = 0;
  for (const [key, count] of Object.entries(h.counters().byKey)) {
    const [verb, resource, user] = key.split(" ");
    if (user !== PRODUCT || !["create", "update", "patch", "delete"].includes(verb ?? "")) continue;
    if (
      /^(machine\.openshift\.io|cluster\.x-k8s\.io|infrastructure\.cluster\.x-k8s\.io)\//.test(resource ?? "")
    )
      n += count;
  }
  return n;
};

const reconciles = async (): Promise<number> =>
  (await h.metrics.reconcileTotal.get()).values.reduce((sum, v) => sum + v.value, 0);

/**
 * The quiet interval: after convergence, an event that concerns every key of both controllers (a change
 * to the Infrastructure) is reconciled for every key and causes no write by the product to any machine kind.
 */
const expectQuietInterval = async (): Promise<void> => {
  await quiesce();
  const cache = h.productCache();
  const keys = (mapi: ResourceType, capi: ResourceType) =>
    new Set([...cache.list(mapi, MAPI_NS).map(nameOf), ...cache.list(capi, CAPI_NS).map(nameOf)]).size;
  const expected =
    keys(KINDS.mapiMachine, KINDS.capiMachine) + keys(KINDS.mapiMachineSet, KINDS.capiMachineSet);
  const writes = productMachineWrites();
  const before = await reconciles();
  const infra = await h.admin.get(KINDS.infrastructure, "", "cluster");
  await h.admin.patch(KINDS.infrastructure, "", "cluster", {
    type: "merge",
    body: {
      metadata: {
        resourceVersion: infra.metadata?.resourceVersion,
        annotations: { "sync-test/touched": String(before) },
      },
    },
  });
  await waitFor("every key reconciled", async () => (await reconciles()) >= before + expected);
  await quiesce();
  expect(productMachineWrites()).toBe(writes);
};

const userMachine = (name: string, authority: "MachineAPI" | "ClusterAPI"): KubeObject => {
  const m = mapiMachine(ns, name, "a");
  return { ...m, spec: { ...m.spec, authoritativeAPI: authority } };
};

const synchronized = (type: ResourceType, name: string) =>
  waitFor(`${type.kind} ${name} Synchronized=True`, async () => {
    const o = await h.admin.get(type, MAPI_NS, name);
    return conditionOf(o, "Synchronized")?.status === "True" ? o : undefined;
  });

describe("SPEC §4 with the simulated providers and the instance ledger", () => {
  it("MachineAPI Machine: one instance (MAO's), a paused twin CAPA never provisions; deletion terminates it once", async () => {
    const name = "prov-m1";
    await h.admin.create(KINDS.mapiMachine, userMachine(name, "MachineAPI"));
    await waitFor("MAPI Machine Running and synchronized", async () => {
      const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, name);
      return getPath(o, ["status", "phase"]) === "Running" &&
        conditionOf(o, "Synchronized")?.status === "True"
        ? o
        : undefined;
    });
    await quiesce();
    const aws = await h.admin.get(KINDS.awsMachine, CAPI_NS, name);
    expect(aws.metadata?.annotations?.[ANNOTATIONS.paused]).toBe("");
    expect(conditionOf(aws, "Paused")?.status).toBe("True");
    expect(instancesOf(name)).toMatchObject([{ side: "MachineAPI" }]);

    await h.admin.delete(KINDS.mapiMachine, MAPI_NS, name);
    await gone(KINDS.mapiMachine, MAPI_NS, name);
    await gone(KINDS.capiMachine, CAPI_NS, name);
    await gone(KINDS.awsMachine, CAPI_NS, name);
    await quiesce();
    expect(instancesOf(name)).toHaveLength(1);
    expect(instancesOf(name)[0]?.terminatedBy).toBe("MachineAPI");
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it("Machine born ClusterAPI: CAPA provisions the only instance, mirrored back; deleting the CAPI Machine ends all", async () => {
    const name = "prov-m2";
    await h.admin.create(KINDS.mapiMachine, userMachine(name, "ClusterAPI"));
    const mapi = await waitFor("providerID mirrored to the MAPI copy", async () => {
      const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, name);
      return typeof o.spec?.providerID === "string" && conditionOf(o, "Synchronized")?.status === "True"
        ? o
        : undefined;
    });
    await quiesce();
    expect(instancesOf(name)).toMatchObject([{ side: "ClusterAPI", providerID: mapi.spec?.providerID }]);

    await h.admin.delete(KINDS.capiMachine, CAPI_NS, name);
    await gone(KINDS.capiMachine, CAPI_NS, name);
    await gone(KINDS.awsMachine, CAPI_NS, name);
    await gone(KINDS.mapiMachine, MAPI_NS, name);
    await quiesce();
    expect(instancesOf(name)).toHaveLength(1);
    expect(instancesOf(name)[0]?.terminatedBy).toBe("ClusterAPI");
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it("MachineAPI MachineSet: MAO's Machine gets a paused twin, the paused CAPI MachineSet creates none; quiet once converged", async () => {
    const set = mapiMachineSet(ns, "b", 1);
    const name = nameOf(set);
    await h.admin.create(KINDS.mapiMachineSet, set);
    await synchronized(KINDS.mapiMachineSet, name);
    const machine = await waitFor("MAO's Machine Running and synchronized", async () => {
      const items = (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((m) =>
        nameOf(m).startsWith(`${name}-`),
      );
      return items.length === 1 &&
        getPath(items[0], ["status", "phase"]) === "Running" &&
        conditionOf(items[0], "Synchronized")?.status === "True"
        ? items[0]
        : undefined;
    });
    await quiesce();
    const capiMachines = (await h.admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items.map(nameOf);
    expect(capiMachines.filter((n) => n.startsWith(`${name}-`))).toEqual([nameOf(machine)]);
    expect(h.ledger.snapshot().instances.filter((i) => i.machineName.startsWith(`${name}-`))).toMatchObject([
      { side: "MachineAPI", machineName: nameOf(machine) },
    ]);

    await expectQuietInterval();
    expect(await h.ledgerViolations()).toEqual([]);
  });
  it("deleting that MachineAPI MachineSet: its Machine goes, the instance is terminated once, nothing leaks", async () => {
    const name = nameOf(mapiMachineSet(ns, "b", 1));
    const machines = (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items
      .map(nameOf)
      .filter((n) => n.startsWith(`${name}-`));
    expect(machines).toHaveLength(1);
    const capiSet = await h.admin.get(KINDS.capiMachineSet, CAPI_NS, name);
    const template = String(getPath(capiSet, ["spec", "template", "spec", "infrastructureRef", "name"]));
    await h.admin.delete(KINDS.mapiMachineSet, MAPI_NS, name);
    await gone(KINDS.mapiMachineSet, MAPI_NS, name);
    await gone(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.awsMachineTemplate, CAPI_NS, template);
    for (const m of machines) {
      await gone(KINDS.mapiMachine, MAPI_NS, m);
      await gone(KINDS.capiMachine, CAPI_NS, m);
      await gone(KINDS.awsMachine, CAPI_NS, m);
    }
    await quiesce();
    for (const m of machines)
      expect(instancesOf(m)).toMatchObject([{ side: "MachineAPI", terminatedBy: "MachineAPI" }]);
    expect(await h.ledgerViolations()).toEqual([]);
  });
  it("MachineSet born ClusterAPI: CAPI's Machine is mirrored to MAPI (never provisioned twice); deleting the CAPI set ends all", async () => {
    const base = mapiMachineSet(ns, "c", 1);
    const set = JSON.parse(JSON.stringify(base).replaceAll('"MachineAPI"', '"ClusterAPI"')) as KubeObject;
    const name = nameOf(set);
    await h.admin.create(KINDS.mapiMachineSet, set);
    const mirror = await waitFor("a mirrored MAPI Machine, synchronized", async () => {
      const items = (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((m) =>
        nameOf(m).startsWith(`${name}-`),
      );
      return items.length === 1 &&
        typeof items[0]?.spec?.providerID === "string" &&
        conditionOf(items[0], "Synchronized")?.status === "True"
        ? items[0]
        : undefined;
    });
    expect(mirror.spec?.authoritativeAPI).toBe("ClusterAPI");
    expect(mirror.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "MachineSet",
      name,
      controller: true,
    });
    await quiesce();
    expect(instancesOf(nameOf(mirror))).toMatchObject([
      { side: "ClusterAPI", providerID: mirror.spec?.providerID },
    ]);
    // The CAPI → MAPI direction is quiet once converged too.
    await expectQuietInterval();

    await h.admin.delete(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.mapiMachineSet, MAPI_NS, name);
    await gone(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.capiMachine, CAPI_NS, nameOf(mirror));
    await gone(KINDS.mapiMachine, MAPI_NS, nameOf(mirror));
    await quiesce();
    expect(instancesOf(nameOf(mirror))).toMatchObject([{ side: "ClusterAPI", terminatedBy: "ClusterAPI" }]);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});
