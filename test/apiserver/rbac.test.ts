/**
 * RBAC as kube-apiserver evaluates it (SPEC §8 "Authorization like the real server's"): rule matching,
 * subjects, the walk over ClusterRoleBindings and a namespace's RoleBindings, `system:masters`, the refusal
 * in kube's words (the expected strings are what kube-apiserver 1.33 answered on the real control plane),
 * and the bootstrap roles. Pure: policies are plain arrays here.
 */
import { describe, expect, it } from "vitest";
import {
  type Attributes,
  authorize,
  bootstrapPolicy,
  cachingAuthorizer,
  forbiddenMessage,
  type NonResourceAttributes,
  type PolicyRule,
  type PolicyView,
  policyRule,
  type ResourceAttributes,
  rbacAuthorize,
  refusal,
  ruleAllows,
  subjectApplies,
} from "../../src/apiserver/rbac.js";
import type { UserInfo } from "../../src/apiserver/types.js";
import type { KubeObject } from "../../src/kube/object.js";

const PRODUCT: UserInfo = {
  username: "system:serviceaccount:openshift-cluster-api:machine-api-migration",
  groups: ["system:serviceaccounts", "system:serviceaccounts:openshift-cluster-api", "system:authenticated"],
};
const ALICE: UserInfo = { username: "alice", groups: ["devs", "system:authenticated"] };

const request = (fields: Partial<ResourceAttributes> = {}, user: UserInfo = PRODUCT): ResourceAttributes => ({
  user,
  verb: "get",
  resourceRequest: true,
  apiGroup: "",
  resource: "configmaps",
  subresource: "",
  namespace: "ns",
  name: "",
  ...fields,
});
const path = (p: string, verb = "get", user: UserInfo = PRODUCT): NonResourceAttributes => ({
  user,
  verb,
  resourceRequest: false,
  path: p,
});
const rule = (r: Partial<PolicyRule>): PolicyRule => policyRule(r);

const policy = (objects: KubeObject[]): PolicyView => {
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  return {
    clusterRoleBindings: () => of("ClusterRoleBinding"),
    roleBindings: (ns) => of("RoleBinding").filter((o) => o.metadata?.namespace === ns),
    clusterRole: (name) => of("ClusterRole").find((o) => o.metadata?.name === name),
    role: (ns, name) => of("Role").find((o) => o.metadata?.namespace === ns && o.metadata?.name === name),
  };
};
const role = (kind: "Role" | "ClusterRole", name: string, rules: Partial<PolicyRule>[], ns?: string) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  metadata: { name, ...(ns ? { namespace: ns } : {}) },
  rules,
});
const binding = (
  kind: "RoleBinding" | "ClusterRoleBinding",
  name: string,
  roleRef: { kind: string; name: string },
  subjects: unknown[],
  ns?: string,
) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  metadata: { name, ...(ns ? { namespace: ns } : {}) },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
  subjects,
});
const sa = (name: string, namespace?: string) => ({
  kind: "ServiceAccount",
  name,
  ...(namespace ? { namespace } : {}),
});

