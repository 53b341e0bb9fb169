/**
 * The write path of kube-apiserver over the in-memory storage, in kube's order: decode → (CRD kinds) prune +
 * default → mutating admission → default again → validation → validating admission → persist → notify.
 * Object semantics of create and update live here: uid, generateName, resourceVersion preconditions and
 * retries, generation, the status subresource split, managedFields, dry run and the final removal of an
 * object whose finalizers are gone. The verbs' own rules (PUT and PATCH bodies, scale, delete) are in
 * update.ts, scale.ts and delete.ts; the pure per-object rules in strategy.ts.
 */
import { randomUUID } from "node:crypto";
import { isRecord, type KubeObject } from "../../kube/object.js";
import { mappingsFrom } from "../admission/owner-references.js";
import { createFieldSetMemo, managerFromUserAgent, recordUpdate } from "../managed-fields.js";
import { generatedName, meta } from "../object-meta.js";
import { checkRbacEscalation, type EscalationDeps } from "../rbac-escalation.js";
import { crdResource } from "../registry.js";
import { ApiError, alreadyExists, badRequest, conflict, invalid, notFound, STALE_OBJECT } from "../status.js";
import type { CompiledCrd, ResourceInfo } from "../types.js";
import { resourceKey } from "../types.js";
import { type AdmissionCall, type AdmitDeps, admit, writeOptions } from "./admit.js";
import { CRD_KEY, checkNotTerminating, isCrdType, prepareCrd, unregisterCrd } from "./crd.js";
import {
  type ApplyUpdateRequest,
  type CreateRequest,
  NAMESPACE_KEY,
  type RequestContext,
  type RestDeps,
} from "./request.js";
import {
  asVersion,
  checkFinalizers,
  checkImmutableMetadata,
  checkTypeMeta,
  defaultBuiltIn,
  gvOf,
  isDeleting,
  isNamespaces,
  listTypesOf,
  namespacePending,
  nextGeneration,
  pruneAndDefault,
  pruneAndDefaultQuiet,
  restoreServerFields,
  sameButVolatile,
  specChanged,
  tracksGeneration,
  validate,
  withManagedFields,
} from "./strategy.js";

const MAX_RETRIES = 16;

/** Thrown inside an update attempt when the stored object moved under an unconditional write: retry. */
class RetryUpdate extends Error {}

const internalConflict = (): ApiError =>
  new ApiError(409, "Conflict", "the object kept changing while the request was applied; please retry");

export class WritePath {
  /** The last timestamp `now()` formatted, by its second: most writes within a second share it. */
  private lastNow = { second: Number.NaN, text: "" };
  /** What recordUpdate learnt of the stored managedFields (parsed field sets, fieldsV1 it built). */
  private readonly fieldSets = createFieldSetMemo();
  private readonly admitDeps: AdmitDeps;
  private readonly escalationDeps: EscalationDeps;

  constructor(readonly deps: RestDeps) {
    this.admitDeps = {
      storage: deps.storage,
      admission: deps.admission,
      ownerReferences: {
        authorize: deps.authorize,
        mappingsFor: mappingsFrom((group, kind) => deps.registry.byGroupKind(group, kind)),
      },
    };
    this.escalationDeps = { authorize: deps.authorize, policy: deps.policy };
  }

