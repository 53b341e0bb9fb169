/**
 * kube's REST strategies as pure functions over objects: the version an object is read through, what the
 * server restores after a client or webhook wrote it, built-in defaulting, pruning with unknown-field
 * reporting, validation, and the comparisons that decide whether generation moves or a write is a no-op.
 * No storage, no clock, no admission: the write path (write-path.ts) calls these in kube's order.
 */
import { jsonText } from "../../json-text.js";
import { isRecord, jsonEqual, type KubeObject } from "../../kube/object.js";
import { appendAll } from "../../lists.js";
import { builtinFieldTypes, TYPED_FIELDS, type TypedField, type TypedStruct } from "../builtin-shapes.js";
import { builtinCauses, builtinDecodeProblem, typedTimes } from "../builtin-validation.js";
import type { ListTypes, ManagedFieldsEntry } from "../managed-fields.js";
import {
  IDENTITY_AND_SERVER_METADATA,
  immutableMetadataCauses,
  labelValueCauses,
  meta,
  metadataCauses,
  NAMESPACE_NAME_LABEL,
  nameProblems,
  unknownMetadataFields,
  withKnownMetadata,
} from "../object-meta.js";
import { ApiError, badRequest, conflict, invalid } from "../status.js";
import type { ResourceInfo, StatusCause } from "../types.js";
import type { RequestContext } from "./request.js";

export const gvOf = (res: ResourceInfo, version: string): string =>
  res.group ? `${res.group}/${version}` : version;

/** The object as read through `version` (no conversion: CRDs here use the `None` strategy). */
export const asVersion = (res: ResourceInfo, version: string, o: KubeObject): KubeObject => {
  const apiVersion = gvOf(res, version);
  return o.apiVersion === apiVersion ? o : { ...o, apiVersion };
};

export const isNamespaces = (res: ResourceInfo): boolean => res.group === "" && res.plural === "namespaces";

/** A namespace also waits for its `spec.finalizers` (the namespace controller empties them). */
export const namespacePending = (res: ResourceInfo, o: KubeObject): boolean =>
  isNamespaces(res) && ((o.spec?.finalizers as unknown[]) ?? []).length > 0;

export const isDeleting = (o: KubeObject): boolean => typeof o.metadata?.deletionTimestamp === "string";

export const nextGeneration = (old: KubeObject): number => (Number(old.metadata?.generation) || 0) + 1;

/**
 * Whether the server keeps metadata.generation for a kind: every custom resource, and the built-ins whose
 * kube strategy sets it (Pods, workloads, webhook configurations, CRDs, PDBs, PriorityClasses,
 * NetworkPolicies). Others (ConfigMaps, Secrets, RBAC, Namespaces, Leases…) never get one from the server.
 */
export const tracksGeneration = (res: ResourceInfo): boolean => !res.builtIn || res.generation === true;

const METADATA = new Set(["metadata"]);
const METADATA_AND_STATUS = new Set(["metadata", "status"]);
const VOLATILE_METADATA = new Set(["resourceVersion", "managedFields"]);

/** Whether generation moves: anything but metadata changed (and but status when status is a subresource). */
export const specChanged = (res: ResourceInfo, a: KubeObject, b: KubeObject): boolean =>
  !jsonEqual(a, b, res.statusSubresource ? METADATA_AND_STATUS : METADATA);

/** The managedFields entries without their timestamps. */
const owners = (m: Record<string, unknown>): unknown =>
  Array.isArray(m.managedFields)
    ? m.managedFields.map((e) => (isRecord(e) ? { ...e, time: undefined } : e))
    : undefined;

/**
 * Equal but for what a no-op write would still touch (resourceVersion, managedFields timestamps).
 * Ownership changes are real changes (a second applier becomes co-owner); timestamps alone are not.
 */
export const sameButVolatile = (a: KubeObject, b: KubeObject): boolean => {
  if (!jsonEqual(a, b, METADATA)) return false;
  const ma = meta(a);
  const mb = meta(b);
  return jsonEqual(ma, mb, VOLATILE_METADATA) && jsonEqual(owners(ma), owners(mb));
};

/**
 * Paths present in `before` but dropped by pruning (`after`): the unknown fields of a CRD object. Runs on
 * every CRD write, so it walks with one output list and skips subtrees pruning kept as they were (same
 * object: nothing was dropped inside).
 */
