/**
 * Validation kube-apiserver applies to the built-in kinds the local server serves, and to list options —
 * the parts the differential conformance suite (test/cluster/conformance.cluster.test.ts) found missing
 * here. Pure: an object (or the query) in, kube's field causes or decode error out; rest/ and list-pages.ts turn
 * them into kube's 422 Invalid and 400 BadRequest answers. CRD-backed kinds are validated by their schemas
 * instead (src/apiserver/schema).
 */
import type { KubeObject } from "../kube/object.js";
import { isRecord } from "../kube/object.js";
import { appendAll } from "../lists.js";
import { decodeKubeTime, type TimeLayout } from "./kube-time.js";
import { isQualifiedName } from "./object-meta.js";
import { checkBoolExpression } from "./schema/cel.js";
import type { ResourceInfo, StatusCause } from "./types.js";

/** kube's limit on a ConfigMap's or Secret's data (core validation `MaxSecretSize`). */
export const MAX_DATA_BYTES = 1024 * 1024;

const required = (field: string, message: string): StatusCause => ({
  reason: "FieldValueRequired",
  field,
  message: message ? `Required value: ${message}` : "Required value",
});

/** Bytes of a ConfigMap's or Secret's data as kube counts them: every key plus every value. */
const dataBytes = (o: KubeObject): number => {
  let n = 0;
  for (const field of ["data", "binaryData", "stringData"]) {
    const m = o[field];
    if (!isRecord(m)) continue;
    for (const [k, v] of Object.entries(m)) n += Buffer.byteLength(k) + Buffer.byteLength(String(v ?? ""));
  }
  return n;
};

const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** kube's validateMatchConditions: at most 64, each named (qualified, unique) with a bool CEL expression. */
const matchConditionCauses = (v: unknown, at: string): StatusCause[] => {
  if (!Array.isArray(v)) return [];
  const causes: StatusCause[] = [];
  if (v.length > 64)
    causes.push({
      reason: "FieldValueTooMany",
      field: at,
      message: `Too many: ${v.length}: must have at most 64 items`,
    });
  const seen = new Set<string>();
  v.forEach((mc, j) => {
    const field = `${at}[${j}]`;
    const m = isRecord(mc) ? mc : {};
    const expression = typeof m.expression === "string" ? m.expression.trim() : "";
    if (expression === "") causes.push(required(`${field}.expression`, ""));
    else {
      const error = checkBoolExpression(expression, ["object", "oldObject", "request", "authorizer"]);
      if (error) causes.push(invalidValue(`${field}.expression`, expression, error));
    }
    const name = typeof m.name === "string" ? m.name : "";
    if (name === "") causes.push(required(`${field}.name`, ""));
    else {
      const local = name.slice(name.lastIndexOf("/") + 1);
      if (!QUALIFIED_NAME.test(name) || local.length > 63)
        causes.push(
          invalidValue(
            `${field}.name`,
            name,
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
          ),
        );
      if (seen.has(name))
        causes.push({
          reason: "FieldValueDuplicate",
          field: `${field}.name`,
          message: `Duplicate value: ${JSON.stringify(name)}`,
        });
      seen.add(name);
    }
  });
  return causes;
};

const webhookCauses = (o: KubeObject): StatusCause[] => {
  const causes: StatusCause[] = [];
  const webhooks = Array.isArray(o.webhooks) ? o.webhooks : [];
  webhooks.forEach((w, i) => {
    if (!isRecord(w)) return;
    const at = `webhooks[${i}]`;
    const sideEffects = ["None", "NoneOnDryRun"];
    if (w.sideEffects === undefined)
      causes.push(required(`${at}.sideEffects`, "must specify one of None, NoneOnDryRun"));
    else if (!sideEffects.includes(String(w.sideEffects)))
      causes.push({
        reason: "FieldValueNotSupported",
        field: `${at}.sideEffects`,
        message: `Unsupported value: ${JSON.stringify(w.sideEffects)}: supported values: "None", "NoneOnDryRun"`,
      });
    const versions = Array.isArray(w.admissionReviewVersions) ? w.admissionReviewVersions : [];
    if (versions.length === 0)
      causes.push(required(`${at}.admissionReviewVersions`, "must specify one of v1, v1beta1"));
    else if (!versions.some((v) => v === "v1" || v === "v1beta1"))
      causes.push({
        reason: "FieldValueInvalid",
        field: `${at}.admissionReviewVersions`,
        message: `Invalid value: ${JSON.stringify(versions)}: must include at least one of v1, v1beta1`,
      });
    appendAll(causes, matchConditionCauses(w.matchConditions, `${at}.matchConditions`));
    const client = isRecord(w.clientConfig) ? w.clientConfig : {};
    const hasUrl = typeof client.url === "string";
    const hasService = isRecord(client.service);
    if (hasUrl === hasService)
      causes.push(required(`${at}.clientConfig`, "exactly one of url or service is required"));
  });
  return causes;
};

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

