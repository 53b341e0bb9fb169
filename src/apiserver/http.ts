/**
 * The HTTP face of the server: bearer-token authentication, request counters and fault injection, the
 * authorization of every request (kube's RequestInfo → the RBAC authorizer of rbac.ts; 403 before anything
 * else is looked at), the router for discovery/OpenAPI/REST paths, body decoding, Table negotiation, and
 * watch streams (newline-delimited JSON, headers flushed at once, bookmarks, timeouts, 410 for compacted
 * versions). Semantics of objects live in rest.ts; this file only translates between HTTP and it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type pino from "pino";
import YAML from "yaml";
import { isRecord, type KubeObject } from "../kube/object.js";
import { listOptionCauses } from "./builtin-validation.js";
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  openApiGroupVersion,
  openApiRoot,
  VERSION_INFO,
} from "./discovery.js";
import type { FaultInjector, RequestCounters, RequestInfo } from "./faults.js";
import {
  type Attributes,
  type Authorizer,
  type NonResourceAttributes,
  type ResourceAttributes,
  refusal,
} from "./rbac.js";
import type { Registry } from "./registry.js";
import {
  asVersion,
  type DeleteOptions,
  gvOf,
  type PatchType,
  type RequestContext,
  type Rest,
} from "./rest.js";
import {
  nameFromFieldSelector,
  type Predicate,
  parseFieldSelector,
  parseLabelSelector,
} from "./selectors.js";
import {
  ApiError,
  badRequest,
  internalError,
  invalid,
  methodNotAllowed,
  unauthorized,
  unsupportedMediaType,
} from "./status.js";
import { deliver, type Storage } from "./storage.js";
import { type IncludeObject, tableFor } from "./table.js";
import type { ResourceInfo, StoreEvent, UserInfo, WatchEventType } from "./types.js";
import { resourceKey } from "./types.js";
import { createWatchWriter } from "./watch-writer.js";

export interface HttpDeps {
  rest: Rest;
  storage: Storage;
  registry: Registry;
  users: ReadonlyMap<string, UserInfo>;
  authorize: Authorizer;
  counters: RequestCounters;
  faults: FaultInjector;
  clock: () => number;
  bookmarkIntervalMs: number;
  maxBodyBytes?: number;
  logger?: pino.Logger;
}

export interface ResourcePath {
  group: string;
  version: string;
  namespace: string | undefined;
  resource: string;
  name: string | undefined;
  subresource: string | undefined;
  watchPath: boolean;
}

interface ListSnapshot {
  items: KubeObject[];
  rv: string;
  takenAt: number;
}
const SNAPSHOT_TTL_MS = 5 * 60_000;
const MAX_WATCH_BACKLOG_BYTES = 64 * 1024 * 1024;
const MAX_SNAPSHOTS = 64;

const encodeContinue = (c: { id: number; offset: number; rv: string }): string =>
  Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: Number(c.rv), id: c.id, offset: c.offset })).toString(
    "base64url",
  );
const decodeContinue = (token: string): { id: number; offset: number } | undefined => {
  try {
    const v = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Record<string, unknown>;
    return typeof v.id === "number" && typeof v.offset === "number"
      ? { id: v.id, offset: v.offset }
      : undefined;
  } catch {
    return undefined;
  }
};

const NOT_FOUND = (): ApiError =>
  new ApiError(404, "NotFound", "the server could not find the requested resource");

/** `/api/v1/...` and `/apis/<g>/<v>/...` → the parts of a resource request, or undefined for other paths. */
export const parseResourcePath = (path: string): ResourcePath | undefined => {
  const segs = path
    .split("/")
    .filter((s) => s !== "")
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === "api" && segs.length >= 3) {
    group = "";
    version = segs[1]!;
    rest = segs.slice(2);
  } else if (segs[0] === "apis" && segs.length >= 4) {
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else return undefined;
  let watchPath = false;
  if (rest[0] === "watch") {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (
    rest[0] === "namespaces" &&
    rest.length >= 3 &&
    !(rest.length === 3 && ["status", "finalize"].includes(rest[2]!))
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.length > 3) return undefined;
  return { group, version, namespace, resource: rest[0]!, name: rest[1], subresource: rest[2], watchPath };
};

/** Warning header values: quoted, escaped, and latin1-safe (Node refuses header chars above U+00FF). */
export const warningHeader = (text: string): string =>
  `299 - "${Buffer.from(
    text
      .replace(/\\/g, "\\\\")
      .replace(/"/g, '\\"')
      .replace(/[\r\n]+/g, " "),
    "utf8",
  ).toString("latin1")}"`;

const statusJson = (e: ApiError): string => JSON.stringify(e.toStatus());

const send = (
  res: ServerResponse,
  code: number,
  body: string,
  warnings: readonly string[] = [],
  extra: Record<string, string> = {},
): void => {
  if (res.headersSent) {
    res.end();
    return;
  }
  const headers: Record<string, string | string[]> = {
    "Content-Type": "application/json",
    "Cache-Control": "no-cache, private",
    ...extra,
  };
  const unique = [...new Set(warnings)];
  if (unique.length > 0) headers.Warning = unique.map(warningHeader);
  res.writeHead(code, headers);
  res.end(body);
};

const readBody = (req: IncomingMessage, limit: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is " + limit));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
};

/** POST/PUT bodies: JSON or YAML as kube accepts; protobuf (sent by kubectl's generator commands) is a 415. */
const decodeBody = (contentType: string | undefined, text: string): unknown => {
  const ct = (contentType ?? "application/json").split(";")[0]!.trim();
  if (ct === "application/json" || ct === "") return parseJson(text);
  if (ct === "application/yaml") {
    try {
      return YAML.parse(text);
    } catch (e) {
      throw badRequest(`error decoding YAML: ${(e as Error).message}`);
    }
  }
  throw unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
  );
};

