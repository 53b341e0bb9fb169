/**
 * `OwnerReferencesPermissionEnforcement`, the admission plugin OpenShift enables by default (SPEC §8), as
 * kube's plugin/pkg/admission/gc decides: changing an object's ownerReferences on UPDATE needs `delete` on
 * the object, and every ownerReference that newly blocks its owner's deletion (`blockOwnerDeletion: true`,
 * added or turned on) needs `update` on the owner's `finalizers` subresource — the owner's name, in the
 * object's namespace — unless the writer may update every finalizer anywhere. Pure: the request, an
 * authorizer and a kind → resource lookup in, a refusal (or none) out. The write path calls it before the
 * validating webhooks, as kube orders its plugins.
 */
import { isRecord, type KubeObject } from "../../kube/object.js";
import { type Authorizer, forbiddenError, type ResourceAttributes } from "../rbac.js";
import type { ApiError } from "../status.js";
import type { UserInfo } from "../types.js";
import type { AdmissionAttributes } from "./types.js";

/** What kube's RESTMapper answers for an owner's kind: its resources, or why there is none. */
export type OwnerMapping =
  | { ok: true; resources: Array<{ group: string; resource: string; namespaced: boolean }> }
  | { ok: false; error: string };

export interface OwnerReferencePermissionDeps {
  authorize: Authorizer;
  /** The resources serving `kind` at `apiVersion` (kube: `RESTMappings(GroupKind, version)`). */
  mappingsFor(apiVersion: string, kind: string): OwnerMapping;
}

/** Requests kube exempts: old kubelets corrupted pods/status, whose strategy protects ownerReferences. */
const EXEMPT = new Set(["/pods/status"]);

interface Reference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean | undefined;
  blockOwnerDeletion: boolean | undefined;
}

const optionalBool = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);

/** An ownerReference as kube decodes it: the typed fields only, `undefined` (nil) distinct from false. */
const reference = (v: unknown): Reference => {
  const r = isRecord(v) ? v : {};
  return {
    apiVersion: String(r.apiVersion ?? ""),
    kind: String(r.kind ?? ""),
    name: String(r.name ?? ""),
    uid: String(r.uid ?? ""),
    controller: optionalBool(r.controller),
    blockOwnerDeletion: optionalBool(r.blockOwnerDeletion),
  };
};

const referencesOf = (o: KubeObject | null): Reference[] | undefined => {
  if (!o || !isRecord(o.metadata)) return undefined;
  const refs = o.metadata.ownerReferences;
  return Array.isArray(refs) ? refs.map(reference) : [];
};

const sameReference = (a: Reference, b: Reference): boolean =>
  a.apiVersion === b.apiVersion &&
  a.kind === b.kind &&
  a.name === b.name &&
  a.uid === b.uid &&
  a.controller === b.controller &&
  a.blockOwnerDeletion === b.blockOwnerDeletion;

/** kube's `isChangingOwnerReference`: a create with any, or any difference in order or content. */
export const changesOwnerReferences = (object: KubeObject | null, old: KubeObject | null): boolean => {
  const next = referencesOf(object);
  if (next === undefined) return false;
  if (!old) return next.length > 0;
  const before = referencesOf(old);
  if (before === undefined) return false;
  return next.length !== before.length || next.some((r, i) => !sameReference(r, before[i]!));
};

/** kube's `newBlockingOwnerDeletionRefs`: blocking references that are new by uid, or were not blocking. */
export const newlyBlockingReferences = (object: KubeObject | null, old: KubeObject | null): Reference[] => {
  const blocking = (referencesOf(object) ?? []).filter((r) => r.blockOwnerDeletion === true);
  if (blocking.length === 0 || !old) return blocking;
  const before = new Map((referencesOf(old) ?? []).map((r) => [r.uid, r]));
  return blocking.filter((r) => before.get(r.uid)?.blockOwnerDeletion !== true);
};

