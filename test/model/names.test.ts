import { describe, expect, it } from "vitest";
import { isStandaloneName } from "./model.js";

describe("the model tells its standalone Machines from MachineSet members by name", () => {
  it.each([
    ["model-r23-m0", true],
    ["model-r23-m12", true],
    // Found by the campaign (seed 20261222, run 24): a member whose generated suffix reads like an index.
    ["model-r23-s1-m4625", false],
    ["model-r23-s1-b2x9k", false],
    ["model-r230-m1", false],
    ["model-r23-m", false],
  ])("%s: %s", (name, standalone) => {
    expect(isStandaloneName(23, name)).toBe(standalone);
  });
});
