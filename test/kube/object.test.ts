import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, jsonEqual } from "../../src/kube/object.js";

describe("jsonEqual: canonicalJson equality without the strings", () => {
  const cases: [string, unknown, unknown, boolean][] = [
    ["key order does not matter", { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }, true],
    ["a key holding undefined is absent", { a: 1, b: undefined }, { a: 1 }, true],
    ["null is not absent", { a: null }, {}, false],
    ["undefined in an array reads as null", [undefined, 1], [null, 1], true],
    ["array order matters", [1, 2], [2, 1], false],
    ["array length matters", [1], [1, 1], false],
    ["number is not string", { a: 1 }, { a: "1" }, false],
    ["object is not array", {}, [], false],
    ["nested difference", { a: { b: { c: 1 } } }, { a: { b: { c: 2 } } }, false],
    ["extra key on the right", { a: 1 }, { a: 1, b: 2 }, false],
  ];
  it.each(cases)("%s", (_name, a, b, want) => {
    expect(jsonEqual(a, b)).toBe(want);
    expect(jsonEqual(b, a)).toBe(want);
    expect(canonicalJson(a) === canonicalJson(b)).toBe(want);
  });

  it("skips the named top-level keys only", () => {
    const skip = new Set(["metadata"]);
    expect(jsonEqual({ metadata: { rv: "1" }, spec: 1 }, { metadata: { rv: "2" }, spec: 1 }, skip)).toBe(
      true,
    );
    expect(jsonEqual({ spec: { metadata: 1 } }, { spec: { metadata: 2 } }, skip)).toBe(false);
  });

  it("agrees with comparing canonicalJson strings on random JSON", () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(jsonEqual(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
        expect(jsonEqual(a, structuredClone(a))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
