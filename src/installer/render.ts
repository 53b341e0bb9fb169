/**
 * The pure renderer of SPEC §6: a provider's components YAML (from its transport ConfigMap) → the objects
 * to apply. It substitutes `${VAR}` / `${VAR:=default}` variables on the text (as clusterctl does, so a
 * variable can stand for a number or a boolean), replaces the image placeholder from the images map,
 * forces the CAPI namespace onto namespaced objects and onto the references that must follow them
 * (ServiceAccount subjects, webhook and conversion services), labels every object with clusterctl's
 * provider label, never sets a `caBundle` (OpenShift's service-ca injects it), and hashes each object and
 * each provider revision. Every problem is collected with the document and object it concerns; a provider
 * renders completely or not at all. No I/O and no clock here: the shell (apply.ts, cli.ts) does that.
 */
import { createHash } from "node:crypto";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../kube/object.js";
import { canonicalJson, isRecord } from "../kube/object.js";
import {
  describeRef,
  groupOf,
  HASH_ANNOTATION,
  IMAGE_PLACEHOLDER,
  identityOf,
  type ObjectRef,
  PROVIDER_LABEL,
  type ProviderType,
  providerLabelValue,
  refOf,
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

export type Scope = "Namespaced" | "Cluster";
/** Apply phases in order (SPEC §6): CRDs (then wait Established), everything else, Deployments. */
export type Phase = "crds" | "others" | "deployments";
export const PHASES: readonly Phase[] = ["crds", "others", "deployments"];

export interface RenderedObject {
  object: KubeObject;
  ref: ObjectRef;
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
  /** Images by provider label value (`cluster-api`, `infrastructure-aws`). */
  images: Readonly<Record<string, string>>;
  variables: Readonly<Record<string, string>>;
  /** Scopes by `group/kind` learned from the API server (discovery); built-ins and CRDs in the set need none. */
  scopes?: ReadonlyMap<string, Scope>;
}

/** Scopes of the kinds provider components are made of, so rendering needs no API server for them. */
const BUILT_IN_SCOPES: ReadonlyMap<string, Scope> = new Map<string, Scope>([
  ["/Namespace", "Cluster"],
  ["/ServiceAccount", "Namespaced"],
  ["/Service", "Namespaced"],
  ["/ConfigMap", "Namespaced"],
  ["/Secret", "Namespaced"],
  ["apps/Deployment", "Namespaced"],
  ["apps/DaemonSet", "Namespaced"],
  ["apps/StatefulSet", "Namespaced"],
  ["policy/PodDisruptionBudget", "Namespaced"],
  ["networking.k8s.io/NetworkPolicy", "Namespaced"],
  ["rbac.authorization.k8s.io/Role", "Namespaced"],
  ["rbac.authorization.k8s.io/RoleBinding", "Namespaced"],
  ["rbac.authorization.k8s.io/ClusterRole", "Cluster"],
  ["rbac.authorization.k8s.io/ClusterRoleBinding", "Cluster"],
  ["apiextensions.k8s.io/CustomResourceDefinition", "Cluster"],
  ["admissionregistration.k8s.io/MutatingWebhookConfiguration", "Cluster"],
  ["admissionregistration.k8s.io/ValidatingWebhookConfiguration", "Cluster"],
  ["admissionregistration.k8s.io/ValidatingAdmissionPolicy", "Cluster"],
  ["admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding", "Cluster"],
  ["scheduling.k8s.io/PriorityClass", "Cluster"],
  ["apiregistration.k8s.io/APIService", "Cluster"],
]);

export const scopeKey = (apiVersion: string, kind: string): string => `${groupOf(apiVersion)}/${kind}`;

export const hashOf = (value: unknown): string =>
  createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 16);

// ---------------------------------------------------------------------------------------------------------
// Variables

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[=-])([^}]*))?\}/g;

/**
 * clusterctl's envsubst subset: `${VAR}`, `${VAR:=default}` / `${VAR:-default}` (default when unset or
 * empty), `${VAR=default}` / `${VAR-default}` (default when unset). Reports every variable with no value
 * and no default, with its offset in `text`.
 */
export function substituteVariables(
  text: string,
  variables: Readonly<Record<string, string>>,
): { text: string; missing: { name: string; offset: number }[] } {
  const missing: { name: string; offset: number }[] = [];
  const out = text.replace(VARIABLE, (whole, name: string, op: string | undefined, def: string, offset) => {
    const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
    if (op === undefined) {
      if (value === undefined) {
        missing.push({ name, offset: offset as number });
        return whole;
      }
      return value;
    }
    const emptyCounts = op.startsWith(":");
    return value === undefined || (emptyCounts && value === "") ? def : value;
  });
  return { text: out, missing };
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
  const name = typeof meta.name === "string" ? ` ${meta.name}` : "";
  return `document ${index} (${typeof o.kind === "string" ? o.kind : "no kind"}${name})`;
};

