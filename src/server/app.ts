/**
 * The Fastify application kube-apiserver calls (SPEC §2.1): the admission endpoints (one per configuration,
 * and `-guard`'s v4 path), health, readiness and (local mode) the debug ledger. It counts its metrics but
 * never serves them: `/metrics` is on its own authorized listener (metrics-server.ts), not on the port every
 * caller may reach. It holds no admission
 * rule — every verdict comes from the `decide` function passed in — and nothing listens when it is built:
 * `serve.ts` adds TLS files, reload and shutdown; tests call `buildServer` with fakes and `app.inject`.
 */
import type { Server as HttpServer, ServerResponse } from "node:http";
import type { Server as HttpsServer, ServerOptions as HttpsServerOptions } from "node:https";
import { setImmediate as nextTurn } from "node:timers/promises";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { isRecord } from "../kube/object.js";
import { decideInSlices } from "../policies/slices.js";
import type { AdmissionRequest, Decision, Oversize, WebhookName } from "../policies/types.js";
import {
  admissionReviewResponseJsonSchema,
  decodeAdmissionReview,
  encodeAdmissionResponse,
} from "./admission-review.js";
import { type JsonBodyResult, parseCountedJson, parseJsonBody } from "./json-body.js";
import { createAdmissionMetrics } from "./metrics.js";
import {
  buildableText,
  censusInSteps,
  MAX_OBJECT_VALUES,
  MAX_OTHER_VALUES,
  oversizeOf,
} from "./review-census.js";
import { decisionBudgetMs } from "./timeout.js";

export interface Readiness {
  ready: boolean;
  reason?: string;
}

export interface ServerDeps {
  decide: (webhook: WebhookName, request: AdmissionRequest) => Decision;
  logger: Logger;
  /** Where the admission metrics are registered (the metrics listener serves it); never the global one. */
  registry: Registry;
  /** The rest of the process's readiness (caches synced); combined with certificate and shutdown state. */
  readiness: () => Readiness;
  /** Local mode only: `GET /debug/instances` answers `instances()` (the simulated instance ledger, §1.1). */
  debugRoutes?: { instances?: () => unknown };
  /** Monotonic clock in nanoseconds (process.hrtime.bigint); injectable so tests can simulate slow decisions. */
  now?: () => bigint;
}

/** What only the serving shell knows: whether a certificate is loaded and whether shutdown has begun. */
export interface ServingState {
  certificateLoaded: () => boolean;
  shuttingDown: () => boolean;
}

/** What a webhook answers when it cannot decide in time or the engine threw (SPEC §2.2 failure policies). */
export type Fallback = "allow" | "deny";

export interface BuildOptions {
  /** HTTPS options (key, cert, minVersion…). Absent: plain HTTP, for `app.inject` only. */
  https?: HttpsServerOptions;
  servingState?: ServingState;
  /**
   * Per-webhook fallback. Defaults follow each configuration's failurePolicy: `/validate` (Fail) denies, the
   * Ignore webhooks allow — answering what kube would have done had we not answered at all.
   */
  fallback?: Partial<Record<WebhookName, Fallback>>;
  /** How long a connection may sit idle before its first request (default IDLE_CONNECTION_MS). */
  idleConnectionMs?: number;
}

/**
 * A connection that says nothing is closed after this long. Node times out a request once it has begun, and
 * Fastify an idle kept-alive connection after an answer (72 s), but not a connection that never sends a byte:
 * anyone who can reach the port (decision 40) could hold thousands open. kube-apiserver sends its review as
 * soon as it has connected, and after an answer the keep-alive timeout governs instead.
 */
export const IDLE_CONNECTION_MS = 60_000;

export type WebhookApp = FastifyInstance<HttpServer | HttpsServer>;

/** Bodies up to 7 MiB are accepted (SPEC §2.1; kube-apiserver's own request limit is 3 MiB per object ×2). */
export const BODY_LIMIT_BYTES = 7 * 1024 * 1024;

/**
 * Bodies longer than this are counted before they are parsed (decision 89). A shorter one cannot hold an
 * object over the bound — every JSON value but the last of a list takes two bytes at least — and every review
 * kube sends for a real Machine is shorter.
 */
