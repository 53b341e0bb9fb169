/**
 * Decision 134: the warnings of one answer as kube-apiserver's recorder keeps them — each once, whole while
 * they fit in 4,096 runes, then each cut to 256 and none added once the budget is spent, none holding a
 * control character (which kube cannot write as a header) — and the strict
 * decoders' caps (100 errors for a built-in's typed decoding, 100 repeated keys for a custom resource's JSON
 * decoding). A body with a thousand unknown fields used to get a thousand Warning headers, more than Node's
 * and Go's clients read (the conformance probes `decode: 1,000 …` hold the real server's answers).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { duplicateFields } from "../../src/apiserver/duplicate-fields.js";
import type { ApiServer } from "../../src/apiserver/index.js";
import { recordedWarnings } from "../../src/apiserver/wire.js";
import { allowAll, call, namespace, start, WIDGETS, widgetCrd } from "./helpers.js";

const a = (n: number, c = "a") => c.repeat(n);

describe("recordedWarnings (kube's warning recorder)", () => {
  it.each([
    ["each text once, in order", ["x", "y", "x", "z"], ["x", "y", "z"]],
    ["empty texts dropped", ["", "x"], ["x"]],
    ["whole while they fit in 4,096 runes", [a(4000), a(96, "b")], [a(4000), a(96, "b")]],
    [
      "the first that does not fit cuts every one to 256 runes, itself included",
      [a(4000), a(97, "b")],
      [a(256), a(97, "b")],
    ],
    [
      "after the cut, each is cut as it comes, while the budget lasts",
      [
        a(4000),
        a(300, "b"),
        a(300, "c"),
        ...Array.from({ length: 20 }, (_, i) => a(256, String.fromCharCode(100 + i))),
      ],
      [
        a(256),
        a(256, "b"),
        a(256, "c"),
        ...Array.from({ length: 13 }, (_, i) => a(256, String.fromCharCode(100 + i))),
      ],
    ],
    ["runes, not UTF-16 units", ["é".repeat(4096)], ["é".repeat(4096)]],
    ["a text with a newline is left out, not joined", ["line\none", "ok"], ["ok"]],
    ["so is one with a tab, DEL or a C1 control", ["a\tb", "a\u007fb", "a\u0085b", "ok"], ["ok"]],
    ["a text left out costs nothing of the budget", ["bad\n".repeat(2000), a(4096)], [a(4096)]],
    [
      "a cut that drops the control character keeps the text",
      [a(4000), `${a(300, "b")}\n`, a(100, "c")],
      [a(256), a(256, "b"), a(100, "c")],
    ],
    ["a character outside the BMP is one rune", ["😀".repeat(4096)], ["😀".repeat(4096)]],
    ["a cut keeps whole characters", ["😀".repeat(4097)], ["😀".repeat(256)]],
  ])("%s", (_, texts, want) => {
    expect(recordedWarnings(texts)).toEqual(want);
  });
});

describe("duplicateFields' limit", () => {
  it("stops at the limit it is given", () => {
    const text = `{${Array.from({ length: 300 }, (_, i) => `"k${i}":1,"k${i}":2`).join(",")}}`;
    expect(duplicateFields(text, 100)).toHaveLength(100);
    expect(duplicateFields(text)).toHaveLength(300);
  });
});

describe("SPEC §8.1: many unknown or repeated fields, as on kube-apiserver", () => {
  let s: ApiServer;
  const CMS = "/api/v1/namespaces/wb/configmaps";
  const warnings = (r: { headers: Record<string, unknown> }): string[] =>
    r.headers.warning === undefined ? [] : String(r.headers.warning).split(/, (?=299 )/);
  const unknown = (n: number, prefix = "bogus") =>
    Array.from({ length: n }, (_, i) => `"${prefix}${i}":1`).join(",");
  const repeated = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":"1","k${i}":"2"`).join(",");
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("wb"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
  });
  afterAll(() => s.stop());

  it("a built-in names its unknown fields in the body's order", async () => {
    const r = await call(s, "POST", CMS, undefined, {
      raw: '{"apiVersion":"v1","kind":"ConfigMap","zeta":1,"metadata":{"name":"order","zz":1,"aa":1},"alpha":1}',
      contentType: "application/json",
    });
    expect(r.status).toBe(201);
    expect(warnings(r)).toEqual([
      '299 - "unknown field \\"zeta\\""',
      '299 - "unknown field \\"metadata.zz\\""',
      '299 - "unknown field \\"metadata.aa\\""',
      '299 - "unknown field \\"alpha\\""',
    ]);
  });

  it("a built-in with 1,000 unknown and 1,000 repeated fields: its first 100 problems, unknown ones first", async () => {
    const text = `{"apiVersion":"v1","kind":"ConfigMap",${unknown(1000)},"metadata":{"name":"many"},"data":{${repeated(1000)}}}`;
    const warned = await call(s, "POST", CMS, undefined, { raw: text, contentType: "application/json" });
    expect(warned.status).toBe(201);
    expect(warnings(warned)).toHaveLength(100);
    expect(warnings(warned).at(-1)).toBe('299 - "unknown field \\"bogus99\\""');
    const refused = await call(s, "POST", `${CMS}?fieldValidation=Strict`, undefined, {
      raw: text.replace('"many"', '"many-strict"'),
      contentType: "application/json",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message.match(/unknown field/g)).toHaveLength(100);
    expect(refused.body.message).not.toMatch(/duplicate field/);
  });

  it("a custom resource with 150,000 unknown fields (a body near the 3 MiB limit): answered, its warnings bounded", async () => {
    const text = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"huge"},"spec":{${unknown(150_000, "b")}}}`;
    const r = await call(s, "POST", WIDGETS("wb"), undefined, { raw: text, contentType: "application/json" });
    expect(r.status).toBe(201);
    const w = warnings(r);
    expect(w.length).toBeGreaterThan(100);
    expect(w.join("").length).toBeLessThan(8192);
  }, 60_000);

  it("a custom resource: 100 repeated keys, then its unknown fields sorted, the warnings cut at 4,096 runes", async () => {
    const text = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"many","labels":{${repeated(1000)}}},"spec":{${unknown(1000)}}}`;
    const warned = await call(s, "POST", WIDGETS("wb"), undefined, {
      raw: text,
      contentType: "application/json",
    });
    expect(warned.status).toBe(201);
    const w = warnings(warned);
    expect(w).toHaveLength(115);
    expect(w[0]).toBe('299 - "duplicate field \\"metadata.labels.k0\\""');
    expect(w.at(-1)).toBe('299 - "unknown field \\"spec.bogus110\\""');
    const refused = await call(s, "POST", `${WIDGETS("wb")}?fieldValidation=Strict`, undefined, {
      raw: text.replace('"many"', '"many-strict"'),
      contentType: "application/json",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message.match(/duplicate field/g)).toHaveLength(100);
    expect(refused.body.message.match(/unknown field/g)).toHaveLength(1000);
  });
});
