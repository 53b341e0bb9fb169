/**
 * Decision 133: the keys a JSON text repeats, named as kube-apiserver's strict decoder names them, and what
 * the local server does with them under each `fieldValidation` (the real server's answers to the same texts
 * are the conformance probes `decode: … duplicate …`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { duplicateFields } from "../../src/apiserver/duplicate-fields.js";
import type { ApiServer } from "../../src/apiserver/index.js";
import { allowAll, call, configMap, namespace, start, WIDGETS, widgetCrd } from "./helpers.js";

describe("duplicateFields", () => {
  it.each([
    ["no repetition", '{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}', []],
    ["a key of a map", '{"data":{"a":"1","a":"2"}}', ["data.a"]],
    ["a top-level field", '{"metadata":{"name":"x"},"metadata":{"name":"y"}}', ["metadata"]],
    [
      "inside a repeated field, then the field",
      '{"data":{"a":"1","b":"1","a":"2"},"data":{"c":"3"}}',
      ["data.a", "data"],
    ],
    [
      "in a list element",
      '{"metadata":{"ownerReferences":[{"name":"x"},{"name":"y","name":"z"}]}}',
      ["metadata.ownerReferences[1].name"],
    ],
    ["under a top-level array (a JSON patch)", '[{"op":"add","op":"replace","path":"/a"}]', ["[0].op"]],
    ["in nested arrays", '{"a":[[{"x":1}],[{"x":1,"x":2}]]}', ["a[1][0].x"]],
    ["a key spelled with an escape", '{"a":1,"\\u0061":2}', ["a"]],
    ["quotes and brackets inside strings are text", '{"a":"}\\"{,[","b":"a","a":"]"}', ["a"]],
    ["a key that is a prototype's name", '{"__proto__":1,"__proto__":2,"constructor":1}', ["__proto__"]],
    ["the third of three", '{"a":1,"a":2,"a":3}', ["a", "a"]],
    [
      "past eight keys (a Set)",
      `{${Array.from({ length: 20 }, (_, i) => `"k${i}":1`).join(",")},"k3":2}`,
      ["k3"],
    ],
    ["whitespace between the tokens", '{ "a" : 1 ,\n "a" :\t2 }', ["a"]],
    ["a scalar text", '"a"', []],
  ])("%s", (_, text, want) => {
    expect(JSON.parse(text)).toBeDefined();
    expect(duplicateFields(text)).toEqual(want);
  });

  it("follows a text nested 10,000 levels deep without recursion", () => {
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    expect(duplicateFields(`{"x":${deep},"x":1}`)).toEqual(["x"]);
  });
});

describe("SPEC §8.1: repeated keys under fieldValidation, as on kube-apiserver", () => {
  let s: ApiServer;
  const CMS = "/api/v1/namespaces/d/configmaps";
  const raw = (text: string, contentType = "application/json") => ({ raw: text, contentType });
  const warnings = (r: { headers: Record<string, unknown> }): string[] =>
    r.headers.warning === undefined ? [] : String(r.headers.warning).split(/, (?=299 )/);
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("d"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
    await call(s, "POST", CMS, configMap("c", "d", { a: "1" }));
  });
  afterAll(() => s.stop());

  const dupCm = (name: string) =>
    `{"apiVersion":"v1","kind":"ConfigMap","bogus":1,"metadata":{"name":"${name}"},"data":{"a":"1","a":"2"}}`;

  it("a create by default: stored with the last value, a warning for each unknown and then each repeated field", async () => {
    const r = await call(s, "POST", CMS, undefined, raw(dupCm("w")));
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ a: "2" });
    expect(warnings(r)).toEqual([
      '299 - "unknown field \\"bogus\\""',
      '299 - "duplicate field \\"data.a\\""',
    ]);
  });

  it("a create under Strict: 400 naming both, nothing stored", async () => {
    const r = await call(s, "POST", `${CMS}?fieldValidation=Strict`, undefined, raw(dupCm("s")));
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus", duplicate field "data.a"',
    );
    expect((await call(s, "GET", `${CMS}/s`)).status).toBe(404);
  });

  it("a create under Ignore: stored, no warning", async () => {
    const r = await call(s, "POST", `${CMS}?fieldValidation=Ignore`, undefined, raw(dupCm("i")));
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBeUndefined();
  });

  it("a custom resource: its repeated keys before its unknown fields", async () => {
    const text = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x","labels":{"a":"1","a":"2"}},"spec":{"bogus":1}}`;
    const r = await call(s, "POST", `${WIDGETS("d")}?fieldValidation=Strict`, undefined, raw(text));
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'Widget in version "v1" cannot be handled as a Widget: strict decoding error: duplicate field "metadata.labels.a", unknown field "spec.bogus"',
    );
  });

  it("a PUT by default: a warning naming the field", async () => {
    const live = (await call(s, "GET", `${CMS}/c`)).body;
    const text = JSON.stringify(live).replace('"name":"c"', '"name":"c","name":"c"');
    const r = await call(s, "PUT", `${CMS}/c`, undefined, raw(text));
    expect(r.status).toBe(200);
    expect(warnings(r)).toEqual(['299 - "duplicate field \\"metadata.name\\""']);
  });

  it("a merge patch by default: applied with the last value and a warning", async () => {
    const r = await call(
      s,
      "PATCH",
      `${CMS}/c`,
      undefined,
      raw('{"data":{"a":"5","a":"6"}}', "application/merge-patch+json"),
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ a: "6" });
    expect(warnings(r)).toEqual(['299 - "duplicate field \\"data.a\\""']);
  });

  it("a merge patch under Strict: 422 on patch, not applied", async () => {
    const r = await call(
      s,
      "PATCH",
      `${CMS}/c?fieldValidation=Strict`,
      undefined,
      raw('{"data":{"a":"7","a":"8"}}', "application/merge-patch+json"),
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual(["patch"]);
    expect(r.body.message).toMatch(/: strict decoding error: duplicate field "data\.a"$/);
    expect((await call(s, "GET", `${CMS}/c`)).body.data).toEqual({ a: "6" });
  });

  it("a JSON patch by default: kube's own wording for its operations' repeated keys", async () => {
    const r = await call(
      s,
      "PATCH",
      `${CMS}/c`,
      undefined,
      raw('[{"op":"add","op":"replace","path":"/data/a","value":"9"}]', "application/json-patch+json"),
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ a: "9" });
    expect(warnings(r)).toEqual(['299 - "json patch duplicate field \\"[0].op\\""']);
  });
});