export const CENSUS_ABOVE_BYTES = 2 * MAX_OBJECT_VALUES;

/** Reviews whose objects were too large to build, by the parsed body: what `oversize` the request carries. */
const OVERSIZE = new WeakMap<object, Oversize>();

/**
 * A large body as the handler takes it (a short one goes straight to `JSON.parse`). It is first counted from
 * its bytes (review-census.ts), then parsed without its objects' managedFields; over the bound, with its
 * too-large objects emptied too, which the engine then refuses. So no review builds more than a bounded
 * number of values, and each is decided in milliseconds (SPEC §2.1).
 */
async function parseReviewBody(body: Buffer): Promise<JsonBodyResult> {
  const steps = censusInSteps(body);
  let step = steps.next();
  while (!step.done) {
    await nextTurn();
    step = steps.next();
  }
  const counted = step.value;
  if (!counted.ok) return counted;
  const { census } = counted;
  if (census.otherValues > MAX_OTHER_VALUES) {
    return {
      ok: false,
      error: `request body holds ${census.otherValues} JSON values outside request.object and request.oldObject; kube-apiserver sends a few dozen (at most ${MAX_OTHER_VALUES} are read)`,
    };
  }
  // The parse holds the event loop for up to a few tens of milliseconds at 7 MiB: a turn before it too.
  await nextTurn();
  const oversize = oversizeOf(census);
  const parsed = parseCountedJson(buildableText(body, census, oversize));
  if (oversize !== undefined && parsed.ok && isRecord(parsed.value)) OVERSIZE.set(parsed.value, oversize);
  return parsed;
}

/** The answer to an error no check named: a defect of the server's, logged at error (never a 5xx). */
export const UNEXPECTED_REQUEST_ERROR = "the request could not be processed";

/** A body the parser refused: a 400 naming the problem (the error handler words it). */
const badBody = (message: string): Error => Object.assign(new Error(message), { statusCode: 400 });

/** Where a webhook request's arrival is kept until its response closes (see `noteArrival`). */
const TRACKED = Symbol("admission request");
type TrackedResponse = ServerResponse & {
  [TRACKED]?: { path: string; arrived: bigint } | undefined;
};

/**
 * A review whose body is over CENSUS_ABOVE_BYTES (or of unknown length) is decided in slices, a turn
 * of the event loop between them, so deciding it does not hold other requests either (decision 74). Ends
 * early, undefined, once `late()` says the time budget is spent: the fallback answers then.
 */
async function decideInTurns(decideOnce: () => Decision, late: () => boolean): Promise<Decision | undefined> {
  const slices = decideInSlices(decideOnce);
  // The body's parse ended the turn this runs in: the first slice gets a turn of its own.
  await nextTurn();
  if (late()) return undefined;
  for (;;) {
    const decision = slices.next();
    if (decision !== undefined) return decision;
    await nextTurn();
    if (late()) return undefined;
  }
}

const decidesInSlices = (req: FastifyRequest): boolean =>
  !(Number(req.headers["content-length"]) <= CENSUS_ABOVE_BYTES);

const DEFAULT_FALLBACK: Readonly<Record<WebhookName, Fallback>> = {
  validate: "deny",
  "validate-guard": "allow",
  mutate: "allow",
};

/**
 * The admission paths (SPEC §2.1) and the configuration whose rules decide each. `/validate-warn` is
 * `-guard`'s path up to v4: a v4 `machine-api-migration-warn` configuration still on a cluster keeps its
 * DELETE guards instead of getting 404s (decision 190). The product's own metrics and the decision log name
 * the deciding webhook; controller-runtime's series name the path called.
 */
const ADMISSION_ROUTES: readonly { path: string; webhook: WebhookName }[] = [
  { path: "/validate", webhook: "validate" },
  { path: "/validate-guard", webhook: "validate-guard" },
  { path: "/validate-warn", webhook: "validate-guard" },
  { path: "/mutate", webhook: "mutate" },
];

/** `namespace/name` as the review names it; an object's name is read only when it is a string (a direct
 * caller may send anything there, and the line and messages built from it must not throw). */
const objectRef = (request: AdmissionRequest): string => {
  const objectName = (request.object ?? request.oldObject)?.metadata?.name;
  const name = request.name || (typeof objectName === "string" ? objectName : "");
  return request.namespace ? `${request.namespace}/${name}` : name;
};

