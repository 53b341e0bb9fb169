/**
 * Authorization as kube-apiserver decides it with `--authorization-mode=RBAC` (SPEC §8): members of
 * `system:masters` are allowed everything, everyone else what the Roles, ClusterRoles and bindings stored in
 * the server grant — rule matching, subjects and the rule walk of kube's RBAC authorizer
 * (plugin/pkg/auth/authorizer/rbac, pkg/registry/rbac/validation), the refusal in its exact words, and the
 * bootstrap roles every cluster starts with. Pure: the request's attributes and a view of the stored policy
 * in, a decision out. Enforcement lives in http.ts (every request) and admission/owner-references.ts.
 * Escalation prevention on role writes is rbac-escalation.ts, impersonation impersonation.ts. Not here:
 * ClusterRole aggregation.
 */
import { isRecord, type KubeObject } from "../kube/object.js";
import type { PolicyRule } from "../kube/rbac-coverage.js";
import { ApiError, type StatusDetails } from "./status.js";
import type { StatusCause, UserInfo } from "./types.js";

export const RBAC_GROUP = "rbac.authorization.k8s.io";
/** Where storage keeps each RBAC kind (`group/plural`). */
export const RBAC_KEYS = {
  clusterRoles: `${RBAC_GROUP}/clusterroles`,
  clusterRoleBindings: `${RBAC_GROUP}/clusterrolebindings`,
  roles: `${RBAC_GROUP}/roles`,
  roleBindings: `${RBAC_GROUP}/rolebindings`,
} as const;

/** kube's privileged group: its members are authorized before RBAC is asked (no binding needed). */
const SYSTEM_MASTERS = "system:masters";

export type { PolicyRule };

/** A request on an API resource, as kube's RequestInfo names it. */
export interface ResourceAttributes {
  user: UserInfo;
  verb: string;
  resourceRequest: true;
  apiGroup: string;
  resource: string;
  /** "" when the request is on the resource itself. */
  subresource: string;
  /** "" for cluster-scoped resources and for lists or watches across namespaces. */
  namespace: string;
  /** "" for collections (list, watch, create, deletecollection) unless named by a field selector. */
  name: string;
}

/** A request on any other path (discovery, /version, /healthz, /metrics). */
export interface NonResourceAttributes {
  user: UserInfo;
  verb: string;
  resourceRequest: false;
  path: string;
}

export type Attributes = ResourceAttributes | NonResourceAttributes;

/** `reason` is kube's authorizer reason: on a refusal, the errors met resolving bindings ("" if none). */
export type Decision = { allowed: true; reason: string } | { allowed: false; reason: string };

export type Authorizer = (attributes: Attributes) => Decision;

/** The stored policy as the authorizer reads it (storage in the server, plain arrays in tests). */
export interface PolicyView {
  clusterRoleBindings(): readonly KubeObject[];
  roleBindings(namespace: string): readonly KubeObject[];
  clusterRole(name: string): KubeObject | undefined;
  role(namespace: string, name: string): KubeObject | undefined;
}

/** The strings of a list that may hold anything (a stored or requested object read as untrusted data). */
export const stringsOf = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];

/** A stored rule, whatever its shape (the server stores RBAC objects without typed validation). */
export const policyRule = (v: unknown): PolicyRule => {
  const r = isRecord(v) ? v : {};
  return {
    verbs: stringsOf(r.verbs),
    apiGroups: stringsOf(r.apiGroups),
    resources: stringsOf(r.resources),
    resourceNames: stringsOf(r.resourceNames),
    nonResourceURLs: stringsOf(r.nonResourceURLs),
  };
};

/** The rules of a Role or ClusterRole. */
export const rulesOf = (role: KubeObject): PolicyRule[] =>
  Array.isArray(role.rules) ? role.rules.map(policyRule) : [];

/** Every permission: what `system:masters` holds, and what setting an aggregationRule needs (kube's `fullAuthority`). */
export const FULL_AUTHORITY: readonly PolicyRule[] = Object.freeze([
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"], resourceNames: [], nonResourceURLs: [] },
  { verbs: ["*"], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: ["*"] },
]);

// ---------------------------------------------------------------- rule matching (rbac/v1 evaluation_helpers)

const verbMatches = (rule: PolicyRule, verb: string): boolean =>
  rule.verbs.some((v) => v === "*" || v === verb);

const apiGroupMatches = (rule: PolicyRule, group: string): boolean =>
  rule.apiGroups.some((g) => g === "*" || g === group);

/** `*`, the exact `resource` or `resource/subresource`, or `*` + `/subresource` for any resource's subresource. */
const resourceMatches = (rule: PolicyRule, combined: string, subresource: string): boolean =>
  rule.resources.some((r) => r === "*" || r === combined || (subresource !== "" && r === `*/${subresource}`));

