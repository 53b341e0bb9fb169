/**
 * @kubernetes/client-node 1.4.0 used unchanged against the local API server: typed CRUD, custom
 * objects, merge/JSON/apply patches with explicit content types, ApiException shapes, the generic
 * KubernetesObjectApi, and informers (makeInformer: list + watch) seeing adds, updates and deletes.
 */
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { allowAll, call, start, widgetCrd } from "./helpers.js";

let s: ApiServer;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;

beforeAll(async () => {
  s = await start({ admission: allowAll });
  kc = new k8s.KubeConfig();
  kc.loadFromString(s.kubeconfig("kube:admin"));
  core = kc.makeApiClient(k8s.CoreV1Api);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await core.createNamespace({ body: { metadata: { name: "cn" } } });
  await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
});
afterAll(() => s.stop());

const until = async (pred: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe("client-node", () => {
  it("typed CRUD on ConfigMaps with merge and JSON patches", async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: "cn",
      body: { metadata: { name: "c1" }, data: { a: "1" } },
    });
    expect(created.metadata?.uid).toBeTruthy();
    const merged = await core.patchNamespacedConfigMap(
      { name: "c1", namespace: "cn", body: { data: { b: "2" } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    expect(merged.data).toEqual({ a: "1", b: "2" });
    const json = await core.patchNamespacedConfigMap(
      { name: "c1", namespace: "cn", body: [{ op: "remove", path: "/data/a" }] },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.JsonPatch),
    );
    expect(json.data).toEqual({ b: "2" });
    const list = await core.listNamespacedConfigMap({ namespace: "cn" });
    expect(list.items.map((i) => i.metadata?.name)).toEqual(["c1"]);
    await core.deleteNamespacedConfigMap({ name: "c1", namespace: "cn" });
    const err = await core.readNamespacedConfigMap({ name: "c1", namespace: "cn" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(k8s.ApiException);
    expect((err as k8s.ApiException<string>).code).toBe(404);
    expect(JSON.parse((err as k8s.ApiException<string>).body).reason).toBe("NotFound");
  });

  it("custom objects: create, merge patch, status patch, server-side apply, conflict errors", async () => {
    const base = { group: "example.com", version: "v1", namespace: "cn", plural: "widgets" };
    await custom.createNamespacedCustomObject({
      ...base,
      body: { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { replicas: 1 } },
    });
    const merged = (await custom.patchNamespacedCustomObject(
      { ...base, name: "w", body: { spec: { replicas: 2 } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )) as { spec: { replicas: number }; metadata: { resourceVersion: string } };
    expect(merged.spec.replicas).toBe(2);
    const status = (await custom.patchNamespacedCustomObjectStatus(
      { ...base, name: "w", body: { status: { phase: "Ready" } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )) as { status: { phase: string } };
    expect(status.status.phase).toBe("Ready");
    const applied = (await custom.patchNamespacedCustomObject(
      {
        ...base,
        name: "w",
        fieldManager: "ctl",
        force: true,
        body: {
          apiVersion: "example.com/v1",
          kind: "Widget",
          metadata: { name: "w" },
          spec: { replicas: 4 },
        },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply),
    )) as { spec: { replicas: number } };
    expect(applied.spec.replicas).toBe(4);
    const stale = await custom
      .replaceNamespacedCustomObject({
        ...base,
        name: "w",
        body: {
          apiVersion: "example.com/v1",
          kind: "Widget",
          metadata: { name: "w", resourceVersion: merged.metadata.resourceVersion },
          spec: {},
        },
      })
      .catch((e: unknown) => e);
    expect((stale as k8s.ApiException<string>).code).toBe(409);
  });

  it("KubernetesObjectApi reads and patches generically", async () => {
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const ns = await objects.read({ apiVersion: "v1", kind: "Namespace", metadata: { name: "cn" } });
    expect(ns.metadata?.name).toBe("cn");
    const created: k8s.KubernetesObject = await objects.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "generic", namespace: "cn" },
    });
    expect(created.metadata?.resourceVersion).toBeTruthy();
  });

  it("informers list, then see adds, updates and deletes through the watch", async () => {
    const informer = k8s.makeInformer(kc, "/api/v1/namespaces/cn/configmaps", () =>
      core.listNamespacedConfigMap({ namespace: "cn" }),
    );
    const events: string[] = [];
    informer.on("add", (o) => events.push(`add ${o.metadata?.name}`));
    informer.on("update", (o) => events.push(`update ${o.metadata?.name} ${o.data?.k ?? ""}`));
    informer.on("delete", (o) => events.push(`delete ${o.metadata?.name}`));
    await informer.start();
    await until(() => events.includes("add generic"));
    await core.createNamespacedConfigMap({ namespace: "cn", body: { metadata: { name: "inf" } } });
    await core.patchNamespacedConfigMap(
      { name: "inf", namespace: "cn", body: { data: { k: "v" } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedConfigMap({ name: "inf", namespace: "cn" });
    await until(() => events.includes("delete inf"));
    await informer.stop();
    expect(events).toEqual(["add generic", "add inf", "update inf v", "delete inf"]);
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(["generic"]);
  });

  it("custom object informers via the generic watch path", async () => {
    const informer = k8s.makeInformer(
      kc,
      "/apis/example.com/v1/namespaces/cn/widgets",
      () =>
        custom.listNamespacedCustomObject({
          group: "example.com",
          version: "v1",
          namespace: "cn",
          plural: "widgets",
        }) as never,
    );
    const names: string[] = [];
    informer.on("add", (o) => names.push(String(o.metadata?.name)));
    await informer.start();
    await until(() => names.includes("w"));
    await informer.stop();
    expect(names).toEqual(["w"]);
  });
});

describe("client-node informers under injected watch drops", () => {
  it("keep seeing every object when the server cuts watches", async () => {
    s.faults.set({ dropWatchesEveryMs: 80, seed: 11, match: { verbs: ["watch"] } });
    const informer = k8s.makeInformer(kc, "/api/v1/namespaces/cn/configmaps", () =>
      core.listNamespacedConfigMap({ namespace: "cn" }),
    );
    const names = new Set<string>();
    informer.on("add", (o) => names.add(String(o.metadata?.name)));
    await informer.start();
    for (let i = 0; i < 10; i++) {
      await core.createNamespacedConfigMap({ namespace: "cn", body: { metadata: { name: `drop-${i}` } } });
      await new Promise((r) => setTimeout(r, 30));
    }
    await until(() => names.has("drop-9"));
    await informer.stop();
    s.faults.clear();
    expect([...names].filter((n) => n.startsWith("drop-")).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `drop-${i}`),
    );
  });
});
