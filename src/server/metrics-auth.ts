/**
 * Who may scrape `/metrics` (SPEC §2.1), decided the way controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` and kube-rbac-proxy decide it: the bearer token goes to a
 * TokenReview (no token or an unknown one → 401), then the user it names, with its groups, uid and extra,
 * to a SubjectAccessReview for the request's verb on the non-resource URL it asked for (not allowed → 403).
 * Both reviews are the product's own API calls (RBAC: `create` on tokenreviews and subjectaccessreviews).
 * Answers are cached as controller-runtime caches them — a token's review for a minute, an allow for five,
 * a deny for thirty seconds — in a bounded cache keyed by the token's hash, so Prometheus's scrape every 30 s
 * costs the API server next to nothing and a stream of made-up tokens cannot grow memory. A review the API
 * server could not answer is a 500 and is not cached. Tokens never reach a log line. Local mode (no API
 * server with these reviews, listener on loopback) uses `anyoneMayScrape`.
 */
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { Clock } from "../kube/clock.js";
import { isRecord } from "../kube/object.js";
import type { Transport } from "../kube/transport.js";

/** One scrape as the authorizer sees it: the Authorization header, the method in lower case, the path. */
export interface ScrapeRequest {
  authorization: string | undefined;
  verb: string;
  path: string;
}

/** 200 (with the user, when one was authenticated), or the status and text to answer with. */
export type ScrapeVerdict = { code: 200; user?: string } | { code: 401 | 403 | 500; message: string };

export type MetricsAuthorizer = (request: ScrapeRequest) => Promise<ScrapeVerdict>;

/** Local mode: the listener is on loopback and there is no TokenReview to ask. */
export const anyoneMayScrape: MetricsAuthorizer = async () => ({ code: 200 });

/** The controller-runtime filter's TTLs. */
const METRICS_AUTH_DEFAULTS = Object.freeze({
  authenticationTtlMs: 60_000,
  allowTtlMs: 300_000,
  denyTtlMs: 30_000,
  maxEntries: 1024,
  timeoutMs: 10_000,
});

export interface DelegatedAuthorizerOptions {
  /** The product's connection to the API server; the reviews are made with its identity. */
  transport: Pick<Transport, "request">;
  clock: Clock;
  logger: Logger;
  authenticationTtlMs?: number;
  allowTtlMs?: number;
  denyTtlMs?: number;
  /** Entries per cache (authentication, authorization); the oldest goes first. */
  maxEntries?: number;
  timeoutMs?: number;
}

/**
 * The token of an `Authorization: Bearer <token>` header, as kube-apiserver's bearer token authenticator
 * reads it: the header trimmed, the scheme in any case, the token the word after one space (what follows
 * another space is ignored). Anything else is no token.
 */
export function bearerToken(header: string | undefined): string | undefined {
  const parts = (header ?? "").trim().split(" ", 3);
  if (parts.length < 2 || parts[0]!.toLowerCase() !== "bearer") return undefined;
  return parts[1] || undefined;
}

interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

type Authentication = { authenticated: true; user: UserInfo } | { authenticated: false };

const stringList = (v: unknown): string[] | undefined =>
  Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined;

/** The user of a TokenReview's status, when it says the token is valid. */
const authenticationOf = (review: unknown): Authentication => {
  const status = isRecord(review) && isRecord(review.status) ? review.status : {};
  const user = isRecord(status.user) ? status.user : {};
  if (status.authenticated !== true || typeof user.username !== "string" || user.username === "")
    return { authenticated: false };
  const groups = stringList(user.groups);
  const extra = isRecord(user.extra)
    ? Object.fromEntries(
        Object.entries(user.extra).flatMap(([k, v]) => {
          const values = stringList(v);
          return values ? [[k, values]] : [];
        }),
      )
    : undefined;
  return {
    authenticated: true,
    user: {
      username: user.username,
      ...(typeof user.uid === "string" && user.uid ? { uid: user.uid } : {}),
      ...(groups ? { groups } : {}),
      ...(extra && Object.keys(extra).length > 0 ? { extra } : {}),
    },
  };
};

