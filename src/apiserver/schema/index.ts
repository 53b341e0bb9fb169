/**
 * The local API server's CRD engine (SPEC §8): `compileCrd` checks a CustomResourceDefinition the way
 * kube-apiserver's CRD validation does (the parts that matter here), prepares every version's structural
 * schema once — regexes, defaults and CEL programs — and returns the per-version operations the core's
 * REST layer calls: prune + default, validate (schema keywords + CEL, incl. transition rules) and the
 * OpenAPI schema. Storage, REST and the 422 Status text live in the core, not here.
 */
import { DNS_LABEL, DNS_SUBDOMAIN, type KubeObject } from "../../kube/object.js";
import { appendAll } from "../../lists.js";
import type { ListType } from "../managed-fields.js";
import { invalid, required, type StatusCause } from "./causes.js";
import { compileRules, type UnsupportedRule } from "./cel.js";
import {
  isObject,
  type JsonSchema,
  pruneAndDefaultValue,
  pruneDefault,
  type SchemaNode,
} from "./structural.js";
import { ROOT_PATH, validateNode } from "./validate.js";

/** Schema errors after which kube does not run CEL rules (apiextensions `hasBlockingErr`). */
const BLOCKING_CAUSES = new Set([
  "FieldValueNotSupported",
  "FieldValueRequired",
  "FieldValueTooLong",
  "FieldValueTooMany",
  "FieldValueTypeInvalid",
]);

/** kube's cause when it skipped CEL rules: a field.Invalid with a nil path, shown as `<nil>`. */
const CEL_SKIPPED: StatusCause = {
  reason: "FieldValueInvalid",
  field: "<nil>",
  message:
    'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};

export type { StatusCause } from "./causes.js";
export type { UnsupportedRule } from "./cel.js";
export type { JsonSchema } from "./structural.js";

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

export interface CompiledVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources: { status: boolean; scale?: ScaleSubresource };
  additionalPrinterColumns: ReadonlyArray<PrinterColumn>;
}

export interface CompiledCrd {
  readonly crd: KubeObject;
  readonly group: string;
  readonly scope: "Namespaced" | "Cluster";
  readonly names: {
    plural: string;
    singular: string;
    kind: string;
    listKind: string;
    shortNames: string[];
    categories: string[];
  };
  readonly versions: ReadonlyArray<CompiledVersion>;
  /** prune unknown fields (honouring x-kubernetes-preserve-unknown-fields, embedded resources' metadata) and apply structural defaults; returns a new object */
  pruneAndDefault(version: string, obj: KubeObject): KubeObject;
  /** schema validation (types, enums, required, patterns/formats you can, min/max, maxLength, etc.) + x-kubernetes-validations CEL rules, incl. transition rules with oldSelf (evaluated only on UPDATE when the old value exists) */
  validate(version: string, obj: KubeObject, oldObj: KubeObject | undefined): StatusCause[];
  /** OpenAPI v3 schema of a version (for the core's /openapi answers) */
  openApiSchema(version: string): unknown;
  /**
   * `x-kubernetes-list-type` set/map of the list at a dotted field path (`spec.entries`, list elements not
   * in the path), for server-side apply's merges; undefined for atomic lists and anything else.
   */
  listType(version: string, path: string): ListType | undefined;
  /** Optional extra: CEL rules skipped because they need kube CEL libraries this engine lacks (log them). */
  readonly unsupportedRules?: ReadonlyArray<UnsupportedRule>;
}

type CompileResult = { ok: true; value: CompiledCrd } | { ok: false; causes: StatusCause[] };

const VERSION_NAME = /^v\d+((alpha|beta)\d+)?$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s) => typeof s === "string") : []);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

function compilePattern(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, "u");
  } catch {
    try {
      return new RegExp(pattern);
    } catch {
      return undefined;
    }
  }
}

/**
 * Builds the node tree, collecting structural and CEL compile errors with CRD field paths. Nodes are
 * built bottom-up so `hasRules` is known when validation walks them.
 */
