/**
 * The name-reuse audit in its window, written by hand with the model's own commands (test/model/model.ts): a
 * Machine is deleted and created again under its name while the standby's MAPI Machine view still holds the
 * old one, deleting; the leader dies and the standby takes over from that view. SPEC §3.2 I6: the old
 * Machine's delete is not a request for the new one — no instance of the new Machine may be terminated
 * (the ledger matches a delete by name only up to the name's recorded re-create), and the run converges with
 * the new Machine there, not deleting, with its twin.
 */
import { describe, expect, it } from "vitest";
import { scenarioCommands as c, type ModelStats, type Real } from "./model.js";
import { useModelHarness } from "./use-harness.js";

let run = 9_100;

const harness = useModelHarness("name-reuse");

describe("I6: a Machine re-created under its name while a standby's cache holds the old one deleting", () => {
  for (const [side, authority] of [
    ["mapi", "MachineAPI"],
    ["capi", "ClusterAPI"],
  ] as const)
    it(`delete of the ${side} copy, re-created born ${authority}, failover onto the lagging standby`, async () => {
      const stats: ModelStats = { runs: 0, commands: {} };
      const r: Real = { h: harness(), run: run++, stats, trace: [] };
      const m = await c.setUp(r, 30_000);
      await c.recreateBehindLaggingStandby(0, side, authority, 3_000).run(m, r);
      // The scenario reached its window: without this the test would prove nothing.
      const trace = r.trace.join("\n");
      expect(trace).toContain("deleting seen: true");
      expect(trace).toContain(
        "settled with its twin; the leader died, the standby took over seeing the old one",
      );
      expect(m.recreated.has(0)).toBe(true);
      // The new leader plans from the held view for a while, then catches up.
      await c.wait(5_000).run(m, r);
      await c.converge(r, m, 30_000);
    }, 120_000);
});
