/**
 * The REST semantics of kube-apiserver over the in-memory storage, as one object the HTTP layer (../http.ts)
 * and the server's controllers (../controllers.ts) call: get/list, and each verb's write path. This file
 * only routes; where each rule lives:
 * - write-path.ts — create and update in kube's order (admission, validation, persist), retries, removal;
 * - update.ts — PUT and PATCH bodies, server-side apply; scale.ts — the scale subresource;
 * - delete.ts — preconditions, propagation finalizers, deletionTimestamp;
 * - strategy.ts — the pure per-object rules; ../object-meta.ts — ObjectMeta validation;
 * - admit.ts — admission and the authorizer's checks inside the write path; crd.ts — the CRD lifecycle;
 * - request.ts — the request objects and RequestContext.
 * HTTP parsing, serialisation and the authorization of each request are in ../http.ts.
 */
import type { KubeObject } from "../../kube/object.js";
import { awaitResourceVersion, readResourceVersion } from "../resource-version.js";
import type { ResourceInfo } from "../types.js";
import { resourceKey } from "../types.js";
import { deleteObject } from "./delete.js";
import type {
  ApplyUpdateRequest,
  CreateRequest,
  DeleteRequest,
  PatchRequest,
  RestDeps,
  UpdateRequest,
} from "./request.js";
import { readScale } from "./scale.js";
import { patch, update } from "./update.js";
import { WritePath } from "./write-path.js";

export { CRD_CLEANUP_FINALIZER, CRD_KEY } from "./crd.js";
export {
  type ApplyUpdateRequest,
  type CreateRequest,
  type DeleteOptions,
  type DeleteRequest,
  FOREGROUND_FINALIZER,
  NAMESPACE_KEY,
  type ObjectRequest,
  ORPHAN_FINALIZER,
  type PatchRequest,
  type PatchType,
  type RequestContext,
  type RestDeps,
  type UpdateRequest,
} from "./request.js";
export { asVersion, gvOf } from "./strategy.js";

export class Rest {
  private readonly write: WritePath;

  constructor(private readonly deps: RestDeps) {
    this.write = new WritePath(deps);
  }

  get(res: ResourceInfo, namespace: string, name: string): KubeObject {
    return this.write.get(res, namespace, name);
  }

  /**
   * A GET with the request's `resourceVersion` (kube's GetOptions): none reads the newest; another is served
   * from kube's watch cache, at least that fresh — one the server has not reached waits up to 3 s and is then
   * a 504 (client-go relists on it); one that is not a number is a 500.
   */
  async getAt(
    res: ResourceInfo,
    namespace: string,
    name: string,
    resourceVersion: string | null | undefined,
  ): Promise<KubeObject> {
    const wanted = readResourceVersion(resourceVersion);
    if (wanted !== undefined) await awaitResourceVersion(this.deps.storage, wanted);
    return this.write.get(res, namespace, name);
  }

  /** The server's time, as metadata timestamps carry it (whole seconds). */
  now(): string {
    return this.write.now();
  }

  list(res: ResourceInfo, namespace: string | undefined): KubeObject[] {
    return this.deps.storage.list(resourceKey(res), res.namespaced ? namespace : undefined);
  }

  /** The Scale a GET of `…/scale` answers (500 for an object without replicas, as kube answers). */
  scaleOf(res: ResourceInfo, o: KubeObject): KubeObject {
    return readScale(res, o);
  }

  create(request: CreateRequest): Promise<KubeObject> {
    return this.write.create(request);
  }

  /**
   * Seeding and tests: stores `body` as given, bypassing admission (and the NamespaceLifecycle check),
   * but still assigning uid, resourceVersion, creationTimestamp and generation, defaulting and validating.
   */
  createDirect(res: ResourceInfo, body: KubeObject): KubeObject {
    return this.write.createDirect(res, body);
  }

  update(request: UpdateRequest): Promise<KubeObject> {
    return update(this.write, request);
  }

  patch(request: PatchRequest): Promise<{ object: KubeObject; created: boolean }> {
    return patch(this.write, request);
  }

  /** The update half of the write path, for the server's controllers (one attempt, no retry). */
  applyUpdate(request: ApplyUpdateRequest): Promise<KubeObject> {
    return this.write.applyUpdate(request);
  }

  delete(request: DeleteRequest): Promise<{ object: KubeObject; gone: boolean }> {
    return deleteObject(this.write, request);
  }

  /** The namespace controller's last step (kube: PUT namespaces/<name>/finalize). */
  finalizeNamespace(ns: KubeObject): void {
    this.write.finalizeNamespace(ns);
  }
}
