/**
 * A typed REST client for any `ResourceType` (core and named groups, CRDs alike) over the runtime's
 * transport: get, list, create, update, updateStatus, patch (merge, JSON Patch, server-side
 * apply) and delete with preconditions. Content types are explicit per call, so a merge patch is never
 * sent as JSON Patch by accident. Failures arrive as the typed errors of errors.ts. Writes go to the API
 * server; reads for controllers should come from the cache, not from here.
 */
import type { Operation } from "fast-json-patch";
import { NotFoundError } from "./errors.js";
import type { ResourceType } from "./kinds.js";
import { apiVersionOf } from "./kinds.js";
import { parseWithoutManagedFields } from "./managed-fields-text.js";
import type { KubeObject } from "./object.js";
import { isRecord, nameOf, namespaceOf } from "./object.js";
import type { KubeRequest, Transport } from "./transport.js";
import { resourcePath } from "./transport.js";

const PATCH_CONTENT_TYPE = Object.freeze({
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  apply: "application/apply-patch+yaml",
});

/**
 * What any call may carry to its request: a signal that ends it (and its `Retry-After` waits) — a reconcile's
 * `context.signal`, so a stopped controller stops waiting — and its own timeout, which also bounds those waits
 * (transport.ts `DEFAULT_RETRY_BUDGET_MS` without it).
 */
export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ListOptions extends RequestOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface WriteOptions extends RequestOptions {
  fieldManager?: string;
  dryRun?: boolean;
  subresource?: "status" | "scale";
}

export interface DeleteOptions extends RequestOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  dryRun?: boolean;
}

export type Patch =
  | { type: "merge"; body: Record<string, unknown> }
  | { type: "json"; body: readonly Operation[] }
  | { type: "apply"; body: KubeObject; fieldManager: string; force?: boolean };

export interface KubeClient {
  get(type: ResourceType, namespace: string, name: string, options?: RequestOptions): Promise<KubeObject>;
  list(type: ResourceType, options?: ListOptions): Promise<{ items: KubeObject[]; resourceVersion: string }>;
  create(type: ResourceType, object: KubeObject, options?: WriteOptions): Promise<KubeObject>;
  /** PUT; the object's metadata.resourceVersion is the precondition (409 when stale). */
  update(type: ResourceType, object: KubeObject, options?: WriteOptions): Promise<KubeObject>;
  updateStatus(type: ResourceType, object: KubeObject, options?: WriteOptions): Promise<KubeObject>;
  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    patch: Patch,
    options?: WriteOptions,
  ): Promise<KubeObject>;
  /** Resolves with the server's answer (the object while finalizers hold it, or a Status). */
  delete(type: ResourceType, namespace: string, name: string, options?: DeleteOptions): Promise<unknown>;
}

/**
 * `client` with `signal` on every call (decision 198): a reconcile's reads and writes, and their `Retry-After`
 * waits, end when its controller stops, as SPEC §7's "losing the Lease stops the controllers immediately" asks.
 */
export function withSignal(client: KubeClient, signal: AbortSignal): KubeClient {
  return {
    get: (type, namespace, name, options) => client.get(type, namespace, name, { ...options, signal }),
    list: (type, options) => client.list(type, { ...options, signal }),
    create: (type, object, options) => client.create(type, object, { ...options, signal }),
    update: (type, object, options) => client.update(type, object, { ...options, signal }),
    updateStatus: (type, object, options) => client.updateStatus(type, object, { ...options, signal }),
    patch: (type, namespace, name, patch, options) =>
      client.patch(type, namespace, name, patch, { ...options, signal }),
    delete: (type, namespace, name, options) => client.delete(type, namespace, name, { ...options, signal }),
  };
}

const dryRunQuery = (dryRun: boolean | undefined) => (dryRun ? { dryRun: "All" } : {});

