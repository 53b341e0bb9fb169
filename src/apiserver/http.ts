/**
 * The HTTP face of the server: bearer-token authentication, request counters and fault injection, the
 * authorization of every request (request-attributes.ts → the RBAC authorizer of rbac.ts; 403 before
 * anything else is looked at), and the router for discovery/OpenAPI and REST paths. Each verb is translated
 * into a call of rest/ and its answer written back; the wire format is in wire.ts, paged lists in
 * list-pages.ts, watch streams in watch.ts. Semantics of objects live in rest/.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type pino from "pino";
import { jsonText } from "../json-text.js";
import type { KubeObject } from "../kube/object.js";
import { isRecord } from "../kube/object.js";
import { appendAll } from "../lists.js";
import { API_AUDIENCES, answerReview } from "./access-reviews.js";
import { deleteOptionsOf } from "./delete-options.js";
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  openApiGroupVersion,
  openApiRoot,
  VERSION_INFO,
} from "./discovery.js";
import { duplicateFields } from "./duplicate-fields.js";
import { type FaultInjector, injected, loseReply, type RequestCounters, type RequestInfo } from "./faults.js";
import { ImpersonationHeadersError, impersonatedUser } from "./impersonation.js";
import { type CollectionRequest, Collections, listAnswer } from "./list-pages.js";
import { fieldManagerCauses, managerFromUserAgent, recordUpdate } from "./managed-fields.js";
import { checkTransform, negotiate, partialObjectMetadata } from "./negotiation.js";
import { typedDecodeProblem } from "./object-meta.js";
import { booleanParameter, checkIntegerParameters } from "./query.js";
import type { Attributes, Authorizer, PolicyView } from "./rbac.js";
import { refusal } from "./rbac.js";
import type { Registry } from "./registry.js";
import {
  nonResourceAttributes,
  parseResourcePath,
  type ResourcePath,
  resourceAttributes,
  verbOf,
} from "./request-attributes.js";
import {
  asVersion,
  type DeleteOptions,
  type ObjectRequest,
  type RequestContext,
  type Rest,
} from "./rest/index.js";
import { STRICT_ERRORS_REPORTED } from "./rest/strategy.js";
import { ApiError, badRequest, internalError, invalid, methodNotAllowed, unauthorized } from "./status.js";
import type { Storage } from "./storage.js";
import { tableFor } from "./table.js";
import type { ResourceInfo, StatusCause, UserInfo } from "./types.js";
import { Watches } from "./watch.js";
import {
  decodeBody,
  decodePatchBody,
  includeOf,
  missingKind,
  notFoundPath,
  patchTypeOf,
  readBody,
  readBodyBytes,
  SerializedObjects,
  send,
  statusJson,
} from "./wire.js";

/** The options kind kube validates a write's query against. */
const OPTIONS_KIND: Readonly<Record<string, string>> = {
  POST: "CreateOptions",
  PUT: "UpdateOptions",
  PATCH: "PatchOptions",
};

/** The patch media types that are not server-side apply (kube forbids `force` on them). */
const NON_APPLY_PATCHES = new Set([
  "application/merge-patch+json",
  "application/json-patch+json",
  "application/strategic-merge-patch+json",
]);
const mediaTypeOf = (contentType: string | undefined): string => (contentType ?? "").split(";")[0]!.trim();

/**
 * `dryRun`, `fieldManager`, `force` and `fieldValidation` of a write, checked as kube checks its
 * Create/Update/PatchOptions (422). A DELETE's options may come from its body instead, so they are checked
 * once read (./delete-options.ts).
 */
