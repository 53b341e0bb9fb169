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

  it("compares values nested as deep as kube-apiserver stores them (10,000 levels), without recursion", () => {
    const nested = (levels: number, leaf: unknown): unknown => {
      let v: unknown = leaf;
      for (let i = 0; i < levels; i++) v = i % 2 ? { n: v } : [v];
      return v;
    };
    expect(jsonEqual(nested(10_000, 1), nested(10_000, 1))).toBe(true);
    expect(jsonEqual(nested(10_000, 1), nested(10_000, 2))).toBe(false);
    expect(jsonEqual({ a: nested(10_000, 1), b: 1 }, { b: 1, a: nested(10_000, 1) })).toBe(true);
  });
});