export const unknownFields = (before: unknown, after: unknown, path = ""): string[] => {
  const out: string[] = [];
  collectUnknown(before, after, path, out);
  return out;
};

const collectUnknown = (before: unknown, after: unknown, path: string, out: string[]): void => {
  if (before === after) return;
  if (isRecord(before) && isRecord(after)) {
    for (const k of Object.keys(before)) {
      const v = before[k];
      if (!(k in after)) out.push(path ? `${path}.${k}` : k);
      else if (typeof v === "object" && v !== null)
        collectUnknown(v, after[k], path ? `${path}.${k}` : k, out);
    }
  } else if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < before.length; i++) {
      const v: unknown = before[i];
      if (typeof v === "object" && v !== null) collectUnknown(v, after[i], `${path}[${i}]`, out);
    }
  }
};

/** Defaulting again after mutating admission, without reporting unknown fields a webhook added. */
export const pruneAndDefaultQuiet = (res: ResourceInfo, version: string, o: KubeObject): KubeObject =>
  res.crd ? res.crd.pruneAndDefault(version, o) : o;

/** `v` without the fields `shape` does not know (copied only where one is dropped); each dropped path noted. */
const typedPrune = (v: unknown, shape: TypedField, path: string, unknown: string[]): unknown => {
  if (shape === true) return v;
  if (Array.isArray(shape)) {
    if (!Array.isArray(v)) return v;
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      const kept = typedPrune(item, shape[0] as TypedStruct, `${path}[${i}]`, unknown);
      if (kept === item) continue;
      out ??= [...v];
      out[i] = kept;
    }
    return out ?? v;
  }
  if (!isRecord(v)) return v;
  const struct = shape as TypedStruct;
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(v)) {
    const at = path ? `${path}.${k}` : k;
    const field = Object.hasOwn(struct, k) ? struct[k] : undefined;
    if (field === undefined) {
      unknown.push(at);
      out ??= { ...v };
      delete out[k];
      continue;
    }
    const kept = typedPrune(v[k], field, at, unknown);
    if (kept === v[k]) continue;
    out ??= { ...v };
    out[k] = kept;
  }
  return out ?? v;
};

/**
 * `o` as kube's typed decoding and CRD pruning leave it (`pruned`, defaulted), and the fields they drop
 * (`unknown`: sorted for a custom resource, as its pruning names them; in the body's order for a built-in):
 * those under `metadata` for every kind, the rest for CRD kinds and the built-ins of TYPED_FIELDS.
 */
const typedView = (
  res: ResourceInfo,
  version: string,
  o: KubeObject,
): { pruned: KubeObject; unknown: string[] } => {
  const unknownMetadata = unknownMetadataFields(o);
  const given = withKnownMetadata(o, unknownMetadata);
  const known = res.crd ? undefined : TYPED_FIELDS[`${res.group}/${res.kind}`];
  if (!res.crd && !known) return { pruned: given, unknown: unknownMetadata };
  if (res.crd) {
    const pruned = res.crd.pruneAndDefault(version, given);
    return { pruned, unknown: [...unknownMetadata, ...unknownFields(given, pruned)].sort() };
  }
  // A built-in's typed decoder names them as it meets them, in the body's order, at any depth.
  const unknown: string[] = [];
  let pruned = given;
  for (const k of Object.keys(given)) {
    if (k === "metadata") {
      appendAll(unknown, unknownMetadata);
      continue;
    }
    const kept = Object.hasOwn(known!, k) ? typedPrune(given[k], known![k]!, k, unknown) : undefined;
    if (kept === given[k]) continue;
    if (pruned === given) pruned = { ...given };
    if (kept === undefined) {
      unknown.push(k);
      delete pruned[k];
    } else pruned[k] = kept;
  }
  return { pruned, unknown };
};

/** A field kube's strict decoding does not know, as it words it in a warning or an error. */
export const unknownField = (path: string): string => `unknown field "${path}"`;

/** The message of kube's strict decoding errors (unknown fields, repeated keys). */
export const strictDecodingError = (problems: readonly string[]): string =>
  `strict decoding error: ${problems.join(", ")}`;

