/**
 * Patch formats and field ownership (SPEC §8): merge patch, JSON patch (`test` → 422), strategic merge
 * for built-in kinds (merge keys, directives) as pure functions and over HTTP, and server-side apply with
 * managedFields: ownership per manager, removal only when no other manager owns a field, conflicts and
 * force, Update operations recording their manager.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import {
  fieldPaths,
  fromFieldsV1,
  recordUpdate,
  serverSideApply,
  toFieldsV1,
} from "../../src/apiserver/managed-fields.js";
import { jsonPatch, mergePatch, PatchError, strategicMerge } from "../../src/apiserver/patch.js";
import type { KubeObject } from "../../src/kube/object.js";
import { allowAll, call, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

describe("patch functions", () => {
  it("merge patch: null deletes, objects merge, lists replace", () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] })).toEqual({
      a: { c: 2, d: 3 },
      l: [3],
    });
  });

  it("JSON patch: ops apply, a failed test is a 422, a bad path a 400, input untouched", () => {
    const doc = { a: 1 };
    expect(jsonPatch(doc, [{ op: "replace", path: "/a", value: 2 }])).toEqual({ a: 2 });
    expect(doc).toEqual({ a: 1 });
    expect(() => jsonPatch(doc, [{ op: "test", path: "/a", value: 9 }])).toThrowError(
      expect.objectContaining({ code: 422 }),
    );
    expect(() => jsonPatch(doc, [{ op: "remove", path: "/nope" }])).toThrow(PatchError);
  });

  /** A stored-object-shaped document: nested maps, a list of maps, a primitive list. */
  const stored = () => ({
    metadata: { name: "m", labels: { a: "1" }, finalizers: ["f1"] },
    spec: {
      nested: { deep: { x: 1 } },
      items: [
        { k: "a", v: 1 },
        { k: "b", v: 2 },
      ],
      other: { y: 2 },
    },
  });
  it.each<[string, unknown[], unknown]>([
    [
      "add to a list by index and by -",
      [
        { op: "add", path: "/metadata/finalizers/-", value: "f2" },
        { op: "add", path: "/metadata/finalizers/0", value: "f0" },
      ],
      { ...stored(), metadata: { ...stored().metadata, finalizers: ["f0", "f1", "f2"] } },
    ],
    [
      "replace deep inside a list element",
      [{ op: "replace", path: "/spec/items/1/v", value: 9 }],
      {
        ...stored(),
        spec: {
          ...stored().spec,
          items: [
            { k: "a", v: 1 },
            { k: "b", v: 9 },
          ],
        },
      },
    ],
    [
      "move a subtree, then change inside it at its new place",
      [
        { op: "move", from: "/spec/nested/deep", path: "/spec/moved" },
        { op: "replace", path: "/spec/moved/x", value: 5 },
      ],
      { ...stored(), spec: { ...stored().spec, nested: {}, moved: { x: 5 } } },
    ],
    [
      "copy a subtree, then change the copy",
      [
        { op: "copy", from: "/spec/other", path: "/spec/copied" },
        { op: "replace", path: "/spec/copied/y", value: 7 },
      ],
      { ...stored(), spec: { ...stored().spec, copied: { y: 7 } } },
    ],
    [
      "an escaped key (~1 is /, ~0 is ~)",
      [{ op: "add", path: "/metadata/labels/example.com~1a~0b", value: "v" }],
      { ...stored(), metadata: { ...stored().metadata, labels: { a: "1", "example.com/a~b": "v" } } },
    ],
    [
      "a root replace (patched on a deep copy)",
      [
        { op: "replace", path: "", value: { spec: { z: 1 } } },
        { op: "add", path: "/spec/w", value: 2 },
      ],
      { spec: { z: 1, w: 2 } },
    ],
  ])("JSON patch copies only what it changes, the target untouched: %s", (_name, ops, want) => {
    const target = stored();
    expect(jsonPatch(target, ops)).toEqual(want);
    expect(target).toEqual(stored());
  });

  it("JSON patch shares what no op touched with the target", () => {
    const target = stored();
    const out = jsonPatch(target, [{ op: "add", path: "/metadata/labels/b", value: "2" }]) as typeof target;
    expect(out.spec).toBe(target.spec);
    expect(out.metadata.finalizers).toBe(target.metadata.finalizers);
    expect(out.metadata.labels).not.toBe(target.metadata.labels);
  });

  it.each<[string, unknown[]]>([
    ["a path through a missing key", [{ op: "add", path: "/spec/missing/x", value: 1 }]],
    ["a path through a list index out of range", [{ op: "replace", path: "/spec/items/5/v", value: 1 }]],
    [
      "a failing op after ones that applied",
      [
        { op: "replace", path: "/spec/other/y", value: 3 },
        { op: "remove", path: "/spec/nope" },
      ],
    ],
    ["a __proto__ step", [{ op: "add", path: "/spec/__proto__/polluted", value: 1 }]],
  ])("JSON patch errors leave the target untouched: %s", (_name, ops) => {
    const target = stored();
    expect(() => jsonPatch(target, ops)).toThrow();
    expect(target).toEqual(stored());
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("strategic merge: containers/env by name, ports by containerPort, $patch delete/replace, $setElementOrder, $retainKeys, $deleteFromPrimitiveList", () => {
    const deploy = {
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: "a",
                image: "a:1",
                env: [{ name: "X", value: "1" }],
                ports: [{ containerPort: 80, name: "http" }],
              },
              { name: "b", image: "b:1" },
            ],
          },
        },
      },
      metadata: { finalizers: ["f1"] },
    };
    const out = strategicMerge(deploy, {
      spec: {
        template: {
          spec: {
            $setElementOrder_ignored: [],
            containers: [
              {
                name: "a",
                env: [{ name: "Y", value: "2" }],
                ports: [{ containerPort: 80, protocol: "TCP" }],
              },
              { name: "b", $patch: "delete" },
              { name: "c", image: "c:1" },
            ],
          },
        },
      },
      metadata: { finalizers: ["f2"] },
    }) as typeof deploy;
    const containers = out.spec.template.spec.containers as Array<Record<string, unknown>>;
    expect(containers.map((c) => c.name)).toEqual(["a", "c"]);
    expect(containers[0]!.env).toEqual([
      { name: "X", value: "1" },
      { name: "Y", value: "2" },
    ]);
    expect(containers[0]!.ports).toEqual([{ containerPort: 80, name: "http", protocol: "TCP" }]);
    expect(out.metadata.finalizers).toEqual(["f1", "f2"]);

    const webhooks = {
      webhooks: [
        { name: "a.example", timeoutSeconds: 5, rules: [] },
        { name: "b.example", clientConfig: { url: "https://x/b" } },
      ],
    };
    const applied = strategicMerge(webhooks, {
      "$setElementOrder/webhooks": [{ name: "b.example" }, { name: "a.example" }],
      webhooks: [{ name: "a.example", timeoutSeconds: 7 }],
    }) as { webhooks: Array<Record<string, unknown>> };
    expect(applied.webhooks).toEqual([
      { name: "b.example", clientConfig: { url: "https://x/b" } },
      { name: "a.example", timeoutSeconds: 7, rules: [] },
    ]);
    expect(strategicMerge({ a: { x: 1, y: 2 } }, { a: { $patch: "replace", z: 3 } })).toEqual({
      a: { z: 3 },
    });
    expect(strategicMerge({ a: { x: 1, y: 2 } }, { a: { $retainKeys: ["y"], y: 5 } })).toEqual({
      a: { y: 5 },
    });
    expect(strategicMerge({ f: ["a", "b"] }, { "$deleteFromPrimitiveList/f": ["a"] })).toEqual({ f: ["b"] });
  });
});

