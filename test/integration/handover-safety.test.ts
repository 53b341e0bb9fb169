/**
 * Issue 8's integration proofs on the whole product (test/integration/harness.ts): the product's write
 * count per handover broken down by step (migration steps from the migration controller's own "wrote" log
 * lines, the rest of the product identity's machine-kind writes are the sync controllers'), and SPEC §3.5 —
 * the MAPI Machine or its CAPI twin deleted while status is Migrating, early (waiting for the pause
 * acknowledgement: roll back, then the old side deletes) and after step 9 began (complete to the target,
 * then the new side deletes). I1–I4 are checked after every watch event, the ledger (I6) at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { finalizersOf } from "../../src/kube/object.js";
import { mapiMachineSet } from "../../src/local/seed.js";
import { statusAuthorityReading } from "../../src/protocol/authority.js";
import {
  CAPI_NS,
  type Harness,
  MAPI_NS,
  ns,
  PRODUCT,
  productMachineWrites,
  startHarness,
  sumOf,
  type Watched,
} from "./harness.js";
import { createRunningMachine } from "./support.js";

/**
 * The product's target for one Machine handover is 12 writes (issue 8). Measured: the migration steps take
 * exactly 7 either way (pinned below; SPEC v5: Cluster API's own finalizer is on the paused twin already, so
 * step 8 toward ClusterAPI adds CAPA's only and step 9 toward MachineAPI removes CAPA's only); the sync
 * controllers apply 2–3 status writes (the generation after the
 * flip, the final sync, the first sync from the new side) and, depending on timing, retry some after a 409 when
 * MAO answered the same status change first — the API server counts those refused attempts as requests too
 * (PERFORMANCE.md: 11.0 applied + 1.4 refused per Machine → ClusterAPI). The bounds below leave a margin for
 * load; they are what the product does, not the target.
 */
const MACHINE_HANDOVER_WRITE_BOUND = 16;
const SYNC_WRITES_PER_MACHINE_HANDOVER_BOUND = 8;
const MIGRATION_WRITES_PER_MACHINE_HANDOVER = 7;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "handover-safety" });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const runningQuietMachine = async (name: string): Promise<Watched> => {
  const w = await createRunningMachine(h, name);
  await h.quiesce();
  return w;
};

interface WriteBreakdown {
  total: number;
  migration: Record<string, number>;
  sync: number;
  byResource: Record<string, number>;
}

/** Flips `w` to `to` and counts the product's machine-kind writes until it is steady and quiet. */
const countedHandover = async (w: Watched, to: "MachineAPI" | "ClusterAPI"): Promise<WriteBreakdown> => {
  await h.quiesce();
  const before = h.counters();
  const firstWrite = h.migrationWrites().length;
  await h.setSpecAuthority(w.kind, w.name, to);
  await h.steady(w, to);
  await h.quiesce();
  const byResource = productMachineWrites(before, h.counters());
  const total = sumOf(byResource);
  const migration: Record<string, number> = {};
  const mine = h.migrationWrites().slice(firstWrite);
  for (const x of mine) migration[x.step] = (migration[x.step] ?? 0) + 1;
  // Every write the migration controller reports went to a machine kind: the rest are the sync's.
  const breakdown = { total, migration, sync: total - mine.length, byResource };
  console.log(`${w.kind} ${w.name} → ${to}: product writes`, JSON.stringify(breakdown));
  return breakdown;
};

