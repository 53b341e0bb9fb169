/**
 * The stand-ins as local mode runs them: the local cluster of src/local (kubeconfig contexts per identity,
 * CRDs, CAPA's defaulting webhook) with the demo's MachineSets and one Machine that was provisioned before
 * the stand-ins started (as a seed that writes provisioned Machines leaves it), then
 * `startLocalSimulatedProviders` leader-elected under the `mao`, `capi` and `capa` contexts. The MachineSets'
 * Machines are created and provisioned by the stand-ins, the pre-provisioned instance is adopted (not
 * created again), and scaling a set provisions exactly one new instance — with no ledger violation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flushMicrotasks } from "../../src/kube/clock.js";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import type { LocalCluster } from "../../src/local/cluster.js";
import { demoSeed } from "../../src/local/seed.js";
import type { SimulatedProviders } from "../../src/simulate/index.js";
import { waitFor } from "../support/wait.js";
import { NS } from "./builders.js";
import { type LocalStandIns, startLocalStandIns } from "./local.js";

const PREEXISTING = "aws:///us-east-1c/i-05a3c9e1b7d2f7";
let standIns: LocalStandIns | undefined;
let local: LocalCluster;
let providers: SimulatedProviders;

beforeAll(async () => {
  standIns = await startLocalStandIns("simulate-local-", async (cluster) => {
    const seed = demoSeed(NS);
    for (const set of seed.machineSets) await cluster.clientAs("admin").create(KINDS.mapiMachineSet, set);
    // A Machine MAO provisioned before this process started: providerID, finalizer, Running.
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
  });
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

describe("simulated providers in local mode with the demo MachineSets", () => {
  it("MachineSet Machines are created and provisioned; the pre-provisioned instance is adopted", async () => {
    const machines = await waitFor("three Running Machines", async () => {
      const items = (await admin().list(KINDS.mapiMachine, { namespace: NS.mapiNamespace })).items;
      return items.length === 3 && items.every((m) => getPath(m, ["status", "phase"]) === "Running")
        ? items
        : undefined;
    });
    await quiesce();
    for (const m of machines) {
      expect(m.spec?.providerID).toMatch(/^aws:\/\/\/us-east-1[abc]\/i-[0-9a-f]+$/);
      expect(conditionOf(m, "Paused")?.status).toBe("False");
    }
    const snapshot = providers.ledger.snapshot();
    expect(snapshot.instances.map((i) => i.side).sort()).toEqual(["MachineAPI", "MachineAPI", "existing"]);
    expect(snapshot.instances.find((i) => i.side === "existing")?.providerID).toBe(PREEXISTING);
    expect(snapshot.instances.map((i) => i.providerID).sort()).toEqual(
      machines.map((m) => m.spec?.providerID).sort(),
    );
    for (const set of (await admin().list(KINDS.mapiMachineSet, { namespace: NS.mapiNamespace })).items)
      expect(conditionOf(set, "Paused")?.status).toBe("False");
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });

  it("scaling a MachineSet up provisions exactly one new instance", async () => {
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