  /** The server's time, as metadata timestamps carry it (whole seconds). */
  now(): string {
    const ms = this.deps.clock();
    const second = Math.floor(ms / 1000);
    if (second !== this.lastNow.second)
      this.lastNow = { second, text: new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z") };
    return this.lastNow.text;
  }

  get(res: ResourceInfo, namespace: string, name: string): KubeObject {
    const o = this.deps.storage.get(resourceKey(res), res.namespaced ? namespace : "", name);
    if (!o) throw notFound(res.group, res.plural, name);
    return o;
  }

  admit(phase: "mutate" | "validate", call: AdmissionCall): Promise<KubeObject | null> {
    return admit(this.admitDeps, phase, call);
  }

  persist(key: string, o: KubeObject): KubeObject {
    const rv = this.deps.storage.nextRv();
    const stored = { ...o, metadata: { ...meta(o), resourceVersion: String(rv) } };
    this.deps.storage.put(key, stored, rv);
    return this.deps.storage.asStored(key, stored);
  }

  /**
   * Removes `o` for good and returns it stamped with the deletion's resourceVersion. Watchers see `stored`
   * when given: an update that empties the finalizers of a deleting object is never stored, so kube's
   * DELETED event carries the object as last stored (its finalizers still set), at the new resourceVersion.
   */
  removeFinally(key: string, o: KubeObject, stored?: KubeObject): KubeObject {
    const rv = this.deps.storage.nextRv();
    const last = { ...o, metadata: { ...meta(o), resourceVersion: String(rv) } };
    const seen = stored ? { ...stored, metadata: { ...meta(stored), resourceVersion: String(rv) } } : last;
    this.deps.storage.remove(key, seen, rv);
    if (key === CRD_KEY) unregisterCrd(this.deps.registry, last);
    return this.deps.storage.asStored(key, last);
  }

  /** Runs an update attempt again while the stored object moved under it (up to MAX_RETRIES times). */
  async retrying(attempt: () => Promise<KubeObject>): Promise<KubeObject> {
    for (let i = 0; ; i++) {
      try {
        return await attempt();
      } catch (e) {
        if (!(e instanceof RetryUpdate) || i >= MAX_RETRIES)
          throw e instanceof RetryUpdate ? internalConflict() : e;
      }
    }
  }

  /** The namespace controller's last step (kube: PUT namespaces/<name>/finalize). */
  finalizeNamespace(ns: KubeObject): void {
    const next = { ...ns, spec: { ...(ns.spec ?? {}), finalizers: [] } };
    if ((ns.metadata?.finalizers ?? []).length === 0) this.removeFinally(NAMESPACE_KEY, next);
    else this.persist(NAMESPACE_KEY, next);
  }

  // ---------------------------------------------------------------- create

  async create(request: CreateRequest): Promise<KubeObject> {
    const { ctx, res, version, namespace, body, applyFields } = request;
    if (!isRecord(body)) throw badRequest("the body of the request must be a JSON object");
    const apiVersion = gvOf(res, version);
    checkTypeMeta(res, apiVersion, body);
    const m = isRecord(body.metadata) ? { ...body.metadata } : {};
    if (res.namespaced) {
      if (m.namespace !== undefined && m.namespace !== "" && m.namespace !== namespace)
        throw badRequest(
          "the namespace of the provided object does not match the namespace sent on the request",
        );
      m.namespace = namespace;
    } else delete m.namespace;
    if (!m.name && typeof m.generateName === "string" && m.generateName)
      m.name = generatedName(m.generateName);
    const name = typeof m.name === "string" ? m.name : "";
    if (!name)
      throw invalid(res.group, res.kind, "", [
        {
          reason: "FieldValueRequired",
          field: "metadata.name",
          message: "Required value: name or generateName is required",
        },
      ]);
    checkNotTerminating(this.deps.storage, res);
    const resourceVersionGiven = m.resourceVersion !== undefined && m.resourceVersion !== "";
    for (const k of ["uid", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"])
      delete m[k];
    m.uid = randomUUID();
    m.creationTimestamp = this.now();
    // kube's BeforeCreate leaves a client's generation alone; the strategies that track one set it to 1.
    if (tracksGeneration(res)) m.generation = 1;
    let object: KubeObject = {
      ...body,
      apiVersion: gvOf(res, res.storageVersion),
      kind: res.kind,
      metadata: m,
    };
    if (res.statusSubresource && !isNamespaces(res)) delete object.status;
    // Decoding finds a built-in's unknown fields before its defaults and strategy rebuild any of it.
    object = pruneAndDefault(ctx, res, version, object);
    object = defaultBuiltIn(res, object, undefined);
    const call: AdmissionCall = {
      ctx,
      res,
      version,
      operation: "CREATE",
      object,
      oldObject: null,
      options: writeOptions("CreateOptions", ctx),
    };
    object = (await this.admit("mutate", call)) ?? object;
    object = restoreServerFields(res, object, m, version);
    this.confirmNoEscalation(ctx, res, applyFields ? name : "", object, undefined);
    let compiled: CompiledCrd | undefined;
    if (isCrdType(res)) ({ object, compiled } = this.prepareCrd(object, undefined));
    validate(res, version, object, undefined);
    await this.admit("validate", { ...call, object });
    const manager = ctx.fieldManager ?? managerFromUserAgent(ctx.userAgent);
    object = withManagedFields(
      object,
      applyFields ??
        recordUpdate(
          undefined,
          object,
          manager,
          apiVersion,
          this.now(),
          undefined,
          this.fieldSets,
          listTypesOf(res, version),
        ),
    );
    const key = resourceKey(res);
    // etcd3's store refuses it before its transaction (ErrResourceVersionSetOnCreate), an internal error
    // without a reason; a dry run never reaches the store.
    if (resourceVersionGiven && !applyFields && !ctx.dryRun)
      throw new ApiError(500, "", "resourceVersion should not be set on objects to be created");
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
    if (tracksGeneration(res)) m.generation ??= 1;
    let object: KubeObject = {
      ...body,
      apiVersion: gvOf(res, res.storageVersion),
      kind: res.kind,
      metadata: m,
    };
    object = defaultBuiltIn(res, object, undefined);
    object = pruneAndDefaultQuiet(res, res.storageVersion, object);
    let compiled: CompiledCrd | undefined;
    if (isCrdType(res)) ({ object, compiled } = this.prepareCrd(object, undefined));
    validate(res, res.storageVersion, object, undefined);
    object = withManagedFields(
      object,
      recordUpdate(
        undefined,
        object,
        "seed",
        gvOf(res, res.storageVersion),
        this.now(),
        undefined,
        this.fieldSets,
        listTypesOf(res, res.storageVersion),
      ),
    );
    const stored = this.persist(key, object);
    if (compiled) this.deps.registry.add(crdResource(compiled));
    return stored;
  }

  /** RBAC's escalation prevention, where kube's policy-based storage runs it: after mutating admission. */
  private confirmNoEscalation(
    ctx: RequestContext,
    res: ResourceInfo,
    urlName: string,
    object: KubeObject,
    old: KubeObject | undefined,
  ): void {
    if (ctx.internal || ctx.skipAdmission) return;
    const refused = checkRbacEscalation(this.escalationDeps, {
      user: ctx.user,
      group: res.group,
      resource: res.plural,
      namespace: res.namespaced ? String(object.metadata?.namespace ?? "") : "",
      urlName,
      object,
      old,
    });
    if (refused) throw refused;
  }

  private prepareCrd(
    object: KubeObject,
    old: KubeObject | undefined,
  ): { object: KubeObject; compiled: CompiledCrd } {
    return prepareCrd(this.deps, { object, old, now: this.now() });
  }

  // ---------------------------------------------------------------- update

  /**
   * The update half of the write path, shared by PUT, every PATCH type, the scale subresource and the
   * controllers. `candidate` is the full desired object; `old` the stored one.
   */
  async applyUpdate(request: ApplyUpdateRequest): Promise<KubeObject> {
    const { ctx, res, version, old, candidate, subresource, precondition, applyFields, view } = request;
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
    if (subresource !== "status") checkImmutableMetadata(res, old, next);
    next = restoreServerFields(res, next, server, version, false);
    if (isNamespaces(res)) next = { ...next, spec: old.spec ?? next.spec };
    checkFinalizers(res, old, next);
    next = pruneAndDefault(ctx, res, version, next);
    next = defaultBuiltIn(res, next, old);
    const asRead = (o: KubeObject): KubeObject => asVersion(res, version, o);
    const toAdmission = (o: KubeObject): KubeObject => (view ? view.toView(o) : asRead(o));
    const call: AdmissionCall = {
      ctx,
      res,
      version,
      operation: "UPDATE",
      subResource: subresource,
      object: toAdmission(next),
      oldObject: toAdmission(old),
      options: writeOptions("UpdateOptions", ctx),
      kind: view?.kind,
    };
    const mutated = await this.admit("mutate", call);
    // Without a mutation `next` is as restored and pruned above; a webhook's answer is restored again.
    if (mutated)
      next = restoreServerFields(res, view ? view.fromView(mutated, next) : mutated, server, version);
    if (subresource === "status") next = { ...old, status: next.status, metadata: next.metadata };
    checkFinalizers(res, old, next);
    this.confirmNoEscalation(ctx, res, name, next, old);
    let compiled: CompiledCrd | undefined;
    if (isCrdType(res) && subresource !== "status") ({ object: next, compiled } = this.prepareCrd(next, old));
    validate(res, version, next, old);
    await this.admit("validate", { ...call, object: toAdmission(next) });
    if (tracksGeneration(res) && specChanged(res, next, old))
      next = { ...next, metadata: { ...meta(next), generation: nextGeneration(old) } };
    const manager = ctx.fieldManager ?? managerFromUserAgent(ctx.userAgent);
    const fields =
      applyFields ??
      recordUpdate(
        old,
        next,
        manager,
        gvOf(res, version),
        this.now(),
        // kube's field managers of the status and scale subresources record their writers as theirs.
        subresource === "status" || subresource === "scale" ? subresource : undefined,
        this.fieldSets,
        listTypesOf(res, version),
      );
    next = withManagedFields(next, fields);
    if (sameButVolatile(next, old)) return asRead(old);
    // The stored object moved during the admission round trip: a conditional write fails, others retry.
    const live = this.deps.storage.get(key, old.metadata?.namespace ?? "", name);
    if (!live) throw notFound(res.group, res.plural, name);
    if (live.metadata?.resourceVersion !== oldRv) {
      if (precondition !== undefined) throw conflict(res.group, res.plural, name, STALE_OBJECT);
      throw new RetryUpdate();
    }
    if (ctx.dryRun) return asRead(next);
    const deleting = isDeleting(next);
    if (deleting && (next.metadata?.finalizers ?? []).length === 0 && !namespacePending(res, next))
      return asRead(this.removeFinally(key, next, live));
    const stored = this.persist(key, next);
    if (compiled && !deleting) this.deps.registry.add(crdResource(compiled));
    return asRead(stored);
  }
}
