/**
 * SPEC §2.1 prototype keys are data, and large bodies parse in steps (decision 59): `steppedJsonParser`
 * answers what `JSON.parse` answers — the same value, keys in the same order, every key an own data
 * property, the same texts refused — whatever the step size, and never takes more than a step's characters
 * (plus one token) at a time.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keysOf, WIDE_KEYS } from "../../src/json-keys.js";
import { type JsonBodyResult, parseJsonBody, steppedJsonParser } from "../../src/server/json-body.js";
import { fieldAt } from "./helpers.js";

/** Runs the parser to its end in steps of `size` characters; counts the steps. */
const parseStepped = (text: string, size: number): { result: JsonBodyResult; steps: number } => {
  const parser = steppedJsonParser(text);
  for (let steps = 1; ; steps++) {
    const result = parser.step(size);
    if (result !== undefined) return { result, steps };
  }
};

const same = (text: string, size: number): void => {
  const { result } = parseStepped(text, size);
  let expected: unknown;
  try {
    expected = JSON.parse(text);
  } catch {
    expect(result.ok, `refused by JSON.parse: ${JSON.stringify(text.slice(0, 200))}`).toBe(false);
    return;
  }
  expect(result.ok, `accepted by JSON.parse: ${JSON.stringify(text.slice(0, 200))}`).toBe(true);
  const value = (result as { value: unknown }).value;
  expect(value).toEqual(expected);
  expect(JSON.stringify(value)).toBe(JSON.stringify(expected));
};

