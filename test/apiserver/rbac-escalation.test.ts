/**
 * RBAC's escalation prevention in the local API server (SPEC §8 "Authorization like the real server's";
 * SPEC §6's RBAC ceiling rests on it): who may write a role or a binding, as kube-apiserver 1.33's
 * policy-based storage decides. The refusals' words are pinned against the real control plane by the
 * conformance probes "RBAC escalation: …"; here the decision table. Pure: policies are plain arrays.
 */
import { describe, expect, it } from "vitest";
import { authorize, type PolicyView } from "../../src/apiserver/rbac.js";
import { checkRbacEscalation, type RbacWrite } from "../../src/apiserver/rbac-escalation.js";
import type { UserInfo } from "../../src/apiserver/types.js";
import type { KubeObject } from "../../src/kube/object.js";

const G = "rbac.authorization.k8s.io";
const BOB: UserInfo = { username: "bob", groups: ["devs", "system:authenticated"] };
const ROOT: UserInfo = { username: "root", groups: ["system:masters"] };

const clusterRole = (name: string, rules: unknown[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: `${G}/v1`,
  kind: "ClusterRole",
  metadata: { name },
  rules,
  ...extra,
});
const bindBob = (name: string, role: string): KubeObject => ({
  apiVersion: `${G}/v1`,
  kind: "ClusterRoleBinding",
  metadata: { name },
  roleRef: { apiGroup: G, kind: "ClusterRole", name: role },
  subjects: [{ kind: "User", name: "bob", apiGroup: G }],
});

const READ_PODS = { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] };
const WRITE_ROLES = {
  apiGroups: [G],
  resources: ["clusterroles", "clusterrolebindings"],
  verbs: ["get", "create", "update", "patch"],
};

const policyOf = (objects: KubeObject[]): PolicyView => {
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  return {
    clusterRoleBindings: () => of("ClusterRoleBinding"),
    roleBindings: () => [],
    clusterRole: (name) => of("ClusterRole").find((o) => o.metadata?.name === name),
    role: () => undefined,
  };
};

/** Bob writes ClusterRoles and holds READ_PODS, plus whatever `extra` rules grant him. */
const decide = (
  write: Partial<RbacWrite> & { object: KubeObject },
  extra: unknown[] = [],
  more: KubeObject[] = [],
) => {
  const policy = policyOf([
    clusterRole("writer", [WRITE_ROLES, READ_PODS, ...extra]),
    bindBob("bob-writer", "writer"),
    ...more,
  ]);
  return checkRbacEscalation(
    { authorize: (a) => authorize(policy, a), policy },
    { user: BOB, group: G, resource: "clusterroles", namespace: "", urlName: "", old: undefined, ...write },
  );
};

