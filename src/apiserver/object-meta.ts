/**
 * kube's ObjectMeta, as data and pure checks: which metadata fields exist, which the server owns, and the
 * validation of names, label and annotation keys, label values and ownerReferences (kube's
 * ValidateObjectMeta). Used by the write path (rest/), managed fields and CRD pruning; it holds no
 * state but what its string checks remember (a bounded memo of pure answers) and asks nothing of storage.
 */
import { randomInt } from "node:crypto";
import { DNS_LABEL, DNS_SUBDOMAIN, isRecord, type KubeObject } from "../kube/object.js";
import { appendAll } from "../lists.js";
import { unmarshalError } from "./go-json.js";
import { memoByString } from "./string-memo.js";
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

// kube's name and key rules (apimachinery util/validation), message for message: each message is a cause of
// its own in kube's 422, and lengths are in bytes, as Go counts them.
const bytes = (s: string): number => Buffer.byteLength(s);
const maxLen = (n: number): string => `must be no more than ${n} characters`;
/** apimachinery's RegexError (its double space before "or" included). */
const regexError = (msg: string, fmt: string, ...examples: string[]): string =>
  `${msg} (${examples.length > 0 ? `e.g. ${examples.map((e) => `'${e}', `).join(" or ")}` : ""}regex used for validation is '${fmt}')`;

const LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const SUBDOMAIN_FMT = `${LABEL_FMT}(\\.${LABEL_FMT})*`;
const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_REGEX_ERROR = regexError(
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
  "MyName",
  "my.name",
  "123-abc",
);
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** kube's IsDNS1123Subdomain. */
export const isDNS1123Subdomain = (v: string): string[] => [
  ...(bytes(v) > 253 ? [maxLen(253)] : []),
  ...(DNS_SUBDOMAIN.test(v)
    ? []
    : [
        regexError(
          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
          SUBDOMAIN_FMT,
          "example.com",
        ),
      ]),
];

/** kube's IsDNS1123Label (a valid subdomain that is not a label has dots). */
const isDNS1123Label = (v: string): string[] => [
  ...(bytes(v) > 63 ? [maxLen(63)] : []),
  ...(DNS_LABEL.test(v)
    ? []
    : DNS_SUBDOMAIN.test(v)
      ? ["must not contain dots"]
      : [
          regexError(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            LABEL_FMT,
            "my-name",
            "123-abc",
          ),
        ]),
];

/** kube's IsDNS1035Label (Service names). */
const isDNS1035Label = (v: string): string[] => [
  ...(bytes(v) > 63 ? [maxLen(63)] : []),
  ...(DNS1035.test(v)
    ? []
    : [
        regexError(
          "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
          "[a-z]([-a-z0-9]*[a-z0-9])?",
          "my-name",
          "abc-123",
        ),
      ]),
];

/** kube's IsQualifiedName: label keys, annotation keys (lower-cased first), finalizers. */
const qualifiedNameProblems = (v: string): string[] => {
  const parts = v.split("/");
  if (parts.length > 2)
    return [
      `a qualified name ${QUALIFIED_REGEX_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  const [prefix, name] = parts.length === 2 ? [parts[0]!, parts[1]!] : [undefined, v];
  const errs: string[] = [];
  if (prefix === "") errs.push("prefix part must be non-empty");
  else if (prefix !== undefined)
    appendAll(
      errs,
      isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`),
    );
  if (name === "") errs.push("name part must be non-empty");
  else if (bytes(name) > 63) errs.push(`name part ${maxLen(63)}`);
  if (!QUALIFIED.test(name)) errs.push(`name part ${QUALIFIED_REGEX_ERROR}`);
  return errs;
};

/** kube's IsValidLabelValue. */
const labelValueProblems = (v: string): string[] => [
  ...(bytes(v) > 63 ? [maxLen(63)] : []),
  ...(LABEL_VALUE.test(v)
    ? []
    : [
        regexError(
          LABEL_VALUE_MESSAGE,
          "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
          "MyValue",
          "my_value",
          "12345",
        ),
      ]),
];