function buildNode(
  schema: JsonSchema,
  at: string,
  errors: StatusCause[],
  isRoot: boolean,
  unsupported: UnsupportedRule[],
): SchemaNode {
  const properties = new Map<string, SchemaNode>();
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const childAt = `${at}.properties[${key}]`;
    if (!isObject(child)) {
      errors.push(invalid(childAt, "", "must be a schema object"));
      continue;
    }
    properties.set(key, buildNode(child as JsonSchema, childAt, errors, false, unsupported));
  }
  const structuralTypeFree =
    schema["x-kubernetes-preserve-unknown-fields"] === true || schema["x-kubernetes-int-or-string"] === true;
  if (!isRoot && !schema.type && !structuralTypeFree) {
    errors.push(required(`${at}.type`, "must not be empty for specified object fields"));
  }
  if (isRoot && schema.type !== "object") {
    errors.push(invalid(`${at}.type`, schema.type ?? "", "must be object at the root"));
  }
  let additional: SchemaNode | true | undefined;
  if (schema.additionalProperties === true) additional = true;
  else if (isObject(schema.additionalProperties)) {
    if (schema.properties && Object.keys(schema.properties).length > 0)
      errors.push(
        invalid(
          `${at}.additionalProperties`,
          "object",
          "additionalProperties and properties are mutual exclusive",
        ),
      );
    additional = buildNode(
      schema.additionalProperties as JsonSchema,
      `${at}.additionalProperties`,
      errors,
      false,
      unsupported,
    );
  }
  const items = isObject(schema.items)
    ? buildNode(schema.items as JsonSchema, `${at}.items`, errors, false, unsupported)
    : undefined;
  if (schema.type === "array" && !items) errors.push(required(`${at}.items`, "must be specified"));
  let pattern: RegExp | undefined;
  if (typeof schema.pattern === "string") {
    pattern = compilePattern(schema.pattern);
    if (!pattern) errors.push(invalid(`${at}.pattern`, schema.pattern, "must be a valid regular expression"));
  }
  const compiled = compileRules(schema, at);
  for (const e of compiled.errors) errors.push(invalid(e.field, e.rule, e.error));
  appendAll(unsupported, compiled.unsupported);
  const node: SchemaNode = {
    schema,
    properties,
    additional,
    items,
    pattern,
    rules: compiled.rules,
    preserveUnknown: schema["x-kubernetes-preserve-unknown-fields"] === true,
    embedded: schema["x-kubernetes-embedded-resource"] === true,
    hasRules:
      compiled.rules.length > 0 ||
      [...properties.values()].some((p) => p.hasRules) ||
      (additional !== undefined && additional !== true && additional.hasRules) ||
      (items?.hasRules ?? false),
    settled: new WeakSet(),
  };
  if (schema.default !== undefined) {
    // Defaults must already be pruned (kube rejects the CRD otherwise); check once here.
    const pruned = pruneDefault(node, schema.default);
    if (JSON.stringify(pruned) !== JSON.stringify(schema.default))
      errors.push(invalid(`${at}.default`, schema.default, "must not have unknown fields"));
    const found: StatusCause[] = [];
    validateNode({ ...node, rules: [], hasRules: false }, schema.default, undefined, `${at}.default`, found);
    for (const f of found) errors.push({ ...f, message: f.message });
  }
  return node;
}

const standardProperties: Record<string, JsonSchema> = {
  apiVersion: { type: "string" },
  kind: { type: "string" },
  metadata: { type: "object" },
};

