/**
 * The mutating webhook's draft: `cloneJson` is the JSON round trip and `jsonPatch` is fast-json-patch's
 * `compare`, on generated JSON with prototype keys; both also hold at depths where the round trip and
 * `compare` overflow the stack (a kube object may be 10,000 levels deep), and a copied `__proto__` key stays
 * data.
 */
import fc from "fast-check";
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { isRecord } from "../../src/kube/object.js";
import { cloneJson, jsonPatch } from "../../src/policies/draft.js";

const key = fc.constantFrom("a", "b", "c/d", "e~f", "0", "__proto__", "constructor", "prototype", "toString");
/** Objects built with defineProperty, so a `__proto__` key is an own field as JSON.parse makes it. */
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(null, 0, 1, "", "s", true, false),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 5 }).map((entries) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of entries)
        Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
      return o;
    }),
  ),
})).value;
const object = json.filter(isRecord);

/** `value` changed at a place chosen by `seed`: a field set, removed or edited below. */
function edited(value: unknown, seed: number): unknown {
  const copy = cloneJson(value);
  if (isRecord(copy)) {
    const keys = Object.keys(copy);
    if (keys.length > 0 && seed % 3 === 0) delete copy[keys[seed % keys.length]!];
    else if (keys.length > 0 && seed % 3 === 1)
      copy[keys[seed % keys.length]!] = edited(copy[keys[seed % keys.length]!], seed >> 2);
    else
      Object.defineProperty(copy, ["a", "__proto__", "n"][seed % 3]!, {
        value: seed,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    return copy;
  }
  if (Array.isArray(copy) && copy.length > 0) {
    if (seed % 2) copy.pop();
    else copy[seed % copy.length] = edited(copy[seed % copy.length], seed >> 1);
    return copy;
  }
  return seed % 2 ? [seed] : seed;
}

const deep = (depth: number, leaf: unknown): Record<string, unknown> => {
  let o: unknown = leaf;
  for (let i = 0; i < depth; i++) o = i % 2 ? { a: o } : [o];
  return { spec: o };
};

describe("cloneJson", () => {
  it("is the JSON round trip, prototype keys included, and shares nothing with its input", () => {
    fc.assert(
      fc.property(json, (v) => {
        const copy = cloneJson(v);
        expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
        if (typeof v === "object" && v !== null) expect(copy).not.toBe(v);
      }),
      { numRuns: 500 },
    );
    expect(cloneJson({ a: undefined, b: [undefined, 1] })).toEqual({ b: [null, 1] });
  });

  it("copies a __proto__ key as an own field and never touches a prototype", () => {
    const v = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
    const copy = cloneJson(v) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(copy, "__proto__")?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("copies 100,000 levels (JSON.stringify overflows at about 5,000)", () => {
    const v = deep(100_000, "leaf");
    expect(() => JSON.stringify(v)).toThrow(RangeError);
    const copy = cloneJson(v);
    let at: unknown = copy.spec;
    for (let i = 0; i < 100_000; i++) at = Array.isArray(at) ? at[0] : (at as Record<string, unknown>).a;
    expect(at).toBe("leaf");
  });
});

describe("jsonPatch", () => {
  it("gives fast-json-patch's compare operations, in its order", () => {
    fc.assert(
      fc.property(object, object, fc.nat(), (a, b, seed) => {
        expect(jsonPatch(a, b)).toEqual(jsonpatch.compare(a, b));
        const c = edited(a, seed);
        if (isRecord(c)) {
          expect(jsonPatch(a, c)).toEqual(jsonpatch.compare(a, c));
          // fast-json-patch refuses to apply an operation through `__proto__` or `constructor/prototype`;
          // every other patch must rebuild `c`.
          const patch = jsonPatch(a, c);
          if (patch.some((op) => /(^|\/)(__proto__|constructor\/prototype)(\/|$)/.test(op.path))) return;
          const target = jsonpatch.applyPatch(cloneJson(a), patch).newDocument;
          expect(JSON.stringify(target)).toBe(JSON.stringify(c));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("diffs objects 100,000 levels deep (compare overflows at about 5,000)", () => {
    const before = deep(100_000, 1);
    const after = cloneJson(before);
    let at: unknown = after.spec;
    for (let i = 0; i < 99_999; i++) at = Array.isArray(at) ? at[0] : (at as Record<string, unknown>).a;
    (at as unknown[])[0] = 2;
    expect(() => jsonpatch.compare(before, after)).toThrow(RangeError);
    const patch = jsonPatch(before, after);
    expect(patch).toHaveLength(1);
    expect(patch[0]).toMatchObject({ op: "replace", value: 2 });
    expect(patch[0]!.path).toBe(`/spec${"/a/0".repeat(50_000)}`);
  });
});
