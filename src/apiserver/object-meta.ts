/**
 * kube's ObjectMeta, as data and pure checks: which metadata fields exist, which the server owns, and the
 * validation of names, label and annotation keys, label values and ownerReferences (kube's
 * ValidateObjectMeta). Used by the write path (rest/), managed fields and CRD pruning; it holds no
 * state and asks nothing of storage.
 */
import { DNS_LABEL, DNS_SUBDOMAIN, isRecord, type KubeObject } from "../kube/object.js";
import type { ResourceInfo, StatusCause } from "./types.js";

/** An object's metadata, or an empty record when it has none. */
export const meta = (o: KubeObject): Record<string, unknown> => (isRecord(o.metadata) ? o.metadata : {});

/** Metadata the server sets on create or delete and keeps on every write; a client's value is ignored. */
const SERVER_SET_METADATA = [
  "uid",
  "creationTimestamp",
  "generation",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
] as const;

/** What mutating admission may not change: identity and the server-set fields (rest/strategy.ts). */
export const IDENTITY_AND_SERVER_METADATA: readonly string[] = ["name", "namespace", ...SERVER_SET_METADATA];

/** Bookkeeping every write rewrites: never owned by a field manager, never part of a no-op check. */
const WRITE_BOOKKEEPING = ["resourceVersion", "managedFields", "selfLink"] as const;

/** Metadata kube never puts in a managed field set (managed-fields.ts). */
export const UNMANAGED_METADATA: ReadonlySet<string> = new Set([
  ...IDENTITY_AND_SERVER_METADATA,
  ...WRITE_BOOKKEEPING,
]);

/** The fields of metav1.ObjectMeta; anything else under `metadata` is dropped as kube's decoder does. */
export const OBJECT_META_FIELDS: ReadonlySet<string> = new Set([
  ...UNMANAGED_METADATA,
  "generateName",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
]);

/** The label kube-apiserver keeps equal to a Namespace's name. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const QUALIFIED_NAME_MESSAGE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const validKey = (k: string): boolean => {
  if (!QUALIFIED_NAME.test(k)) return false;
  const slash = k.lastIndexOf("/");
  return k.length - slash - 1 <= 63 && (slash < 0 || slash <= 253);
};

const validLabelValue = (v: unknown): boolean =>
  typeof v === "string" && v.length <= 63 && LABEL_VALUE.test(v);

/** A JSON value's type as Go's encoding/json names it in an unmarshal error. */
const goJsonType = (v: unknown): string =>
  Array.isArray(v) ? "array" : v === null ? "null" : typeof v === "boolean" ? "bool" : typeof v;

/** A map of strings kube decodes into a Go `map[string]string`: why `v` cannot be one, or undefined. */
const stringMapProblem = (v: unknown, field: string): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v))
    return `json: cannot unmarshal ${goJsonType(v)} into Go struct field ${field} of type map[string]string`;
  for (const value of Object.values(v))
    if (value !== null && typeof value !== "string")
      return `json: cannot unmarshal ${goJsonType(value)} into Go struct field ${field} of type string`;
  return undefined;
};

/**
 * Why kube's typed decoding cannot read the object (answered 400 "cannot be handled as a <Kind>" for a
 * body, 422 on the `patch` field for a patch's result): labels and annotations must be maps of strings, and a
 * ConfigMap's `data` too. Stored, such an object is one no typed client can decode (decision 125).
 */
export const typedDecodeProblem = (
  res: Pick<ResourceInfo, "group" | "kind">,
  o: KubeObject,
): string | undefined => {
  const m = o.metadata;
  if (m !== undefined && m !== null && !isRecord(m))
    return `json: cannot unmarshal ${goJsonType(m)} into Go struct field ${res.kind}.metadata of type v1.ObjectMeta`;
  const metadata = isRecord(m) ? m : {};
  return (
    stringMapProblem(metadata.labels, "ObjectMeta.labels") ??
    stringMapProblem(metadata.annotations, "ObjectMeta.annotations") ??
    (res.group === "" && res.kind === "ConfigMap" ? stringMapProblem(o.data, "ConfigMap.data") : undefined)
  );
};