describe("rule matching (kube's RuleAllows)", () => {
  const cases: Array<[string, Partial<PolicyRule>, Attributes, boolean]> = [
    [
      "exact verb, group, resource",
      { verbs: ["get"], apiGroups: [""], resources: ["configmaps"] },
      request(),
      true,
    ],
    ["another verb", { verbs: ["list"], apiGroups: [""], resources: ["configmaps"] }, request(), false],
    [
      "verb *",
      { verbs: ["*"], apiGroups: [""], resources: ["configmaps"] },
      request({ verb: "deletecollection" }),
      true,
    ],
    ["another group", { verbs: ["get"], apiGroups: ["apps"], resources: ["configmaps"] }, request(), false],
    ["group *", { verbs: ["get"], apiGroups: ["*"], resources: ["configmaps"] }, request(), true],
    ["no apiGroups matches no resource", { verbs: ["get"], resources: ["configmaps"] }, request(), false],
    [
      "resource *",
      { verbs: ["get"], apiGroups: [""], resources: ["*"] },
      request({ resource: "secrets" }),
      true,
    ],
    [
      "resource * covers subresources",
      { verbs: ["update"], apiGroups: ["cluster.x-k8s.io"], resources: ["*"] },
      request({
        verb: "update",
        apiGroup: "cluster.x-k8s.io",
        resource: "machinesets",
        subresource: "finalizers",
      }),
      true,
    ],
    [
      "a resource does not cover its subresources",
      { verbs: ["update"], apiGroups: ["cluster.x-k8s.io"], resources: ["machinesets"] },
      request({
        verb: "update",
        apiGroup: "cluster.x-k8s.io",
        resource: "machinesets",
        subresource: "finalizers",
      }),
      false,
    ],
    [
      "res/sub matches exactly that subresource",
      { verbs: ["update"], apiGroups: ["cluster.x-k8s.io"], resources: ["machinesets/finalizers"] },
      request({
        verb: "update",
        apiGroup: "cluster.x-k8s.io",
        resource: "machinesets",
        subresource: "finalizers",
      }),
      true,
    ],
    [
      "res/sub does not match the resource itself",
      { verbs: ["update"], apiGroups: ["cluster.x-k8s.io"], resources: ["machinesets/finalizers"] },
      request({ verb: "update", apiGroup: "cluster.x-k8s.io", resource: "machinesets" }),
      false,
    ],
    [
      "*/sub matches that subresource of any resource",
      { verbs: ["update"], apiGroups: ["*"], resources: ["*/status"] },
      request({
        verb: "update",
        apiGroup: "machine.openshift.io",
        resource: "machines",
        subresource: "status",
      }),
      true,
    ],
    [
      "*/sub matches no other subresource",
      { verbs: ["update"], apiGroups: ["*"], resources: ["*/status"] },
      request({ verb: "update", resource: "machines", subresource: "scale" }),
      false,
    ],
    [
      "*/sub does not match the resource itself",
      { verbs: ["get"], apiGroups: ["*"], resources: ["*/status"] },
      request(),
      false,
    ],
    [
      "resourceNames: a named request",
      {
        verbs: ["get"],
        apiGroups: [""],
        resources: ["namespaces"],
        resourceNames: ["openshift-cluster-api"],
      },
      request({ resource: "namespaces", name: "openshift-cluster-api", namespace: "openshift-cluster-api" }),
      true,
    ],
    [
      "resourceNames: another name",
      {
        verbs: ["get"],
        apiGroups: [""],
        resources: ["namespaces"],
        resourceNames: ["openshift-cluster-api"],
      },
      request({ resource: "namespaces", name: "kube-system", namespace: "kube-system" }),
      false,
    ],
    [
      "resourceNames: an unnamed request (list, create) is not covered",
      {
        verbs: ["list"],
        apiGroups: [""],
        resources: ["namespaces"],
        resourceNames: ["openshift-cluster-api"],
      },
      request({ verb: "list", resource: "namespaces", namespace: "" }),
      false,
    ],
    [
      "a resource rule never matches a path",
      { verbs: ["get"], apiGroups: ["*"], resources: ["*"] },
      path("/metrics"),
      false,
    ],
    ["nonResourceURLs: exact", { verbs: ["get"], nonResourceURLs: ["/metrics"] }, path("/metrics"), true],
    [
      "nonResourceURLs: another verb",
      { verbs: ["get"], nonResourceURLs: ["/metrics"] },
      path("/metrics", "post"),
      false,
    ],
    [
      "nonResourceURLs: prefix*",
      { verbs: ["get"], nonResourceURLs: ["/apis/*"] },
      path("/apis/apps/v1"),
      true,
    ],
    [
      "nonResourceURLs: prefix* is a prefix, not a segment",
      { verbs: ["get"], nonResourceURLs: ["/api*"] },
      path("/apis"),
      true,
    ],
    [
      "nonResourceURLs: /apis/* does not cover /apis",
      { verbs: ["get"], nonResourceURLs: ["/apis/*"] },
      path("/apis"),
      false,
    ],
    ["nonResourceURLs: *", { verbs: ["get"], nonResourceURLs: ["*"] }, path("/anything"), true],
    ["a path rule never matches a resource", { verbs: ["*"], nonResourceURLs: ["*"] }, request(), false],
  ];
  it.each(cases)("%s", (_what, r, attributes, allowed) => {
    expect(ruleAllows(attributes, rule(r))).toBe(allowed);
  });

  it("a stored rule of the wrong shape grants nothing and does not throw", () => {
    for (const junk of [
      null,
      "x",
      1,
      { verbs: "get", apiGroups: "", resources: "configmaps" },
      { verbs: [1] },
    ])
      expect(ruleAllows(request(), policyRule(junk))).toBe(false);
  });
});

