import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  identicalJson,
  jsonEqual,
  type KubeObject,
  statusOnlyChange,
  timeMs,
} from "../../src/kube/object.js";

/** A value `levels` deep, arrays and maps in turn, with `leaf` at the bottom. */
const nested = (levels: number, leaf: unknown): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 ? { n: v } : [v];
  return v;
};

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
    expect(jsonEqual(nested(10_000, 1), nested(10_000, 1))).toBe(true);
    expect(jsonEqual(nested(10_000, 1), nested(10_000, 2))).toBe(false);
    expect(jsonEqual({ a: nested(10_000, 1), b: 1 }, { b: 1, a: nested(10_000, 1) })).toBe(true);
  });
});

describe("identicalJson: JSON.stringify equality without the strings (key order counts)", () => {
  const cases: [string, unknown, unknown, boolean][] = [
    [
      "the same value, copied",
      { a: 1, b: { c: [1, "x", null, true] } },
      { a: 1, b: { c: [1, "x", null, true] } },
      true,
    ],
    ["key order counts", { a: 1, b: 2 }, { b: 2, a: 1 }, false],
    ["key order counts below the top", { s: { a: 1, b: 2 } }, { s: { b: 2, a: 1 } }, false],
    ["null is not absent", { a: null }, {}, false],
    ["array order matters", [1, 2], [2, 1], false],
    ["array length matters", [1], [1, 1], false],
    ["number is not string", { a: 1 }, { a: "1" }, false],
    ["object is not array", {}, [], false],
    ["an empty object is not null", {}, null, false],
    ["nested difference", { a: { b: { c: 1 } } }, { a: { b: { c: 2 } } }, false],
    ["an extra key", { a: 1 }, { a: 1, b: 2 }, false],
    ["the same key count, another key", { a: 1 }, { b: 1 }, false],
    ["absent and absent", undefined, undefined, true],
    ["absent is not null", undefined, null, false],
  ];
  it.each(cases)("%s", (_name, a, b, want) => {
    expect(identicalJson(a, b)).toBe(want);
    expect(identicalJson(b, a)).toBe(want);
  });

  it("agrees with comparing JSON.stringify's text on random JSON, and on a copy with its keys reordered", () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : typeof v === "object" && v !== null
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(identicalJson(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
        expect(identicalJson(a, structuredClone(a))).toBe(true);
        const r = reversed(a);
        expect(identicalJson(a, r)).toBe(JSON.stringify(a) === JSON.stringify(r));
      }),
      { numRuns: 500 },
    );
  });

  it("compares values nested as deep as kube-apiserver stores them (10,000 levels), without recursion", () => {
    expect(identicalJson(nested(10_000, 1), nested(10_000, 1))).toBe(true);
    expect(identicalJson(nested(10_000, 1), nested(10_000, 2))).toBe(false);
  });
});

describe("statusOnlyChange: what a write to /status changes, and nothing more", () => {
  const machine: KubeObject = {
    apiVersion: "machine.openshift.io/v1beta1",
    kind: "Machine",
    metadata: {
      name: "m",
      namespace: "ns",
      uid: "u",
      resourceVersion: "1",
      generation: 1,
      labels: { a: "1" },
      annotations: { b: "2" },
      finalizers: ["f"],
      ownerReferences: [{ apiVersion: "v1", kind: "MachineSet", name: "s", uid: "s-uid", controller: true }],
      managedFields: [{ manager: "x" }],
    },
    spec: { providerID: "aws:///i-1" },
    status: { phase: "Provisioned" },
  };
  const edited = (edit: (o: KubeObject & { metadata: object; spec: Record<string, unknown> }) => void) => {
    const o = structuredClone(machine) as KubeObject & { metadata: object; spec: Record<string, unknown> };
    edit(o);
    return o;
  };
  it.each<[string, KubeObject, boolean]>([
    ["the same object", structuredClone(machine), true],
    [
      "status only, with a new resourceVersion and managedFields",
      edited((o) => {
        o.status = { phase: "Running", conditions: [{ type: "Ready", status: "True" }] };
        Object.assign(o.metadata, { resourceVersion: "2", managedFields: [{ manager: "y" }] });
      }),
      true,
    ],
    ["status gone", edited((o) => delete o.status), true],
    ["a label", edited((o) => Object.assign(o.metadata, { labels: { a: "2" } })), false],
    ["an annotation", edited((o) => Object.assign(o.metadata, { annotations: {} })), false],
    ["a finalizer", edited((o) => Object.assign(o.metadata, { finalizers: [] })), false],
    ["an owner reference", edited((o) => Object.assign(o.metadata, { ownerReferences: [] })), false],
    [
      "a deletion",
      edited((o) => Object.assign(o.metadata, { deletionTimestamp: "2026-12-03T00:00:00Z" })),
      false,
    ],
    ["the generation", edited((o) => Object.assign(o.metadata, { generation: 2 })), false],
    ["spec", edited((o) => Object.assign(o.spec, { providerID: "aws:///i-2" })), false],
    ["a new top-level field", edited((o) => Object.assign(o, { data: {} })), false],
  ])("%s → %s", (_what, after, expected) => {
    expect(statusOnlyChange(machine, after)).toBe(expected);
    expect(statusOnlyChange(after, machine)).toBe(expected);
  });
});

describe("timeMs: the instant of a Time or MicroTime field (a Lease's renewTime, an Event's times)", () => {
  const at = Date.UTC(2026, 11, 6, 15, 0, 0, 123);
  const cases: [string, unknown, number | undefined][] = [
    ["Time (seconds)", "2026-12-06T15:00:00Z", at - 123],
    ["MicroTime (six fraction digits)", "2026-12-06T15:00:00.123456Z", at],
    ["nine fraction digits", "2026-12-06T15:00:00.123456789Z", at],
    ["an offset", "2026-12-06T16:00:00.123+01:00", at],
    ["empty", "", undefined],
    ["absent", undefined, undefined],
    ["not a string", 1796569200123, undefined],
    ["not a time", "yesterday-ish", undefined],
  ];
  it.each(cases)("%s", (_name, v, want) => expect(timeMs(v)).toBe(want));
});