/** How many strict decoding errors kube's decoders report, at most (repeated keys; a built-in's in all). */
export const STRICT_ERRORS_REPORTED = 100;

/**
 * Prune (and default) a client's object as kube's typed decoding and CRD pruning do: unknown fields under
 * `metadata` (every kind's ObjectMeta is typed), and those of CRD kinds and the built-ins of TYPED_FIELDS,
 * are refused (`Strict`: a 400, or for a patch a 422 on `patch`), reported as warnings on `ctx` (`Warn`, kube's
 * default) or dropped silently (`Ignore`); so are the keys the request's body repeats (`ctx.duplicates`).
 */
export const pruneAndDefault = (
  ctx: RequestContext,
  res: ResourceInfo,
  version: string,
  o: KubeObject,
): KubeObject => {
  const { pruned, unknown } = typedView(res, version, o);
  const mode = ctx.fieldValidation ?? "Warn";
  const duplicates = ctx.duplicates ?? [];
  if (mode === "Ignore" || (unknown.length === 0 && duplicates.length === 0)) return pruned;
  // A built-in's typed decoder names its unknown fields first; a custom resource's repeated keys are found
  // by the JSON decoding that comes before its pruning.
  const unknownFields = unknown.map(unknownField);
  // The typed decoder stops at 100 strict errors; a custom resource's JSON decoding at 100 repeated keys,
  // and its pruning names every unknown field.
  const problems = res.builtIn
    ? [...unknownFields, ...duplicates].slice(0, STRICT_ERRORS_REPORTED)
    : [...duplicates, ...unknownFields];
  const problem = strictDecodingError(problems);
  if (mode === "Strict") {
    if (ctx.patch && !ctx.patch.apply)
      throw invalid("", "", "", [
        {
          reason: "FieldValueInvalid",
          field: "patch",
          message: `Invalid value: ${JSON.stringify(jsonText(o))}: ${problem}`,
        },
      ]);
    throw badRequest(`${res.kind} in version "${version}" cannot be handled as a ${res.kind}: ${problem}`);
  }
  // An update applied again (the object changed under it) adds them again: the answer gives each once
  // (recordedWarnings), and they are not searched here, where a hostile body may bring hundreds of thousands.
  for (const w of problems) ctx.warnings.push(w);
  return pruned;
};

/**
 * The first field of `o` the kind's schema does not declare, as a dotted path (`spec.bogus`), or undefined:
 * what server-side apply's typed patch cannot hold. Kinds the local server has no schema for declare all.
 */
export const undeclaredFields = (res: ResourceInfo, version: string, o: KubeObject): string | undefined =>
  typedView(res, version, o).unknown[0];

/** A write may not change a uid, nor mark an object deleting (decision 131): kube's 422, before the rest. */
export const checkImmutableMetadata = (res: ResourceInfo, old: KubeObject, next: KubeObject): void => {
  const causes = immutableMetadataCauses(old, next);
  if (causes.length > 0) throw invalid(errorGroup(res), res.kind, String(old.metadata?.name ?? ""), causes);
};

/**
 * Mutating admission may not change identity or server-owned metadata: `server`'s values are put back.
 * Prunes and defaults the result unless `prune` is false (the caller prunes next, reporting unknown fields).
 */
export const restoreServerFields = (
  res: ResourceInfo,
  o: KubeObject,
  server: Record<string, unknown>,
  version: string,
  prune = true,
): KubeObject => {
  const m = { ...meta(o) };
  for (const k of IDENTITY_AND_SERVER_METADATA) {
    if (server[k] === undefined) delete m[k];
    else m[k] = server[k];
  }
  const restored = typedForm(res, {
    ...o,
    apiVersion: gvOf(res, res.storageVersion),
    kind: res.kind,
    metadata: m,
  });
  return prune ? pruneAndDefaultQuiet(res, version, restored) : restored;
};