describe("subjects (kube's appliesTo)", () => {
  const cases: Array<[string, unknown, string, boolean]> = [
    ["User by name", { kind: "User", name: PRODUCT.username }, "", true],
    ["another User", { kind: "User", name: "bob" }, "", false],
    ["Group the user is in", { kind: "Group", name: "system:serviceaccounts" }, "", true],
    ["Group the user is not in", { kind: "Group", name: "system:masters" }, "", false],
    ["ServiceAccount with its namespace", sa("machine-api-migration", "openshift-cluster-api"), "", true],
    ["ServiceAccount of another namespace", sa("machine-api-migration", "openshift-machine-api"), "", false],
    [
      "ServiceAccount without namespace, in a RoleBinding of its namespace",
      sa("machine-api-migration"),
      "openshift-cluster-api",
      true,
    ],
    [
      "ServiceAccount without namespace, in a RoleBinding elsewhere",
      sa("machine-api-migration"),
      "default",
      false,
    ],
    ["ServiceAccount without namespace, in a ClusterRoleBinding", sa("machine-api-migration"), "", false],
    ["an unknown kind", { kind: "Robot", name: PRODUCT.username }, "", false],
    ["not a subject", "machine-api-migration", "", false],
  ];
  it.each(cases)("%s", (_what, subject, bindingNamespace, applies) => {
    expect(subjectApplies(PRODUCT, subject, bindingNamespace)).toBe(applies);
  });
});

