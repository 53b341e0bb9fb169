/**
 * Validation of a (pruned, defaulted) object against a compiled structural schema, as kube-apiserver does
 * for custom resources: OpenAPI keywords with go-openapi's messages wrapped in kube field errors, then the
 * CEL `x-kubernetes-validations` rules. UPDATEs are ratcheted like kube ≥ 1.30 (CRDValidationRatcheting):
 * a value equal to its correlated old value is not re-validated, except by transition rules (oldSelf).
 */

import { canonicalJson } from "../../json-text.js";
import { jsonEqual } from "../../kube/object.js";
import { appendAll } from "../../lists.js";
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  keyPath,
  notSupported,
  required,
  type StatusCause,
  tooLong,
  tooMany,
  typeInvalid,
} from "./causes.js";
import { appendFieldPath, celFailed, celGoErrorText, toCel } from "./cel.js";
import { isObject, type SchemaNode } from "./structural.js";

/** An old value correlated to the current position; `undefined` when there is none (CREATE, new item). */
type Old = { value: unknown } | undefined;

const jsonType = (v: unknown): string => {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (typeof v === "object") return "object";
  return typeof v; // string, boolean
};

const RFC3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const INT32 = { min: -2147483648, max: 2147483647 };

/** Formats we check; kube ignores unknown formats, and so do we. */
function formatError(format: string, v: unknown): boolean {
  switch (format) {
    case "date-time":
      return typeof v === "string" && !RFC3339.test(v);
    case "date":
      return typeof v === "string" && !DATE.test(v);
    case "int32":
      return typeof v === "number" && (v < INT32.min || v > INT32.max);
    case "int64":
      return typeof v === "number" && !Number.isSafeInteger(v);
    default:
      return false;
  }
}

const typeMatches = (node: SchemaNode, v: unknown): boolean => {
  const s = node.schema;
  if (s["x-kubernetes-int-or-string"]) return typeof v === "string" || Number.isInteger(v);
  switch (s.type) {
    case undefined:
    case "":
      return true;
    case "object":
      return isObject(v);
    case "array":
      return Array.isArray(v);
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    default:
      return true;
  }
};

/** `name in body ...` is go-openapi's phrasing; kube keeps it inside the field error's detail. */
const inBody = (path: string): string => `${path || "body"} in body`;

function checkKeywords(node: SchemaNode, v: unknown, path: string, out: StatusCause[]): boolean {
  const s = node.schema;
  if (!typeMatches(node, v)) {
    const want = s["x-kubernetes-int-or-string"] ? "integer,string" : s.type;
    out.push(
      typeInvalid(
        path,
        jsonType(v),
        `${inBody(path)} must be of type ${want}: ${JSON.stringify(jsonType(v))}`,
      ),
    );
    // kube-openapi's enum validator runs beside the type validator: a wrong type is also not in the enum.
    if (Array.isArray(s.enum) && !s.enum.some((e) => jsonEqual(e, v)))
      out.push(notSupported(path, v, s.enum));
    return false;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => jsonEqual(e, v))) out.push(notSupported(path, v, s.enum));
  if (typeof v === "string") {
    const len = [...v].length;
    if (s.maxLength !== undefined && len > s.maxLength) out.push(tooLong(path, s.maxLength));
    if (s.minLength !== undefined && len < s.minLength)
      out.push(invalid(path, v, `${inBody(path)} should be at least ${s.minLength} chars long`));
    if (node.pattern && !node.pattern.test(v))
      out.push(invalid(path, v, `${inBody(path)} should match '${s.pattern}'`));
  }
  if (typeof v === "number") {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
      out.push(
        invalid(
          path,
          v,
          `${inBody(path)} should be greater than ${s.exclusiveMinimum ? "" : "or equal to "}${s.minimum}`,
        ),
      );
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum))
      out.push(
        invalid(
          path,
          v,
          `${inBody(path)} should be less than ${s.exclusiveMaximum ? "" : "or equal to "}${s.maximum}`,
        ),
      );
    if (s.multipleOf !== undefined && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf))
      out.push(invalid(path, v, `${inBody(path)} should be a multiple of ${s.multipleOf}`));
  }
  if (s.format && formatError(s.format, v))
    out.push(invalid(path, v, `${inBody(path)} must be of type ${s.format}: ${JSON.stringify(String(v))}`));
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) out.push(tooMany(path, v.length, s.maxItems));
    if (s.minItems !== undefined && v.length < s.minItems)
      out.push(invalid(path, v.length, `${inBody(path)} should have at least ${s.minItems} items`));
    checkListType(node, v, path, out);
  }
  if (isObject(v)) {
    const n = Object.keys(v).length;
    if (s.maxProperties !== undefined && n > s.maxProperties) out.push(tooMany(path, n, s.maxProperties));
    if (s.minProperties !== undefined && n < s.minProperties)
      out.push(invalid(path, n, `${inBody(path)} should have at least ${s.minProperties} properties`));
    for (const r of s.required ?? []) if (!Object.hasOwn(v, r)) out.push(required(childPath(path, r)));
  }
  return true;
}