const describeObject = (request: AdmissionRequest): string =>
  `${request.kind.kind}${request.subResource ? `/${request.subResource}` : ""} ${objectRef(request)}`;

/** The verdict a webhook gives when the engine did not produce one in time (or at all). */
function fallbackDecision(fallback: Fallback, rule: string, why: string): Decision {
  if (fallback === "allow") return { allowed: true, rule, warnings: [] };
  return {
    allowed: false,
    rule,
    status: { code: 403, reason: "Forbidden", message: why },
    warnings: [],
  };
}

interface ErrorAnswer {
  statusCode: number;
  error: string;
  /** Not one of the known client mistakes: worth an error log line. */
  unexpected?: boolean;
}

/**
 * Maps anything Fastify or a handler threw to a 4xx answer naming the problem. kube-apiserver reads a 5xx
 * as "webhook broken" and applies the failure policy, and a crafted input must never reach that: the only
 * 5xx this server gives is /readyz's 503.
 */
function describeRequestError(error: FastifyError | Error, contentType: unknown): ErrorAnswer {
  const code = (error as FastifyError).code;
  const statusCode = (error as FastifyError).statusCode;
  switch (code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { statusCode: 413, error: `request body is larger than ${BODY_LIMIT_BYTES} bytes (7 MiB)` };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        statusCode: 400,
        error: `content-type must be application/json (got ${JSON.stringify(contentType ?? "nothing")})`,
      };
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return {
        statusCode: 400,
        error: "request body is empty; expected an admission.k8s.io/v1 AdmissionReview",
      };
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return { statusCode: 400, error: "content-length does not match the request body" };
  }
  if (error instanceof SyntaxError || code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return { statusCode: 400, error: `request body is not valid JSON: ${error.message}` };
  }
  if (typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    return { statusCode, error: error.message };
  }
  return { statusCode: 400, error: UNEXPECTED_REQUEST_ERROR, unexpected: true };
}

