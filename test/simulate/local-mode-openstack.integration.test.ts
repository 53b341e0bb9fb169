/**
 * The stand-ins as local mode runs them on an OpenStack cluster (SPEC §1.1, §5.5): the local cluster of
 * src/local with the OpenStack demo's MachineSets and one Machine provisioned before the stand-ins started,
 * then `startLocalSimulatedProviders` with `platform: openstackPlatform`, leader-elected under the `mao`,
 * `capi` and `capo` contexts. The MachineSets' Machines get servers (`openstack:///<uuid>`), the
 * pre-provisioned server is adopted (not created again), scaling a set creates exactly one more server, and
 * no ledger invariant breaks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flushMicrotasks } from "../../src/kube/clock.js";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import type { LocalCluster } from "../../src/local/cluster.js";
import { demoSeed } from "../../src/local/seed.js";
import { openstackPlatform } from "../../src/platforms/openstack/index.js";
import type { SimulatedProviders } from "../../src/simulate/index.js";
import { waitFor } from "../support/wait.js";
import { NS } from "./builders.js";
import { type LocalStandIns, startLocalStandIns } from "./local.js";

const PREEXISTING = "openstack:///3f7c2a9e-1b4d-4e6f-8a2c-00005a3c9e1b";
let standIns: LocalStandIns | undefined;
let local: LocalCluster;
let providers: SimulatedProviders;

beforeAll(async () => {
  standIns = await startLocalStandIns(
    "simulate-local-openstack-",
    async (cluster) => {
      const seed = demoSeed(NS, "OpenStack");
      for (const set of seed.machineSets) await cluster.clientAs("admin").create(KINDS.mapiMachineSet, set);
      // A Machine MAPO provisioned before this process started: providerID, finalizer, Running.
      const mao = cluster.clientAs("mao");
      const standalone = seed.machines.find((m) => m.ownerSetName === undefined)!.machine;
      const created = await mao.create(KINDS.mapiMachine, {
        ...standalone,
        metadata: { ...standalone.metadata, finalizers: [FINALIZERS.mapiMachine] },
        spec: { ...standalone.spec, authoritativeAPI: "MachineAPI", providerID: PREEXISTING },
      });
      await mao.updateStatus(KINDS.mapiMachine, {
        ...created,
        status: { authoritativeAPI: "MachineAPI", phase: "Running" },
      });
    },
    openstackPlatform,
  );
  ({ local, providers } = standIns);
}, 30_000);

afterAll(async () => {
  await standIns?.stop();
});

const quiesce = async (): Promise<void> => {
  let calm = 0;
  await waitFor("the stand-ins to go idle", async () => {
    await local.api.settled();
    await flushMicrotasks();
    const idle = [providers.mao, providers.capi, providers.infraProvider].every(
      (s) => s.leading() && s.idle(),
    );
    calm = idle ? calm + 1 : 0;
    return calm >= 5;
  });
};

const admin = () => local.clientAs("admin");
const existing = async () => ({
  mapi: (await admin().list(KINDS.mapiMachine, { namespace: NS.mapiNamespace })).items.map(nameOf),
  capi: (await admin().list(KINDS.capiMachine, { namespace: NS.capiNamespace })).items.map(nameOf),
});

describe("simulated providers in local mode with the OpenStack demo's MachineSets", () => {
  it("runs CAPO, not CAPA, under the capo context", () => {
    expect(providers.infraProvider.name).toBe("capo");
  });

  it("MachineSet Machines get servers; the pre-provisioned server is adopted", async () => {
    const machines = await waitFor("three Running Machines", async () => {
      const items = (await admin().list(KINDS.mapiMachine, { namespace: NS.mapiNamespace })).items;
      return items.length === 3 && items.every((m) => getPath(m, ["status", "phase"]) === "Running")
        ? items
        : undefined;
    });
    await quiesce();
    for (const m of machines) {
      expect(m.spec?.providerID).toMatch(/^openstack:\/\/\/[0-9a-f-]{36}$/);
      expect(conditionOf(m, "Paused")?.status).toBe("False");
    }
    const snapshot = providers.ledger.snapshot();
    expect(snapshot.instances.map((i) => i.side).sort()).toEqual(["MachineAPI", "MachineAPI", "existing"]);
    expect(snapshot.instances.find((i) => i.side === "existing")?.providerID).toBe(PREEXISTING);
    expect(snapshot.instances.map((i) => i.providerID).sort()).toEqual(
      machines.map((m) => m.spec?.providerID).sort(),
    );
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });

  it("scaling a MachineSet up creates exactly one new server", async () => {
    const [set] = (await admin().list(KINDS.mapiMachineSet, { namespace: NS.mapiNamespace })).items;
    const before = providers.ledger.snapshot().instances.length;
    await admin().patch(KINDS.mapiMachineSet, NS.mapiNamespace, nameOf(set), {
      type: "merge",
      body: { spec: { replicas: 2 } },
    });
    await waitFor("two Running Machines in the set", async () => {
      const items = (await admin().list(KINDS.mapiMachine, { namespace: NS.mapiNamespace })).items;
      const mine = items.filter((m) => m.metadata?.ownerReferences?.[0]?.name === nameOf(set));
      return mine.length === 2 && mine.every((m) => getPath(m, ["status", "phase"]) === "Running");
    });
    await quiesce();
    expect(providers.ledger.snapshot().instances).toHaveLength(before + 1);
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });
});
