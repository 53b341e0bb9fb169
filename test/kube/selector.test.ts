/**
 * The one `metav1.LabelSelector` matcher (src/kube/selector.ts) behind the migration's member check
 * (SPEC §3.1 step 4), the local API server's webhook selectors and the CAPI stand-in's MachineSets.
 */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseLabelSelector } from "../../src/apiserver/selectors.js";
import {
  isEmptyLabelSelector,
  labelSelectorMatcher,
  labelSelectorMatches,
  labelSelectorQuery,
  machineSetSelects,
} from "../../src/kube/selector.js";

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

describe("labelSelectorMatcher: compiled once, each expression's values a set (decision 145)", () => {
  /** The selector as metav1 defines it, read the plain way: every value list searched per object. */
  const reference = (selector: unknown, l: Record<string, string>): boolean => {
    if (typeof selector !== "object" || selector === null || Array.isArray(selector)) return false;
    const { matchLabels = {}, matchExpressions = [] } = selector as Record<string, never>;
    if (!Object.entries(matchLabels).every(([k, v]) => Object.hasOwn(l, k) && l[k] === v)) return false;
    return (matchExpressions as Array<{ key: string; operator: string; values?: string[] }>).every((e) => {
      const has = Object.hasOwn(l, e.key);
      const listed = has && (e.values ?? []).includes(l[e.key]!);
      return e.operator === "In"
        ? listed
        : e.operator === "NotIn"
          ? !listed
          : e.operator === "Exists"
            ? has
            : !has;
    });
  };

  it("selects what the plain reading selects (property)", () => {
    const key = fc.constantFrom("a", "b", "constructor");
    const value = fc.constantFrom("x", "y", "");
    const selector = fc.record(
      {
        matchLabels: fc.dictionary(key, value, { maxKeys: 2 }),
        matchExpressions: fc.array(
          fc.record(
            {
              key,
              operator: fc.constantFrom("In", "NotIn", "Exists", "DoesNotExist"),
              values: fc.array(value, { maxLength: 3 }),
            },
            { requiredKeys: ["key", "operator"] },
          ),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        selector,
        fc.array(fc.dictionary(key, value, { maxKeys: 3 }), { maxLength: 5 }),
        (sel, maps) => {
          const matches = labelSelectorMatcher(sel);
          return maps.every(
            (l) => matches(l) === reference(sel, l) && labelSelectorMatches(sel, l) === reference(sel, l),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("a MachineSet with an empty or absent selector selects nothing", () => {
    const machine = { metadata: { labels: { app: "web" } } };
    expect(machineSetSelects({ spec: {} }, machine)).toBe(false);
    expect(machineSetSelects({ spec: { selector: {} } }, machine)).toBe(false);
    expect(machineSetSelects({ spec: { selector: { matchLabels: { app: "web" } } } }, machine)).toBe(true);
    expect(machineSetSelects({ spec: { selector: { matchLabels: { app: "web" } } } }, {})).toBe(false);
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

describe("labelSelectorQuery: a MachineSet's selector as the API's labelSelector, for the live member read of SPEC §3.5 (decision 143)", () => {
  it.each([
    [
      "matchLabels",
      { matchLabels: { app: "web", "example.com/tier": "a.b_c-1" } },
      "app=web,example.com/tier=a.b_c-1",
    ],
    [
      "each operator",
      {
        matchExpressions: [
          { key: "a", operator: "In", values: ["x", "y"] },
          { key: "b", operator: "NotIn", values: ["z"] },
          { key: "c", operator: "Exists" },
          { key: "d", operator: "DoesNotExist", values: [] },
        ],
      },
      "a in (x,y),b notin (z),c,!d",
    ],
    ["an empty selector: read everything", {}, undefined],
    ["an absent one", undefined, undefined],
    [
      "a value with a comma (a crafted selector must not write the query)",
      { matchLabels: { a: "x,b=y" } },
      undefined,
    ],
    [
      "a value with a parenthesis",
      { matchExpressions: [{ key: "a", operator: "In", values: ["x)"] }] },
      undefined,
    ],
    ["a key with a space", { matchLabels: { "a b": "x" } }, undefined],
    ["an empty value", { matchLabels: { a: "" } }, undefined],
    ["an unknown operator", { matchExpressions: [{ key: "a", operator: "Gt", values: ["1"] }] }, undefined],
    ["In without values", { matchExpressions: [{ key: "a", operator: "In", values: [] }] }, undefined],
    [
      "Exists with values",
      { matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] },
      undefined,
    ],
    ["a value that is not a string", { matchLabels: { a: 1 } }, undefined],
  ])("%s", (_, selector, expected) => {
    expect(labelSelectorQuery(selector)).toBe(expected);
  });

  it("the API server's reading of the query selects what labelSelectorMatches selects (property)", () => {
    const key = fc.constantFrom("a", "b", "example.com/c");
    const value = fc.constantFrom("x", "y", "z-1");
    const selector = fc.record(
      {
        matchLabels: fc.dictionary(key, value, { maxKeys: 2 }),
        matchExpressions: fc.array(
          fc.oneof(
            fc.record({
              key,
              operator: fc.constantFrom("In", "NotIn"),
              values: fc.array(value, { minLength: 1, maxLength: 2 }),
            }),
            fc.record({ key, operator: fc.constantFrom("Exists", "DoesNotExist") }),
          ),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(selector, fc.dictionary(key, value, { maxKeys: 3 }), (sel, labels) => {
        const query = labelSelectorQuery(sel);
        if (query === undefined) return isEmptyLabelSelector(sel);
        const predicate = parseLabelSelector(query);
        if (typeof predicate === "string") throw new Error(`${query}: ${predicate}`);
        return predicate({ metadata: { labels } }) === labelSelectorMatches(sel, labels);
      }),
      { numRuns: 2000 },
    );
  });
});
