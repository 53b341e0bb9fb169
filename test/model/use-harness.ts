/**
 * A model test file's cluster (test/model/model.ts `startModelHarness`), started before its tests and stopped
 * after them. Kept apart from model.ts, which the campaign (test/model/campaign.ts) runs outside vitest.
 */
import { afterAll, beforeAll } from "vitest";
import type { Harness } from "../integration/harness.js";
import { startModelHarness } from "./model.js";

export const useModelHarness = (name: string): (() => Harness) => {
  let h: Harness | undefined;
  beforeAll(async () => {
    h = await startModelHarness(name);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });
  return () => {
    if (!h) throw new Error(`the ${name} harness has not started`);
    return h;
  };
};
