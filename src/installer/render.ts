/**
 * The pure renderer of SPEC §6: a provider's components YAML (from its transport ConfigMap) → the objects
 * to apply. A transport ConfigMap is untrusted input, so the YAML is parsed within bounds (src/yaml.ts) and
 * `${VAR}` / `${VAR:=default}` variables are substituted into the parsed scalars, never into the text: a
 * value is always one scalar (a plain scalar still types as YAML would type it, so a variable can stand
 * for a number or a boolean), never a document. It keeps only kinds on the allowlist, replaces the image
 * placeholder from the images map, forces the CAPI namespace onto namespaced objects and onto the
 * references that must follow them (ServiceAccount subjects, webhook and conversion services), labels every
 * object with clusterctl's provider label, never sets a `caBundle` (OpenShift's service-ca injects it),
 * checks every object against the bounds (bounds.ts) and hashes each object and each provider revision.
 * Every problem is collected with the document and object it concerns; a provider renders completely or not
 * at all. No I/O and no clock here: the shell (apply.ts, cli.ts) does that.
 */
import { createHash } from "node:crypto";
import { type Document, isScalar, Parser, parseDocument, visit } from "yaml";
import type { KubeObject } from "../kube/object.js";
import { canonicalJson, isRecord } from "../kube/object.js";
import { appendAll } from "../lists.js";
import { documentValue, parseYamlDocuments } from "../yaml.js";
import { allowlistViolation, type Bound, violationsOf } from "./bounds.js";
import {
  ALLOWED_KINDS,
  COMPONENTS_YAML_BOUNDS,
  describeRef,
  groupOf,
  HASH_ANNOTATION,
  IMAGE_PLACEHOLDER,
  identityOf,
  isImageReference,
  type ObjectRef,
  PROVIDER_LABEL,
  type ProviderType,
  providerLabelValue,
  refOf,
  shown,
} from "./model.js";

/** One provider's components as read from its transport ConfigMap. */
export interface ProviderSource {
  name: string;
  type: ProviderType;
  version: string;
  /** `namespace/name` of the transport ConfigMap, for messages. */
  configMap: string;
  components: string;
}

/** Apply phases in order (SPEC §6): CRDs (then wait Established), everything else, Deployments. */
export type Phase = "crds" | "others" | "deployments";
export const PHASES: readonly Phase[] = ["crds", "others", "deployments"];

export interface RenderedObject {
  object: KubeObject;
  ref: ObjectRef;
  /** The document it came from, as messages name it: `ConfigMap ns/name, document 3 (Kind name)`. */
  source: string;
  phase: Phase;
  /** Hash of the object as rendered (also written to its HASH_ANNOTATION). */
  hash: string;
}

export interface RenderedProvider {
  name: string;
  type: ProviderType;
  version: string;
  configMap: string;
  /** clusterctl's provider label value. */
  label: string;
  /** Content hash of this provider revision: version + every rendered object. */
  revision: string;
  objects: RenderedObject[];
  /** Documents deliberately left out (Namespaces: components go to the CAPI namespace). */
  skipped: string[];
}

export type RenderResult =
  | { ok: true; provider: RenderedProvider }
  | { ok: false; name: string; type: ProviderType; label: string; configMap: string; errors: string[] };

export interface RenderContext {
  /** The CAPI namespace: every namespaced object goes here. */
  namespace: string;
  /** Images by provider label value (`cluster-api`, `infrastructure-aws`); every value may be a pod's image. */
  images: Readonly<Record<string, string>>;
  variables: Readonly<Record<string, string>>;
  /** Name of the images ConfigMap: an input of the installer, never an object it applies. */
  imagesConfigMap: string;
}

const hashOf = (value: unknown): string =>
  createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 16);

// ---------------------------------------------------------------------------------------------------------
// Variables

