/**
 * The Accept header as kube-apiserver reads it (backlog item 13, decision 147): the pure negotiation as
 * table tests, then the local server over HTTPS — PartialObjectMetadata and its list for get, list, watch and
 * writes, the 406s and their order, and kube's printer columns for the built-ins. The same requests are sent
 * to kube-apiserver by the conformance probes (`accept: …`, test/cluster/conformance-probes.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { checkTransform, negotiate, parseAccept } from "../../src/apiserver/negotiation.js";
import type { ResourceInfo } from "../../src/apiserver/types.js";
import { allowAll, call, configMap, namespace, start, WIDGETS, watch, widget, widgetCrd } from "./helpers.js";

const PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const BUILT_IN = { builtIn: true, collection: false };
const CUSTOM = { builtIn: false, collection: false };

describe("negotiate: the answer's form from the Accept header", () => {
  it.each([
    ["no header: the object", undefined, BUILT_IN, { as: "object" }],
    ["application/json", "application/json", BUILT_IN, { as: "object" }],
    ["a wildcard", "*/*", CUSTOM, { as: "object" }],
    ["application/* for a custom resource (no route check there)", "application/*", CUSTOM, { as: "object" }],
    [
      "kubectl get's Table",
      `application/json;as=Table;v=v1;g=meta.k8s.io,application/json`,
      CUSTOM,
      { as: "Table", version: "v1" },
    ],
    [
      "a Table of v1beta1",
      "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
      BUILT_IN,
      { as: "Table", version: "v1beta1" },
    ],
    ["PartialObjectMetadata", PARTIAL, CUSTOM, { as: "PartialObjectMetadata", version: "v1" }],
    ["its list", PARTIAL_LIST, BUILT_IN, { as: "PartialObjectMetadataList", version: "v1" }],
    [
      "an unwritable clause passed over",
      `text/html, ${PARTIAL}`,
      CUSTOM,
      { as: "PartialObjectMetadata", version: "v1" },
    ],
    [
      "quality before order",
      `application/json;q=0.5, ${PARTIAL}`,
      CUSTOM,
      { as: "PartialObjectMetadata", version: "v1" },
    ],
    [
      "protobuf first: the JSON clause after it (no protobuf written here)",
      `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, ${PARTIAL}`,
      CUSTOM,
      { as: "PartialObjectMetadata", version: "v1" },
    ],
    [
      "protobuf alone for a built-in: answered in JSON",
      "application/vnd.kubernetes.protobuf",
      BUILT_IN,
      { as: "object" },
    ],
    [
      "a watch stream",
      "application/json;stream=watch",
      { builtIn: true, collection: true },
      { as: "object" },
    ],
  ])("%s", (_name, accept, endpoint, expected) => {
    expect(negotiate(accept, endpoint)).toEqual(expected);
  });

  it.each([
    [
      "text/html on a built-in: go-restful's route refuses it",
      "text/html",
      BUILT_IN,
      "Available representations: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ],
    [
      "…and lists the watch streams on a collection",
      "text/html",
      { builtIn: true, collection: true },
      "application/vnd.kubernetes.protobuf;stream=watch",
    ],
    [
      "application/* on a built-in (the route matches exactly)",
      "application/*",
      BUILT_IN,
      "406: Not Acceptable",
    ],
    [
      "text/html on a custom resource: the negotiation refuses it",
      "text/html",
      CUSTOM,
      "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ],
    [
      "protobuf alone for a custom resource",
      "application/vnd.kubernetes.protobuf",
      CUSTOM,
      "only the following",
    ],
    [
      "a Table of an unknown version",
      "application/json;as=Table;g=meta.k8s.io;v=v9",
      BUILT_IN,
      "only the following",
    ],
    [
      "a Table of another group",
      "application/json;as=Table;g=example.com;v=v1",
      CUSTOM,
      "only the following",
    ],
    ["an unknown as=", "application/json;as=Deployment;g=apps;v=v1", BUILT_IN, "only the following"],
    ["a version without as=", "application/json;v=v1", BUILT_IN, "only the following"],
    [
      "a Table in YAML's stream (YAML has none)",
      "application/yaml;stream=watch",
      CUSTOM,
      "only the following",
    ],
  ])("406: %s", (_name, accept, endpoint, message) => {
    expect(() => negotiate(accept, endpoint)).toThrow(
      expect.objectContaining({ code: 406, message: expect.stringContaining(message) }),
    );
  });

  it("parseAccept: by quality, then the specific before the wildcard, else in order", () => {
    const order = parseAccept(
      "*/*;q=0.8, text/*, application/json;q=0.8, text/html, application/yaml;q=0.9",
    ).map((c) => `${c.type}/${c.subType}`);
    expect(order).toEqual(["text/html", "text/*", "application/yaml", "application/json", "*/*"]);
  });

  it.each([
    [
      "PartialObjectMetadata of a built-in list",
      { builtIn: true, kind: "ConfigMap", group: "" },
      "PartialObjectMetadata",
      true,
      "is a list (*core.ConfigMapList)",
    ],
    [
      "…of a Lease list: its internal package",
      { builtIn: true, kind: "Lease", group: "coordination.k8s.io" },
      "PartialObjectMetadata",
      true,
      "(*coordination.LeaseList)",
    ],
    [
      "…of a custom resource list",
      { builtIn: false, kind: "Widget", group: "example.com" },
      "PartialObjectMetadata",
      true,
      "(*unstructured.UnstructuredList)",
    ],
    [
      "PartialObjectMetadataList of one built-in",
      { builtIn: true, kind: "ConfigMap", group: "" },
      "PartialObjectMetadataList",
      false,
      "is not a list (*core.ConfigMap)",
    ],
    [
      "…of one custom resource: kube's unstructured accessor's 500",
      { builtIn: false, kind: "Widget", group: "example.com" },
      "PartialObjectMetadataList",
      false,
      "content is not a list",
    ],
  ] as const)("checkTransform: %s", (_name, type, as, list, message) => {
    expect(() => checkTransform({ as, version: "v1" }, type as unknown as ResourceInfo, list)).toThrow(
      message,
    );
  });
});