const mapKeyOf = (item: unknown, keys: readonly string[]): string | undefined =>
  isObject(item) ? canonicalJson(keys.map((k) => item[k] ?? null)) : undefined;

/**
 * kube's listtype validation: a `set` list's items, or a `map` list's key fields, must be unique. As there,
 * each value is named once, at its first repeat, and items are counted by a key (their canonical text), not
 * compared pairwise — 150,000 distinct items held the event loop for minutes when they were.
 */
function checkListType(node: SchemaNode, list: unknown[], path: string, out: StatusCause[]): void {
  const listType = node.schema["x-kubernetes-list-type"];
  if (listType !== "set" && listType !== "map") return;
  const keys = node.schema["x-kubernetes-list-map-keys"] ?? [];
  const times = new Map<string, number>();
  list.forEach((item, i) => {
    const k = listType === "set" ? canonicalJson(item) : mapKeyOf(item, keys);
    if (k === undefined) return;
    const seen = times.get(k) ?? 0;
    times.set(k, seen + 1);
    if (seen !== 1) return;
    if (listType === "set") out.push(duplicate(indexPath(path, i), item));
    else {
      const keyObj: Record<string, unknown> = {};
      for (const key of keys) if (isObject(item) && Object.hasOwn(item, key)) keyObj[key] = item[key];
      out.push(duplicate(indexPath(path, i), keyObj));
    }
  });
}

/**
 * Correlates the items of an array with their old counterparts as kube does: only `listType: map` lists, by
 * their keys (the first old item of a key). One map of the old list per list, not a search of it per item:
 * 10,000 conditions in a status took 44 s to validate when each item searched (decision 138).
 */
function oldItems(node: SchemaNode, old: Old): ((item: unknown) => Old) | undefined {
  if (!old || !Array.isArray(old.value) || node.schema["x-kubernetes-list-type"] !== "map") return undefined;
  const keys = node.schema["x-kubernetes-list-map-keys"] ?? [];
  const byKey = new Map<string, unknown>();
  for (const o of old.value) {
    const k = mapKeyOf(o, keys);
    if (k !== undefined && !byKey.has(k)) byKey.set(k, o);
  }
  return (item) => {
    const k = mapKeyOf(item, keys);
    return k !== undefined && byKey.has(k) ? { value: byKey.get(k) } : undefined;
  };
}

/** cel-go words a missing field "no such key: x"; @bufbuild/cel says "field not found: x". */

/** The value CEL rules look at: `self`, its correlated old value, and whether it is ratcheted (unchanged). */
interface RuleSubject {
  value: unknown;
  old: Old;
  ratcheted: boolean;
}

