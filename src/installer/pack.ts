/**
 * `pack-provider` as a pure function (SPEC §6, manifests-gen style): a provider's released components YAML →
 * its transport ConfigMap. cert-manager does not run on OpenShift, so cert-manager objects are rewritten to
 * OpenShift service-ca: `Certificate`s become the serving-cert annotation on the Service their DNS names
 * point at, `Issuer`s disappear, `cert-manager.io/inject-ca-from` becomes `inject-cabundle`, and any
 * `caBundle` is dropped (service-ca injects it). Documents are edited as YAML nodes, not re-serialised, so
 * `${VAR}` placeholders keep their plain style and substitute to numbers and booleans later. The input is
 * parsed within the shared YAML bounds (src/yaml.ts: an alias bomb is refused, not expanded). Several files are
 * packed in order into one ConfigMap. Refuses input that holds no Kubernetes object, or a document that is not
 * one (the installer would refuse it only once it is in the cluster), and a ConfigMap over 1 MiB, the API
 * server's limit. The command-line wrapper is in cli.ts.
 */
import type { Document } from "yaml";
import type { KubeObject } from "../kube/object.js";
import { DNS_LABEL, DNS_SUBDOMAIN, isRecord } from "../kube/object.js";
import { appendAll } from "../lists.js";
import {
  documentText,
  documentValue,
  type ParsedYamlDocument,
  parseYamlDocuments,
  stringifyYaml,
  type YamlProblem,
} from "../yaml.js";
import {
  COMPONENTS_KEY,
  CORE_PROVIDER_NAME,
  MAX_CONFIGMAP_BYTES,
  PROVIDER_TYPES,
  type ProviderType,
  providerLabelValue,
  SERVICE_CA,
  TRANSPORT_LABELS,
} from "./model.js";

export { MAX_CONFIGMAP_BYTES, SERVICE_CA };

const CERT_MANAGER_GROUP = "cert-manager.io";
const INJECT_CA_ANNOTATIONS = ["cert-manager.io/inject-ca-from", "cert-manager.io/inject-ca-from-secret"];

/** One components file; `path` names it in messages. */
export interface ComponentsFile {
  path: string;
  text: string;
}

export interface PackInput {
  name: string;
  type: string;
  version: string;
  namespace: string;
  /** Default `capi-provider-<provider label value>` (`capi-provider-infrastructure-aws`). */
  configMapName?: string;
  /** The components YAML: one text (named "components" in messages), or files packed in this order. */
  components: string | readonly ComponentsFile[];
}

export type PackResult =
  | { ok: true; configMap: KubeObject; yaml: string; bytes: number; warnings: string[] }
  | {
      ok: false;
      error: string;
      /** The arguments, not the components, are at fault. */
      usage?: boolean;
      /** The components are outside the YAML bounds (an alias bomb, too large, too deep). */
      bound?: boolean;
    };

type Refusal = Extract<PackResult, { ok: false }>;

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

const groupOfApiVersion = (v: unknown): string =>
  typeof v === "string" && v.includes("/") ? v.slice(0, v.indexOf("/")) : "";

interface CertificateInfo {
  namespace: string;
  name: string;
  secretName: string;
  dnsNames: string[];
  used: boolean;
}

const validate = (input: PackInput): string | undefined => {
  if (!PROVIDER_TYPES.includes(input.type as ProviderType))
    return `--type must be one of ${PROVIDER_TYPES.join(", ")}, not ${JSON.stringify(input.type)}`;
  if (!DNS_LABEL.test(input.name) || input.name.length > 63)
    return `--name must be a DNS label (lower-case letters, digits, '-'), not ${JSON.stringify(input.name)}`;
  if (input.type === "core" && input.name !== CORE_PROVIDER_NAME)
    return `the core provider is named ${CORE_PROVIDER_NAME}, not ${JSON.stringify(input.name)}`;
  if (!LABEL_VALUE.test(input.version) || input.version.length > 63)
    return `--version must be a label value such as v2.9.0, not ${JSON.stringify(input.version)}`;
  if (!DNS_LABEL.test(input.namespace) || input.namespace.length > 63)
    return `--namespace must be a DNS label (lower-case letters, digits, '-'; at most 63 characters), not ${JSON.stringify(input.namespace)}`;
  const configMapName = input.configMapName;
  if (configMapName !== undefined && (!DNS_SUBDOMAIN.test(configMapName) || configMapName.length > 253))
    return `--configmap-name must be a DNS subdomain (lower-case letters, digits, '-', '.'; at most 253 characters), not ${JSON.stringify(configMapName)}`;
  return undefined;
};

