/**
 * The access reviews and impersonation of the local API server (SPEC §8 "Authorization like the real
 * server's"), as decision tables. The answers' exact shapes are pinned against kube-apiserver 1.33 by the
 * conformance probes "access review: …", "rules review: …", "token review: …" and "impersonation: …";
 * `kubectl auth can-i|whoami` and `--as` in local mode are test/e2e/kubectl-protobuf.test.ts. Pure.
 */
import { describe, expect, it } from "vitest";
import { answerReview, type ReviewDeps } from "../../src/apiserver/access-reviews.js";
import { ImpersonationHeadersError, impersonatedUser } from "../../src/apiserver/impersonation.js";
import { authorize, type PolicyView } from "../../src/apiserver/rbac.js";
import { ApiError } from "../../src/apiserver/status.js";
import type { UserInfo } from "../../src/apiserver/types.js";
import type { KubeObject } from "../../src/kube/object.js";

const G = "rbac.authorization.k8s.io";
const ADMIN: UserInfo = { username: "admin", groups: ["admins", "system:authenticated"] };
const BOB: UserInfo = { username: "bob", groups: ["system:authenticated"] };

const objects: KubeObject[] = [
  {
    kind: "ClusterRole",
    metadata: { name: "all" },
    rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
  },
  {
    kind: "ClusterRole",
    metadata: { name: "pods" },
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
  },
  {
    kind: "ClusterRoleBinding",
    metadata: { name: "admins" },
    roleRef: { apiGroup: G, kind: "ClusterRole", name: "all" },
    subjects: [{ kind: "Group", name: "admins" }],
  },
  {
    kind: "ClusterRoleBinding",
    metadata: { name: "bob-pods" },
    roleRef: { apiGroup: G, kind: "ClusterRole", name: "pods" },
    subjects: [{ kind: "User", name: "bob" }],
  },
];
const policy: PolicyView = {
  clusterRoleBindings: () => objects.filter((o) => o.kind === "ClusterRoleBinding"),
  roleBindings: () => [],
  clusterRole: (name) => objects.find((o) => o.kind === "ClusterRole" && o.metadata?.name === name),
  role: () => undefined,
};
const deps: ReviewDeps = {
  authorize: (a) => authorize(policy, a),
  policy,
  authenticate: (token) => (token === "bob-token" ? BOB : undefined),
  now: () => "2026-12-02T00:00:00Z",
  apiAudiences: ["https://kubernetes.default.svc"],
};

const ssar = (spec: Record<string, unknown>, user = BOB) =>
  answerReview(deps, "SelfSubjectAccessReview", { spec }, user);

describe("SPEC §8: an access review answers what the same request would get", () => {
  it.each([
    ["a verb the caller holds", { verb: "get", resource: "pods" }, true],
    ["a verb it does not", { verb: "delete", resource: "pods" }, false],
    ["another group's resource", { verb: "get", group: "apps", resource: "pods" }, false],
  ])("%s", (_, attributes, allowed) => {
    expect(ssar({ resourceAttributes: attributes }).status).toMatchObject({ allowed });
  });

  it("an allowed answer names the binding, as kube's RBAC authorizer does", () => {
    expect(ssar({ resourceAttributes: { verb: "get", resource: "pods" } }).status).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "bob-pods" of ClusterRole "pods" to User "bob"',
    });
  });

  it.each([
    [
      "both kinds of attributes",
      { resourceAttributes: { verb: "get" }, nonResourceAttributes: { path: "/" } },
    ],
    ["neither", {}],
    ["a label selector without a selector", { resourceAttributes: { verb: "list", labelSelector: {} } }],
  ])("%s is invalid (422)", (_, spec) => {
    expect(() => ssar(spec)).toThrow(expect.objectContaining({ code: 422 }));
  });

  it("a subject access review asks about the user it names, not its caller", () => {
    const asked = answerReview(
      deps,
      "SubjectAccessReview",
      { spec: { user: "bob", resourceAttributes: { verb: "delete", resource: "pods" } } },
      ADMIN,
    );
    expect(asked.status).toEqual({ allowed: false });
    expect(() =>
      answerReview(deps, "SubjectAccessReview", { spec: { resourceAttributes: {} } }, ADMIN),
    ).toThrow(ApiError);
  });

  it("a rules review lists what the caller holds; a token review names the token's user", () => {
    const rules = answerReview(deps, "SelfSubjectRulesReview", { spec: { namespace: "ns" } }, BOB);
    expect(rules.status).toMatchObject({
      resourceRules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }],
      incomplete: false,
    });
    const known = answerReview(deps, "TokenReview", { spec: { token: "bob-token" } }, ADMIN);
    expect(known.status).toMatchObject({ authenticated: true, user: { username: "bob" } });
    const unknown = answerReview(deps, "TokenReview", { spec: { token: "x" } }, ADMIN);
    expect(unknown.status).toMatchObject({ user: {} });
    expect((unknown.status as Record<string, unknown>).authenticated).toBeUndefined();
  });
});

describe("SPEC §8: impersonation is allowed only to whom RBAC allows it", () => {
  const as = (headers: Record<string, string | string[]>, caller = ADMIN) =>
    impersonatedUser(headers, caller, (a) => authorize(policy, a));

  it("no headers: the caller", () => {
    expect(as({})).toBe(ADMIN);
  });
  it("a user with groups and a uid: exactly those, plus system:authenticated", () => {
    expect(
      as({ "impersonate-user": "alice", "impersonate-group": ["a", "b"], "impersonate-uid": "1" }),
    ).toEqual({
      username: "alice",
      groups: ["a", "b", "system:authenticated"],
      uid: "1",
    });
  });
  it("a ServiceAccount: its groups, checked as `impersonate serviceaccounts` in its namespace", () => {
    expect(as({ "impersonate-user": "system:serviceaccount:ns:sa" }).groups).toEqual([
      "system:serviceaccounts",
      "system:serviceaccounts:ns",
      "system:authenticated",
    ]);
    expect(() => as({ "impersonate-user": "system:serviceaccount:ns:sa" }, BOB)).toThrow(
      'serviceaccounts "sa" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns"',
    );
  });
  it("groups without a user are refused before any check", () => {
    expect(() => as({ "impersonate-group": "a" })).toThrow(ImpersonationHeadersError);
  });
});