// Every write checks the same keys, finalizers and values again: each answer is remembered (string-memo.ts).
/** kube's IsQualifiedName, remembered per string. */
export const isQualifiedName: (v: string) => readonly string[] = memoByString(qualifiedNameProblems);
/** kube's IsValidLabelValue, remembered per string. */
const isValidLabelValue: (v: string) => readonly string[] = memoByString(labelValueProblems);

/** kube's IsValidPathSegmentName, and (for a generateName) IsValidPathSegmentPrefix. */
const pathSegment = (v: string, prefix: boolean): string[] => {
  if (!prefix && (v === "." || v === "..")) return [`may not be '${v}'`];
  return ["/", "%"].filter((c) => v.includes(c)).map((c) => `may not contain '${c}'`);
};

/** apimachinery's maskTrailingDash: a generateName may end in '-' (sic: it keeps all but the last two). */
const maskTrailingDash = (v: string): string => (v.length > 1 && v.endsWith("-") ? `${v.slice(0, -2)}a` : v);

/** A kube ValidateNameFunc: why `name` is not valid, `prefix` when it is a generateName. */
type NameRule = (name: string, prefix: boolean) => string[];

const subdomainName: NameRule = (n, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(n) : n);
// ValidateRBACName ignores `prefix`: a generateName of "." is refused as that name would be.
const rbacName: NameRule = (n) => pathSegment(n, false);

/** The kinds whose names are not DNS subdomains, by `group/plural`. */
const NAME_RULES: Readonly<Record<string, NameRule>> = {
  "/namespaces": (n, prefix) => isDNS1123Label(prefix ? maskTrailingDash(n) : n),
  "/services": (n, prefix) => isDNS1035Label(prefix ? maskTrailingDash(n) : n),
  // A core Event's strategy validates no name (old clients' Events keep being accepted): only the generic
  // ObjectMeta check, ValidatePathSegmentName, applies. events.k8s.io/v1 Events are subdomains.
  "/events": pathSegment,
  "rbac.authorization.k8s.io/roles": rbacName,
  "rbac.authorization.k8s.io/clusterroles": rbacName,
  "rbac.authorization.k8s.io/rolebindings": rbacName,
  "rbac.authorization.k8s.io/clusterrolebindings": rbacName,
};

/** A map of strings kube decodes into a Go `map[string]string`: why `v` cannot be one, or undefined. */
const stringMapProblem = (v: unknown, field: string): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) return unmarshalError(v, field, "map[string]string");
  for (const value of Object.values(v))
    if (value !== null && typeof value !== "string") return unmarshalError(value, field, "string");
  return undefined;
};

/** ObjectMeta's string fields: a number or an object there cannot be decoded (a 400, decision 132). */
const OBJECT_META_STRINGS = ["name", "generateName", "namespace", "uid", "resourceVersion"] as const;

/**
 * Why kube's typed decoding cannot read the object (answered 400 "cannot be handled as a <Kind>" for a
 * body, 422 on the `patch` field for a patch's result): ObjectMeta's string fields must be strings,
 * labels and annotations maps of strings, and a ConfigMap's `data` too. Stored, such an object is one no typed client can decode (decision 125).
 */
export const typedDecodeProblem = (
  res: Pick<ResourceInfo, "group" | "kind">,
  o: KubeObject,
): string | undefined => {
  const m = o.metadata;
  if (m !== undefined && m !== null && !isRecord(m))
    return unmarshalError(m, `${res.kind}.metadata`, "v1.ObjectMeta");
  const metadata = isRecord(m) ? m : {};
  const notString = OBJECT_META_STRINGS.find(
    (f) => metadata[f] !== undefined && metadata[f] !== null && typeof metadata[f] !== "string",
  );
  if (notString) return unmarshalError(metadata[notString], `ObjectMeta.metadata.${notString}`, "string");
  return (
    stringMapProblem(metadata.labels, "ObjectMeta.metadata.labels") ??
    stringMapProblem(metadata.annotations, "ObjectMeta.metadata.annotations") ??
    (res.group === "" && res.kind === "ConfigMap" ? stringMapProblem(o.data, "ConfigMap.data") : undefined)
  );
};