/** A YAML problem as pack-provider reports it; one outside the bounds the command refuses as bad input. */
const refused = (problem: YamlProblem, path: string | undefined): Refusal => {
  if (path !== undefined)
    return { ok: false, error: `${path}: ${problem.message}`, ...(problem.bound ? { bound: true } : {}) };
  return problem.bound
    ? { ok: false, error: `components: ${problem.message}`, bound: true }
    : { ok: false, error: `components ${problem.message.replace(/^YAML /, "")}` };
};

// YAML 1.2 allows no C0 control character but tab and line breaks, nor DEL: text holding one is binary (a
// gzipped release asset read as UTF-8 always does), whatever the yaml library would make of it.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
const BINARY = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const NOT_COMPONENTS = "(is it the components YAML, not a compressed archive?)";

const describeValue = (v: unknown): string =>
  Array.isArray(v) ? "a sequence" : typeof v === "object" ? "an object" : `a ${typeof v}`;

/** Why a document's value is not a Kubernetes object (what the installer requires of it), or undefined. */
const notAnObject = (value: unknown): string | undefined => {
  if (!isRecord(value)) return `it is ${describeValue(value)}, not a mapping with apiVersion and kind`;
  const meta = isRecord(value.metadata) ? value.metadata : {};
  const missing = [
    typeof value.apiVersion === "string" && value.apiVersion ? undefined : "apiVersion",
    typeof value.kind === "string" && value.kind ? undefined : "kind",
    typeof meta.name === "string" && meta.name ? undefined : "metadata.name",
  ].filter((f) => f !== undefined);
  return missing.length > 0 ? `missing ${missing.join(", ")}` : undefined;
};

interface Entry {
  doc: Document.Parsed;
  value: Record<string, unknown>;
}

const notAnObjectAt = (document: ParsedYamlDocument, file: ComponentsFile): string =>
  `document ${document.index} of ${file.path} (line ${document.line}) is not a Kubernetes object`;

/**
 * The Kubernetes objects of one file, or why it holds none or something else. YAML problems name the file
 * (`named`) only when there are several: one keeps the "components" wording the command has always printed.
 */
const objectsOf = (file: ComponentsFile, named: boolean): Entry[] | Refusal => {
  if (BINARY.test(file.text))
    return {
      ok: false,
      error: `${file.path} holds no Kubernetes objects: it is binary, not YAML text ${NOT_COMPONENTS}`,
    };
  const path = named ? file.path : undefined;
  const parsed = parseYamlDocuments(file.text);
  if (!parsed.ok) return refused(parsed.problem, path);
  const entries: Entry[] = [];
  for (const document of parsed.documents) {
    const value = documentValue(document);
    if (!value.ok) return refused(value.problem, path);
    if (value.value === null || value.value === undefined) continue; // an empty document, as kubectl skips it
    const why = notAnObject(value.value);
    if (why) return { ok: false, error: `${notAnObjectAt(document, file)}: ${why}` };
    entries.push({ doc: document.document, value: value.value as Record<string, unknown> });
  }
  if (entries.length === 0)
    return { ok: false, error: `${file.path} holds no Kubernetes objects ${NOT_COMPONENTS}` };
  return entries;
};

