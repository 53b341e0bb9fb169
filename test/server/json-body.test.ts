/**
 * SPEC §2.1 `__proto__` poisoning: bodies carrying prototype keys anywhere (plain or \u-escaped) are refused
 * with the path of the key; ordinary bodies, including ones that merely mention the words, parse.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findPoisonedKey, mayHoldPoisonedKey, parseJsonBody } from "../../src/server/json-body.js";

describe("parseJsonBody", () => {
  it.each([
    ['{"__proto__":{"admin":true}}', "__proto__"],
    ['{"request":{"object":{"metadata":{"__proto__":{}}}}}', "request.object.metadata.__proto__"],
    ['{"a":[1,{"__proto__":null}]}', "a[1].__proto__"],
    ['{"a":{"\\u005f\\u005Fproto__":{}}}', "a.__proto__"],
    ['{"a":{"constructor":{"prototype":{"polluted":1}}}}', "a.constructor.prototype"],
    ['{"a":{"\\u0063onstructor":{"prototype":{}}}}', "a.constructor.prototype"],
  ])("refuses %s (key at %s)", (text, where) => {
    expect(parseJsonBody(text)).toEqual({
      ok: false,
      error: `request body contains a forbidden prototype key at ${where}`,
    });
  });

  it.each([
    '{"labels":{"constructor":"x"}}',
    '{"message":"\\"__proto__\\": is just text here"}',
    '{"constructor":{"name":"not a prototype"}}',
    '{"a":"\\u003cb\\u003e"}',
  ])("accepts %s", (text) => {
    expect(parseJsonBody(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it("names invalid JSON and empty bodies", () => {
    expect(parseJsonBody("{")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^request body is not valid JSON: /),
    });
    expect(parseJsonBody("")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^request body is empty/),
    });
  });

  it("findPoisonedKey finds nothing in a clean deep object", () => {
    expect(findPoisonedKey({ a: [{ b: { c: [[{ d: 1 }]] } }] })).toBeUndefined();
  });
});

describe("mayHoldPoisonedKey (the substring pre-check before the regex scans)", () => {
  it.each([
    ['{"a":"b"}', false],
    ['{"request":{"uid":"x","object":{"metadata":{"labels":{"team":"a"}}}}}', false],
    ['{"__proto__":1}', true],
    ['{"constructor":1}', true],
    ['{"a":"\\u0041"}', true],
    ['{"a":"\\\\u"}', true],
  ])("%s → %s", (text, expected) => {
    expect(mayHoldPoisonedKey(text)).toBe(expected);
  });

  /** Every spelling JSON allows for `word`: each character as itself or as a \u escape in either case. */
  const spelling = (word: string) =>
    fc.tuple(...[...word].map(() => fc.constantFrom("plain", "lower", "upper"))).map((how) =>
      [...word]
        .map((c, i) => {
          const hex = c.charCodeAt(0).toString(16).padStart(4, "0");
          return how[i] === "plain" ? c : `\\u${how[i] === "lower" ? hex : hex.toUpperCase()}`;
        })
        .join(""),
    );

  it("never lets a poisoned key through, whatever its spelling", () => {
    fc.assert(
      fc.property(spelling("__proto__"), spelling("constructor"), fc.boolean(), (proto, ctor, useProto) => {
        const text = useProto
          ? `{"request":{"object":{"${proto}":{"x":1}}}}`
          : `{"request":{"${ctor}":{"prototype":{"x":1}}}}`;
        expect(mayHoldPoisonedKey(text)).toBe(true);
        expect(parseJsonBody(text)).toMatchObject({ ok: false });
      }),
      { numRuns: 500 },
    );
  });
});
