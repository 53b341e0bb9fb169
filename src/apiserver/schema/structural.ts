/**
 * Structural schemas as kube-apiserver handles them for CRDs: the compiled schema tree, pruning of
 * unknown fields and structural defaulting. Pure functions over plain JSON; validation lives in
 * validate.ts, CEL in cel.ts. ObjectMeta at the root and in embedded resources is never pruned by the
 * schema (only reduced to ObjectMeta's own fields, as kube's decoding does).
 */
import { OBJECT_META_FIELDS } from "../object-meta.js";
import type { CompiledRule } from "./cel.js";

/** The subset of OpenAPI v3 + kube extensions a structural CRD schema may use. */
export interface JsonSchema {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: string;
  "x-kubernetes-validations"?: Array<{
    rule: string;
    message?: string;
    messageExpression?: string;
    fieldPath?: string;
    reason?: string;
    optionalOldSelf?: boolean;
  }>;
  [key: string]: unknown;
}

/** A schema node with everything that can be prepared once per CRD already prepared. */
export interface SchemaNode {
  readonly schema: JsonSchema;
  readonly properties: ReadonlyMap<string, SchemaNode>;
  /** Schema of additionalProperties; `true` keeps any value unvalidated. */
  readonly additional: SchemaNode | true | undefined;
  readonly items: SchemaNode | undefined;
  readonly pattern: RegExp | undefined;
  readonly rules: readonly CompiledRule[];
  readonly preserveUnknown: boolean;
  readonly embedded: boolean;
  /** True when this node or any descendant carries CEL rules (lets validation skip rule-free subtrees fast). */
  readonly hasRules: boolean;
  /**
   * The maps and lists that pruning and defaulting at this node built (a memo owned by the compiled schema):
   * pruning and defaulting give them back unchanged, so when one comes again — a stored object's subtree a
   * write did not touch — it is kept as it is instead of rebuilt. Sound because what is built here is never
   * changed in place afterwards (stored objects are immutable; copies are made before any change).
   */
  readonly settled: WeakSet<object>;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const clone = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

function pruneMetadata(meta: unknown): unknown {
  if (!isObject(meta)) return meta;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta)) if (OBJECT_META_FIELDS.has(k)) out[k] = v;
  return out;
}

const isSettled = (node: SchemaNode, value: unknown): boolean =>
  typeof value === "object" && value !== null && node.settled.has(value);

/**
 * Returns a copy of `value` without the fields the schema does not know. `resourceRoot` marks the object root
 * and embedded resources, where apiVersion/kind/metadata are always kept.
 */
function pruneValue(node: SchemaNode, value: unknown, resourceRoot: boolean): unknown {
  if (!resourceRoot && isSettled(node, value)) return value;
  if (Array.isArray(value)) return node.items ? value.map((v) => pruneValue(node.items!, v, false)) : value;
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  const isResource = resourceRoot || node.embedded;
  for (const [key, child] of Object.entries(value)) {
    if (isResource && (key === "apiVersion" || key === "kind")) {
      out[key] = child;
      continue;
    }
    if (isResource && key === "metadata") {
      out[key] = pruneMetadata(child);
      continue;
    }
    const prop = node.properties.get(key);
    if (prop) out[key] = pruneValue(prop, child, false);
    else if (node.additional === true) out[key] = child;
    else if (node.additional) out[key] = pruneValue(node.additional, child, false);
    else if (node.preserveUnknown) out[key] = child;
    // else: unknown field, dropped
  }
  return out;
}

/**
 * Applies `default:` values top-down (so a defaulted object gets its own nested defaults too), inside
 * array items and additionalProperties, and drops nulls of non-nullable fields that have no default —
 * kube's structural defaulting. Mutates `value` (always a private copy, or a settled value it leaves
 * alone). What it finishes below the root is settled at its node: pruning built it (an object, or a list
 * the schema describes) or it is a copy of a `default:`, which the CRD's compilation checked is pruned.
 */
function applyDefaults(node: SchemaNode, value: unknown, resourceRoot: boolean): void {
  if (!resourceRoot && isSettled(node, value)) return;
  if (Array.isArray(value)) {
    if (node.items) {
      for (const item of value) applyDefaults(node.items, item, false);
      if (!resourceRoot) node.settled.add(value);
    }
    return;
  }
  if (!isObject(value)) return;
  const isResource = resourceRoot || node.embedded;
  for (const [key, prop] of node.properties) {
    if (isResource && key === "metadata") continue;
    const has = Object.hasOwn(value, key);
    const current = value[key];
    if (!has || (current === null && !prop.schema.nullable)) {
      if (prop.schema.default !== undefined) value[key] = clone(prop.schema.default);
      else if (has) delete value[key];
    }
    if (Object.hasOwn(value, key)) applyDefaults(prop, value[key], false);
  }
  if (node.additional && node.additional !== true) {
    for (const [key, child] of Object.entries(value)) {
      if (node.properties.has(key)) continue;
      if (child === null && !node.additional.schema.nullable) {
        if (node.additional.schema.default !== undefined) value[key] = clone(node.additional.schema.default);
        else delete value[key];
      }
      if (Object.hasOwn(value, key)) applyDefaults(node.additional, value[key], false);
    }
  }
  if (!resourceRoot) node.settled.add(value);
}

/**
 * Pruning builds a fresh object wherever defaulting may write (every object and array the schema
 * describes), so `obj` is never mutated and needs no deep copy; subtrees kept as-is (preserved unknown
 * fields, metadata values) are shared with `obj` and never written to.
 */
export function pruneAndDefaultValue(root: SchemaNode, obj: unknown): unknown {
  const pruned = pruneValue(root, obj, true);
  applyDefaults(root, pruned, true);
  return pruned;
}

/** Prunes a `default:` value against its own node (kube requires defaults to be pruned already). */
export function pruneDefault(node: SchemaNode, value: unknown): unknown {
  return pruneValue(node, clone(value), node.embedded);
}