const writeOptionCauses = (
  method: string,
  q: URLSearchParams,
  contentType: string | undefined,
): StatusCause[] => {
  if (!(method in OPTIONS_KIND)) return [];
  const causes: StatusCause[] = [];
  const dryRun = q.getAll("dryRun");
  if (dryRun.some((v) => v !== "All"))
    causes.push({
      reason: "FieldValueNotSupported",
      field: "dryRun",
      message: `Unsupported value: []string{${dryRun.map((v) => JSON.stringify(v)).join(", ")}}: supported values: "All"`,
    });
  const manager = q.get("fieldManager");
  if (manager !== null) appendAll(causes, fieldManagerCauses(manager));
  if (method === "PATCH" && q.get("force") && NON_APPLY_PATCHES.has(mediaTypeOf(contentType)))
    causes.push({
      reason: "FieldValueForbidden",
      field: "force",
      message: "Forbidden: may not be specified for non-apply patch",
    });
  const validation = q.get("fieldValidation");
  if (validation !== null && !["", "Ignore", "Strict", "Warn"].includes(validation))
    causes.push({
      reason: "FieldValueNotSupported",
      field: "fieldValidation",
      message: `Unsupported value: ${JSON.stringify(validation)}: supported values: "", "Ignore", "Strict", "Warn"`,
    });
  return causes;
};

// The tests' fault proxy (test/cluster/fault-proxy.ts) reads these from here.
export { injected } from "./faults.js";
export { parseResourcePath, verbOf } from "./request-attributes.js";

export interface HttpDeps {
  rest: Rest;
  storage: Storage;
  registry: Registry;
  users: ReadonlyMap<string, UserInfo>;
  authorize: Authorizer;
  /** The stored RBAC policy (the rules review lists what a user holds). */
  policy: PolicyView;
  counters: RequestCounters;
  faults: FaultInjector;
  clock: () => number;
  bookmarkIntervalMs: number;
  maxBodyBytes?: number;
  logger?: pino.Logger;
}

/** A resource request once authenticated and counted. */
interface ApiRequest {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: ResourcePath;
  q: URLSearchParams;
  info: RequestInfo;
  user: UserInfo;
  watch: boolean;
}

/** A resource request once authorized and its resource found: what each verb's handler reads. */
interface TypedRequest extends ApiRequest {
  type: ResourceInfo;
  /** undefined: a cluster-wide request for a namespaced resource. */
  namespace: string | undefined;
  ctx: RequestContext;
}

/**
 * A POST or PUT body kube's typed decoding can read; what it cannot is a 400, as kube answers (decision 125). A
 * custom resource's body names its kind and apiVersion (decision 127): kube reads it as unstructured, and
 * only a built-in kind takes both from the endpoint (a Scale's body is read by rest/scale.ts).
 */
const typedBody = (
  raw: Buffer,
  body: unknown,
  type: ResourceInfo,
  version: string,
  subresource?: string,
): unknown => {
  if (isRecord(body) && !type.builtIn && subresource !== "scale") {
    if (body.kind === undefined || body.kind === null) throw missingKind(type.kind, raw);
    if (body.apiVersion === undefined || body.apiVersion === null)
      throw badRequest(
        `the API version in the data () does not match the expected API version (${type.group}/${version})`,
      );
  }
  const why = isRecord(body) ? typedDecodeProblem(type, body as KubeObject) : undefined;
  if (why)
    throw badRequest(`${type.kind} in version "${version}" cannot be handled as a ${type.kind}: ${why}`);
  return body;
};

const isJsonBody = (contentType: string | undefined): boolean => {
  const ct = mediaTypeOf(contentType);
  return ct === "application/json" || ct === "";
};

/**
 * The keys a create's, update's or patch's JSON body repeats, for the write path to report with the unknown
 * fields of the object (decision 133) — a JSON patch's as kube words them (`json patch duplicate field
 * "[0].op"`); not looked for under `fieldValidation=Ignore`, as kube does not. A server-side apply's YAML and
 * a Scale are decoded elsewhere.
 */
const findDuplicates = (ctx: RequestContext, text: string, label = "duplicate field"): void => {
  if (ctx.fieldValidation === "Ignore") return;
  const found = duplicateFields(text, STRICT_ERRORS_REPORTED);
  if (found.length > 0) ctx.duplicates = found.map((p) => `${label} "${p}"`);
};