const resourceAttributes = (
  user: UserInfo,
  fields: Omit<ResourceAttributes, "user" | "resourceRequest">,
): ResourceAttributes => ({ user, resourceRequest: true, ...fields });

/** The refusal of an ownerReferences change, or undefined when the writer may make it. */
export function checkOwnerReferencePermissions(
  a: AdmissionAttributes,
  deps: OwnerReferencePermissionDeps,
): ApiError | undefined {
  if (a.operation !== "CREATE" && a.operation !== "UPDATE") return undefined;
  if (EXEMPT.has(`${a.resource.group}/${a.resource.resource}/${a.subResource ?? ""}`)) return undefined;
  if (!changesOwnerReferences(a.object, a.oldObject)) return undefined;
  const user: UserInfo = { username: a.userInfo.username, groups: a.userInfo.groups };
  const namespace = a.namespace ?? "";
  const name = a.name || String(a.object?.metadata?.name || a.object?.metadata?.generateName || "Unknown");
  const refuse = (why: string): ApiError =>
    forbiddenError({ group: a.resource.group, resource: a.resource.resource, name }, why);

  // Whoever may create an object may set its owners; changing them later needs the power to delete it.
  if (a.operation === "UPDATE") {
    const decision = deps.authorize(
      resourceAttributes(user, {
        verb: "delete",
        apiGroup: a.resource.group,
        resource: a.resource.resource,
        subresource: a.subResource ?? "",
        namespace,
        name: a.name,
      }),
    );
    if (!decision.allowed)
      return refuse(`cannot set an ownerRef on a resource you can't delete: ${decision.reason}, <nil>`);
  }

  const blocking = newlyBlockingReferences(a.object, a.oldObject);
  if (blocking.length === 0) return undefined;
  const finalizeAnything = resourceAttributes(user, {
    verb: "update",
    apiGroup: "*",
    resource: "*",
    subresource: "finalizers",
    namespace: "",
    name: "*",
  });
  if (deps.authorize(finalizeAnything).allowed) return undefined;
  for (const ref of blocking) {
    const mapping = deps.mappingsFor(ref.apiVersion, ref.kind);
    if (!mapping.ok)
      return refuse(
        `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}: ${mapping.error}`,
      );
    for (const owner of mapping.resources) {
      const decision = deps.authorize(
        resourceAttributes(user, {
          verb: "update",
          apiGroup: owner.group,
          resource: owner.resource,
          subresource: "finalizers",
          // A namespaced owner must live in the dependent's namespace.
          namespace: owner.namespaced ? namespace : "",
          name: ref.name,
        }),
      );
      if (!decision.allowed)
        return refuse(
          `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${decision.reason}, <nil>`,
        );
    }
  }
  return undefined;
}

/** A served type as the lookup needs it (a ResourceInfo of the registry). */
interface ServedType {
  group: string;
  plural: string;
  namespaced: boolean;
  versions: readonly string[];
}

/** kube's RESTMapper over the served types: `ParseGroupVersion`, then the kind in that group and version. */
export const mappingsFrom =
  (byGroupKind: (group: string, kind: string) => ServedType | undefined) =>
  (apiVersion: string, kind: string): OwnerMapping => {
    const parts = apiVersion === "" ? [] : apiVersion.split("/");
    if (parts.length > 2) return { ok: false, error: `unexpected GroupVersion string: ${apiVersion}` };
    const [group, version] = parts.length === 2 ? [parts[0]!, parts[1]!] : ["", parts[0] ?? ""];
    const served = byGroupKind(group, kind);
    if (served && (version === "" || served.versions.includes(version)))
      return {
        ok: true,
        resources: [{ group: served.group, resource: served.plural, namespaced: served.namespaced }],
      };
    return {
      ok: false,
      error:
        version === ""
          ? `no matches for kind ${JSON.stringify(kind)} in group ${JSON.stringify(group)}`
          : `no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}`,
    };
  };
