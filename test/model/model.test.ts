/**
 * The quick, seeded subset of the model-based campaign (issue 8; test/model/model.ts): a few short random
 * interleavings of user edits, deletes, crashes and injected faults against the real product on one local
 * cluster, I1–I4 and the ledger after every command, convergence once faults stop. The long campaign is
 * `npm run test:model -- --runs 1000` (test/model/campaign.ts).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Harness, startHarness } from "../integration/harness.js";
import { modelProperty } from "./model.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "model", watchEverything: true });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

describe("model-based: the real product under a misbehaving world (SPEC §3.2, §3.5)", () => {
  it("I1–I4 and the ledger hold after every command; every run converges once faults stop", async () => {
    await fc.assert(modelProperty(h, { maxCommands: 12, convergeTimeoutMs: 20_000 }), {
      seed: 20261130,
      numRuns: 3,
      endOnFailure: true,
    });
  }, 120_000);
});