/**
 * A TTL cache bounded to `maxEntries` (insertion order: the oldest is evicted first) that also shares one
 * pending lookup among concurrent callers. A lookup that throws is not cached.
 */
function ttlCache<V>(clock: Clock, maxEntries: number) {
  const entries = new Map<string, { value: V; expires: number }>();
  const pending = new Map<string, Promise<V>>();
  return (key: string, load: () => Promise<V>, ttlOf: (value: V) => number): Promise<V> => {
    const hit = entries.get(key);
    if (hit && hit.expires > clock.now()) return Promise.resolve(hit.value);
    if (hit) entries.delete(key);
    const inFlight = pending.get(key);
    if (inFlight) return inFlight;
    const loading = load().then(
      (value) => {
        pending.delete(key);
        entries.set(key, { value, expires: clock.now() + ttlOf(value) });
        while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
        return value;
      },
      (error: unknown) => {
        pending.delete(key);
        throw error;
      },
    );
    pending.set(key, loading);
    return loading;
  };
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export function delegatedMetricsAuthorizer(options: DelegatedAuthorizerOptions): MetricsAuthorizer {
  const settings = { ...METRICS_AUTH_DEFAULTS, ...options };
  const log = options.logger;
  const authentications = ttlCache<Authentication>(options.clock, settings.maxEntries);
  const decisions = ttlCache<boolean>(options.clock, settings.maxEntries);

  const review = (path: string, kind: string, apiVersion: string, spec: Record<string, unknown>) =>
    options.transport.request({
      method: "POST",
      path,
      body: { apiVersion, kind, spec },
      timeoutMs: settings.timeoutMs,
    });

  const authenticate = (token: string): Promise<Authentication> =>
    authentications(
      createHash("sha256").update(token).digest("hex"),
      async () =>
        authenticationOf(
          await review(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            "TokenReview",
            "authentication.k8s.io/v1",
            {
              token,
            },
          ),
        ),
      () => settings.authenticationTtlMs,
    );

  const authorize = (user: UserInfo, verb: string, path: string): Promise<boolean> =>
    decisions(
      JSON.stringify([user.username, user.uid, user.groups, user.extra, verb, path]),
      async () => {
        const answer = await review(
          "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          "SubjectAccessReview",
          "authorization.k8s.io/v1",
          {
            user: user.username,
            ...(user.uid ? { uid: user.uid } : {}),
            ...(user.groups ? { groups: user.groups } : {}),
            ...(user.extra ? { extra: user.extra } : {}),
            nonResourceAttributes: { path, verb },
          },
        );
        return isRecord(answer) && isRecord(answer.status) && answer.status.allowed === true;
      },
      (allowed) => (allowed ? settings.allowTtlMs : settings.denyTtlMs),
    );

  return async ({ authorization, verb, path }) => {
    const token = bearerToken(authorization);
    if (!token) return { code: 401, message: "Unauthorized" };
    let authentication: Authentication;
    try {
      authentication = await authenticate(token);
    } catch (e) {
      log.error({ err: messageOf(e) }, "metrics scrape: TokenReview failed");
      return { code: 500, message: "Authentication failed" };
    }
    if (!authentication.authenticated) {
      log.debug("metrics scrape refused: the bearer token is not valid");
      return { code: 401, message: "Unauthorized" };
    }
    const { user } = authentication;
    let allowed: boolean;
    try {
      allowed = await authorize(user, verb, path);
    } catch (e) {
      log.error({ err: messageOf(e), user: user.username }, "metrics scrape: SubjectAccessReview failed");
      return { code: 500, message: `Authorization for user ${user.username} failed` };
    }
    if (!allowed) {
      log.debug({ user: user.username, verb, path }, "metrics scrape refused: not authorized");
      return { code: 403, message: `Authorization denied for user ${user.username}` };
    }
    return { code: 200, user: user.username };
  };
}
