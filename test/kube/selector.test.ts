/**
 * The one `metav1.LabelSelector` matcher (src/kube/selector.ts) behind the migration's member check
 * (SPEC §3.1 step 4), the local API server's webhook selectors and the CAPI stand-in's MachineSets.
 */
import { describe, expect, it } from "vitest";
import { isEmptyLabelSelector, labelSelectorMatches } from "../../src/kube/selector.js";

const labels = { app: "web", tier: "front" };

describe("labelSelectorMatches", () => {
  it.each([
    ["matchLabels all equal", { matchLabels: { app: "web" } }, true],
    ["matchLabels one differs", { matchLabels: { app: "db" } }, false],
    ["matchLabels on a label the object lacks", { matchLabels: { zone: "a" } }, false],
    ["matchLabels naming a prototype key", { matchLabels: { constructor: "x" } }, false],
    ["In, value listed", { matchExpressions: [{ key: "app", operator: "In", values: ["web", "db"] }] }, true],
    ["In, value not listed", { matchExpressions: [{ key: "app", operator: "In", values: ["db"] }] }, false],
    ["In, label absent", { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }, false],
    [
      "NotIn, value listed",
      { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] },
      false,
    ],
    ["NotIn, label absent", { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] }, true],
    ["Exists", { matchExpressions: [{ key: "tier", operator: "Exists" }] }, true],
    ["Exists, absent", { matchExpressions: [{ key: "zone", operator: "Exists" }] }, false],
    ["DoesNotExist", { matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, true],
    ["DoesNotExist, present", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, false],
    ["an unknown operator matches nothing", { matchExpressions: [{ key: "app", operator: "Gt" }] }, false],
    [
      "an expression without a string key matches nothing",
      { matchExpressions: [{ operator: "Exists" }] },
      false,
    ],
    ["an expression that is not an object matches nothing", { matchExpressions: ["app"] }, false],
    [
      "both parts must hold",
      { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] },
      false,
    ],
    ["an empty selector matches everything (callers decide what empty means)", {}, true],
    ["a selector that is not an object matches nothing", "app=web", false],
    ["an absent selector matches nothing", undefined, false],
  ])("%s", (_, selector, expected) => {
    expect(labelSelectorMatches(selector, labels)).toBe(expected);
  });
});

describe("isEmptyLabelSelector", () => {
  it.each([
    [undefined, true],
    [{}, true],
    [{ matchLabels: {}, matchExpressions: [] }, true],
    [{ matchLabels: { a: "b" } }, false],
    [{ matchExpressions: [{ key: "a", operator: "Exists" }] }, false],
  ])("%j → %s", (selector, expected) => {
    expect(isEmptyLabelSelector(selector)).toBe(expected);
  });
});