describe("SPEC §8.1, decision 140: a strategic merge patch's lists, merged through maps", () => {
  // Each case did not finish at these sizes when every patch item searched the list (minutes at 200,000).
  const N = 200_000;
  const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `f${from + i}`);

  it("a finalizer union, a deletion from it and an order over it", () => {
    const cm = { metadata: { name: "c", finalizers: names(0, N / 2) } };
    const union = strategicMerge(cm, { metadata: { finalizers: names(N / 4, N) } }) as KubeObject;
    expect(union.metadata?.finalizers).toEqual(names(0, N));
    const dropped = strategicMerge(union, {
      metadata: { "$deleteFromPrimitiveList/finalizers": names(1, N) },
    }) as KubeObject;
    expect(dropped.metadata?.finalizers).toEqual(["f0"]);
    const reversed = strategicMerge(union, {
      metadata: { "$setElementOrder/finalizers": names(0, N).reverse() },
    }) as KubeObject;
    expect(reversed.metadata?.finalizers).toEqual(names(0, N).reverse());
  });

  it("owner references merged by uid: updated, deleted, added, in the list's order", () => {
    const ref = (i: number, name = `o${i}`) => ({ uid: `u${i}`, name });
    const base = {
      metadata: { name: "c", ownerReferences: Array.from({ length: N / 2 }, (_, i) => ref(i)) },
    };
    const patch = Array.from({ length: N / 2 }, (_, i) =>
      i % 2 === 0 ? { uid: `u${i}`, $patch: "delete" } : ref(i + N / 2, "new"),
    );
    patch.push({ ...ref(1), name: "renamed" });
    const out = strategicMerge(base, { metadata: { ownerReferences: patch } }) as KubeObject;
    const refs = out.metadata?.ownerReferences ?? [];
    expect(refs).toHaveLength(N / 2);
    expect(refs[0]).toEqual({ uid: "u1", name: "renamed" });
    expect(refs[N / 4 - 1]).toEqual(ref(N / 2 - 1));
    expect(refs[N / 4]).toEqual(ref(N / 2 + 1, "new"));
  });

  it("a key that base holds twice: a delete removes the first, the next patch item meets the second", () => {
    const base = {
      spec: { containers: [{ name: "a", image: "1" }, { name: "a", image: "2" }, { name: "b" }] },
    };
    const out = strategicMerge(base, {
      spec: { containers: [{ name: "a", $patch: "delete" }, { name: "a", image: "3" }, { name: "c" }] },
    });
    expect(out).toEqual({ spec: { containers: [{ name: "a", image: "3" }, { name: "b" }, { name: "c" }] } });
  });
});

