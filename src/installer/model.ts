/**
 * The installer's vocabulary (SPEC §6): transport ConfigMap labels, clusterctl's provider label, the field
 * manager, which platform maps to which infrastructure provider, which kinds are applied and which never
 * pruned, the names that are the product's own, the YAML bounds of components, and the small
 * object-reference type every installer message uses. Data and small pure helpers only; no I/O.
 */
import type { KubeObject } from "../kube/object.js";
import { nameOf, namespaceOf } from "../kube/object.js";
import type { YamlBounds } from "../yaml.js";

/** Labels of a transport ConfigMap (SPEC §6). */
export const TRANSPORT_LABELS = Object.freeze({
  name: "provider.cluster.x-k8s.io/name",
  type: "provider.cluster.x-k8s.io/type",
  version: "provider.cluster.x-k8s.io/version",
});
/** The data key holding the provider's multi-document components YAML. */
export const COMPONENTS_KEY = "components";

/** clusterctl's label on every installed object; its value is `providerLabelValue`. */
export const PROVIDER_LABEL = "cluster.x-k8s.io/provider";
export const FIELD_MANAGER = "machine-api-migration-installer";
/** Per-object hash of what the installer last applied: unchanged hash + unchanged live fields = no write. */
export const HASH_ANNOTATION = "machine-api-migration.openshift.io/installer-hash";
export const IMAGE_PLACEHOLDER = "to.be/replaced:v99";

/** A ConfigMap holds at most this much (the API server's limit); so do a transport's components. */
export const MAX_CONFIGMAP_BYTES = 1024 * 1024;

/**
 * How far a transport ConfigMap's YAML may reach (SPEC §6): a ConfigMap's size, documents enough for any
 * provider, yaml's default alias bound, and a document no larger, once expanded, than etcd stores.
 */
export const COMPONENTS_YAML_BOUNDS: YamlBounds = Object.freeze({
  maxBytes: MAX_CONFIGMAP_BYTES,
  maxDocuments: 1000,
  maxAliasCount: 100,
  maxDocumentBytes: 1536 * 1024,
  maxDepth: 128,
});

/** OpenShift service-ca's annotations, which stand in for cert-manager (pack-provider writes them). */
export const SERVICE_CA = Object.freeze({
  injectCabundle: "service.beta.openshift.io/inject-cabundle",
  servingCertSecretName: "service.beta.openshift.io/serving-cert-secret-name",
  /** The older spelling, which service-ca-operator still honours: only ever checked, never written. */
  alphaServingCertSecretName: "service.alpha.openshift.io/serving-cert-secret-name",
});

/**
 * Every object of the product is named this or `<this>-…` (its Deployment, ServiceAccount, Secrets, webhook
 * configurations, the installer's own objects and the ceiling): the installer never applies such a name.
 */
export const PRODUCT_NAME = "machine-api-migration";
export const isProductName = (name: string): boolean =>
  name === PRODUCT_NAME || name.startsWith(`${PRODUCT_NAME}-`);

/**
 * The label by which every selector of the product's manifests picks what is the product's own — its Service,
 * PodDisruptionBudget, NetworkPolicies and anti-affinity select its pods by it, its ServiceMonitor its Service
 * (test/manifests keeps them so). A provider's pod carrying it would receive the API server's admission
 * reviews; the installer never applies it (decision 117).
 */
export const PRODUCT_LABEL = Object.freeze({ key: "app.kubernetes.io/name", value: PRODUCT_NAME });
export const carriesProductLabel = (labels: Readonly<Record<string, string>>): boolean =>
  labels[PRODUCT_LABEL.key] === PRODUCT_LABEL.value;

/**
 * The kinds the installer applies (SPEC §6 allowlist), by `group/kind`, with their scope. cert-manager's
 * Issuers and Certificates appear only as pack-provider rewrites them: service-ca annotations.
 */
export const ALLOWED_KINDS: ReadonlyMap<string, "Namespaced" | "Cluster"> = new Map([
  ["apiextensions.k8s.io/CustomResourceDefinition", "Cluster"],
  ["apps/Deployment", "Namespaced"],
  ["/Service", "Namespaced"],
  ["/ServiceAccount", "Namespaced"],
  ["/ConfigMap", "Namespaced"],
  ["rbac.authorization.k8s.io/Role", "Namespaced"],
  ["rbac.authorization.k8s.io/RoleBinding", "Namespaced"],
  ["rbac.authorization.k8s.io/ClusterRole", "Cluster"],
  ["rbac.authorization.k8s.io/ClusterRoleBinding", "Cluster"],
  ["admissionregistration.k8s.io/ValidatingWebhookConfiguration", "Cluster"],
  ["admissionregistration.k8s.io/MutatingWebhookConfiguration", "Cluster"],
]);

