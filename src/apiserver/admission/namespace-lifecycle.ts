/**
 * `NamespaceLifecycle`, kube-apiserver's admission plugin (k8s.io/apiserver admission/plugin/namespace/
 * lifecycle), as far as a request can meet it here: nothing is created in a namespace that does not exist
 * (404; nor updated there) or is terminating (403, with the `NamespaceTerminating` cause clients look for),
 * and the namespaces every cluster relies on may not be deleted. Updates and deletes inside a terminating
 * namespace are allowed (finalizers must still be removable). Pure: the request and the namespace as stored in, a refusal out; the
 * write path calls it first, before any webhook, as kube orders its plugins.
 */
import type { KubeObject } from "../../kube/object.js";
import { forbiddenError } from "../rbac.js";
import { type ApiError, notFound } from "../status.js";

/** kube's immortal namespaces: deleting them is refused whoever asks. */
const IMMORTAL_NAMESPACES: readonly string[] = ["default", "kube-system", "kube-public"];

export interface LifecycleRequest {
  operation: "CREATE" | "UPDATE" | "DELETE";
  group: string;
  resource: string;
  /** The object's namespace; "" for cluster-scoped kinds. */
  namespace: string;
  name: string;
}

const isNamespaceKind = (r: LifecycleRequest): boolean => r.group === "" && r.resource === "namespaces";

/** The refusal, or undefined. `namespaceObject` is the stored Namespace named by `request.namespace`. */
export function checkNamespaceLifecycle(
  request: LifecycleRequest,
  namespaceObject: KubeObject | undefined,
): ApiError | undefined {
  if (isNamespaceKind(request)) {
    if (request.operation === "DELETE" && IMMORTAL_NAMESPACES.includes(request.name))
      return forbiddenError(
        { group: "", resource: "namespaces", name: request.name },
        "this namespace may not be deleted",
      );
    return undefined;
  }
  if (request.namespace === "" || request.operation === "DELETE") return undefined;
  if (!namespaceObject) return notFound("", "namespaces", request.namespace);
  if (request.operation !== "CREATE" || namespaceObject.status?.phase !== "Terminating") return undefined;
  return forbiddenError(
    { group: request.group, resource: request.resource, name: request.name },
    `unable to create new content in namespace ${request.namespace} because it is being terminated`,
    [
      {
        reason: "NamespaceTerminating",
        message: `namespace ${request.namespace} is being terminated`,
        field: "metadata.namespace",
      },
    ],
  );
}
