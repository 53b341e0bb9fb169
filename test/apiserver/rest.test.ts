/**
 * Conformance-style tests of object semantics over plain HTTPS (SPEC §8): discovery, authentication,
 * create/get/list, generateName, resourceVersion and generation, the status and scale subresources,
 * preconditions and conflicts, finalizers, namespace lifecycle, dry run and Status error bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { allowAll, call, configMap, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

let s: ApiServer;
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

beforeAll(async () => {
  s = await start({ admission: allowAll });
  expect((await call(s, "POST", "/api/v1/namespaces", namespace("ns1"))).status).toBe(201);
  expect((await call(s, "POST", CRDS, widgetCrd())).status).toBe(201);
});
afterAll(() => s.stop());

describe("discovery and authentication", () => {
  it("/version reports 1.32", async () => {
    const r = await call(s, "GET", "/version");
    expect(r.body).toMatchObject({ major: "1", minor: "32" });
  });

  it("legacy discovery lists core, built-in groups and CRD groups with plain application/json", async () => {
    expect((await call(s, "GET", "/api")).body).toMatchObject({ kind: "APIVersions", versions: ["v1"] });
    const apis = await call(s, "GET", "/apis");
    expect(apis.headers["content-type"]).toBe("application/json");
    const names = apis.body.groups.map((g: { name: string }) => g.name);
    expect(names).toEqual(
      expect.arrayContaining(["apps", "coordination.k8s.io", "admissionregistration.k8s.io", "example.com"]),
    );
    const core = await call(s, "GET", "/api/v1");
    const ns = core.body.resources.find((r: { name: string }) => r.name === "namespaces");
    expect(ns).toMatchObject({ namespaced: false, kind: "Namespace", shortNames: ["ns"] });
    const ex = await call(s, "GET", "/apis/example.com/v1");
    const names2 = ex.body.resources.map((r: { name: string }) => r.name);
    expect(names2).toEqual(["widgets", "widgets/status", "widgets/scale"]);
    expect(ex.body.resources[0]).toMatchObject({ shortNames: ["wd"], categories: ["all"], kind: "Widget" });
  });

  it("OpenAPI v3 lists every group-version and carries a PATCH op with fieldValidation per kind; v2 is 404", async () => {
    const root = await call(s, "GET", "/openapi/v3");
    expect(root.body.paths["apis/example.com/v1"].serverRelativeURL).toBe("/openapi/v3/apis/example.com/v1");
    const doc = await call(s, "GET", "/openapi/v3/apis/example.com/v1");
    const op = doc.body.paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"].patch;
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain("fieldValidation");
    expect(Object.keys(op.requestBody.content)).not.toContain("application/strategic-merge-patch+json");
    const core = await call(s, "GET", "/openapi/v3/api/v1");
    expect(
      Object.keys(
        core.body.paths["/api/v1/namespaces/{namespace}/configmaps/{name}"].patch.requestBody.content,
      ),
    ).toContain("application/strategic-merge-patch+json");
    expect((await call(s, "GET", "/openapi/v2")).status).toBe(404);
  });

  it("requests without a known bearer token are 401 with a Status", async () => {
    const r = await call(s, "GET", "/api/v1/namespaces", undefined, { token: "wrong" });
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ kind: "Status", reason: "Unauthorized", code: 401 });
    expect((await call(s, "GET", "/version", undefined, { token: null })).status).toBe(401);
  });

  it("unknown resources are 404", async () => {
    expect((await call(s, "GET", "/apis/example.com/v1/namespaces/ns1/gadgets")).status).toBe(404);
  });
});

describe("object semantics", () => {
  it("create assigns uid, creationTimestamp and a string resourceVersion from one global counter", async () => {
    const a = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", configMap("a", "ns1"));
    const b = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", configMap("b", "ns1"));
    expect(a.status).toBe(201);
    expect(a.body.metadata).toMatchObject({ namespace: "ns1" });
    // kube's ConfigMap strategy keeps no generation (conformance probe "protobuf: create a ServiceAccount" and
    // friends); custom resources and the workload kinds start at 1.
    expect(a.body.metadata.generation).toBeUndefined();
    expect(a.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(typeof a.body.metadata.resourceVersion).toBe("string");
    expect(Number(b.body.metadata.resourceVersion)).toBe(Number(a.body.metadata.resourceVersion) + 1);
  });

  it("generateName appends 5 random characters", async () => {
    const r = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", {
      metadata: { generateName: "gen-" },
    });
    expect(r.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it("create of an existing name is 409 AlreadyExists with details", async () => {
    const r = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", configMap("a", "ns1"));
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      kind: "Status",
      reason: "AlreadyExists",
      message: 'configmaps "a" already exists',
      details: { name: "a", kind: "configmaps" },
    });
    // Go's omitempty: a core kind's empty group is absent from the wire, as on a real server.
    expect(r.body).not.toHaveProperty("details.group");
  });

  it("an immediate delete answers a Success Status for custom resources too, as a real server does", async () => {
    await call(s, "POST", WIDGETS("ns1"), widget("gone-now", "ns1"));
    const r = await call(s, "DELETE", `${WIDGETS("ns1")}/gone-now`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      kind: "Status",
      status: "Success",
      details: { name: "gone-now", group: "example.com", kind: "widgets" },
    });
    const core = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", configMap("gone-now", "ns1"));
    expect(core.status).toBe(201);
    const coreDelete = await call(s, "DELETE", "/api/v1/namespaces/ns1/configmaps/gone-now");
    expect(coreDelete.body).toMatchObject({
      kind: "Status",
      details: { name: "gone-now", kind: "configmaps" },
    });
    expect(coreDelete.body).not.toHaveProperty("details.group");
  });

  it("get of a missing object is 404 NotFound naming the qualified resource", async () => {
    const r = await call(s, "GET", `${WIDGETS("ns1")}/nope`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({
      reason: "NotFound",
      message: 'widgets.example.com "nope" not found',
      details: { group: "example.com", kind: "widgets" },
    });
  });

  it("bad JSON is 400 BadRequest", async () => {
    const r = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", undefined, { raw: "{nope" });
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe("BadRequest");
  });

  it("invalid names are 422 Invalid with causes", async () => {
    const r = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", configMap("Bad_Name", "ns1"));
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0]).toMatchObject({ reason: "FieldValueInvalid", field: "metadata.name" });
  });

  it("PUT with a stale resourceVersion is 409 Conflict with kube's message", async () => {
    const created = await call(
      s,
      "POST",
      "/api/v1/namespaces/ns1/configmaps",
      configMap("stale", "ns1", { k: "1" }),
    );
    const rv = created.body.metadata.resourceVersion;
    const ok = await call(s, "PUT", "/api/v1/namespaces/ns1/configmaps/stale", {
      ...created.body,
      data: { k: "2" },
    });
    expect(ok.status).toBe(200);
    const stale = await call(s, "PUT", "/api/v1/namespaces/ns1/configmaps/stale", {
      ...created.body,
      metadata: { ...created.body.metadata, resourceVersion: rv },
      data: { k: "3" },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe("Conflict");
    expect(stale.body.message).toBe(
      'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
    const merge = await call(
      s,
      "PATCH",
      "/api/v1/namespaces/ns1/configmaps/stale",
      { metadata: { resourceVersion: rv }, data: { k: "4" } },
      { contentType: "application/merge-patch+json" },
    );
    expect(merge.status).toBe(409);
  });

  it("a no-op patch keeps the resourceVersion", async () => {
    const before = await call(s, "GET", "/api/v1/namespaces/ns1/configmaps/stale");
    const r = await call(
      s,
      "PATCH",
      "/api/v1/namespaces/ns1/configmaps/stale",
      { data: before.body.data },
      { contentType: "application/merge-patch+json" },
    );
    expect(r.body.metadata.resourceVersion).toBe(before.body.metadata.resourceVersion);
  });

  it("generation is bumped on spec changes only; the main resource ignores status and /status ignores everything else", async () => {
    const c = await call(s, "POST", WIDGETS("ns1"), {
      ...widget("g1", "ns1", { size: "small" }),
      status: { phase: "Set" },
    });
    expect(c.body.metadata.generation).toBe(1);
    expect(c.body.status).toBeUndefined();
    const m = "application/merge-patch+json";
    const labelled = await call(
      s,
      "PATCH",
      `${WIDGETS("ns1")}/g1`,
      { metadata: { labels: { a: "b" } } },
      { contentType: m },
    );
    expect(labelled.body.metadata.generation).toBe(1);
    const spec = await call(
      s,
      "PATCH",
      `${WIDGETS("ns1")}/g1`,
      { spec: { size: "large" }, status: { phase: "Ignored" } },
      { contentType: m },
    );
    expect(spec.body.metadata.generation).toBe(2);
    expect(spec.body.status).toBeUndefined();
    const status = await call(
      s,
      "PATCH",
      `${WIDGETS("ns1")}/g1/status`,
      { spec: { size: "small" }, status: { phase: "Ready" } },
      { contentType: m },
    );
    expect(status.body.status).toEqual({ phase: "Ready" });
    expect(status.body.spec.size).toBe("large");
    expect(status.body.metadata.generation).toBe(2);
    const got = await call(s, "GET", `${WIDGETS("ns1")}/g1/status`);
    expect(got.body.status.phase).toBe("Ready");
  });

  it("built-ins drop fields their type does not have, with kube's warning (a ConfigMap has no status)", async () => {
    const r = await call(s, "POST", "/apis/coordination.k8s.io/v1/namespaces/ns1/leases", {
      metadata: { name: "l1" },
      spec: { holderIdentity: "me" },
    });
    expect(r.status).toBe(201);
    const cm = await call(s, "PUT", "/api/v1/namespaces/ns1/configmaps/a", {
      ...configMap("a", "ns1"),
      status: { x: 1 },
    });
    expect(cm.status).toBe(200);
    expect(cm.body).not.toHaveProperty("status");
    expect(cm.headers.warning).toContain('unknown field \\"status\\"');
    const strict = await call(s, "PUT", "/api/v1/namespaces/ns1/configmaps/a?fieldValidation=Strict", {
      ...configMap("a", "ns1"),
      status: { x: 1 },
    });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "status"',
    );
  });

  it("CRD schema: defaults applied, unknown fields pruned with a warning, Strict rejects them, enums validated", async () => {
    const d = await call(
      s,
      "POST",
      WIDGETS("ns1"),
      widget("d1", "ns1", { bogus: 1, free: { any: { thing: true } } }),
    );
    expect(d.status).toBe(201);
    expect(d.body.spec).toEqual({ size: "small", free: { any: { thing: true } } });
    expect(d.headers.warning).toContain('unknown field \\"spec.bogus\\"');
    const strict = await call(
      s,
      "POST",
      `${WIDGETS("ns1")}?fieldValidation=Strict`,
      widget("d2", "ns1", { bogus: 1 }),
    );
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"',
    );
    const bad = await call(s, "POST", WIDGETS("ns1"), widget("d3", "ns1", { size: "huge" }));
    expect(bad.status).toBe(422);
    expect(bad.body.details).toMatchObject({ name: "d3", kind: "Widget", group: "example.com" });
    expect(bad.body.details.causes[0].field).toBe("spec.size");
  });

  it("scale subresource maps Scale to specReplicasPath/statusReplicasPath", async () => {
    await call(s, "POST", WIDGETS("ns1"), widget("sc", "ns1", { replicas: 2 }));
    await call(
      s,
      "PATCH",
      `${WIDGETS("ns1")}/sc/status`,
      { status: { replicas: 2, selector: "app=sc" } },
      { contentType: "application/merge-patch+json" },
    );
    const scale = await call(s, "GET", `${WIDGETS("ns1")}/sc/scale`);
    expect(scale.body).toMatchObject({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      spec: { replicas: 2 },
      status: { replicas: 2, selector: "app=sc" },
    });
    const put = await call(s, "PUT", `${WIDGETS("ns1")}/sc/scale`, { ...scale.body, spec: { replicas: 5 } });
    expect(put.body.spec.replicas).toBe(5);
    const patched = await call(
      s,
      "PATCH",
      `${WIDGETS("ns1")}/sc/scale`,
      { spec: { replicas: 7 } },
      { contentType: "application/merge-patch+json" },
    );
    expect(patched.body.spec.replicas).toBe(7);
    const w = await call(s, "GET", `${WIDGETS("ns1")}/sc`);
    expect(w.body.spec.replicas).toBe(7);
    expect(w.body.metadata.generation).toBe(3);
  });

  it("delete preconditions on uid and resourceVersion are 409 on mismatch", async () => {
    const c = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", configMap("pre", "ns1"));
    const uid = await call(s, "DELETE", "/api/v1/namespaces/ns1/configmaps/pre", {
      preconditions: { uid: "other" },
    });
    expect(uid.status).toBe(409);
    // Worded as kube's store words it, naming the kind (conformance probe "delete with a uid precondition…").
    expect(uid.body.message).toBe(
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (other) does not match the UID in record (${c.body.metadata.uid}). The object might have been deleted and then recreated`,
    );
    expect(uid.body.details).toEqual({ name: "pre", kind: "ConfigMap" });
    const rv = await call(s, "DELETE", "/api/v1/namespaces/ns1/configmaps/pre", {
      preconditions: { resourceVersion: "1" },
    });
    expect(rv.status).toBe(409);
    const ok = await call(s, "DELETE", "/api/v1/namespaces/ns1/configmaps/pre", {
      preconditions: { uid: c.body.metadata.uid },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      kind: "Status",
      status: "Success",
      details: { name: "pre", kind: "configmaps" },
    });
    expect((await call(s, "GET", "/api/v1/namespaces/ns1/configmaps/pre")).status).toBe(404);
  });

  it("finalizers: delete sets deletionTimestamp, gracePeriod 0 and bumps generation; new finalizers refused with 422; last removal deletes", async () => {
    await call(
      s,
      "POST",
      WIDGETS("ns1"),
      widget("fin", "ns1", {}, { metadata: { finalizers: ["example.com/a"] } }),
    );
    const del = await call(s, "DELETE", `${WIDGETS("ns1")}/fin`);
    expect(del.status).toBe(200);
    expect(del.body.metadata.deletionTimestamp).toBeTruthy();
    expect(del.body.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(del.body.metadata.generation).toBe(2);
    const add = await call(
      s,
      "PATCH",
      `${WIDGETS("ns1")}/fin`,
      { metadata: { finalizers: ["example.com/a", "example.com/b"] } },
      { contentType: "application/merge-patch+json" },
    );
    expect(add.status).toBe(422);
    expect(add.body.message).toContain(
      "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",
    );
    const remove = await call(
      s,
      "PATCH",
      `${WIDGETS("ns1")}/fin`,
      { metadata: { finalizers: null } },
      { contentType: "application/merge-patch+json" },
    );
    expect(remove.status).toBe(200);
    expect((await call(s, "GET", `${WIDGETS("ns1")}/fin`)).status).toBe(404);
  });

  it("dryRun=All runs the write path without persisting", async () => {
    const r = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps?dryRun=All", configMap("dry", "ns1"));
    expect(r.status).toBe(201);
    expect((await call(s, "GET", "/api/v1/namespaces/ns1/configmaps/dry")).status).toBe(404);
  });

  it("Secret stringData is folded into base64 data", async () => {
    const r = await call(s, "POST", "/api/v1/namespaces/ns1/secrets", {
      metadata: { name: "s1" },
      stringData: { pw: "hunter2" },
    });
    expect(r.body.data).toEqual({ pw: Buffer.from("hunter2").toString("base64") });
    expect(r.body.stringData).toBeUndefined();
  });
});

describe("lists and selectors", () => {
  it("lists carry kind, apiVersion and the current resourceVersion; label and field selectors filter", async () => {
    for (const [n, env] of [
      ["l1", "prod"],
      ["l2", "dev"],
      ["l3", "prod"],
    ] as const)
      await call(
        s,
        "POST",
        "/api/v1/namespaces/ns1/configmaps",
        configMap(n, "ns1", {}, { env, tier: n === "l3" ? "x" : "y" }),
      );
    const all = await call(s, "GET", "/api/v1/namespaces/ns1/configmaps?labelSelector=env");
    expect(all.body).toMatchObject({ kind: "ConfigMapList", apiVersion: "v1" });
    expect(all.body.metadata.resourceVersion).toBe(s.store.resourceVersion());
    const names = async (q: string): Promise<string[]> =>
      (await call(s, "GET", `/api/v1/namespaces/ns1/configmaps?${q}`)).body.items.map(
        (i: { metadata: { name: string } }) => i.metadata.name,
      );
    expect(await names("labelSelector=env%3Dprod")).toEqual(["l1", "l3"]);
    expect(await names("labelSelector=env%3D%3Dprod,tier!%3Dx")).toEqual(["l1"]);
    expect(await names("labelSelector=env%20in%20(dev,qa)")).toEqual(["l2"]);
    expect(await names("labelSelector=env%20notin%20(dev),env")).toEqual(["l1", "l3"]);
    expect(await names("labelSelector=!env&fieldSelector=metadata.name%3Da")).toEqual(["a"]);
    expect(await names("fieldSelector=metadata.name%3Dl2")).toEqual(["l2"]);
    expect(
      await names("fieldSelector=metadata.namespace%3Dns1,metadata.name!%3Dl2&labelSelector=env"),
    ).toEqual(["l1", "l3"]);
    const bad = await call(s, "GET", "/api/v1/namespaces/ns1/configmaps?fieldSelector=data.x%3D1");
    expect(bad.status).toBe(400);
  });

  it("cluster-wide lists of namespaced kinds span namespaces", async () => {
    await call(s, "POST", "/api/v1/namespaces", namespace("ns2"));
    await call(s, "POST", "/api/v1/namespaces/ns2/configmaps", configMap("other", "ns2"));
    const r = await call(s, "GET", "/api/v1/configmaps?fieldSelector=metadata.namespace%3Dns2");
    expect(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(["other"]);
  });

  it("Table output carries printer columns, rendered Age and PartialObjectMetadata rows", async () => {
    const r = await call(s, "GET", WIDGETS("ns1"), undefined, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    });
    expect(r.body.kind).toBe("Table");
    expect(r.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Name", "Size", "Age"]);
    const row = r.body.rows.find((x: { cells: unknown[] }) => x.cells[0] === "d1");
    expect(row.cells[1]).toBe("small");
    expect(row.cells[2]).toMatch(/^\d+s$/);
    expect(row.object.kind).toBe("PartialObjectMetadata");
    expect(r.body.metadata.resourceVersion).toBeTruthy();
  });
});

describe("namespace lifecycle", () => {
  it("creating into a missing namespace is 404; into a terminating one is 403; deletion empties then removes it", async () => {
    const missing = await call(s, "POST", "/api/v1/namespaces/ghost/configmaps", configMap("x", "ghost"));
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('namespaces "ghost" not found');
    await call(s, "POST", "/api/v1/namespaces", namespace("doomed"));
    await call(s, "POST", "/api/v1/namespaces/doomed/configmaps", configMap("c1", "doomed"));
    await call(
      s,
      "POST",
      WIDGETS("doomed"),
      widget("held", "doomed", {}, { metadata: { finalizers: ["example.com/hold"] } }),
    );
    const del = await call(s, "DELETE", "/api/v1/namespaces/doomed");
    expect(del.body.status.phase).toBe("Terminating");
    await s.settled();
    const refused = await call(s, "POST", "/api/v1/namespaces/doomed/configmaps", configMap("c2", "doomed"));
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain(
      "unable to create new content in namespace doomed because it is being terminated",
    );
    expect((await call(s, "GET", "/api/v1/namespaces/doomed/configmaps/c1")).status).toBe(404);
    expect((await call(s, "GET", "/api/v1/namespaces/doomed")).status).toBe(200);
    await call(
      s,
      "PATCH",
      `${WIDGETS("doomed")}/held`,
      { metadata: { finalizers: null } },
      { contentType: "application/merge-patch+json" },
    );
    await s.settled();
    expect((await call(s, "GET", "/api/v1/namespaces/doomed")).status).toBe(404);
  });
});

describe("request bodies", () => {
  it("accepts YAML bodies; a protobuf envelope without a kind is a 400", async () => {
    const yaml = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", undefined, {
      contentType: "application/yaml",
      raw: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: b\n",
    });
    expect(yaml.status).toBe(201);
    expect(yaml.body.data).toEqual({ a: "b" });
    const proto = await call(s, "POST", "/api/v1/namespaces", undefined, {
      contentType: "application/vnd.kubernetes.protobuf",
      raw: "k8s\u0000",
    });
    expect(proto.status).toBe(400);
    expect(proto.body.reason).toBe("BadRequest");
  });

  it("a YAML body of several documents creates its first, as kube does; the rest is not read (decision 161)", async () => {
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
    const two = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", undefined, {
      contentType: "application/yaml",
      raw: `${cm("yaml-first")}---\n${cm("yaml-second")}---\na: [\n: : :\n`,
    });
    expect(two.status).toBe(201);
    expect(two.body.metadata.name).toBe("yaml-first");
    expect((await call(s, "GET", "/api/v1/namespaces/ns1/configmaps/yaml-second")).status).toBe(404);
    const applied = await call(
      s,
      "PATCH",
      "/api/v1/namespaces/ns1/configmaps/yaml-applied?fieldManager=t",
      undefined,
      { contentType: "application/apply-patch+yaml", raw: `${cm("yaml-applied")}...\n${cm("other")}` },
    );
    expect(applied.status).toBe(201);
    expect(applied.body.metadata.name).toBe("yaml-applied");
    // What is not YAML before any marker is the first document's: refused, nothing created.
    const stray = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", undefined, {
      contentType: "application/yaml",
      raw: `${cm("yaml-stray")}]]]\n---\n${cm("yaml-after")}`,
    });
    expect(stray.status).toBe(400);
    expect((await call(s, "GET", "/api/v1/namespaces/ns1/configmaps/yaml-stray")).status).toBe(404);
  });
});

describe("paging", () => {
  it("limit/continue pages come from one snapshot with the first page's resourceVersion; stale tokens are 410", async () => {
    await call(s, "POST", "/api/v1/namespaces", namespace("pages"));
    for (let i = 0; i < 5; i++)
      await call(s, "POST", "/api/v1/namespaces/pages/configmaps", configMap(`p${i}`, "pages"));
    const first = await call(s, "GET", "/api/v1/namespaces/pages/configmaps?limit=2");
    expect(first.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
      "p0",
      "p1",
    ]);
    expect(first.body.metadata.remainingItemCount).toBe(3);
    await call(s, "DELETE", "/api/v1/namespaces/pages/configmaps/p3");
    await call(s, "POST", "/api/v1/namespaces/pages/configmaps", configMap("p5", "pages"));
    const names: string[] = [];
    let token = first.body.metadata.continue;
    while (token) {
      const next = await call(
        s,
        "GET",
        `/api/v1/namespaces/pages/configmaps?limit=2&continue=${encodeURIComponent(token)}`,
      );
      expect(next.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
      names.push(...next.body.items.map((i: { metadata: { name: string } }) => i.metadata.name));
      token = next.body.metadata.continue;
    }
    expect(names).toEqual(["p2", "p3", "p4"]);
    const evicted = Buffer.from(JSON.stringify({ id: 999_999, offset: 2 })).toString("base64url");
    const stale = await call(s, "GET", `/api/v1/namespaces/pages/configmaps?limit=2&continue=${evicted}`);
    expect(stale.status).toBe(410);
    expect(stale.body.reason).toBe("Expired");
    // A token no server made is a 400, as kube answers one it cannot decode.
    const garbage = await call(s, "GET", "/api/v1/namespaces/pages/configmaps?limit=2&continue=bm9wZQ");
    expect(garbage.status).toBe(400);
  });
});

describe("PUT preconditions", () => {
  it("custom resources refuse unconditional updates (no resourceVersion) with 422, built-ins allow them; a foreign uid is 409", async () => {
    const w = await call(s, "POST", WIDGETS("ns1"), widget("put", "ns1", { replicas: 1 }));
    const { resourceVersion: _rv, ...metaNoRv } = w.body.metadata;
    const noRv = await call(s, "PUT", `${WIDGETS("ns1")}/put`, {
      ...w.body,
      metadata: metaNoRv,
      spec: { replicas: 2 },
    });
    expect(noRv.status).toBe(422);
    expect(noRv.body.message).toBe(
      'widgets.example.com "put" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    const withRv = await call(s, "PUT", `${WIDGETS("ns1")}/put`, { ...w.body, spec: { replicas: 2 } });
    expect(withRv.status).toBe(200);
    const cm = await call(s, "PUT", "/api/v1/namespaces/ns1/configmaps/a", {
      ...configMap("a", "ns1"),
      data: { u: "1" },
    });
    expect(cm.status).toBe(200);
    const uid = await call(s, "PUT", "/api/v1/namespaces/ns1/configmaps/a", {
      ...configMap("a", "ns1"),
      metadata: { name: "a", uid: "other" },
    });
    expect(uid.status).toBe(409);
  });
});

describe("metadata validation", () => {
  it.each([
    ["a label key that is not a qualified name", { labels: { "bad key": "v" } }, "metadata.labels"],
    ["an annotation key with two slashes", { annotations: { "a/b/c": "v" } }, "metadata.annotations"],
    [
      "an ownerReference without uid",
      { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "o" }] },
      "metadata.ownerReferences.uid",
    ],
    [
      "two controller ownerReferences",
      {
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "a", uid: "1", controller: true },
          { apiVersion: "v1", kind: "ConfigMap", name: "b", uid: "2", controller: true },
        ],
      },
      "metadata.ownerReferences",
    ],
  ])("refuses %s with 422", async (_what, metadata, field) => {
    const r = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", {
      metadata: { name: "meta-check", ...metadata },
    });
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: { field: string }) => c.field)).toContain(field);
  });

  it("accepts prefixed keys such as machine.openshift.io/cluster-api-machineset", async () => {
    const r = await call(s, "POST", "/api/v1/namespaces/ns1/configmaps", {
      metadata: {
        name: "meta-ok",
        labels: { "machine.openshift.io/cluster-api-machineset": "ms-1" },
        annotations: { "cluster.x-k8s.io/paused": "" },
      },
    });
    expect(r.status).toBe(201);
  });
});

describe("namespaces carry kubernetes.io/metadata.name like kube-apiserver's", () => {
  it("on create, on update (restored if removed), and on the system namespaces", async () => {
    const created = await call(s, "POST", "/api/v1/namespaces", namespace("labelled"));
    expect(created.body.metadata.labels).toMatchObject({ "kubernetes.io/metadata.name": "labelled" });
    const stripped = { ...created.body, metadata: { ...created.body.metadata, labels: { team: "a" } } };
    const updated = await call(s, "PUT", "/api/v1/namespaces/labelled", stripped);
    expect(updated.body.metadata.labels).toEqual({ team: "a", "kubernetes.io/metadata.name": "labelled" });
    const system = await call(s, "GET", "/api/v1/namespaces/kube-system");
    expect(system.body.metadata.labels).toMatchObject({ "kubernetes.io/metadata.name": "kube-system" });
  });
});

describe("the scale subresource decodes a Scale as kube does (conformance backlog item 6)", () => {
  const M = { contentType: "application/merge-patch+json" };
  const SCALE = (name: string) => `${WIDGETS("ns1")}/${name}/scale`;
  const scale = (name: string, rest: Record<string, unknown> = {}) => ({
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: { name, namespace: "ns1" },
    ...rest,
  });
  const replicasOf = async (name: string): Promise<unknown> =>
    (await call(s, "GET", `${WIDGETS("ns1")}/${name}`)).body.spec.replicas;

  it("a missing spec or replicas is Go's zero value: the object scales to 0 (a MachineSet drains)", async () => {
    await call(s, "POST", WIDGETS("ns1"), widget("zero", "ns1", { replicas: 3 }));
    const put = await call(s, "PUT", SCALE("zero"), scale("zero"));
    expect(put.status).toBe(200);
    // Go's omitempty: a Scale of 0 replicas has an empty spec.
    expect(put.body.spec).toEqual({});
    expect(await replicasOf("zero")).toBe(0);
    await call(s, "PATCH", `${WIDGETS("ns1")}/zero`, { spec: { replicas: 3 } }, M);
    const patch = await call(s, "PATCH", SCALE("zero"), { spec: { replicas: null } }, M);
    expect(patch.status).toBe(200);
    expect(await replicasOf("zero")).toBe(0);
  });

  it.each([
    ["replicas a string", { spec: { replicas: "3" } }],
    ["replicas 1.5", { spec: { replicas: 1.5 } }],
    ["replicas past int32", { spec: { replicas: 4294967296 } }],
    ["spec a string", { spec: "3" }],
    ["kind Deployment", { apiVersion: "apps/v1", kind: "Deployment", spec: { replicas: 3 } }],
  ])("a PUT of a Scale with %s is 400 and scales nothing", async (_what, rest) => {
    await call(s, "POST", WIDGETS("ns1"), widget("undecodable", "ns1", { replicas: 2 }));
    const r = await call(s, "PUT", SCALE("undecodable"), scale("undecodable", rest));
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:110"',
    );
    expect(await replicasOf("undecodable")).toBe(2);
  });

  it("a patch whose Scale Go cannot decode is 422 on `patch`, with Go's message", async () => {
    await call(s, "POST", WIDGETS("ns1"), widget("badpatch", "ns1", { replicas: 2 }));
    const r = await call(s, "PATCH", SCALE("badpatch"), { spec: { replicas: "3" } }, M);
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      expect.objectContaining({ reason: "FieldValueInvalid", field: "patch" }),
    ]);
    expect(r.body.message).toMatch(
      /: json: cannot unmarshal string into Go struct field ScaleSpec\.spec\.replicas of type int32$/,
    );
    const kind = await call(s, "PATCH", SCALE("badpatch"), { kind: "Deployment" }, M);
    expect(kind.body.message).toMatch(
      /: no kind "Deployment" is registered for version "autoscaling\/v1" in scheme "pkg\/runtime\/scheme\.go:110"$/,
    );
    expect(await replicasOf("badpatch")).toBe(2);
  });

  it("a Scale must name the URL's object and namespace (400)", async () => {
    await call(s, "POST", WIDGETS("ns1"), widget("named", "ns1", { replicas: 2 }));
    const cases: [unknown, string][] = [
      [scale("other"), "the name of the object (other) does not match the name on the URL (named)"],
      [
        { ...scale("named"), metadata: { namespace: "ns1" } },
        "the name of the object (named based on URL) was undeterminable: name must be provided",
      ],
      [
        { ...scale("named"), metadata: { name: "named", namespace: "elsewhere" } },
        "the namespace of the provided object does not match the namespace sent on the request",
      ],
    ];
    for (const [body, message] of cases) {
      const r = await call(s, "PUT", SCALE("named"), { ...(body as object), spec: { replicas: 5 } });
      expect([r.status, r.body.message]).toEqual([400, message]);
    }
    const patch = await call(s, "PATCH", SCALE("named"), { metadata: { name: "other" } }, M);
    expect(patch.status).toBe(400);
    expect(await replicasOf("named")).toBe(2);
  });

  it("an object without replicas has no Scale to GET (500); a patch must then set them (400)", async () => {
    await call(s, "POST", WIDGETS("ns1"), widget("none", "ns1", { size: "small" }));
    const get = await call(s, "GET", SCALE("none"));
    expect(get.status).toBe(500);
    expect(get.body.message).toBe(
      'Internal error occurred: the spec replicas field ".spec.replicas" does not exist',
    );
    const labels = await call(s, "PATCH", SCALE("none"), { metadata: { labels: { a: "b" } } }, M);
    expect(labels.status).toBe(400);
    expect(labels.body.message).toBe('the spec replicas field ".spec.replicas" cannot be empty');
    expect((await call(s, "PATCH", SCALE("none"), { spec: { replicas: 1 } }, M)).status).toBe(200);
  });

  it("a write through the Scale is recorded as the scale subresource's in managedFields", async () => {
    await call(s, "POST", WIDGETS("ns1"), widget("owned", "ns1", { replicas: 2 }));
    await call(s, "PUT", `${SCALE("owned")}?fieldManager=scaler`, scale("owned", { spec: { replicas: 4 } }));
    const w = await call(s, "GET", `${WIDGETS("ns1")}/owned`);
    expect(w.body.metadata.managedFields).toContainEqual(
      expect.objectContaining({
        manager: "scaler",
        operation: "Update",
        subresource: "scale",
        fieldsV1: { "f:spec": { "f:replicas": {} } },
      }),
    );
  });

  it("server-side apply to a custom resource's Scale is refused as kube 1.33 refuses it: 409, or 500 when forced", async () => {
    await call(s, "POST", WIDGETS("ns1"), widget("applied", "ns1", { replicas: 2 }));
    const APPLY = { contentType: "application/apply-patch+yaml" };
    const body = scale("applied", { spec: { replicas: 3 } });
    const conflict = await call(s, "PATCH", `${SCALE("applied")}?fieldManager=edge`, body, APPLY);
    expect(conflict.status).toBe(409);
    expect(conflict.body.message).toMatch(
      /^Apply failed with 1 conflict: conflict with ".*" using autoscaling\/v1: \.spec\.replicas$/,
    );
    const forced = await call(s, "PATCH", `${SCALE("applied")}?fieldManager=edge&force=true`, body, APPLY);
    expect(forced.status).toBe(500);
    expect(forced.body.message).toBe(
      "failed to convert new object (ns1/applied; autoscaling/v1, Kind=Scale) to proper version: request to convert CR to an invalid group/version: autoscaling/v1",
    );
    const otherKind = await call(
      s,
      "PATCH",
      `${SCALE("applied")}?fieldManager=edge`,
      { ...body, apiVersion: "apps/v1", kind: "Deployment" },
      APPLY,
    );
    expect([otherKind.status, otherKind.body.message]).toEqual([
      400,
      "invalid object type: apps/v1, Kind=Deployment",
    ]);
    expect(await replicasOf("applied")).toBe(2);
  });
});
