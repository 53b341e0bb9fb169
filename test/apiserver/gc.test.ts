/**
 * Deletion as kube-controller-manager and the apiextensions server make it behave (SPEC §8): the
 * garbage collector's background, foreground and orphan propagation over ownerReferences, dangling
 * references, and CRD deletion (cleanup finalizer, objects removed, then the CRD and its type).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import type { AdmissionAttributes } from "../../src/apiserver/types.js";
import { call, configMap, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

let s: ApiServer;
const seen: AdmissionAttributes[] = [];
const CM = "/api/v1/namespaces/gc/configmaps";

beforeAll(async () => {
  s = await start({
    admission: {
      mutate: async (a) => ({ allowed: true, object: a.object, warnings: [] }),
      validate: async (a) => {
        seen.push(a);
        return { allowed: true, object: a.object, warnings: [] };
      },
    },
  });
  await call(s, "POST", "/api/v1/namespaces", namespace("gc"));
});
afterAll(() => s.stop());

const owner = async (name: string): Promise<{ uid: string }> =>
  (await call(s, "POST", CM, configMap(name, "gc"))).body.metadata;
const dependent = (name: string, ownerName: string, uid: string, block = false) =>
  call(s, "POST", CM, {
    ...configMap(name, "gc"),
    metadata: {
      name,
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          name: ownerName,
          uid,
          ...(block ? { blockOwnerDeletion: true } : {}),
        },
      ],
    },
  });
const exists = async (name: string): Promise<boolean> =>
  (await call(s, "GET", `${CM}/${name}`)).status === 200;

describe("garbage collector", () => {
  it("background: the owner goes at once, then its dependents, deleted as the GC's identity", async () => {
    const o = await owner("bg-owner");
    await dependent("bg-dep", "bg-owner", o.uid);
    await call(s, "DELETE", `${CM}/bg-owner`, { propagationPolicy: "Background" });
    expect(await exists("bg-owner")).toBe(false);
    await s.settled();
    expect(await exists("bg-dep")).toBe(false);
    const gcDelete = seen.find((a) => a.operation === "DELETE" && a.name === "bg-dep");
    expect(gcDelete?.userInfo.username).toBe("system:serviceaccount:kube-system:generic-garbage-collector");
  });

  it("foreground: the owner waits with foregroundDeletion until blocking dependents are gone", async () => {
    const o = await owner("fg-owner");
    await call(s, "POST", CM, {
      ...configMap("fg-dep", "gc"),
      metadata: {
        name: "fg-dep",
        finalizers: ["example.com/hold"],
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "fg-owner", uid: o.uid, blockOwnerDeletion: true },
        ],
      },
    });
    const del = await call(s, "DELETE", `${CM}/fg-owner`, { propagationPolicy: "Foreground" });
    expect(del.body.metadata.finalizers).toContain("foregroundDeletion");
    await s.settled();
    expect(await exists("fg-owner")).toBe(true);
    const dep = await call(s, "GET", `${CM}/fg-dep`);
    expect(dep.body.metadata.deletionTimestamp).toBeTruthy();
    await call(
      s,
      "PATCH",
      `${CM}/fg-dep`,
      { metadata: { finalizers: null } },
      { contentType: "application/merge-patch+json" },
    );
    await s.settled();
    expect(await exists("fg-dep")).toBe(false);
    expect(await exists("fg-owner")).toBe(false);
  });

  it("orphan: dependents lose the ownerReference and stay; the owner goes", async () => {
    const o = await owner("or-owner");
    const other = await owner("or-other");
    await call(s, "POST", CM, {
      ...configMap("or-dep", "gc"),
      metadata: {
        name: "or-dep",
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "or-owner", uid: o.uid },
          { apiVersion: "v1", kind: "ConfigMap", name: "or-other", uid: other.uid },
        ],
      },
    });
    const del = await call(s, "DELETE", `${CM}/or-owner`, { propagationPolicy: "Orphan" });
    expect(del.body.metadata.finalizers).toEqual(["orphan"]);
    await s.settled();
    expect(await exists("or-owner")).toBe(false);
    const dep = await call(s, "GET", `${CM}/or-dep`);
    expect(dep.body.metadata.ownerReferences.map((r: { name: string }) => r.name)).toEqual(["or-other"]);
  });

  it("dependents whose owners never existed are collected; dangling references beside a live owner are dropped", async () => {
    await dependent("dangling", "ghost", "00000000-0000-0000-0000-000000000000");
    await s.settled();
    expect(await exists("dangling")).toBe(false);
    const live = await owner("live-owner");
    await call(s, "POST", CM, {
      ...configMap("half", "gc"),
      metadata: {
        name: "half",
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "live-owner", uid: live.uid },
          { apiVersion: "v1", kind: "ConfigMap", name: "ghost", uid: "11111111-0000-0000-0000-000000000000" },
        ],
      },
    });
    await s.settled();
    const half = await call(s, "GET", `${CM}/half`);
    expect(half.body.metadata.ownerReferences.map((r: { name: string }) => r.name)).toEqual(["live-owner"]);
  });
});

describe("CRD deletion", () => {
  it("sets deletionTimestamp with the cleanup finalizer, removes the objects (honouring their finalizers), then the CRD and its type", async () => {
    const crd = await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
    expect(crd.body.metadata.finalizers).toEqual(["customresourcecleanup.apiextensions.k8s.io"]);
    expect(
      crd.body.status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
    ).toEqual(["NamesAccepted=True", "Established=True"]);
    await call(s, "POST", WIDGETS("gc"), widget("w1", "gc"));
    await call(
      s,
      "POST",
      WIDGETS("gc"),
      widget("w2", "gc", {}, { metadata: { finalizers: ["example.com/hold"] } }),
    );
    const del = await call(
      s,
      "DELETE",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
    );
    expect(del.body.metadata.deletionTimestamp).toBeTruthy();
    await s.settled();
    expect((await call(s, "GET", `${WIDGETS("gc")}/w1`)).status).toBe(404);
    const terminating = await call(
      s,
      "GET",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
    );
    expect(terminating.body.status.conditions).toContainEqual(
      expect.objectContaining({ type: "Terminating", status: "True", reason: "InstanceDeletionInProgress" }),
    );
    const held = await call(s, "GET", `${WIDGETS("gc")}/w2`);
    expect(held.body.metadata.deletionTimestamp).toBeTruthy();
    const refused = await call(s, "POST", WIDGETS("gc"), widget("w3", "gc"));
    expect(refused.status).toBe(405);
    expect(
      (await call(s, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"))
        .status,
    ).toBe(200);
    await call(
      s,
      "PATCH",
      `${WIDGETS("gc")}/w2`,
      { metadata: { finalizers: null } },
      { contentType: "application/merge-patch+json" },
    );
    await s.settled();
    expect(
      (await call(s, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"))
        .status,
    ).toBe(404);
    expect((await call(s, "GET", WIDGETS("gc"))).status).toBe(404);
    const apis = await call(s, "GET", "/apis");
    expect(apis.body.groups.map((g: { name: string }) => g.name)).not.toContain("example.com");
  });
});