/** One `${…}` reference in a text: where it is, its name, and its operator and default when it has them. */
interface VariableReference {
  start: number;
  /** Just past the closing `}`. */
  end: number;
  name: string;
  operator?: ":=" | ":-" | "=" | "-";
  fallback?: string;
}

const isNameStart = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95; /* A-Z a-z _ */
const isNamePart = (c: number): boolean => isNameStart(c) || (c >= 48 && c <= 57); /* 0-9 */

/**
 * Every `${NAME}`, `${NAME:=default}`, `${NAME:-default}`, `${NAME=default}`, `${NAME-default}` in `text`, left
 * to right and not overlapping: what the pattern `/\$\{([A-Za-z_]\w*)(?:(:?[=-])([^}]*))?\}/g` finds, but in
 * one pass. The pattern looked for the closing `}` afresh from every `${NAME:=`, so a hostile scalar of
 * `${A:=` repeated with no `}` cost quadratic time (49 s at 200 KB, again on every resync). Here the position
 * of the next `}` is remembered: it is searched for again only once the scan has passed it, so each character
 * is read a bounded number of times.
 */
function variableReferences(text: string): VariableReference[] {
  const references: VariableReference[] = [];
  // The first `}` at or after the last position searched from; -1 when there is none after it at all.
  let close = -2;
  const closeFrom = (from: number): number => {
    if (close === -1 || close >= from) return close;
    close = text.indexOf("}", from);
    return close;
  };
  let at = text.indexOf("${");
  while (at !== -1) {
    let end = at + 2;
    if (end < text.length && isNameStart(text.charCodeAt(end))) {
      end++;
      while (end < text.length && isNamePart(text.charCodeAt(end))) end++;
      const name = text.slice(at + 2, end);
      if (text[end] === "}") {
        references.push({ start: at, end: end + 1, name });
        at = text.indexOf("${", end + 1);
        continue;
      }
      const operator =
        text.startsWith(":=", end) || text.startsWith(":-", end)
          ? text.slice(end, end + 2)
          : text[end] === "=" || text[end] === "-"
            ? text[end]
            : undefined;
      if (operator !== undefined) {
        const fallbackStart = end + operator.length;
        const closing = closeFrom(fallbackStart);
        if (closing !== -1) {
          references.push({
            start: at,
            end: closing + 1,
            name,
            operator: operator as VariableReference["operator"],
            fallback: text.slice(fallbackStart, closing),
          });
          at = text.indexOf("${", closing + 1);
          continue;
        }
      }
    }
    // No reference starts here; the next may start inside what was read (`${A${B}`), never before it.
    at = text.indexOf("${", at + 1);
  }
  return references;
}

/**
 * clusterctl's envsubst subset on one string: `${VAR}`, `${VAR:=default}` / `${VAR:-default}` (default when
 * unset or empty), `${VAR=default}` / `${VAR-default}` (default when unset). Reports every variable with no
 * value and no default, with its offset in `text`. With `maxLength`, a result longer than that is not built
 * (`tooLong`): a short string naming a long value many times must not exhaust memory.
 */
export function substituteVariables(
  text: string,
  variables: Readonly<Record<string, string>>,
  maxLength = Number.POSITIVE_INFINITY,
): { text: string; missing: { name: string; offset: number }[]; tooLong?: true } {
  const missing: { name: string; offset: number }[] = [];
  const replacement = (reference: VariableReference): string => {
    const { name, operator } = reference;
    const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
    if (operator === undefined) return value ?? text.slice(reference.start, reference.end);
    return value === undefined || (operator.startsWith(":") && value === "")
      ? (reference.fallback ?? "")
      : value;
  };
  const references = variableReferences(text);
  const replacements: string[] = [];
  let length = text.length;
  for (const reference of references) {
    const value = replacement(reference);
    replacements.push(value);
    length += value.length - (reference.end - reference.start);
    if (reference.operator === undefined && !Object.hasOwn(variables, reference.name))
      missing.push({ name: reference.name, offset: reference.start });
  }
  if (length > maxLength) return { text, missing, tooLong: true };
  const parts: string[] = [];
  let last = 0;
  for (const [i, reference] of references.entries()) {
    parts.push(text.slice(last, reference.start), replacements[i] ?? "");
    last = reference.end;
  }
  parts.push(text.slice(last));
  return { text: parts.join(""), missing };
}

