/**
 * SPEC §2.1 "read ?timeout=Ns and answer before it": kube's Go-duration parameter and the decision budget
 * derived from it.
 */
import { describe, expect, it } from "vitest";
import { decisionBudgetMs, parseGoDuration } from "../../src/server/timeout.js";

describe("parseGoDuration", () => {
  it.each([
    ["10s", 10_000],
    ["5s", 5_000],
    ["1m0s", 60_000],
    ["1m30s", 90_000],
    ["1.5s", 1_500],
    ["250ms", 250],
    ["1h", 3_600_000],
    ["1500us", 1.5],
    ["1500µs", 1.5],
    ["2000000ns", 2],
    [".5s", 500],
  ])("%s → %d ms", (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 6);
  });

  it.each(["", "10", "s", "-5s", "0s", "10 s", "10sec", "ten", "5s;rm", "1e3s", `${"1".repeat(70)}s`])(
    "%j is not a duration",
    (text) => {
      expect(parseGoDuration(text)).toBeUndefined();
    },
  );
});

describe("decisionBudgetMs", () => {
  it.each([
    ["10s", 9_500],
    ["5s", 4_500],
    ["1s", 800],
    ["30s", 29_500],
    ["2m0s", 29_500],
  ])("timeout=%s leaves %d ms for the decision", (timeout, budget) => {
    expect(decisionBudgetMs(timeout)).toBe(budget);
  });

  it.each([undefined, "", "bogus", ["5s", "6s"], 5])(
    "an absent or unreadable timeout (%j) uses kube's 10 s default",
    (v) => {
      expect(decisionBudgetMs(v)).toBe(9_500);
    },
  );
});