/**
 * A string from a ConfigMap as a message shows it: as is when it reads like a name, quoted when it holds
 * anything else, and cut short when long — a hostile name must not flood the ClusterOperator's status.
 */
export const shown = (s: string): string => {
  const short = s.length > 253 ? `${s.slice(0, 64)}… (${s.length} characters)` : s;
  return /^[\w.:@/*-]*$/.test(short) && short !== "" ? short : JSON.stringify(short);
};

// The reference grammar of distribution/reference (what a container runtime accepts as an image).
const ALNUM = "[a-z0-9]+";
const PATH_COMPONENT = `${ALNUM}(?:(?:[._]|__|-+)${ALNUM})*`;
const DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const REFERENCE = new RegExp(
  `^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`,
);
/** An image reference a container runtime accepts (length checked first, so the pattern stays cheap). */
export const isImageReference = (s: string): boolean => s.length > 0 && s.length <= 512 && REFERENCE.test(s);
export type ProviderType = "core" | "infrastructure";
export const PROVIDER_TYPES: readonly ProviderType[] = ["core", "infrastructure"];
export const CORE_PROVIDER_NAME = "cluster-api";

/** clusterctl's value of `cluster.x-k8s.io/provider`: `cluster-api`, `infrastructure-aws`, … */
export const providerLabelValue = (type: ProviderType, name: string): string =>
  type === "core" ? name : `${type}-${name}`;

/**
 * `Infrastructure .status.platformStatus.type` → infrastructure provider name. A platform not listed here is
 * unsupported: nothing is installed and the status says so. Adding a platform is adding a row.
 */
export const PLATFORM_PROVIDERS: Readonly<Record<string, string>> = Object.freeze({
  AWS: "aws",
  Azure: "azure",
  GCP: "gcp",
  OpenStack: "openstack",
  // OpenShift installs CAPIBM as the `ibmcloud` infrastructure provider on PowerVS.
  PowerVS: "ibmcloud",
  VSphere: "vsphere",
});

/**
 * Kinds the installer applies but never deletes (SPEC §6): removing a CRD deletes every object of it,
 * removing a Namespace everything in it, and an admission configuration may guard other objects. They are
 * named in the status for an admin to remove.
 */
const NEVER_PRUNED: readonly { group: string; kind: string }[] = [
  { group: "apiextensions.k8s.io", kind: "CustomResourceDefinition" },
  { group: "", kind: "Namespace" },
  { group: "admissionregistration.k8s.io", kind: "MutatingWebhookConfiguration" },
  { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration" },
  { group: "admissionregistration.k8s.io", kind: "ValidatingAdmissionPolicy" },
  { group: "admissionregistration.k8s.io", kind: "ValidatingAdmissionPolicyBinding" },
  { group: "admissionregistration.k8s.io", kind: "MutatingAdmissionPolicy" },
  { group: "admissionregistration.k8s.io", kind: "MutatingAdmissionPolicyBinding" },
];

/**
 * Kinds always searched for objects to prune, besides the kinds of the current manifests and those applied
 * before (recorded in the ClusterOperator): what provider components are made of.
 */
export const PRUNE_SEARCH_KINDS: readonly { apiVersion: string; kind: string }[] = [
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "v1", kind: "Service" },
  { apiVersion: "v1", kind: "ServiceAccount" },
  { apiVersion: "v1", kind: "ConfigMap" },
  { apiVersion: "v1", kind: "Secret" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding" },
  { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition" },
  { apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration" },
  { apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration" },
];

/** One object, as messages and the prune inventory name it. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export const groupOf = (apiVersion: string): string =>
  apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";

export const refOf = (o: KubeObject): ObjectRef => ({
  apiVersion: String(o.apiVersion ?? ""),
  kind: String(o.kind ?? ""),
  ...(namespaceOf(o) ? { namespace: namespaceOf(o) } : {}),
  name: nameOf(o),
});

/** Identity across versions: group, kind, namespace, name. */
export const identityOf = (r: ObjectRef): string =>
  `${groupOf(r.apiVersion)}/${r.kind}/${r.namespace ?? ""}/${r.name}`;

/** `Deployment openshift-cluster-api/capi-controller-manager` — how an admin reads an object name. */
export const describeRef = (r: ObjectRef): string =>
  `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;

export const isNeverPruned = (r: Pick<ObjectRef, "apiVersion" | "kind">): boolean =>
  NEVER_PRUNED.some((k) => k.group === groupOf(r.apiVersion) && k.kind === r.kind);
