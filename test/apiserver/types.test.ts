/**
 * Type registration (SPEC §8): cluster-scoped and multi-version CRDs (no conversion: objects are served
 * through every served version), invalid CRDs refused with 422, ambiguous plurals ordered so MAPI comes
 * first, and the built-in kinds the product and installer use (events in both groups, leases, RBAC,
 * PodDisruptionBudgets, Deployments with scale) plus deletecollection.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { allowAll, call, configMap, namespace, start, widgetCrd } from "./helpers.js";

let s: ApiServer;
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const schema = {
  openAPIV3Schema: {
    type: "object",
    properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
  },
};
const machinesCrd = (group: string, version: string) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `machines.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural: "machines", singular: "machine", kind: "Machine", listKind: "MachineList" },
    versions: [{ name: version, served: true, storage: true, schema }],
  },
});

beforeAll(async () => {
  s = await start({ admission: allowAll });
  await call(s, "POST", "/api/v1/namespaces", namespace("t"));
});
afterAll(() => s.stop());

describe("CRD-defined types", () => {
  it("cluster-scoped CRDs serve objects without a namespace", async () => {
    const crd = widgetCrd({ scope: "Cluster" });
    crd.metadata = { name: "widgets.example.com" };
    expect((await call(s, "POST", CRDS, crd)).status).toBe(201);
    const r = await call(s, "POST", "/apis/example.com/v1/widgets", {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "cw", namespace: "ignored" },
    });
    expect(r.status).toBe(201);
    expect(r.body.metadata.namespace).toBeUndefined();
    expect((await call(s, "GET", "/apis/example.com/v1/namespaces/t/widgets")).status).toBe(404);
    const disc = await call(s, "GET", "/apis/example.com/v1");
    expect(disc.body.resources[0].namespaced).toBe(false);
  });

  it("multi-version CRDs serve each object through every served version", async () => {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "gadgets.example.org" },
      spec: {
        group: "example.org",
        scope: "Namespaced",
        names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
        versions: [
          { name: "v1beta1", served: true, storage: false, schema },
          { name: "v1", served: true, storage: true, schema },
        ],
      },
    };
    expect((await call(s, "POST", CRDS, crd)).status).toBe(201);
    const apis = await call(s, "GET", "/apis/example.org");
    expect(apis.body.preferredVersion.version).toBe("v1");
    const created = await call(s, "POST", "/apis/example.org/v1beta1/namespaces/t/gadgets", {
      apiVersion: "example.org/v1beta1",
      kind: "Gadget",
      metadata: { name: "g" },
      spec: { a: 1 },
    });
    expect(created.body.apiVersion).toBe("example.org/v1beta1");
    const v1 = await call(s, "GET", "/apis/example.org/v1/namespaces/t/gadgets/g");
    expect(v1.body.apiVersion).toBe("example.org/v1");
    expect(v1.body.spec).toEqual({ a: 1 });
  });

  it("an invalid CRD is refused with 422 and defines nothing", async () => {
    const bad = widgetCrd();
    bad.metadata = { name: "wrong.example.net" };
    (bad.spec as { group: string }).group = "example.net";
    const r = await call(s, "POST", CRDS, bad);
    expect(r.status).toBe(422);
    expect(r.body.details.kind).toBe("CustomResourceDefinition");
    expect((await call(s, "GET", "/apis/example.net/v1")).status).toBe(404);
  });

  it("lists machine.openshift.io before cluster.x-k8s.io so plain `machines` means MAPI", async () => {
    await call(s, "POST", CRDS, machinesCrd("cluster.x-k8s.io", "v1beta2"));
    await call(s, "POST", CRDS, machinesCrd("machine.openshift.io", "v1beta1"));
    const groups = (await call(s, "GET", "/apis")).body.groups.map((g: { name: string }) => g.name);
    expect(groups.indexOf("machine.openshift.io")).toBeLessThan(groups.indexOf("cluster.x-k8s.io"));
    expect(groups.indexOf("apps")).toBeLessThan(groups.indexOf("machine.openshift.io"));
  });
});

describe("built-in kinds", () => {
  it.each([
    [
      "/api/v1/namespaces/t/events",
      {
        metadata: { name: "e1" },
        involvedObject: { kind: "Machine", namespace: "t", name: "m1" },
        reason: "R",
      },
    ],
    [
      // events.k8s.io/v1 validates strictly: an eventTime, a type and who reported what.
      "/apis/events.k8s.io/v1/namespaces/t/events",
      {
        metadata: { name: "e2" },
        eventTime: "2026-12-05T10:00:00.000000Z",
        regarding: { kind: "Machine", namespace: "t", name: "m1" },
        reason: "R",
        type: "Normal",
        action: "Test",
        reportingController: "example.com/test",
        reportingInstance: "test-1",
      },
    ],
    [
      "/apis/coordination.k8s.io/v1/namespaces/t/leases",
      { metadata: { name: "lease" }, spec: { holderIdentity: "a" } },
    ],
    ["/api/v1/namespaces/t/serviceaccounts", { metadata: { name: "sa" } }],
    ["/apis/rbac.authorization.k8s.io/v1/clusterroles", { metadata: { name: "cr" }, rules: [] }],
    [
      "/apis/rbac.authorization.k8s.io/v1/namespaces/t/rolebindings",
      {
        metadata: { name: "rb" },
        roleRef: { kind: "Role", name: "r", apiGroup: "rbac.authorization.k8s.io" },
        subjects: [],
      },
    ],
    [
      "/apis/policy/v1/namespaces/t/poddisruptionbudgets",
      { metadata: { name: "pdb" }, spec: { minAvailable: 1 } },
    ],
    ["/apis/apps/v1/namespaces/t/deployments", { metadata: { name: "d" }, spec: { replicas: 2 } }],
    ["/api/v1/namespaces/t/services", { metadata: { name: "svc" }, spec: { ports: [{ port: 443 }] } }],
  ])("stores %s", async (path, body) => {
    const r = await call(s, "POST", path, body);
    expect(r.status).toBe(201);
    expect((await call(s, "GET", `${path}/${body.metadata.name}`)).body.metadata.uid).toBe(
      r.body.metadata.uid,
    );
  });

  it("core events filter on involvedObject fields, over the Events of both groups (one store, decision 157)", async () => {
    const r = await call(
      s,
      "GET",
      "/api/v1/namespaces/t/events?fieldSelector=involvedObject.kind%3DMachine,involvedObject.name%3Dm1",
    );
    expect(r.body.items.map((e: { metadata: { name: string } }) => e.metadata.name)).toEqual(["e1", "e2"]);
  });

  it("Deployments have a scale subresource", async () => {
    const r = await call(s, "GET", "/apis/apps/v1/namespaces/t/deployments/d/scale");
    expect(r.body.spec.replicas).toBe(2);
  });

  it("deletecollection deletes what the selector matches", async () => {
    await call(s, "POST", "/api/v1/namespaces/t/configmaps", configMap("k1", "t", {}, { group: "x" }));
    await call(s, "POST", "/api/v1/namespaces/t/configmaps", configMap("k2", "t", {}, { group: "x" }));
    await call(s, "POST", "/api/v1/namespaces/t/configmaps", configMap("k3", "t"));
    const r = await call(s, "DELETE", "/api/v1/namespaces/t/configmaps?labelSelector=group%3Dx");
    expect(r.status).toBe(200);
    const left = await call(s, "GET", "/api/v1/namespaces/t/configmaps");
    expect(left.body.items.map((c: { metadata: { name: string } }) => c.metadata.name)).toEqual(["k3"]);
  });

  it("the direct store bypasses admission but assigns uid and resourceVersion", () => {
    const o = s.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "seeded", namespace: "nowhere" },
    });
    expect(o.metadata?.uid).toBeTruthy();
    expect(o.metadata?.resourceVersion).toBe(s.store.resourceVersion());
    expect(s.store.get({ group: "", plural: "configmaps" }, "nowhere", "seeded")).toBe(o);
    expect(s.store.list({ group: "", plural: "configmaps" }, "nowhere")).toHaveLength(1);
  });
});

describe("a fresh server", () => {
  it("generates its own CA and serving certificate, and has the namespaces every cluster starts with", async () => {
    const fresh = await start({ admission: allowAll, tls: undefined });
    const r = await call(fresh, "GET", "/api/v1/namespaces");
    await fresh.stop();
    expect(r.body.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual([
      "default",
      "kube-node-lease",
      "kube-public",
      "kube-system",
    ]);
    expect(r.body.items[0].status).toEqual({ phase: "Active" });
  });
});
