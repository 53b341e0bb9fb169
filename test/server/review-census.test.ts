/**
 * The census of a large review (src/server/review-census.ts, decision 89): it refuses exactly what
 * `JSON.parse` refuses, counts the values `JSON.parse` would build where they lie — `request.object`,
 * `request.oldObject`, the rest — with the last of duplicate keys winning as in `JSON.parse`, and empties
 * only the too-large objects.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildableText,
  CENSUS_STEP_BYTES,
  censusInSteps,
  literalIs,
  MAX_OBJECT_VALUES,
  oversizeOf,
  type ReviewCensus,
  reviewCensus,
} from "../../src/server/review-census.js";

const bytes = (text: string): Buffer => Buffer.from(text);
const censusOf = (text: string): ReviewCensus => {
  const r = reviewCensus(bytes(text));
  if (!r.ok) throw new Error(r.error);
  return r.census;
};

const isObject = (v: unknown): boolean => v !== null && typeof v === "object" && !Array.isArray(v);

/** How many values `JSON.parse` builds for `v`, `v` included. */
const valuesIn = (v: unknown): number => {
  if (Array.isArray(v)) return 1 + v.reduce((n: number, x) => n + valuesIn(x), 0);
  if (v !== null && typeof v === "object")
    return 1 + Object.values(v).reduce((n: number, x) => n + valuesIn(x), 0);
  return 1;
};