/** A call's signal and timeout as request fields, absent ones left out. */
const requestOf = (options: RequestOptions | undefined): Pick<KubeRequest, "signal" | "timeoutMs"> => ({
  ...(options?.signal ? { signal: options.signal } : {}),
  ...(options?.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
});

export interface ClientOptions {
  /**
   * Answers without `metadata.managedFields`, cut from the text before it is parsed
   * (managed-fields-text.ts): for the product's controllers, which read none. A PUT of an object read so
   * leaves the stored managedFields as they were (kube keeps them when a write omits them).
   */
  dropManagedFields?: boolean;
}

const ONE_OBJECT = parseWithoutManagedFields("root");
const OBJECT_LIST = parseWithoutManagedFields("list");

export function createKubeClient(transport: Transport, options: ClientOptions = {}): KubeClient {
  const parseObject = options.dropManagedFields ? { parse: ONE_OBJECT } : {};
  const parseList = options.dropManagedFields ? { parse: OBJECT_LIST } : {};
  const asObject = (v: unknown): KubeObject => (isRecord(v) ? (v as KubeObject) : {});
  const withTypeMeta = (type: ResourceType, o: KubeObject): KubeObject => ({
    ...o,
    apiVersion: o.apiVersion ?? apiVersionOf(type),
    kind: o.kind ?? type.kind,
  });
  const put = async (
    type: ResourceType,
    object: KubeObject,
    options: WriteOptions | undefined,
    sub?: string,
  ) =>
    asObject(
      await transport.request({
        method: "PUT",
        path: resourcePath(type, namespaceOf(object), nameOf(object), sub),
        query: { fieldManager: options?.fieldManager, ...dryRunQuery(options?.dryRun) },
        body: withTypeMeta(type, object),
        ...requestOf(options),
        ...parseObject,
      }),
    );

  return {
    async get(type, namespace, name, options) {
      return asObject(
        await transport.request({
          method: "GET",
          path: resourcePath(type, namespace, name),
          ...requestOf(options),
          ...parseObject,
        }),
      );
    },
    async list(type, options) {
      const items: KubeObject[] = [];
      let token: string | undefined;
      let resourceVersion = "";
      do {
        const page = await transport.request({
          method: "GET",
          path: resourcePath(type, options?.namespace),
          query: {
            labelSelector: options?.labelSelector,
            fieldSelector: options?.fieldSelector,
            limit: 500,
            continue: token,
          },
          ...requestOf(options),
          ...parseList,
        });
        const p = asObject(page);
        for (const i of Array.isArray(p.items) ? p.items : [])
          if (isRecord(i)) items.push(withTypeMeta(type, i));
        const meta = isRecord(p.metadata) ? p.metadata : {};
        token = typeof meta.continue === "string" && meta.continue ? meta.continue : undefined;
        if (typeof meta.resourceVersion === "string") resourceVersion = meta.resourceVersion;
      } while (token);
      return { items, resourceVersion };
    },
    async create(type, object, options) {
      return asObject(
        await transport.request({
          method: "POST",
          path: resourcePath(type, namespaceOf(object)),
          query: { fieldManager: options?.fieldManager, ...dryRunQuery(options?.dryRun) },
          body: withTypeMeta(type, object),
          ...requestOf(options),
          ...parseObject,
        }),
      );
    },
    update: (type, object, options) => put(type, object, options, options?.subresource),
    updateStatus: (type, object, options) => put(type, object, options, "status"),
    async patch(type, namespace, name, patch, options) {
      const query: Record<string, string | boolean | undefined> = {
        fieldManager: patch.type === "apply" ? patch.fieldManager : options?.fieldManager,
        ...dryRunQuery(options?.dryRun),
      };
      if (patch.type === "apply" && patch.force) query.force = true;
      return asObject(
        await transport.request({
          method: "PATCH",
          path: resourcePath(type, namespace, name, options?.subresource),
          query,
          contentType: PATCH_CONTENT_TYPE[patch.type],
          // YAML is a superset of JSON: an apply body in JSON is valid apply-patch+yaml.
          body: patch.type === "apply" ? withTypeMeta(type, patch.body) : patch.body,
          ...requestOf(options),
          ...parseObject,
        }),
      );
    },
    delete(type, namespace, name, options) {
      const body: Record<string, unknown> = { apiVersion: "v1", kind: "DeleteOptions" };
      if (options?.preconditions) body.preconditions = options.preconditions;
      if (options?.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
      if (options?.dryRun) body.dryRun = ["All"];
      return transport.request({
        method: "DELETE",
        path: resourcePath(type, namespace, name),
        body,
        ...requestOf(options),
        ...parseObject,
      });
    },
  };
}

/** A GET that reads NotFound as absent (undefined); any other error is thrown. */
export const getOrAbsent = async (
  client: Pick<KubeClient, "get">,
  type: ResourceType,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> => {
  try {
    return await client.get(type, namespace, name);
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
};
