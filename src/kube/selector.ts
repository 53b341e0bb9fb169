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
