/**
 * The REST semantics of kube-apiserver over the in-memory storage: get/list, and the write path in kube's
 * order — decode → (CRD kinds) prune + default → mutating admission → default again → validation →
 * validating admission → persist → notify. Object semantics live here: uid, generateName,
 * resourceVersion preconditions, generation, the status and scale subresource split, finalizers and
 * deletionTimestamp, delete propagation finalizers, CRD registration, managedFields and server-side apply.
 * Admission runs kube's built-in plugins this server has (admission/namespace-lifecycle.ts,
 * admission/owner-references.ts) before the webhooks. HTTP parsing, serialisation and the authorization of
 * each request are elsewhere (http.ts).
 */

import { randomInt, randomUUID } from "node:crypto";
import type pino from "pino";
import { getPath, isRecord, jsonEqual, type KubeObject } from "../kube/object.js";
import { checkNamespaceLifecycle } from "./admission/namespace-lifecycle.js";
import {
  checkOwnerReferencePermissions,
  mappingsFrom,
  type OwnerReferencePermissionDeps,
} from "./admission/owner-references.js";
import { builtinCauses, builtinDecodeProblem } from "./builtin-validation.js";
import {
  createFieldSetMemo,
  type ManagedFieldsEntry,
  managerFromUserAgent,
  recordUpdate,
  serverSideApply,
} from "./managed-fields.js";
import { jsonPatch, mergePatch, PatchError, strategicMerge } from "./patch.js";
import { type Authorizer, type ResourceAttributes, refusal } from "./rbac.js";
import { crdResource, type Registry } from "./registry.js";
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  methodNotAllowed,
  notFound,
  STALE_OBJECT,
  unsupportedMediaType,
} from "./status.js";
import type { Storage } from "./storage.js";
import type {
  AdmissionAttributes,
  AdmissionDispatcher,
  CompiledCrd,
  ResourceInfo,
  StatusCause,
  UserInfo,
} from "./types.js";
import { resourceKey } from "./types.js";

export const CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions";
export const NAMESPACE_KEY = "/namespaces";
export const CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io";
export const ORPHAN_FINALIZER = "orphan";
export const FOREGROUND_FINALIZER = "foregroundDeletion";

/** Who is writing and how: everything about a request the write path needs besides the object. */
export interface RequestContext {
  user: UserInfo;
  dryRun: boolean;
  fieldManager?: string;
  userAgent?: string;
  /** `Strict` | `Warn` | `Ignore` (kube's default when absent is Warn). */
  fieldValidation?: string;
  /** Warnings for the response (admission, unknown fields). */
  warnings: string[];
  /** Skip admission: storage-internal cleanups (CRD instance removal) as kube does them. */
  skipAdmission?: boolean;
  /**
   * The server's own controllers (garbage collector, namespace controller): they act inside the server, so
   * the authorization checks of the write path (OwnerReferencesPermissionEnforcement, create-on-apply) are
   * not asked — in a cluster their roles allow everything they do. API requests never set it.
   */
  internal?: boolean;
  /** Set for PATCH requests: admission then sees PatchOptions (with `force` for apply), as kube sends. */
  patch?: { force: boolean; apply: boolean };
}

export interface DeleteOptions {
  propagationPolicy?: string;
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
}

export interface RestDeps {
  storage: Storage;
  registry: Registry;
  admission: AdmissionDispatcher;
  /** The server's authorizer (rbac.ts), asked again inside the write path where kube asks it. */
  authorize: Authorizer;
  compileCrd: (crd: KubeObject) => { ok: true; value: CompiledCrd } | { ok: false; causes: StatusCause[] };
  clock: () => number;
  logger?: pino.Logger;
}

export type PatchType = "merge" | "json" | "strategic" | "apply";

/** The label kube-apiserver keeps equal to a Namespace's name. */
const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";
const NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789";
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

const MAX_RETRIES = 16;

/** How admission sees a subresource whose wire type differs from the stored kind (scale → Scale). */
interface AdmissionView {
  kind: AdmissionAttributes["kind"];
  toView(o: KubeObject): KubeObject;
  fromView(view: KubeObject, o: KubeObject): KubeObject;
}

/** Thrown inside an update attempt when the stored object moved under an unconditional write: retry. */
class RetryUpdate extends Error {}

export const gvOf = (res: ResourceInfo, version: string): string =>
  res.group ? `${res.group}/${version}` : version;

/** The object as read through `version` (no conversion: CRDs here use the `None` strategy). */
export const asVersion = (res: ResourceInfo, version: string, o: KubeObject): KubeObject => {
  const apiVersion = gvOf(res, version);
  return o.apiVersion === apiVersion ? o : { ...o, apiVersion };
};

const meta = (o: KubeObject): Record<string, unknown> => (isRecord(o.metadata) ? o.metadata : {});

const METADATA = new Set(["metadata"]);
const METADATA_AND_STATUS = new Set(["metadata", "status"]);
const VOLATILE_METADATA = new Set(["resourceVersion", "managedFields"]);

