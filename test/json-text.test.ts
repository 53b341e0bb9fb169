import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundedJson, canonicalJson, cloneJson, jsonText } from "../src/json-text.js";
import { FIELD_VALUE_MAX_CHARS, formatFieldError } from "../src/kube/field-error.js";
import { jsonEqual } from "../src/kube/object.js";
import { nestedObjects } from "./support/deep.js";

describe("boundedJson: JSON.stringify's text, cut after maxChars with …", () => {
  it("is JSON.stringify's text when that fits (any JSON value)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const full = JSON.stringify(v);
        expect(boundedJson(v, full.length)).toBe(full);
      }),
    );
  });

  it("is JSON.stringify's first maxChars characters and … when that does not fit", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(60), (v, max) => {
        const full = JSON.stringify(v);
        fc.pre(full.length > max);
        expect(boundedJson(v, max)).toBe(`${full.slice(0, max)}…`);
      }),
    );
  });

  it.each([
    ["undefined members are left out, as JSON.stringify does", { a: undefined, b: 1 }, 50, '{"b":1}'],
    [
      "a non-JSON element is null, as JSON.stringify writes it",
      [undefined, Number.NaN, 1],
      50,
      "[null,null,1]",
    ],
    ["a long key is cut", { ["k".repeat(30)]: 1 }, 10, '{"kkkkkkkk…'],
    ["an empty container", [[], {}], 10, "[[],{}]"],
  ])("%s", (_what, value, max, text) => {
    expect(boundedJson(value, max)).toBe(text);
  });

  it("prints a value nested 9,990 levels deep (where JSON.stringify overflows the stack) up to the cut", () => {
    const v = nestedObjects(9_990);
    expect(() => JSON.stringify(v)).toThrow(RangeError);
    expect(boundedJson(v, 20)).toBe(`${'{"n":'.repeat(4)}…`);
  });
});

describe("formatFieldError: `<path>: Invalid value: <json>: <message>`, as Go's field.Invalid prints it", () => {
  it.each([
    [
      { path: "spec.x", value: "v1.30", message: "not supported" },
      'spec.x: Invalid value: "v1.30": not supported',
    ],
    [{ path: "spec.y", value: undefined, message: "required" }, "spec.y: Invalid value: null: required"],
    [
      { path: "spec.z", value: "x".repeat(1_000), message: "too long" },
      `spec.z: Invalid value: "${"x".repeat(FIELD_VALUE_MAX_CHARS - 1)}…: too long`,
    ],
  ])("%#", (error, text) => {
    expect(formatFieldError(error)).toBe(text);
  });
});

describe("jsonText: JSON.stringify at any depth", () => {
  it("is JSON.stringify's text for any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(jsonText(v)).toBe(JSON.stringify(v));
      }),
    );
  });

  it("writes a value nested 9,990 levels deep whole, where JSON.stringify overflows", () => {
    expect(jsonText(nestedObjects(9_990))).toBe(`${'{"n":'.repeat(9_989)}{}${"}".repeat(9_989)}`);
    expect(JSON.parse(jsonText([nestedObjects(9_990), "x"]))[1]).toBe("x");
  });
});

/** The recursive writer canonicalJson was before decision 135 made it stack-free: the oracle for its text. */
const recursiveCanonical = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(recursiveCanonical).join(",")}]`;
  if (typeof v === "object" && v !== null) {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${recursiveCanonical(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
};

describe("canonicalJson: one text per JSON value, key order aside, at any depth", () => {
  it("is the recursive writer's text for any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalJson(v)).toBe(recursiveCanonical(v));
      }),
    );
  });

  it("gives two values one text exactly when they are equal as JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(canonicalJson(a) === canonicalJson(b)).toBe(jsonEqual(a, b));
      }),
    );
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe(
      canonicalJson({ a: null, b: [1, { c: 2, d: 1 }] }),
    );
  });

  it("writes a value nested 9,990 levels deep", () => {
    expect(canonicalJson(nestedObjects(9_990))).toBe(jsonText(nestedObjects(9_990)));
  });
});

describe("cloneJson: structuredClone at any depth", () => {
  it("copies any JSON value equal and unshared", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const copy = cloneJson(v);
        expect(copy).toEqual(v);
        if (typeof v === "object" && v !== null) expect(copy).not.toBe(v);
      }),
    );
  });

  it("copies a value nested 9,990 levels deep (where structuredClone overflows), keys and order kept", () => {
    const v = { z: 1, a: [nestedObjects(9_990), JSON.parse('{"__proto__":2}')] };
    const copy = cloneJson(v);
    expect(jsonText(copy)).toBe(jsonText(v));
    expect(Object.keys(copy)).toEqual(["z", "a"]);
    expect(copy.a[0] === v.a[0]).toBe(false);
    expect(Object.keys(copy.a[1])).toEqual(["__proto__"]);
  });
});