/** Why `key` is not a label or annotation key (kube's IsQualifiedName), or undefined when it is one. */
export const labelKeyProblem = (key: string): string | undefined => {
  const why = isQualifiedName(key);
  return why.length > 0 ? `Invalid value: ${JSON.stringify(key)}: ${why.join("; ")}` : undefined;
};

/** Why `value` is not a label value (kube's IsValidLabelValue), or undefined when it is one. */
export const labelValueProblem = (value: string): string | undefined => {
  const why = isValidLabelValue(value);
  return why.length > 0 ? `Invalid value: ${JSON.stringify(value)}: ${why.join("; ")}` : undefined;
};

/**
 * Why `name` is not a valid name for the kind (`prefix`: as a generateName), one message per cause kube
 * gives: Namespaces are DNS labels, Services DNS-1035 labels, RBAC objects and core Events only need to be
 * path segments (kube's ValidateRBACName: `system:discovery` is a valid ClusterRole name), everything else
 * is a DNS subdomain.
 */
export const nameProblems = (
  res: Pick<ResourceInfo, "group" | "plural">,
  name: string,
  prefix = false,
): string[] => (NAME_RULES[`${res.group}/${res.plural}`] ?? subdomainName)(name, prefix);

/** kube's SimpleNameGenerator keeps a generated name within 63 characters: 58 of the prefix, 5 random. */
const MAX_GENERATED_PREFIX = 63 - 5;
/** The alphabet of apimachinery's rand.String (no vowels, no look-alikes). */
const NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789";

/**
 * The name kube generates from a generateName: the prefix cut to 58 bytes (a 100-character generateName
 * still makes a valid 63-character name), then five random characters.
 */
export const generatedName = (prefix: string, pick: (n: number) => number = randomInt): string => {
  const kept = Buffer.from(prefix).subarray(0, MAX_GENERATED_PREFIX).toString();
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += NAME_CHARS[pick(NAME_CHARS.length)];
  return `${kept}${suffix}`;
};

const invalidCause = (field: string, value: unknown, message: string): StatusCause => ({
  reason: "FieldValueInvalid",
  field,
  message: `Invalid value: ${JSON.stringify(value)}: ${message}`,
});

/**
 * Label values: at most 63 characters of the label alphabet, or empty (kube decodes a null as ""). A value
 * that is no string at all (a webhook's, past the decoding of the request) is refused as kube's typed
 * decoding would.
 */
export const labelValueCauses = (o: KubeObject): StatusCause[] =>
  Object.values(isRecord(o.metadata?.labels) ? o.metadata.labels : {}).flatMap((v) =>
    (v === null || typeof v === "string" ? isValidLabelValue(v ?? "") : [LABEL_VALUE_MESSAGE]).map((m) =>
      invalidCause("metadata.labels", v, m),
    ),
  );

/**
 * kube's ObjectMeta validation beyond the name: label and annotation keys, finalizers (not both of the garbage
 * collector's), ownerReferences.
 * An annotation key's case does not matter (kube lower-cases it before the qualified-name check).
 */