describe("the rule walk (kube's RBAC authorizer)", () => {
  const objects: KubeObject[] = [
    role("ClusterRole", "reader", [{ verbs: ["get", "list"], apiGroups: [""], resources: ["configmaps"] }]),
    role("Role", "writer", [{ verbs: ["create"], apiGroups: [""], resources: ["configmaps"] }], "team"),
    binding("ClusterRoleBinding", "devs-read", { kind: "ClusterRole", name: "reader" }, [
      { kind: "Group", name: "devs" },
    ]),
    binding(
      "RoleBinding",
      "alice-writes",
      { kind: "Role", name: "writer" },
      [{ kind: "User", name: "alice" }],
      "team",
    ),
    binding(
      "RoleBinding",
      "bob-reads-here",
      { kind: "ClusterRole", name: "reader" },
      [{ kind: "User", name: "bob" }],
      "team",
    ),
    binding(
      "RoleBinding",
      "carol-broken",
      { kind: "ClusterRole", name: "gone" },
      [{ kind: "User", name: "carol" }],
      "team",
    ),
    binding(
      "RoleBinding",
      "carol-broken-role",
      { kind: "Role", name: "gone" },
      [{ kind: "User", name: "carol" }],
      "team",
    ),
    binding(
      "RoleBinding",
      "carol-broken-again",
      { kind: "Role", name: "gone" },
      [{ kind: "User", name: "carol" }],
      "team",
    ),
    binding(
      "RoleBinding",
      "dave-odd",
      { kind: "Widget", name: "x" },
      [{ kind: "User", name: "dave" }],
      "team",
    ),
  ];
  const view = policy(objects);
  const bob: UserInfo = { username: "bob", groups: ["system:authenticated"] };
  const carol: UserInfo = { username: "carol", groups: ["system:authenticated"] };
  const dave: UserInfo = { username: "dave", groups: ["system:authenticated"] };

  const cases: Array<[string, ResourceAttributes, boolean, string]> = [
    ["a ClusterRoleBinding grants everywhere", request({ namespace: "anywhere" }, ALICE), true, ""],
    ["…and at the cluster scope", request({ verb: "list", namespace: "" }, ALICE), true, ""],
    [
      "a RoleBinding grants in its namespace",
      request({ verb: "create", namespace: "team" }, ALICE),
      true,
      "",
    ],
    ["…and nowhere else", request({ verb: "create", namespace: "other" }, ALICE), false, ""],
    ["…nor at the cluster scope", request({ verb: "create", namespace: "" }, ALICE), false, ""],
    [
      "a RoleBinding to a ClusterRole grants its rules in the namespace",
      request({ namespace: "team" }, bob),
      true,
      "",
    ],
    ["…not outside it", request({ namespace: "other" }, bob), false, ""],
    [
      "a binding to a missing role: refused, naming each missing role once (kube's aggregate)",
      request({ namespace: "team" }, carol),
      false,
      'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "gone" not found]',
    ],
    [
      "a roleRef of an unknown kind",
      request({ namespace: "team" }, dave),
      false,
      'RBAC: unsupported role reference kind: "Widget"',
    ],
    [
      "no binding at all: refused without a reason",
      request({ namespace: "team" }, { username: "eve", groups: [] }),
      false,
      "",
    ],
  ];
  it.each(cases)("%s", (_what, attributes, allowed, reason) => {
    const d = rbacAuthorize(view, attributes);
    expect(d.allowed).toBe(allowed);
    if (!allowed) expect(d.reason).toBe(reason);
  });

  it("the server's caching authorizer decides every case as the walk does, reason included, asked again", () => {
    const cached = cachingAuthorizer(view);
    for (const [, attributes] of cases) {
      const walked = authorize(view, attributes);
      expect(cached.authorize(attributes)).toEqual(walked);
      expect(cached.authorize(attributes)).toEqual(walked);
    }
    // The allowed reason names the binding that allowed, as kube's does.
    expect(cached.authorize(request({ namespace: "team" }, bob))).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "bob-reads-here/team" of ClusterRole "reader" to User "bob"',
    });
  });

  it("the caching authorizer keeps grants per user, groups and namespace, until the policy is invalidated", () => {
    const objects: KubeObject[] = [
      role("ClusterRole", "reader", [{ verbs: ["get"], apiGroups: [""], resources: ["configmaps"] }]),
      binding(
        "RoleBinding",
        "devs",
        { kind: "ClusterRole", name: "reader" },
        [{ kind: "Group", name: "devs" }],
        "team",
      ),
    ];
    const cached = cachingAuthorizer(policy(objects));
    const get = (user: UserInfo, namespace = "team") =>
      cached.authorize(request({ namespace }, user)).allowed;
    expect(get(ALICE)).toBe(true);
    expect(get(ALICE, "other")).toBe(false);
    expect(get({ username: "alice", groups: ["system:authenticated"] })).toBe(false);
    // The stored policy changes: the grants kept stand until the server says it changed.
    objects.splice(1, 1);
    expect(get(ALICE)).toBe(true);
    cached.invalidate();
    expect(get(ALICE)).toBe(false);
  });

  it("one missing role among several is reported alone, without brackets", () => {
    const d = rbacAuthorize(
      policy([
        binding(
          "RoleBinding",
          "b",
          { kind: "ClusterRole", name: "gone" },
          [{ kind: "User", name: "x" }],
          "n",
        ),
      ]),
      request({ namespace: "n" }, { username: "x", groups: [] }),
    );
    expect(d).toEqual({
      allowed: false,
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found',
    });
  });

  it("system:masters is allowed everything without any binding; RBAC alone does not know it", () => {
    const masters: UserInfo = { username: "system:admin", groups: ["system:masters"] };
    expect(authorize(policy([]), request({ verb: "delete", resource: "secrets" }, masters)).allowed).toBe(
      true,
    );
    expect(authorize(policy([]), path("/anything", "post", masters)).allowed).toBe(true);
    expect(rbacAuthorize(policy([]), request({}, masters)).allowed).toBe(false);
  });
});