/** Why `key` is not a label or annotation key (kube's IsQualifiedName), or undefined when it is one. */
export const labelKeyProblem = (key: string): string | undefined =>
  validKey(key) ? undefined : `Invalid value: ${JSON.stringify(key)}: ${QUALIFIED_NAME_MESSAGE}`;

/** Why `value` is not a label value (kube's IsValidLabelValue), or undefined when it is one. */
export const labelValueProblem = (value: string): string | undefined =>
  validLabelValue(value) ? undefined : `Invalid value: ${JSON.stringify(value)}: ${LABEL_VALUE_MESSAGE}`;

/**
 * Why a new object's name is invalid, or undefined: Namespaces are DNS labels, RBAC objects only need to be
 * a path segment (kube's ValidateRBACName: `system:discovery` is a valid ClusterRole name), everything else
 * is a DNS subdomain.
 */
export const nameProblem = (res: ResourceInfo, name: string): string | undefined => {
  if (res.group === "" && res.plural === "namespaces")
    return DNS_LABEL.test(name) && name.length <= 63 ? undefined : LABEL_MESSAGE;
  if (res.group === "rbac.authorization.k8s.io") {
    if (name === "." || name === "..") return `may not be '${name}'`;
    for (const c of ["/", "%"]) if (name.includes(c)) return `may not contain '${c}'`;
    return undefined;
  }
  return DNS_SUBDOMAIN.test(name) && name.length <= 253 ? undefined : SUBDOMAIN_MESSAGE;
};

/** Label values: at most 63 characters of the label alphabet, or empty. */
export const labelValueCauses = (o: KubeObject): StatusCause[] =>
  Object.values(o.metadata?.labels ?? {})
    .filter((v) => !validLabelValue(v))
    .map((v) => ({
      reason: "FieldValueInvalid",
      field: "metadata.labels",
      message: `Invalid value: ${JSON.stringify(v)}: ${LABEL_VALUE_MESSAGE}`,
    }));

/** kube's ObjectMeta validation beyond the name: label and annotation keys, ownerReferences. */
export const metadataCauses = (o: KubeObject): StatusCause[] => {
  const causes: StatusCause[] = [];
  const m = meta(o);
  for (const [field, map] of [
    ["metadata.labels", m.labels],
    ["metadata.annotations", m.annotations],
  ] as const)
    for (const k of Object.keys(isRecord(map) ? map : {}))
      if (!validKey(k))
        causes.push({
          reason: "FieldValueInvalid",
          field,
          message: `Invalid value: ${JSON.stringify(k)}: ${QUALIFIED_NAME_MESSAGE}`,
        });
  const annotationBytes = Object.entries(isRecord(m.annotations) ? m.annotations : {}).reduce(
    (n, [k, v]) => n + k.length + String(v).length,
    0,
  );
  if (annotationBytes > 262_144)
    causes.push({
      reason: "FieldValueTooLong",
      field: "metadata.annotations",
      message: "Too long: must have at most 262144 bytes",
    });
  const refs = Array.isArray(m.ownerReferences) ? m.ownerReferences : [];
  for (const f of Array.isArray(m.finalizers) ? m.finalizers : [])
    if (typeof f !== "string" || !validKey(f))
      causes.push({
        reason: "FieldValueInvalid",
        field: "metadata.finalizers",
        message: `Invalid value: ${JSON.stringify(f)}: ${QUALIFIED_NAME_MESSAGE}`,
      });
  refs.forEach((r) => {
    const ref = isRecord(r) ? r : {};
    for (const f of ["apiVersion", "kind", "name", "uid"])
      if (typeof ref[f] !== "string" || ref[f] === "")
        causes.push({
          reason: "FieldValueInvalid",
          // kube names the list, not the element (validateOwnerReference is called with the list's path).
          field: `metadata.ownerReferences.${f}`,
          message: `Invalid value: "": ${f} must not be empty`,
        });
  });
  if (refs.filter((r) => isRecord(r) && r.controller === true).length > 1)
    causes.push({
      reason: "FieldValueInvalid",
      field: "metadata.ownerReferences",
      message: "Invalid value: []v1.OwnerReference: Only one reference can have Controller set to true",
    });
  return causes;
};
