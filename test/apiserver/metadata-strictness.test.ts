/**
 * Decision 131: metadata as kube's typed decoding and ValidateObjectMetaUpdate read it — unknown fields under
 * `metadata` follow fieldValidation (a typo such as `metadata.lables` is a 400 under kubectl's Strict, a
 * warning by default), a uid or a deletionTimestamp a write tries to set is a 422, and a patch may not move
 * an object to another namespace or kind. The local server used to accept each silently.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { immutableMetadataCauses, unknownMetadataFields } from "../../src/apiserver/object-meta.js";
import { invalid } from "../../src/apiserver/status.js";
import { allowAll, call, configMap, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

describe("unknownMetadataFields", () => {
  it.each([
    ["the usual metadata", { name: "a", labels: { a: "b" }, finalizers: ["x/y"] }, []],
    ["a typo", { name: "a", lables: { a: "b" } }, ["metadata.lables"]],
    [
      "a field inside an owner reference",
      { name: "a", ownerReferences: [{ apiVersion: "v1", kind: "K", name: "o", uid: "u", bogus: 1 }] },
      ["metadata.ownerReferences[0].bogus"],
    ],
    [
      "managedFields as kube writes them",
      {
        name: "a",
        managedFields: [
          {
            manager: "m",
            operation: "Update",
            apiVersion: "v1",
            time: "t",
            fieldsType: "FieldsV1",
            fieldsV1: {},
          },
        ],
      },
      [],
    ],
  ])("%s", (_, metadata, want) => {
    expect(unknownMetadataFields({ metadata })).toEqual(want);
  });
});

describe("immutableMetadataCauses (kube's ValidateObjectMetaUpdate, after BeforeUpdate)", () => {
  const old = { metadata: { name: "a", uid: "u1" } };
  const deleting = {
    metadata: {
      name: "a",
      uid: "u1",
      deletionTimestamp: "2026-01-01T00:00:00Z",
      deletionGracePeriodSeconds: 0,
    },
  };
  it.each([
    ["no uid given (the stored one is kept)", old, { metadata: { name: "a" } }, []],
    ["another uid", old, { metadata: { name: "a", uid: "u2" } }, ["metadata.uid", "metadata.uid"]],
    [
      "a deletionTimestamp on an object not being deleted",
      old,
      { metadata: { name: "a", deletionTimestamp: "2026-01-01T00:00:00Z" } },
      ["metadata.deletionTimestamp", "metadata.deletionTimestamp"],
    ],
    [
      "another deletionTimestamp on one being deleted (put back)",
      deleting,
      { metadata: { name: "a", deletionTimestamp: "2030-01-01T00:00:00Z" } },
      [],
    ],
    [
      "another grace period",
      deleting,
      { metadata: { name: "a", deletionGracePeriodSeconds: 30 } },
      ["metadata.deletionGracePeriodSeconds", "metadata.deletionGracePeriodSeconds"],
    ],
  ])("%s", (_, before, after, fields) => {
    expect(immutableMetadataCauses(before, after).map((c) => c.field)).toEqual(fields);
  });

  it("prints a time as Go prints it, and kube's message names each problem once", () => {
    const causes = immutableMetadataCauses(old, { metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } });
    expect(causes[0]?.message).toBe("Invalid value: 2026-01-01 00:00:00 +0000 UTC: field is immutable");
    expect(invalid("", "ConfigMap", "a", causes).message).toBe(
      'ConfigMap "a" is invalid: metadata.deletionTimestamp: Invalid value: 2026-01-01 00:00:00 +0000 UTC: field is immutable',
    );
  });
});

describe("SPEC §8.1: on the local API server, as on kube-apiserver", () => {
  let s: ApiServer;
  const CMS = "/api/v1/namespaces/m/configmaps";
  const MERGE = { contentType: "application/merge-patch+json" };
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("m"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
    await call(s, "POST", CMS, configMap("c", "m"));
    await call(s, "POST", WIDGETS("m"), widget("w", "m"));
  });
  afterAll(() => s.stop());

  const typo = (name: string) => ({ ...configMap(name, "m"), metadata: { name, lables: { a: "b" } } });

  it("metadata.lables under fieldValidation=Strict (kubectl's default): 400, nothing created", async () => {
    const r = await call(s, "POST", `${CMS}?fieldValidation=Strict`, typo("strict"));
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.lables"',
    );
    expect((await call(s, "GET", `${CMS}/strict`)).status).toBe(404);
  });

  it("metadata.lables by default: created, with kube's warning, and without the unknown field", async () => {
    const r = await call(s, "POST", CMS, typo("warned"));
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBe('299 - "unknown field \\"metadata.lables\\""');
    expect(r.body.metadata.lables).toBeUndefined();
  });

  it("a Strict merge patch adding metadata.lables: 422 on the patch, as kube answers a patch", async () => {
    const r = await call(
      s,
      "PATCH",
      `${CMS}/c?fieldValidation=Strict`,
      { metadata: { lables: { a: "b" } } },
      MERGE,
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([expect.objectContaining({ field: "patch" })]);
  });

  it.each([
    ["a uid", { metadata: { uid: "00000000-0000-0000-0000-000000000009" } }, 422],
    ["a deletionTimestamp", { metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } }, 422],
    ["another namespace", { metadata: { namespace: "default" } }, 400],
    ["another kind", { kind: "Secret" }, 422],
    ["another apiVersion", { apiVersion: "v2" }, 422],
  ])("a merge patch setting %s is refused, the object unchanged", async (_, patch, code) => {
    const before = (await call(s, "GET", `${CMS}/c`)).body;
    expect((await call(s, "PATCH", `${CMS}/c`, patch, MERGE)).status).toBe(code);
    expect((await call(s, "GET", `${CMS}/c`)).body).toEqual(before);
  });

  it("a custom resource's kind changed by a patch: kube's 422 naming the kind it must be", async () => {
    const r = await call(s, "PATCH", `${WIDGETS("m")}/w`, { kind: "Other" }, MERGE);
    expect(r.status).toBe(422);
    expect(r.body.details).toMatchObject({
      kind: "Other",
      causes: [expect.objectContaining({ field: "kind" })],
    });
    expect(r.body.message).toMatch(/kind: Invalid value: "Other": must be Widget$/);
  });
});