/** ObjectMeta's `omitempty` lists and maps: empty ones are not kept (kube decodes into typed ObjectMeta). */
const OMITTED_WHEN_EMPTY_METADATA = ["labels", "annotations", "finalizers", "ownerReferences"];
/** The built-ins' own `omitempty` maps the local server stores: `group/plural` → fields. */
const OMITTED_WHEN_EMPTY: Readonly<Record<string, readonly string[]>> = {
  "/configmaps": ["data", "binaryData"],
  "/secrets": ["data", "stringData"],
};
/** Maps decoded into a Go `map[string]string`, where a JSON null value becomes "": `group/plural` → fields. */
const STRING_MAPS: Readonly<Record<string, readonly string[]>> = {
  "/configmaps": ["data"],
  "/secrets": ["stringData"],
};
const METADATA_STRING_MAPS = ["labels", "annotations"];

const isEmpty = (v: unknown): boolean =>
  (Array.isArray(v) && v.length === 0) || (isRecord(v) && Object.keys(v).length === 0);

/** `map` with its null values as "" (Go's zero string), or `map` itself when it has none. */
const nullsAsEmpty = (map: unknown): unknown =>
  isRecord(map) && Object.values(map).includes(null)
    ? Object.fromEntries(Object.entries(map).map(([k, v]) => [k, v ?? ""]))
    : map;

/** `holder` with its `fields` passed through `fn` (the same object when nothing changed). */
const mapFields = <T extends Record<string, unknown>>(
  holder: T,
  fields: readonly string[],
  fn: (v: unknown) => unknown,
): T => {
  let out = holder;
  for (const f of fields) {
    if (holder[f] === undefined) continue;
    const v = fn(holder[f]);
    if (v !== holder[f]) out = { ...out, [f]: v };
  }
  return out;
};

/**
 * What kube's typed decoding leaves of an object: empty `omitempty` maps and lists in metadata (every kind's
 * ObjectMeta is typed, custom resources' too) and in the built-ins' own fields are gone — `labels: {}` is
 * stored as no labels; a null in a map of strings is "" (a label `l: null` is stored as `l: ""`); the
 * built-ins' timestamps are in UTC, to the second or microsecond (typedTimes).
 */
export const typedForm = (res: ResourceInfo, given: KubeObject): KubeObject => {
  const key = `${res.group}/${res.plural}`;
  let o = mapFields(given, STRING_MAPS[key] ?? [], nullsAsEmpty);
  if (res.builtIn) o = typedTimes(res, o);
  const m = isRecord(o.metadata) ? mapFields(o.metadata, METADATA_STRING_MAPS, nullsAsEmpty) : undefined;
  if (m !== o.metadata) o = { ...o, metadata: m };
  const emptyMeta = m ? OMITTED_WHEN_EMPTY_METADATA.filter((k) => isEmpty(m[k])) : [];
  const own = (OMITTED_WHEN_EMPTY[key] ?? []).filter((k) => isEmpty(o[k]));
  if (emptyMeta.length === 0 && own.length === 0) return o;
  const out: KubeObject = { ...o };
  for (const k of own) delete out[k];
  if (emptyMeta.length > 0) {
    const metadata = { ...m };
    for (const k of emptyMeta) delete metadata[k];
    out.metadata = metadata;
  }
  return out;
};

export const withManagedFields = (o: KubeObject, fields: ManagedFieldsEntry[]): KubeObject => {
  const m = { ...meta(o) };
  if (fields.length > 0) m.managedFields = fields;
  else delete m.managedFields;
  return { ...o, metadata: m };
};

/**
 * The Lease strategy with the CoordinatedLeaderElection gate off (Kubernetes 1.33's default): a client's
 * spec.strategy and spec.preferredHolder are dropped, on update unless the stored Lease already has them.
 */
const withoutLeaseStrategy = (
  spec: Record<string, unknown>,
  old: Record<string, unknown> | undefined,
): Record<string, unknown> => {
  const dropped = ["strategy", "preferredHolder"].filter(
    (f) => spec[f] !== undefined && (old?.[f] ?? null) === null,
  );
  if (dropped.length === 0) return spec;
  const out = { ...spec };
  for (const f of dropped) delete out[f];
  return out;
};

