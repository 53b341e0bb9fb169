/**
 * Authorization in the request path (SPEC §8 "Authorization like the real server's"): every request is
 * authorized by RBAC over the roles and bindings stored in the server before anything else is looked at,
 * refused with kube-apiserver's 403 (the expected answers are what kube-apiserver 1.33 sent on the real
 * control plane for the same requests); the write path asks again where kube does (create on apply,
 * OwnerReferencesPermissionEnforcement); NamespaceLifecycle refuses what kube refuses. `kube:admin` here is
 * in `system:masters`; `alice` starts with nothing but the bootstrap discovery roles.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { parseResourcePath, resourceAttributes } from "../../src/apiserver/request-attributes.js";
import {
  allowAll,
  call,
  configMap,
  namespace,
  start,
  USER_TOKEN,
  WIDGETS,
  watch,
  widget,
  widgetCrd,
} from "./helpers.js";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
let s: ApiServer;
const asAlice = { token: USER_TOKEN };

const create = async (path: string, body: unknown): Promise<void> => {
  const r = await call(s, "POST", path, body);
  if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.text}`);
};
const clusterRole = (name: string, rules: unknown[]) =>
  create(`${RBAC}/clusterroles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name },
    rules,
  });
const roleBinding = (ns: string, name: string, roleRef: { kind: string; name: string }, user = "alice") =>
  create(`${RBAC}/namespaces/${ns}/rolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
  });

beforeAll(async () => {
  s = await start({ admission: allowAll });
  for (const ns of ["team", "other"]) await create("/api/v1/namespaces", namespace(ns));
  await create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
  await s.settled();
});
afterAll(() => s.stop());

const forbidden = (message: string, details: Record<string, unknown>) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason: "Forbidden",
  details,
  code: 403,
});

describe("every request is authorized first", () => {
  it.each(["/api", "/api/v1", "/apis", "/apis/example.com/v1", "/version", "/openapi/v3", "/healthz"])(
    "any authenticated user may discover: GET %s",
    async (path) => {
      expect((await call(s, "GET", path, undefined, asAlice)).status).toBe(200);
    },
  );

  it("a path nobody granted is 403 for alice, and 404 only for someone who may ask", async () => {
    const r = await call(s, "GET", "/metrics", undefined, asAlice);
    expect(r.status).toBe(403);
    expect(r.body).toEqual(forbidden('forbidden: User "alice" cannot get path "/metrics"', {}));
    expect((await call(s, "GET", "/metrics")).status).toBe(404);
  });

  it("a namespaced list, a list across namespaces, a named get: kube's words and details", async () => {
    const inNamespace = await call(s, "GET", "/api/v1/namespaces/team/secrets", undefined, asAlice);
    expect(inNamespace.body).toEqual(
      forbidden(
        'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team"',
        { kind: "secrets" },
      ),
    );
    const everywhere = await call(s, "GET", "/api/v1/secrets", undefined, asAlice);
    expect(everywhere.body.message).toBe(
      'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" at the cluster scope',
    );
    const named = await call(s, "GET", "/api/v1/namespaces/team/secrets/foo", undefined, asAlice);
    expect(named.body).toEqual(
      forbidden(
        'secrets "foo" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "team"',
        { name: "foo", kind: "secrets" },
      ),
    );
  });

  it("a Namespace is in its own namespace; a field selector on metadata.name names the object", async () => {
    const ns = await call(s, "GET", "/api/v1/namespaces/kube-system", undefined, asAlice);
    expect(ns.body.message).toBe(
      'namespaces "kube-system" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "kube-system"',
    );
    const selected = await call(
      s,
      "GET",
      "/api/v1/namespaces?fieldSelector=metadata.name%3Dkube-system",
      undefined,
      asAlice,
    );
    expect(selected.body.message).toBe(
      'namespaces "kube-system" is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
  });

  it("writes name their verb and subresource; an unknown resource is 403 before 404", async () => {
    const created = await call(
      s,
      "POST",
      "/api/v1/namespaces/team/configmaps",
      configMap("x", "team"),
      asAlice,
    );
    expect(created.body.message).toBe(
      'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team"',
    );
    const status = await call(s, "PUT", `${WIDGETS("team")}/w/status`, widget("w", "team"), asAlice);
    expect(status.body).toEqual(
      forbidden(
        'widgets.example.com "w" is forbidden: User "alice" cannot update resource "widgets/status" in API group "example.com" in the namespace "team"',
        { name: "w", group: "example.com", kind: "widgets" },
      ),
    );
    const all = await call(s, "DELETE", "/api/v1/namespaces/team/configmaps", undefined, asAlice);
    expect(all.body.message).toBe(
      'configmaps is forbidden: User "alice" cannot deletecollection resource "configmaps" in API group "" in the namespace "team"',
    );
    const unknown = await call(
      s,
      "GET",
      "/apis/nope.example.com/v1/namespaces/x/gadgets",
      undefined,
      asAlice,
    );
    expect(unknown.body.message).toBe(
      'gadgets.nope.example.com is forbidden: User "alice" cannot list resource "gadgets" in API group "nope.example.com" in the namespace "x"',
    );
    expect((await call(s, "GET", "/apis/nope.example.com/v1/namespaces/x/gadgets")).status).toBe(404);
  });

  it("a watch is refused before its stream starts", async () => {
    const w = await watch(s, "/api/v1/namespaces/team/configmaps?watch=true", USER_TOKEN);
    expect(w.status).toBe(403);
    await w.ended;
  });

  it("a refusal is counted as a failed request", async () => {
    s.counters.reset();
    await call(s, "GET", "/api/v1/namespaces/team/configmaps", undefined, asAlice);
    expect(s.counters.snapshot().failures).toEqual({ "list /configmaps alice 403": 1 });
  });
});

describe("what the authorizer is asked (kube's RequestInfo from the URL)", () => {
  const user = { username: "alice", groups: [] };
  const cases: Array<[string, string, string, Record<string, string>]> = [
    ["GET", "/api/v1/namespaces/team/configmaps", "", { verb: "list", namespace: "team", name: "" }],
    ["GET", "/api/v1/namespaces/team/configmaps", "watch=true", { verb: "watch", name: "" }],
    ["GET", "/api/v1/watch/namespaces/team/configmaps/c", "", { verb: "watch", name: "c" }],
    [
      "GET",
      "/api/v1/namespaces/te%61m/configmaps/a%3Ab",
      "",
      { verb: "get", namespace: "team", name: "a:b" },
    ],
    [
      "GET",
      "/api/v1/configmaps",
      "fieldSelector=metadata.name%3Dc",
      { verb: "list", namespace: "", name: "c" },
    ],
    ["GET", "/api/v1/configmaps", "fieldSelector=metadata.name%3D..", { verb: "list", name: "" }],
    [
      "GET",
      "/api/v1/namespaces/team",
      "",
      { verb: "get", resource: "namespaces", namespace: "team", name: "team" },
    ],
    [
      "PUT",
      "/api/v1/namespaces/team/status",
      "",
      { verb: "update", namespace: "team", subresource: "status" },
    ],
    ["POST", "/api/v1/namespaces/team/configmaps", "", { verb: "create", name: "" }],
    ["DELETE", "/api/v1/namespaces/team/configmaps", "", { verb: "deletecollection" }],
    [
      "PATCH",
      "/apis/cluster.x-k8s.io/v1beta2/namespaces/n/machinesets/s/scale",
      "",
      {
        verb: "patch",
        apiGroup: "cluster.x-k8s.io",
        resource: "machinesets",
        subresource: "scale",
        name: "s",
      },
    ],
  ];
  it.each(cases)("%s %s?%s", (method, path, query, expected) => {
    const p = parseResourcePath(path)!;
    const q = new URLSearchParams(query);
    const watching = p.watchPath || q.get("watch") === "true";
    expect(resourceAttributes(user, method, p, q, watching)).toMatchObject(expected);
  });
});

describe("what the stored roles and bindings grant", () => {
  beforeAll(async () => {
    await clusterRole("configmap-reader", [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] },
    ]);
  });

  it("a RoleBinding to a ClusterRole grants its rules in that namespace only, at once and until it is gone", async () => {
    expect((await call(s, "GET", "/api/v1/namespaces/team/configmaps", undefined, asAlice)).status).toBe(403);
    await roleBinding("team", "alice-reads", { kind: "ClusterRole", name: "configmap-reader" });
    expect((await call(s, "GET", "/api/v1/namespaces/team/configmaps", undefined, asAlice)).status).toBe(200);
    expect((await call(s, "GET", "/api/v1/namespaces/other/configmaps", undefined, asAlice)).status).toBe(
      403,
    );
    expect((await call(s, "GET", "/api/v1/configmaps", undefined, asAlice)).status).toBe(403);
    await call(s, "DELETE", `${RBAC}/namespaces/team/rolebindings/alice-reads`);
    expect((await call(s, "GET", "/api/v1/namespaces/team/configmaps", undefined, asAlice)).status).toBe(403);
  });

  it("a role's rules edited, the role deleted and created again: each takes effect on the next request", async () => {
    await clusterRole("secret-lister", [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }]);
    await roleBinding("team", "alice-secrets", { kind: "ClusterRole", name: "secret-lister" });
    const list = async () => call(s, "GET", "/api/v1/namespaces/team/secrets", undefined, asAlice);
    expect((await list()).status).toBe(200);
    const edited = await call(
      s,
      "PATCH",
      `${RBAC}/clusterroles/secret-lister`,
      {
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
      },
      { contentType: "application/merge-patch+json" },
    );
    expect(edited.status).toBe(200);
    expect((await list()).status).toBe(403);
    await call(s, "DELETE", `${RBAC}/clusterroles/secret-lister`);
    expect((await list()).body.message).toMatch(
      /RBAC: clusterrole.rbac.authorization.k8s.io "secret-lister" not found$/,
    );
    await clusterRole("secret-lister", [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }]);
    expect((await list()).status).toBe(200);
    // A group binding: alice's groups are part of who she is.
    await call(s, "DELETE", `${RBAC}/namespaces/team/rolebindings/alice-secrets`);
    expect((await list()).status).toBe(403);
    await create(`${RBAC}/namespaces/team/rolebindings`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "authenticated-secrets" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "secret-lister" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" }],
    });
    expect((await list()).status).toBe(200);
    await call(s, "DELETE", `${RBAC}/namespaces/team/rolebindings/authenticated-secrets`);
    expect((await list()).status).toBe(403);
  });

  it("a binding to a role that does not exist says so in the refusal", async () => {
    await roleBinding("other", "alice-nothing", { kind: "ClusterRole", name: "no-such-role" });
    const r = await call(s, "GET", "/api/v1/namespaces/other/secrets", undefined, asAlice);
    expect(r.body.message).toBe(
      'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "other": RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found',
    );
  });

  it("RBAC object names are path segments, not DNS names (system:… roles can be created)", async () => {
    await clusterRole("system:test-reader", []);
    for (const [name, why] of [
      ["a/b", "may not contain '/'"],
      ["a%b", "may not contain '%'"],
      ["..", "may not be '..'"],
    ]) {
      const r = await call(s, "POST", `${RBAC}/clusterroles`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name },
      });
      expect(r.body.message).toBe(
        `ClusterRole.rbac.authorization.k8s.io "${name}" is invalid: metadata.name: Invalid value: "${name}": ${why}`,
      );
    }
  });
});

describe("the write path asks again where kube does", () => {
  beforeAll(async () => {
    await clusterRole("configmap-patcher", [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "patch"] },
    ]);
    await roleBinding("team", "alice-patches", { kind: "ClusterRole", name: "configmap-patcher" });
  });

  it("a server-side apply that would create needs create too; a merge patch of nothing is 404", async () => {
    const applied = await call(
      s,
      "PATCH",
      "/api/v1/namespaces/team/configmaps/applied?fieldManager=alice",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "applied" } },
      { ...asAlice, contentType: "application/apply-patch+yaml" },
    );
    expect(applied.body).toEqual(
      forbidden(
        'configmaps "applied" is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team"',
        { name: "applied", kind: "configmaps" },
      ),
    );
    const merged = await call(
      s,
      "PATCH",
      "/api/v1/namespaces/team/configmaps/missing",
      { data: {} },
      {
        ...asAlice,
        contentType: "application/merge-patch+json",
      },
    );
    expect(merged.status).toBe(404);
  });

  describe("OwnerReferencesPermissionEnforcement", () => {
    let ownerUid = "";
    const ownedBy = (name: string, block: boolean) =>
      widget(
        name,
        "team",
        {},
        {
          metadata: {
            ownerReferences: [
              {
                apiVersion: "example.com/v1",
                kind: "Widget",
                name: "owner",
                uid: ownerUid,
                blockOwnerDeletion: block,
              },
            ],
          },
        },
      );
    beforeAll(async () => {
      const owner = await call(s, "POST", WIDGETS("team"), widget("owner", "team"));
      ownerUid = owner.body.metadata.uid;
      await clusterRole("widget-maker", [
        { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get", "create", "update", "patch"] },
      ]);
      await roleBinding("team", "alice-makes", { kind: "ClusterRole", name: "widget-maker" });
    });

    it("blockOwnerDeletion on a create needs update on the owner's finalizers", async () => {
      const refused = await call(s, "POST", WIDGETS("team"), ownedBy("blocking", true), asAlice);
      expect(refused.body).toEqual(
        forbidden(
          `widgets.example.com "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`,
          { name: "blocking", group: "example.com", kind: "widgets" },
        ),
      );
      expect((await call(s, "POST", WIDGETS("team"), ownedBy("not-blocking", false), asAlice)).status).toBe(
        201,
      );
      await clusterRole("widget-finalizer", [
        {
          apiGroups: ["example.com"],
          resources: ["widgets/finalizers"],
          verbs: ["update"],
          resourceNames: ["owner"],
        },
      ]);
      await roleBinding("team", "alice-finalizes", { kind: "ClusterRole", name: "widget-finalizer" });
      expect((await call(s, "POST", WIDGETS("team"), ownedBy("blocking", true), asAlice)).status).toBe(201);
    });

    it("changing the owners of an existing object needs delete on it", async () => {
      const plain = await call(s, "POST", WIDGETS("team"), widget("plain", "team"), asAlice);
      expect(plain.status).toBe(201);
      const r = await call(
        s,
        "PATCH",
        `${WIDGETS("team")}/plain`,
        { metadata: { ownerReferences: ownedBy("plain", false).metadata?.ownerReferences } },
        { ...asAlice, contentType: "application/merge-patch+json" },
      );
      expect(r.body.message).toBe(
        `widgets.example.com "plain" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>`,
      );
      // A cluster admin may; the garbage collector's own orphaning writes are never asked.
      expect(
        (
          await call(
            s,
            "PATCH",
            `${WIDGETS("team")}/plain`,
            { metadata: { ownerReferences: ownedBy("plain", true).metadata?.ownerReferences } },
            { contentType: "application/merge-patch+json" },
          )
        ).status,
      ).toBe(200);
      const del = await call(s, "DELETE", `${WIDGETS("team")}/owner`, { propagationPolicy: "Orphan" });
      expect(del.status).toBe(200);
      await s.settled();
      const orphaned = await call(s, "GET", `${WIDGETS("team")}/plain`);
      expect(orphaned.body.metadata.ownerReferences).toBeUndefined();
    });
  });
});

describe("NamespaceLifecycle", () => {
  it("the namespaces every cluster relies on may not be deleted, even by a cluster admin", async () => {
    const r = await call(s, "DELETE", "/api/v1/namespaces/default");
    expect(r.body).toEqual(
      forbidden('namespaces "default" is forbidden: this namespace may not be deleted', {
        name: "default",
        kind: "namespaces",
      }),
    );
    expect((await call(s, "DELETE", "/api/v1/namespaces/kube-node-lease?dryRun=All")).status).toBe(200);
  });

  it("a create in a terminating namespace carries the NamespaceTerminating cause; updates there still pass", async () => {
    await create("/api/v1/namespaces", namespace("doomed"));
    await create("/api/v1/namespaces/doomed/configmaps", {
      ...configMap("held", "doomed"),
      metadata: { name: "held", namespace: "doomed", finalizers: ["example.com/hold"] },
    });
    await call(s, "DELETE", "/api/v1/namespaces/doomed");
    await s.settled();
    const refused = await call(s, "POST", "/api/v1/namespaces/doomed/configmaps", configMap("x", "doomed"));
    expect(refused.body).toEqual(
      forbidden(
        'configmaps "x" is forbidden: unable to create new content in namespace doomed because it is being terminated',
        {
          name: "x",
          kind: "configmaps",
          causes: [
            {
              reason: "NamespaceTerminating",
              message: "namespace doomed is being terminated",
              field: "metadata.namespace",
            },
          ],
        },
      ),
    );
    const updated = await call(
      s,
      "PATCH",
      "/api/v1/namespaces/doomed/configmaps/held",
      { data: { a: "b" } },
      {
        contentType: "application/merge-patch+json",
      },
    );
    expect(updated.status).toBe(200);
  });

  it("authorization comes first: a create in a missing namespace is 403 for alice, 404 for an admin", async () => {
    const alice = await call(
      s,
      "POST",
      "/api/v1/namespaces/no-such/configmaps",
      configMap("x", "no-such"),
      asAlice,
    );
    expect(alice.body.message).toBe(
      'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "no-such"',
    );
    const admin = await call(s, "POST", "/api/v1/namespaces/no-such/configmaps", configMap("x", "no-such"));
    expect(admin.body).toMatchObject({ code: 404, message: 'namespaces "no-such" not found' });
  });
});
