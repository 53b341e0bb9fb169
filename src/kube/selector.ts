/**
 * A `metav1.LabelSelector` (matchLabels and the four matchExpressions operators) against a label map — the
 * one matcher behind the migration's member check, the local API server's webhook selectors and the CAPI
 * stand-in's MachineSets. The selector is read as untrusted data: a selector that is not an object, an
 * expression without a string key, or an unknown operator matches nothing. What an absent or empty selector
 * means differs by caller (kube's webhook selectors: everything; a MachineSet: nothing), so callers decide it.
 */
import { isRecord } from "./object.js";

export const labelSelectorMatches = (
  selector: unknown,
  labels: Readonly<Record<string, string>>,
): boolean => {
  if (!isRecord(selector)) return false;
  const matchLabels = isRecord(selector.matchLabels) ? selector.matchLabels : {};
  for (const [k, v] of Object.entries(matchLabels))
    if (!Object.hasOwn(labels, k) || labels[k] !== v) return false;
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  for (const e of expressions) {
    if (!isRecord(e) || typeof e.key !== "string") return false;
    const values = Array.isArray(e.values) ? e.values : [];
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    if (!requirementHolds(e.operator, has, has && values.includes(value))) return false;
  }
  return true;
};

/**
 * Whether a MachineSet's `spec.selector` selects an object's labels, as the MachineSet controllers of both
 * APIs read it: an absent or empty selector selects nothing.
 */
export const machineSetSelects = (machineSet: unknown, o: unknown): boolean => {
  const selector = isRecord(machineSet) && isRecord(machineSet.spec) ? machineSet.spec.selector : undefined;
  if (isEmptyLabelSelector(selector)) return false;
  const metadata = isRecord(o) && isRecord(o.metadata) ? o.metadata : {};
  const labels = isRecord(metadata.labels) ? (metadata.labels as Record<string, string>) : {};
  return labelSelectorMatches(selector, labels);
};

/** Whether a selector names no requirement at all (kube's webhook selectors then match everything). */
export const isEmptyLabelSelector = (selector: unknown): boolean =>
  !isRecord(selector) ||
  ((!isRecord(selector.matchLabels) || Object.keys(selector.matchLabels).length === 0) &&
    (!Array.isArray(selector.matchExpressions) || selector.matchExpressions.length === 0));

const requirementHolds = (operator: unknown, has: boolean, valueListed: boolean): boolean => {
  switch (operator) {
    case "In":
      return valueListed;
    case "NotIn":
      return !valueListed;
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    default:
      return false;
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
