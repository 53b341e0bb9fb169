/**
 * The stand-ins as local mode runs them (`npm start -- --seed demo`): the local cluster of src/local with
 * the demo seed written first, then `startLocalSimulatedProviders` leader-elected under the kubeconfig's
 * `mao`, `capi` and `capa` contexts. The seeded instances are adopted by the ledger (not created again),
 * every seeded MAPI Machine is Running with a providerID and acknowledged, and scaling a seeded MachineSet
 * provisions one new instance — with no ledger violation.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flushMicrotasks } from "../../src/kube/clock.js";
import { KINDS } from "../../src/kube/kinds.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import type { LocalCluster } from "../../src/local/cluster.js";
import { startLocalCluster } from "../../src/local/cluster.js";
import { seedDemo } from "../../src/local/demo.js";
import { createCertificateAuthority } from "../../src/server/certs.js";
import type { SimulatedProviders } from "../../src/simulate/index.js";
import { createInstanceLedger, startLocalSimulatedProviders } from "../../src/simulate/index.js";
import { silentLogger } from "../kube/fakes.js";
import { NS } from "./builders.js";

let stateDir = "";
let local: LocalCluster;
let providers: SimulatedProviders;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "simulate-local-"));
  local = await startLocalCluster({
    host: "127.0.0.1",
    port: 0,
    stateDir,
    ...NS,
    controllerUsers: [],
    webhookCaPem: createCertificateAuthority("unused webhook CA").certPem,
    logger: silentLogger(),
  });
  await seedDemo(local, NS);
  providers = await startLocalSimulatedProviders({
    kubeconfigText: local.kubeconfigText,
    ...NS,
    logger: silentLogger(),
    ledger: createInstanceLedger(),
    provisioningDelayMs: 0,
  });
}, 30_000);

afterAll(async () => {
  await providers?.stop();
  await local?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

async function eventually<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const quiesce = async (): Promise<void> => {
  let calm = 0;
  await eventually("the stand-ins to go idle", async () => {
    await local.api.settled();
    await flushMicrotasks();
    const idle = [providers.mao, providers.capi, providers.capa].every((s) => s.leading() && s.idle());
    calm = idle ? calm + 1 : 0;
    return calm >= 5;
  });
};

const admin = () => local.clientAs("admin");
const existing = async () => ({
  mapi: (await admin().list(KINDS.mapiMachine, { namespace: NS.mapiNamespace })).items.map(nameOf),
  capi: (await admin().list(KINDS.capiMachine, { namespace: NS.capiNamespace })).items.map(nameOf),
});

describe("simulated providers in local mode with the demo seed", () => {
  it("adopts the seeded instances: every MAPI Machine Running with a providerID, nothing created", async () => {
    await quiesce();
    const machines = (await admin().list(KINDS.mapiMachine, { namespace: NS.mapiNamespace })).items;
    expect(machines).toHaveLength(3);
    for (const m of machines) {
      expect(getPath(m, ["status", "phase"])).toBe("Running");
      expect(m.spec?.providerID).toMatch(/^aws:\/\/\/us-east-1[abc]\/i-[0-9a-f]+$/);
    }
    const snapshot = providers.ledger.snapshot();
    expect(snapshot.instances.map((i) => i.side)).toEqual(["existing", "existing", "existing"]);
    expect(snapshot.instances.map((i) => i.providerID).sort()).toEqual(
      machines.map((m) => m.spec?.providerID).sort(),
    );
    for (const set of (await admin().list(KINDS.mapiMachineSet, { namespace: NS.mapiNamespace })).items)
      expect(conditionOf(set, "Paused")?.status).toBe("False");
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });

  it("scaling a seeded MachineSet up provisions exactly one new instance", async () => {
    const [set] = (await admin().list(KINDS.mapiMachineSet, { namespace: NS.mapiNamespace })).items;
    await admin().patch(KINDS.mapiMachineSet, NS.mapiNamespace, nameOf(set), {
      type: "merge",
      body: { spec: { replicas: 2 } },
    });
    const added = await eventually("a new Running Machine", async () => {
      const items = (await admin().list(KINDS.mapiMachine, { namespace: NS.mapiNamespace })).items;
      const fresh = items.filter((m) => m.metadata?.generateName === `${nameOf(set)}-`);
      return fresh.length === 1 && getPath(fresh[0], ["status", "phase"]) === "Running"
        ? fresh[0]
        : undefined;
    });
    await quiesce();
    const created = providers.ledger.snapshot().instances.filter((i) => i.side === "MachineAPI");
    expect(created).toMatchObject([{ machineName: nameOf(added), providerID: added.spec?.providerID }]);
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });
});