describe("SPEC §8.1: the local server negotiates as kube-apiserver does (backlog item 13)", () => {
  let s: ApiServer;
  const CMS = "/api/v1/namespaces/n/configmaps";

  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("n"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
    await call(s, "POST", CMS, configMap("c", "n", { a: "1", b: "2" }, { tier: "x" }));
    await call(s, "POST", WIDGETS("n"), widget("w", "n"));
  });
  afterAll(() => s.stop());

  it("get and list as PartialObjectMetadata: the metadata alone, in meta.k8s.io's kinds", async () => {
    const one = await call(s, "GET", `${CMS}/c`, undefined, { accept: PARTIAL });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: expect.objectContaining({ name: "c", namespace: "n", labels: { tier: "x" } }),
    });
    const list = await call(s, "GET", WIDGETS("n"), undefined, { accept: PARTIAL_LIST });
    expect(list.body).toMatchObject({
      kind: "PartialObjectMetadataList",
      apiVersion: "meta.k8s.io/v1",
      metadata: { resourceVersion: expect.any(String) },
      items: [{ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { name: "w" } }],
    });
    expect(list.body.items[0].spec).toBeUndefined();
  });

  it("a 406 comes before the object is read or written; a transform's 406 after", async () => {
    expect((await call(s, "GET", `${CMS}/missing`, undefined, { accept: "text/html" })).status).toBe(406);
    expect((await call(s, "GET", `${CMS}/missing`, undefined, { accept: PARTIAL_LIST })).status).toBe(404);
    const refused = await call(s, "POST", CMS, configMap("html", "n"), { accept: "text/html" });
    expect(refused.status).toBe(406);
    expect((await call(s, "GET", `${CMS}/html`)).status).toBe(404);
    const created = await call(s, "POST", CMS, configMap("listed", "n"), { accept: PARTIAL_LIST });
    expect(created.body.message).toBe(
      "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)",
    );
    expect((await call(s, "GET", `${CMS}/listed`)).status).toBe(200);
  });

  it("a watch of PartialObjectMetadata sends each event's metadata; of its list, ends at the first event", async () => {
    const partial = await watch(s, `${CMS}?watch=1&labelSelector=tier`, undefined, PARTIAL);
    const added = await partial.next();
    partial.close();
    expect(added).toEqual({
      type: "ADDED",
      object: {
        kind: "PartialObjectMetadata",
        apiVersion: "meta.k8s.io/v1",
        metadata: expect.objectContaining({ name: "c" }),
      },
    });
    const listed = await watch(s, `${CMS}?watch=1&labelSelector=tier`, undefined, PARTIAL_LIST);
    await listed.ended;
    await expect(listed.next(100)).rejects.toThrow();
  });

  it("a ConfigMap's Table has kube's Data column and a built-in's Age is a string", async () => {
    const table = await call(s, "GET", CMS, undefined, {
      accept: "application/json;as=Table;g=meta.k8s.io;v=v1",
    });
    expect(
      table.body.columnDefinitions.map((c: { name: string; type: string }) => `${c.name} ${c.type}`),
    ).toEqual(["Name string", "Data string", "Age string"]);
    const row = table.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === "c");
    expect(row.cells[1]).toBe(2);
    expect(row.cells[2]).toMatch(/^\d+s$/);
  });
});