/** No resourceNames means every name; otherwise the request must name one of them. */
const resourceNameMatches = (rule: PolicyRule, name: string): boolean =>
  rule.resourceNames.length === 0 || rule.resourceNames.includes(name);

/** `*`, the exact path, or a prefix ending in `*` (`/apis/*` matches `/apis/x/v1`). */
const nonResourceURLMatches = (rule: PolicyRule, path: string): boolean =>
  rule.nonResourceURLs.some(
    (u) => u === "*" || u === path || (u.endsWith("*") && path.startsWith(u.replace(/\*+$/, ""))),
  );

export const ruleAllows = (a: Attributes, rule: PolicyRule): boolean => {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.resourceRequest) return nonResourceURLMatches(rule, a.path);
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return (
    apiGroupMatches(rule, a.apiGroup) &&
    resourceMatches(rule, combined, a.subresource) &&
    resourceNameMatches(rule, a.name)
  );
};

// ---------------------------------------------------------------- subjects and the rule walk

/**
 * Whether a binding subject names the user. A ServiceAccount subject without a namespace means the
 * binding's own namespace (none for a ClusterRoleBinding, so it names nobody there).
 */
export const subjectApplies = (user: UserInfo, subject: unknown, bindingNamespace: string): boolean => {
  if (!isRecord(subject) || typeof subject.name !== "string") return false;
  switch (subject.kind) {
    case "User":
      return user.username === subject.name;
    case "Group":
      return user.groups.includes(subject.name);
    case "ServiceAccount": {
      const namespace =
        typeof subject.namespace === "string" && subject.namespace !== ""
          ? subject.namespace
          : bindingNamespace;
      return namespace !== "" && user.username === `system:serviceaccount:${namespace}:${subject.name}`;
    }
    default:
      return false;
  }
};

/** The first subject of a binding that names the user (kube's `appliesTo`). */
const subjectFor = (
  user: UserInfo,
  binding: KubeObject,
  namespace: string,
): Record<string, unknown> | undefined =>
  Array.isArray(binding.subjects)
    ? (binding.subjects.find((s) => subjectApplies(user, s, namespace)) as
        | Record<string, unknown>
        | undefined)
    : undefined;

/** kube's `describeSubject`: `Group "g"`, `ServiceAccount "name/namespace"`. */
const describeSubject = (s: Record<string, unknown>, bindingNamespace: string): string => {
  const name = String(s.name ?? "");
  if (s.kind !== "ServiceAccount") return `${String(s.kind ?? "")} ${JSON.stringify(name)}`;
  const ns = typeof s.namespace === "string" && s.namespace !== "" ? s.namespace : bindingNamespace;
  return `ServiceAccount ${JSON.stringify(`${name}/${ns}`)}`;
};

/** kube's binding describers: `ClusterRoleBinding "b" of ClusterRole "r" to Group "g"` (RoleBinding "b/ns"). */
const describeBinding = (
  binding: KubeObject,
  namespace: string,
  subject: Record<string, unknown>,
): string => {
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  const name = namespace ? `${nameOf(binding)}/${namespace}` : nameOf(binding);
  const kind = namespace ? "RoleBinding" : "ClusterRoleBinding";
  return `${kind} ${JSON.stringify(name)} of ${String(ref.kind ?? "")} ${JSON.stringify(String(ref.name ?? ""))} to ${describeSubject(subject, namespace)}`;
};

/** How an unresolvable roleRef is reported: the authorizer's listers say `clusterrole.<group>`, the registry `clusterroles.<group>`. */
export type NotFoundWording = "lister" | "registry";

/** The rules a roleRef names in a binding's namespace ("" for a ClusterRoleBinding), or kube's resolution error. */
export const roleRefRules = (
  view: PolicyView,
  roleRef: unknown,
  namespace: string,
  wording: NotFoundWording = "lister",
): { rules: PolicyRule[] } | { error: string } => {
  const ref = isRecord(roleRef) ? roleRef : {};
  const name = String(ref.name ?? "");
  const missing = (kind: "clusterrole" | "role") =>
    `${kind}${wording === "registry" ? "s" : ""}.${RBAC_GROUP} ${JSON.stringify(name)} not found`;
  if (ref.kind === "ClusterRole") {
    const role = view.clusterRole(name);
    return role ? { rules: rulesOf(role) } : { error: missing("clusterrole") };
  }
  if (ref.kind === "Role") {
    const role = namespace ? view.role(namespace, name) : undefined;
    return role ? { rules: rulesOf(role) } : { error: missing("role") };
  }
  return { error: `unsupported role reference kind: ${JSON.stringify(String(ref.kind ?? ""))}` };
};

/** What the walk meets: a rule with the binding that grants it, or a binding's resolution error. */
type Grant =
  | { rule: PolicyRule; binding: KubeObject; namespace: string; subject: Record<string, unknown> }
  | { error: string };