describe("steppedJsonParser", () => {
  it.each([
    ['{"__proto__":{"admin":true}}', ["__proto__"]],
    ['{"request":{"object":{"metadata":{"__proto__":{}}}}}', ["request", "object", "metadata", "__proto__"]],
    ['{"a":[1,{"__proto__":null}]}', ["a", "1", "__proto__"]],
    ['{"a":{"\\u005f\\u005Fproto__":{"x":1}}}', ["a", "__proto__"]],
    ['{"a":{"constructor":{"prototype":{"polluted":1}}}}', ["a", "constructor", "prototype"]],
    ['{"a":{"\\u0063onstructor":{"prototype":{}}}}', ["a", "constructor", "prototype"]],
    ['{"a":{"toString":1,"hasOwnProperty":2,"__proto__":3,"__proto__":4}}', ["a", "__proto__"]],
  ])("SPEC §2.1 prototype keys are data: %s holds the key at %j as an own field", (text, path) => {
    for (const size of [1, 3, 1000]) {
      const { result } = parseStepped(text, size);
      expect(result.ok).toBe(true);
      const value = (result as { value: unknown }).value;
      expect(fieldAt(value, path)).toMatchObject({ enumerable: true, writable: true, configurable: true });
      expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse(text)));
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(
        Object.getPrototypeOf(
          fieldAt(value, path.slice(0, -1).length ? path.slice(0, -1) : path)?.value ?? {},
        ),
      ).not.toBeNull();
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });

  it.each([
    "0",
    "-0",
    "1e400",
    "-1.5E-3",
    '"\\ud800"',
    '"\\u0000\\n\\t\\"\\\\\\/"',
    ' \t\r\n{ "a" : [ 1 , 2 ] , "b" : { } } \n',
    '{"b":1,"2":2,"a":3,"1":4,"b":5}',
    '{"a":1,"a":{"x":1}}',
    '"\u{1F600}é"',
    "[[[[[]]]]]",
    "[1,2,]",
    "[01]",
    "[1.]",
    "[.5]",
    "[+1]",
    "[-]",
    "[1e]",
    "[NaN]",
    "[tru]",
    "[nul]",
    '{"a" 1}',
    '{"a":1,}',
    "{a:1}",
    "{'a':1}",
    '"\\x41"',
    '"\\u12"',
    '"a\tb"',
    "\ufeff{}",
    "{} {}",
    "[",
    "]",
    '"',
    " ",
    "",
  ])("SPEC §2.1 answers %j as JSON.parse does", (text) => {
    for (const size of [1, 2, 7, 1 << 20]) same(text, size);
  });

  it("SPEC §2.1 agrees with JSON.parse on any JSON, any spacing, any step size", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 64 }),
        (value, indent, size) => {
          same(JSON.stringify(value, null, indent), size);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("SPEC §2.1 refuses exactly what JSON.parse refuses, on damaged JSON", () => {
    const damage = fc.tuple(
      fc.nat(),
      fc.constantFrom(",", "]", "}", '"', ":", "\\", "x", "\u0001", "1", " ", ""),
    );
    fc.assert(
      fc.property(fc.jsonValue(), damage, fc.integer({ min: 1, max: 16 }), (value, [at, insert], size) => {
        const text = JSON.stringify(value);
        const i = at % (text.length + 1);
        same(`${text.slice(0, i)}${insert}${text.slice(i + (insert === "" ? 1 : 0))}`, size);
      }),
      { numRuns: 500 },
    );
  });

  it("SPEC §2.1 names empty and invalid bodies as parseJsonBody does", () => {
    expect(parseStepped("", 10).result).toEqual(parseJsonBody(""));
    expect(parseStepped('{"a":', 10).result).toEqual({
      ok: false,
      error: "request body is not valid JSON: Unexpected end of JSON input (expected a value)",
    });
    expect(parseStepped('{"a":1]', 10).result).toEqual({
      ok: false,
      error: `request body is not valid JSON: Unexpected "]" at position 6 (expected ',' or '}')`,
    });
  });

  it("SPEC §2.1 steps are bounded: dense and deep bodies take one step per step-size of characters", () => {
    const size = 1024;
    for (const text of [
      "[" + "{},".repeat(20_000) + "{}]",
      // As deep as a review gets (MAX_REVIEW_DEPTH), alone and side by side.
      "[".repeat(10_002) + "]".repeat(10_002),
      `[${`${"[".repeat(10_000)}${"]".repeat(10_000)},`.repeat(5)}[]]`,
      `{"n":${'{"n":'.repeat(10_000)}0${"}".repeat(10_001)}`,
    ]) {
      const { result, steps } = parseStepped(text, size);
      expect(result.ok).toBe(true);
      // Each step stops once it has passed `size` characters (a token is never split, and these are short).
      expect(steps).toBeGreaterThanOrEqual(Math.floor(text.length / (size + 8)));
      expect(steps).toBeLessThanOrEqual(Math.ceil(text.length / size) + 1);
    }
  });

  it("SPEC §2.1 a parsed body holds about the memory JSON.parse's value holds (no spare array capacity)", () => {
    // 200,000 one-element lists: `push` leaves each with 16 slots; JSON.parse sizes them exactly.
    const text = `[${Array.from({ length: 20 }, () => `${"[".repeat(10_000)}1${"]".repeat(10_000)}`).join(",")}]`;
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const retained = (parse: () => unknown): number => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const value = parse();
      gc();
      const held = process.memoryUsage().heapUsed - before;
      expect(value).toBeDefined();
      return held;
    };
    const native = retained(() => JSON.parse(text));
    const stepped = retained(() => parseStepped(text, 32 * 1024).result);
    expect(stepped).toBeLessThan(native * 1.5);
  });

  it("decision 82: a wide object's recorded keys are its own keys in order, duplicates and __proto__ included", () => {
    const keys = Array.from({ length: WIDE_KEYS + 500 }, (_, i) => `k${i % (WIDE_KEYS + 300)}`);
    keys.splice(700, 0, "__proto__");
    keys.push("constructor", "k5", "__proto__");
    const text = `{${keys.map((k, i) => `"${k}":${i}`).join(",")}}`;
    const { result } = parseStepped(text, 4096);
    const value = (result as { value: Record<string, unknown> }).value;
    expect(keysOf(value)).toEqual(Object.keys(value));
    expect(keysOf(value)).toEqual(Object.keys(JSON.parse(text)));
    expect(keysOf(value)).not.toBe(keysOf({ ...value }));
  });
});
