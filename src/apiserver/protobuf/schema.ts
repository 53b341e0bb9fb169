/**
 * The protobuf messages the local server decodes, as data: field number → JSON name and type, written from
 * Kubernetes' own generated.proto files (k8s.io/apimachinery@v0.33 pkg/runtime and pkg/apis/meta/v1,
 * k8s.io/api@v0.33 core/v1, rbac/v1, scheduling/v1, policy/v1, authorization/v1, authentication/v1). Only
 * the kinds kubectl's generator and auth commands send for the built-ins this server serves (`create
 * configmap|secret|namespace|serviceaccount|role|clusterrole|rolebinding|clusterrolebinding|priorityclass|
 * poddisruptionbudget`, `auth can-i`, `auth whoami`) and what they nest; a field not listed here is skipped
 * as protobuf skips unknown fields — every field of these messages is listed but the server-owned status, which
 * test/cluster/protobuf-schema.cluster.test.ts checks against the generated.proto of the pinned versions.
 * The workload kinds (`create deployment|service`) are generated whole from the same sources (generated.ts).
 * The decoding itself is in decode.ts.
 */

export type MessageName =
  | "TypeMeta"
  | "Unknown"
  | "ObjectMeta"
  | "OwnerReference"
  | "ManagedFieldsEntry"
  | "FieldsV1"
  | "ConfigMap"
  | "Secret"
  | "Namespace"
  | "NamespaceSpec"
  | "NamespaceStatus"
  | "NamespaceCondition"
  | "LabelSelector"
  | "LabelSelectorRequirement"
  | "FieldSelectorRequirement"
  | "ObjectReference"
  | "LocalObjectReference"
  | "ServiceAccount"
  | "PolicyRule"
  | "AggregationRule"
  | "Role"
  | "ClusterRole"
  | "Subject"
  | "RoleRef"
  | "RoleBinding"
  | "ClusterRoleBinding"
  | "PriorityClass"
  | "PodDisruptionBudget"
  | "PodDisruptionBudgetSpec"
  | "SelfSubjectAccessReview"
  | "SelfSubjectAccessReviewSpec"
  | "ResourceAttributes"
  | "NonResourceAttributes"
  | "FieldSelectorAttributes"
  | "LabelSelectorAttributes"
  | "SelfSubjectRulesReview"
  | "SelfSubjectRulesReviewSpec"
  | "SelfSubjectReview";

/** How a field's value is read and shown in JSON. */
export type FieldType =
  | { readonly kind: "string" }
  /** JSON shows bytes as base64, as Go's encoding/json does for []byte. */
  | { readonly kind: "bytes" }
  /** FieldsV1's raw bytes are JSON text; JSON shows the parsed value. */
  | { readonly kind: "json" }
  | { readonly kind: "bool" }
  | { readonly kind: "int32" }
  | { readonly kind: "int64" }
  /** meta/v1 Time: {seconds, nanos}; JSON shows RFC 3339 seconds, as the real server (nanos dropped). */
  | { readonly kind: "time" }
  | { readonly kind: "double" }
  /** A message, by its name here or in generated.ts. */
  | { readonly kind: "message"; readonly message: string }
  /** util/intstr IntOrString: JSON shows the number or the string its `type` names. */
  | { readonly kind: "intOrString" }
  /** api/resource Quantity: JSON shows its string. */
  | { readonly kind: "quantity" }
  /** A map from string keys to messages (or quantities): a ResourceList. */
  | { readonly kind: "messageMap"; readonly value: FieldType }
  | { readonly kind: "map"; readonly value: "string" | "bytes" };

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  readonly repeated?: boolean;
  /**
   * A Go pointer (`*bool`, `*int64`) or a field without omitempty: its zero value is shown. Other zero
   * values are dropped, as Go's `omitempty` drops them when the server writes the object as JSON.
   */
  readonly keepZero?: boolean;
  /** A Go struct embedded with `json:",inline"`: its fields are the parent's own in JSON (a Volume's source). */
  readonly inline?: boolean;
}