describe("the bootstrap policy kube-apiserver starts with", () => {
  const { clusterRoles, clusterRoleBindings } = bootstrapPolicy();
  const view = policy([...clusterRoles, ...clusterRoleBindings]);
  const cases: Array<[string, Attributes, boolean]> = [
    ["an authenticated user discovers /api", path("/api", "get", ALICE), true],
    ["…/apis/<group>/<version>", path("/apis/machine.openshift.io/v1beta1", "get", ALICE), true],
    ["…/openapi/v3/…", path("/openapi/v3/apis/apps/v1", "get", ALICE), true],
    ["…/version and /healthz", path("/version", "get", ALICE), true],
    ["…but not /metrics", path("/metrics", "get", ALICE), false],
    [
      "…and may review its own access",
      request(
        {
          verb: "create",
          apiGroup: "authorization.k8s.io",
          resource: "selfsubjectaccessreviews",
          namespace: "",
        },
        ALICE,
      ),
      true,
    ],
    ["…but read nothing", request({ verb: "list", resource: "secrets", namespace: "" }, ALICE), false],
    [
      "cluster-admin binds system:masters",
      request(
        { verb: "delete", resource: "nodes", namespace: "" },
        { username: "root", groups: ["system:masters"] },
      ),
      true,
    ],
  ];
  it.each(cases)("%s", (_what, attributes, allowed) => {
    expect(rbacAuthorize(view, attributes).allowed).toBe(allowed);
  });

  it("cluster-admin's rules are kube's, and the objects carry kube's bootstrapping label", () => {
    const admin = clusterRoles.find((r) => r.metadata?.name === "cluster-admin")!;
    expect(admin.rules).toEqual([
      { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
      { verbs: ["*"], nonResourceURLs: ["*"] },
    ]);
    for (const o of [...clusterRoles, ...clusterRoleBindings])
      expect(o.metadata?.labels).toEqual({ "kubernetes.io/bootstrapping": "rbac-defaults" });
  });
});

describe("the refusal in kube's words (as kube-apiserver 1.33 answered)", () => {
  const capa: UserInfo = {
    username: "system:serviceaccount:openshift-cluster-api:capa-controller-manager",
    groups: ["system:authenticated"],
  };
  const u = JSON.stringify(capa.username);
  const cases: Array<[string, Attributes, string, string, Record<string, unknown>]> = [
    [
      "a namespaced list",
      request({ verb: "list", resource: "secrets", namespace: "kube-system" }, capa),
      "",
      `secrets is forbidden: User ${u} cannot list resource "secrets" in API group "" in the namespace "kube-system"`,
      { kind: "secrets" },
    ],
    [
      "a list across namespaces",
      request({ verb: "list", resource: "secrets", namespace: "" }, capa),
      "",
      `secrets is forbidden: User ${u} cannot list resource "secrets" in API group "" at the cluster scope`,
      { kind: "secrets" },
    ],
    [
      "a named get of a cluster-scoped kind",
      request({ resource: "nodes", name: "foo", namespace: "" }, capa),
      "",
      `nodes "foo" is forbidden: User ${u} cannot get resource "nodes" in API group "" at the cluster scope`,
      { name: "foo", kind: "nodes" },
    ],
    [
      "a subresource of a named group",
      request(
        {
          verb: "update",
          apiGroup: "machine.openshift.io",
          resource: "machines",
          subresource: "status",
          namespace: "openshift-machine-api",
          name: "m",
        },
        capa,
      ),
      "",
      `machines.machine.openshift.io "m" is forbidden: User ${u} cannot update resource "machines/status" in API group "machine.openshift.io" in the namespace "openshift-machine-api"`,
      { name: "m", group: "machine.openshift.io", kind: "machines" },
    ],
    [
      "with the authorizer's reason",
      request({ verb: "list", resource: "secrets", namespace: "openshift-cluster-api" }, capa),
      'RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found',
      `secrets is forbidden: User ${u} cannot list resource "secrets" in API group "" in the namespace "openshift-cluster-api": RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found`,
      { kind: "secrets" },
    ],
    ["a path", path("/metrics", "get", capa), "", `forbidden: User ${u} cannot get path "/metrics"`, {}],
  ];
  it.each(cases)("%s", (_what, attributes, reason, message, details) => {
    const e = refusal(attributes, reason);
    expect(e.toStatus()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message,
      reason: "Forbidden",
      details,
      code: 403,
    });
  });

  it("forbiddenMessage alone is the sentence after `is forbidden:`", () => {
    expect(forbiddenMessage(request({ verb: "watch", namespace: "n" }, ALICE))).toBe(
      'User "alice" cannot watch resource "configmaps" in API group "" in the namespace "n"',
    );
  });
});
