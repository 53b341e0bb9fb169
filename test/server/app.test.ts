/**
 * SPEC §2.1 server logic through `app.inject`: the three admission endpoints answer every well-formed review
 * with 200 and the right response shape, health, readiness, the admission metrics (served on the metrics
 * listener, never here) and the local-mode debug route, the decision log line, and the timeout/engine-failure
 * fallbacks. The engine is a fake: the server must behave the same whatever it says. The wire contract on the
 * real TLS listener — and the 400/413/404 error answers, which only a real client can send as kube does — is
 * serve.test.ts, with supertest.
 */
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import type { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Decision, WebhookName } from "../../src/policies/types.js";
import { buildServer, CENSUS_ABOVE_BYTES, type ServingState, type WebhookApp } from "../../src/server/app.js";
import { allow, deny, type FakeDeps, fakeDeps, fixture, fixtureText } from "./helpers.js";

/** The product's own metrics carry its prefix (SPEC §2.1, §7). */
const REQUESTS = "machine_api_migration_admission_requests_total";
const DURATION = "machine_api_migration_admission_duration_seconds";

const apps: WebhookApp[] = [];
const build = (deps: FakeDeps, servingState?: ServingState): WebhookApp => {
  const app = buildServer(deps, servingState ? { servingState } : {});
  apps.push(app);
  return app;
};
const app0 = () => build(fakeDeps());
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const post = (app: WebhookApp, url: string, payload: unknown, contentType = "application/json") =>
  app.inject({
    method: "POST",
    url,
    payload: typeof payload === "string" ? payload : JSON.stringify(payload),
    headers: { "content-type": contentType },
  });

const metricValue = async (
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number> => {
  const metric = await registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) =>
    Object.entries(labels).every(([k, value]) => (v.labels as Record<string, unknown>)[k] === value),
  );
  return match?.value ?? 0;
};