describe("SPEC §8.1, decision 139: a merge patch at any depth", () => {
  it("merges 9,000 levels without recursion, and a key spelled __proto__ is data", () => {
    let patch: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 9_000; i++) patch = { n: patch };
    let at = mergePatch({ keep: true }, patch) as Record<string, unknown>;
    expect(at.keep).toBe(true);
    for (let i = 0; i < 9_000; i++) at = at.n as Record<string, unknown>;
    expect(at).toEqual({ leaf: 1 });
    const out = mergePatch({}, JSON.parse('{"__proto__":{"polluted":true}}')) as Record<string, unknown>;
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe("SPEC §8.1, decision 138: a JSON patch's bounds, as kube-apiserver's", () => {
  const annotated = { metadata: { name: "c", annotations: { a: "x".repeat(1000) } } };
  const copies = (k: number) =>
    Array.from({ length: k }, (_, i) => ({
      op: "copy",
      from: "/metadata/annotations",
      path: `/metadata/annotations/c${i}`,
    }));
  const refusal = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e instanceof PatchError ? { code: e.code, message: e.message } : e;
    }
    return undefined;
  };

  it("more than 10,000 operations: 413, naming both counts", () => {
    const ops = Array.from({ length: 10_001 }, () => ({ op: "test", path: "/metadata/name", value: "c" }));
    expect(refusal(() => jsonPatch(annotated, ops))).toEqual({
      code: 413,
      message: "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    });
    expect(jsonPatch(annotated, ops.slice(1))).toEqual(annotated);
  });

  it("copies adding up to 3 MB apply; past it the patch is refused before it is made", () => {
    // 11 doublings of ~1 KB add ~2 MB; 40 would need terabytes (the process ran out of memory before).
    const eleven = jsonPatch(annotated, copies(11)) as { metadata: { annotations: Record<string, unknown> } };
    expect(Object.keys(eleven.metadata.annotations)).toHaveLength(12);
    for (const k of [12, 40])
      expect(refusal(() => jsonPatch(annotated, copies(k)))).toEqual({
        code: 422,
        message: "the server rejected our request due to an error in our request",
      });
  });
});

describe("managedFields", () => {
  it("field sets round-trip through fieldsV1; finalizers are a set, ownerReferences keyed by uid, other lists atomic", () => {
    const o = {
      apiVersion: "v1",
      kind: "X",
      metadata: {
        name: "n",
        labels: { a: "b" },
        finalizers: ["f"],
        ownerReferences: [{ uid: "u1", name: "o" }],
      },
      spec: { list: [1, 2], m: { k: "v" } },
    };
    const paths = fieldPaths(o);
    expect(toFieldsV1(paths)).toEqual({
      "f:metadata": {
        "f:labels": { "f:a": {} },
        "f:finalizers": { 'v:"f"': {} },
        "f:ownerReferences": { 'k:{"uid":"u1"}': {} },
      },
      "f:spec": { "f:list": {}, "f:m": { "f:k": {} } },
    });
    expect(fromFieldsV1(toFieldsV1(paths))).toEqual(paths);
  });

  it("Update operations give their manager what it changed and take it from others", () => {
    const v1 = { metadata: { name: "n" }, spec: { a: 1, b: 1 } };
    const f1 = recordUpdate(undefined, v1, "creator", "v1", "t0");
    const v2 = { metadata: { name: "n", managedFields: f1 }, spec: { a: 2, b: 1 } };
    const f2 = recordUpdate(v2 as never, { ...v2, spec: { a: 3, b: 1 } }, "editor", "v1", "t1");
    expect(f2.map((e) => [e.manager, e.fieldsV1])).toEqual([
      ["creator", { "f:spec": { ".": {}, "f:b": {} } }],
      ["editor", { "f:spec": { "f:a": {} } }],
    ]);
  });

  it("apply: a field a manager stops applying is removed unless another manager owns it; conflicts need force", () => {
    const first = serverSideApply(
      undefined,
      { metadata: { name: "n" }, spec: { a: 1, b: 1, c: 1 } },
      "one",
      false,
      "v1",
      "t",
    );
    const withFields = (r: { object: KubeObject; managedFields: unknown[] }): KubeObject => ({
      ...r.object,
      metadata: { ...r.object.metadata, managedFields: r.managedFields },
    });
    const shared = serverSideApply(
      withFields(first),
      { metadata: { name: "n" }, spec: { b: 1 } },
      "two",
      false,
      "v1",
      "t",
    );
    const live = withFields(shared);
    const dropped = serverSideApply(
      live,
      { metadata: { name: "n" }, spec: { a: 1 } },
      "one",
      false,
      "v1",
      "t",
    );
    expect(dropped.object.spec).toEqual({ a: 1, b: 1 });
    expect(() =>
      serverSideApply(live, { metadata: { name: "n" }, spec: { b: 2 } }, "one", false, "v1", "t"),
    ).toThrowError(
      expect.objectContaining({
        code: 409,
        message: 'Apply failed with 1 conflict: conflict with "two": .spec.b',
      }),
    );
    // kube's printManager: an applier is named without a version (it is not part of its identity), even
    // when the request's differs; an updater with its version.
    expect(() =>
      serverSideApply(live, { metadata: { name: "n" }, spec: { b: 2 } }, "one", false, "v2", "t"),
    ).toThrowError(
      expect.objectContaining({ message: 'Apply failed with 1 conflict: conflict with "two": .spec.b' }),
    );
    const updated = { ...live, spec: { ...live.spec, d: 1 } };
    updated.metadata = {
      ...live.metadata,
      managedFields: recordUpdate(live, updated, "three", "v1", "t", "status"),
    };
    expect(() =>
      serverSideApply(updated, { metadata: { name: "n" }, spec: { d: 2 } }, "one", false, "v2", "t"),
    ).toThrowError(
      expect.objectContaining({
        message:
          'Apply failed with 1 conflict: conflict with "three" with subresource "status" using v1: .spec.d',
      }),
    );
    const forced = serverSideApply(live, { metadata: { name: "n" }, spec: { b: 2 } }, "one", true, "v1", "t");
    expect(forced.object.spec).toEqual({ b: 2 });
    expect(forced.managedFields.map((e) => e.manager)).toEqual(["one"]);
  });
});

describe("patches over HTTP", () => {
  let s: ApiServer;
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("p"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
  });
  afterAll(() => s.stop());
  const W = (n: string): string => `${WIDGETS("p")}/${n}`;

  it("JSON patch with a failing test op is 422 and changes nothing", async () => {
    await call(s, "POST", WIDGETS("p"), widget("j", "p", { replicas: 1 }));
    const r = await call(
      s,
      "PATCH",
      W("j"),
      [
        { op: "test", path: "/spec/replicas", value: 5 },
        { op: "replace", path: "/spec/replicas", value: 2 },
      ],
      {
        contentType: "application/json-patch+json",
      },
    );
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe("Invalid");
    expect((await call(s, "GET", W("j"))).body.spec.replicas).toBe(1);
  });

  it("strategic merge is 415 for CRD kinds and works for built-ins (webhooks merged by name)", async () => {
    const r = await call(
      s,
      "PATCH",
      W("j"),
      { spec: { replicas: 2 } },
      { contentType: "application/strategic-merge-patch+json" },
    );
    expect(r.status).toBe(415);
    expect(r.body.reason).toBe("UnsupportedMediaType");
    const VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    await call(s, "POST", VWC, {
      metadata: { name: "v" },
      webhooks: [
        {
          name: "a.example",
          clientConfig: { url: "https://a" },
          timeoutSeconds: 5,
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
        {
          name: "b.example",
          clientConfig: { url: "https://b" },
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
        },
      ],
    });
    const p = await call(
      s,
      "PATCH",
      `${VWC}/v`,
      { webhooks: [{ name: "a.example", timeoutSeconds: 7 }] },
      { contentType: "application/strategic-merge-patch+json" },
    );
    expect(p.status).toBe(200);
    expect(
      p.body.webhooks.map((w: { name: string; timeoutSeconds?: number }) => [w.name, w.timeoutSeconds]),
    ).toEqual([
      ["a.example", 7],
      ["b.example", undefined],
    ]);
    expect(p.body.webhooks[0].clientConfig.url).toBe("https://a");
  });

  it("server-side apply requires fieldManager, creates when absent, conflicts with 409 unless force", async () => {
    const APPLY = { contentType: "application/apply-patch+yaml" };
    const missing = await call(s, "PATCH", W("ssa"), widget("ssa", "p", { replicas: 1 }), APPLY);
    expect(missing.status).toBe(422); // kube: PatchOptions is Invalid
    const created = await call(
      s,
      "PATCH",
      `${W("ssa")}?fieldManager=alpha`,
      widget("ssa", "p", { replicas: 1 }),
      APPLY,
    );
    expect(created.status).toBe(201);
    expect(created.body.metadata.managedFields).toEqual([
      expect.objectContaining({
        manager: "alpha",
        operation: "Apply",
        fieldsV1: { "f:spec": { "f:replicas": {} } },
      }),
    ]);
    const beta = await call(
      s,
      "PATCH",
      `${W("ssa")}?fieldManager=beta`,
      widget("ssa", "p", { replicas: 3 }),
      APPLY,
    );
    expect(beta.status).toBe(409);
    expect(beta.body.message).toBe('Apply failed with 1 conflict: conflict with "alpha": .spec.replicas');
    expect(beta.body.details.causes[0]).toEqual({
      reason: "FieldManagerConflict",
      message: 'conflict with "alpha"',
      field: ".spec.replicas",
    });
    const forced = await call(
      s,
      "PATCH",
      `${W("ssa")}?fieldManager=beta&force=true`,
      widget("ssa", "p", { replicas: 3 }),
      APPLY,
    );
    expect(forced.status).toBe(200);
    expect(forced.body.spec.replicas).toBe(3);
    const yaml = await call(s, "PATCH", `${W("ssa")}?fieldManager=beta`, undefined, {
      ...APPLY,
      raw: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ssa\nspec:\n  replicas: 3\n  tags: [x]\n",
    });
    expect(yaml.body.spec.tags).toEqual(["x"]);
  });

  it("Update requests record their manager from fieldManager or the User-Agent", async () => {
    const r = await call(
      s,
      "PATCH",
      `${W("j")}?fieldManager=my-controller`,
      { metadata: { labels: { x: "y" } } },
      { contentType: "application/merge-patch+json" },
    );
    expect(
      r.body.metadata.managedFields.map(
        (m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`,
      ),
    ).toContain("my-controller/Update");
  });
});

describe("shared ownership over HTTP", () => {
  let s: ApiServer;
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("o"));
  });
  afterAll(() => s.stop());

  it("a second manager applying the same value becomes co-owner, so the first dropping it keeps the field", async () => {
    const APPLY = { contentType: "application/apply-patch+yaml" };
    const cm = (data: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "shared" },
      data,
    });
    const path = "/api/v1/namespaces/o/configmaps/shared";
    await call(s, "PATCH", `${path}?fieldManager=a`, cm({ x: "1", y: "1" }), APPLY);
    const b = await call(s, "PATCH", `${path}?fieldManager=b`, cm({ x: "1" }), APPLY);
    expect(b.body.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual(["a", "b"]);
    const same = await call(s, "PATCH", `${path}?fieldManager=b`, cm({ x: "1" }), APPLY);
    expect(same.body.metadata.resourceVersion).toBe(b.body.metadata.resourceVersion);
    const dropped = await call(s, "PATCH", `${path}?fieldManager=a`, cm({}), APPLY);
    expect(dropped.body.data).toEqual({ x: "1" });
  });
});
