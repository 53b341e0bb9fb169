/**
 * What the differential conformance suite (test/cluster/conformance-probes.ts) found kube-apiserver 1.33
 * and kube-controller-manager do, pinned on the local server alone (decision 79): the garbage collector
 * finds an owner by its coordinates, not by uid alone; a foreground-deleting owner's dependents are deleted
 * as kube's collector deletes them; a watch's DELETED event after the last finalizer goes carries the object
 * as last stored; a bookmark comes 2 s before a watch's deadline; matchConditions are validated when a
 * webhook configuration is written, and one that cannot be evaluated under failurePolicy Fail is Forbidden.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { waitFor } from "../support/wait.js";
import { call, configMap, namespace, type Response, start, watch } from "./helpers.js";

interface EventItem {
  type: string;
  reason: string;
  message: string;
  involvedObject: { uid: string; kind: string };
  source: { component: string };
}

let s: ApiServer;
const NS = "i22";
const OTHER = "i22-other";
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const VWCS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const MERGE = { contentType: "application/merge-patch+json" };

beforeAll(async () => {
  s = await start();
  await call(s, "POST", "/api/v1/namespaces", namespace(NS));
  await call(s, "POST", "/api/v1/namespaces", namespace(OTHER));
  await call(s, "POST", "/api/v1/namespaces", namespace("default"));
});
afterAll(() => s.stop());

const ref = (name: string, uid: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  name,
  uid,
  ...extra,
});
const create = async (name: string, metadata: Record<string, unknown> = {}, ns = NS) =>
  (
    await call(s, "POST", `/api/v1/namespaces/${ns}/configmaps`, {
      ...configMap(name, ns),
      metadata: { name, ...metadata },
    })
  ).body;
const get = (name: string) => call(s, "GET", `${CM}/${name}`);
const unhold = (name: string) => call(s, "PATCH", `${CM}/${name}`, { metadata: { finalizers: null } }, MERGE);

describe("the garbage collector finds owners by coordinates", () => {
  it("a reference carrying a live object's uid under another name is dangling", async () => {
    const owner = await create("renamed-owner");
    await create("renamed-dep", { ownerReferences: [ref("someone-else", owner.metadata.uid)] });
    await s.settled();
    expect((await get("renamed-dep")).status).toBe(404);
    expect((await get("renamed-owner")).status).toBe(200);
  });

  it("a namespaced owner in another namespace is absent, with an OwnerRefInvalidNamespace event", async () => {
    const owner = await create("far-owner", {}, OTHER);
    const dep = await create("far-dep", { ownerReferences: [ref("far-owner", owner.metadata.uid)] });
    await s.settled();
    expect((await get("far-dep")).status).toBe(404);
    const events = await call(
      s,
      "GET",
      `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3Dfar-dep`,
    );
    expect(
      events.body.items.map((e: EventItem) => ({
        type: e.type,
        reason: e.reason,
        uid: e.involvedObject.uid,
        source: e.source.component,
        message: e.message,
      })),
    ).toEqual([
      {
        type: "Warning",
        reason: "OwnerRefInvalidNamespace",
        uid: dep.metadata.uid,
        source: "garbage-collector-controller",
        message: `ownerRef [v1/ConfigMap, namespace: ${NS}, name: far-owner, uid: ${owner.metadata.uid}] does not exist in namespace "${NS}"`,
      },
    ]);
  });

  it("a dependent whose owner's kind is not served is left alone, whatever holds the owner's uid", async () => {
    const lookalike = await create("ghost-lookalike");
    await create("ghost-dep", {
      ownerReferences: [
        { apiVersion: "ghosts.example.com/v1", kind: "Ghost", name: "ghost", uid: "no-such-uid" },
      ],
    });
    await create("ghost-dep-2", {
      ownerReferences: [
        { apiVersion: "ghosts.example.com/v1", kind: "Ghost", name: "ghost", uid: lookalike.metadata.uid },
        ref("never-there", "no-such-uid-either"),
      ],
    });
    await s.settled();
    expect((await get("ghost-dep")).status).toBe(200);
    const kept = await get("ghost-dep-2");
    expect(kept.status).toBe(200);
    expect(kept.body.metadata.ownerReferences).toHaveLength(2);
  });

  it("a cluster-scoped dependent of a namespaced kind is never collected; the event goes to default", async () => {
    const owner = await create("ns-owner");
    const roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    const created = await call(s, "POST", roles, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "i22-dependent", ownerReferences: [ref("ns-owner", owner.metadata.uid)] },
      rules: [],
    });
    expect(created.status).toBe(201);
    await call(s, "DELETE", `${CM}/ns-owner`);
    await s.settled();
    expect((await call(s, "GET", `${roles}/i22-dependent`)).status).toBe(200);
    const events = await call(
      s,
      "GET",
      "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Di22-dependent",
    );
    expect(events.body.items.map((e: EventItem) => `${e.reason} ${e.involvedObject.kind}`)).toEqual([
      "OwnerRefInvalidNamespace ClusterRole",
    ]);
  });

  it("a cluster-scoped owner holds a namespaced dependent until it goes", async () => {
    const roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    const owner = await call(s, "POST", roles, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "i22-owner" },
      rules: [],
    });
    await create("of-cluster", {
      ownerReferences: [
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          name: "i22-owner",
          uid: owner.body.metadata.uid,
        },
      ],
    });
    await s.settled();
    expect((await get("of-cluster")).status).toBe(200);
    await call(s, "DELETE", `${roles}/i22-owner`);
    await s.settled();
    expect((await get("of-cluster")).status).toBe(404);
  });
});

describe("foreground deletion orders dependents as kube's collector does", () => {
  it("a non-blocking dependent with dependents goes in the foreground; the owner waits only for blocking ones", async () => {
    const owner = await create("fg-owner");
    await create("fg-holder", {
      finalizers: ["example.com/hold"],
      ownerReferences: [ref("fg-owner", owner.metadata.uid, { blockOwnerDeletion: true })],
    });
    const mid = await create("fg-mid", { ownerReferences: [ref("fg-owner", owner.metadata.uid)] });
    await create("fg-leaf", {
      finalizers: ["example.com/hold"],
      ownerReferences: [ref("fg-mid", mid.metadata.uid, { blockOwnerDeletion: true })],
    });
    await call(s, "DELETE", `${CM}/fg-owner`, { propagationPolicy: "Foreground" });
    await s.settled();
    expect((await get("fg-mid")).body.metadata.finalizers).toEqual(["foregroundDeletion"]);
    // A dependent without dependents of its own is deleted in the background: no foregroundDeletion.
    expect((await get("fg-leaf")).body.metadata.finalizers).toEqual(["example.com/hold"]);
    expect((await get("fg-holder")).body.metadata.finalizers).toEqual(["example.com/hold"]);
    await unhold("fg-holder");
    await s.settled();
    expect((await get("fg-owner")).status).toBe(404);
    expect((await get("fg-mid")).status).toBe(200);
    await unhold("fg-leaf");
    await s.settled();
    expect((await get("fg-mid")).status).toBe(404);
  });
});

describe("foreground deletion and a second owner", () => {
  it("a dependent that also has a live owner is not deleted; it loses the deleting owner's reference", async () => {
    const owner = await create("fg4-owner");
    const other = await create("fg4-other");
    await create("fg4-dep", {
      ownerReferences: [
        ref("fg4-owner", owner.metadata.uid, { blockOwnerDeletion: true }),
        ref("fg4-other", other.metadata.uid),
      ],
    });
    await call(s, "DELETE", `${CM}/fg4-owner`, { propagationPolicy: "Foreground" });
    await s.settled();
    expect((await get("fg4-owner")).status).toBe(404);
    const dep = await get("fg4-dep");
    expect(dep.body.metadata.deletionTimestamp).toBeUndefined();
    expect(dep.body.metadata.ownerReferences.map((r: { name: string }) => r.name)).toEqual(["fg4-other"]);
  });
});

describe("watch", () => {
  it("the DELETED event after the last finalizer goes carries the object as last stored", async () => {
    const list = await call(s, "GET", CM);
    const w = await watch(
      s,
      `${CM}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}&fieldSelector=metadata.name%3Dw-fin`,
    );
    await create("w-fin", { finalizers: ["example.com/hold"] });
    await call(s, "DELETE", `${CM}/w-fin`);
    const removal = await unhold("w-fin");
    expect(removal.body.metadata.finalizers).toBeUndefined();
    const events = [await w.next(), await w.next(), await w.next()];
    w.close();
    expect(events.map((e) => `${e.type} ${JSON.stringify(e.object.metadata.finalizers)}`)).toEqual([
      'ADDED ["example.com/hold"]',
      'MODIFIED ["example.com/hold"]',
      'DELETED ["example.com/hold"]',
    ]);
    expect(events[2]!.object.metadata.deletionTimestamp).toBeTruthy();
    expect(Number(events[2]!.object.metadata.resourceVersion)).toBeGreaterThan(
      Number(events[1]!.object.metadata.resourceVersion),
    );
  });

  it("a bookmark comes 2 s before the watch's deadline, before the periodic one", async () => {
    const list = await call(s, "GET", CM);
    const w = await watch(
      s,
      `${CM}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}&fieldSelector=metadata.name%3Dnobody&allowWatchBookmarks=true&timeoutSeconds=3`,
    );
    const e = await w.next(2_500);
    w.close();
    expect(e.type).toBe("BOOKMARK");
    expect(Object.keys(e.object.metadata)).toEqual(["resourceVersion"]);
  });
});

const matchWebhook = (name: string, conditions: unknown[], failurePolicy = "Fail") => ({
  name,
  clientConfig: { url: "https://127.0.0.1:1/never" },
  rules: [
    { operations: ["CREATE", "UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
  ],
  matchConditions: conditions,
  sideEffects: "None",
  admissionReviewVersions: ["v1"],
  failurePolicy,
  timeoutSeconds: 1,
});
const vwc = (name: string, webhooks: unknown[]) => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingWebhookConfiguration",
  metadata: { name },
  webhooks,
});
const causesOf = (r: Response): string[] =>
  (r.body.details?.causes ?? []).map((c: { reason: string; field: string }) => `${c.reason} ${c.field}`);

describe("admission webhook matchConditions", () => {
  it("are validated when a configuration is written", async () => {
    const at = "webhooks[0].matchConditions";
    const r = await call(
      s,
      "POST",
      VWCS,
      vwc("i22-invalid", [
        matchWebhook("a.example.com", [
          { name: "parse", expression: "object.metadata.name.startsWith(" },
          { name: "string", expression: "object.metadata.name" },
          { name: "undeclared", expression: "params.x == 1" },
          { name: "parse", expression: "true" },
          { name: "", expression: "true" },
          { name: "empty", expression: "  " },
          { name: "fine", expression: "request.operation == 'CREATE' && oldObject == null" },
        ]),
      ]),
    );
    expect(r.status).toBe(422);
    expect(causesOf(r).sort()).toEqual(
      [
        `FieldValueInvalid ${at}[0].expression`,
        `FieldValueInvalid ${at}[1].expression`,
        `FieldValueInvalid ${at}[2].expression`,
        `FieldValueDuplicate ${at}[3].name`,
        `FieldValueRequired ${at}[4].name`,
        `FieldValueRequired ${at}[5].expression`,
      ].sort(),
    );
    expect(r.body.details.causes[1].message).toBe(
      'Invalid value: "object.metadata.name": must evaluate to bool',
    );
  });

  it("decide whether a webhook is called; one that cannot be evaluated is Forbidden under Fail, skipped under Ignore", async () => {
    const created = await call(
      s,
      "POST",
      VWCS,
      vwc("i22-match", [
        matchWebhook("mc.example.com", [
          { name: "named", expression: "object.metadata.name.startsWith('mc-')" },
        ]),
        matchWebhook("me.example.com", [
          { name: "named", expression: "object.metadata.name.startsWith('me-')" },
          { name: "missing", expression: "object.data.missing == 'x'" },
        ]),
        matchWebhook(
          "mi.example.com",
          [
            { name: "named", expression: "object.metadata.name.startsWith('mi-')" },
            { name: "missing", expression: "object.data.missing == 'x'" },
          ],
          "Ignore",
        ),
      ]),
    );
    expect(created.status).toBe(201);
    try {
      expect((await call(s, "POST", CM, configMap("other", NS))).status).toBe(201);
      const called = await call(s, "POST", CM, configMap("mc-1", NS));
      expect(called.status).toBe(500);
      expect(called.body.details).toEqual({
        causes: [{ message: called.body.message.replace("Internal error occurred: ", "") }],
      });
      expect(called.body.message).toMatch(
        /^Internal error occurred: failed calling webhook "mc.example.com": /,
      );
      const unevaluable = await call(s, "POST", CM, configMap("me-1", NS));
      expect(unevaluable.status).toBe(403);
      expect(unevaluable.body.reason).toBe("Forbidden");
      expect(unevaluable.body.details).toEqual({ name: "me-1", kind: "configmaps" });
      expect(unevaluable.body.message).toMatch(
        /^configmaps "me-1" is forbidden: expression 'object.data.missing == 'x'' resulted in error: /,
      );
      expect((await call(s, "POST", CM, configMap("mi-1", NS))).status).toBe(201);
    } finally {
      await call(s, "DELETE", `${VWCS}/i22-match`);
    }
    await waitFor(
      "the configuration to be gone",
      async () => (await call(s, "POST", CM, configMap("mc-2", NS))).status === 201,
    );
  });
});