/** The messages generated.ts holds (from Kubernetes' sources), and the top-level kinds among them. */
export interface GeneratedSchema {
  readonly topLevel: Readonly<Record<string, string>>;
  readonly messages: Readonly<Record<string, MessageSchema>>;
}

export type MessageSchema = Readonly<Record<number, FieldSpec>>;

const str = { kind: "string" } as const;
const bool = { kind: "bool" } as const;
const int64 = { kind: "int64" } as const;
const time = { kind: "time" } as const;
const msg = (message: MessageName) => ({ kind: "message", message }) as const;
const stringMap = { kind: "map", value: "string" } as const;
const bytesMap = { kind: "map", value: "bytes" } as const;
const int32 = { kind: "int32" } as const;
const intOrString = { kind: "intOrString" } as const;
const strings = { name: "", type: str, repeated: true } as const;
const list = (name: string) => ({ ...strings, name });
const metadata = { name: "metadata", type: msg("ObjectMeta"), keepZero: true } as const;
/** meta/v1 LabelSelectorRequirement and FieldSelectorRequirement: the same three fields. */
const REQUIREMENT = {
  1: { name: "key", type: str, keepZero: true },
  2: { name: "operator", type: str, keepZero: true },
  3: list("values"),
} as const;
/** rbac/v1 RoleBinding and ClusterRoleBinding: the same message but for their scope. */
const BINDING = {
  1: metadata,
  2: { name: "subjects", type: msg("Subject"), repeated: true },
  3: { name: "roleRef", type: msg("RoleRef"), keepZero: true },
} as const;

