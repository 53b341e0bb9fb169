/**
 * What the write path asks of others before it stores anything: admission — kube's built-in plugins this
 * server has (admission/namespace-lifecycle.ts, admission/owner-references.ts) and then the webhooks — with
 * the attributes and the Create/Update/Patch/DeleteOptions kube sends them, and the authorizer's `create`
 * check of an apply patch that creates its object. The order of the calls is the write path's (write-path.ts).
 */
import type { KubeObject } from "../../kube/object.js";
import { appendAll } from "../../lists.js";
import { checkNamespaceLifecycle } from "../admission/namespace-lifecycle.js";
import {
  checkOwnerReferencePermissions,
  type OwnerReferencePermissionDeps,
} from "../admission/owner-references.js";
import { type Authorizer, type ResourceAttributes, refusal } from "../rbac.js";
import { ApiError } from "../status.js";
import type { Storage } from "../storage.js";
import type { AdmissionAttributes, AdmissionDispatcher } from "../types.js";
import { NAMESPACE_KEY, type ObjectRequest, type RequestContext, type ResourceRequest } from "./request.js";
import { isNamespaces } from "./strategy.js";

export interface AdmitDeps {
  storage: Storage;
  admission: AdmissionDispatcher;
  ownerReferences: OwnerReferencePermissionDeps;
}

/** One admission round: the request, the operation and the objects as admission sees them. */
export interface AdmissionCall extends ResourceRequest {
  operation: AdmissionAttributes["operation"];
  subResource?: string;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  options: Record<string, unknown> | null;
  /** The kind admission sees when it is not the stored one (a subresource's view). */
  kind?: AdmissionAttributes["kind"];
}

/**
 * Runs one admission phase; `mutate` answers the object as mutated (or as given), `validate` the object as
 * given. Throws the refusal of a built-in plugin or a webhook.
 */
export const admit = async (
  deps: AdmitDeps,
  phase: "mutate" | "validate",
  call: AdmissionCall,
): Promise<KubeObject | null> => {
  const { ctx, res, version, operation, object, oldObject } = call;
  if (ctx.skipAdmission) return object;
  const ref = object ?? oldObject;
  const namespace = res.namespaced ? (ref?.metadata?.namespace ?? "") : undefined;
  const containing = namespace ? deps.storage.get(NAMESPACE_KEY, "", namespace) : undefined;
  const nsObject = isNamespaces(res) ? ref : containing;
  const attrs: AdmissionAttributes = {
    operation,
    kind: call.kind ?? { group: res.group, version, kind: res.kind },
    resource: { group: res.group, version, resource: res.plural },
    ...(call.subResource ? { subResource: call.subResource } : {}),
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
    options: call.options,
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
        : checkOwnerReferencePermissions(attrs, deps.ownerReferences);
  if (refused) throw refused;
  // kube never sends webhook configuration objects to webhooks (so a broken webhook cannot lock itself in).
  if (res.group === "admissionregistration.k8s.io") return object;
  const outcome = await deps.admission[phase](attrs);
  appendAll(ctx.warnings, outcome.warnings);
  if (!outcome.allowed)
    throw new ApiError(
      outcome.status.code,
      outcome.status.reason,
      outcome.status.message,
      outcome.status.details,
    );
  return phase === "mutate" ? (outcome.object ?? object) : object;
};

/** The options admission sees with a create or an update: PatchOptions when the write is a PATCH, as kube sends. */
export const writeOptions = (
  kind: "CreateOptions" | "UpdateOptions",
  ctx: RequestContext,
): Record<string, unknown> =>
  ctx.patch
    ? optionsOf("PatchOptions", ctx, ctx.patch.apply ? { force: ctx.patch.force } : {})
    : optionsOf(kind, ctx);

export const deleteOptions = (ctx: RequestContext, propagationPolicy: string): Record<string, unknown> =>
  optionsOf("DeleteOptions", ctx, { propagationPolicy });

const optionsOf = (
  kind: string,
  ctx: RequestContext,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  kind,
  apiVersion: "meta.k8s.io/v1",
  ...(ctx.dryRun ? { dryRun: ["All"] } : {}),
  ...(ctx.fieldManager ? { fieldManager: ctx.fieldManager } : {}),
  ...extra,
});

/** kube asks the authorizer for `create` too when an apply patch creates the object (patch handler). */
export const authorizeCreateOnApply = (authorize: Authorizer, request: ObjectRequest): void => {
  const { ctx, res, namespace, name } = request;
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
  const decision = authorize(attributes);
  if (!decision.allowed) throw refusal(attributes, decision.reason);
};
