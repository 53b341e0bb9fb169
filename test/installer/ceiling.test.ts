/**
 * The RBAC ceiling (SPEC §6): coverage decided as Kubernetes' own escalation check decides it (wildcards,
 * `*\/subresource`, resourceNames, non-resource URL prefixes), the ceiling granting none of what SPEC §6
 * names as never, and the ceiling as the manifests ship it.
 */
import { describe, expect, it } from "vitest";
import { PROVIDER_API_GROUPS } from "../../src/installer/bounds.js";
import {
  CEILING_NAME,
  CLUSTER_API_GROUPS,
  CLUSTER_CEILING,
  ceilingRoles,
  MAX_RULE_PIECES,
  NAMESPACE_CEILING,
  type PolicyRule,
  policyRulesOf,
  uncovered,
} from "../../src/installer/ceiling.js";

const rule = (r: Partial<PolicyRule>): PolicyRule => ({
  apiGroups: [],
  resources: [],
  verbs: [],
  resourceNames: [],
  nonResourceURLs: [],
  ...r,
});

describe("ceiling: coverage as RBAC's escalation check decides it", () => {
  const owner = [
    rule({ apiGroups: ["apps"], resources: ["deployments", "*/scale"], verbs: ["get", "update"] }),
    rule({ apiGroups: [""], resources: ["configmaps"], verbs: ["get"], resourceNames: ["a", "b"] }),
    rule({ verbs: ["get"], nonResourceURLs: ["/healthz/*", "/metrics"] }),
  ];
  it.each([
    [
      "the same verb and resource",
      rule({ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] }),
      [],
    ],
    [
      "a subresource through */scale",
      rule({ apiGroups: ["apps"], resources: ["deployments/scale"], verbs: ["update"] }),
      [],
    ],
    [
      "a verb the owner lacks",
      rule({ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "delete"] }),
      ["delete deployments.apps"],
    ],
    [
      "a subresource not granted",
      rule({ apiGroups: ["apps"], resources: ["deployments/status"], verbs: ["get"] }),
      ["get deployments/status.apps"],
    ],
    [
      "names the owner lists",
      rule({ apiGroups: [""], resources: ["configmaps"], verbs: ["get"], resourceNames: ["a"] }),
      [],
    ],
    [
      "all names when the owner lists some",
      rule({ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }),
      ["get configmaps"],
    ],
    ["a URL under a prefix", rule({ verbs: ["get"], nonResourceURLs: ["/healthz/ready"] }), []],
    ["a URL outside", rule({ verbs: ["get"], nonResourceURLs: ["/debug/pprof"] }), ["get /debug/pprof"]],
    [
      "a wildcard the owner does not have literally",
      rule({ apiGroups: ["apps"], resources: ["deployments"], verbs: ["*"] }),
      ["* deployments.apps"],
    ],
    ["a rule granting nothing", rule({ apiGroups: ["apps"], verbs: ["get"] }), []],
  ])("%s", (_, servant, missing) => {
    expect(uncovered(owner, [servant])).toEqual(missing);
  });

  it("names at most eight pieces, then counts", () => {
    const verbs = Array.from({ length: 10 }, (_, i) => `v${i}`);
    expect(uncovered(owner, [rule({ apiGroups: ["x"], resources: ["y"], verbs })])).toEqual([
      ...verbs.slice(0, 8).map((v) => `${v} y.x`),
      "and 2 more",
    ]);
  });

  it("a rule that breaks down into too many pieces is refused unchecked", () => {
    const many = Array.from({ length: 400 }, (_, i) => `r${i}`);
    expect(uncovered(CLUSTER_CEILING, [rule({ apiGroups: many, resources: many, verbs: ["get"] })])).toEqual([
      `more than ${MAX_RULE_PIECES} verb-resource pairs, too many to check`,
    ]);
  });

  it("rules of the wrong shape are an error, not skipped", () => {
    expect(policyRulesOf([{ apiGroups: [""], resources: "secrets", verbs: ["get"] }])).toEqual({
      ok: false,
      message: "rules[0].resources is not a list of strings",
    });
    expect(policyRulesOf({})).toEqual({ ok: false, message: "rules is not a list" });
  });
});