/**
 * What a plain scalar written as `text` would be in YAML — but only ever a scalar: anything that would read
 * as structure, an alias or more than one line stays the string it is. The parser's syntax tree (built
 * without recursion) decides first, so a value like a pile of `[` never reaches the recursive composer.
 */
const typedScalar = (text: string): unknown => {
  if (/[\r\n]/.test(text)) return text;
  const tokens = [...new Parser().parse(text)];
  const documentToken = tokens.find((t) => t.type === "document");
  const value = documentToken?.type === "document" ? documentToken.value : undefined;
  if (value !== undefined && !(value.type === "scalar" || value.type.endsWith("-quoted-scalar"))) return text;
  const document = parseDocument(text, { schema: "core", resolveKnownTags: false, prettyErrors: false });
  if (document.errors.length > 0 || document.warnings.length > 0) return text;
  if (document.contents === null) return null;
  return isScalar(document.contents) ? document.contents.value : text;
};

/**
 * Substitutes variables into every scalar of a parsed document, in place. Quoted and block scalars stay
 * strings; a plain one takes the type its new text reads as. Stops once the document has grown by more
 * than `budget` characters.
 */
function substituteScalars(
  document: Document.Parsed,
  variables: Readonly<Record<string, string>>,
  budget: number,
): { missing: string[]; tooLong: boolean; grown: number } {
  const missing = new Set<string>();
  let grown = 0;
  let tooLong = false;
  visit(document, {
    Scalar(_key, node) {
      if (typeof node.value !== "string" || !node.value.includes("${")) return undefined;
      const out = substituteVariables(node.value, variables, budget - grown);
      for (const m of out.missing) missing.add(m.name);
      if (out.tooLong) {
        tooLong = true;
        return visit.BREAK;
      }
      grown += Math.max(0, out.text.length - node.value.length);
      node.value = node.type === "PLAIN" ? typedScalar(out.text) : out.text;
      return undefined;
    },
  });
  return { missing: [...missing], tooLong, grown };
}

// ---------------------------------------------------------------------------------------------------------
// Parsing

interface ParsedDocument {
  /** 1-based position among the non-empty documents, as an admin counts them. */
  index: number;
  object: KubeObject;
}

const documentLabel = (index: number, o: unknown): string => {
  if (!isRecord(o)) return `document ${index}`;
  const meta = isRecord(o.metadata) ? o.metadata : {};
  const name = typeof meta.name === "string" ? ` ${shown(meta.name)}` : "";
  return `document ${index} (${typeof o.kind === "string" ? shown(o.kind) : "no kind"}${name})`;
};

/** The message of a document outside a bound: the ConfigMap, the document and object, the bound. */
const outside = (where: string, bound: Bound, detail: string): string =>
  `${where}: outside bound ${bound}: ${detail}`;

/**
 * Splits and parses components YAML within COMPONENTS_YAML_BOUNDS, substituting variables into scalars;
 * every document must be an object with apiVersion, kind and name.
 */
