/**
 * RBAC's escalation prevention, as kube-apiserver's rbac registry decides it (the policybased storages of pkg/registry/rbac,
 * pkg/registry/rbac/validation): a Role or ClusterRole may be written only with rules the writer already
 * holds where it is written, unless the writer may `escalate` it; a binding only to a role whose rules the
 * writer holds, unless it may `bind` that role; setting or changing a ClusterRole's aggregationRule needs
 * every permission. Members of `system:masters` skip the check, and so does an update that only changes what
 * the garbage collector writes (ownerReferences, finalizers). The refusal is kube's, word for word. Pure: the
 * write and the stored policy in, a refusal (or none) out; the write path calls it after mutating admission
 * and before validation, where kube's policy-based storage runs it.
 */
import { isRecord, jsonEqual, type KubeObject } from "../kube/object.js";
import { type PolicyRule, type RulePiece, uncoveredPieces } from "../kube/rbac-coverage.js";
import {
  type Authorizer,
  aggregateErrors,
  FULL_AUTHORITY,
  forbiddenError,
  type PolicyView,
  RBAC_GROUP,
  type ResourceAttributes,
  roleRefRules,
  rulesFor,
  rulesOf,
} from "./rbac.js";
import { ApiError, notFound } from "./status.js";
import type { UserInfo } from "./types.js";

const ROLES = new Set(["roles", "clusterroles"]);
const BINDINGS = new Set(["rolebindings", "clusterrolebindings"]);

export interface EscalationDeps {
  authorize: Authorizer;
  policy: PolicyView;
}

export interface RbacWrite {
  user: UserInfo;
  group: string;
  /** The plural resource written (`roles`, `clusterroles`, `rolebindings`, `clusterrolebindings`). */
  resource: string;
  /** The request's namespace ("" for the cluster-scoped kinds). */
  namespace: string;
  /** The name the request's URL carries ("" on a create by POST), as kube's RequestInfo has it. */
  urlName: string;
  object: KubeObject;
  /** The stored object on an update; undefined on a create. */
  old: KubeObject | undefined;
}

const GC_FIELDS = ["ownerReferences", "finalizers", "selfLink", "managedFields", "resourceVersion"];

/** kube's `IsOnlyMutatingGCFields`: the write changes nothing but what the collector writes. */
const onlyGcFields = (object: KubeObject, old: KubeObject | undefined): boolean => {
  if (!old) return false;
  const strip = (o: KubeObject): KubeObject => {
    const metadata = { ...(o.metadata ?? {}) } as Record<string, unknown>;
    for (const k of GC_FIELDS) delete metadata[k];
    return { ...o, metadata };
  };
  return jsonEqual(strip(object), strip(old));
};

const hasAggregationRule = (o: KubeObject | undefined): boolean =>
  o !== undefined &&
  isRecord(o.aggregationRule) &&
  Array.isArray(o.aggregationRule.clusterRoleSelectors) &&
  o.aggregationRule.clusterRoleSelectors.length > 0;

/** Go's `%q` of a string slice: `["a" "b"]`. */
const goQuotedList = (list: readonly string[]): string => `[${list.map((s) => JSON.stringify(s)).join(" ")}]`;

/** kube's `CompactRules` then `CompactString` per rule, sorted as its string set lists them. */
const describeMissing = (missing: readonly RulePiece[]): string[] => {
  // One line per resource (and name), its verbs in the order they were missing; URLs are never compacted.
  const simple = new Map<
    string,
    { group: string; resource: string; resourceName?: string; verbs: string[] }
  >();
  const lines: string[] = [];
  for (const p of missing) {
    if ("url" in p) {
      lines.push(`{NonResourceURLs:${goQuotedList([p.url])}, Verbs:${goQuotedList([p.verb])}}`);
      continue;
    }
    const key = JSON.stringify([p.group, p.resource, p.resourceName ?? null]);
    const entry = simple.get(key);
    if (entry) entry.verbs.push(p.verb);
    else simple.set(key, { ...p, verbs: [p.verb] });
  }
  for (const { group, resource, resourceName, verbs } of simple.values())
    lines.push(
      `{${[
        `APIGroups:${goQuotedList([group])}`,
        `Resources:${goQuotedList([resource])}`,
        ...(resourceName !== undefined ? [`ResourceNames:${goQuotedList([resourceName])}`] : []),
        `Verbs:${goQuotedList(verbs)}`,
      ].join(", ")}}`,
    );
  return [...new Set(lines)].sort();
};