const invalidValue = (field: string, value: unknown, why: string): StatusCause => ({
  reason: "FieldValueInvalid",
  field,
  message: `Invalid value: ${JSON.stringify(value)}: ${why}`,
});

const mapOf = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

/** Keys of a ConfigMap's or Secret's maps (core validation `IsConfigMapKey`). */
const keyCauses = (o: KubeObject, fields: readonly string[]): StatusCause[] =>
  fields.flatMap((field) =>
    Object.keys(mapOf(o[field]))
      .filter((k) => k.length > 253 || !CONFIG_KEY.test(k) || k === "." || k === "..")
      .map((k) => invalidValue(`${field}[${k}]`, k, CONFIG_KEY_MESSAGE)),
  );

const sizeCauses = (o: KubeObject): StatusCause[] =>
  dataBytes(o) > MAX_DATA_BYTES
    ? [
        {
          reason: "FieldValueTooLong",
          field: "[]",
          message: `Too long: may not be more than ${MAX_DATA_BYTES} bytes`,
        },
      ]
    : [];

/** `immutable: true` freezes data (and itself) on update, as core validation's ValidateConfigMapUpdate/SecretUpdate. */
const immutableCauses = (
  o: KubeObject,
  old: KubeObject | undefined,
  fields: readonly string[],
): StatusCause[] => {
  if (old?.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (o.immutable !== true)
    causes.push({
      reason: "FieldValueForbidden",
      field: "immutable",
      message: "Forbidden: field is immutable when `immutable` is set",
    });
  for (const field of fields)
    if (JSON.stringify(o[field] ?? null) !== JSON.stringify(old[field] ?? null))
      causes.push({
        reason: "FieldValueForbidden",
        field,
        message: "Forbidden: field is immutable when `immutable` is set",
      });
  return causes;
};

/** Keys a Secret of a type must hold (core validation `ValidateSecret`). */
const SECRET_TYPE_KEYS: Readonly<Record<string, readonly string[]>> = {
  "kubernetes.io/tls": ["tls.crt", "tls.key"],
  "kubernetes.io/dockerconfigjson": [".dockerconfigjson"],
  "kubernetes.io/dockercfg": [".dockercfg"],
  "kubernetes.io/ssh-auth": ["ssh-privatekey"],
};

const STANDARD_FINALIZERS = new Set(["kubernetes", "orphan", "foregroundDeletion"]);
const NOT_QUALIFIED = "name is neither a standard finalizer name nor is it fully qualified";

/** core validation's validateFinalizerName: a qualified name, and one of kube's own when it has no `/`. */
const finalizerNameProblems = (f: string): string[] => [
  ...isQualifiedName(f),
  ...(!f.includes("/") && !STANDARD_FINALIZERS.has(f) ? [NOT_QUALIFIED] : []),
];

/**
 * An Event's fields as each API names them. kube validates its internal Event, and its causes carry the
 * internal names (core v1's) whichever API was written — an events.k8s.io Event's `note` over 1 KiB is
 * refused on `message` — but for the reporting controller, named as the request's API names it.
 */
const EVENT_FIELDS = {
  "": {
    involvedObject: "involvedObject",
    message: "message",
    source: "source",
    firstTimestamp: "firstTimestamp",
    lastTimestamp: "lastTimestamp",
    count: "count",
    reportingController: "reportingComponent",
  },
  "events.k8s.io": {
    involvedObject: "regarding",
    message: "note",
    source: "deprecatedSource",
    firstTimestamp: "deprecatedFirstTimestamp",
    lastTimestamp: "deprecatedLastTimestamp",
    count: "deprecatedCount",
    reportingController: "reportingController",
  },
} as const;

type EventGroup = keyof typeof EVENT_FIELDS;

/** core validation's limits on an Event's strings (bytes). */
const EVENT_LIMITS = { reportingInstance: 128, action: 128, reason: 128, message: 1024 } as const;

const str = (v: unknown): string => (typeof v === "string" ? v : "");
/** A Time or MicroTime as decoded: null (and the zero time, stored as null) is unset. */
const timeSet = (v: unknown): boolean => v !== undefined && v !== null;

/** The internal Event's fields of `o`, read through the names of the API it was written with. */
const internalEvent = (group: EventGroup, o: KubeObject) => {
  const names = EVENT_FIELDS[group];
  return {
    namespace: str(o.metadata?.namespace),
    involvedObject: o[names.involvedObject],
    involvedNamespace: str(mapOf(o[names.involvedObject]).namespace),
    reason: str(o.reason),
    message: str(o[names.message]),
    source: o[names.source],
    firstTimestamp: o[names.firstTimestamp],
    lastTimestamp: o[names.lastTimestamp],
    count: Number(o[names.count] ?? 0) || 0,
    type: str(o.type),
    eventTime: o.eventTime,
    series: o.series,
    action: str(o.action),
    related: o.related,
    reportingController: str(o[names.reportingController]),
    reportingInstance: str(o.reportingInstance),
  };
};

type InternalEvent = ReturnType<typeof internalEvent>;

const tooLong = (e: InternalEvent, field: keyof typeof EVENT_LIMITS): StatusCause[] =>
  Buffer.byteLength(e[field]) > EVENT_LIMITS[field]
    ? [invalidValue(field, "", `can have at most ${EVENT_LIMITS[field]} characters`)]
    : [];

/**
 * core validation's legacyValidateEvent, run for both APIs on create and update. An Event without an
 * eventTime (client-go's old recorder) must name its object's namespace, or be in "default" (or have no
 * namespace); one with an eventTime also needs a reporting controller, instance, action and reason.
 */
const legacyEventCauses = (group: EventGroup, e: InternalEvent): StatusCause[] => {
  const mismatch = invalidValue(
    "involvedObject.namespace",
    e.involvedNamespace,
    "does not match event.namespace",
  );
  if (!timeSet(e.eventTime)) {
    if (e.involvedNamespace === "") return e.namespace !== "" && e.namespace !== "default" ? [mismatch] : [];
    return e.namespace !== e.involvedNamespace ? [mismatch] : [];
  }
  const controller = EVENT_FIELDS[group].reportingController;
  return [
    ...(e.involvedNamespace === "" && e.namespace !== "default" && e.namespace !== "kube-system"
      ? [mismatch]
      : []),
    ...(e.reportingController === "" ? [required(controller, "")] : []),
    ...isQualifiedName(e.reportingController).map((why) =>
      invalidValue(controller, e.reportingController, why),
    ),
    ...(e.reportingInstance === "" ? [required("reportingInstance", "")] : []),
    ...tooLong(e, "reportingInstance"),
    ...(e.action === "" ? [required("action", "")] : []),
    ...tooLong(e, "action"),
    ...(e.reason === "" ? [required("reason", "")] : []),
    ...tooLong(e, "reason"),
    ...tooLong(e, "message"),
  ];
};

/** validateV1EventSeries: a series has seen at least two occurrences, the last one timed. */
const seriesCauses = (e: InternalEvent): StatusCause[] => {
  if (e.series === undefined || e.series === null) return [];
  const series = mapOf(e.series);
  return [
    ...(Number(series.count ?? 0) < 2 ? [invalidValue("series.count", "", "should be at least 2")] : []),
    ...(timeSet(series.lastObservedTime) ? [] : [required("series.lastObservedTime", "")]),
  ];
};

const needsUnset = (field: string): StatusCause => invalidValue(field, "", "needs to be unset");

/** The fields an events.k8s.io/v1 update may not change (ValidateEventUpdate; `reason` is checked twice). */
const EVENT_IMMUTABLE = [
  "involvedObject",
  "reason",
  "message",
  "source",
  "firstTimestamp",
  "lastTimestamp",
  "count",
  "reason",
  "type",
  "eventTime",
  "action",
  "related",
  "reportingController",
  "reportingInstance",
] as const;

/**
 * core validation's ValidateEventCreate and ValidateEventUpdate: core v1 Events get the legacy checks only
 * (kube keeps accepting what old clients write); events.k8s.io/v1 Events are strict — an eventTime, a type,
 * none of the deprecated fields on create, and nothing but the series changed on update.
 */
const eventCauses = (group: EventGroup, o: KubeObject, old: KubeObject | undefined): StatusCause[] => {
  const e = internalEvent(group, o);
  const legacy = legacyEventCauses(group, e);
  if (group === "") return legacy;
  if (old) {
    const before = internalEvent(group, old);
    return [
      ...legacy,
      ...(JSON.stringify(e.series) !== JSON.stringify(before.series) ? seriesCauses(e) : []),
      ...EVENT_IMMUTABLE.filter((f) => JSON.stringify(e[f]) !== JSON.stringify(before[f])).map((f) =>
        invalidValue(f, e[f], "field is immutable"),
      ),
    ];
  }
  const source = mapOf(e.source);
  return [
    ...legacy,
    ...seriesCauses(e),
    ...(timeSet(e.eventTime) ? [] : [required("eventTime", "")]),
    ...(e.type !== "Normal" && e.type !== "Warning"
      ? [invalidValue("type", "", `has invalid value: ${e.type}`)]
      : []),
    ...(timeSet(e.firstTimestamp) ? [needsUnset("firstTimestamp")] : []),
    ...(timeSet(e.lastTimestamp) ? [needsUnset("lastTimestamp")] : []),
    ...(e.count !== 0 ? [needsUnset("count")] : []),
    ...(str(source.component) !== "" || str(source.host) !== "" ? [needsUnset("source")] : []),
  ];
};

/** One kind's validation: the causes for the object to be stored (`old` undefined on create). */
interface KindRule {
  readonly group: string;
  readonly kind: string;
  readonly causes: (o: KubeObject, old: KubeObject | undefined) => StatusCause[];
}

/** kube's validation of the built-in kinds the local server serves, one row per kind (rules as data). */
const KIND_RULES: readonly KindRule[] = [
  {
    group: "",
    kind: "ConfigMap",
    causes: (o, old) => [
      ...keyCauses(o, ["data", "binaryData"]),
      ...Object.keys(mapOf(o.data))
        .filter((k) => Object.hasOwn(mapOf(o.binaryData), k))
        .map((k) => invalidValue(`data[${k}]`, k, "duplicate of key present in binaryData")),
      ...sizeCauses(o),
      ...immutableCauses(o, old, ["data", "binaryData"]),
    ],
  },
  {
    group: "",
    kind: "Secret",
    causes: (o, old) => {
      const type = typeof o.type === "string" ? o.type : "Opaque";
      const data = mapOf(o.data);
      return [
        ...keyCauses(o, ["data"]),
        ...(SECRET_TYPE_KEYS[type] ?? [])
          .filter((k) => !Object.hasOwn(data, k))
          .map((k) => required(`data[${k}]`, "")),
        ...sizeCauses(o),
        ...(old && old.type !== undefined && old.type !== o.type
          ? [invalidValue("type", o.type, "field is immutable")]
          : []),
        ...immutableCauses(o, old, ["data"]),
      ];
    },
  },
  ...(["", "events.k8s.io"] as const).map(
    (group): KindRule => ({ group, kind: "Event", causes: (o, old) => eventCauses(group, o, old) }),
  ),
  {
    group: "coordination.k8s.io",
    kind: "Lease",
    // spec.strategy and spec.preferredHolder are dropped before validation (defaultBuiltIn: the
    // CoordinatedLeaderElection gate is off in 1.33), so kube's rules for them never apply.
    causes: (o) => {
      const spec = mapOf(o.spec);
      const [duration, transitions] = [spec.leaseDurationSeconds, spec.leaseTransitions];
      return [
        ...(typeof duration === "number" && duration <= 0
          ? [invalidValue("spec.leaseDurationSeconds", duration, "must be greater than 0")]
          : []),
        ...(typeof transitions === "number" && transitions < 0
          ? [invalidValue("spec.leaseTransitions", transitions, "must be greater than or equal to 0")]
          : []),
      ];
    },
  },
  {
    group: "",
    kind: "Namespace",
    // ValidateNamespace checks spec.finalizers on create only: an update keeps the stored spec.
    causes: (o, old) =>
      old
        ? []
        : (Array.isArray(o.spec?.finalizers) ? (o.spec.finalizers as unknown[]) : []).flatMap((f) =>
            finalizerNameProblems(String(f ?? "")).map((why) => invalidValue("spec.finalizers", f, why)),
          ),
  },
  ...(["Role", "ClusterRole"] as const).map(
    (kind): KindRule => ({
      group: "rbac.authorization.k8s.io",
      kind,
      causes: (o) =>
        (Array.isArray(o.rules) ? o.rules : []).flatMap((r, i) =>
          isRecord(r) && Array.isArray(r.verbs) && r.verbs.length > 0
            ? []
            : [required(`rules[${i}].verbs`, "verbs must contain at least one value")],
        ),
    }),
  ),
  ...(["RoleBinding", "ClusterRoleBinding"] as const).map(
    (kind): KindRule => ({
      group: "rbac.authorization.k8s.io",
      kind,
      causes: (o, old) =>
        old && JSON.stringify(o.roleRef) !== JSON.stringify(old.roleRef)
          ? [invalidValue("roleRef", o.roleRef, "cannot change roleRef")]
          : [],
    }),
  ),
  ...(["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] as const).map(
    (kind): KindRule => ({ group: "admissionregistration.k8s.io", kind, causes: (o) => webhookCauses(o) }),
  ),
];

/**
 * The core group's ObjectMeta (core validation `validateKubeFinalizerName`, on top of the generic
 * qualified-name check): a finalizer without a `/` must be one of kube's own. Other groups (a CRD's own
 * `customresourcecleanup.apiextensions.k8s.io`) validate with the generic check only.
 */
const finalizerCauses = (o: KubeObject): StatusCause[] =>
  (Array.isArray(o.metadata?.finalizers) ? o.metadata.finalizers : []).flatMap((f, i) =>
    typeof f === "string" && !f.includes("/") && !STANDARD_FINALIZERS.has(f)
      ? [invalidValue(`metadata.finalizers[${i}]`, f, NOT_QUALIFIED)]
      : [],
  );

/** The 422 causes kube's validation of a built-in kind gives `o`: its ObjectMeta's and its kind's own. */
export function builtinCauses(
  res: Pick<ResourceInfo, "group" | "kind">,
  o: KubeObject,
  old?: KubeObject,
): StatusCause[] {
  return [
    ...(res.group === "" ? finalizerCauses(o) : []),
    ...KIND_RULES.filter((r) => r.group === res.group && r.kind === res.kind).flatMap((r) =>
      r.causes(o, old),
    ),
  ];
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A metav1.Time or MicroTime field of a built-in kind, with the Go struct field its decode errors name. */
interface TimeField {
  readonly path: readonly [string] | readonly [string, string];
  readonly layout: TimeLayout;
  readonly goField: string;
}

const eventTimes = (first: string, last: string): readonly TimeField[] => [
  { path: ["eventTime"], layout: "MicroTime", goField: "Event.eventTime" },
  {
    path: ["series", "lastObservedTime"],
    layout: "MicroTime",
    goField: "EventSeries.series.lastObservedTime",
  },
  { path: [first], layout: "Time", goField: `Event.${first}` },
  { path: [last], layout: "Time", goField: `Event.${last}` },
];

/** The timestamps of the built-in kinds clients write, by `group/Kind` (metadata's are the server's). */
const TIME_FIELDS: Readonly<Record<string, readonly TimeField[]>> = {
  "coordination.k8s.io/Lease": [
    { path: ["spec", "acquireTime"], layout: "MicroTime", goField: "LeaseSpec.spec.acquireTime" },
    { path: ["spec", "renewTime"], layout: "MicroTime", goField: "LeaseSpec.spec.renewTime" },
  ],
  "/Event": eventTimes("firstTimestamp", "lastTimestamp"),
  "events.k8s.io/Event": eventTimes("deprecatedFirstTimestamp", "deprecatedLastTimestamp"),
};

const timeFieldsOf = (res: Pick<ResourceInfo, "group" | "kind">): readonly TimeField[] =>
  TIME_FIELDS[`${res.group}/${res.kind}`] ?? [];

/** The value at a time field's path, and the record holding it (undefined when there is none). */
const atPath = (
  o: KubeObject,
  path: TimeField["path"],
): { holder: Record<string, unknown>; key: string } | undefined => {
  const holder = path.length === 2 ? o[path[0]] : o;
  const key = path[path.length - 1]!;
  return isRecord(holder) && holder[key] !== undefined ? { holder, key } : undefined;
};

/**
 * The built-in kind's timestamps as kube's typed decoding leaves them: in UTC, a Time to the second, a
 * MicroTime to the microsecond (an offset or an extra fraction a client sent is not what it reads back), the
 * zero time as null. A time kube could not decode is left for builtinDecodeProblem to refuse.
 */
export function typedTimes(res: Pick<ResourceInfo, "group" | "kind">, o: KubeObject): KubeObject {
  let out = o;
  for (const f of timeFieldsOf(res)) {
    const at = atPath(out, f.path);
    if (!at) continue;
    const decoded = decodeKubeTime(f.layout, at.holder[at.key], f.goField);
    if ("error" in decoded || decoded.text === at.holder[at.key]) continue;
    const holder = { ...at.holder, [at.key]: decoded.text };
    out = f.path.length === 2 ? { ...out, [f.path[0]]: holder } : (holder as KubeObject);
  }
  return out;
}

/**
 * What kube's typed decoding refuses before any validation runs (answered 400, "cannot be handled as a
 * <Kind>"): a Lease's or an Event's times must be what Go's time.Parse reads in their layout (a MicroTime
 * has exactly six fraction digits: JavaScript's toISOString() is refused), a Lease's integers integers; a
 * Secret's data and a ConfigMap's binaryData must be base64.
 */
export function builtinDecodeProblem(
  res: Pick<ResourceInfo, "group" | "kind">,
  o: KubeObject,
): string | undefined {
  const refused = (why: string) => `${res.kind} in version "v1" cannot be handled as a ${res.kind}: ${why}`;
  if (res.group === "" && (res.kind === "Secret" || res.kind === "ConfigMap")) {
    const field = res.kind === "Secret" ? "data" : "binaryData";
    for (const v of Object.values(mapOf(o[field])))
      if (typeof v !== "string" || !BASE64.test(v.replace(/\s/g, "")))
        return refused("illegal base64 data at input byte 0");
    return undefined;
  }
  for (const f of timeFieldsOf(res)) {
    const at = atPath(o, f.path);
    const decoded = at && decodeKubeTime(f.layout, at.holder[at.key], f.goField);
    if (decoded && "error" in decoded) return refused(decoded.error);
  }
  if (res.group !== "coordination.k8s.io" || res.kind !== "Lease") return undefined;
  const spec = isRecord(o.spec) ? o.spec : {};
  for (const field of ["leaseDurationSeconds", "leaseTransitions"]) {
    const v = spec[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v > 2 ** 31 - 1 || v < -(2 ** 31))
      return refused(`spec.${field}: ${JSON.stringify(v)} is not a 32-bit integer`);
  }
  return undefined;
}

const forbidden = (field: string, why: string): StatusCause => ({
  reason: "FieldValueForbidden",
  field,
  message: `Forbidden: ${why}`,
});

/**
 * A watch's options (apimachinery `validateWatchOptions`). `sendInitialEvents` is refused on every request:
 * the servers this project targets (Kubernetes 1.33, OpenShift 4.20) run with the WatchList feature gate
 * off.
 */
const watchOptionCauses = (q: URLSearchParams): StatusCause[] => {
  const causes: StatusCause[] = [];
  const match = q.get("resourceVersionMatch") ?? "";
  const streaming = q.has("sendInitialEvents");
  if (streaming) {
    if (match !== "NotOlderThan")
      causes.push(
        forbidden(
          "resourceVersionMatch",
          "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
      );
    causes.push(
      forbidden(
        "sendInitialEvents",
        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
      ),
    );
  }
  if (match !== "") {
    if (!streaming)
      causes.push(
        forbidden(
          "resourceVersionMatch",
          "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
      );
    if (match !== "NotOlderThan")
      causes.push({
        reason: "FieldValueNotSupported",
        field: "resourceVersionMatch",
        message: `Unsupported value: ${JSON.stringify(match)}: supported values: "NotOlderThan"`,
      });
  }
  return causes;
};

/** kube's validation of list options (apimachinery `ValidateListOptions`): 422 causes on `ListOptions`. */
export function listOptionCauses(q: URLSearchParams, watch = false): StatusCause[] {
  if (watch) return watchOptionCauses(q);
  if (q.has("sendInitialEvents"))
    return [forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")];
  const match = q.get("resourceVersionMatch");
  if (!match) return [];
  const rv = q.get("resourceVersion") ?? "";
  if (rv === "")
    return [
      {
        reason: "FieldValueForbidden",
        field: "resourceVersionMatch",
        message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
      },
    ];
  if (match !== "Exact" && match !== "NotOlderThan")
    return [
      {
        reason: "FieldValueNotSupported",
        field: "resourceVersionMatch",
        message: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`,
      },
    ];
  if (match === "Exact" && rv === "0")
    return [
      {
        reason: "FieldValueForbidden",
        field: "resourceVersionMatch",
        message: 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      },
    ];
  return [];
}
