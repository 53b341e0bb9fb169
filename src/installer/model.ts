/**
 * The installer's vocabulary (SPEC §6): transport ConfigMap labels, clusterctl's provider label, the field
 * manager, which platform maps to which infrastructure provider, which kinds are never pruned, and the
 * small object-reference type every installer message uses. Data only; no I/O.
 */
import type { KubeObject } from "../kube/object.js";
import { nameOf, namespaceOf } from "../kube/object.js";

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
  VSphere: "vsphere",
});

/**
 * Kinds the installer applies but never deletes (SPEC §6): removing a CRD deletes every object of it,
 * removing a Namespace everything in it, and an admission configuration may guard other objects. They are
 * named in the status for an admin to remove.
 */
export const NEVER_PRUNED: readonly { group: string; kind: string }[] = [
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