/** Built-in defaulting kube applies on every write. */
export const defaultBuiltIn = (
  res: ResourceInfo,
  given: KubeObject,
  old: KubeObject | undefined,
): KubeObject => {
  const o = typedForm(res, given);
  if (res.group === "" && res.plural === "secrets") {
    // SetDefaults_Secret: an empty type is Opaque (kubectl's `create secret generic` sends none).
    const typed = o.type === undefined || o.type === "" ? { ...o, type: "Opaque" } : o;
    if (!isRecord(typed.stringData)) return typed;
    const data: Record<string, unknown> = { ...(isRecord(typed.data) ? typed.data : {}) };
    for (const [k, v] of Object.entries(typed.stringData))
      data[k] = Buffer.from(String(v)).toString("base64");
    const { stringData: _s, ...rest } = typed;
    return { ...rest, data };
  }
  if (isNamespaces(res)) {
    // kube-apiserver's namespace strategy always sets this label to the name (Kubernetes ≥ 1.21); webhook
    // namespaceSelectors (ours included, SPEC §2.2) depend on it.
    const metadata = {
      ...o.metadata,
      labels: { ...o.metadata?.labels, [NAMESPACE_NAME_LABEL]: String(o.metadata?.name ?? "") },
    };
    if (old) return { ...o, metadata };
    // The namespace strategy's PrepareForCreate: a client's spec.finalizers are kept, "kubernetes" added.
    const given = Array.isArray(o.spec?.finalizers) ? (o.spec.finalizers as unknown[]) : [];
    const finalizers = given.includes("kubernetes") ? given : [...given, "kubernetes"];
    return { ...o, metadata, spec: { finalizers }, status: { phase: "Active" } };
  }
  if (res.group === "coordination.k8s.io" && res.plural === "leases" && isRecord(o.spec))
    return { ...o, spec: withoutLeaseStrategy(o.spec, isRecord(old?.spec) ? old.spec : undefined) };
  if (res.group === "rbac.authorization.k8s.io" && (res.plural === "roles" || res.plural === "clusterroles"))
    // `rules` has no omitempty in rbac/v1: a role without rules is shown with `"rules": null`.
    return o.rules === undefined ? { ...o, rules: null } : o;
  if (
    res.group === "scheduling.k8s.io" &&
    res.plural === "priorityclasses" &&
    o.preemptionPolicy === undefined
  )
    // SetDefaults_PriorityClass.
    return { ...o, preemptionPolicy: "PreemptLowerPriority" };
  return o;
};

/**
 * kube's checkName: the object a write sends must name the URL's object (400). A name that is absent, null
 * or "" cannot be determined; a PUT does not take it from the URL (decision 133).
 */
export const checkBodyName = (bodyName: unknown, name: string): void => {
  if (bodyName === undefined || bodyName === null || bodyName === "")
    throw badRequest(
      `the name of the object (${name} based on URL) was undeterminable: name must be provided`,
    );
  if (bodyName !== name) throw nameMismatch(bodyName, name);
};

export const nameMismatch = (bodyName: unknown, name: string): ApiError =>
  badRequest(`the name of the object (${String(bodyName)}) does not match the name on the URL (${name})`);

/** The kind and apiVersion a body names must be the endpoint's own. */
export const checkTypeMeta = (res: ResourceInfo, apiVersion: string, body: Record<string, unknown>): void => {
  // A custom resource is decoded whatever its kind, then refused by its strategy's validation (decision 132).
  if (!res.builtIn && typeof body.kind === "string" && body.kind !== "" && body.kind !== res.kind)
    throw invalid(res.group, body.kind, String(isRecord(body.metadata) ? (body.metadata.name ?? "") : ""), [
      {
        reason: "FieldValueInvalid",
        field: "kind",
        message: `Invalid value: ${JSON.stringify(body.kind)}: must be ${res.kind}`,
      },
    ]);
  if (body.kind !== undefined && body.kind !== res.kind)
    throw badRequest(
      `the kind in the data (${String(body.kind)}) does not match the expected kind (${res.kind})`,
    );
  // kube-apiserver's create and update handlers compare the decoded group/version with the endpoint's
  // exactly: another version of the same group is refused too (it converts only what it stores).
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersion)
    throw badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
};

/** A precondition of the request on the stored object's uid or resourceVersion: 409 when it does not hold. */
export const checkPrecondition = (
  res: ResourceInfo,
  old: KubeObject,
  field: "uid" | "resourceVersion",
  want: string | undefined,
): void => {
  const have = old.metadata?.[field];
  if (want === undefined || want === have) return;
  const label = field === "uid" ? "UID" : "ResourceVersion";
  throw conflict(
    res.group,
    res.plural,
    String(old.metadata?.name ?? ""),
    `Precondition failed: ${label} in precondition: ${want}, ${label} in object meta: ${have ?? ""}`,
  );
};

