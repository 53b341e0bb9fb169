/**
 * SPEC §2.1 prototype keys are data: bodies carrying `__proto__`, `constructor` or `prototype` keys anywhere
 * (plain or \u-escaped) parse like any other, each key an own field, and no prototype changes; invalid and
 * empty bodies are named.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonBody } from "../../src/server/json-body.js";
import { fieldAt } from "./helpers.js";

describe("parseJsonBody", () => {
  it.each([
    ['{"__proto__":{"admin":true}}', ["__proto__"]],
    ['{"request":{"object":{"metadata":{"__proto__":{}}}}}', ["request", "object", "metadata", "__proto__"]],
    ['{"a":[1,{"__proto__":null}]}', ["a", "1", "__proto__"]],
    ['{"a":{"\\u005f\\u005Fproto__":{"x":1}}}', ["a", "__proto__"]],
    ['{"a":{"constructor":{"prototype":{"polluted":1}}}}', ["a", "constructor", "prototype"]],
    ['{"a":{"\\u0063onstructor":{"prototype":{}}}}', ["a", "constructor", "prototype"]],
    ['{"status":{"prototype":{"polluted":1}}}', ["status", "prototype"]],
  ])("parses %s, the key at %j an own field", (text, path) => {
    const parsed = parseJsonBody(text);
    expect(parsed.ok).toBe(true);
    const value = (parsed as { value: unknown }).value;
    expect(fieldAt(value, path)).toMatchObject({ enumerable: true, writable: true });
    expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse(text)));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
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

  it("builds no managedFields of the review's objects, and nothing else is left out (decision 98)", () => {
    const managedFields = [{ manager: "kubectl", fieldsV1: { "f:spec": { "f:replicas": {} } } }];
    const object = { metadata: { name: "a", managedFields }, spec: { managedFields: "a field" } };
    const review = {
      kind: "AdmissionReview",
      request: { uid: "u", object, oldObject: { ...object, metadata: { managedFields, uid: "x" } } },
      response: { metadata: { managedFields } },
    };
    const parsed = parseJsonBody(JSON.stringify(review));
    expect(parsed).toEqual({
      ok: true,
      value: {
        ...review,
        request: {
          uid: "u",
          object: { metadata: { name: "a" }, spec: { managedFields: "a field" } },
          oldObject: { metadata: { uid: "x" }, spec: { managedFields: "a field" } },
        },
      },
    });
  });

  it("names what is wrong with a body as it came, not as it was cut", () => {
    const text = '{"request":{"object":{"metadata":{"managedFields":[1]}},"uid":}}';
    expect(parseJsonBody(text)).toEqual({
      ok: false,
      error: (() => {
        try {
          JSON.parse(text);
        } catch (e) {
          return `request body is not valid JSON: ${(e as Error).message}`;
        }
        return "";
      })(),
    });
  });

  it.each([
    ["a literal misspelt", "[tru]"],
    ["two values without a comma", "[1 2]"],
    ["a key without its colon", '[{"manager" "a"}]'],
    ["a trailing comma", '[{"manager":"a",}]'],
    ["a leading zero", "[01]"],
    ["a number without its fraction", "[1.]"],
    ["an escape JSON does not have", '["\\q"]'],
    ["a control character in a string", '["a\u0001b"]'],
    ["a comma without values", "[,]"],
    ["a bare word", "[managedFields]"],
  ])("SPEC §2.1 refuses a review whose objects' managedFields are not JSON: %s", (_, managedFields) => {
    const text = `{"request":{"uid":"u","object":{"metadata":{"name":"a","managedFields":${managedFields}}}}}`;
    expect(() => JSON.parse(text)).toThrow();
    expect(parseJsonBody(text)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^request body is not valid JSON: /),
    });
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

  it("whatever its spelling, a prototype key is parsed as an own field and no prototype changes", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("__proto__", "constructor", "prototype").chain(spelling),
        fc.boolean(),
        (key, nestedPrototype) => {
          const inner = nestedPrototype ? '{"prototype":{"polluted":1}}' : '{"polluted":1}';
          const parsed = parseJsonBody(`{"request":{"object":{"${key}":${inner}}}}`);
          expect(parsed.ok).toBe(true);
          const object = ((parsed as { value: { request: { object: object } } }).value.request.object ??
            {}) as object;
          expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
          expect(Object.keys(object)).toHaveLength(1);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        },
      ),
      { numRuns: 500 },
    );
  });
});