describe("ceiling: SPEC §6 never grants these", () => {
  it.each([
    [
      "escalate",
      rule({
        apiGroups: ["rbac.authorization.k8s.io"],
        resources: ["clusterroles", "roles"],
        verbs: ["escalate"],
      }),
    ],
    [
      "bind",
      rule({
        apiGroups: ["rbac.authorization.k8s.io"],
        resources: ["clusterroles", "roles"],
        verbs: ["bind"],
      }),
    ],
    [
      "impersonate",
      rule({
        apiGroups: ["", "authentication.k8s.io"],
        resources: ["users", "groups", "serviceaccounts", "uids", "userextras/scopes"],
        verbs: ["impersonate"],
      }),
    ],
    [
      "serviceaccounts/token",
      rule({ apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] }),
    ],
    ["nodes/proxy", rule({ apiGroups: [""], resources: ["nodes/proxy"], verbs: ["get", "create"] })],
    [
      "pods/exec",
      rule({ apiGroups: [""], resources: ["pods/exec", "pods/attach"], verbs: ["get", "create"] }),
    ],
    [
      "cluster-wide Secrets",
      rule({ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] }),
    ],
    [
      "webhook-configuration writes",
      rule({
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
        verbs: ["create", "update", "patch", "delete"],
      }),
    ],
    [
      "RBAC writes",
      rule({
        apiGroups: ["rbac.authorization.k8s.io"],
        resources: ["*"],
        verbs: ["create", "update", "patch"],
      }),
    ],
    ["Pods", rule({ apiGroups: [""], resources: ["pods"], verbs: ["create"] })],
  ])("%s: no piece of it is covered", (what, forbidden) => {
    const pieces = forbidden.apiGroups.length * forbidden.resources.length * forbidden.verbs.length;
    // A Role may read and write the Secrets of the CAPI namespace; only cluster-wide Secrets are never.
    const ceilings =
      what === "cluster-wide Secrets"
        ? [CLUSTER_CEILING]
        : [CLUSTER_CEILING, [...CLUSTER_CEILING, ...NAMESPACE_CEILING]];
    for (const ceiling of ceilings)
      expect(uncovered(ceiling, [forbidden]).length).toBe(Math.min(pieces, 8) + (pieces > 8 ? 1 : 0));
  });

  it("the ceiling itself uses no wildcard verbs or groups", () => {
    for (const r of [...CLUSTER_CEILING, ...NAMESPACE_CEILING]) {
      expect(r.verbs).not.toContain("*");
      expect(r.apiGroups).not.toContain("*");
    }
  });
});

describe("ceiling: as the manifests ship it", () => {
  it("a ClusterRole and a Role in the CAPI namespace, both named machine-api-migration-installer-ceiling", () => {
    const [clusterRole, role] = ceilingRoles("openshift-cluster-api");
    expect(clusterRole).toMatchObject({ kind: "ClusterRole", metadata: { name: CEILING_NAME } });
    expect(role).toMatchObject({
      kind: "Role",
      metadata: { name: CEILING_NAME, namespace: "openshift-cluster-api" },
    });
    const read = (o: unknown) => {
      const parsed = policyRulesOf((o as { rules: unknown }).rules);
      if (!parsed.ok) throw new Error(parsed.message);
      return parsed.rules;
    };
    expect(read(clusterRole)).toEqual(CLUSTER_CEILING);
    expect(read(role)).toEqual(NAMESPACE_CEILING);
  });
});

describe("ceiling: the groups providers define are the groups it grants", () => {
  it("every group a provider type may define CRDs in is one of Cluster API's, and each of those belongs to one type", () => {
    // Two lists (decision 114): the bounds' split by provider type, the ceiling's union. They must not drift.
    const byType = Object.values(PROVIDER_API_GROUPS).flat();
    expect([...byType].sort()).toEqual([...CLUSTER_API_GROUPS].sort());
    expect(new Set(byType).size).toBe(byType.length);
  });
});