/** The list types a kind's schema declares, for server-side apply and field ownership (none for built-ins). */
export const listTypesOf = (res: ResourceInfo, version: string): ListTypes | undefined => {
  const crd = res.crd;
  return crd ? (path) => crd.listType(version, path) : builtinFieldTypes(res.group, res.kind);
};

/**
 * A delete's precondition, as the store checks it (its error names the kind, and says what may have
 * happened): 409 when it does not hold.
 */
export const checkDeletePrecondition = (
  res: ResourceInfo,
  old: KubeObject,
  field: "uid" | "resourceVersion",
  want: string | undefined,
): void => {
  const have = old.metadata?.[field];
  if (want === undefined || want === have) return;
  const [label, why] =
    field === "uid"
      ? ["UID", "The object might have been deleted and then recreated"]
      : ["ResourceVersion", "The object might have been modified"];
  const name = String(old.metadata?.name ?? "");
  throw new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${res.kind} "${name}": the ${label} in the precondition (${want}) does not match the ${label} in record (${have ?? ""}). ${why}`,
    { name, group: res.group, kind: res.kind },
  );
};

/** No finalizer may be added to an object that is being deleted. */
export const checkFinalizers = (res: ResourceInfo, old: KubeObject, next: KubeObject): void => {
  if (!isDeleting(old)) return;
  const before = new Set(old.metadata?.finalizers ?? []);
  const added = (next.metadata?.finalizers ?? []).filter((f) => !before.has(f));
  if (added.length === 0) return;
  const cause: StatusCause = {
    reason: "FieldValueForbidden",
    field: "metadata.finalizers",
    message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added
      .map((f) => JSON.stringify(f))
      .join(", ")}}`,
  };
  // kube lists the cause twice: ObjectMeta's update validation runs in the generic and the kind's own pass.
  throw invalid(res.group, res.kind, String(old.metadata?.name ?? ""), [cause, cause]);
};

/** An apply to the main resource leaves status alone when status is a subresource. */
export const stripStatusForMain = (res: ResourceInfo, o: KubeObject): KubeObject => {
  if (!res.statusSubresource) return o;
  const { status: _s, ...rest } = o;
  return rest;
};

/**
 * The group kube's 422 names: that of the kind's internal type, which for events.k8s.io Events is the core
 * group's Event (`Event "x" is invalid`, no group in the details).
 */
const errorGroup = (res: ResourceInfo): string =>
  res.group === "events.k8s.io" && res.kind === "Event" ? "" : res.group;

/** The name's causes on create: a generateName is validated as a prefix, the generated name as a name. */
const nameCauses = (res: ResourceInfo, o: KubeObject): StatusCause[] => {
  const m = meta(o);
  const name = String(m.name ?? "");
  const generateName = typeof m.generateName === "string" ? m.generateName : "";
  const invalidName = (field: string, value: string) => (why: string) => ({
    reason: "FieldValueInvalid",
    field,
    message: `Invalid value: ${JSON.stringify(value)}: ${why}`,
  });
  return [
    ...(generateName
      ? nameProblems(res, generateName, true).map(invalidName("metadata.generateName", generateName))
      : []),
    ...nameProblems(res, name).map(invalidName("metadata.name", name)),
  ];
};

/** Validation of the object to be stored (`old` undefined on create): metadata, then the kind's own rules. */
export const validate = (
  res: ResourceInfo,
  version: string,
  o: KubeObject,
  old: KubeObject | undefined,
): void => {
  const name = String(o.metadata?.name ?? "");
  const causes: StatusCause[] = old ? [] : nameCauses(res, o);
  appendAll(causes, labelValueCauses(o), metadataCauses(o));
  if (res.crd) appendAll(causes, res.crd.validate(version, o, old));
  else {
    const undecodable = builtinDecodeProblem(res, o);
    if (undecodable) throw badRequest(undecodable);
    appendAll(causes, builtinCauses(res, o, old));
  }
  if (causes.length > 0) throw invalid(errorGroup(res), res.kind, name, causes);
};
