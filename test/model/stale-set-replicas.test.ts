/**
 * Found by the model campaign on the real control plane (`--seed 20261252`, run 28), written by hand with the
 * model's own commands (test/model/model.ts): a user scales a ClusterAPI MachineSet up while the standby's
 * view of CAPI MachineSets lags, and the leader fails over onto that standby. The new leader mirrored the
 * stale CAPI copy onto the MAPI copy — its replicas back to the old count — while the MAPI copy still said
 * it was synchronised from the newer generation; once its view caught up, the replicas carry (SPEC §2.2,
 * decision 65) read that difference as the autoscaler's and scaled the CAPI copy down: Cluster API deleted the
 * Machine the user had just asked for and terminated its instance (I6). Decision 160: a view of the
 * authoritative copy older than the generation the MAPI copy records is confirmed live before anything is
 * written from it.
 */
import { describe, expect, it } from "vitest";
import { scenarioCommands as c, type ModelStats, type Real } from "./model.js";
import { useModelHarness } from "./use-harness.js";

let run = 9_100;

const harness = useModelHarness("stale-set-replicas");

describe("§2.2 a ClusterAPI MachineSet scaled while the standby's view of it lags, then a failover (decision 160)", () => {
  it("the scale-up stands: no Machine the user asked for is deleted, no instance terminated", async () => {
    const stats: ModelStats = { runs: 0, commands: {} };
    const r: Real = { h: harness(), run: run++, stats, trace: [] };
    const m = await c.setUp(r, 30_000);
    for (const step of [
      c.holdWatch("standby", "capiMachineSets"),
      c.scaleSet(1, 2),
      c.wait(1_500),
      c.failover(),
      c.wait(1_500),
      c.releaseWatches(),
      c.wait(1_500),
    ])
      await step.run(m, r);
    // The scenario reached its window: the set the user scaled is the ClusterAPI one.
    expect(r.trace.join("\n")).toContain("scale cluster.x-k8s.io");
    await c.converge(r, m, 30_000);
  }, 120_000);
});