describe("admission endpoints (SPEC §2.1)", () => {
  it("passes the webhook name and the decoded request to decide, and answers 200 with the uid", async () => {
    const deps = fakeDeps();
    const app = build(deps);
    for (const webhook of ["validate", "validate-guard", "mutate"] as const) {
      const review = fixture("capi-machine-create");
      const res = await post(app, `/${webhook}?timeout=10s`, review);
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid: review.request.uid, allowed: true },
      });
      expect(deps.calls.at(-1)?.webhook).toBe(webhook);
      expect(deps.calls.at(-1)?.request.object).toEqual(review.request.object);
    }
  });

  it("POST /validate-warn (SPEC §2.1; -guard's v4 path) is decided by -guard: DELETE guards, Ignore's fallback", async () => {
    const denyDelete = (webhook: WebhookName): Decision =>
      webhook === "validate-guard" ? deny("in a handover", { rule: "delete-during-migration" }) : allow();
    const deps = fakeDeps(denyDelete);
    const app = build(deps);
    const review = fixture("capi-machineset-delete");
    const res = await post(app, "/validate-warn?timeout=5s", review);
    expect(res.statusCode).toBe(200);
    expect(res.json().response).toMatchObject({ uid: review.request.uid, allowed: false });
    expect(deps.calls.at(-1)?.webhook).toBe("validate-guard");
    // controller-runtime labels the series by the path called; the product's own by the configuration.
    const requests = "controller_runtime_webhook_requests_total";
    expect(await metricValue(deps.registry, requests, { webhook: "/validate-warn", code: "200" })).toBe(1);
    expect(await metricValue(deps.registry, requests, { webhook: "/validate-guard", code: "200" })).toBe(0);
    expect(
      await metricValue(deps.registry, REQUESTS, {
        webhook: "validate-guard",
        operation: "DELETE",
        allowed: "false",
        rule: "delete-during-migration",
      }),
    ).toBe(1);
    const text = await deps.registry.metrics();
    expect(text).toContain('controller_runtime_webhook_requests_in_flight{webhook="/validate-warn"} 0');
    expect(text).toContain('controller_runtime_webhook_latency_seconds_count{webhook="/validate-warn"} 1');

    // The old configuration is failurePolicy Ignore: an engine failure there allows, as on /validate-guard.
    const failing = build(
      fakeDeps(() => {
        throw new Error("boom");
      }),
    );
    const failed = await post(failing, "/validate-warn", fixture("capi-machineset-delete"));
    expect(failed.statusCode).toBe(200);
    expect(failed.json().response.allowed).toBe(true);
  });

  it("nothing listens when the app is built", async () => {
    const app = build(fakeDeps());
    await app.ready();
    expect(app.server.listening).toBe(false);
  });

  it("accepts application/json with a charset parameter", async () => {
    const res = await post(
      app0(),
      "/validate",
      fixture("capi-machine-create"),
      "application/json; charset=utf-8",
    );
    expect(res.statusCode).toBe(200);
  });

  it("mapi-frozen fixture: a denial is HTTP 200 with allowed false and the engine's Status", async () => {
    const message =
      "MAPI Machine openshift-machine-api/worker-a is not authoritative (status.authoritativeAPI=ClusterAPI): " +
      "spec.providerSpec.value.instanceType changed.";
    const app = build(fakeDeps(() => deny(message)));
    const res = await post(app, "/validate", fixtureText("mapi-machine-update-instance-type"));
    expect(res.statusCode).toBe(200);
    expect(res.json().response).toEqual({
      uid: "6d3f1c2e-8a4b-4f5e-9c0d-1b2a3c4d5e6f",
      allowed: false,
      status: { metadata: {}, status: "Failure", code: 403, reason: "Forbidden", message },
    });
  });

  it("/validate drops a patch the engine returned; /mutate sends it base64 with patchType", async () => {
    const patch: Decision["patch"] = [
      { op: "add", path: "/metadata/annotations", value: { "cluster.x-k8s.io/paused": "" } },
    ];
    const app = build(
      fakeDeps(() =>
        allow({ rule: "pause-new-capi", patch, warnings: ["paused: MAPI Machine is authoritative"] }),
      ),
    );
    const validated = (await post(app, "/validate", fixture("capi-machine-create"))).json().response;
    expect(validated).not.toHaveProperty("patch");
    expect(validated).not.toHaveProperty("patchType");
    const mutated = (await post(app, "/mutate", fixture("capi-machine-create"))).json().response;
    expect(mutated.patchType).toBe("JSONPatch");
    expect(JSON.parse(Buffer.from(mutated.patch, "base64").toString())).toEqual(patch);
    expect(mutated.warnings).toEqual(["paused: MAPI Machine is authoritative"]);
  });

  it("/mutate never patches a DELETE", async () => {
    const app = build(fakeDeps(() => allow({ patch: [{ op: "remove", path: "/metadata/labels" }] })));
    const res = await post(app, "/mutate", fixture("capi-machineset-delete"));
    expect(res.json().response).toEqual({ uid: "b7c6d5e4-f3a2-4b1c-9d0e-8f7a6b5c4d3e", allowed: true });
  });

  it("dryRun is answered like any request", async () => {
    const review = fixture("mapi-machine-update-instance-type");
    review.request.dryRun = true;
    const app = build(fakeDeps(() => deny("no")));
    const res = await post(app, "/validate", review);
    expect(res.statusCode).toBe(200);
    expect(res.json().response.allowed).toBe(false);
  });

  it("scale subresource UPDATE decodes with its Scale objects", async () => {
    const deps = fakeDeps();
    const app = build(deps);
    const res = await post(app, "/validate", fixture("mapi-machineset-scale-update"));
    expect(res.statusCode).toBe(200);
    expect(deps.calls[0]?.request).toMatchObject({ subResource: "scale", kind: { kind: "Scale" } });
  });
});

describe("an object whose name is not a string (a direct caller's crafted review)", () => {
  /** The review as kube never sends it: no request.name, and an object for the object's name. */
  const crafted = (padding: number) => {
    const review = fixture("mapi-machine-update-instance-type");
    delete (review.request as { name?: unknown }).name;
    const object = review.request.object as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    object.metadata.name = { toString: 1 };
    if (padding > 0) object.spec.pad = "x".repeat(padding);
    return review;
  };
  it.each([
    ["a small body, decided at once", 0],
    ["a body over CENSUS_ABOVE_BYTES, decided in slices", CENSUS_ABOVE_BYTES + 8192],
  ])(
    "%s: answered 200 with the engine's denial, logged, and the process keeps no rejection",
    async (_, padding) => {
      const rejections: unknown[] = [];
      const onRejection = (reason: unknown) => void rejections.push(reason);
      process.on("unhandledRejection", onRejection);
      try {
        const deps = fakeDeps(() => deny("frozen"));
        const review = crafted(padding);
        const res = await post(build(deps), "/validate?timeout=10s", review);
        expect(res.statusCode).toBe(200);
        expect(res.json().response).toMatchObject({ uid: review.request.uid, allowed: false });
        expect(deps.lines().filter((l) => l.msg === "admission decision")).toEqual([
          expect.objectContaining({ allowed: false, uid: review.request.uid }),
        ]);
        await new Promise((resolve) => setImmediate(resolve));
        expect(rejections).toEqual([]);
      } finally {
        process.off("unhandledRejection", onRejection);
      }
    },
  );
});

