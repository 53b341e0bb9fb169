/**
 * Which registered webhooks a request reaches — the pure part of kube-apiserver's webhook dispatch:
 * rules (operations, groups, versions, resources incl. subresources, scope), namespaceSelector,
 * objectSelector, the call order of webhooks, and the AdmissionReview request body. matchConditions (CEL)
 * are compiled in configuration.ts; the HTTPS call lives in call.ts.
 */
import type { KubeObject } from "../../kube/object.js";
import { isRecord } from "../../kube/object.js";
import { isEmptyLabelSelector, labelSelectorMatches } from "../../kube/selector.js";
import type { AdmissionAttributes } from "./types.js";

export interface RuleWithOperations {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope?: string;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

const list = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];

export function parseRules(v: unknown): RuleWithOperations[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isRecord).map((r) => ({
    operations: list(r.operations),
    apiGroups: list(r.apiGroups),
    apiVersions: list(r.apiVersions),
    resources: list(r.resources),
    ...(typeof r.scope === "string" ? { scope: r.scope } : {}),
  }));
}

const matchesOne = (allowed: readonly string[], value: string): boolean =>
  allowed.some((a) => a === "*" || a === value);

/**
 * kube's resource matching: `*` = every resource but no subresource; `*\/*` = everything; `pods/*` = every
 * subresource of pods; `*\/scale` = the scale subresource of anything; `pods/status` exact.
 */
export function matchesResource(allowed: readonly string[], resource: string, subResource: string): boolean {
  const full = subResource ? `${resource}/${subResource}` : resource;
  return allowed.some((r) => {
    if (r === "*/*" || r === full) return true;
    const [res, sub] = r.split("/", 2) as [string, string | undefined];
    if (sub === undefined) return res === "*" && subResource === "";
    if (res === "*" && sub === subResource) return true;
    if (sub === "*" && res === resource && subResource !== "") return true;
    return false;
  });
}

/** Namespace objects are cluster-scoped even though kube sets their request namespace to their own name. */
function matchesScope(scope: string | undefined, a: AdmissionAttributes): boolean {
  if (scope === undefined || scope === "*") return true;
  const isNamespaceObject = a.resource.group === "" && a.resource.resource === "namespaces";
  const clusterScoped = isNamespaceObject || !a.namespace;
  return scope === "Cluster" ? clusterScoped : !clusterScoped;
}

export function ruleMatches(rule: RuleWithOperations, a: AdmissionAttributes): boolean {
  return (
    matchesOne(rule.operations, a.operation) &&
    matchesOne(rule.apiGroups, a.resource.group) &&
    matchesOne(rule.apiVersions, a.resource.version) &&
    matchesResource(rule.resources, a.resource.resource, a.subResource ?? "") &&
    matchesScope(rule.scope, a)
  );
}

const labelsOfObject = (o: KubeObject | null): Record<string, string> | undefined => {
  const l = o?.metadata?.labels;
  if (!isRecord(l)) return o ? {} : undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(l)) if (typeof v === "string") out[k] = v;
  return out;
};

/**
 * kube: a cluster-scoped request that is not for a Namespace is never exempted by namespaceSelector;
 * a Namespace request is matched against the Namespace's own labels.
 */
export function namespaceSelectorMatches(
  selector: LabelSelector | undefined,
  a: AdmissionAttributes,
): boolean {
  if (isEmptyLabelSelector(selector)) return true;
  const isNamespaceObject = a.resource.group === "" && a.resource.resource === "namespaces";
  if (!a.namespace && !isNamespaceObject) return true;
  const labels = isNamespaceObject
    ? (labelsOfObject(a.object) ?? labelsOfObject(a.oldObject) ?? a.namespaceLabels ?? {})
    : (a.namespaceLabels ?? {});
  return labelSelectorMatches(selector, labels);
}

/** kube: matches when either the new or the old object's labels match. */
export function objectSelectorMatches(selector: LabelSelector | undefined, a: AdmissionAttributes): boolean {
  if (isEmptyLabelSelector(selector)) return true;
  const candidates = [labelsOfObject(a.object), labelsOfObject(a.oldObject)];
  return candidates.some((l) => l !== undefined && labelSelectorMatches(selector, l));
}

/** The `request` of an admission.k8s.io/v1 AdmissionReview for these attributes. */
export function admissionRequest(a: AdmissionAttributes, uid: string): Record<string, unknown> {
  const request: Record<string, unknown> = {
    uid,
    kind: a.kind,
    resource: a.resource,
    requestKind: a.kind,
    requestResource: a.resource,
    name: a.name,
    operation: a.operation,
    userInfo: a.userInfo,
    object: a.object,
    oldObject: a.oldObject,
    dryRun: a.dryRun,
    options: a.options,
  };
  if (a.subResource) {
    request.subResource = a.subResource;
    request.requestSubResource = a.subResource;
  }
  if (a.namespace) request.namespace = a.namespace;
  return request;
}