export class HttpApi {
  private readonly serialized = new SerializedObjects();
  private readonly collections: Collections;
  private readonly watches: Watches;

  constructor(private readonly deps: HttpDeps) {
    this.collections = new Collections(deps);
    this.watches = new Watches({ ...deps, collections: this.collections, serialized: this.serialized });
  }

  /** Ends every open watch (server stop). */
  closeWatches(): void {
    this.watches.closeAll();
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
    const pathname = url.pathname.replace(/\/+$/, "") || "/";
    const method = req.method ?? "GET";
    const caller = this.authenticate(req);
    if (!caller) throw unauthorized();
    // kube's impersonation filter: after authentication, before the request is authorized.
    let user: UserInfo;
    try {
      user = impersonatedUser(req.headers, caller, this.deps.authorize);
    } catch (e) {
      if (!(e instanceof ImpersonationHeadersError)) throw e;
      send(res, 500, `Internal Server Error: ${JSON.stringify(url.pathname)}: ${e.message}\n`, [], {
        "Content-Type": "text/plain; charset=utf-8",
      });
      return;
    }
    const path = parseResourcePath(pathname);
    if (!path) {
      this.deps.counters.record({ verb: "get", resource: `nonResource:${pathname}`, user: user.username });
      this.authorized(nonResourceAttributes(user, method, pathname));
      return this.nonResource(method, pathname, res);
    }
    const q = url.searchParams;
    const watch = path.watchPath || booleanParameter(q, "watch");
    const info: RequestInfo = {
      verb: verbOf(method, path, watch),
      resource: `${path.group}/${path.resource}${path.subresource ? `/${path.subresource}` : ""}`,
      user: user.username,
    };
    this.deps.counters.record(info);
    try {
      checkIntegerParameters(info.verb, q);
      await this.admitted({ req, res, method, path, q, info, user, watch });
    } catch (e) {
      this.deps.counters.failed(info, e instanceof ApiError ? e.code : 500);
      throw e;
    }
  }

  /** The rest of `dispatch` once a resource request is counted (its errors are counted as refusals). */
  private async admitted(request: ApiRequest): Promise<void> {
    const { req, res, method, path: p, q, info, user, watch } = request;
    const latency = this.deps.faults.latencyFor(info);
    if (latency > 0) await new Promise((r) => setTimeout(r, latency));
    const fault = this.deps.faults.decide(info);
    if (fault.kind === "error") throw injected(fault.code);
    if (fault.kind === "lostReply") loseReply(res);
    // After the faults: the tests' fault proxy stands in front of a real server's authorizer the same way.
    this.authorized(resourceAttributes(user, method, p, q, watch));

    const type = this.deps.registry.find(p.group, p.version, p.resource);
    if (!type && !this.servesGroupVersion(p.group, p.version)) {
      // No API group/version at this path: kube's mux answers a plain-text 404, not a Status.
      send(res, 404, "404 page not found\n", [], { "Content-Type": "text/plain; charset=utf-8" });
      return;
    }
    if (!type) throw notFoundPath();
    if (p.namespace !== undefined && !type.namespaced) throw notFoundPath();
    if (p.subresource && !["status", "scale"].includes(p.subresource)) throw notFoundPath();
    if (p.subresource === "status" && !type.statusSubresource) throw notFoundPath();
    if (p.subresource === "scale" && !type.scale) throw notFoundPath();
    const namespace = type.namespaced ? p.namespace : "";
    const ctx: RequestContext = {
      user,
      dryRun: (q.getAll("dryRun") ?? []).includes("All"),
      warnings: [],
      ...(q.get("fieldManager") ? { fieldManager: q.get("fieldManager")! } : {}),
      ...(req.headers["user-agent"] ? { userAgent: String(req.headers["user-agent"]) } : {}),
      ...(q.get("fieldValidation") ? { fieldValidation: q.get("fieldValidation")! } : {}),
    };
    const optionCauses = writeOptionCauses(method, q, req.headers["content-type"]);
    if (optionCauses.length > 0)
      throw invalid("meta.k8s.io", OPTIONS_KIND[method] ?? "CreateOptions", "", optionCauses);
    try {
      await this.resource({ ...request, type, namespace, ctx });
    } catch (e) {
      if (e instanceof ApiError) e.warnings = ctx.warnings;
      throw e;
    }
  }

