/**
 * Issue 11 item 5 (SPEC §3.2, §7): the whole product in one process (test/integration/harness.ts: local API
 * server, real webhook, sync and migration controllers, simulated MAO/CAPI/CAPA with the instance ledger)
 * while the API server answers ~10 % of the product's requests with 409/429/500 and cuts its watch streams,
 * for a bounded period, with handovers, scale-ups, scale-downs and deletes mixed in. Afterwards everything
 * converges: every handover steady under its target, I1–I4 never violated, the ledger clean (no instance
 * created twice, leaked or terminated unasked), no Synchronized=False left behind. Size: RELIABILITY_SOAK_*.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StableAuthority } from "../src/kube/kinds.js";
import { KINDS } from "../src/kube/kinds.js";
import { conditionOf, getPath, nameOf } from "../src/kube/object.js";
import { mapiMachine, mapiMachineSet } from "../src/local/seed.js";
import { type Harness, MAPI_NS, ns, PRODUCT, startHarness } from "../test/integration/harness.js";
import { SOAK } from "./params.js";
import { recordFigures } from "./report.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: "reliability-soak", watchEverything: true });
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

const zones = ["a", "b", "c"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A user's flip, retried while the webhook refuses it as not ready yet (the twin still provisioning). */
async function flip(
  kind: "Machine" | "MachineSet",
  name: string,
  authority: StableAuthority,
): Promise<number> {
  for (let refusals = 0; ; refusals++) {
    try {
      await h.setSpecAuthority(kind, name, authority);
      return refusals;
    } catch (err) {
      if (refusals > 600 || !/denied the request/.test(String(err))) throw err;
      await sleep(200);
    }
  }
}

describe("item 5: fault soak", () => {
  it(`${SOAK.machines} Machines + ${SOAK.machineSets} MachineSets under 10 % faults and cut watches converge`, async () => {
    const started = performance.now();
    const counters0 = h.counters();
    const machines = Array.from({ length: SOAK.machines }, (_, i) => `soak-m${i}`);
    const sets = Array.from({ length: SOAK.machineSets }, (_, i) => mapiMachineSet(ns, zones[i % 3]!, 2));
    for (const name of machines) h.watch("Machine", name);
    for (const s of sets) h.watch("MachineSet", nameOf(s));

    h.cluster.faults.set({
      rate409: 0.034,
      rate429: 0.033,
      rate500: 0.033,
      dropWatchesEveryMs: 3_000,
      seed: 11,
      match: { users: [PRODUCT] },
    });
    const faultsUntil = performance.now() + SOAK.faultSeconds * 1000;

    for (const [i, name] of machines.entries())
      await h.admin.create(KINDS.mapiMachine, mapiMachine(ns, name, zones[i % 3]!));
    for (const s of sets) await h.admin.create(KINDS.mapiMachineSet, s);
    const running = async (name: string) =>
      getPath(await h.admin.get(KINDS.mapiMachine, MAPI_NS, name), ["status", "phase"]) === "Running";

    // Handovers: every other Machine and half the sets go to Cluster API once they run.
    const target = new Map<string, StableAuthority>();
    const deleted = new Set<string>();
    let refused = 0;
    for (const [i, name] of machines.entries()) {
      if (i % 2 === 0) {
        await h.waitFor(`${name} Running`, () => running(name), 120_000);
        refused += await flip("Machine", name, "ClusterAPI");
        target.set(`Machine/${name}`, "ClusterAPI");
      } else target.set(`Machine/${name}`, "MachineAPI");
    }
    for (const [i, s] of sets.entries()) {
      const authority: StableAuthority = i % 2 === 0 ? "ClusterAPI" : "MachineAPI";
      target.set(`MachineSet/${nameOf(s)}`, authority);
      if (authority === "ClusterAPI") refused += await flip("MachineSet", nameOf(s), "ClusterAPI");
    }
    // Scale-ups and scale-downs on the MachineAPI-authoritative sets; deletes of MachineAPI Machines.
    for (const [i, s] of sets.entries()) {
      if (i % 2 === 1)
        await h.admin.patch(KINDS.mapiMachineSet, MAPI_NS, nameOf(s), {
          type: "merge",
          body: { spec: { replicas: i % 4 === 1 ? 4 : 1 } },
        });
    }
    for (const [i, name] of machines.entries()) {
      if (i % 10 === 3) {
        await h.admin.delete(KINDS.mapiMachine, MAPI_NS, name);
        deleted.add(name);
        target.delete(`Machine/${name}`);
      }
    }
    const remaining = faultsUntil - performance.now();
    if (remaining > 0) await sleep(remaining);
    const counters1 = h.counters();
    h.cluster.faults.clear();
    const faultsEndedAt = performance.now();

    for (const [key, authority] of target) {
      const [kind, name] = key.split("/") as ["Machine" | "MachineSet", string];
      await h.steady({ kind, name }, authority, SOAK.convergeSeconds * 1000);
    }
    for (const name of deleted)
      await h.waitFor(
        `${name} gone on both sides`,
        async () => {
          const e = await h.existing();
          return !e.mapi.includes(name) && !e.capi.includes(name);
        },
        SOAK.convergeSeconds * 1000,
      );
    await h.quiesce(SOAK.convergeSeconds * 1000);
    const convergedAt = performance.now();

    const mapiObjects = [
      ...(await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items,
      ...(await h.admin.list(KINDS.mapiMachineSet, { namespace: MAPI_NS })).items,
    ];
    const unsynchronized = mapiObjects
      .filter((o) => conditionOf(o, "Synchronized")?.status === "False")
      .map((o) => `${o.kind}/${nameOf(o)}`);
    const ledgerViolations = await h.ledgerViolations();
    const ledger = h.ledger.snapshot();
    recordFigures("5-fault-soak", {
      machines: SOAK.machines,
      machineSets: SOAK.machineSets,
      handovers: [...target.values()].filter((a) => a === "ClusterAPI").length,
      deletes: deleted.size,
      flipsRefusedNotReadyThenRetried: refused,
      faultSeconds: SOAK.faultSeconds,
      productRequestsDuringFaults: (counters1.byUser[PRODUCT] ?? 0) - (counters0.byUser[PRODUCT] ?? 0),
      apiRequestsTotal: h.counters().total,
      secondsFaultsEndToConverged: Math.round(convergedAt - faultsEndedAt) / 1000,
      secondsTotal: Math.round(performance.now() - started) / 1000,
      instances: ledger.instances.length,
      invariantViolations: h.violations().length,
      ledgerViolations: ledgerViolations.length,
      unsynchronized: unsynchronized.length,
    });
    expect(h.violations()).toEqual([]);
    expect(ledgerViolations).toEqual([]);
    expect(unsynchronized).toEqual([]);
  });
});
