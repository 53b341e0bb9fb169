/**
 * Decision 133: a Scale's unknown fields follow `fieldValidation` as on kube-apiserver — warnings by default
 * (in the body's order for a PUT, sorted for a patch, whose result kube encodes again before decoding it),
 * nothing under Ignore, and under Strict a PUT's 400 (kube's error path for a custom resource's Scale, the
 * same message as an undecodable one, before the object is read) or a patch's 422 on `patch`. The local
 * server used to drop them without a word.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { unknownScaleFields } from "../../src/apiserver/rest/scale.js";
import { allowAll, call, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

const NO_KIND = 'no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:110"';
const MERGE = { contentType: "application/merge-patch+json" };

describe("unknownScaleFields", () => {
  const body = {
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: { name: "w", lables: {} },
    spec: { replicas: 3, bogus: 1 },
    extra: 1,
    status: { replicas: 1, selector: "", more: true },
  };
  it.each([
    ["in the body's order (a PUT)", false, ["metadata.lables", "spec.bogus", "extra", "status.more"]],
    ["sorted (a patch's result)", true, ["extra", "metadata.lables", "spec.bogus", "status.more"]],
  ])("%s", (_, sorted, want) => {
    expect(unknownScaleFields(body, sorted)).toEqual(want);
  });

  it("names a key spelled __proto__ like any other", () => {
    expect(unknownScaleFields(JSON.parse('{"spec":{"__proto__":1},"__proto__":2}'), false)).toEqual([
      "spec.__proto__",
      "__proto__",
    ]);
  });

  it("finds nothing in a Scale as kube writes it", () => {
    const written = {
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "w", namespace: "sc", uid: "u", resourceVersion: "1", creationTimestamp: "t" },
      spec: { replicas: 1 },
      status: { replicas: 1, selector: "a=b" },
    };
    expect(unknownScaleFields(written, true)).toEqual([]);
  });
});

describe("SPEC §8.1: a Scale's unknown fields, as on kube-apiserver", () => {
  let s: ApiServer;
  const W = WIDGETS("sc");
  const scale = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: { name, namespace: "sc" },
    spec: { replicas: 3, bogus: 1 },
    extra: 1,
    ...extra,
  });
  const replicas = async (): Promise<unknown> => (await call(s, "GET", `${W}/w`)).body.spec.replicas;
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("sc"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
    await call(s, "POST", W, widget("w", "sc", { replicas: 1 }));
  });
  afterAll(() => s.stop());

  it("a PUT by default: scaled, each unknown field a warning in the body's order", async () => {
    const r = await call(s, "PUT", `${W}/w/scale`, scale("w"));
    expect(r.status).toBe(200);
    expect(r.headers.warning).toBe(
      '299 - "unknown field \\"spec.bogus\\"", 299 - "unknown field \\"extra\\""',
    );
    expect(await replicas()).toBe(3);
  });

  it("a PUT under Ignore: scaled, no warning", async () => {
    const r = await call(s, "PUT", `${W}/w/scale?fieldValidation=Ignore`, {
      ...scale("w"),
      spec: { replicas: 2, bogus: 1 },
    });
    expect(r.status).toBe(200);
    expect(r.headers.warning).toBeUndefined();
    expect(await replicas()).toBe(2);
  });

  it("a PUT under Strict: 400 and not scaled", async () => {
    const r = await call(s, "PUT", `${W}/w/scale?fieldValidation=Strict`, {
      ...scale("w"),
      spec: { replicas: 5, bogus: 1 },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(NO_KIND);
    expect(await replicas()).toBe(2);
  });

  it("a PUT under Strict of an object that is not there: the same 400, before the read", async () => {
    const r = await call(s, "PUT", `${W}/none/scale?fieldValidation=Strict`, scale("none"));
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(NO_KIND);
  });

  it("a PUT by default of an object that is not there: 404 with the warning", async () => {
    const r = await call(s, "PUT", `${W}/none/scale`, scale("none", { spec: { replicas: 1 } }));
    expect(r.status).toBe(404);
    expect(r.headers.warning).toBe('299 - "unknown field \\"extra\\""');
  });

  it("a merge patch by default: scaled, the warnings sorted", async () => {
    const r = await call(s, "PATCH", `${W}/w/scale`, { spec: { replicas: 4, bogus: 1 }, extra: 1 }, MERGE);
    expect(r.status).toBe(200);
    expect(r.headers.warning).toBe(
      '299 - "unknown field \\"extra\\"", 299 - "unknown field \\"spec.bogus\\""',
    );
    expect(await replicas()).toBe(4);
  });

  it("a merge patch under Strict: 422 on patch naming the fields, and not scaled", async () => {
    const r = await call(
      s,
      "PATCH",
      `${W}/w/scale?fieldValidation=Strict`,
      { spec: { replicas: 6, bogus: 1 }, extra: 1 },
      MERGE,
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual(["patch"]);
    expect(r.body.message).toMatch(
      /: strict decoding error: unknown field "extra", unknown field "spec\.bogus"$/,
    );
    expect(await replicas()).toBe(4);
  });

  it("a JSON patch adding a field under Strict: 422", async () => {
    const r = await call(
      s,
      "PATCH",
      `${W}/w/scale?fieldValidation=Strict`,
      [{ op: "add", path: "/extra", value: 1 }],
      { contentType: "application/json-patch+json" },
    );
    expect(r.status).toBe(422);
    expect(r.body.message).toMatch(/: strict decoding error: unknown field "extra"$/);
  });
});