/** kube's `ConfirmNoEscalation`: why the user may not grant `rules` in `namespace`, or undefined. */
const escalation = (
  deps: EscalationDeps,
  user: UserInfo,
  namespace: string,
  rules: readonly PolicyRule[],
): string | undefined => {
  const owner = rulesFor(deps.policy, user, namespace);
  const missing = uncoveredPieces(owner.rules, rules);
  if (missing.length === 0) return undefined;
  const message = `user ${JSON.stringify(user.username)} (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${describeMissing(missing).join("\n")}`;
  if (owner.errors.length === 0) return message;
  // Go prints the one aggregate error in a slice: `[e]`, or `[[e1, e2]]` for several distinct ones.
  return `${message}; resolution errors: [${aggregateErrors(owner.errors)}]`;
};

const allowedTo = (deps: EscalationDeps, attributes: Omit<ResourceAttributes, "resourceRequest">): boolean =>
  deps.authorize({ ...attributes, resourceRequest: true }).allowed;

/** The refusal of an RBAC write that would escalate the writer's privileges, or undefined. */
export const checkRbacEscalation = (deps: EscalationDeps, w: RbacWrite): ApiError | undefined => {
  if (w.group !== RBAC_GROUP || !(ROLES.has(w.resource) || BINDINGS.has(w.resource))) return undefined;
  if (w.user.groups.includes("system:masters")) return undefined;
  if (onlyGcFields(w.object, w.old)) return undefined;
  const name = String(w.object.metadata?.name ?? "");
  const refuse = (why: string) => forbiddenError({ group: w.group, resource: w.resource, name }, why);

  if (ROLES.has(w.resource)) {
    const escalate = {
      user: w.user,
      verb: "escalate",
      apiGroup: w.group,
      resource: w.resource,
      subresource: "",
      namespace: w.namespace,
      name: w.urlName,
    };
    if (allowedTo(deps, escalate)) return undefined;
    const why = escalation(deps, w.user, w.namespace, rulesOf(w.object));
    if (why) return refuse(why);
    // Setting an aggregationRule, or writing a ClusterRole that has or had one, needs every permission.
    const aggregating =
      w.resource === "clusterroles" && (hasAggregationRule(w.object) || hasAggregationRule(w.old));
    if (aggregating && escalation(deps, w.user, w.namespace, FULL_AUTHORITY))
      return refuse("must have cluster-admin privileges to use the aggregationRule");
    return undefined;
  }

  const ref = isRecord(w.object.roleRef) ? w.object.roleRef : {};
  const kind = ref.kind === "ClusterRole" ? "clusterroles" : ref.kind === "Role" ? "roles" : undefined;
  const bind = kind && {
    user: w.user,
    verb: "bind",
    apiGroup: String(ref.apiGroup ?? ""),
    resource: kind,
    subresource: "",
    namespace: w.namespace,
    name: String(ref.name ?? ""),
  };
  if (bind && allowedTo(deps, bind)) return undefined;
  // The role's lookup error is returned as it is: the registry's 404 — named after the resource of the
  // request, as kube's store qualifies it from the request — or a plain error (a 500 without a reason).
  const granted = roleRefRules(deps.policy, w.object.roleRef, w.namespace, "registry");
  if ("error" in granted)
    return kind
      ? notFound(RBAC_GROUP, w.resource, String(ref.name ?? ""))
      : new ApiError(500, "", granted.error);
  const why = escalation(deps, w.user, w.namespace, granted.rules);
  return why ? refuse(why) : undefined;
};