describe("whatever throws after the engine, the review is answered with the webhook's fallback", () => {
  it.each([
    ["a small body, decided at once", 0],
    ["a body over CENSUS_ABOVE_BYTES, decided in slices", CENSUS_ABOVE_BYTES + 8192],
  ])("%s: the decision's log line throws", async (_, padding) => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => void rejections.push(reason);
    process.on("unhandledRejection", onRejection);
    try {
      const deps = fakeDeps(() => deny("frozen"));
      deps.logger.info = () => {
        throw new Error("the log destination failed");
      };
      const review = fixture("mapi-machine-update-instance-type");
      if (padding > 0)
        (review.request.object as { spec: Record<string, unknown> }).spec.pad = "x".repeat(padding);
      const res = await post(build(deps), "/validate?timeout=10s", review);
      expect(res.statusCode).toBe(200);
      expect(res.json().response).toMatchObject({
        uid: review.request.uid,
        allowed: false,
        status: { message: expect.stringContaining("the admission webhook failed to answer; retry") },
      });
      expect(deps.lines()).toContainEqual(
        expect.objectContaining({ msg: "admission answer failed", uid: review.request.uid }),
      );
      await new Promise((resolve) => setImmediate(resolve));
      expect(rejections).toEqual([]);
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });
});