function runRules(node: SchemaNode, subject: RuleSubject, path: string, out: StatusCause[]) {
  const { value: v, old, ratcheted } = subject;
  let self: unknown;
  let oldSelf: unknown;
  let converted = false;
  for (const rule of node.rules) {
    if (rule.isTransition && !old) continue;
    if (!rule.isTransition && ratcheted) continue;
    if (!converted) {
      self = toCel(v, node.schema);
      oldSelf = old ? toCel(old.value, node.schema) : null;
      converted = true;
    }
    const vars = { self, oldSelf };
    const result = rule.program(vars);
    const type = node.schema.type ?? "";
    const ruleText = rule.message ?? rule.rule.trim();
    if (celFailed(result)) {
      // kube: "<error> evaluating rule: <message or rule>" at the rule's own path (not its fieldPath)
      out.push(invalid(path, type, `${celGoErrorText(result.message)} evaluating rule: ${ruleText}`));
      continue;
    }
    if (result === true) continue;
    let message = rule.message ?? `failed rule: ${ruleText}`;
    const at = rule.fieldPath ? appendFieldPath(path, rule.fieldPath) : path;
    if (rule.messageExpression) {
      const m = rule.messageExpression(vars);
      if (typeof m === "string" && m.trim() !== "" && !m.includes("\n")) message = m;
    }
    switch (rule.reason) {
      case "FieldValueForbidden":
        out.push(forbidden(at, message));
        break;
      case "FieldValueRequired":
        out.push(required(at, message));
        break;
      case "FieldValueDuplicate":
        out.push(duplicate(at, type));
        break;
      default:
        out.push(invalid(at, type, message));
    }
  }
}

/** The path of the validated object itself, where metadata, apiVersion and kind are kube's, not the schema's. */
export const ROOT_PATH: unique symbol = Symbol("root");

/**
 * Validates `v` at `at` (ROOT_PATH for the object itself). `old` is the correlated old value (UPDATE only); when `v` equals it the schema
 * keywords and non-transition rules are skipped (ratcheting), but transition rules still run.
 */
export function validateNode(
  node: SchemaNode,
  v: unknown,
  old: Old,
  at: string | typeof ROOT_PATH,
  out: StatusCause[],
  /** Where CEL rules' causes go (kube runs CEL after, and only without blocking schema errors). */
  celOut: StatusCause[] = out,
): void {
  const isRoot = at === ROOT_PATH;
  const path = isRoot ? "" : at;
  const ratcheted = old !== undefined && jsonEqual(v, old.value);
  if (ratcheted && !node.hasRules) return;
  if (v === null) {
    if (!node.schema.nullable && !ratcheted) {
      const want = node.schema.type ?? "object";
      out.push(typeInvalid(path, "null", `${inBody(path)} must be of type ${want}: "null"`));
    }
    return;
  }
  let typeOk = true;
  if (!ratcheted) {
    const found: StatusCause[] = [];
    typeOk = checkKeywords(node, v, path, found);
    appendAll(out, found);
  }
  if (!typeOk) return;
  if (isObject(v)) {
    const oldObj = old && isObject(old.value) ? old.value : undefined;
    for (const [key, child] of Object.entries(v)) {
      if (isRoot && (key === "metadata" || key === "apiVersion" || key === "kind")) {
        const prop = node.properties.get(key);
        if (key === "metadata" && prop && isObject(child)) validateMetadata(prop, child, path, out);
        continue;
      }
      const childOld: Old = oldObj && Object.hasOwn(oldObj, key) ? { value: oldObj[key] } : undefined;
      const prop = node.properties.get(key);
      if (prop) validateNode(prop, child, childOld, childPath(path, key), out, celOut);
      else if (node.additional && node.additional !== true)
        validateNode(node.additional, child, childOld, keyPath(path, key), out, celOut);
    }
  } else if (Array.isArray(v) && node.items) {
    const items = node.items;
    const correlate = oldItems(node, old);
    v.forEach((item, i) => {
      validateNode(items, item, correlate?.(item), indexPath(path, i), out, celOut);
    });
  }
  if (node.rules.length > 0) runRules(node, { value: v, old, ratcheted }, path, celOut);
}

/** The schema may constrain metadata.name / generateName only (kube rejects anything else in the CRD). */
function validateMetadata(
  node: SchemaNode,
  meta: Record<string, unknown>,
  path: string,
  out: StatusCause[],
): void {
  for (const key of ["name", "generateName"]) {
    const prop = node.properties.get(key);
    if (prop && typeof meta[key] === "string")
      validateNode(prop, meta[key], undefined, childPath(childPath(path, "metadata"), key), out);
  }
}
