/**
 * What the REST operations take: who is asking (RequestContext), the dependencies of the write path, and one
 * request object per operation — the object a URL addresses plus what the verb carries. Types and the
 * constants the write path shares with the server's controllers; no behaviour.
 */
import type pino from "pino";
import type { KubeObject } from "../../kube/object.js";
import type { ManagedFieldsEntry } from "../managed-fields.js";
import type { Authorizer, PolicyView } from "../rbac.js";
import type { Registry } from "../registry.js";
import type { Storage } from "../storage.js";
import type {
  AdmissionAttributes,
  AdmissionDispatcher,
  CompiledCrd,
  ResourceInfo,
  StatusCause,
  UserInfo,
} from "../types.js";

export const NAMESPACE_KEY = "/namespaces";
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
  /**
   * The keys a write's JSON body repeats (duplicate-fields.ts), as kube words them (`duplicate field "data.a"`),
   * reported with the object's unknown fields as `fieldValidation` says (decision 133).
   */
  duplicates?: readonly string[];
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
  /** The stored RBAC policy: what the writer of a role or binding holds (escalation prevention). */
  policy: PolicyView;
  compileCrd: (crd: KubeObject) => { ok: true; value: CompiledCrd } | { ok: false; causes: StatusCause[] };
  clock: () => number;
  logger?: pino.Logger;
}

export type PatchType = "merge" | "json" | "strategic" | "apply";

/** Who asks, for which resource, read and written through which version of it. */
export interface ResourceRequest {
  ctx: RequestContext;
  res: ResourceInfo;
  version: string;
}

/** One object, as a URL names it (`namespace` is "" for cluster-scoped resources). */
export interface ObjectRequest extends ResourceRequest {
  namespace: string;
  name: string;
}

/** POST: `body` as sent, to be created in `namespace`. */
export interface CreateRequest extends ResourceRequest {
  namespace: string;
  body: unknown;
  /** Server-side apply creating: the apply manager owns the applied fields instead of an Update entry. */
  applyFields?: ManagedFieldsEntry[];
}

/** PUT: the full desired object, to the main resource or a subresource. */
export interface UpdateRequest extends ObjectRequest {
  subresource: string | undefined;
  body: unknown;
}

/** PATCH of any type; `force` is apply's conflict override. */
export interface PatchRequest extends ObjectRequest {
  subresource: string | undefined;
  type: PatchType;
  body: unknown;
  force: boolean;
}

export interface DeleteRequest extends ObjectRequest {
  options: DeleteOptions;
}

/** How admission sees a subresource whose wire type differs from the stored kind (scale → Scale). */
export interface AdmissionView {
  kind: AdmissionAttributes["kind"];
  toView(o: KubeObject): KubeObject;
  fromView(view: KubeObject, o: KubeObject): KubeObject;
}

/**
 * The update half of the write path, shared by PUT, every PATCH type, the scale subresource and the
 * controllers: `candidate` is the full desired object, `old` the stored one it replaces.
 */
export interface ApplyUpdateRequest extends ResourceRequest {
  old: KubeObject;
  candidate: KubeObject;
  subresource?: string;
  /** The resourceVersion the write is conditional on; undefined for an unconditional write. */
  precondition?: string;
  /** Server-side apply: the managed fields apply computed, instead of recording an Update entry. */
  applyFields?: ManagedFieldsEntry[];
  view?: AdmissionView;
}
