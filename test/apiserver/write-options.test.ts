/**
 * Write options kube validates before a write (decision 127): `force` only on apply patches, `fieldManager`
 * at most 128 bytes of printable characters; and a custom resource's body names its kind and apiVersion (a
 * built-in kind takes both from the endpoint).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { fieldManagerCauses, goQuote } from "../../src/apiserver/managed-fields.js";
import { allowAll, call, configMap, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

describe("kube's ValidateFieldManager", () => {
  it.each([
    ["a plain name", "kubectl-client-side-apply", []],
    ["128 bytes", "m".repeat(128), []],
    ["a space and a letter outside ASCII", "a é", []],
    ["129 bytes", "m".repeat(129), ["FieldValueTooLong"]],
    ["64 two-byte letters and one more byte", `${"é".repeat(64)}x`, ["FieldValueTooLong"]],
    ["a control character", "a\u0001b", ["FieldValueInvalid"]],
    ["a tab and a no-break space", "a\tb\u00a0", ["FieldValueInvalid", "FieldValueInvalid"]],
  ])("%s", (_, manager, reasons) => {
    expect(fieldManagerCauses(manager).map((c) => c.reason)).toEqual(reasons);
  });

  it("names the character and its byte position, the value quoted as Go quotes it", () => {
    expect(fieldManagerCauses("é\u0001")[0]?.message).toBe(
      'Invalid value: "é\\x01": invalid character U+0001 (at position 2)',
    );
  });

  it.each([
    ["plain", '"plain"'],
    ['a "quote" and a \\', '"a \\"quote\\" and a \\\\"'],
    ["tab\tnewline\n", '"tab\\tnewline\\n"'],
    ["\u007f\u00a0\u{e0001}", '"\\x7f\\u00a0\\U000e0001"'],
  ])("goQuote(%j)", (s, quoted) => {
    expect(goQuote(s)).toBe(quoted);
  });
});

describe("SPEC §8.1: on the local API server, as on kube-apiserver", () => {
  let s: ApiServer;
  const CMS = "/api/v1/namespaces/w/configmaps";
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("w"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
    await call(s, "POST", CMS, configMap("c", "w"));
  });
  afterAll(() => s.stop());

  it.each(["true", "false"])(
    "force=%s on a merge patch: 422 on PatchOptions, nothing changed",
    async (force) => {
      const r = await call(
        s,
        "PATCH",
        `${CMS}/c?force=${force}`,
        { data: { a: "1" } },
        {
          contentType: "application/merge-patch+json",
        },
      );
      expect(r.status).toBe(422);
      expect(r.body.details).toMatchObject({ group: "meta.k8s.io", kind: "PatchOptions" });
      expect((await call(s, "GET", `${CMS}/c`)).body.data?.a).toBeUndefined();
    },
  );

  it("a fieldManager of 129 characters: 422 on CreateOptions, nothing created", async () => {
    const r = await call(s, "POST", `${CMS}?fieldManager=${"m".repeat(129)}`, configMap("long", "w"));
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      expect.objectContaining({ reason: "FieldValueTooLong", field: "fieldManager" }),
    ]);
    expect((await call(s, "GET", `${CMS}/long`)).status).toBe(404);
  });

  it("a fieldManager with a control character: 422 on UpdateOptions", async () => {
    const current = (await call(s, "GET", `${CMS}/c`)).body;
    const r = await call(s, "PUT", `${CMS}/c?fieldManager=a%01b`, current);
    expect(r.status).toBe(422);
    expect(r.body.details.kind).toBe("UpdateOptions");
  });

  it("a built-in kind's body may leave out kind and apiVersion: the endpoint names them", async () => {
    const r = await call(s, "POST", CMS, { metadata: { name: "bare" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ apiVersion: "v1", kind: "ConfigMap" });
  });

  it("a custom resource's body without kind: 400, as kube's unstructured decoder answers", async () => {
    const { kind: _, ...body } = widget("no-kind", "w");
    const r = await call(s, "POST", WIDGETS("w"), body);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(
      /^the object provided is unrecognized \(must be of type Widget\): Object 'Kind' is missing in '\{/,
    );
    expect((await call(s, "GET", `${WIDGETS("w")}/no-kind`)).status).toBe(404);
  });

  it("a custom resource's body without apiVersion: 400", async () => {
    const { apiVersion: _, ...body } = widget("no-version", "w");
    const r = await call(s, "POST", WIDGETS("w"), body);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      "the API version in the data () does not match the expected API version (example.com/v1)",
    );
  });
});