export const metadataCauses = (o: KubeObject): StatusCause[] => {
  const causes: StatusCause[] = [];
  const m = meta(o);
  for (const [field, map, fold] of [
    ["metadata.labels", m.labels, (k: string) => k],
    ["metadata.annotations", m.annotations, (k: string) => k.toLowerCase()],
  ] as const)
    for (const k of Object.keys(isRecord(map) ? map : {}))
      appendAll(
        causes,
        isQualifiedName(fold(k)).map((why) => invalidCause(field, k, why)),
      );
  const annotationBytes = Object.entries(isRecord(m.annotations) ? m.annotations : {}).reduce(
    (n, [k, v]) => n + k.length + String(v ?? "").length,
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
    causes.push(
      ...isQualifiedName(typeof f === "string" ? f : "").map((why) =>
        invalidCause("metadata.finalizers", f, why),
      ),
    );
  const finalizers = Array.isArray(m.finalizers) ? m.finalizers : [];
  // The garbage collector cannot both orphan an object's dependents and delete them first.
  if (finalizers.includes("orphan") && finalizers.includes("foregroundDeletion"))
    causes.push({
      reason: "FieldValueInvalid",
      field: "metadata.finalizers",
      message: `Invalid value: []string{${finalizers.map((f) => JSON.stringify(f)).join(", ")}}: finalizer orphan and foregroundDeletion cannot be both set`,
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

/** A metav1.Time as Go's `%v` prints it in a message: `2026-01-01 00:00:00 +0000 UTC`. */
const goTime = (v: unknown): string => {
  const ms = typeof v === "string" ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(ms)) return String(v);
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} +0000 UTC`;
};

/**
 * kube's ValidateObjectMetaUpdate for what BeforeUpdate does not put back: a uid other than the stored one, and
 * a deletionTimestamp or deletionGracePeriodSeconds set on an object that has none (or another grace period).
 * kube validates them twice (the strategy's check and the generic one), so each cause comes twice, as there.
 */
export const immutableMetadataCauses = (old: KubeObject, next: KubeObject): StatusCause[] => {
  const before = meta(old);
  const after = meta(next);
  const causes: StatusCause[] = [];
  const immutable = (field: string, shown: string): void => {
    for (let i = 0; i < 2; i++)
      causes.push({
        reason: "FieldValueInvalid",
        field: `metadata.${field}`,
        message: `Invalid value: ${shown}: field is immutable`,
      });
  };
  if (typeof after.uid === "string" && after.uid !== "" && after.uid !== before.uid)
    immutable("uid", JSON.stringify(after.uid));
  if (
    before.deletionTimestamp === undefined &&
    after.deletionTimestamp !== undefined &&
    after.deletionTimestamp !== null
  )
    immutable("deletionTimestamp", goTime(after.deletionTimestamp));
  const grace = after.deletionGracePeriodSeconds;
  if (grace !== undefined && grace !== null && grace !== before.deletionGracePeriodSeconds)
    immutable("deletionGracePeriodSeconds", String(grace));
  return causes;
};

/** The fields of metav1.OwnerReference and metav1.ManagedFieldsEntry: anything else is an unknown field. */
const NESTED_META_FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  ownerReferences: new Set(["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"]),
  managedFields: new Set([
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
  ]),
};

/**
 * The fields under `metadata` kube's typed decoding does not know (`metadata.lables`,
 * `metadata.ownerReferences[0].bogus`), as strict field validation names them; [] for the usual metadata.
 */
export const unknownMetadataFields = (o: KubeObject): string[] => {
  const m = meta(o);
  const unknown: string[] = [];
  for (const [k, v] of Object.entries(m)) {
    if (!OBJECT_META_FIELDS.has(k)) unknown.push(`metadata.${k}`);
    const known = NESTED_META_FIELDS[k];
    if (!known || !Array.isArray(v)) continue;
    v.forEach((item, i) => {
      if (!isRecord(item)) return;
      for (const f of Object.keys(item)) if (!known.has(f)) unknown.push(`metadata.${k}[${i}].${f}`);
    });
  }
  return unknown;
};

/** `o` without the metadata fields unknownMetadataFields names (`o` itself when it has none). */
export const withKnownMetadata = (o: KubeObject, unknown: readonly string[]): KubeObject => {
  if (unknown.length === 0) return o;
  const m: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta(o))) {
    if (!OBJECT_META_FIELDS.has(k)) continue;
    const known = NESTED_META_FIELDS[k];
    m[k] =
      known && Array.isArray(v)
        ? v.map((item) =>
            isRecord(item) ? Object.fromEntries(Object.entries(item).filter(([f]) => known.has(f))) : item,
          )
        : v;
  }
  return { ...o, metadata: m };
};