/**
 * kube's `VisitRulesFor`, whole: every rule the user holds through the ClusterRoleBindings, then (for a
 * namespace) that namespace's RoleBindings — a RoleBinding may grant a ClusterRole's rules inside its
 * namespace — each with the binding it came from, or a binding's resolution error, in kube's order.
 */
const grantsFor = (
  view: PolicyView,
  user: UserInfo,
  namespace: string,
  wording: NotFoundWording,
): Grant[] => {
  const grants: Grant[] = [];
  const walk = (list: readonly KubeObject[], ns: string): void => {
    for (const binding of list) {
      const subject = subjectFor(user, binding, ns);
      if (!subject) continue;
      const resolved = roleRefRules(view, binding.roleRef, ns, wording);
      if ("error" in resolved) grants.push(resolved);
      else for (const rule of resolved.rules) grants.push({ rule, binding, namespace: ns, subject });
    }
  };
  walk(view.clusterRoleBindings(), "");
  if (namespace) walk(view.roleBindings(namespace), namespace);
  return grants;
};

/** Go's aggregate error text (utilerrors.NewAggregate): one distinct error as it is, several as `[e1, e2]`. */
export const aggregateErrors = (errors: readonly string[]): string => {
  const distinct = [...new Set(errors)];
  return distinct.length === 1 ? distinct[0]! : `[${distinct.join(", ")}]`;
};

/**
 * kube's `RulesFor`: every rule the user holds in the namespace ("" for cluster-wide only), and the errors
 * met — worded as the registry reports them (escalation checks) or as the authorizer's listers do (reviews).
 */
export const rulesFor = (
  view: PolicyView,
  user: UserInfo,
  namespace: string,
  wording: NotFoundWording = "registry",
): { rules: PolicyRule[]; errors: string[] } => {
  const rules: PolicyRule[] = [];
  const errors: string[] = [];
  for (const g of grantsFor(view, user, namespace, wording)) {
    if ("error" in g) errors.push(g.error);
    else rules.push(g.rule);
  }
  return { rules, errors };
};

/**
 * kube's RBAC authorizer over the user's grants in walk order: the first rule that allows wins, with kube's
 * reason (`RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to Group "g"`); a refusal carries the
 * errors met ("RBAC: …", as kube aggregates them).
 */
const rbacDecision = (a: Attributes, grants: readonly Grant[]): Decision => {
  const errors: string[] = [];
  for (const g of grants) {
    if ("error" in g) errors.push(g.error);
    else if (ruleAllows(a, g.rule))
      return {
        allowed: true,
        reason: `RBAC: allowed by ${describeBinding(g.binding, g.namespace, g.subject)}`,
      };
  }
  return { allowed: false, reason: errors.length === 0 ? "" : `RBAC: ${aggregateErrors(errors)}` };
};

/** The namespace whose RoleBindings count: the request's, none for a non-resource path. */
const scopeOf = (a: Attributes): string => (a.resourceRequest ? a.namespace : "");

/** kube's RBAC authorizer, walking the stored policy for this one request. */
export const rbacAuthorize = (view: PolicyView, a: Attributes): Decision =>
  rbacDecision(a, grantsFor(view, a.user, scopeOf(a), "lister"));

const nameOf = (o: KubeObject): string => String(o.metadata?.name ?? "");

/** kube's privileged-group authorizer: `system:masters` is allowed before RBAC is asked (no reason given). */
const privileged = (a: Attributes): boolean => a.user.groups.includes(SYSTEM_MASTERS);

/** The server's authorizer: `system:masters` first, then RBAC. */
export const authorize = (view: PolicyView, a: Attributes): Decision =>
  privileged(a) ? { allowed: true, reason: "" } : rbacAuthorize(view, a);

/** How many users × namespaces the server keeps the grants of before it starts again from none. */
const MAX_CACHED_GRANTS = 1024;

/**
 * `authorize` over a policy that changes only through `invalidate`: each user's grants in a namespace (the
 * bindings naming them or one of their groups, and their roles' rules) are walked once and kept until the
 * next change to any role or binding, instead of on every request — the decision is the same, from the same
 * grants in the same order. The server calls `invalidate` as a role or binding is stored, before the write
 * is answered, so a change takes effect on the next request, as it does in kube.
 */
export const cachingAuthorizer = (view: PolicyView): { authorize: Authorizer; invalidate(): void } => {
  let kept = new Map<string, Grant[]>();
  const grantsOf = (user: UserInfo, namespace: string): Grant[] => {
    const key = JSON.stringify([user.username, user.groups, namespace]);
    let grants = kept.get(key);
    if (grants === undefined) {
      grants = grantsFor(view, user, namespace, "lister");
      if (kept.size >= MAX_CACHED_GRANTS) kept = new Map();
      kept.set(key, grants);
    }
    return grants;
  };
  return {
    authorize: (a) =>
      privileged(a) ? { allowed: true, reason: "" } : rbacDecision(a, grantsOf(a.user, scopeOf(a))),
    invalidate() {
      kept = new Map();
    },
  };
};

