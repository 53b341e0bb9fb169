/**
 * The protobuf messages the local server decodes, as data: field number → JSON name and type, written from
 * Kubernetes' own generated.proto files (k8s.io/apimachinery@v0.33 pkg/runtime and pkg/apis/meta/v1,
 * k8s.io/api@v0.33 core/v1). Only the kinds kubectl's generator commands send (`create configmap|secret|
 * namespace`) and what they nest; a field not listed here is skipped as protobuf skips unknown fields.
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
  | "NamespaceCondition";

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
  | { readonly kind: "message"; readonly message: MessageName }
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
}

export type MessageSchema = Readonly<Record<number, FieldSpec>>;

const str = { kind: "string" } as const;
const bool = { kind: "bool" } as const;
const int64 = { kind: "int64" } as const;
const time = { kind: "time" } as const;
const msg = (message: MessageName) => ({ kind: "message", message }) as const;
const stringMap = { kind: "map", value: "string" } as const;
const bytesMap = { kind: "map", value: "bytes" } as const;

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
} as const satisfies Record<MessageName, MessageSchema>;

/** The top-level kinds a protobuf body may carry: `apiVersion/kind` → message. */
export const TOP_LEVEL: Readonly<Record<string, MessageName>> = {
  "v1/ConfigMap": "ConfigMap",
  "v1/Secret": "Secret",
  "v1/Namespace": "Namespace",
};
