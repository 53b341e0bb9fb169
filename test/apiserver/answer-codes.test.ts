/**
 * Decision 132: answers a client branches on, as kube-apiserver gives them — a custom resource of another kind
 * is its strategy's 422, a name that is not a string a decoding 400, a JSON null body an empty object; a JSON
 * patch read as kube's library reads it; server-side apply's own refusals (another type, managedFields, a field
 * the schema does not declare — a 500 that stores nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { jsonPatch, PatchError } from "../../src/apiserver/patch.js";
import { allowAll, call, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

describe("a JSON patch as kube's library (evanphx/json-patch) reads it", () => {
  const doc = { metadata: { name: "a", labels: { x: "y" } }, spec: { a: 1 } };
  it.each([
    ["add without a value adds null", [{ op: "add", path: "/spec/b" }], { ...doc, spec: { a: 1, b: null } }],
    [
      "a path without its leading / loses its first segment",
      [{ op: "add", path: "spec/b", value: 2 }],
      { ...doc, b: 2 },
    ],
  ])("%s", (_, ops, want) => {
    expect(jsonPatch(doc, ops)).toEqual(want);
  });

  it.each([
    ["an unknown op", [{ op: "frob", path: "/spec" }]],
    ["a move from a path that is not there", [{ op: "move", from: "/spec/nope", path: "/spec/x" }]],
    ["a path of one segment without /", [{ op: "add", path: "spec", value: 1 }]],
  ])("%s: 422, as kube answers every patch it cannot apply", (_, ops) => {
    try {
      jsonPatch(doc, ops);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(PatchError);
      expect((e as PatchError).code).toBe(422);
    }
  });
});

describe("SPEC §8.1: on the local API server, as on kube-apiserver", () => {
  let s: ApiServer;
  const CMS = "/api/v1/namespaces/c/configmaps";
  const APPLY = { contentType: "application/apply-patch+yaml" };
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("c"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
  });
  afterAll(() => s.stop());

  it("a custom resource created with another kind: the strategy's 422 naming the kind it must be", async () => {
    const r = await call(s, "POST", WIDGETS("c"), { ...widget("k", "c"), kind: "Gadget" });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'Gadget.example.com "k" is invalid: kind: Invalid value: "Gadget": must be Widget',
    );
  });

  it("a name that is a number: 400, the object cannot be decoded", async () => {
    const r = await call(s, "POST", CMS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: 5 } });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(
      /cannot unmarshal number into Go struct field ObjectMeta\.metadata\.name of type string$/,
    );
  });

  it("a body of JSON null: an empty object, refused for its missing name (422)", async () => {
    const r = await call(s, "POST", CMS, null);
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([expect.objectContaining({ field: "metadata.name" })]);
  });

  it("apply of a field the schema does not declare: kube's 500, nothing stored", async () => {
    const body = { ...widget("undeclared", "c"), spec: { size: "small", bogus: 1 } };
    const r = await call(s, "PATCH", `${WIDGETS("c")}/undeclared?fieldManager=t`, body, APPLY);
    expect(r.status).toBe(500);
    expect(r.body.message).toBe(
      "failed to create typed patch object (c/undeclared; example.com/v1, Kind=Widget): .spec.bogus: field not declared in schema",
    );
    expect((await call(s, "GET", `${WIDGETS("c")}/undeclared`)).status).toBe(404);
  });

  it.each([
    [
      "with managedFields",
      { ...widget("mf", "c"), metadata: { name: "mf", managedFields: [{ manager: "x" }] } },
      "metadata.managedFields must be nil",
    ],
    [
      "without apiVersion",
      { kind: "Widget", metadata: { name: "nov" } },
      "invalid object type: /, Kind=Widget",
    ],
    [
      "without kind",
      { apiVersion: "example.com/v1", metadata: { name: "nok" } },
      "invalid object type: example.com/v1, Kind=",
    ],
  ])("apply %s: 400", async (_, body, message) => {
    const name = (body.metadata as { name: string }).name;
    const r = await call(s, "PATCH", `${WIDGETS("c")}/${name}?fieldManager=t`, body, APPLY);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(message);
  });

  it("apply of a declared configuration still creates it", async () => {
    const r = await call(
      s,
      "PATCH",
      `${WIDGETS("c")}/fine?fieldManager=t`,
      widget("fine", "c", { size: "small" }),
      APPLY,
    );
    expect(r.status).toBe(201);
  });
});