describe("reviewCensus counts what JSON.parse builds, by where it lies", () => {
  it.each([
    ["a CREATE", '{"request":{"uid":"u","object":{"a":[1,{},[]]},"oldObject":null}}', 5, 1, 3],
    [
      "spaces everywhere",
      ' { "request" : { "object" : [ 1 , { } ] , "oldObject" : { "x" : "y" } } } ',
      3,
      2,
      2,
    ],
    ["an escaped key names the object", '{"request":{"obj\\u0065ct":{"a":1}}}', 2, 0, 2],
    ["an escaped key names the request", '{"re\\u0071uest":{"object":{"a":1}}}', 2, 0, 2],
    ["an escaped key names the old object", '{"request":{"\\u006fldObject":[1]}}', 0, 2, 2],
    ["a key that only starts as one followed is not it", '{"request":{"objects":{"a":1}}}', 0, 0, 4],
    ["an escaped key one character too long is not it", '{"request":{"object\\u0073":{"a":1}}}', 0, 0, 4],
    ["an escape that decodes to another letter is not it", '{"request":{"obj\\u0066ct":{"a":1}}}', 0, 0, 4],
    ["brackets and quotes inside strings are text", '{"request":{"object":{"s":"[{\\"}]"}}}', 2, 0, 2],
    ["any characters in strings and keys", '{"request":{"object":{"ключ":"значение 🎉"}}}', 2, 0, 2],
    ["`object` outside `request` is the rest", '{"object":{"a":1},"request":{}}', 0, 0, 4],
    ["a root that is a list has no request", '[{"request":{"object":{}}}]', 0, 0, 4],
    [
      "a later `object` wins; the earlier counts as the rest",
      '{"request":{"object":[1,2,3],"object":{}}}',
      1,
      0,
      6,
    ],
    [
      "a later `request` wins; the earlier one's objects count as the rest",
      '{"request":{"object":[1,2,3]},"request":{"oldObject":{}}}',
      0,
      1,
      7,
    ],
  ])("%s", (_what, text, objectValues, oldObjectValues, otherValues) => {
    const census = censusOf(text);
    expect([census.objectValues, census.oldObjectValues, census.otherValues]).toEqual([
      objectValues,
      oldObjectValues,
      otherValues,
    ]);
  });

  it.each([
    [
      "an object's metadata.managedFields are counted apart",
      '{"request":{"object":{"metadata":{"name":"a","managedFields":[{"fieldsV1":{"f:a":{}}}]}},"oldObject":{"metadata":{"managedFields":[]}}}}',
      3,
      2,
      5,
    ],
    ["not outside metadata", '{"request":{"object":{"managedFields":[1]}}}', 3, 0, 0],
    [
      "escaped keys name metadata and managedFields",
      '{"request":{"object":{"met\\u0061data":{"m\\u0061naged\\u0046ields":[1]}}}}',
      2,
      0,
      2,
    ],
    [
      "not in another member of the object",
      '{"request":{"object":{"spec":{"managedFields":[1]},"metadata":{"x":{"managedFields":[1]}}}}}',
      8,
      0,
      0,
    ],
    [
      "not under an object that is a list",
      '{"request":{"object":[{"metadata":{"managedFields":[1]}}]}}',
      5,
      0,
      0,
    ],
    [
      "a later managedFields wins; the earlier counts as the rest",
      '{"request":{"object":{"metadata":{"managedFields":[1,2],"managedFields":[3]}}}}',
      2,
      0,
      2,
    ],
  ])("%s", (_what, text, objectValues, oldObjectValues, managedFieldsValues) => {
    const census = censusOf(text);
    expect([census.objectValues, census.oldObjectValues, census.managedFieldsValues]).toEqual([
      objectValues,
      oldObjectValues,
      managedFieldsValues,
    ]);
  });

  it("property: managedFields of any content are counted apart, and only they", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.jsonValue(), (managedFields, name, spec) => {
        const object = { metadata: { name, managedFields }, spec };
        const text = JSON.stringify({ request: { object } });
        const census = censusOf(text);
        expect(census.managedFieldsValues).toBe(valuesIn(managedFields));
        expect(census.objectValues).toBe(valuesIn(object) - valuesIn(managedFields));
        // Built as it was sent, but for managedFields: an empty list (or object) in their place.
        const sent = JSON.parse(text).request.object;
        const emptied = Array.isArray(managedFields)
          ? []
          : isObject(managedFields)
            ? {}
            : sent.metadata.managedFields;
        expect(JSON.parse(buildableText(bytes(text), census)).request.object).toEqual({
          ...sent,
          metadata: { ...sent.metadata, managedFields: emptied },
        });
      }),
      { numRuns: 300 },
    );
  });

  it("property: escaped or not, a key is followed exactly when JSON.parse reads it as the name", () => {
    const names = ["request", "object", "oldObject", "metadata", "managedFields"];
    // A key as a client may write it: each UTF-16 unit as itself or as an escape (a surrogate always escaped).
    const written = (key: string) =>
      fc
        .array(fc.constantFrom("plain", "unicode", "upper"), { minLength: key.length, maxLength: key.length })
        .map((how) =>
          key
            .split("")
            .map((unit, i) => {
              const hex = unit.charCodeAt(0).toString(16).padStart(4, "0");
              const surrogate = unit.charCodeAt(0) >= 0xd800 && unit.charCodeAt(0) <= 0xdfff;
              if (how[i] === "upper") return `\\u${hex.toUpperCase()}`;
              if (how[i] === "unicode" || surrogate || unit < " ") return `\\u${hex}`;
              return unit === '"' || unit === "\\" ? `\\${unit}` : unit;
            })
            .join(""),
        );
    const key = fc.oneof(
      fc.constantFrom(...names),
      fc.string({ maxLength: 14 }),
      fc.string({ unit: "grapheme" }),
    );
    fc.assert(
      fc.property(
        key.chain((k) => written(k).map((w) => [k, w] as const)),
        fc.constantFrom(...names),
        ([k, w], name) => {
          const text = bytes(`"${w}"`);
          expect(JSON.parse(text.toString())).toBe(k);
          expect(literalIs(text, 0, text.length, w !== k, Buffer.from(name))).toBe(k === name);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("records where each object lies, the last one of duplicates", () => {
    const text = '{"request":{"object":[0],"oldObject":{"a":"b"},"object":null}}';
    const census = censusOf(text);
    expect(text.slice(census.object!.start, census.object!.end)).toBe("null");
    expect(text.slice(census.oldObject!.start, census.oldObject!.end)).toBe('{"a":"b"}');
    expect(census.oldObject!.opener).toBe("{");
  });

  it("property: any review of JSON values — counts match JSON.parse's, and the spans hold the objects", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.jsonValue(), (object, oldObject, uid) => {
        const text = JSON.stringify({ apiVersion: "v", request: { uid, object, oldObject } }, null, 1);
        const census = censusOf(text);
        expect(census.objectValues).toBe(valuesIn(object));
        expect(census.oldObjectValues).toBe(valuesIn(oldObject));
        expect(census.otherValues).toBe(3 + valuesIn(uid));
        // The spans are byte offsets; these texts' strings may hold any character.
        const b = bytes(text);
        const parsed = JSON.parse(text).request;
        expect(JSON.parse(b.subarray(census.object!.start, census.object!.end).toString())).toEqual(
          parsed.object,
        );
        expect(JSON.parse(b.subarray(census.oldObject!.start, census.oldObject!.end).toString())).toEqual(
          parsed.oldObject,
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe("reviewCensus refuses exactly what JSON.parse refuses", () => {
  const damage = fc.tuple(
    fc.jsonValue(),
    fc.array(
      fc.tuple(
        fc.nat(),
        fc.constantFrom(
          "",
          ",",
          ":",
          "{",
          "}",
          "[",
          "]",
          '"',
          "\\",
          "1",
          "-",
          ".",
          "e",
          "x",
          "\u0001",
          " ",
          "tru",
          "nul",
        ),
      ),
      { maxLength: 3 },
    ),
  );

  it("property: damaged JSON texts — the census is ok exactly when JSON.parse is", () => {
    fc.assert(
      fc.property(damage, ([value, edits]) => {
        let text = JSON.stringify({ request: { object: value } });
        for (const [at, insert] of edits) {
          const i = at % (text.length + 1);
          // Every other edit replaces a character instead of inserting.
          text = text.slice(0, i) + insert + text.slice(i + (insert.length % 2));
        }
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        expect(reviewCensus(bytes(text)).ok, text).toBe(parses);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ["empty", ""],
    ["a lone minus", '{"request":-}'],
    ["a leading zero", '{"request":01}'],
    ["a bad escape", '{"request":"\\x"}'],
    ["a short unicode escape", '{"request":"\\u12"}'],
    ["a raw control character", '{"request":"a\u0001"}'],
    ["an unterminated string", '{"request":"abc'],
    ["a missing colon", '{"request" 1}'],
    ["a trailing comma", '{"request":[1,]}'],
    ["trailing garbage", '{"request":{}} x'],
    ["mismatched brackets", '{"request":[}'],
  ])("%s", (_what, text) => {
    expect(() => JSON.parse(text)).toThrow();
    const r = reviewCensus(bytes(text));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/^request body is not valid JSON: Unexpected /);
  });
});

describe("censusInSteps", () => {
  it("yields about once per CENSUS_STEP_BYTES and returns what reviewCensus does", () => {
    // A list deep in the object, which the census reads a run at a time: the runs end at a step too.
    const list = `[${Array.from({ length: 3 * CENSUS_STEP_BYTES }, () => "0").join(",")}]`;
    const text = `{"request":{"object":{"spec":{"v":${list}}}}}`;
    const steps = censusInSteps(bytes(text));
    let yielded = 0;
    let step = steps.next();
    while (!step.done) {
      yielded++;
      step = steps.next();
    }
    expect(yielded).toBe(Math.floor(text.length / CENSUS_STEP_BYTES));
    expect(step.value).toEqual(reviewCensus(bytes(text)));
    expect(step.value.ok && step.value.census.objectValues).toBe(3 * CENSUS_STEP_BYTES + 3);
  });
});

describe("oversizeOf and buildableText", () => {
  const big = `[${Array.from({ length: MAX_OBJECT_VALUES }, () => "{}").join(",")}]`; // one value over
  it("only a side over the bound is oversize, and only it is emptied: {} for an object, [] for a list", () => {
    const text = `{"request":{"uid":"u","object":{"v":${big}},"oldObject":${big},"options":{"a":1}}}`;
    const census = censusOf(text);
    expect(oversizeOf(census)).toEqual({
      objectValues: MAX_OBJECT_VALUES + 2,
      oldObjectValues: MAX_OBJECT_VALUES + 1,
      limit: MAX_OBJECT_VALUES,
    });
    expect(JSON.parse(buildableText(bytes(text), census, oversizeOf(census)))).toEqual({
      request: { uid: "u", object: {}, oldObject: [], options: { a: 1 } },
    });
    const oneSide = `{"request":{"object":{"v":1,"metadata":{"managedFields":[{"f":${big}}]}},"oldObject":{"v":${big},"metadata":{"managedFields":[1]}}}}`;
    const c = censusOf(oneSide);
    expect(oversizeOf(c)).toEqual({ oldObjectValues: MAX_OBJECT_VALUES + 3, limit: MAX_OBJECT_VALUES });
    // The other object is built without its managedFields, however many values they held.
    expect(JSON.parse(buildableText(bytes(oneSide), c, oversizeOf(c)))).toEqual({
      request: { object: { v: 1, metadata: { managedFields: [] } }, oldObject: {} },
    });
  });

  it("at the bound nothing is oversize", () => {
    const atBound = `[${Array.from({ length: MAX_OBJECT_VALUES - 1 }, () => "0").join(",")}]`;
    expect(oversizeOf(censusOf(`{"request":{"object":${atBound}}}`))).toBeUndefined();
  });
});
