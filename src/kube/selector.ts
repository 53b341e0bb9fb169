/**
 * A `metav1.LabelSelector` (matchLabels and the four matchExpressions operators) against a label map — the
 * one matcher behind the migration's member check, the local API server's webhook selectors and the CAPI
 * stand-in's MachineSets. The selector is read as untrusted data: a selector that is not an object, an
 * expression without a string key, or an unknown operator matches nothing. What an absent or empty selector
 * means differs by caller (kube's webhook selectors: everything; a MachineSet: nothing), so callers decide it.
 */
import { isRecord } from "./object.js";

/** A compiled label selector: whether an object's labels are selected. */
export type LabelMatcher = (labels: Readonly<Record<string, string>>) => boolean;

const selectsNothing: LabelMatcher = () => false;

/**
 * A selector compiled once, for a caller that matches many label maps against it: each expression's values
 * as a set, not a list searched per object (whoever writes a MachineSet writes them, decision 145). What
 * cannot match (an expression without a string key, an unknown operator) compiles to a matcher of nothing.
 */
export const labelSelectorMatcher = (selector: unknown): LabelMatcher => {
  if (!isRecord(selector)) return selectsNothing;
  const equal = Object.entries(isRecord(selector.matchLabels) ? selector.matchLabels : {});
  const requirements: LabelMatcher[] = [];
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isRecord(e) || typeof e.key !== "string") return selectsNothing;
    const requirement = requirementOf(e.key, e.operator, Array.isArray(e.values) ? e.values : []);
    if (!requirement) return selectsNothing;
    requirements.push(requirement);
  }
  return (labels) =>
    equal.every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v) &&
    requirements.every((holds) => holds(labels));
};

/** One selector against one label map (a caller matching many compiles it once: `labelSelectorMatcher`). */
export const labelSelectorMatches = (selector: unknown, labels: Readonly<Record<string, string>>): boolean =>
  labelSelectorMatcher(selector)(labels);

/**
 * Whether a MachineSet's `spec.selector` selects an object's labels, as the MachineSet controllers of both
 * APIs read it: an absent or empty selector selects nothing. Compiled once for many objects.
 */
export const machineSetSelector = (machineSet: unknown): ((o: unknown) => boolean) => {
  const selector = isRecord(machineSet) && isRecord(machineSet.spec) ? machineSet.spec.selector : undefined;
  if (isEmptyLabelSelector(selector)) return () => false;
  const matches = labelSelectorMatcher(selector);
  return (o) => matches(labelsOfUnknown(o));
};

/** `machineSetSelector` for one object. */
export const machineSetSelects = (machineSet: unknown, o: unknown): boolean =>
  machineSetSelector(machineSet)(o);

const labelsOfUnknown = (o: unknown): Readonly<Record<string, string>> => {
  const metadata = isRecord(o) && isRecord(o.metadata) ? o.metadata : {};
  return isRecord(metadata.labels) ? (metadata.labels as Record<string, string>) : {};
};

/** Whether a selector names no requirement at all (kube's webhook selectors then match everything). */
export const isEmptyLabelSelector = (selector: unknown): boolean =>
  !isRecord(selector) ||
  ((!isRecord(selector.matchLabels) || Object.keys(selector.matchLabels).length === 0) &&
    (!Array.isArray(selector.matchExpressions) || selector.matchExpressions.length === 0));

/** One expression of a selector, its values read once into a set; undefined for an unknown operator. */
const requirementOf = (
  key: string,
  operator: unknown,
  values: readonly unknown[],
): LabelMatcher | undefined => {
  switch (operator) {
    case "In": {
      const listed = new Set(values);
      return (labels) => Object.hasOwn(labels, key) && listed.has(labels[key]);
    }
    case "NotIn": {
      const listed = new Set(values);
      return (labels) => !Object.hasOwn(labels, key) || !listed.has(labels[key]);
    }
    case "Exists":
      return (labels) => Object.hasOwn(labels, key);
    case "DoesNotExist":
      return (labels) => !Object.hasOwn(labels, key);
    default:
      return undefined;
  }
};

/** `metav1.FormatLabelSelector`: `a=b,c in (d,e),!f`. */
export const formatSelector = (selector: unknown): string => {
  if (!isRecord(selector)) return "";
  const parts: string[] = [];
  const matchLabels = isRecord(selector.matchLabels) ? selector.matchLabels : {};
  for (const key of Object.keys(matchLabels).sort()) parts.push(`${key}=${String(matchLabels[key])}`);
  for (const expr of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isRecord(expr)) continue;
    const values = Array.isArray(expr.values) ? [...expr.values].map(String).sort().join(",") : "";
    const key = String(expr.key);
    if (expr.operator === "In") parts.push(`${key} in (${values})`);
    else if (expr.operator === "NotIn") parts.push(`${key} notin (${values})`);
    else if (expr.operator === "Exists") parts.push(key);
    else if (expr.operator === "DoesNotExist") parts.push(`!${key}`);
  }
  return parts.join(",");
};

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A label key the API accepts: `name` or `prefix/name` (kube's IsQualifiedName). */
const isLabelKey = (key: unknown): key is string => {
  if (typeof key !== "string") return false;
  const slash = key.indexOf("/");
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
};

/** A non-empty label value the API accepts (an empty one is legal, but not worth writing into a query). */
const isLabelValue = (value: unknown): value is string =>
  typeof value === "string" && value.length <= 63 && LABEL_NAME.test(value);

/**
 * A `metav1.LabelSelector` as the API's `labelSelector` query (`formatSelector` of it, once checked) — the
 * same objects `labelSelectorMatches` selects, chosen by the API server — or undefined when it cannot be
 * written so exactly: an empty or absent selector, an unknown operator, or a key or value outside the label syntax (which would also let a crafted
 * selector write `,` or `)` into the query). The caller then reads everything and matches itself.
 */
export const labelSelectorQuery = (selector: unknown): string | undefined => {
  if (!isRecord(selector) || isEmptyLabelSelector(selector)) return undefined;
  if (selector.matchLabels !== undefined) {
    if (!isRecord(selector.matchLabels)) return undefined;
    for (const [k, v] of Object.entries(selector.matchLabels))
      if (!isLabelKey(k) || !isLabelValue(v)) return undefined;
  }
  if (selector.matchExpressions !== undefined) {
    if (!Array.isArray(selector.matchExpressions)) return undefined;
    for (const e of selector.matchExpressions) {
      if (!isRecord(e) || !isLabelKey(e.key)) return undefined;
      const values = e.values === undefined ? [] : e.values;
      if (!Array.isArray(values)) return undefined;
      if (e.operator === "In" || e.operator === "NotIn") {
        if (values.length === 0 || !values.every(isLabelValue)) return undefined;
      } else if (e.operator === "Exists" || e.operator === "DoesNotExist") {
        if (values.length > 0) return undefined;
      } else return undefined;
    }
  }
  return formatSelector(selector);
};
