/**
 * SPEC §2.1: who may scrape `/metrics` in a cluster, decided as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` (and kube-rbac-proxy) decide it — a TokenReview of the bearer
 * token, then a SubjectAccessReview for `get` on the non-resource URL `/metrics` — against a fake API that
 * answers the two reviews from a table of tokens and grants. Results are cached briefly (authentication
 * 1 min, allow 5 min, deny 30 s), failures of the API are not.
 */
import { describe, expect, it } from "vitest";
import { createManualClock, type ManualClock } from "../../src/kube/clock.js";
import { ServerError, TransportError } from "../../src/kube/errors.js";
import type { KubeRequest } from "../../src/kube/transport.js";
import {
  bearerToken,
  delegatedMetricsAuthorizer,
  type MetricsAuthorizer,
  type ScrapeVerdict,
} from "../../src/server/metrics-auth.js";
import { captureLogger } from "./helpers.js";

interface Identity {
  username: string;
  uid: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

const PROMETHEUS: Identity = {
  username: "system:serviceaccount:openshift-monitoring:prometheus-k8s",
  uid: "0a6c7a2e-prometheus",
  groups: ["system:serviceaccounts", "system:serviceaccounts:openshift-monitoring", "system:authenticated"],
  extra: { "authentication.kubernetes.io/pod-name": ["prometheus-k8s-0"] },
};
const CAPA: Identity = {
  username: "system:serviceaccount:openshift-cluster-api:capa-controller-manager",
  uid: "5b1e-capa",
  groups: ["system:serviceaccounts", "system:authenticated"],
};

/**
 * The API server as far as these two reviews go: tokens it knows, the users RBAC lets `get /metrics`, and
 * every request it received. `fail` makes the next reviews throw, as a broken connection would.
 */
function fakeApi(tokens: Record<string, Identity>, mayGetMetrics: readonly string[]) {
  const requests: KubeRequest[] = [];
  let fail: { error: Error; review: "tokenreviews" | "subjectaccessreviews" | "both" } | undefined;
  const body = (req: KubeRequest) => req.body as { spec: Record<string, unknown> };
  return {
    requests,
    tokenReviews: () => requests.filter((r) => r.path.endsWith("/tokenreviews")),
    accessReviews: () => requests.filter((r) => r.path.endsWith("/subjectaccessreviews")),
    /** Makes the API fail the given review (both by default) until called with `undefined`. */
    failWith(error: Error | undefined, review: "tokenreviews" | "subjectaccessreviews" | "both" = "both") {
      fail = error ? { error, review } : undefined;
    },
    transport: {
      async request(req: KubeRequest): Promise<unknown> {
        requests.push(req);
        if (fail && (fail.review === "both" || req.path.endsWith(`/${fail.review}`))) throw fail.error;
        const spec = body(req).spec;
        if (req.method === "POST" && req.path === "/apis/authentication.k8s.io/v1/tokenreviews") {
          const user = tokens[String(spec.token)];
          return {
            apiVersion: "authentication.k8s.io/v1",
            kind: "TokenReview",
            status: user
              ? { authenticated: true, user }
              : { authenticated: false, error: "invalid bearer token" },
          };
        }
        if (req.method === "POST" && req.path === "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
          const attributes = spec.nonResourceAttributes as { path?: string; verb?: string } | undefined;
          const allowed =
            mayGetMetrics.includes(String(spec.user)) &&
            attributes?.path === "/metrics" &&
            attributes.verb === "get" &&
            spec.resourceAttributes === undefined;
          return {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            status: allowed
              ? { allowed: true, reason: "RBAC: allowed by ClusterRoleBinding" }
              : { allowed: false },
          };
        }
        throw new Error(`unexpected request ${req.method} ${req.path}`);
      },
    },
  };
}

const setup = () => {
  const api = fakeApi({ "prometheus-token": PROMETHEUS, "capa-token": CAPA }, [PROMETHEUS.username]);
  const clock: ManualClock = createManualClock();
  const { logger, lines } = captureLogger("debug");
  const authorize: MetricsAuthorizer = delegatedMetricsAuthorizer({
    transport: api.transport,
    clock,
    logger,
  });
  const scrape = (authorization?: string, verb = "get", path = "/metrics"): Promise<ScrapeVerdict> =>
    authorize({ authorization, verb, path });
  return { api, clock, scrape, lines };
};

describe("bearerToken: the Authorization header as kube-apiserver's bearer authenticator reads it", () => {
  it.each([
    ["no header", undefined, undefined],
    ["empty", "", undefined],
    ["Bearer and a token", "Bearer abc.def", "abc.def"],
    ["the scheme in any case", "bearer abc", "abc"],
    ["surrounding spaces", "  Bearer abc  ", "abc"],
    ["Basic credentials", "Basic dXNlcjpwYXNz", undefined],
    ["the scheme alone", "Bearer", undefined],
    ["the scheme and spaces", "Bearer    ", undefined],
    ["two spaces after the scheme", "Bearer  abc", undefined],
    ["words after the token (ignored, as kube-apiserver does)", "Bearer abc def", "abc"],
  ])("%s", (_what, header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe("who may scrape /metrics (SPEC §2.1: TokenReview, then SubjectAccessReview)", () => {
  const table: [string, string | undefined, ScrapeVerdict["code"]][] = [
    ["no Authorization header", undefined, 401],
    ["a Basic header", "Basic cHJvbWV0aGV1czpwYXNz", 401],
    ["a token the API server does not know", "Bearer forged-token", 401],
    ["a valid token whose user lacks get on /metrics", "Bearer capa-token", 403],
    ["a valid token whose user may get /metrics", "Bearer prometheus-token", 200],
  ];
  it.each(table)("%s → %s", async (_what, header, code) => {
    const { scrape } = setup();
    expect((await scrape(header)).code).toBe(code);
  });

  it("asks TokenReview about the token, then SubjectAccessReview about that user, groups, uid and extra for get /metrics", async () => {
    const { api, scrape } = setup();
    expect(await scrape("Bearer prometheus-token")).toEqual({ code: 200, user: PROMETHEUS.username });
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /apis/authentication.k8s.io/v1/tokenreviews",
      "POST /apis/authorization.k8s.io/v1/subjectaccessreviews",
    ]);
    expect(api.tokenReviews()[0]?.body).toEqual({
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      spec: { token: "prometheus-token" },
    });
    expect(api.accessReviews()[0]?.body).toEqual({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: PROMETHEUS.username,
        uid: PROMETHEUS.uid,
        groups: PROMETHEUS.groups,
        extra: PROMETHEUS.extra,
        nonResourceAttributes: { path: "/metrics", verb: "get" },
      },
    });
  });

  it("no token, no review: a request without a bearer token never reaches the API server", async () => {
    const { api, scrape } = setup();
    await scrape(undefined);
    await scrape("Basic x");
    expect(api.requests).toEqual([]);
  });

  it("an unauthenticated token is refused before any SubjectAccessReview", async () => {
    const { api, scrape } = setup();
    expect(await scrape("Bearer forged-token")).toEqual({ code: 401, message: "Unauthorized" });
    expect(api.accessReviews()).toEqual([]);
  });

  it("the 403 names the user, as controller-runtime's does", async () => {
    const { scrape } = setup();
    expect(await scrape("Bearer capa-token")).toEqual({
      code: 403,
      message: `Authorization denied for user ${CAPA.username}`,
    });
  });

  it("the verb is the request's method in lower case and the path is the request's", async () => {
    const { api, scrape } = setup();
    expect((await scrape("Bearer prometheus-token", "post")).code).toBe(403);
    expect(api.accessReviews()[0]?.body).toMatchObject({
      spec: { nonResourceAttributes: { path: "/metrics", verb: "post" } },
    });
  });
});

describe("caching (controller-runtime's TTLs: authentication 1 min, allow 5 min, deny 30 s)", () => {
  it("an allowed scraper is reviewed once per five minutes, not per scrape", async () => {
    const { api, clock, scrape } = setup();
    for (let i = 0; i < 10; i++) {
      expect((await scrape("Bearer prometheus-token")).code).toBe(200);
      await clock.advance(15_000);
    }
    // 150 s: the token was reviewed again after a minute, the decision is still cached.
    expect(api.tokenReviews().length).toBe(3);
    expect(api.accessReviews().length).toBe(1);
    await clock.advance(300_000);
    await scrape("Bearer prometheus-token");
    expect(api.accessReviews().length).toBe(2);
  });

  it("a denial is remembered for 30 s only, so a new RoleBinding takes effect quickly", async () => {
    const { api, clock, scrape } = setup();
    await scrape("Bearer capa-token");
    await clock.advance(29_000);
    await scrape("Bearer capa-token");
    expect(api.accessReviews().length).toBe(1);
    await clock.advance(2_000);
    await scrape("Bearer capa-token");
    expect(api.accessReviews().length).toBe(2);
  });

  it("an unknown token is remembered as unknown for a minute", async () => {
    const { api, clock, scrape } = setup();
    await scrape("Bearer forged-token");
    await scrape("Bearer forged-token");
    expect(api.tokenReviews().length).toBe(1);
    await clock.advance(61_000);
    await scrape("Bearer forged-token");
    expect(api.tokenReviews().length).toBe(2);
  });

  it("concurrent scrapes with one token share one review", async () => {
    const { api, scrape } = setup();
    const verdicts = await Promise.all([1, 2, 3].map(() => scrape("Bearer prometheus-token")));
    expect(verdicts.map((v) => v.code)).toEqual([200, 200, 200]);
    expect(api.tokenReviews().length).toBe(1);
    expect(api.accessReviews().length).toBe(1);
  });

  it("the cache is bounded: a flood of made-up tokens does not grow it without limit", async () => {
    const api = fakeApi({ "prometheus-token": PROMETHEUS }, [PROMETHEUS.username]);
    const clock = createManualClock();
    const authorize = delegatedMetricsAuthorizer({
      transport: api.transport,
      clock,
      logger: captureLogger().logger,
      maxEntries: 4,
    });
    await authorize({ authorization: "Bearer prometheus-token", verb: "get", path: "/metrics" });
    for (let i = 0; i < 20; i++)
      await authorize({ authorization: `Bearer junk-${i}`, verb: "get", path: "/metrics" });
    // The oldest entry (the real token's) was evicted: it is reviewed again.
    await authorize({ authorization: "Bearer prometheus-token", verb: "get", path: "/metrics" });
    expect(api.tokenReviews().filter((r) => JSON.stringify(r.body).includes("prometheus-token")).length).toBe(
      2,
    );
  });
});

describe("when the API server cannot answer", () => {
  it.each([
    ["a 500 from the API server", new ServerError(500, "InternalError", "etcd is down")],
    ["no answer at all", new TransportError(0, "", "connect ECONNREFUSED")],
  ])("%s: 500, and the failure is not cached", async (_what, error) => {
    const { api, scrape, lines } = setup();
    api.failWith(error);
    expect(await scrape("Bearer prometheus-token")).toEqual({ code: 500, message: "Authentication failed" });
    api.failWith(undefined);
    expect((await scrape("Bearer prometheus-token")).code).toBe(200);
    const logged = JSON.stringify(lines());
    expect(logged).toContain(error.message);
    expect(logged).not.toContain("prometheus-token");
  });

  it("a failed SubjectAccessReview is a 500 naming the user, and is not cached", async () => {
    const { api, scrape } = setup();
    api.failWith(new ServerError(503, "ServiceUnavailable", "authorizer down"), "subjectaccessreviews");
    expect(await scrape("Bearer prometheus-token")).toEqual({
      code: 500,
      message: `Authorization for user ${PROMETHEUS.username} failed`,
    });
    api.failWith(undefined);
    expect((await scrape("Bearer prometheus-token")).code).toBe(200);
    expect(api.accessReviews().length).toBe(2);
  });

  it("never logs the token", async () => {
    const { scrape, lines } = setup();
    await scrape("Bearer prometheus-token");
    await scrape("Bearer capa-token");
    await scrape("Bearer forged-token");
    const logged = JSON.stringify(lines());
    for (const token of ["prometheus-token", "capa-token", "forged-token"])
      expect(logged).not.toContain(token);
  });
});