function parseComponents(
  source: Pick<ProviderSource, "components" | "configMap">,
  variables: Readonly<Record<string, string>>,
): { ok: true; documents: ParsedDocument[] } | { ok: false; errors: string[] } {
  const where = `ConfigMap ${source.configMap}`;
  const bounds = COMPONENTS_YAML_BOUNDS;
  const yamlProblem = (problem: { bound: boolean; message: string }): string =>
    problem.bound ? outside(where, "yaml", problem.message) : `${where}: ${problem.message}`;
  const parsed = parseYamlDocuments(source.components, bounds);
  if (!parsed.ok) return { ok: false, errors: [yamlProblem(parsed.problem)] };

  const errors: string[] = [];
  const documents: ParsedDocument[] = [];
  let index = 0;
  // What variables add is bounded for the whole provider, not only per document: one value repeated over a
  // thousand documents would otherwise build a thousand times the per-document bound.
  let grownInAll = 0;
  for (const yamlDocument of parsed.documents) {
    const budget = bounds.maxDocumentBytes - grownInAll;
    const substituted = substituteScalars(yamlDocument.document, variables, budget);
    if (substituted.tooLong) {
      const at = `YAML document ${yamlDocument.index} line ${yamlDocument.line}`;
      if (grownInAll === 0) {
        errors.push(
          outside(
            where,
            "yaml",
            `${at}: expands (its aliases and variables included) beyond the bound of ${bounds.maxDocumentBytes} bytes of JSON`,
          ),
        );
        continue;
      }
      errors.push(
        outside(
          where,
          "yaml",
          `${at}: its variables grow the provider's documents by more than the bound of ${bounds.maxDocumentBytes} bytes in all`,
        ),
      );
      // The budget is spent: every later document would say the same.
      break;
    }
    grownInAll += substituted.grown;
    const read = documentValue(yamlDocument, bounds);
    if (!read.ok) {
      errors.push(yamlProblem(read.problem));
      continue;
    }
    const value = read.value;
    if (value === null || value === undefined) continue;
    index++;
    const label = documentLabel(index, value);
    if (substituted.missing.length > 0) {
      for (const name of substituted.missing)
        errors.push(`${where}, ${label}: variable \${${name}} has no value and no default`);
      continue;
    }
    if (!isRecord(value)) {
      errors.push(`${where}, ${label}: is not a Kubernetes object`);
      continue;
    }
    const meta = isRecord(value.metadata) ? value.metadata : {};
    const missingFields = [
      typeof value.apiVersion === "string" && value.apiVersion ? undefined : "apiVersion",
      typeof value.kind === "string" && value.kind ? undefined : "kind",
      typeof meta.name === "string" && meta.name ? undefined : "metadata.name",
    ].filter((f) => f !== undefined);
    if (missingFields.length > 0) {
      errors.push(`${where}, ${label}: missing ${missingFields.join(", ")}`);
      continue;
    }
    documents.push({ index, object: value as KubeObject });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, documents };
}

// ---------------------------------------------------------------------------------------------------------
// Transforms

const clone = <T>(v: T): T => structuredClone(v);

/** Replaces the placeholder in every string; returns how many it replaced. */
const replaceImages = (value: unknown, image: string | undefined): { value: unknown; count: number } => {
  let count = 0;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") {
      if (!v.includes(IMAGE_PLACEHOLDER)) return v;
      count++;
      return image === undefined ? v : v.replaceAll(IMAGE_PLACEHOLDER, image);
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  const out = walk(value);
  return { value: out, count };
};

/** A webhook `clientConfig`: service namespace forced, caBundle removed (service-ca injects it). */
const fixClientConfig = (clientConfig: unknown, namespace: string): unknown => {
  if (!isRecord(clientConfig)) return clientConfig;
  const { caBundle: _dropped, ...rest } = clientConfig;
  if (isRecord(rest.service)) rest.service = { ...rest.service, namespace };
  return rest;
};