describe("SPEC §8: a role is written only with rules its writer holds", () => {
  it.each([
    ["rules the writer holds", [READ_PODS], [], undefined],
    ["a subset of a held rule", [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }], [], undefined],
    ["a verb the writer lacks", [{ apiGroups: [""], resources: ["pods"], verbs: ["delete"] }], [], 403],
    [
      "a subresource the writer lacks",
      [{ apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] }],
      [],
      403,
    ],
    [
      "a subresource held through `*/subresource`",
      [{ apiGroups: [""], resources: ["pods/log"], verbs: ["get"] }],
      [{ apiGroups: [""], resources: ["*/log"], verbs: ["get"] }],
      undefined,
    ],
    [
      "a named resource held by name",
      [{ apiGroups: [""], resources: ["secrets"], resourceNames: ["a"], verbs: ["get"] }],
      [{ apiGroups: [""], resources: ["secrets"], resourceNames: ["a", "b"], verbs: ["get"] }],
      undefined,
    ],
    [
      "every name when only some are held",
      [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
      [{ apiGroups: [""], resources: ["secrets"], resourceNames: ["a"], verbs: ["get"] }],
      403,
    ],
    [
      "a URL under a held prefix",
      [{ nonResourceURLs: ["/debug/pprof"], verbs: ["get"] }],
      [{ nonResourceURLs: ["/debug/*"], verbs: ["get"] }],
      undefined,
    ],
    [
      "anything, to a writer who may `escalate`",
      [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
      [{ apiGroups: [G], resources: ["clusterroles"], verbs: ["escalate"] }],
      undefined,
    ],
  ])("%s", (_, rules, extra, expected) => {
    expect(decide({ object: clusterRole("new", rules) }, extra)?.code).toBe(expected);
  });

  it("members of system:masters skip the check", () => {
    const object = clusterRole("new", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]);
    expect(decide({ object, user: ROOT })).toBeUndefined();
  });

  it("an update that changes only what the collector writes is not checked", () => {
    const old = clusterRole("old", [{ apiGroups: [""], resources: ["secrets"], verbs: ["*"] }]);
    const object = { ...old, metadata: { ...old.metadata, finalizers: ["x/y"], ownerReferences: [] } };
    expect(decide({ object, old })).toBeUndefined();
    const labelled = { ...old, metadata: { ...old.metadata, labels: { a: "b" } } };
    expect(decide({ object: labelled, old })?.code).toBe(403);
  });

  it("an aggregationRule, set or kept, needs every permission", () => {
    const aggregating = clusterRole("agg", [], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: {} }] },
    });
    expect(decide({ object: aggregating })?.message).toContain("must have cluster-admin privileges");
    const dropped = clusterRole("agg", []);
    expect(decide({ object: dropped, old: aggregating })?.message).toContain("must have cluster-admin");
    expect(
      decide({ object: clusterRole("agg", [], { aggregationRule: { clusterRoleSelectors: [] } }) }),
    ).toBeUndefined();
  });

  it("the refusal lists the missing rules compacted per resource and sorted, as kube prints them", () => {
    const rules = [
      { apiGroups: ["", "apps"], resources: ["secrets"], verbs: ["list", "delete"] },
      { nonResourceURLs: ["/metrics"], verbs: ["get"] },
    ];
    expect(decide({ object: clusterRole("new", rules) })?.message).toBe(
      'clusterroles.rbac.authorization.k8s.io "new" is forbidden: user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["list" "delete"]}\n' +
        '{APIGroups:["apps"], Resources:["secrets"], Verbs:["list" "delete"]}\n' +
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    );
  });

  it("a binding of the writer to a missing role is a resolution error in the refusal", () => {
    const object = clusterRole("new", [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] }]);
    expect(decide({ object }, [], [bindBob("dangling", "gone")])?.message).toMatch(
      /; resolution errors: \[clusterroles\.rbac\.authorization\.k8s\.io "gone" not found\]$/,
    );
  });
});

describe("SPEC §8: a binding binds only a role its writer holds, or may `bind`", () => {
  const binding = (role: string): KubeObject => ({
    ...bindBob("b", role),
    subjects: [{ kind: "User", name: "eve" }],
  });
  const bindingWrite = (role: string) => ({ resource: "clusterrolebindings", object: binding(role) });
  const admin = clusterRole("admin-ish", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]);

  it.each([
    ["a role whose rules the writer holds", "pods-reader", [], undefined],
    ["a role granting more than the writer holds", "admin-ish", [], 403],
    [
      "any role, to a writer who may `bind` it",
      "admin-ish",
      [{ apiGroups: [G], resources: ["clusterroles"], resourceNames: ["admin-ish"], verbs: ["bind"] }],
      undefined,
    ],
    ["a role that does not exist (the registry's 404)", "gone", [], 404],
  ])("%s", (_, role, extra, expected) => {
    const more = [admin, clusterRole("pods-reader", [READ_PODS])];
    expect(decide(bindingWrite(role), extra, more)?.code).toBe(expected);
  });
});