export function compileCrd(crd: KubeObject): CompileResult {
  const causes: StatusCause[] = [];
  const spec = isObject(crd.spec) ? crd.spec : {};
  const group = str(spec.group);
  const namesIn = isObject(spec.names) ? spec.names : {};
  const plural = str(namesIn.plural);
  const kind = str(namesIn.kind);
  const names = {
    plural,
    singular: str(namesIn.singular) || kind.toLowerCase(),
    kind,
    listKind: str(namesIn.listKind) || (kind ? `${kind}List` : ""),
    shortNames: strings(namesIn.shortNames),
    categories: strings(namesIn.categories),
  };
  if (!group) causes.push(required("spec.group"));
  else if (!DNS_SUBDOMAIN.test(group) || !group.includes("."))
    causes.push(invalid("spec.group", group, "should be a domain with at least one dot"));
  if (!plural) causes.push(required("spec.names.plural"));
  else if (!DNS_LABEL.test(plural))
    causes.push(invalid("spec.names.plural", plural, "a lowercase RFC 1123 label"));
  if (!kind) causes.push(required("spec.names.kind"));
  const expectedName = `${plural}.${group}`;
  if (str(crd.metadata?.name) !== expectedName)
    causes.push(
      invalid("metadata.name", str(crd.metadata?.name), 'must be spec.names.plural+"."+spec.group'),
    );
  const scope = spec.scope;
  if (scope !== "Namespaced" && scope !== "Cluster")
    causes.push(
      scope === undefined
        ? required("spec.scope")
        : {
            reason: "FieldValueNotSupported",
            field: "spec.scope",
            message: `Unsupported value: ${JSON.stringify(scope)}: supported values: "Cluster", "Namespaced"`,
          },
    );
  const versionsIn = Array.isArray(spec.versions) ? spec.versions.filter(isObject) : [];
  if (versionsIn.length === 0)
    causes.push(required("spec.versions", "must have exactly one version marked as storage version"));
  const storageCount = versionsIn.filter((v) => v.storage === true).length;
  if (versionsIn.length > 0 && storageCount !== 1)
    causes.push(
      invalid("spec.versions", storageCount, "must have exactly one version marked as storage version"),
    );

  const roots = new Map<string, SchemaNode>();
  const unsupportedRules: UnsupportedRule[] = [];
  const schemas = new Map<string, JsonSchema>();
  const versions: CompiledVersion[] = versionsIn.map((v, i) => {
    const at = `spec.versions[${i}]`;
    const name = str(v.name);
    if (!name || !VERSION_NAME.test(name))
      causes.push(invalid(`${at}.name`, name, "must be a DNS-1035 label"));
    const schemaIn =
      isObject(v.schema) && isObject(v.schema.openAPIV3Schema)
        ? (v.schema.openAPIV3Schema as JsonSchema)
        : undefined;
    if (!schemaIn) causes.push(required(`${at}.schema.openAPIV3Schema`, "schemas are required"));
    else {
      roots.set(name, buildNode(schemaIn, `${at}.schema.openAPIV3Schema`, causes, true, unsupportedRules));
      schemas.set(name, schemaIn);
    }
    const sub = isObject(v.subresources) ? v.subresources : {};
    const scaleIn = isObject(sub.scale) ? sub.scale : undefined;
    let scale: ScaleSubresource | undefined;
    if (scaleIn) {
      scale = {
        specReplicasPath: str(scaleIn.specReplicasPath),
        statusReplicasPath: str(scaleIn.statusReplicasPath),
      };
      for (const [field, under] of [
        ["specReplicasPath", ".spec"],
        ["statusReplicasPath", ".status"],
      ] as const)
        if (!scale[field].startsWith(`${under}.`))
          causes.push(
            invalid(
              `${at}.subresources.scale.${field}`,
              scale[field],
              `should be a json path under ${under}`,
            ),
          );
      if (typeof scaleIn.labelSelectorPath === "string") scale.labelSelectorPath = scaleIn.labelSelectorPath;
    }
    const columns = (Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : [])
      .filter(isObject)
      .map((c): PrinterColumn => {
        const col: PrinterColumn = { name: str(c.name), type: str(c.type), jsonPath: str(c.jsonPath) };
        if (typeof c.description === "string") col.description = c.description;
        if (typeof c.priority === "number") col.priority = c.priority;
        if (typeof c.format === "string") col.format = c.format;
        return col;
      });
    return {
      name,
      served: v.served === true,
      storage: v.storage === true,
      subresources: { status: isObject(sub.status), ...(scale ? { scale } : {}) },
      additionalPrinterColumns: columns,
    };
  });
  if (causes.length > 0) return { ok: false, causes };

  const rootOf = (version: string): SchemaNode => {
    const root = roots.get(version);
    if (!root) throw new Error(`CRD ${expectedName} has no version ${version}`);
    return root;
  };
  const frozenCrd = structuredClone(crd);
  const hasRules = new Map(
    [...schemas.entries()].map(([version, schema]) => [
      version,
      JSON.stringify(schema).includes('"x-kubernetes-validations"'),
    ]),
  );
  const value: CompiledCrd = {
    crd: frozenCrd,
    group,
    scope: scope as "Namespaced" | "Cluster",
    names,
    versions,
    unsupportedRules,
    pruneAndDefault: (version, obj) => pruneAndDefaultValue(rootOf(version), obj) as KubeObject,
    listType: (version, path) => {
      let node: SchemaNode | undefined = rootOf(version);
      for (const name of path.split(".")) {
        // A name below a list is a field of its elements.
        while (node?.items) node = node.items;
        const next: SchemaNode | true | undefined = node?.properties.get(name) ?? node?.additional;
        node = next === true ? undefined : next;
        if (!node) return undefined;
      }
      const type = node?.schema["x-kubernetes-list-type"];
      if (type === "set") return { type: "set" };
      if (type === "map") return { type: "map", keys: node?.schema["x-kubernetes-list-map-keys"] ?? [] };
      if (node?.schema["x-kubernetes-map-type"] === "atomic") return { type: "atomic" };
      return undefined;
    },
    validate: (version, obj, oldObj) => {
      const out: StatusCause[] = [];
      const cel: StatusCause[] = [];
      validateNode(rootOf(version), obj, oldObj ? { value: oldObj } : undefined, ROOT_PATH, out, cel);
      if (!hasRules.get(version)) return out;
      // kube's customResourceStrategy: CEL runs only without a blocking schema error; with one it says so.
      return out.some((c) => BLOCKING_CAUSES.has(c.reason)) ? [...out, CEL_SKIPPED] : [...out, ...cel];
    },
    openApiSchema: (version) => {
      const schema = structuredClone(schemas.get(version));
      if (!schema) return undefined;
      return {
        ...schema,
        properties: { ...standardProperties, ...(schema.properties ?? {}), metadata: { type: "object" } },
        "x-kubernetes-group-version-kind": [{ group, version, kind }],
      };
    },
  };
  return { ok: true, value };
}