  private async resource(request: TypedRequest): Promise<void> {
    const { req, res, method, path: p, q, type, namespace, ctx } = request;
    // The answer's form first: kube refuses an Accept it cannot answer before it reads or writes anything.
    const rendering = negotiate(req.headers.accept, {
      builtIn: type.builtIn,
      collection: method === "GET" && !p.name,
    });
    if (type.createOnly) return this.review(request);
    const version = p.version;
    const rest = this.deps.rest;
    const needNamespace = (): string => {
      if (namespace === undefined) throw notFoundPath();
      return namespace;
    };
    const collection: CollectionRequest = { req, res, type, version, namespace, q, rendering };
    /** One object answered in the negotiated form (a Table, its metadata alone, or itself). */
    const answer = (code: number, o: KubeObject, warnings: readonly string[] = []): void => {
      checkTransform(rendering, type, false);
      const body =
        rendering.as === "Table"
          ? jsonText(
              tableFor(type, [o], {
                resourceVersion: o.metadata?.resourceVersion,
                include: includeOf(q),
                now: this.deps.clock(),
                version: rendering.version,
              }),
            )
          : rendering.as === "PartialObjectMetadata"
            ? jsonText(partialObjectMetadata(o, rendering.version))
            : this.serialized.of(o);
      send(res, code, body, warnings);
    };
    // Each verb reads its body before it asks for the namespace (a bad body is answered first).
    const named = (name: string): ObjectRequest => ({
      ctx,
      res: type,
      version,
      namespace: needNamespace(),
      name,
    });

    if (method === "GET" && p.name) {
      const o = await rest.getAt(type, needNamespace(), p.name, q.get("resourceVersion"));
      if (p.subresource === "scale") return send(res, 200, JSON.stringify(rest.scaleOf(type, o)));
      return answer(200, asVersion(type, version, o));
    }
    if (method === "GET") {
      if (request.watch) return this.watches.serve(collection, request.info);
      return this.collections.list(collection);
    }
    if (method === "POST" && !p.name) {
      const raw = await readBodyBytes(req, this.maxBody());
      // JSON null decodes into an empty object there (then refused for its missing name, 422).
      const decoded = decodeBody(req.headers["content-type"], raw, type) ?? {};
      const body = typedBody(raw, decoded, type, version);
      if (isJsonBody(req.headers["content-type"])) findDuplicates(ctx, raw.toString("utf8"));
      const created = await rest.create({ ctx, res: type, version, namespace: needNamespace(), body });
      return answer(201, created, ctx.warnings);
    }
    if (method === "PUT" && p.name) {
      const raw = await readBodyBytes(req, this.maxBody());
      const decoded = decodeBody(req.headers["content-type"], raw, type);
      const body = typedBody(raw, decoded, type, version, p.subresource);
      if (p.subresource !== "scale" && isJsonBody(req.headers["content-type"]))
        findDuplicates(ctx, raw.toString("utf8"));
      const updated = await rest.update({ ...named(p.name), subresource: p.subresource, body });
      return answer(200, updated, ctx.warnings);
    }
    if (method === "PATCH" && p.name) {
      const kind = patchTypeOf(req.headers["content-type"]);
      const text = await readBody(req, this.maxBody());
      const body = decodePatchBody(kind, text);
      if (kind !== "apply" && p.subresource !== "scale")
        findDuplicates(ctx, text, kind === "json" ? "json patch duplicate field" : undefined);
      const force = q.get("force") === "true";
      ctx.patch = { force, apply: kind === "apply" };
      const out = await rest.patch({ ...named(p.name), subresource: p.subresource, type: kind, body, force });
      return answer(out.created ? 201 : 200, out.object, ctx.warnings);
    }
    if (method === "DELETE" && p.name && !p.subresource) {
      const options = await this.deleteOptions(req, q, ctx);
      const out = await rest.delete({ ...named(p.name), options });
      // Gone at once: a Success Status for every kind (custom resources too, as kube-apiserver answers);
      // still there (finalizers, Foreground/Orphan): the object.
      const body = out.gone
        ? {
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Success",
            details: {
              name: p.name,
              ...(type.group ? { group: type.group } : {}),
              kind: type.plural,
              uid: out.object.metadata?.uid,
            },
          }
        : undefined;
      // A Status is answered as it is, whatever the form asked for (kube transforms no Status).
      return body ? send(res, 200, jsonText(body), ctx.warnings) : answer(200, out.object, ctx.warnings);
    }
    if (method === "DELETE" && !p.name) {
      const options = await this.deleteOptions(req, q, ctx);
      const selected = this.collections.select(type, namespace, q);
      const deleted: KubeObject[] = [];
      for (const o of selected) {
        try {
          const out = await rest.delete({
            ctx,
            res: type,
            version,
            namespace: o.metadata?.namespace ?? "",
            name: o.metadata?.name ?? "",
            options,
          });
          deleted.push(out.object);
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
      }
      const metadata = { resourceVersion: String(this.deps.storage.currentRv()) };
      return send(
        res,
        200,
        jsonText(listAnswer(type, version, metadata, deleted, rendering, q, this.deps.clock())),
        ctx.warnings,
      );
    }
    throw methodNotAllowed();
  }

  /** A review kind: POST is answered from the authorizer and the token table; nothing is stored. */
  private async review({ req, res, method, path: p, type, ctx }: TypedRequest): Promise<void> {
    if (method !== "POST" || p.name) throw methodNotAllowed();
    const body = decodeBody(req.headers["content-type"], await readBodyBytes(req, this.maxBody()), type);
    const now = this.deps.rest.now();
    const answer = answerReview(
      {
        authorize: this.deps.authorize,
        policy: this.deps.policy,
        authenticate: (token) => this.deps.users.get(token),
        now: () => now,
        apiAudiences: API_AUDIENCES,
      },
      type.kind,
      body,
      ctx.user,
    );
    // kube's field manager records the request's fields before the review answers (its status is not among them).
    const managedFields = recordUpdate(
      undefined,
      { apiVersion: answer.apiVersion, kind: answer.kind, spec: answer.spec } as KubeObject,
      ctx.fieldManager ?? managerFromUserAgent(ctx.userAgent),
      String(answer.apiVersion),
      now,
    );
    const metadata = {
      ...(answer.metadata as object),
      ...(managedFields.length > 0 ? { managedFields } : {}),
    };
    send(res, 201, jsonText({ ...answer, metadata }), ctx.warnings);
  }

  private servesGroupVersion(group: string, version: string): boolean {
    if (group === "") return version === "v1";
    return this.deps.registry.groups().some((g) => g.name === group && g.versions.includes(version));
  }

  private maxBody(): number {
    return this.deps.maxBodyBytes ?? 3 * 1024 * 1024;
  }

  /** The body's options, or the query's when there is no body; a dry run is the options' alone. */
  private async deleteOptions(
    req: IncomingMessage,
    q: URLSearchParams,
    ctx: RequestContext,
  ): Promise<DeleteOptions> {
    const options = deleteOptionsOf(await readBody(req, this.maxBody()), q);
    ctx.dryRun = options.dryRun?.includes("All") ?? false;
    return options;
  }

  private nonResource(method: string, path: string, res: ServerResponse): void {
    if (method !== "GET") throw methodNotAllowed();
    if (path === "/healthz" || path === "/readyz" || path === "/livez") {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("ok");
      return;
    }
    const body = nonResourceBody(this.deps.registry, path);
    if (body === undefined) throw notFoundPath();
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
