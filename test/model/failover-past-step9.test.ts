/**
 * Issue 19 #1 in its window, written by hand with the model's own commands (test/model/model.ts): a
 * MachineAPI → ClusterAPI handover whose step 9 has landed (MAO's finalizer gone, status still Migrating)
 * loses its leader to a standby whose AWSMachine view predates the flip, and a twin is deleted before that
 * view catches up. SPEC §3.5: the new leader decides between roll-back and completion from live reads, so
 * the delete completes toward ClusterAPI and CAPA terminates the instance — nothing leaks (I6), and the run
 * converges. Planned from the lagging cache instead, the new leader rolled back and removed CAPA's finalizer,
 * and the instance outlived every object.
 */
import { describe, expect, it } from "vitest";
import { scenarioCommands as c, type ModelStats, type Real } from "./model.js";
import { useModelHarness } from "./use-harness.js";

let run = 9_000;

const harness = useModelHarness("failover-past-step9");

describe("§3.5 live reads: a failover past step 9 onto a lagging standby, then a delete (issue 19 #1)", () => {
  for (const side of ["mapi", "capi"] as const)
    it(`a delete of the ${side} twin terminates the instance once and leaks nothing`, async () => {
      const stats: ModelStats = { runs: 0, commands: {} };
      const r: Real = { h: harness(), run: run++, stats, trace: [] };
      const m = await c.setUp(r, 30_000);
      await c.failoverPastStep9(0, side, 1_000).run(m, r);
      // The scenario reached its window: without this the test would prove nothing.
      expect(r.trace.join("\n")).toContain("past step 9: product writes failing; the leader dies");
      expect(m.deleted.has(0)).toBe(true);
      await c.converge(r, m, 30_000);
    }, 120_000);
});
