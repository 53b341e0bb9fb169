/**
 * Label and field selectors as kube-apiserver parses them (`a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, comma = AND), compiled once into predicates over an object. Pure functions;
 * an unparsable selector is reported as an error string, which the REST layer turns into a 400.
 */
import { getPath, isRecord, type KubeObject } from "../kube/object.js";
import { EVENT_SELECTABLE_FIELDS, eventSourceLabel } from "./event-versions.js";
import { labelKeyProblem, labelValueProblem } from "./object-meta.js";

export type Predicate = (o: KubeObject) => boolean;

type Requirement =
  | { op: "=" | "!="; key: string; value: string }
  /** `listed`: the values as a set, read once (an object's value is not searched for in the list, decision 145). */
  | { op: "in" | "notin"; key: string; values: string[]; listed: ReadonlySet<string> }
  | { op: "exists" | "!exists"; key: string }
  /** Label selectors only: the label's value, read as an integer, compared with `value`. */
  | { op: "gt" | "lt"; key: string; value: number };

/** Splits on commas that are not inside parentheses. */
const splitTerms = (s: string): string[] => {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter((t) => t !== "");
};

const SET_TERM = /^([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)$/;
const EQ_TERM = /^([^\s!=()]+)\s*(==|=|!=)\s*([^\s!=()]*)$/;
const KEY = /^!?\s*([^\s!=()<>]+)$/;
const NUMERIC_TERM = /^([^\s!=()<>]+)\s*([<>])\s*(\S+)$/;

const parseRequirement = (term: string): Requirement | string => {
  const set = SET_TERM.exec(term);
  if (set) {
    const values = set[3]!
      .split(",")
      .map((v) => v.trim())
      .filter((v) => v !== "");
    return { op: set[2] as "in" | "notin", key: set[1]!, values, listed: new Set(values) };
  }
  const numeric = NUMERIC_TERM.exec(term);
  if (numeric) {
    if (!/^-?\d+$/.test(numeric[3]!))
      return `for 'Gt', 'Lt' operators, the value must be an integer: ${JSON.stringify(numeric[3])}`;
    return { op: numeric[2] === ">" ? "gt" : "lt", key: numeric[1]!, value: Number(numeric[3]) };
  }
  const eq = EQ_TERM.exec(term);
  if (eq) return { op: eq[2] === "!=" ? "!=" : "=", key: eq[1]!, value: eq[3]! };
  const key = KEY.exec(term);
  if (key) return { op: term.startsWith("!") ? "!exists" : "exists", key: key[1]! };
  return `unable to parse requirement: ${JSON.stringify(term)}`;
};

const matches = (r: Requirement, value: string | undefined): boolean => {
  switch (r.op) {
    case "=":
      return value === r.value;
    case "!=":
      return value !== r.value;
    case "in":
      return value !== undefined && r.listed.has(value);
    case "notin":
      return value === undefined || !r.listed.has(value);
    case "gt":
    case "lt": {
      // kube: a label whose value is not an integer never matches.
      if (value === undefined || !/^-?\d+$/.test(value)) return false;
      return r.op === "gt" ? Number(value) > r.value : Number(value) < r.value;
    }
    case "exists":
      return value !== undefined;
    case "!exists":
      return value === undefined;
  }
};

const parseAll = (selector: string): Requirement[] | string => {
  const reqs: Requirement[] = [];
  for (const term of splitTerms(selector)) {
    const r = parseRequirement(term);
    if (typeof r === "string") return r;
    reqs.push(r);
  }
  return reqs;
};

const labelValue = (o: KubeObject, key: string): string | undefined => {
  const labels = o.metadata?.labels;
  return isRecord(labels) && typeof labels[key] === "string" ? labels[key] : undefined;
};

/**
 * Why a label selector's requirement can never name a label, as kube's `labels.Parse` refuses it: its key is
 * not a label key, or a value it compares with is not a label value (kubectl's `-l role:worker`, a typo for
 * `role=worker`, would otherwise quietly select nothing).
 */
const labelRequirementProblem = (r: Requirement): string | undefined => {
  const values =
    r.op === "=" || r.op === "!=" ? [r.value] : r.op === "in" || r.op === "notin" ? r.values : [];
  const problem = labelKeyProblem(r.key) ?? values.map(labelValueProblem).find((p) => p !== undefined);
  return problem === undefined ? undefined : `unable to parse requirement: ${problem}`;
};

/** Compiles a label selector; undefined/empty selects everything. */
export const parseLabelSelector = (selector: string | undefined): Predicate | string => {
  if (!selector) return () => true;
  const reqs = parseAll(selector);
  if (typeof reqs === "string") return reqs;
  for (const r of reqs) {
    const problem = labelRequirementProblem(r);
    if (problem !== undefined) return problem;
  }
  return (o) => reqs.every((r) => matches(r, labelValue(o, r.key)));
};

/**
 * Fields a field selector may name, by `group/Kind` (core kinds: `/Kind`); `metadata.name` and
 * `metadata.namespace` work for every kind.
 */
const EXTRA_FIELDS: Record<string, readonly string[]> = {
  "/Event": EVENT_SELECTABLE_FIELDS[""],
  "events.k8s.io/Event": EVENT_SELECTABLE_FIELDS["events.k8s.io"],
  "/Namespace": ["status.phase"],
  "/Secret": ["type"],
};

const fieldValue = (o: KubeObject, field: string, typeKey: string): string => {
  if (field === "source" && typeKey === "/Event") return eventSourceLabel(o);
  const v = getPath(o, field.split("."));
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : String(v);
};

/**
 * Compiles a field selector for the kind `kind` of `group`; unsupported fields are a 400 like kube's "field
 * label not supported".
 */
export const parseFieldSelector = (
  selector: string | undefined,
  group: string,
  kind: string,
): Predicate | string => {
  if (!selector) return () => true;
  const reqs = parseAll(selector);
  if (typeof reqs === "string") return reqs;
  const typeKey = `${group}/${kind}`;
  const extra = EXTRA_FIELDS[typeKey];
  const allowed = new Set(["metadata.name", "metadata.namespace", ...(extra ?? [])]);
  for (const r of reqs) {
    if (r.op !== "=" && r.op !== "!=") return `invalid field selector operator for ${r.key}`;
    if (!allowed.has(r.key))
      // Kinds with only the default fields answer as apimachinery's DefaultMetaV1FieldSelectorConversion.
      return extra
        ? `field label not supported: ${r.key}`
        : `${JSON.stringify(r.key)} is not a known field selector: only "metadata.name", "metadata.namespace"`;
  }
  return (o) => reqs.every((r) => matches(r, fieldValue(o, r.key, typeKey)));
};

/** The `metadata.name=X` term of a field selector, used to answer single-object watches from the index. */
export const nameFromFieldSelector = (selector: string | undefined): string | undefined => {
  if (!selector) return undefined;
  for (const term of splitTerms(selector)) {
    const m = /^metadata\.name\s*==?\s*(\S+)$/.exec(term);
    if (m) return m[1];
  }
  return undefined;
};