const patchTypeOf = (contentType: string | undefined): PatchType => {
  const ct = (contentType ?? "").split(";")[0]!.trim();
  switch (ct) {
    case "application/merge-patch+json":
      return "merge";
    case "application/json-patch+json":
      return "json";
    case "application/strategic-merge-patch+json":
      return "strategic";
    case "application/apply-patch+yaml":
      return "apply";
    default:
      throw unsupportedMediaType(
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
  }
};

const wantsTable = (req: IncomingMessage): boolean => (req.headers.accept ?? "").includes("as=Table");

/** The authorizer's verb for a request, as kube-apiserver names it (also used by the tests' fault proxy). */
export const verbOf = (method: string, p: ResourcePath, watch: boolean): string => {
  switch (method) {
    case "GET":
      return p.name ? "get" : watch ? "watch" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return p.name ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
};

/** kube's `IsValidPathSegmentName`: what a field selector may name for the authorizer. */
const validPathSegment = (name: string): boolean =>
  name !== "." && name !== ".." && !name.includes("/") && !name.includes("%");

/**
 * The authorizer's view of a resource request, as kube's RequestInfo derives it from the URL alone: a
 * `/namespaces/<name>` path is in that namespace (so is a Namespace itself); a list or watch names the
 * object its `metadata.name` field selector requires; a `/watch/` path is a watch whatever it names.
 */
export const resourceAttributes = (
  user: UserInfo,
  method: string,
  p: ResourcePath,
  q: URLSearchParams,
  watch: boolean,
): ResourceAttributes => {
  const verb = p.watchPath ? "watch" : verbOf(method, p, watch);
  const selected =
    !p.watchPath && (verb === "list" || verb === "watch")
      ? nameFromFieldSelector(q.get("fieldSelector") ?? undefined)
      : undefined;
  return {
    user,
    verb,
    resourceRequest: true,
    apiGroup: p.group,
    resource: p.resource,
    subresource: p.subresource ?? "",
    namespace: p.namespace ?? (p.resource === "namespaces" && p.name ? p.name : ""),
    name: p.name ?? (selected !== undefined && validPathSegment(selected) ? selected : ""),
  };
};

/** Any other path: the verb is the lower-cased HTTP method, as kube names it. */
export const nonResourceAttributes = (
  user: UserInfo,
  method: string,
  path: string,
): NonResourceAttributes => ({
  user,
  verb: method.toLowerCase(),
  resourceRequest: false,
  path,
});

/** `namespace/name` order, as etcd returns keys. */
const byNamespaceName = (a: KubeObject, b: KubeObject): number => {
  const na = a.metadata?.namespace ?? "";
  const nb = b.metadata?.namespace ?? "";
  if (na !== nb) return na < nb ? -1 : 1;
  const ma = a.metadata?.name ?? "";
  const mb = b.metadata?.name ?? "";
  return ma < mb ? -1 : ma > mb ? 1 : 0;
};

export class HttpApi {
  private readonly openWatches = new Set<ServerResponse>();
  private readonly snapshots = new Map<number, ListSnapshot>();
  private nextSnapshotId = 1;
  /**
   * The JSON a watch event already made of a stored object, so the write's own response (sent right after
   * its event went out) does not serialize the object again. Stored objects are never changed in place —
   * the events' own `json` relies on that too.
   */
  private readonly eventJson = new WeakMap<KubeObject, string>();

  private json(o: KubeObject): string {
    return this.eventJson.get(o) ?? JSON.stringify(o);
  }

  constructor(private readonly deps: HttpDeps) {}

  /** Ends every open watch (server stop). */
  closeWatches(): void {
    for (const r of this.openWatches) r.destroy();
    this.openWatches.clear();
  }

  handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.dispatch(req, res).catch((e: unknown) => {
      const err = e instanceof ApiError ? e : internalError(String((e as Error)?.message ?? e));
      if (!(e instanceof ApiError)) this.deps.logger?.error({ err: e, url: req.url }, "request failed");
      send(res, err.code, statusJson(err), err.warnings, err.headers);
    });
  };

  private authenticate(req: IncomingMessage): UserInfo | undefined {
    const h = req.headers.authorization ?? "";
    const m = /^Bearer\s+(\S+)$/i.exec(h);
    return m ? this.deps.users.get(m[1]!) : undefined;
  }

  /** kube's authorization filter: a refused request is answered 403 and goes no further. */
  private authorized(attributes: Attributes): void {
    const decision = this.deps.authorize(attributes);
    if (!decision.allowed) throw refusal(attributes, decision.reason);
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "https://local");
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const method = req.method ?? "GET";
    const user = this.authenticate(req);
    if (!user) throw unauthorized();
    const p = parseResourcePath(path);
    if (!p) {
      this.deps.counters.record({ verb: "get", resource: `nonResource:${path}`, user: user.username });
      this.authorized(nonResourceAttributes(user, method, path));
      return this.nonResource(method, path, res);
    }
    const q = url.searchParams;
    const watch = p.watchPath || q.get("watch") === "true" || q.get("watch") === "1";
    const info: RequestInfo = {
      verb: verbOf(method, p, watch),
      resource: `${p.group}/${p.resource}${p.subresource ? `/${p.subresource}` : ""}`,
      user: user.username,
    };
    this.deps.counters.record(info);
    try {
      await this.admitted(req, res, method, p, q, info, user, watch);
    } catch (e) {
      this.deps.counters.failed(info, e instanceof ApiError ? e.code : 500);
      throw e;
    }
  }

  /** The rest of `dispatch` once a resource request is counted (its errors are counted as refusals). */
  private async admitted(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    p: ResourcePath,
    q: URLSearchParams,
    info: RequestInfo,
    user: UserInfo,
    watch: boolean,
  ): Promise<void> {
    const latency = this.deps.faults.latencyFor(info);
    if (latency > 0) await new Promise((r) => setTimeout(r, latency));
    const fault = this.deps.faults.decide(info);
    if (fault.kind === "error") throw injected(fault.code);
    if (fault.kind === "lostReply") loseReply(res);
    // After the faults: the tests' fault proxy stands in front of a real server's authorizer the same way.
    this.authorized(resourceAttributes(user, method, p, q, watch));

    const type = this.deps.registry.find(p.group, p.version, p.resource);
    if (!type) throw NOT_FOUND();
    if (p.namespace !== undefined && !type.namespaced) throw NOT_FOUND();
    if (p.subresource && !["status", "scale"].includes(p.subresource)) throw NOT_FOUND();
    if (p.subresource === "status" && !type.statusSubresource) throw NOT_FOUND();
    if (p.subresource === "scale" && !type.scale) throw NOT_FOUND();
    const namespace = type.namespaced ? p.namespace : "";
    const ctx: RequestContext = {
      user,
      dryRun: (q.getAll("dryRun") ?? []).includes("All"),
      warnings: [],
      ...(q.get("fieldManager") ? { fieldManager: q.get("fieldManager")! } : {}),
      ...(req.headers["user-agent"] ? { userAgent: String(req.headers["user-agent"]) } : {}),
      ...(q.get("fieldValidation") ? { fieldValidation: q.get("fieldValidation")! } : {}),
    };
    try {
      await this.resource(req, res, method, p, q, type, namespace, ctx, watch, info);
    } catch (e) {
      if (e instanceof ApiError) e.warnings = ctx.warnings;
      throw e;
    }
  }

  private async resource(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    p: ResourcePath,
    q: URLSearchParams,
    type: ResourceInfo,
    namespace: string | undefined,
    ctx: RequestContext,
    watch: boolean,
    info: RequestInfo,
  ): Promise<void> {
    const version = p.version;
    const rest = this.deps.rest;
    const needNamespace = (): string => {
      if (namespace === undefined) throw NOT_FOUND();
      return namespace;
    };

    if (method === "GET" && p.name) {
      const o = rest.get(type, needNamespace(), p.name);
      if (p.subresource === "scale") return send(res, 200, JSON.stringify(rest.scaleOf(type, o)));
      const obj = asVersion(type, version, o);
      const body = wantsTable(req)
        ? tableFor(type, [obj], o.metadata?.resourceVersion, includeOf(q), this.deps.clock())
        : obj;
      return send(res, 200, body === obj ? this.json(obj) : JSON.stringify(body));
    }
    if (method === "GET") {
      if (watch) return this.watch(req, res, type, version, namespace, q, info);
      return this.list(req, res, type, version, namespace, q);
    }
    if (method === "POST" && !p.name) {
      const body = decodeBody(req.headers["content-type"], await readBody(req, this.maxBody()));
      const created = await rest.create(ctx, type, version, needNamespace(), body);
      return send(res, 201, this.json(created), ctx.warnings);
    }
    if (method === "PUT" && p.name) {
      const body = decodeBody(req.headers["content-type"], await readBody(req, this.maxBody()));
      const updated = await rest.update(ctx, type, version, needNamespace(), p.name, p.subresource, body);
      return send(res, 200, this.json(updated), ctx.warnings);
    }
    if (method === "PATCH" && p.name) {
      const kind = patchTypeOf(req.headers["content-type"]);
      const text = await readBody(req, this.maxBody());
      let body: unknown;
      if (kind === "apply") {
        try {
          body = YAML.parse(text);
        } catch (e) {
          throw badRequest(`error decoding YAML: ${(e as Error).message}`);
        }
      } else body = parseJson(text);
      const force = q.get("force") === "true";
      ctx.patch = { force, apply: kind === "apply" };
      const out = await rest.patch(
        ctx,
        type,
        version,
        needNamespace(),
        p.name,
        p.subresource,
        kind,
        body,
        force,
      );
      return send(res, out.created ? 201 : 200, this.json(out.object), ctx.warnings);
    }
    if (method === "DELETE" && p.name && !p.subresource) {
      const opts = await this.deleteOptions(req, q);
      if (opts.dryRun?.includes("All")) ctx.dryRun = true;
      const out = await rest.delete(ctx, type, version, needNamespace(), p.name, opts);
      const body =
        out.gone && type.builtIn
          ? {
              kind: "Status",
              apiVersion: "v1",
              metadata: {},
              status: "Success",
              details: { name: p.name, group: type.group, kind: type.plural, uid: out.object.metadata?.uid },
            }
          : out.object;
      return send(res, 200, JSON.stringify(body), ctx.warnings);
    }
    if (method === "DELETE" && !p.name) {
      const opts = await this.deleteOptions(req, q);
      if (opts.dryRun?.includes("All")) ctx.dryRun = true;
      const selected = this.select(type, namespace, q);
      const deleted: KubeObject[] = [];
      for (const o of selected) {
        try {
          deleted.push(
            (await rest.delete(ctx, type, version, o.metadata?.namespace ?? "", o.metadata?.name ?? "", opts))
              .object,
          );
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
      }
      const list = {
        kind: type.listKind,
        apiVersion: gvOf(type, version),
        metadata: { resourceVersion: String(this.deps.storage.currentRv()) },
        items: deleted,
      };
      return send(res, 200, JSON.stringify(list), ctx.warnings);
    }
    throw methodNotAllowed();
  }

  private maxBody(): number {
    return this.deps.maxBodyBytes ?? 3 * 1024 * 1024;
  }

  private async deleteOptions(req: IncomingMessage, q: URLSearchParams): Promise<DeleteOptions> {
    const text = await readBody(req, this.maxBody());
    const body = text.trim() ? parseJson(text) : {};
    const opts: DeleteOptions = isRecord(body) ? (body as DeleteOptions) : {};
    if (q.get("propagationPolicy")) opts.propagationPolicy = q.get("propagationPolicy")!;
    if (q.get("gracePeriodSeconds")) opts.gracePeriodSeconds = Number(q.get("gracePeriodSeconds"));
    if (q.getAll("dryRun").length > 0) opts.dryRun = q.getAll("dryRun");
    return opts;
  }

  private predicates(type: ResourceInfo, q: URLSearchParams): Predicate | undefined {
    const labels = q.get("labelSelector") ?? undefined;
    const fields = q.get("fieldSelector") ?? undefined;
    if (!labels && !fields) return undefined;
    const l = parseLabelSelector(labels);
    if (typeof l === "string") throw badRequest(`unable to parse requirement: ${l}`);
    const f = parseFieldSelector(fields, type.kind);
    if (typeof f === "string") throw badRequest(f);
    return (o) => l(o) && f(o);
  }

  private select(type: ResourceInfo, namespace: string | undefined, q: URLSearchParams): KubeObject[] {
    const match = this.predicates(type, q);
    const name = nameFromFieldSelector(q.get("fieldSelector") ?? undefined);
    const key = resourceKey(type);
    let objects: KubeObject[];
    if (name !== undefined && namespace !== undefined) {
      const o = this.deps.storage.get(key, namespace, name);
      objects = o ? [o] : [];
    } else objects = this.deps.storage.list(key, namespace);
    return match ? objects.filter(match) : objects;
  }

  private list(
    req: IncomingMessage,
    res: ServerResponse,
    type: ResourceInfo,
    version: string,
    namespace: string | undefined,
    q: URLSearchParams,
  ): void {
    const causes = listOptionCauses(q);
    if (causes.length > 0) throw invalid("meta.k8s.io", "ListOptions", "", causes);
    const page = this.page(type, namespace, q);
    const metadata = {
      resourceVersion: page.rv,
      ...(page.continueToken ? { continue: page.continueToken, remainingItemCount: page.remaining } : {}),
    };
    if (wantsTable(req)) {
      const table = tableFor(
        type,
        page.items.map((o) => asVersion(type, version, o)),
        page.rv,
        includeOf(q),
        this.deps.clock(),
      );
      send(res, 200, JSON.stringify({ ...table, metadata }));
      return;
    }
    const head = JSON.stringify({ kind: type.listKind, apiVersion: gvOf(type, version), metadata });
    // Items are serialised one by one into the list so that no list-sized intermediate object is built.
    const parts = page.items.map((o) => JSON.stringify(asVersion(type, version, o)));
    send(res, 200, `${head.slice(0, -1)},"items":[${parts.join(",")}]}`);
  }

  /**
   * `limit`/`continue` as kube serves them: every page of one list comes from the snapshot taken by the
   * first page (same resourceVersion), so a client that pages sees one consistent state. Snapshots hold
   * references, not copies, and expire like etcd compaction does (410 Expired for a stale token).
   */
  private page(
    type: ResourceInfo,
    namespace: string | undefined,
    q: URLSearchParams,
  ): { items: KubeObject[]; rv: string; continueToken?: string; remaining?: number } {
    const limit = Math.max(0, Math.floor(Number(q.get("limit") ?? 0)) || 0);
    const token = q.get("continue");
    let snapshot: ListSnapshot;
    let offset = 0;
    if (token) {
      const decoded = decodeContinue(token);
      const found = decoded ? this.snapshots.get(decoded.id) : undefined;
      if (!decoded || !found || this.deps.clock() - found.takenAt > SNAPSHOT_TTL_MS)
        throw new ApiError(
          410,
          "Expired",
          "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
        );
      snapshot = found;
      offset = decoded.offset;
    } else {
      snapshot = {
        items: this.select(type, namespace, q).sort(byNamespaceName),
        rv: String(this.deps.storage.currentRv()),
        takenAt: this.deps.clock(),
      };
    }
    if (limit === 0 || offset + limit >= snapshot.items.length)
      return { items: offset === 0 ? snapshot.items : snapshot.items.slice(offset), rv: snapshot.rv };
    const id = token ? decodeContinue(token)!.id : this.nextSnapshotId++;
    if (!token) {
      this.snapshots.set(id, snapshot);
      for (const oldest of this.snapshots.keys()) {
        if (this.snapshots.size <= MAX_SNAPSHOTS) break;
        this.snapshots.delete(oldest);
      }
    }
    const end = offset + limit;
    return {
      items: snapshot.items.slice(offset, end),
      rv: snapshot.rv,
      continueToken: encodeContinue({ id, offset: end, rv: snapshot.rv }),
      remaining: snapshot.items.length - end,
    };
  }

  private watch(
    req: IncomingMessage,
    res: ServerResponse,
    type: ResourceInfo,
    version: string,
    namespace: string | undefined,
    q: URLSearchParams,
    info: RequestInfo,
  ): void {
    const match = this.predicates(type, q);
    const rvParam = q.get("resourceVersion") ?? "";
    const since = rvParam === "" || rvParam === "0" ? undefined : Number(rvParam);
    if (since !== undefined && !Number.isInteger(since))
      throw badRequest(`invalid resource version: ${rvParam}`);
    const table = wantsTable(req);
    const include = includeOf(q);
    const key = resourceKey(type);
    const sameVersion = version === type.storageVersion;

    res.writeHead(200, {
      "Content-Type": "application/json",
      "Cache-Control": "no-cache, private",
      "Transfer-Encoding": "chunked",
    });
    res.flushHeaders();
    this.openWatches.add(res);

    let firstTable = true;
    const line = (type_: string, e: StoreEvent | undefined, o: KubeObject): string => {
      if (table) {
        const t = tableFor(
          type,
          [asVersion(type, version, o)],
          o.metadata?.resourceVersion,
          include,
          this.deps.clock(),
          firstTable,
        );
        firstTable = false;
        return `{"type":"${type_}","object":${JSON.stringify(t)}}\n`;
      }
      if (e && sameVersion) {
        if (e.json === undefined) {
          e.json = JSON.stringify(e.object);
          this.eventJson.set(e.object, e.json);
        }
        return `{"type":"${type_}","object":${e.json}}\n`;
      }
      return `{"type":"${type_}","object":${JSON.stringify(asVersion(type, version, o))}}\n`;
    };
    const stream = createWatchWriter(res, {
      maxBacklog: MAX_WATCH_BACKLOG_BYTES,
      onStalled: () =>
        this.deps.logger?.warn(
          { resource: info.resource, user: info.user },
          "closing a watch that stopped reading",
        ),
    });
    const write = stream.write;

    if (since !== undefined) {
      const events = this.deps.storage.eventsSince(key, since);
      if (!events) {
        const oldest = this.deps.storage.oldestResumableRv();
        const status = new ApiError(
          410,
          "Expired",
          `too old resource version: ${since} (${oldest + 1})`,
        ).toStatus();
        res.end(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
        this.openWatches.delete(res);
        return;
      }
      // Replay goes through the same selector translation as live events.
      const replay = {
        key,
        namespace,
        matches: match,
        send: (t: WatchEventType, ev: StoreEvent) => write(line(t, ev, ev.object)),
      };
      for (const e of events) deliver(replay, e);
    } else {
      const initial = this.select(type, namespace, q).sort(byNamespaceName);
      for (const o of initial) write(line("ADDED", undefined, o));
    }

    const remove = this.deps.storage.addWatcher({
      key,
      namespace,
      matches: match,
      send: (t, e) => write(line(t, e, e.object)),
    });
    const timers: NodeJS.Timeout[] = [];
    const intervals: NodeJS.Timeout[] = [];
    const close = (): void => {
      remove();
      for (const t of timers) clearTimeout(t);
      for (const t of intervals) clearInterval(t);
      stream.discard();
      this.openWatches.delete(res);
    };
    if (q.get("allowWatchBookmarks") === "true") {
      const bookmark = (): void =>
        write(
          `{"type":"BOOKMARK","object":${JSON.stringify({ kind: type.kind, apiVersion: gvOf(type, version), metadata: { resourceVersion: String(this.deps.storage.currentRv()) } })}}\n`,
        );
      intervals.push(setInterval(bookmark, this.deps.bookmarkIntervalMs));
    }
    const timeout = Number(q.get("timeoutSeconds") ?? "");
    if (timeout > 0) timers.push(setTimeout(stream.end, timeout * 1000));
    const drop = this.deps.faults.watchDropAfter(info);
    if (drop !== undefined) timers.push(setTimeout(stream.end, drop));
    res.on("close", close);
    req.on("close", close);
  }

  private nonResource(method: string, path: string, res: ServerResponse): void {
    if (method !== "GET") throw methodNotAllowed();
    if (path === "/healthz" || path === "/readyz" || path === "/livez") {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("ok");
      return;
    }
    const body = nonResourceBody(this.deps.registry, path);
    if (body === undefined) throw NOT_FOUND();
    send(res, 200, JSON.stringify(body));
  }
}

/** Discovery and OpenAPI answers by path; undefined when nothing is served there. */
const nonResourceBody = (r: Registry, path: string): unknown => {
  if (path === "/version") return VERSION_INFO;
  if (path === "/api") return apiVersions();
  if (path === "/apis") return apiGroupList(r);
  if (path === "/openapi/v3") return openApiRoot(r);
  const segs = path.split("/").filter(Boolean);
  if (segs[0] === "api" && segs.length === 2) return apiResourceList(r, "", segs[1]!);
  if (segs[0] === "apis" && segs.length === 2) return apiGroup(r, segs[1]!);
  if (segs[0] === "apis" && segs.length === 3) return apiResourceList(r, segs[1]!, segs[2]!);
  if (segs[0] === "openapi" && segs[1] === "v3") {
    const rest = segs.slice(2);
    if (rest[0] === "api" && rest.length === 2) return openApiGroupVersion(r, "", rest[1]!);
    if (rest[0] === "apis" && rest.length === 3) return openApiGroupVersion(r, rest[1]!, rest[2]!);
  }
  return undefined;
};

const includeOf = (q: URLSearchParams): IncludeObject => {
  const v = q.get("includeObject");
  return v === "Object" || v === "None" ? v : "Metadata";
};

/**
 * An injected lost reply: the request is carried out as usual, but nothing of the answer is written — the
 * connection is cut when the handler ends it, as when a reply is lost on the way back.
 */
const loseReply = (res: ServerResponse): void => {
  const cut = (): ServerResponse => {
    res.socket?.destroy();
    return res;
  };
  Object.assign(res, { writeHead: () => res, write: () => true, end: cut, flushHeaders: () => undefined });
};

/** The error an injected fault answers with (also used by the tests' fault proxy in front of a real server). */
export const injected = (code: 409 | 429 | 500): ApiError => {
  if (code === 409)
    return new ApiError(
      409,
      "Conflict",
      "Operation cannot be fulfilled: injected conflict (fault injection)",
    );
  if (code === 429)
    return new ApiError(
      429,
      "TooManyRequests",
      "the server has received too many requests and has asked us to try again later",
      { retryAfterSeconds: 1 },
      { "Retry-After": "1" },
    );
  return internalError("injected failure (fault injection)");
};