describe("fallbacks: timeout budget and engine failures (SPEC §2.1, §2.2 failure policies)", () => {
  const ns = (ms: number): bigint => BigInt(Math.round(ms * 1e6));
  /**
   * A fake clock and engine: the request "waits" `waitMs` between its arrival and the handler (reading its
   * body, or behind a busy event loop), and the decision "takes" `decisionMs`.
   */
  const clocked = (waitMs: number, decisionMs: number) => {
    let t = 0n;
    let readings = 0;
    const deps = fakeDeps(
      () => {
        t += ns(decisionMs);
        return allow({ patch: [{ op: "add", path: "/x", value: 1 }] });
      },
      {
        now: () => {
          if (readings++ === 1) t += ns(waitMs); // the handler's first reading, after the arrival's
          return t;
        },
      },
    );
    return deps;
  };

  const expectations: Array<[WebhookName, string, number, boolean, string]> = [
    ["validate", "5s", 4_600, false, "server-timeout"],
    ["validate", "5s", 4_400, true, "none"],
    ["validate", "", 9_600, false, "server-timeout"],
    ["validate", "", 9_400, true, "none"],
    ["validate-guard", "2s", 1_700, true, "server-timeout"],
    ["mutate", "2s", 1_700, true, "server-timeout"],
  ];
  it.each(expectations)(
    "/%s with timeout=%j and a decision taking %d ms → allowed %s (rule %s)",
    async (webhook, timeout, tookMs, allowed, rule) => {
      const deps = clocked(0, tookMs);
      const app = build(deps);
      const query = timeout ? `?timeout=${timeout}` : "";
      const res = await post(app, `/${webhook}${query}`, fixture("capi-machine-create"));
      expect(res.statusCode).toBe(200);
      const response = res.json().response;
      expect(response.allowed).toBe(allowed);
      expect(deps.lines().find((l) => l.msg === "admission decision")?.rule).toBe(rule);
      if (rule === "server-timeout") {
        expect(response).not.toHaveProperty("patch");
        if (!allowed)
          expect(response.status.message).toBe(
            "the admission decision on Machine openshift-cluster-api/worker-a timed out, retry",
          );
      }
    },
  );

  it.each<[WebhookName, string, number, number, boolean, string, number]>([
    ["validate", "5s", 4_600, 0, false, "server-timeout", 0],
    ["validate", "5s", 3_000, 1_000, true, "none", 1],
    ["validate", "5s", 3_000, 1_600, false, "server-timeout", 1],
    ["validate-guard", "2s", 1_700, 0, true, "server-timeout", 0],
  ])(
    "/%s with timeout=%j, a request that waited %d ms and a decision taking %d ms → allowed %s (rule %s), %d decisions",
    async (webhook, timeout, waitMs, decisionMs, allowed, rule, decisions) => {
      // The budget runs from the request's arrival: one that waited it out is not decided at all.
      const deps = clocked(waitMs, decisionMs);
      const app = build(deps);
      const res = await post(app, `/${webhook}?timeout=${timeout}`, fixture("capi-machine-create"));
      expect(res.statusCode).toBe(200);
      expect(res.json().response.allowed).toBe(allowed);
      expect(deps.lines().find((l) => l.msg === "admission decision")?.rule).toBe(rule);
      expect(deps.calls).toHaveLength(decisions);
      if (decisions === 0)
        expect(deps.lines().some((l) => l.msg === "admission request waited past its time budget")).toBe(
          true,
        );
    },
  );

  it.each([
    ["undefined", undefined],
    ["an object without allowed", { rule: "x", warnings: [] }],
    ["warnings missing", { allowed: true, rule: "x" }],
  ])("an engine answering %s is treated as a failure: HTTP 200 with the fallback", async (_what, answer) => {
    const deps = fakeDeps(() => answer as unknown as Decision);
    const app = build(deps);
    const res = await post(app, "/validate", fixture("capi-machine-create"));
    expect(res.statusCode).toBe(200);
    expect(res.json().response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(deps.lines().some((l) => l.msg === "admission engine failed")).toBe(true);
  });

  it.each([
    ["validate", false],
    ["validate-guard", true],
    ["mutate", true],
  ] as const)(
    "an engine that throws on /%s gives HTTP 200, allowed %s, and logs the error",
    async (webhook, allowed) => {
      const deps = fakeDeps(() => {
        throw new Error("boom");
      });
      const app = build(deps);
      const res = await post(app, `/${webhook}`, fixture("mapi-machine-update-instance-type"));
      expect(res.statusCode).toBe(200);
      expect(res.json().response.allowed).toBe(allowed);
      if (!allowed)
        expect(res.json().response.status.message).toMatch(
          /failed to decide on Machine openshift-machine-api\/worker-a; retry/,
        );
      expect(deps.lines().some((l) => l.msg === "admission engine failed" && l.level === 50)).toBe(true);
    },
  );
});

describe("decision log and metrics (SPEC §2.1)", () => {
  it("logs one line per decision with uid, kind, ns/name, operation, user, allowed, rule and µs — never the object", async () => {
    const deps = fakeDeps(() => deny("frozen", { rule: "mapi-frozen" }), {
      now: (() => {
        let t = 0n;
        return () => (t += 1_234_000n);
      })(),
    });
    const app = build(deps);
    await post(app, "/validate", fixture("mapi-machine-update-instance-type"));
    const decisions = deps.lines().filter((l) => l.msg === "admission decision");
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({
      level: 30,
      webhook: "validate",
      uid: "6d3f1c2e-8a4b-4f5e-9c0d-1b2a3c4d5e6f",
      kind: "Machine.machine.openshift.io",
      object: "openshift-machine-api/worker-a",
      operation: "UPDATE",
      user: "kube:admin",
      allowed: false,
      rule: "mapi-frozen",
      us: 1234,
    });
    expect(JSON.stringify(deps.lines())).not.toContain("m6i.2xlarge");
  });

  it("counts machine_api_migration_admission_requests_total by webhook, kind, operation, allowed, rule and observes the duration", async () => {
    const deps = fakeDeps((webhook) =>
      webhook === "validate" ? deny("no", { rule: "mapi-frozen" }) : allow(),
    );
    const app = build(deps);
    await post(app, "/validate", fixture("mapi-machine-update-instance-type"));
    await post(app, "/validate", fixture("mapi-machine-update-instance-type"));
    await post(app, "/validate-guard", fixture("capi-machineset-delete"));
    const labels = {
      webhook: "validate",
      kind: "Machine.machine.openshift.io",
      operation: "UPDATE",
      allowed: "false",
      rule: "mapi-frozen",
    };
    expect(await metricValue(deps.registry, REQUESTS, labels)).toBe(2);
    expect(
      await metricValue(deps.registry, REQUESTS, {
        webhook: "validate-guard",
        kind: "MachineSet.cluster.x-k8s.io",
        operation: "DELETE",
        allowed: "true",
        rule: "none",
      }),
    ).toBe(1);
    const text = await deps.registry.metrics();
    expect(text).toContain(`${DURATION}_count{webhook="validate"} 2`);
    expect(text).toContain(`${DURATION}_bucket{le="0.0001",webhook="validate"}`);
  });

  it("machine_api_migration_admission_duration_seconds puts a 1.234 ms decision in the 2.5 ms bucket, not the 1 ms one", async () => {
    let t = 0n;
    const deps = fakeDeps(undefined, { now: () => (t += 1_234_000n) });
    const app = build(deps);
    await post(app, "/mutate", fixture("capi-machine-create"));
    const text = await deps.registry.metrics();
    expect(text).toContain(`${DURATION}_bucket{le="0.001",webhook="mutate"} 0`);
    expect(text).toContain(`${DURATION}_bucket{le="0.0025",webhook="mutate"} 1`);
    expect(text).toContain(`${DURATION}_bucket{le="+Inf",webhook="mutate"} 1`);
    expect(text).toContain(`${DURATION}_sum{webhook="mutate"} 0.001234`);
    expect(text).toContain(`${DURATION}_count{webhook="validate"} 0`);
  });

  it("counts controller-runtime's webhook series by path and HTTP code, with nothing left in flight (SPEC §7)", async () => {
    const deps = fakeDeps();
    const app = build(deps);
    await post(app, "/validate", fixture("capi-machine-create"));
    await post(app, "/validate", fixture("capi-machine-create"));
    await post(app, "/mutate", "{not json");
    await post(app, "/validate-guard", fixture("capi-machine-create"), "text/plain");
    const requests = "controller_runtime_webhook_requests_total";
    expect(await metricValue(deps.registry, requests, { webhook: "/validate", code: "200" })).toBe(2);
    expect(await metricValue(deps.registry, requests, { webhook: "/mutate", code: "400" })).toBe(1);
    expect(await metricValue(deps.registry, requests, { webhook: "/validate-guard", code: "400" })).toBe(1);
    const text = await deps.registry.metrics();
    expect(text).toContain("# TYPE controller_runtime_webhook_requests_in_flight gauge");
    expect(text).toContain('controller_runtime_webhook_requests_in_flight{webhook="/validate"} 0');
    expect(text).toContain("# TYPE controller_runtime_webhook_latency_seconds histogram");
    expect(text).toContain('controller_runtime_webhook_latency_seconds_count{webhook="/validate"} 2');
    expect(text).toContain(
      'controller_runtime_webhook_latency_seconds_bucket{le="+Inf",webhook="/mutate"} 1',
    );
  });

  it("controller_runtime_webhook_requests_in_flight counts a review while it is being decided", async () => {
    const inFlight = "controller_runtime_webhook_requests_in_flight";
    let during: Promise<number> | undefined;
    const deps: FakeDeps = fakeDeps(() => {
      during = metricValue(deps.registry, inFlight, { webhook: "/validate" });
      return allow();
    });
    await post(build(deps), "/validate", fixture("capi-machine-create"));
    expect(await during).toBe(1);
    expect(await metricValue(deps.registry, inFlight, { webhook: "/validate" })).toBe(0);
  });

  it("requests pipelined behind a malformed one, never answered when the server closes the connection, leave nothing in flight", async () => {
    const inFlight = "controller_runtime_webhook_requests_in_flight";
    const deps = fakeDeps();
    const app = build(deps);
    await app.listen({ host: "127.0.0.1", port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const request = (path: string, body: string) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const review = fixtureText("capi-machine-create");
    const socket = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    const closed = new Promise((resolve) => socket.on("close", resolve));
    socket.write(
      request("/validate", "{bad") + request("/mutate", review) + request("/validate-guard", review),
    );
    await closed;
    expect(Buffer.concat(received).toString()).toMatch(/^HTTP\/1\.1 400 /);
    await vi.waitFor(async () => {
      for (const webhook of ["/validate", "/mutate", "/validate-guard"])
        expect(await metricValue(deps.registry, inFlight, { webhook }), webhook).toBe(0);
    });
  });

  it("a connection that sends nothing is closed once idle for the connection timeout; one that asks is answered", async () => {
    const app = buildServer(fakeDeps(), { idleConnectionMs: 300 });
    apps.push(app);
    await app.listen({ host: "127.0.0.1", port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const silent = connect(port, "127.0.0.1");
    const closed = new Promise((resolve) => silent.on("close", resolve));
    // Without a connection timeout it stays open for ever: give up long after the 300 ms.
    await Promise.race([
      closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error("still open after 10 s")), 10_000)),
    ]);
    const asking = connect(port, "127.0.0.1");
    const body = fixtureText("capi-machine-create");
    asking.write(
      `POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const answer = await new Promise<string>((resolve) =>
      asking.once("data", (d: Buffer) => resolve(d.toString())),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    asking.destroy();
  });

  it("kinds outside the product's are counted as kind=other (bounded label values)", async () => {
    const deps = fakeDeps();
    const app = build(deps);
    const review = fixture("capi-machine-create");
    review.request.kind = { group: "evil.example.com", version: "v1", kind: `K${Math.random()}` };
    await post(app, "/validate", review);
    expect(await metricValue(deps.registry, REQUESTS, { kind: "other" })).toBe(1);
  });
});

describe("health, readiness, metrics, debug (SPEC §2.1)", () => {
  it("/healthz answers while the process lives, whatever readiness says", async () => {
    const app = build(
      fakeDeps(undefined, { readiness: () => ({ ready: false, reason: "caches not synced" }) }),
    );
    const res = await app.inject({ method: "GET", url: "/healthz" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe("ok");
  });

  const readiness: Array<
    [
      string,
      boolean,
      boolean,
      { ready: boolean; reason?: string } | (() => never),
      number,
      string | undefined,
    ]
  > = [
    ["all good", true, false, { ready: true }, 200, undefined],
    [
      "caches not synced",
      true,
      false,
      { ready: false, reason: "caches not synced: machines" },
      503,
      "caches not synced: machines",
    ],
    ["no reason given", true, false, { ready: false }, 503, "not ready"],
    ["certificate not loaded", false, false, { ready: true }, 503, "serving certificate not loaded"],
    ["shutting down", true, true, { ready: true }, 503, "shutting down"],
    [
      "readiness check throws",
      true,
      false,
      () => {
        throw new Error("cache gone");
      },
      503,
      "readiness check failed: cache gone",
    ],
  ];
  it.each(readiness)("/readyz: %s", async (_what, certificateLoaded, shuttingDown, ready, code, reason) => {
    const app = build(fakeDeps(undefined, { readiness: typeof ready === "function" ? ready : () => ready }), {
      certificateLoaded: () => certificateLoaded,
      shuttingDown: () => shuttingDown,
    });
    const res = await app.inject({ method: "GET", url: "/readyz" });
    expect(res.statusCode).toBe(code);
    expect(res.json()).toEqual(reason === undefined ? { ready: true } : { ready: false, reason });
  });

  it("the webhook port has no /metrics: metrics are served on their own authorized listener (SPEC §2.1)", async () => {
    const deps = fakeDeps();
    const app = build(deps);
    await post(app, "/validate", fixture("capi-machine-create"));
    for (const method of ["GET", "HEAD"] as const) {
      const res = await app.inject({ method, url: "/metrics" });
      expect(res.statusCode, method).toBe(404);
      expect(res.body, method).not.toContain(REQUESTS);
    }
    // The series exist all the same, on the registry the metrics listener serves.
    expect(await deps.registry.metrics()).toContain(`# TYPE ${REQUESTS} counter`);
    expect(await deps.registry.metrics()).toContain(`# TYPE ${DURATION} histogram`);
  });

  it("/debug/instances exists only when local mode passes the ledger", async () => {
    const ledger = [{ instanceId: "i-0abc", machine: "worker-a", state: "running" }];
    const local = build(fakeDeps(undefined, { debugRoutes: { instances: () => ledger } }));
    const res = await local.inject({ method: "GET", url: "/debug/instances" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(ledger);
    const cluster = build(fakeDeps());
    expect((await cluster.inject({ method: "GET", url: "/debug/instances" })).statusCode).toBe(404);
  });

  it("two servers in one process keep separate registries (never the global one)", async () => {
    const a = fakeDeps();
    const b = fakeDeps();
    const appA = build(a);
    build(b);
    await post(appA, "/validate", fixture("capi-machine-create"));
    expect(await metricValue(a.registry, REQUESTS, { webhook: "validate" })).toBe(1);
    expect(await metricValue(b.registry, REQUESTS, { webhook: "validate" })).toBe(0);
  });
});