/** The kind-specific references that must follow the objects into the CAPI namespace. */
const fixReferences = (o: KubeObject, namespace: string): KubeObject => {
  const group = groupOf(String(o.apiVersion));
  if (
    group === "rbac.authorization.k8s.io" &&
    (o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding")
  ) {
    const subjects = Array.isArray(o.subjects) ? o.subjects : undefined;
    if (subjects)
      o.subjects = subjects.map((s) =>
        isRecord(s) && s.kind === "ServiceAccount" ? { ...s, namespace } : s,
      );
  }
  if (
    group === "admissionregistration.k8s.io" &&
    (o.kind === "MutatingWebhookConfiguration" || o.kind === "ValidatingWebhookConfiguration") &&
    Array.isArray(o.webhooks)
  )
    o.webhooks = o.webhooks.map((w) =>
      isRecord(w) ? { ...w, clientConfig: fixClientConfig(w.clientConfig, namespace) } : w,
    );
  if (group === "apiextensions.k8s.io" && o.kind === "CustomResourceDefinition" && isRecord(o.spec)) {
    const conversion = o.spec.conversion;
    if (isRecord(conversion) && isRecord(conversion.webhook))
      o.spec = {
        ...o.spec,
        conversion: {
          ...conversion,
          webhook: {
            ...conversion.webhook,
            clientConfig: fixClientConfig(conversion.webhook.clientConfig, namespace),
          },
        },
      };
  }
  if (group === "apiregistration.k8s.io" && o.kind === "APIService" && isRecord(o.spec)) {
    const { caBundle: _dropped, ...spec } = o.spec;
    o.spec = isRecord(spec.service) ? { ...spec, service: { ...spec.service, namespace } } : spec;
  }
  return o;
};

const SERVER_METADATA = [
  "resourceVersion",
  "uid",
  "creationTimestamp",
  "generation",
  "managedFields",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
] as const;

const phaseOf = (o: KubeObject): Phase => {
  const group = groupOf(String(o.apiVersion));
  if (group === "apiextensions.k8s.io" && o.kind === "CustomResourceDefinition") return "crds";
  if (group === "apps" && o.kind === "Deployment") return "deployments";
  return "others";
};

/**
 * Details spelled out per bound a document breaks; the rest are counted. A hostile document breaks a bound as
 * often as it likes (30,000 containers, each with a refused image), and every message ends up in the
 * ClusterOperator's status, which must stay writable and readable.
 */
const MAX_DETAILS_PER_BOUND = 5;

/** One message per bound a document breaks, its first details joined, bounds in the order first broken. */
const boundMessages = (where: string, violations: readonly { bound: Bound; detail: string }[]): string[] => {
  const byBound = new Map<Bound, { details: string[]; count: number }>();
  for (const v of violations) {
    const entry = byBound.get(v.bound) ?? { details: [], count: 0 };
    byBound.set(v.bound, entry);
    entry.count++;
    if (entry.details.length < MAX_DETAILS_PER_BOUND) entry.details.push(v.detail);
  }
  return [...byBound].map(([bound, { details, count }]) => {
    const more = count - details.length;
    return outside(where, bound, more > 0 ? `${details.join("; ")}; and ${more} more` : details.join("; "));
  });
};

/** Renders one provider whose documents parsed, and checks it against every bound. */
function renderDocuments(
  source: ProviderSource,
  documents: readonly ParsedDocument[],
  context: RenderContext,
): RenderResult {
  const label = providerLabelValue(source.type, source.name);
  const where = `ConfigMap ${source.configMap}`;
  const errors: string[] = [];
  const objects: RenderedObject[] = [];
  const skipped: string[] = [];
  const seen = new Map<string, number>();
  const image = Object.hasOwn(context.images, label) ? context.images[label] : undefined;

  for (const { index, object: input } of documents) {
    const docLabel = `${where}, ${documentLabel(index, input)}`;
    const apiVersion = String(input.apiVersion);
    const kind = String(input.kind);
    if (groupOf(apiVersion) === "" && kind === "Namespace") {
      skipped.push(
        `Namespace ${shown(String(input.metadata?.name))} (components are installed in ${context.namespace})`,
      );
      continue;
    }
    const refused = allowlistViolation(apiVersion, kind);
    if (refused) {
      errors.push(outside(docLabel, refused.bound, refused.detail));
      continue;
    }
    const scope = ALLOWED_KINDS.get(`${groupOf(apiVersion)}/${kind}`);
    const images = replaceImages(clone(input), image);
    if (images.count > 0 && image === undefined) {
      errors.push(
        `${docLabel}: uses the image placeholder ${IMAGE_PLACEHOLDER} but the images ConfigMap has no key "${label}"`,
      );
      continue;
    }
    if (images.count > 0 && image !== undefined && !isImageReference(image)) {
      errors.push(
        outside(
          docLabel,
          "images",
          `the images ConfigMap's value for "${label}" is not a valid image reference`,
        ),
      );
      continue;
    }
    const o = images.value as KubeObject;
    delete o.status;
    const metadata = { ...(isRecord(o.metadata) ? o.metadata : {}) };
    for (const f of SERVER_METADATA) delete metadata[f];
    if (scope === "Namespaced") metadata.namespace = context.namespace;
    else delete metadata.namespace;
    metadata.labels = { ...(isRecord(metadata.labels) ? metadata.labels : {}), [PROVIDER_LABEL]: label };
    o.metadata = metadata;
    fixReferences(o, context.namespace);

    const ref = refOf(o);
    const identity = identityOf(ref);
    const earlier = seen.get(identity);
    if (earlier !== undefined) {
      errors.push(`${docLabel}: ${describeRef(ref)} is also document ${earlier}`);
      continue;
    }
    seen.set(identity, index);
    const hash = hashOf(o);
    o.metadata = {
      ...metadata,
      annotations: {
        ...(isRecord(metadata.annotations) ? metadata.annotations : {}),
        [HASH_ANNOTATION]: hash,
      },
    };
    objects.push({ object: o, ref, source: docLabel, phase: phaseOf(o), hash });
  }

  const violations = violationsOf(
    objects.map((o) => o.object),
    {
      type: source.type,
      namespace: context.namespace,
      images: new Set(Object.values(context.images).filter(isImageReference)),
      imagesConfigMap: context.imagesConfigMap,
    },
  );
  for (const [i, o] of objects.entries()) appendAll(errors, boundMessages(o.source, violations[i] ?? []));
  errors.sort((a, b) => documentNumber(a) - documentNumber(b));

  if (errors.length === 0 && objects.length === 0)
    errors.push(`${where}: the components contain no objects to install`);
  if (errors.length > 0)
    return { ok: false, name: source.name, type: source.type, label, configMap: source.configMap, errors };
  return {
    ok: true,
    provider: {
      name: source.name,
      type: source.type,
      version: source.version,
      configMap: source.configMap,
      label,
      revision: hashOf({ version: source.version, objects: objects.map((x) => x.object) }),
      objects,
      skipped,
    },
  };
}

/** Messages in document order (the bound checks run after the per-document ones). */
const documentNumber = (message: string): number => Number(/, document (\d+) /.exec(message)?.[1] ?? 0);

/** Parses and renders every provider. An object claimed by two providers fails the second one. */
export function renderProviders(sources: readonly ProviderSource[], context: RenderContext): RenderResult[] {
  const owners = new Map<string, string>();
  return sources.map((source): RenderResult => {
    const label = providerLabelValue(source.type, source.name);
    const result = parseComponents(source, context.variables);
    if (!result.ok)
      return {
        ok: false,
        name: source.name,
        type: source.type,
        label,
        configMap: source.configMap,
        errors: result.errors,
      };
    const rendered = renderDocuments(source, result.documents, context);
    if (!rendered.ok) return rendered;
    const clashes: string[] = [];
    for (const o of rendered.provider.objects) {
      const owner = owners.get(identityOf(o.ref));
      if (owner)
        clashes.push(`ConfigMap ${source.configMap}: ${describeRef(o.ref)} is also in provider ${owner}`);
    }
    if (clashes.length > 0)
      return {
        ok: false,
        name: source.name,
        type: source.type,
        label,
        configMap: source.configMap,
        errors: clashes,
      };
    for (const o of rendered.provider.objects) owners.set(identityOf(o.ref), label);
    return rendered;
  });
}
