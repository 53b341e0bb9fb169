/**
 * The quick, seeded subset of the model-based campaign (issue 8; test/model/model.ts): a few short random
 * interleavings of user edits, deletes, MachineSet scaling, crashes, failovers onto a lagging standby and
 * injected faults against the real product on one local cluster, I1–I4 and the ledger after every command,
 * convergence once faults stop. The long campaign is `npm run test:model -- --runs 1000`
 * (test/model/campaign.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { answered429, type ModelStats, modelProperty } from "./model.js";
import { useModelHarness } from "./use-harness.js";

const harness = useModelHarness("model");

describe("model-based: the real product under a misbehaving world (SPEC §3.2, §3.5)", () => {
  it("I1–I4 and the ledger hold after every command; every run converges once faults stop", async () => {
    const stats: ModelStats = { runs: 0, commands: {} };
    await fc.assert(modelProperty(harness, { maxCommands: 12, convergeTimeoutMs: 20_000 }, stats), {
      seed: 20261130,
      numRuns: 6,
      endOnFailure: true,
    });
    console.log("model runs", JSON.stringify(stats));
    // The seeded runs exercised the world: Machines were flipped, something crashed, faults were injected.
    expect(stats.runs).toBe(6);
    expect(stats.commands.flip ?? 0).toBeGreaterThan(0);
    expect((stats.commands.crashProduct ?? 0) + (stats.commands.crashStandIn ?? 0)).toBeGreaterThan(0);
    // Issue 19's world: MachineSets scaled or flipped, and a replica's cache held back or failed over onto.
    expect((stats.commands.flipSet ?? 0) + (stats.commands.scaleSet ?? 0)).toBeGreaterThan(0);
    expect((stats.commands.failover ?? 0) + (stats.commands.holdWatch ?? 0)).toBeGreaterThan(0);
    // A Machine deleted and created again under its name (the name-reuse audit).
    expect(
      (stats.commands.recreate ?? 0) + (stats.commands.recreateBehindLaggingStandby ?? 0),
    ).toBeGreaterThan(0);
  }, 120_000);

  it("the same while the API server turns away 30 % of the product's requests with 429 and Retry-After (decision 162)", async () => {
    const before = answered429(harness());
    const stats: ModelStats = { runs: 0, commands: {} };
    await fc.assert(
      modelProperty(
        harness,
        { maxCommands: 12, convergeTimeoutMs: 20_000, rate429: 0.3, firstRun: 100 },
        stats,
      ),
      { seed: 20261207, numRuns: 4, endOnFailure: true },
    );
    expect(stats.runs).toBe(4);
    // The product met the 429s (and waited each out before sending the request again) on its live reads and
    // on its writes: the path was taken for both. Three runs of eight commands met one write 429 at most, and
    // none in some runs (the order of requests is timing's); four of twelve meet seven or more.
    const after = answered429(harness());
    const met = (verbs: readonly string[]) =>
      verbs.reduce((n, verb) => n + (after[verb] ?? 0) - (before[verb] ?? 0), 0);
    expect(met(["get"])).toBeGreaterThan(0);
    expect(met(["create", "update", "patch", "delete"])).toBeGreaterThan(0);
  }, 120_000);
});