export function packProvider(input: PackInput): PackResult {
  const invalid = validate(input);
  if (invalid) return { ok: false, error: invalid, usage: true };
  const type = input.type as ProviderType;
  const files: readonly ComponentsFile[] =
    typeof input.components === "string"
      ? [{ path: "components", text: input.components }]
      : input.components;
  const entries: Entry[] = [];
  for (const file of files) {
    const objects = objectsOf(file, files.length > 1);
    if (!Array.isArray(objects)) return objects;
    appendAll(entries, objects);
  }

  const certificates: CertificateInfo[] = [];
  const kept: Entry[] = [];
  let issuers = 0;
  for (const entry of entries) {
    const { value } = entry;
    if (groupOfApiVersion(value.apiVersion) !== CERT_MANAGER_GROUP) {
      kept.push(entry);
      continue;
    }
    if (value.kind === "Certificate") {
      const meta = isRecord(value.metadata) ? value.metadata : {};
      const spec = isRecord(value.spec) ? value.spec : {};
      certificates.push({
        namespace: typeof meta.namespace === "string" ? meta.namespace : "",
        name: typeof meta.name === "string" ? meta.name : "",
        secretName: typeof spec.secretName === "string" ? spec.secretName : "",
        dnsNames: Array.isArray(spec.dnsNames) ? spec.dnsNames.filter((d) => typeof d === "string") : [],
        used: false,
      });
    } else if (value.kind === "Issuer" || value.kind === "ClusterIssuer") issuers++;
    else kept.push(entry); // other cert-manager kinds are the admin's business: kept, not guessed at
  }

  for (const { doc, value } of kept) {
    const meta = isRecord(value.metadata) ? value.metadata : {};
    const annotations = isRecord(meta.annotations) ? meta.annotations : {};
    const injected = INJECT_CA_ANNOTATIONS.filter((a) => a in annotations);
    for (const a of injected) doc.deleteIn(["metadata", "annotations", a]);
    if (injected.length > 0) doc.setIn(["metadata", "annotations", SERVICE_CA.injectCabundle], "true");

    const group = groupOfApiVersion(value.apiVersion);
    if (group === "" && value.kind === "Service") {
      const namespace = typeof meta.namespace === "string" ? meta.namespace : "";
      const names = [
        `${String(meta.name)}.${namespace}.svc`,
        `${String(meta.name)}.${namespace}.svc.cluster.local`,
      ];
      const certificate = certificates.find((c) => c.secretName && c.dnsNames.some((d) => names.includes(d)));
      if (certificate) {
        certificate.used = true;
        doc.setIn(["metadata", "annotations", SERVICE_CA.servingCertSecretName], certificate.secretName);
      }
    }
    if (
      group === "admissionregistration.k8s.io" &&
      (value.kind === "MutatingWebhookConfiguration" || value.kind === "ValidatingWebhookConfiguration") &&
      Array.isArray(value.webhooks)
    )
      value.webhooks.forEach((w, i) => {
        if (isRecord(w) && isRecord(w.clientConfig) && "caBundle" in w.clientConfig)
          doc.deleteIn(["webhooks", i, "clientConfig", "caBundle"]);
      });
    if (group === "apiextensions.k8s.io" && value.kind === "CustomResourceDefinition") {
      const clientConfig = ["spec", "conversion", "webhook", "clientConfig"] as const;
      let cur: unknown = value;
      for (const k of clientConfig) cur = isRecord(cur) ? cur[k] : undefined;
      if (isRecord(cur) && "caBundle" in cur) doc.deleteIn([...clientConfig, "caBundle"]);
    }
  }

  const warnings = certificates
    .filter((c) => !c.used)
    .map(
      (c) =>
        `Certificate ${c.namespace}/${c.name}: no Service in the components matches its dnsNames (${c.dnsNames.join(", ")}); Secret ${c.secretName || "(none)"} will not be created by service-ca`,
    );
  if (certificates.length > 0 || issuers > 0)
    warnings.unshift(
      `rewrote ${certificates.length} cert-manager Certificate(s) to service-ca serving-cert annotations and dropped ${issuers} Issuer(s)`,
    );

  const components = kept.map(({ doc }) => documentText(doc).replace(/^---\n/, "")).join("---\n");
  const label = providerLabelValue(type, input.name);
  const configMap: KubeObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: input.configMapName ?? `capi-provider-${label}`,
      namespace: input.namespace,
      labels: {
        [TRANSPORT_LABELS.name]: input.name,
        [TRANSPORT_LABELS.type]: type,
        [TRANSPORT_LABELS.version]: input.version,
      },
    },
    data: { [COMPONENTS_KEY]: components },
  };
  const bytes = Buffer.byteLength(JSON.stringify(configMap), "utf8");
  if (bytes > MAX_CONFIGMAP_BYTES)
    return {
      ok: false,
      error: `the transport ConfigMap would be ${bytes} bytes, over the ${MAX_CONFIGMAP_BYTES}-byte (1 MiB) limit of a ConfigMap; trim the components (for example CRD descriptions) or split the provider`,
    };
  return { ok: true, configMap, yaml: stringifyYaml(configMap), bytes, warnings };
}