/** Splits and parses components YAML; every document must be an object with apiVersion, kind and name. */
export function parseComponents(
  source: Pick<ProviderSource, "components" | "configMap">,
  variables: Readonly<Record<string, string>>,
): { ok: true; documents: ParsedDocument[] } | { ok: false; errors: string[] } {
  const where = `ConfigMap ${source.configMap}`;
  const raw = parseAllDocuments(source.components);
  const errors: string[] = [];
  for (const [i, doc] of raw.entries()) {
    const e = doc.errors[0];
    if (e)
      errors.push(
        `${where}: YAML document ${i + 1} line ${e.linePos?.[0].line ?? "?"}: ${firstLine(e.message)}`,
      );
  }
  if (errors.length > 0) return { ok: false, errors };

  const { text, missing } = substituteVariables(source.components, variables);
  if (missing.length > 0) {
    let index = 0;
    const located = raw.map((doc) => {
      const value: unknown = doc.toJS();
      if (value !== null && value !== undefined) index++;
      return { start: doc.range[0], end: doc.range[2], label: documentLabel(index, value) };
    });
    for (const m of missing) {
      const doc = located.find((d) => m.offset >= d.start && m.offset < d.end);
      errors.push(
        `${where}${doc ? `, ${doc.label}` : ""}: variable \${${m.name}} has no value and no default`,
      );
    }
    return { ok: false, errors };
  }

  const documents: ParsedDocument[] = [];
  for (const [i, doc] of parseAllDocuments(text).entries()) {
    const e = doc.errors[0];
    if (e) {
      errors.push(
        `${where}: YAML document ${i + 1} does not parse after variable substitution (line ${e.linePos?.[0].line ?? "?"}): ${firstLine(e.message)}`,
      );
      continue;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    const index = documents.length + 1;
    const label = documentLabel(index, value);
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

const firstLine = (s: string): string => s.split("\n")[0] ?? s;

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

/** Scopes the components themselves define (their CRDs), by `group/kind`. */
export function crdScopes(documents: readonly { object: KubeObject }[]): Map<string, Scope> {
  const out = new Map<string, Scope>();
  for (const { object } of documents) {
    if (
      object.kind !== "CustomResourceDefinition" ||
      groupOf(String(object.apiVersion)) !== "apiextensions.k8s.io"
    )
      continue;
    const spec = isRecord(object.spec) ? object.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    if (typeof spec.group === "string" && typeof names.kind === "string")
      out.set(`${spec.group}/${names.kind}`, spec.scope === "Cluster" ? "Cluster" : "Namespaced");
  }
  return out;
}

/** Kinds in `documents` whose scope neither the built-in table nor `known` gives: the shell asks discovery. */
export function kindsNeedingScope(
  documents: readonly { object: KubeObject }[],
  known: ReadonlyMap<string, Scope>,
): { apiVersion: string; kind: string }[] {
  const seen = new Map<string, { apiVersion: string; kind: string }>();
  for (const { object } of documents) {
    const key = scopeKey(String(object.apiVersion), String(object.kind));
    if (!BUILT_IN_SCOPES.has(key) && !known.has(key) && !seen.has(key))
      seen.set(key, { apiVersion: String(object.apiVersion), kind: String(object.kind) });
  }
  return [...seen.values()];
}

/** Renders one provider whose documents parsed; `scopes` includes the CRD scopes of every provider. */
export function renderDocuments(
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
    const docLabel = documentLabel(index, input);
    const apiVersion = String(input.apiVersion);
    const kind = String(input.kind);
    if (groupOf(apiVersion) === "" && kind === "Namespace") {
      skipped.push(
        `Namespace ${String(input.metadata?.name)} (components are installed in ${context.namespace})`,
      );
      continue;
    }
    const key = scopeKey(apiVersion, kind);
    const scope = BUILT_IN_SCOPES.get(key) ?? context.scopes?.get(key);
    if (!scope) {
      errors.push(
        `${where}, ${docLabel}: the API server does not serve ${kind} in ${apiVersion} and no CRD in the components defines it`,
      );
      continue;
    }
    const images = replaceImages(clone(input), image);
    if (images.count > 0 && image === undefined) {
      errors.push(
        `${where}, ${docLabel}: uses the image placeholder ${IMAGE_PLACEHOLDER} but the images ConfigMap has no key "${label}"`,
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
      errors.push(`${where}, ${docLabel}: ${describeRef(ref)} is also document ${earlier}`);
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
    objects.push({ object: o, ref, phase: phaseOf(o), hash });
  }
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

/**
 * Parses and renders every provider. `scopes` comes from discovery for kinds neither built in nor defined
 * by a CRD among the components (see `kindsNeedingScope`). An object claimed by two providers fails the
 * second one.
 */
export function renderProviders(sources: readonly ProviderSource[], context: RenderContext): RenderResult[] {
  const parsed = sources.map((s) => ({ source: s, result: parseComponents(s, context.variables) }));
  const scopes = new Map(context.scopes ?? []);
  for (const p of parsed)
    if (p.result.ok) for (const [k, v] of crdScopes(p.result.documents)) scopes.set(k, v);
  const owners = new Map<string, string>();
  return parsed.map(({ source, result }): RenderResult => {
    const label = providerLabelValue(source.type, source.name);
    if (!result.ok)
      return {
        ok: false,
        name: source.name,
        type: source.type,
        label,
        configMap: source.configMap,
        errors: result.errors,
      };
    const rendered = renderDocuments(source, result.documents, { ...context, scopes });
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