/** Whether generation moves: anything but metadata changed (and but status when status is a subresource). */
const specChanged = (res: ResourceInfo, a: KubeObject, b: KubeObject): boolean =>
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
const sameButVolatile = (a: KubeObject, b: KubeObject): boolean => {
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

const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const QUALIFIED_NAME_MESSAGE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";

const validKey = (k: string): boolean => {
  if (!QUALIFIED_NAME.test(k)) return false;
  const slash = k.lastIndexOf("/");
  return k.length - slash - 1 <= 63 && (slash < 0 || slash <= 253);
};

/** kube's ObjectMeta validation beyond the name: label and annotation keys, ownerReferences. */
const metadataCauses = (o: KubeObject): StatusCause[] => {
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
  refs.forEach((r, i) => {
    const ref = isRecord(r) ? r : {};
    for (const f of ["apiVersion", "kind", "name", "uid"])
      if (typeof ref[f] !== "string" || ref[f] === "")
        causes.push({
          reason: "FieldValueInvalid",
          field: `metadata.ownerReferences[${i}].${f}`,
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

/**
 * Why a new object's name is invalid, or undefined: Namespaces are DNS labels, RBAC objects only need to be
 * a path segment (kube's ValidateRBACName: `system:discovery` is a valid ClusterRole name), everything else
 * is a DNS subdomain.
 */
const nameProblem = (res: ResourceInfo, name: string): string | undefined => {
  if (res.group === "" && res.plural === "namespaces")
    return DNS_LABEL.test(name) && name.length <= 63 ? undefined : LABEL_MESSAGE;
  if (res.group === "rbac.authorization.k8s.io") {
    if (name === "." || name === "..") return `may not be '${name}'`;
    for (const c of ["/", "%"]) if (name.includes(c)) return `may not contain '${c}'`;
    return undefined;
  }
  return DNS_SUBDOMAIN.test(name) && name.length <= 253 ? undefined : SUBDOMAIN_MESSAGE;
};

const setPath = (o: Record<string, unknown>, dotted: string, value: unknown): void => {
  const segs = dotted.replace(/^\./, "").split(".");
  let cur = o;
  for (const s of segs.slice(0, -1)) {
    if (!isRecord(cur[s])) cur[s] = {};
    cur = cur[s] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = value;
};
const readPath = (o: unknown, dotted: string): unknown => getPath(o, dotted.replace(/^\./, "").split("."));

export class Rest {
  /** The last timestamp `now()` formatted, by its second: most writes within a second share it. */
  private lastNow = { second: Number.NaN, text: "" };
  /** What recordUpdate learnt of the stored managedFields (parsed field sets, fieldsV1 it built). */
  private readonly fieldSets = createFieldSetMemo();
  private readonly ownerReferences: OwnerReferencePermissionDeps;

  constructor(private readonly deps: RestDeps) {
    this.ownerReferences = {
      authorize: deps.authorize,
      mappingsFor: mappingsFrom((group, kind) => deps.registry.byGroupKind(group, kind)),
    };
  }

  private now(): string {
    const ms = this.deps.clock();
    const second = Math.floor(ms / 1000);
    if (second !== this.lastNow.second)
      this.lastNow = { second, text: new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z") };
    return this.lastNow.text;
  }

  // ---------------------------------------------------------------- reads

  get(res: ResourceInfo, namespace: string, name: string): KubeObject {
    const o = this.deps.storage.get(resourceKey(res), res.namespaced ? namespace : "", name);
    if (!o) throw notFound(res.group, res.plural, name);
    return o;
  }

  list(res: ResourceInfo, namespace: string | undefined): KubeObject[] {
    return this.deps.storage.list(resourceKey(res), res.namespaced ? namespace : undefined);
  }

  // ---------------------------------------------------------------- admission

  private async admit(
    phase: "mutate" | "validate",
    ctx: RequestContext,
    res: ResourceInfo,
    version: string,
    operation: AdmissionAttributes["operation"],
    subResource: string | undefined,
    object: KubeObject | null,
    oldObject: KubeObject | null,
    options: Record<string, unknown> | null,
    kind?: AdmissionAttributes["kind"],
  ): Promise<KubeObject | null> {
    if (ctx.skipAdmission) return object;
    const ref = object ?? oldObject;
    const namespace = res.namespaced ? (ref?.metadata?.namespace ?? "") : undefined;
    const containing = namespace ? this.deps.storage.get(NAMESPACE_KEY, "", namespace) : undefined;
    const nsObject = res.plural === "namespaces" && res.group === "" ? ref : containing;
    const attrs: AdmissionAttributes = {
      operation,
      kind: kind ?? { group: res.group, version, kind: res.kind },
      resource: { group: res.group, version, resource: res.plural },
      ...(subResource ? { subResource } : {}),
      name: ref?.metadata?.name ?? "",
      ...(namespace !== undefined ? { namespace } : {}),
      ...(nsObject ? { namespaceLabels: { ...(nsObject.metadata?.labels ?? {}) } } : {}),
      object,
      oldObject,
      userInfo: {
        username: ctx.user.username,
        ...(ctx.user.uid ? { uid: ctx.user.uid } : {}),
        groups: ctx.user.groups,
      },
      dryRun: ctx.dryRun,
      options,
    };
    // kube's built-in plugins first: NamespaceLifecycle mutates (so runs first of all), the owner check validates.
    const refused =
      phase === "mutate"
        ? operation === "CONNECT"
          ? undefined
          : checkNamespaceLifecycle(
              {
                operation,
                group: res.group,
                resource: res.plural,
                namespace: namespace ?? "",
                name: attrs.name,
              },
              containing,
            )
        : ctx.internal
          ? undefined
          : checkOwnerReferencePermissions(attrs, this.ownerReferences);
    if (refused) throw refused;
    // kube never sends webhook configuration objects to webhooks (so a broken webhook cannot lock itself in).
    if (res.group === "admissionregistration.k8s.io") return object;
    const outcome = await this.deps.admission[phase](attrs);
    ctx.warnings.push(...outcome.warnings);
    if (!outcome.allowed)
      throw new ApiError(outcome.status.code, outcome.status.reason, outcome.status.message);
    return phase === "mutate" ? (outcome.object ?? object) : object;
  }

  private options(
    kind: string,
    ctx: RequestContext,
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> {
    return {
      kind,
      apiVersion: "meta.k8s.io/v1",
      ...(ctx.dryRun ? { dryRun: ["All"] } : {}),
      ...(ctx.fieldManager ? { fieldManager: ctx.fieldManager } : {}),
      ...extra,
    };
  }

  private patchOptions(ctx: RequestContext): Record<string, unknown> {
    return this.options("PatchOptions", ctx, ctx.patch?.apply ? { force: ctx.patch.force } : {});
  }

  // ---------------------------------------------------------------- CRD kinds: prune, default, validate

  private pruneAndDefault(
    ctx: RequestContext,
    res: ResourceInfo,
    version: string,
    o: KubeObject,
  ): KubeObject {
    if (!res.crd) return o;
    const pruned = res.crd.pruneAndDefault(version, o);
    const mode = ctx.fieldValidation ?? "Warn";
    if (mode === "Ignore") return pruned;
    const unknown = unknownFields(o, pruned).filter((p) => !p.startsWith("metadata."));
    if (unknown.length === 0) return pruned;
    if (mode === "Strict")
      throw badRequest(
        `${res.kind} in version "${version}" cannot be handled as a ${res.kind}: strict decoding error: ${unknown
          .map((p) => `unknown field "${p}"`)
          .join(", ")}`,
      );
    for (const p of unknown) ctx.warnings.push(`unknown field "${p}"`);
    return pruned;
  }

  private validate(res: ResourceInfo, version: string, o: KubeObject, old: KubeObject | undefined): void {
    const name = String(o.metadata?.name ?? "");
    const causes: StatusCause[] = [];
    if (!old) {
      const why = nameProblem(res, name);
      if (why)
        causes.push({
          reason: "FieldValueInvalid",
          field: "metadata.name",
          message: `Invalid value: ${JSON.stringify(name)}: ${why}`,
        });
    }
    for (const v of Object.values(o.metadata?.labels ?? {}))
      if (typeof v !== "string" || v.length > 63 || !/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(v))
        causes.push({
          reason: "FieldValueInvalid",
          field: `metadata.labels`,
          message: `Invalid value: ${JSON.stringify(v)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        });
    causes.push(...metadataCauses(o));
    if (res.crd) causes.push(...res.crd.validate(version, o, old));
    else {
      const undecodable = builtinDecodeProblem(res, o);
      if (undecodable) throw badRequest(undecodable);
      causes.push(...builtinCauses(res, o));
    }
    if (causes.length > 0) throw invalid(res.group, res.kind, name, causes);
  }

  /** CRDs: compile (422 when invalid) and compute the status kube's CRD controllers would set. */
  private prepareCrd(
    o: KubeObject,
    old: KubeObject | undefined,
  ): { object: KubeObject; compiled: CompiledCrd } {
    const result = this.deps.compileCrd(o);
    const name = String(o.metadata?.name ?? "");
    if (!result.ok) throw invalid("apiextensions.k8s.io", "CustomResourceDefinition", name, result.causes);
    const c = result.value;
    const existing = this.deps.registry.byKey(resourceKey({ group: c.group, plural: c.names.plural }));
    if (!old && existing)
      throw invalid("apiextensions.k8s.io", "CustomResourceDefinition", name, [
        {
          reason: "FieldValueInvalid",
          field: "spec.names.plural",
          message: `Invalid value: "${c.names.plural}": already served`,
        },
      ]);
    const now = this.now();
    const oldConditions = Array.isArray(old?.status?.conditions)
      ? (old.status.conditions as Array<Record<string, unknown>>)
      : [];
    const condition = (type: string, reason: string, message: string): Record<string, unknown> => {
      const prev = oldConditions.find((x) => x.type === type && x.status === "True");
      return { type, status: "True", lastTransitionTime: prev?.lastTransitionTime ?? now, reason, message };
    };
    const storage = c.versions.find((v) => v.storage)?.name ?? c.versions[0]?.name ?? "";
    const stored = Array.isArray(old?.status?.storedVersions) ? (old.status.storedVersions as string[]) : [];
    const status = {
      conditions: [
        condition("NamesAccepted", "NoConflicts", "no conflicts found"),
        condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
      ],
      acceptedNames: { ...c.names, shortNames: c.names.shortNames, categories: c.names.categories },
      storedVersions: stored.includes(storage) ? stored : [...stored, storage],
    };
    const finalizers = [...(o.metadata?.finalizers ?? [])];
    if (!old && !finalizers.includes(CRD_CLEANUP_FINALIZER)) finalizers.push(CRD_CLEANUP_FINALIZER);
    return { object: { ...o, metadata: { ...meta(o), finalizers }, status }, compiled: c };
  }

  private isCrdType(res: ResourceInfo): boolean {
    return resourceKey(res) === CRD_KEY;
  }

  private terminatingCrd(res: ResourceInfo): boolean {
    const crd = res.crd?.crd;
    if (!crd) return false;
    const live = this.deps.storage.get(CRD_KEY, "", String(crd.metadata?.name ?? ""));
    return typeof live?.metadata?.deletionTimestamp === "string";
  }

  /** Built-in defaulting kube applies on every write. */
  private defaultBuiltIn(res: ResourceInfo, o: KubeObject, old: KubeObject | undefined): KubeObject {
    if (res.group === "" && res.plural === "secrets" && isRecord(o.stringData)) {
      const data: Record<string, unknown> = { ...(isRecord(o.data) ? o.data : {}) };
      for (const [k, v] of Object.entries(o.stringData)) data[k] = Buffer.from(String(v)).toString("base64");
      const { stringData: _s, ...rest } = o;
      return { ...rest, data };
    }
    if (res.group === "" && res.plural === "namespaces") {
      // kube-apiserver's namespace strategy always sets this label to the name (Kubernetes ≥ 1.21); webhook
      // namespaceSelectors (ours included, SPEC §2.2) depend on it.
      const metadata = {
        ...o.metadata,
        labels: { ...o.metadata?.labels, [NAMESPACE_NAME_LABEL]: String(o.metadata?.name ?? "") },
      };
      return old
        ? { ...o, metadata }
        : { ...o, metadata, spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } };
    }
    return o;
  }

  // ---------------------------------------------------------------- create

  async create(
    ctx: RequestContext,
    res: ResourceInfo,
    version: string,
    namespace: string,
    body: unknown,
    /** Server-side apply creating: the apply manager owns the applied fields instead of an Update entry. */
    applyFields?: ManagedFieldsEntry[],
  ): Promise<KubeObject> {
    if (!isRecord(body)) throw badRequest("the body of the request must be a JSON object");
    const apiVersion = gvOf(res, version);
    this.checkTypeMeta(res, apiVersion, body);
    const m = isRecord(body.metadata) ? { ...body.metadata } : {};
    if (res.namespaced) {
      if (m.namespace !== undefined && m.namespace !== "" && m.namespace !== namespace)
        throw badRequest(
          "the namespace of the provided object does not match the namespace sent on the request",
        );
      m.namespace = namespace;
    } else delete m.namespace;
    if (!m.name && typeof m.generateName === "string" && m.generateName) {
      let suffix = "";
      for (let i = 0; i < 5; i++) suffix += NAME_CHARS[randomInt(NAME_CHARS.length)];
      m.name = `${m.generateName}${suffix}`;
    }
    const name = typeof m.name === "string" ? m.name : "";
    if (!name)
      throw invalid(res.group, res.kind, "", [
        {
          reason: "FieldValueRequired",
          field: "metadata.name",
          message: "Required value: name or generateName is required",
        },
      ]);
    if (this.terminatingCrd(res))
      throw new ApiError(
        405,
        "MethodNotAllowed",
        `create not allowed while custom resource definition is terminating`,
      );
    for (const k of ["uid", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"])
      delete m[k];
    m.uid = randomUUID();
    m.creationTimestamp = this.now();
    m.generation = 1;
    let object: KubeObject = {
      ...body,
      apiVersion: gvOf(res, res.storageVersion),
      kind: res.kind,
      metadata: m,
    };
    if (res.statusSubresource && !(res.group === "" && res.plural === "namespaces")) delete object.status;
    object = this.defaultBuiltIn(res, object, undefined);
    object = this.pruneAndDefault(ctx, res, version, object);
    const options = ctx.patch ? this.patchOptions(ctx) : this.options("CreateOptions", ctx);
    object =
      (await this.admit("mutate", ctx, res, version, "CREATE", undefined, object, null, options)) ?? object;
    object = this.restoreServerFields(res, object, m, version);
    let compiled: CompiledCrd | undefined;
    if (this.isCrdType(res)) ({ object, compiled } = this.prepareCrd(object, undefined));
    this.validate(res, version, object, undefined);
    await this.admit("validate", ctx, res, version, "CREATE", undefined, object, null, options);
    const manager = ctx.fieldManager ?? managerFromUserAgent(ctx.userAgent);
    object = this.withManagedFields(
      object,
      applyFields ??
        recordUpdate(undefined, object, manager, apiVersion, this.now(), undefined, this.fieldSets),
    );
    const key = resourceKey(res);
    if (this.deps.storage.get(key, res.namespaced ? namespace : "", name))
      throw alreadyExists(res.group, res.plural, name);
    if (ctx.dryRun) return asVersion(res, version, object);
    const stored = this.persist(key, object);
    if (compiled) this.deps.registry.add(crdResource(compiled));
    return asVersion(res, version, stored);
  }

  /**
   * Seeding and tests: stores `body` as given, bypassing admission (and the NamespaceLifecycle check),
   * but still assigning uid, resourceVersion, creationTimestamp and generation, defaulting and validating.
   */
  createDirect(res: ResourceInfo, body: KubeObject): KubeObject {
    const m: Record<string, unknown> = { ...meta(body) };
    if (!res.namespaced) delete m.namespace;
    else m.namespace ??= "default";
    const name = typeof m.name === "string" ? m.name : "";
    const key = resourceKey(res);
    if (this.deps.storage.get(key, res.namespaced ? String(m.namespace) : "", name))
      throw alreadyExists(res.group, res.plural, name);
    for (const k of ["resourceVersion", "deletionTimestamp", "selfLink"]) delete m[k];
    m.uid ??= randomUUID();
    m.creationTimestamp ??= this.now();
    m.generation ??= 1;
    let object: KubeObject = {
      ...body,
      apiVersion: gvOf(res, res.storageVersion),
      kind: res.kind,
      metadata: m,
    };
    object = this.defaultBuiltIn(res, object, undefined);
    object = this.pruneAndDefaultQuiet(res, res.storageVersion, object);
    let compiled: CompiledCrd | undefined;
    if (this.isCrdType(res)) ({ object, compiled } = this.prepareCrd(object, undefined));
    this.validate(res, res.storageVersion, object, undefined);
    object = this.withManagedFields(
      object,
      recordUpdate(
        undefined,
        object,
        "seed",
        gvOf(res, res.storageVersion),
        this.now(),
        undefined,
        this.fieldSets,
      ),
    );
    const stored = this.persist(key, object);
    if (compiled) this.deps.registry.add(crdResource(compiled));
    return stored;
  }

  private checkTypeMeta(res: ResourceInfo, apiVersion: string, body: Record<string, unknown>): void {
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
  }

  /**
   * Mutating admission may not change identity or server-owned metadata. Prunes and defaults the result
   * unless `prune` is false (the caller prunes next, reporting unknown fields).
   */
  private restoreServerFields(
    res: ResourceInfo,
    o: KubeObject,
    server: Record<string, unknown>,
    version: string,
    prune = true,
  ): KubeObject {
    const m = { ...meta(o) };
    for (const k of [
      "name",
      "namespace",
      "uid",
      "creationTimestamp",
      "generation",
      "deletionTimestamp",
      "deletionGracePeriodSeconds",
    ]) {
      if (server[k] === undefined) delete m[k];
      else m[k] = server[k];
    }
    const restored = { ...o, apiVersion: gvOf(res, res.storageVersion), kind: res.kind, metadata: m };
    return prune ? this.pruneAndDefaultQuiet(res, version, restored) : restored;
  }

  /** Defaulting again after mutating admission, without reporting unknown fields a webhook added. */
  private pruneAndDefaultQuiet(res: ResourceInfo, version: string, o: KubeObject): KubeObject {
    return res.crd ? res.crd.pruneAndDefault(version, o) : o;
  }

  private withManagedFields(o: KubeObject, fields: ManagedFieldsEntry[]): KubeObject {
    const m = { ...meta(o) };
    if (fields.length > 0) m.managedFields = fields;
    else delete m.managedFields;
    return { ...o, metadata: m };
  }

  private persist(key: string, o: KubeObject): KubeObject {
    const rv = this.deps.storage.nextRv();
    const stored = { ...o, metadata: { ...meta(o), resourceVersion: String(rv) } };
    this.deps.storage.put(key, stored, rv);
    return stored;
  }

  private removeFinally(key: string, o: KubeObject): KubeObject {
    const rv = this.deps.storage.nextRv();
    const last = { ...o, metadata: { ...meta(o), resourceVersion: String(rv) } };
    this.deps.storage.remove(key, last, rv);
    if (key === CRD_KEY) this.unregisterCrd(last);
    return last;
  }

  private unregisterCrd(crd: KubeObject): void {
    const spec = isRecord(crd.spec) ? crd.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    this.deps.registry.remove(
      resourceKey({ group: String(spec.group ?? ""), plural: String(names.plural ?? "") }),
    );
  }

  // ---------------------------------------------------------------- update (PUT) and patch

  async update(
    ctx: RequestContext,
    res: ResourceInfo,
    version: string,
    namespace: string,
    name: string,
    subresource: string | undefined,
    body: unknown,
  ): Promise<KubeObject> {
    if (!isRecord(body)) throw badRequest("the body of the request must be a JSON object");
    if (subresource === "scale") return this.updateScale(ctx, res, version, namespace, name, () => body);
    this.checkTypeMeta(res, gvOf(res, version), body);
    const bodyMeta = isRecord(body.metadata) ? body.metadata : {};
    if (bodyMeta.name !== undefined && bodyMeta.name !== name)
      throw badRequest(
        `the name of the object (${String(bodyMeta.name)}) does not match the name on the URL (${name})`,
      );
    const precondition =
      typeof bodyMeta.resourceVersion === "string" && bodyMeta.resourceVersion !== ""
        ? bodyMeta.resourceVersion
        : undefined;
    // Custom resources do not allow unconditional updates (kube's customResourceStrategy).
    if (precondition === undefined && res.crd)
      throw invalid(res.group, res.kind, name, [
        {
          reason: "FieldValueInvalid",
          field: "metadata.resourceVersion",
          message: "Invalid value: 0x0: must be specified for an update",
        },
      ]);
    const live = this.get(res, namespace, name);
    if (typeof bodyMeta.uid === "string" && bodyMeta.uid !== "" && bodyMeta.uid !== live.metadata?.uid)
      throw conflict(
        res.group,
        res.plural,
        name,
        `Precondition failed: UID in precondition: ${bodyMeta.uid}, UID in object meta: ${live.metadata?.uid ?? ""}`,
      );
    return this.retrying(() =>
      this.applyUpdate(ctx, res, version, this.get(res, namespace, name), body, subresource, precondition),
    );
  }

  async patch(
    ctx: RequestContext,
    res: ResourceInfo,
    version: string,
    namespace: string,
    name: string,
    subresource: string | undefined,
    type: PatchType,
    body: unknown,
    force: boolean,
  ): Promise<{ object: KubeObject; created: boolean }> {
    if (type === "strategic" && !res.builtIn)
      throw unsupportedMediaType(
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
      );
    if (type === "apply" && !ctx.fieldManager)
      throw badRequest(
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
    if (type === "apply" && !isRecord(body)) throw badRequest("apply patch must be an object");
    if (subresource === "scale")
      return {
        object: await this.updateScale(ctx, res, version, namespace, name, (scale) =>
          this.applyPatchBody(type, scale, body),
        ),
        created: false,
      };
    let created = false;
    const object = await this.retrying(async () => {
      const key = resourceKey(res);
      const live = this.deps.storage.get(key, res.namespaced ? namespace : "", name);
      if (type === "apply") {
        const applied = body as KubeObject;
        const am = isRecord(applied.metadata) ? applied.metadata : {};
        if (am.name !== undefined && am.name !== name)
          throw badRequest(
            `the name of the object (${String(am.name)}) does not match the name on the URL (${name})`,
          );
        if (!live) {
          if (subresource) throw notFound(res.group, res.plural, name);
          this.authorizeCreateOnApply(ctx, res, namespace, name);
          const result = serverSideApply(
            undefined,
            applied,
            ctx.fieldManager!,
            force,
            gvOf(res, version),
            this.now(),
          );
          const createBody = { ...result.object, metadata: { ...meta(result.object), name } };
          const obj = await this.create(ctx, res, version, namespace, createBody, result.managedFields);
          created = true;
          return obj;
        }
        const precondition =
          typeof am.resourceVersion === "string" && am.resourceVersion ? am.resourceVersion : undefined;
        const appliedBody = subresource === "status" ? applied : this.stripStatusForMain(res, applied);
        const result = serverSideApply(
          live,
          appliedBody,
          ctx.fieldManager!,
          force,
          gvOf(res, version),
          this.now(),
          subresource,
        );
        return this.applyUpdate(
          ctx,
          res,
          version,
          live,
          result.object,
          subresource,
          precondition,
          result.managedFields,
        );
      }
      if (!live) throw notFound(res.group, res.plural, name);
      const patched = this.applyPatchBody(type, live, body);
      if (!isRecord(patched)) throw badRequest("the patch produced something that is not an object");
      const pm = isRecord(patched.metadata) ? patched.metadata : {};
      const precondition =
        typeof pm.resourceVersion === "string" && pm.resourceVersion !== live.metadata?.resourceVersion
          ? pm.resourceVersion
          : undefined;
      return this.applyUpdate(ctx, res, version, live, patched as KubeObject, subresource, precondition);
    });
    return { object, created };
  }

  /** kube asks the authorizer for `create` too when an apply patch creates the object (patch handler). */
  private authorizeCreateOnApply(
    ctx: RequestContext,
    res: ResourceInfo,
    namespace: string,
    name: string,
  ): void {
    if (ctx.internal) return;
    const attributes: ResourceAttributes = {
      user: ctx.user,
      verb: "create",
      resourceRequest: true,
      apiGroup: res.group,
      resource: res.plural,
      subresource: "",
      namespace: res.namespaced ? namespace : "",
      name,
    };
    const decision = this.deps.authorize(attributes);
    if (!decision.allowed) throw refusal(attributes, decision.reason);
  }

  private stripStatusForMain(res: ResourceInfo, o: KubeObject): KubeObject {
    if (!res.statusSubresource) return o;
    const { status: _s, ...rest } = o;
    return rest;
  }

  private applyPatchBody(type: PatchType, target: unknown, body: unknown): unknown {
    try {
      switch (type) {
        case "merge":
          return mergePatch(target, body);
        case "json":
          return jsonPatch(target, body);
        case "strategic":
          return strategicMerge(target, body);
        case "apply":
          return mergePatch(target, body);
      }
    } catch (e) {
      if (e instanceof PatchError)
        throw e.code === 422 ? new ApiError(422, "Invalid", e.message) : badRequest(e.message);
      throw e;
    }
  }

  private async retrying(attempt: () => Promise<KubeObject>): Promise<KubeObject> {
    for (let i = 0; ; i++) {
      try {
        return await attempt();
      } catch (e) {
        if (!(e instanceof RetryUpdate) || i >= MAX_RETRIES)
          throw e instanceof RetryUpdate ? internalConflict() : e;
      }
    }
  }

  /**
   * The update half of the write path, shared by PUT, every PATCH type, the scale subresource and the
   * controllers. `candidate` is the full desired object; `old` the stored one.
   */
  async applyUpdate(
    ctx: RequestContext,
    res: ResourceInfo,
    version: string,
    old: KubeObject,
    candidate: KubeObject,
    subresource: string | undefined,
    precondition: string | undefined,
    applyFields?: ManagedFieldsEntry[],
    view?: AdmissionView,
  ): Promise<KubeObject> {
    const key = resourceKey(res);
    const name = String(old.metadata?.name ?? "");
    const oldRv = old.metadata?.resourceVersion;
    if (precondition !== undefined && precondition !== oldRv)
      throw conflict(res.group, res.plural, name, STALE_OBJECT);
    const server = meta(old);
    let next: KubeObject;
    if (subresource === "status") {
      next = { ...old, status: candidate.status };
      if (candidate.status === undefined) delete next.status;
      next = { ...next, metadata: { ...server } };
    } else {
      next = { ...candidate };
      if (res.statusSubresource) {
        if (old.status === undefined) delete next.status;
        else next.status = old.status;
      }
    }
    next = this.restoreServerFields(res, next, server, version, false);
    if (res.group === "" && res.plural === "namespaces") next = { ...next, spec: old.spec ?? next.spec };
    this.checkFinalizers(res, old, next);
    next = this.defaultBuiltIn(res, next, old);
    next = this.pruneAndDefault(ctx, res, version, next);
    const options = ctx.patch ? this.patchOptions(ctx) : this.options("UpdateOptions", ctx);
    const asRead = (o: KubeObject): KubeObject => asVersion(res, version, o);
    const toAdmission = (o: KubeObject): KubeObject => (view ? view.toView(o) : asRead(o));
    const mutated = await this.admit(
      "mutate",
      ctx,
      res,
      version,
      "UPDATE",
      subresource,
      toAdmission(next),
      toAdmission(old),
      options,
      view?.kind,
    );
    // Without a mutation `next` is as restored and pruned above; a webhook's answer is restored again.
    if (mutated)
      next = this.restoreServerFields(res, view ? view.fromView(mutated, next) : mutated, server, version);
    if (subresource === "status") next = { ...old, status: next.status, metadata: next.metadata };
    this.checkFinalizers(res, old, next);
    let compiled: CompiledCrd | undefined;
    if (this.isCrdType(res) && subresource !== "status")
      ({ object: next, compiled } = this.prepareCrd(next, old));
    this.validate(res, version, next, old);
    await this.admit(
      "validate",
      ctx,
      res,
      version,
      "UPDATE",
      subresource,
      toAdmission(next),
      toAdmission(old),
      options,
      view?.kind,
    );
    if (specChanged(res, next, old))
      next = {
        ...next,
        metadata: { ...meta(next), generation: (Number(old.metadata?.generation) || 0) + 1 },
      };
    const manager = ctx.fieldManager ?? managerFromUserAgent(ctx.userAgent);
    const fields =
      applyFields ??
      recordUpdate(
        old,
        next,
        manager,
        gvOf(res, version),
        this.now(),
        subresource === "status" ? "status" : undefined,
        this.fieldSets,
      );
    next = this.withManagedFields(next, fields);
    if (sameButVolatile(next, old)) return asRead(old);
    // The stored object moved during the admission round trip: a conditional write fails, others retry.
    const live = this.deps.storage.get(key, old.metadata?.namespace ?? "", name);
    if (!live) throw notFound(res.group, res.plural, name);
    if (live.metadata?.resourceVersion !== oldRv) {
      if (precondition !== undefined) throw conflict(res.group, res.plural, name, STALE_OBJECT);
      throw new RetryUpdate();
    }
    if (ctx.dryRun) return asRead(next);
    const deleting = typeof next.metadata?.deletionTimestamp === "string";
    if (deleting && (next.metadata?.finalizers ?? []).length === 0 && !this.namespacePending(res, next))
      return asRead(this.removeFinally(key, next));
    const stored = this.persist(key, next);
    if (compiled && !deleting) this.deps.registry.add(crdResource(compiled));
    return asRead(stored);
  }

  /** A namespace also waits for its `spec.finalizers` (the namespace controller empties them). */
  private namespacePending(res: ResourceInfo, o: KubeObject): boolean {
    return (
      res.group === "" && res.plural === "namespaces" && ((o.spec?.finalizers as unknown[]) ?? []).length > 0
    );
  }

  private checkFinalizers(res: ResourceInfo, old: KubeObject, next: KubeObject): void {
    if (typeof old.metadata?.deletionTimestamp !== "string") return;
    const before = new Set(old.metadata?.finalizers ?? []);
    const added = (next.metadata?.finalizers ?? []).filter((f) => !before.has(f));
    if (added.length === 0) return;
    throw invalid(res.group, res.kind, String(old.metadata?.name ?? ""), [
      {
        reason: "FieldValueForbidden",
        field: "metadata.finalizers",
        message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added
          .map((f) => JSON.stringify(f))
          .join(", ")}}`,
      },
    ]);
  }

  // ---------------------------------------------------------------- scale subresource

  scaleOf(res: ResourceInfo, o: KubeObject): KubeObject {
    const s = res.scale!;
    const selector = s.labelSelectorPath ? readPath(o, s.labelSelectorPath) : undefined;
    return {
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: {
        name: o.metadata?.name,
        ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
        uid: o.metadata?.uid,
        resourceVersion: o.metadata?.resourceVersion,
        creationTimestamp: o.metadata?.creationTimestamp,
      },
      spec: { replicas: Number(readPath(o, s.specReplicasPath) ?? 0) },
      status: {
        replicas: Number(readPath(o, s.statusReplicasPath) ?? 0),
        ...(typeof selector === "string" ? { selector } : {}),
      },
    };
  }

  private async updateScale(
    ctx: RequestContext,
    res: ResourceInfo,
    version: string,
    namespace: string,
    name: string,
    change: (scale: KubeObject) => unknown,
  ): Promise<KubeObject> {
    if (!res.scale) throw notFound(res.group, `${res.plural}/scale`, name);
    const updated = await this.retrying(async () => {
      const old = this.get(res, namespace, name);
      const scale = change(this.scaleOf(res, old));
      if (!isRecord(scale)) throw badRequest("Scale must be an object");
      const replicas = getPath(scale, ["spec", "replicas"]);
      if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0)
        throw invalid("autoscaling", "Scale", name, [
          {
            reason: "FieldValueInvalid",
            field: "spec.replicas",
            message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
          },
        ]);
      const rv = getPath(scale, ["metadata", "resourceVersion"]);
      const precondition = typeof rv === "string" && rv !== old.metadata?.resourceVersion ? rv : undefined;
      const next = structuredClone(old) as Record<string, unknown>;
      setPath(next, res.scale!.specReplicasPath, replicas);
      // Admission sees autoscaling/v1 Scale objects for this subresource, as in kube.
      const view: AdmissionView = {
        kind: { group: "autoscaling", version: "v1", kind: "Scale" },
        toView: (o) => this.scaleOf(res, o),
        fromView: (scaleView, o) => {
          const r = getPath(scaleView, ["spec", "replicas"]);
          if (typeof r !== "number") return o;
          const copy = structuredClone(o) as Record<string, unknown>;
          setPath(copy, res.scale!.specReplicasPath, r);
          return copy as KubeObject;
        },
      };
      return this.applyUpdate(
        ctx,
        res,
        version,
        old,
        next as KubeObject,
        "scale",
        precondition,
        undefined,
        view,
      );
    });
    return this.scaleOf(res, updated);
  }

  /** The namespace controller's last step (kube: PUT namespaces/<name>/finalize). */
  finalizeNamespace(ns: KubeObject): void {
    const next = { ...ns, spec: { ...(ns.spec ?? {}), finalizers: [] } };
    if ((ns.metadata?.finalizers ?? []).length === 0) this.removeFinally(NAMESPACE_KEY, next);
    else this.persist(NAMESPACE_KEY, next);
  }

  // ---------------------------------------------------------------- delete

  async delete(
    ctx: RequestContext,
    res: ResourceInfo,
    version: string,
    namespace: string,
    name: string,
    opts: DeleteOptions,
  ): Promise<{ object: KubeObject; gone: boolean }> {
    const key = resourceKey(res);
    const old = this.get(res, namespace, name);
    const pre = opts.preconditions ?? {};
    if (pre.uid !== undefined && pre.uid !== old.metadata?.uid)
      throw conflict(
        res.group,
        res.plural,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata?.uid ?? ""}`,
      );
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== old.metadata?.resourceVersion)
      throw conflict(
        res.group,
        res.plural,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata?.resourceVersion ?? ""}`,
      );
    const policy = opts.propagationPolicy ?? (opts.orphanDependents === true ? "Orphan" : "Background");
    if (!["Background", "Foreground", "Orphan"].includes(policy))
      throw invalid("meta.k8s.io", "DeleteOptions", "", [
        {
          reason: "FieldValueNotSupported",
          field: "propagationPolicy",
          message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
        },
      ]);
    const options = this.options("DeleteOptions", ctx, { propagationPolicy: policy });
    const asRead = (o: KubeObject): KubeObject => asVersion(res, version, o);
    await this.admit("mutate", ctx, res, version, "DELETE", undefined, null, asRead(old), options);
    await this.admit("validate", ctx, res, version, "DELETE", undefined, null, asRead(old), options);
    const finalizers = [...(old.metadata?.finalizers ?? [])];
    const add =
      policy === "Orphan" ? ORPHAN_FINALIZER : policy === "Foreground" ? FOREGROUND_FINALIZER : undefined;
    const alreadyDeleting = typeof old.metadata?.deletionTimestamp === "string";
    if (add && !finalizers.includes(add) && !alreadyDeleting) finalizers.push(add);
    const isNamespace = res.group === "" && res.plural === "namespaces";
    if (finalizers.length === 0 && !isNamespace) {
      if (ctx.dryRun) return { object: asRead(old), gone: true };
      const live = this.deps.storage.get(key, old.metadata?.namespace ?? "", name);
      if (live?.metadata?.resourceVersion !== old.metadata?.resourceVersion)
        return this.delete(ctx, res, version, namespace, name, opts);
      return { object: asRead(this.removeFinally(key, old)), gone: true };
    }
    if (alreadyDeleting) return { object: asRead(old), gone: false };
    // The object moved during the admission round trip: decide again on its current state.
    const current = this.deps.storage.get(key, old.metadata?.namespace ?? "", name);
    if (current?.metadata?.resourceVersion !== old.metadata?.resourceVersion && !ctx.dryRun)
      return this.delete(ctx, res, version, namespace, name, opts);
    const m: Record<string, unknown> = {
      ...meta(old),
      finalizers,
      deletionTimestamp: this.now(),
      deletionGracePeriodSeconds: 0,
    };
    m.generation = (Number(old.metadata?.generation) || 0) + 1;
    if (finalizers.length === 0) delete m.finalizers;
    let next: KubeObject = { ...old, metadata: m };
    if (isNamespace) next = { ...next, status: { ...(old.status ?? {}), phase: "Terminating" } };
    if (ctx.dryRun) return { object: asRead(next), gone: false };
    return { object: asRead(this.persist(key, next)), gone: false };
  }
}

const internalConflict = (): ApiError =>
  new ApiError(409, "Conflict", "the object kept changing while the request was applied; please retry");

export { methodNotAllowed };