export function buildServer(deps: ServerDeps, options: BuildOptions = {}): WebhookApp {
  const now = deps.now ?? process.hrtime.bigint;
  const servingState: ServingState = options.servingState ?? {
    certificateLoaded: () => true,
    shuttingDown: () => false,
  };
  const fallbacks = { ...DEFAULT_FALLBACK, ...options.fallback };
  const metrics = createAdmissionMetrics(
    deps.registry,
    ADMISSION_ROUTES.map((route) => route.path),
  );
  const log = deps.logger;

  const app = Fastify({
    ...(options.https ? { https: options.https } : {}),
    // Fastify's own per-request logging would double every decision line; the handler logs one line itself.
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // While draining on shutdown, a request on a kept-alive connection is still answered, not given a 503.
    return503OnClosing: false,
    // A client that trickles a request for longer than kube's 30 s maximum timeout is not kube.
    requestTimeout: 30_000,
    connectionTimeout: options.idleConnectionMs ?? IDLE_CONNECTION_MS,
  }) as unknown as WebhookApp;

  // Only JSON is accepted: any other content-type fails with 415 inside Fastify, mapped to 400 below. The
  // parser replaces Fastify's, which refuses `__proto__` keys that are data here (json-body.ts).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_req, body, done) => {
    const buffer = body as Buffer;
    if (buffer.length <= CENSUS_ABOVE_BYTES) {
      // Inline, with no promise: this runs once per review (decision 75).
      const parsed = parseJsonBody(buffer.toString());
      if (parsed.ok) done(null, parsed.value);
      else done(badBody(parsed.error), undefined);
      return;
    }
    void parseReviewBody(buffer).then(
      (parsed) => (parsed.ok ? done(null, parsed.value) : done(badBody(parsed.error), undefined)),
      (err: Error) => done(err, undefined),
    );
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const answer = describeRequestError(error, request.headers["content-type"]);
    if (answer.unexpected) {
      log.error({ err: error, url: request.url }, "unexpected error while handling a request");
    }
    void reply.code(answer.statusCode).type("application/json").send({ error: answer.error });
  });

  // When each admission request arrived, before its body was read and parsed: the time budget runs from
  // there, since kube's timeout does too. controller-runtime's webhook series count it from there until the
  // answer is sent (or the connection closes without one). The record rides on the raw response, and two
  // listeners shared by every request end it — no closure and no `once` wrapper per request (decision 75).
  const endTracking = (res: TrackedResponse, answered: boolean): void => {
    const tracked = res[TRACKED];
    if (tracked === undefined) return;
    res[TRACKED] = undefined;
    const code = answered ? res.statusCode : undefined;
    metrics.requestFinished(tracked.path, code, Number(now() - tracked.arrived) / 1e9);
  };
  // `finish`: the answer was sent; `close` alone: the connection went away first. Whichever comes first.
  const answered = function (this: TrackedResponse): void {
    endTracking(this, true);
  };
  const closed = function (this: TrackedResponse): void {
    endTracking(this, false);
  };
  const noteArrival =
    (path: string) =>
    (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      const res = reply.raw as TrackedResponse;
      res[TRACKED] = { path, arrived: now() };
      metrics.requestStarted(path);
      res.on("finish", answered);
      res.on("close", closed);
      // A request pipelined behind another waits for the connection without it: if the connection closes
      // first (the server closes it after a 400), Node never emits `close` on its response. Only then is a
      // listener added to the connection; kube does not pipeline, so a request almost never gets one.
      if (res.socket === null) req.raw.socket.once("close", () => endTracking(res, false));
      done();
    };

  const admissionHandler = (webhook: WebhookName) => {
    const fallback = fallbacks[webhook];
    // kube sends the same `timeout` on every call of a configuration: remember the last one parsed.
    let lastTimeout: unknown;
    let lastBudgetMs = decisionBudgetMs(undefined);
    const budgetOf = (req: FastifyRequest): number => {
      const timeout = (req.query as Record<string, unknown> | undefined)?.timeout;
      if (timeout !== lastTimeout) {
        lastTimeout = timeout;
        lastBudgetMs = decisionBudgetMs(timeout);
      }
      return lastBudgetMs;
    };
    const timedOut = (request: AdmissionRequest): Decision =>
      fallbackDecision(
        fallback,
        "server-timeout",
        `the admission decision on ${describeObject(request)} timed out, retry`,
      );
    /**
     * Decides (or takes what `sliced` decided: undefined when its budget ran out first), checks and times the
     * decision, and sends the answer.
     */
    const conclude = (
      reply: FastifyReply,
      request: AdmissionRequest,
      start: bigint,
      arrived: bigint,
      budgetMs: number,
      sliced?: { decision: Decision | undefined } | { error: unknown },
    ): void => {
      let decision: Decision;
      try {
        if (sliced !== undefined && "error" in sliced) throw sliced.error;
        decision =
          sliced === undefined ? deps.decide(webhook, request) : (sliced.decision ?? timedOut(request));
        // The engine is typed, but a malformed verdict must still end in a 200, never in a 5xx.
        if (typeof decision?.allowed !== "boolean" || !Array.isArray(decision.warnings)) {
          throw new Error(`engine returned a malformed decision: ${JSON.stringify(decision)?.slice(0, 200)}`);
        }
      } catch (err) {
        log.error({ err, webhook, uid: request.uid }, "admission engine failed");
        decision = fallbackDecision(
          fallback,
          "server-error",
          `the admission webhook failed to decide on ${describeObject(request)}; retry, and report it if it persists`,
        );
      }
      const end = now();
      if (Number(end - arrived) / 1e6 > budgetMs) {
        log.warn(
          { webhook, uid: request.uid, budgetMs, rule: decision.rule },
          "admission decision exceeded its time budget",
        );
        decision = timedOut(request);
      }
      finish(webhook, reply, request, decision, Number((end - start) / 1000n));
    };
    return (req: FastifyRequest, reply: FastifyReply): void => {
      const start = now();
      const arrived = (reply.raw as TrackedResponse)[TRACKED]?.arrived ?? start;
      const decoded = decodeAdmissionReview(req.body);
      if (!decoded.ok) {
        void reply.code(400).send({ error: decoded.error });
        return;
      }
      const oversize = OVERSIZE.get(req.body as object);
      const request = oversize === undefined ? decoded.request : { ...decoded.request, oversize };
      const budgetMs = budgetOf(req);
      // A request that already waited out its budget (behind a long body, or a busy event loop) is answered
      // with the fallback at once: kube has given up on it, and deciding would only delay the next one.
      if (Number(start - arrived) / 1e6 > budgetMs) {
        log.warn({ webhook, uid: request.uid, budgetMs }, "admission request waited past its time budget");
        finish(webhook, reply, request, timedOut(request), 0);
        return;
      }
      if (decidesInSlices(req)) {
        void decideInTurns(
          () => deps.decide(webhook, request),
          () => Number(now() - arrived) / 1e6 > budgetMs,
        )
          .then(
            (decision) => conclude(reply, request, start, arrived, budgetMs, { decision }),
            (error: unknown) => conclude(reply, request, start, arrived, budgetMs, { error }),
          )
          .catch((error: unknown) => answerDespite(error, webhook, reply, request));
        return;
      }
      try {
        conclude(reply, request, start, arrived, budgetMs);
      } catch (error) {
        answerDespite(error, webhook, reply, request);
      }
    };
  };

  /** Counts, logs and sends one answer; `micros` is the decision's own time. */
  const finish = (
    webhook: WebhookName,
    reply: FastifyReply,
    request: AdmissionRequest,
    decision: Decision,
    micros: number,
  ): void => {
    metrics.record(webhook, request, decision, micros / 1e6);
    // SPEC §7: refusals at info, so the default level shows what was refused and not every write allowed.
    // The line's fields are only gathered when its level is on (at the default level: denials only).
    const level = decision.allowed ? "debug" : "info";
    if (log.isLevelEnabled(level)) logDecision(level, webhook, request, decision, micros);
    void reply.code(200).send(encodeAdmissionResponse(webhook, request, decision));
  };

  /**
   * The last resort of a decision's promise: whatever threw after the engine, the review is still answered —
   * with the webhook's fallback, as for an engine failure — never left without an answer or the process with
   * an unhandled rejection.
   */
  const answerDespite = (
    error: unknown,
    webhook: WebhookName,
    reply: FastifyReply,
    request: AdmissionRequest,
  ) => {
    log.error({ err: error, webhook, uid: request.uid }, "admission answer failed");
    if (reply.sent) return;
    const decision = fallbackDecision(
      fallbacks[webhook],
      "server-error",
      "the admission webhook failed to answer; retry, and report it if it persists",
    );
    void reply.code(200).send(encodeAdmissionResponse(webhook, request, decision));
  };

  const logDecision = (
    level: "debug" | "info",
    webhook: WebhookName,
    request: AdmissionRequest,
    decision: Decision,
    micros: number,
  ): void => {
    log[level](
      {
        webhook,
        uid: request.uid,
        kind: request.kind.group ? `${request.kind.kind}.${request.kind.group}` : request.kind.kind,
        subResource: request.subResource,
        object: objectRef(request),
        operation: request.operation,
        user: request.userInfo.username,
        dryRun: request.dryRun === true ? true : undefined,
        allowed: decision.allowed,
        rule: decision.rule,
        us: micros,
      },
      "admission decision",
    );
  };

  const responseSchema = { response: { 200: admissionReviewResponseJsonSchema } };
  for (const { path, webhook } of ADMISSION_ROUTES) {
    app.post(path, { schema: responseSchema, onRequest: noteArrival(path) }, admissionHandler(webhook));
  }

  app.get("/healthz", (_req, reply) => {
    void reply.type("text/plain").send("ok");
  });

  app.get("/readyz", (_req, reply) => {
    const notReady = (reason: string): void => {
      void reply.code(503).send({ ready: false, reason });
    };
    if (servingState.shuttingDown()) return notReady("shutting down");
    if (!servingState.certificateLoaded()) return notReady("serving certificate not loaded");
    let readiness: Readiness;
    try {
      readiness = deps.readiness();
    } catch (err) {
      return notReady(`readiness check failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!readiness.ready) return notReady(readiness.reason ?? "not ready");
    void reply.send({ ready: true });
  });

  const instances = deps.debugRoutes?.instances;
  if (instances) {
    app.get("/debug/instances", (_req, reply) => {
      void reply.send(instances());
    });
  }

  return app;
}