describe("write count per handover, by step (issue 8)", () => {
  it("Machine MachineAPI → ClusterAPI → MachineAPI and a MachineSet MachineAPI → ClusterAPI stay within budget", async () => {
    const w = await runningQuietMachine("writes-m1");
    const there = await countedHandover(w, "ClusterAPI");
    const back = await countedHandover(w, "MachineAPI");
    for (const b of [there, back]) {
      expect(b.migration.startMigration).toBe(1);
      expect(b.migration.completeMigration).toBe(1);
      expect(sumOf(b.migration)).toBe(MIGRATION_WRITES_PER_MACHINE_HANDOVER);
      expect(b.sync).toBeLessThanOrEqual(SYNC_WRITES_PER_MACHINE_HANDOVER_BOUND);
      expect(b.total).toBeLessThanOrEqual(MACHINE_HANDOVER_WRITE_BOUND);
    }
    // To ClusterAPI: step 4 (2 writes), 8 on the AWSMachine, 9 on the MAPI Machine, 10, 11 on both.
    expect(there.migration).toEqual({
      recordPausedFalseAt: 1,
      startMigration: 1,
      addFinalizers: 1,
      removeFinalizers: 1,
      completeMigration: 1,
      unpause: 2,
    });
    // Back: step 4, 5 (pause both CAPI objects), 8 on the MAPI Machine, 9 on the AWSMachine, 10.
    expect(back.migration).toEqual({
      recordPausedFalseAt: 1,
      startMigration: 1,
      pause: 2,
      addFinalizers: 1,
      removeFinalizers: 1,
      completeMigration: 1,
    });

    const set = mapiMachineSet(ns, "writes", 1);
    const setName = String(set.metadata?.name);
    const ws = h.watch("MachineSet", setName);
    await h.admin.create(KINDS.mapiMachineSet, set);
    await h.steady(ws, "MachineAPI");
    await h.quiesce();
    const setThere = await countedHandover(ws, "ClusterAPI");
    expect(setThere.migration.startMigration).toBe(1);
    expect(setThere.migration.completeMigration).toBe(1);
    expect(setThere.total).toBeLessThanOrEqual(MACHINE_HANDOVER_WRITE_BOUND);
    expect(h.violations()).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});

const machineGone = (name: string) =>
  h.waitFor(`Machine ${name} and its twin gone`, async () => {
    const e = await h.existing();
    return !e.mapi.includes(name) && !e.capi.includes(name);
  });

const deleteOne = async (side: "mapi" | "capi", name: string): Promise<void> => {
  if (side === "mapi") await h.admin.delete(KINDS.mapiMachine, MAPI_NS, name);
  else await h.admin.delete(KINDS.capiMachine, CAPI_NS, name);
};

const assertCleanEnd = async (w: Watched): Promise<void> => {
  await machineGone(w.name);
  await h.quiesce();
  expect(w.observed).toBeGreaterThan(5);
  expect(w.violations).toEqual([]);
  const instances = h.ledger.snapshot().instances.filter((i) => i.machineName === w.name);
  // One instance for the Machine's whole life, terminated once, for the deletion.
  expect(instances).toHaveLength(1);
  expect(instances[0]?.terminatedSeq).toBeDefined();
  expect(instances[0]?.terminatedFor?.deleting).toBe(true);
  expect(await h.ledgerViolations()).toEqual([]);
};

const migratingStatus = (w: Watched) => statusAuthorityReading(h.snapshotOf(w).mapi!) === "Migrating";

describe("SPEC §3.5 deletion during a handover", () => {
  for (const side of ["mapi", "capi"] as const)
    it(`early (waiting for MAO's pause acknowledgement): deleting the ${side.toUpperCase()} Machine rolls back to MachineAPI and MAO deletes`, async () => {
      const w = await runningQuietMachine(`early-del-${side}`);
      await h.stopStandIn("mao");
      try {
        await h.setSpecAuthority("Machine", w.name, "ClusterAPI");
        await h.waitFor("status Migrating", () => migratingStatus(w));
        await h.waitFor("WaitingForPause", async () => (await h.eventReasons(w)).includes("WaitingForPause"));
        await deleteOne(side, w.name);
        // Rolled back: the old side (MachineAPI) still holds its finalizer, so it performs the deletion.
        await h.waitFor("status back to MachineAPI", () => {
          const s = h.snapshotOf(w);
          return !s.mapi || statusAuthorityReading(s.mapi) === "MachineAPI";
        });
      } finally {
        await h.startStandIn("mao");
      }
      await assertCleanEnd(w);
      expect((await h.eventReasons(w)).filter((r) => r === "MigrationCompleted")).toEqual([]);
    });

  for (const side of ["mapi", "capi"] as const)
    it(`after step 9 began (ClusterAPI → MachineAPI, CAPA's finalizer removed): deleting the ${side.toUpperCase()} Machine completes to MachineAPI and MAO deletes`, async () => {
      const w = await runningQuietMachine(`late-del-${side}`);
      await h.setSpecAuthority("Machine", w.name, "ClusterAPI");
      await h.steady(w, "ClusterAPI");
      await h.quiesce();
      // From now on the product's MAPI Machine status writes take 1.5 s to reach the server: step 9 (CAPA's
      // finalizer off the AWSMachine, its only write) lands at once, step 10 only 1.5 s later — a window the
      // test can always see, however fast the rest of the handover runs, to delete in.
      h.cluster.faults.set({
        latencyMs: 1_500,
        match: {
          users: [PRODUCT],
          verbs: ["patch", "update"],
          resources: ["machine.openshift.io/machines/status"],
        },
      });
      try {
        await h.setSpecAuthority("Machine", w.name, "MachineAPI");
        const s = await h.waitFor("step 9 done (CAPA's finalizer gone), still Migrating", () => {
          const x = h.snapshotOf(w);
          return (
            migratingStatus(w) &&
            x.infraMachine &&
            !finalizersOf(x.infraMachine).includes(FINALIZERS.awsMachine) &&
            x
          );
        });
        expect(finalizersOf(s.mapi)).toContain(FINALIZERS.mapiMachine);
        // Cluster API's own finalizer stays on the paused CAPI Machine (SPEC v5 §3.1 step 9).
        expect(finalizersOf(s.capi)).toContain(FINALIZERS.capiMachine);
        await deleteOne(side, w.name);
        const deleted = await h.admin.get(
          side === "mapi" ? KINDS.mapiMachine : KINDS.capiMachine,
          side === "mapi" ? MAPI_NS : CAPI_NS,
          w.name,
        );
        expect(deleted.metadata?.deletionTimestamp).toBeDefined();
        expect(statusAuthorityReading(await h.admin.get(KINDS.mapiMachine, MAPI_NS, w.name))).toBe(
          "Migrating",
        );
      } finally {
        h.cluster.faults.clear();
      }
      await assertCleanEnd(w);
      expect((await h.eventReasons(w)).filter((r) => r === "MigrationCompleted")).toHaveLength(2);
    });
});