// ---------------------------------------------------------------- the refusal, in kube's words

/** `User "u" cannot get resource "machines/status" in API group "g" in the namespace "n"` (or path). */
export const forbiddenMessage = (a: Attributes): string => {
  const user = JSON.stringify(a.user.username);
  if (!a.resourceRequest) return `User ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : "at the cluster scope";
  return `User ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
};

/**
 * kube's `NewForbidden(groupResource, name, err)`: `<resource>.<group> "<name>" is forbidden: <why>`, the
 * name left out when empty, and plain `forbidden: <why>` when there is no resource (non-resource paths).
 * Details carry only what is set, as kube's JSON omits empty fields.
 */
export const forbiddenError = (
  target: { group: string; resource: string; name: string } | undefined,
  why: string,
  causes?: StatusCause[],
): ApiError => {
  if (!target || target.resource === "") return new ApiError(403, "Forbidden", `forbidden: ${why}`, {});
  const qualified = target.group ? `${target.resource}.${target.group}` : target.resource;
  const subject = target.name ? `${qualified} ${JSON.stringify(target.name)}` : qualified;
  const details: StatusDetails = {
    ...(target.name ? { name: target.name } : {}),
    ...(target.group ? { group: target.group } : {}),
    kind: target.resource,
    ...(causes ? { causes } : {}),
  };
  return new ApiError(403, "Forbidden", `${subject} is forbidden: ${why}`, details);
};

/** The answer to a request the authorizer refused (kube's `ForbiddenStatusError`). */
export const refusal = (a: Attributes, reason: string): ApiError =>
  forbiddenError(
    a.resourceRequest ? { group: a.apiGroup, resource: a.resource, name: a.name } : undefined,
    reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a),
  );

// ---------------------------------------------------------------- bootstrap policy

const BOOTSTRAP_METADATA = {
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" },
};

const clusterRole = (name: string, rules: Partial<PolicyRule>[]): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: "ClusterRole",
  metadata: { name, ...structuredClone(BOOTSTRAP_METADATA) },
  rules: rules.map((r) => structuredClone(r)),
});

const groupBinding = (role: string, groups: string[]): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: "ClusterRoleBinding",
  metadata: { name: role, ...structuredClone(BOOTSTRAP_METADATA) },
  roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: role },
  subjects: groups.map((name) => ({ apiGroup: RBAC_GROUP, kind: "Group", name })),
});

/**
 * The part of kube-apiserver's bootstrap policy (bootstrappolicy/policy.go) a client of this server meets:
 * `cluster-admin`, and the roles that let every authenticated user discover the API (`kubectl` reads
 * /api, /apis, /openapi and /version before anything else) and review its own access, and every
 * ServiceAccount read the token issuer's discovery documents (so a rules review lists what kube's does).
 */
export const bootstrapPolicy = (): { clusterRoles: KubeObject[]; clusterRoleBindings: KubeObject[] } => ({
  clusterRoles: [
    clusterRole("cluster-admin", [
      { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
      { verbs: ["*"], nonResourceURLs: ["*"] },
    ]),
    clusterRole("system:discovery", [
      {
        verbs: ["get"],
        nonResourceURLs: [
          "/api",
          "/api/*",
          "/apis",
          "/apis/*",
          "/healthz",
          "/livez",
          "/openapi",
          "/openapi/*",
          "/readyz",
          "/version",
          "/version/",
        ],
      },
    ]),
    clusterRole("system:basic-user", [
      {
        verbs: ["create"],
        apiGroups: ["authorization.k8s.io"],
        resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
      },
      { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] },
    ]),
    clusterRole("system:public-info-viewer", [
      { verbs: ["get"], nonResourceURLs: ["/healthz", "/livez", "/readyz", "/version", "/version/"] },
    ]),
    clusterRole("system:service-account-issuer-discovery", [
      {
        verbs: ["get"],
        nonResourceURLs: [
          "/.well-known/openid-configuration",
          "/.well-known/openid-configuration/",
          "/openid/v1/jwks",
          "/openid/v1/jwks/",
        ],
      },
    ]),
  ],
  clusterRoleBindings: [
    groupBinding("cluster-admin", [SYSTEM_MASTERS]),
    groupBinding("system:discovery", ["system:authenticated"]),
    groupBinding("system:basic-user", ["system:authenticated"]),
    groupBinding("system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
    groupBinding("system:service-account-issuer-discovery", ["system:serviceaccounts"]),
  ],
});