export const MESSAGES = {
  /** k8s.io.apimachinery.pkg.runtime.TypeMeta */
  TypeMeta: {
    1: { name: "apiVersion", type: str },
    2: { name: "kind", type: str },
  },
  /** k8s.io.apimachinery.pkg.runtime.Unknown: the envelope after the `k8s\0` magic. */
  Unknown: {
    1: { name: "typeMeta", type: msg("TypeMeta") },
    2: { name: "raw", type: { kind: "bytes" } },
    3: { name: "contentEncoding", type: str },
    4: { name: "contentType", type: str },
  },
  ObjectMeta: {
    1: { name: "name", type: str },
    2: { name: "generateName", type: str },
    3: { name: "namespace", type: str },
    4: { name: "selfLink", type: str },
    5: { name: "uid", type: str },
    6: { name: "resourceVersion", type: str },
    7: { name: "generation", type: int64 },
    8: { name: "creationTimestamp", type: time },
    9: { name: "deletionTimestamp", type: time },
    10: { name: "deletionGracePeriodSeconds", type: int64, keepZero: true },
    11: { name: "labels", type: stringMap },
    12: { name: "annotations", type: stringMap },
    13: { name: "ownerReferences", type: msg("OwnerReference"), repeated: true },
    14: { name: "finalizers", type: str, repeated: true },
    17: { name: "managedFields", type: msg("ManagedFieldsEntry"), repeated: true },
  },
  OwnerReference: {
    5: { name: "apiVersion", type: str, keepZero: true },
    1: { name: "kind", type: str, keepZero: true },
    3: { name: "name", type: str, keepZero: true },
    4: { name: "uid", type: str, keepZero: true },
    6: { name: "controller", type: bool, keepZero: true },
    7: { name: "blockOwnerDeletion", type: bool, keepZero: true },
  },
  ManagedFieldsEntry: {
    1: { name: "manager", type: str },
    2: { name: "operation", type: str },
    3: { name: "apiVersion", type: str },
    4: { name: "time", type: time },
    6: { name: "fieldsType", type: str },
    7: { name: "fieldsV1", type: msg("FieldsV1") },
    8: { name: "subresource", type: str },
  },
  /** FieldsV1 is shown as its raw JSON, not as an object with a `Raw` key. */
  FieldsV1: {
    1: { name: "Raw", type: { kind: "json" } },
  },
  ConfigMap: {
    1: { name: "metadata", type: msg("ObjectMeta"), keepZero: true },
    4: { name: "immutable", type: bool, keepZero: true },
    2: { name: "data", type: stringMap },
    3: { name: "binaryData", type: bytesMap },
  },
  Secret: {
    1: { name: "metadata", type: msg("ObjectMeta"), keepZero: true },
    5: { name: "immutable", type: bool, keepZero: true },
    2: { name: "data", type: bytesMap },
    4: { name: "stringData", type: stringMap },
    3: { name: "type", type: str },
  },
  Namespace: {
    1: { name: "metadata", type: msg("ObjectMeta"), keepZero: true },
    2: { name: "spec", type: msg("NamespaceSpec"), keepZero: true },
    3: { name: "status", type: msg("NamespaceStatus"), keepZero: true },
  },
  NamespaceSpec: {
    1: { name: "finalizers", type: str, repeated: true },
  },
  NamespaceStatus: {
    1: { name: "phase", type: str },
    2: { name: "conditions", type: msg("NamespaceCondition"), repeated: true },
  },
  NamespaceCondition: {
    1: { name: "type", type: str, keepZero: true },
    2: { name: "status", type: str, keepZero: true },
    4: { name: "lastTransitionTime", type: time },
    5: { name: "reason", type: str },
    6: { name: "message", type: str },
  },
  /** meta/v1 */
  LabelSelector: {
    1: { name: "matchLabels", type: stringMap },
    2: { name: "matchExpressions", type: msg("LabelSelectorRequirement"), repeated: true },
  },
  LabelSelectorRequirement: REQUIREMENT,
  FieldSelectorRequirement: REQUIREMENT,
  /** core/v1: what `kubectl create serviceaccount` sends. */
  ObjectReference: {
    1: { name: "kind", type: str },
    2: { name: "namespace", type: str },
    3: { name: "name", type: str },
    4: { name: "uid", type: str },
    5: { name: "apiVersion", type: str },
    6: { name: "resourceVersion", type: str },
    7: { name: "fieldPath", type: str },
  },
  LocalObjectReference: {
    1: { name: "name", type: str },
  },
  ServiceAccount: {
    1: metadata,
    2: { name: "secrets", type: msg("ObjectReference"), repeated: true },
    3: { name: "imagePullSecrets", type: msg("LocalObjectReference"), repeated: true },
    4: { name: "automountServiceAccountToken", type: bool, keepZero: true },
  },
  /** rbac/v1: `kubectl create role|clusterrole|rolebinding|clusterrolebinding`. */
  PolicyRule: {
    1: list("verbs"),
    2: list("apiGroups"),
    3: list("resources"),
    4: list("resourceNames"),
    5: list("nonResourceURLs"),
  },
  AggregationRule: {
    1: { name: "clusterRoleSelectors", type: msg("LabelSelector"), repeated: true },
  },
  Role: {
    1: metadata,
    2: { name: "rules", type: msg("PolicyRule"), repeated: true },
  },
  ClusterRole: {
    1: metadata,
    2: { name: "rules", type: msg("PolicyRule"), repeated: true },
    3: { name: "aggregationRule", type: msg("AggregationRule") },
  },
  Subject: {
    1: { name: "kind", type: str, keepZero: true },
    2: { name: "apiGroup", type: str },
    3: { name: "name", type: str, keepZero: true },
    4: { name: "namespace", type: str },
  },
  RoleRef: {
    1: { name: "apiGroup", type: str, keepZero: true },
    2: { name: "kind", type: str, keepZero: true },
    3: { name: "name", type: str, keepZero: true },
  },
  RoleBinding: BINDING,
  ClusterRoleBinding: BINDING,
  /** scheduling/v1: `kubectl create priorityclass`. */
  PriorityClass: {
    1: metadata,
    2: { name: "value", type: int32, keepZero: true },
    3: { name: "globalDefault", type: bool },
    4: { name: "description", type: str },
    5: { name: "preemptionPolicy", type: str, keepZero: true },
  },
  /** policy/v1: `kubectl create poddisruptionbudget` (status is the server's; a body's is not read). */
  PodDisruptionBudget: {
    1: metadata,
    2: { name: "spec", type: msg("PodDisruptionBudgetSpec"), keepZero: true },
  },
  PodDisruptionBudgetSpec: {
    1: { name: "minAvailable", type: intOrString, keepZero: true },
    2: { name: "selector", type: msg("LabelSelector"), keepZero: true },
    3: { name: "maxUnavailable", type: intOrString, keepZero: true },
    4: { name: "unhealthyPodEvictionPolicy", type: str, keepZero: true },
  },
  /** authorization/v1 and authentication/v1: `kubectl auth can-i` (and `--list`), `kubectl auth whoami`. */
  SelfSubjectAccessReview: {
    1: metadata,
    2: { name: "spec", type: msg("SelfSubjectAccessReviewSpec"), keepZero: true },
  },
  SelfSubjectAccessReviewSpec: {
    1: { name: "resourceAttributes", type: msg("ResourceAttributes") },
    2: { name: "nonResourceAttributes", type: msg("NonResourceAttributes") },
  },
  ResourceAttributes: {
    1: { name: "namespace", type: str },
    2: { name: "verb", type: str },
    3: { name: "group", type: str },
    4: { name: "version", type: str },
    5: { name: "resource", type: str },
    6: { name: "subresource", type: str },
    7: { name: "name", type: str },
    8: { name: "fieldSelector", type: msg("FieldSelectorAttributes") },
    9: { name: "labelSelector", type: msg("LabelSelectorAttributes") },
  },
  NonResourceAttributes: {
    1: { name: "path", type: str },
    2: { name: "verb", type: str },
  },
  FieldSelectorAttributes: {
    1: { name: "rawSelector", type: str },
    2: { name: "requirements", type: msg("FieldSelectorRequirement"), repeated: true },
  },
  LabelSelectorAttributes: {
    1: { name: "rawSelector", type: str },
    2: { name: "requirements", type: msg("LabelSelectorRequirement"), repeated: true },
  },
  SelfSubjectRulesReview: {
    1: metadata,
    2: { name: "spec", type: msg("SelfSubjectRulesReviewSpec"), keepZero: true },
  },
  SelfSubjectRulesReviewSpec: {
    1: { name: "namespace", type: str },
  },
  SelfSubjectReview: {
    1: metadata,
  },
} as const satisfies Record<MessageName, MessageSchema>;

/** The top-level kinds a protobuf body may carry: `apiVersion/kind` → message. */
export const TOP_LEVEL: Readonly<Record<string, MessageName>> = {
  "v1/ConfigMap": "ConfigMap",
  "v1/Secret": "Secret",
  "v1/Namespace": "Namespace",
  "v1/ServiceAccount": "ServiceAccount",
  "rbac.authorization.k8s.io/v1/Role": "Role",
  "rbac.authorization.k8s.io/v1/ClusterRole": "ClusterRole",
  "rbac.authorization.k8s.io/v1/RoleBinding": "RoleBinding",
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": "ClusterRoleBinding",
  "scheduling.k8s.io/v1/PriorityClass": "PriorityClass",
  "policy/v1/PodDisruptionBudget": "PodDisruptionBudget",
  "authorization.k8s.io/v1/SelfSubjectAccessReview": "SelfSubjectAccessReview",
  "authorization.k8s.io/v1/SelfSubjectRulesReview": "SelfSubjectRulesReview",
  "authentication.k8s.io/v1/SelfSubjectReview": "SelfSubjectReview",
};
