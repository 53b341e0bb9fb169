/**
 * The RBAC ceiling of SPEC §6: every rule a provider's ClusterRoles and Roles grant must be covered by the
 * ceiling the product ships (`machine-api-migration-installer-ceiling`) — what Cluster API and its providers
 * need, and nothing like `escalate`, `bind`, `impersonate`, `serviceaccounts/token`, `nodes/proxy`,
 * `pods/exec`, cluster-wide Secrets or webhook-configuration writes. Coverage is decided as RBAC's own
 * escalation check decides it (Kubernetes' `Covers`: each rule broken down to one verb on one resource of one
 * group, or one non-resource URL, and each piece covered by one ceiling rule), so the installer refuses what
 * the API server would refuse an installer bound to the ceiling without `escalate`. Roles live in the CAPI
 * namespace and may also use the namespaced rules (leader-election Leases, the namespace's own Secrets and
 * ConfigMaps). Pure data and functions; bounds.ts applies them.
 */
import type { KubeObject } from "../kube/object.js";
import { isRecord } from "../kube/object.js";
import { coversPiece, type PolicyRule, pieceCount, pieces, type RulePiece } from "../kube/rbac-coverage.js";
import { shown } from "./model.js";

export type { PolicyRule };

export const CEILING_NAME = "machine-api-migration-installer-ceiling";

const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({
  apiGroups,
  resources,
  verbs,
  resourceNames: [],
  nonResourceURLs: [],
});

const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete"];

/** The API groups of Cluster API and its providers. */
export const CLUSTER_API_GROUPS: readonly string[] = [
  "cluster.x-k8s.io",
  "addons.cluster.x-k8s.io",
  "bootstrap.cluster.x-k8s.io",
  "controlplane.cluster.x-k8s.io",
  "infrastructure.cluster.x-k8s.io",
  "ipam.cluster.x-k8s.io",
  "runtime.cluster.x-k8s.io",
];

/** What a provider's ClusterRoles may grant, cluster-wide. */
export const CLUSTER_CEILING: readonly PolicyRule[] = Object.freeze([
  rule([...CLUSTER_API_GROUPS], ["*"], [...READ, ...WRITE, "deletecollection"]),
  // Machines become Nodes. CAPI drains and deletes Nodes through the cluster's kubeconfig Secret, not as
  // its ServiceAccount, so the ServiceAccount only ever reads them.
  rule([""], ["nodes"], READ),
  rule([""], ["namespaces"], READ),
  rule(["", "events.k8s.io"], ["events"], [...READ, "create", "update", "patch"]),
  // CAPI's CRD migrator rewrites stored versions of its own CRDs.
  rule(
    ["apiextensions.k8s.io"],
    ["customresourcedefinitions", "customresourcedefinitions/status"],
    [...READ, "update", "patch"],
  ),
  // controller-runtime's authenticated metrics endpoint.
  rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
  rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]),
  { apiGroups: [], resources: [], verbs: ["get"], resourceNames: [], nonResourceURLs: ["/metrics"] },
]);

/** What a provider's Roles may grant besides, in the CAPI namespace only. */
export const NAMESPACE_CEILING: readonly PolicyRule[] = Object.freeze([
  rule(["coordination.k8s.io"], ["leases"], [...READ, ...WRITE]),
  rule([""], ["configmaps", "secrets"], [...READ, ...WRITE]),
]);

/** The ceiling as the ClusterRole (and the Role of the same name in the CAPI namespace) manifests ship. */
export function ceilingRoles(namespace: string): KubeObject[] {
  const rules = (list: readonly PolicyRule[]) =>
    list.map((r) =>
      r.nonResourceURLs.length > 0
        ? { nonResourceURLs: r.nonResourceURLs, verbs: r.verbs }
        : { apiGroups: r.apiGroups, resources: r.resources, verbs: r.verbs },
    );
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: CEILING_NAME },
      rules: rules(CLUSTER_CEILING),
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: CEILING_NAME, namespace },
      rules: rules(NAMESPACE_CEILING),
    },
  ];
}

const stringList = (v: unknown): string[] | undefined =>
  v === undefined || v === null
    ? []
    : Array.isArray(v) && v.every((x) => typeof x === "string")
      ? (v as string[])
      : undefined;

/** The `rules` of a role read strictly: a field of the wrong shape is an error, never skipped. */
export function policyRulesOf(
  rules: unknown,
): { ok: true; rules: PolicyRule[] } | { ok: false; message: string } {
  if (rules === undefined || rules === null) return { ok: true, rules: [] };
  if (!Array.isArray(rules)) return { ok: false, message: "rules is not a list" };
  const out: PolicyRule[] = [];
  for (const [i, r] of rules.entries()) {
    if (!isRecord(r)) return { ok: false, message: `rules[${i}] is not a rule` };
    const fields = {
      apiGroups: stringList(r.apiGroups),
      resources: stringList(r.resources),
      verbs: stringList(r.verbs),
      resourceNames: stringList(r.resourceNames),
      nonResourceURLs: stringList(r.nonResourceURLs),
    };
    const bad = Object.entries(fields).find(([, v]) => v === undefined);
    if (bad) return { ok: false, message: `rules[${i}].${bad[0]} is not a list of strings` };
    out.push(fields as PolicyRule);
  }
  return { ok: true, rules: out };
}

/** Rules whose breakdown is larger than this are refused rather than checked (a rule bomb). */
export const MAX_RULE_PIECES = 100_000;

const describePiece = (p: RulePiece): string =>
  "url" in p
    ? `${shown(p.verb)} ${shown(p.url)}`
    : `${shown(p.verb)} ${shown(`${p.resource}${p.group ? `.${p.group}` : ""}`)}${p.resourceName !== undefined ? ` named ${shown(p.resourceName)}` : ""}`;

/** At most this many uncovered pieces are named; the rest are counted. */
const MAX_NAMED = 8;

/**
 * The pieces of `rules` no rule of `ceiling` covers, as an admin reads them (`escalate
 * clusterroles.rbac.authorization.k8s.io`), at most MAX_NAMED of them then a count; empty when covered.
 */
export function uncovered(ceiling: readonly PolicyRule[], rules: readonly PolicyRule[]): string[] {
  if (pieceCount(rules) > MAX_RULE_PIECES)
    return [`more than ${MAX_RULE_PIECES} verb-resource pairs, too many to check`];
  const out: string[] = [];
  let more = 0;
  for (const r of rules)
    for (const piece of pieces(r)) {
      if (ceiling.some((c) => coversPiece(c, piece))) continue;
      const text = describePiece(piece);
      if (out.includes(text)) continue;
      if (out.length < MAX_NAMED) out.push(text);
      else more++;
    }
  if (more > 0) out.push(`and ${more} more`);
  return out;
}
