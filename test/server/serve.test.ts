/**
 * SPEC §2.1 / §7 / §9 on a real HTTPS listener, started as the product starts it (`startWebhookServer`) and
 * called with supertest over a new TLS connection per request: the wire contract of every endpoint
 * (admission answers, health, readiness, no /metrics here, and the 400/413/404 error answers naming the
 * problem); the test CA verifies the serving certificate, TLS ≥ 1.2 and HTTP/1.1 only; the certificate is
 * swapped on disk while a client keeps making new connections (new handshakes present the new certificate,
 * no request fails); an invalid pair keeps the old one; a server
 * started before its certificate exists becomes ready when it appears; graceful shutdown keeps serving
 * through the delay, then stops accepting and drains the request still in flight.
 */
import { X509Certificate } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AgentOptions, get as httpsGet } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import supertest from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Decision } from "../../src/policies/types.js";
import { BODY_LIMIT_BYTES } from "../../src/server/app.js";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  issueServingCertificate,
  type KeyPair,
} from "../../src/server/certs.js";
import { startWebhookServer, unspecifiedAddress, type WebhookServer } from "../../src/server/serve.js";
import { checkCertificatePair } from "../../src/server/tls-reload.js";
import {
  allow,
  deny,
  type FakeDeps,
  fakeDeps,
  fixture,
  fixtureText,
  overTls,
  type Review,
} from "./helpers.js";

let ca: CertificateAuthority;
let first: KeyPair;
let second: KeyPair;
let dir: string;
const fingerprint = (pair: KeyPair) => new X509Certificate(pair.certPem).fingerprint256;

beforeAll(() => {
  // Generating keys costs ~0.5 s each: once per file.
  ca = createCertificateAuthority("server test CA");
  first = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
  second = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
  dir = mkdtempSync(join(tmpdir(), "webhook-serve-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const servers: WebhookServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

let fileCounter = 0;
/** A fresh cert/key file pair per test, so watchers of different tests never see each other's writes. */
const certFiles = (pair?: KeyPair) => {
  const sub = join(dir, `t${fileCounter++}`);
  const certFile = join(sub, "tls.crt");
  const keyFile = join(sub, "tls.key");
  rmSync(sub, { recursive: true, force: true });
  mkdirSync(sub, { recursive: true });
  if (pair) write(certFile, keyFile, pair);
  return { certFile, keyFile };
};
const write = (certFile: string, keyFile: string, pair: KeyPair) => {
  writeFileSync(certFile, pair.certPem);
  writeFileSync(keyFile, pair.keyPem);
};

const start = async (deps: FakeDeps, files: { certFile: string; keyFile: string }, shutdownDelayMs = 0) => {
  const server = await startWebhookServer({
    host: "127.0.0.1",
    port: 0,
    ...files,
    shutdownDelayMs,
    deps,
    certificatePollIntervalMs: 200,
    certificateDebounceMs: 20,
  });
  servers.push(server);
  return server;
};

/** supertest to the real listener, one new connection (a new TLS handshake) per request, trusting only the test CA. */
const client = (server: WebhookServer, tls: AgentOptions = {}) => overTls(server.url, ca.certPem, tls);

/**
 * What a client gets when the server refuses the handshake: the server's TLS alert (40 handshake_failure: no
 * cipher suite in common; 70 protocol_version), never a refused connection or an HTTP answer.
 */
const HANDSHAKE_REFUSED = { code: "EPROTO", message: expect.stringContaining("SSL alert number 40") };
const VERSION_REFUSED = { code: "EPROTO", message: expect.stringContaining("SSL alert number 70") };

const waitFor = async (
  what: string,
  condition: () => Promise<boolean> | boolean,
  attempts = 500,
): Promise<void> => {
  for (let i = 0; i < attempts; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
};

const REVIEW_V1 = { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" } as const;

describe("HTTPS contract (SPEC §2.1)", () => {
  it("answers the mapi-frozen fixture over HTTPS verified by the test CA, TLS ≥ 1.2, HTTP/1.1", async () => {
    const message = "MAPI Machine openshift-machine-api/worker-a is not authoritative";
    const deps = fakeDeps(() => deny(message));
    const server = await start(deps, certFiles(first));
    const c = client(server, { ALPNProtocols: ["h2", "http/1.1"] });
    const res = await c
      .post("/validate?timeout=10s", fixtureText("mapi-machine-update-instance-type"))
      .expect(200)
      .expect("content-type", /^application\/json/);
    expect(res.body).toEqual({
      ...REVIEW_V1,
      response: {
        uid: "6d3f1c2e-8a4b-4f5e-9c0d-1b2a3c4d5e6f",
        allowed: false,
        status: { metadata: {}, status: "Failure", code: 403, reason: "Forbidden", message },
      },
    });
    expect(deps.calls.map((call) => call.webhook)).toEqual(["validate"]);
    const handshake = c.handshake();
    expect(handshake?.fingerprint256).toBe(fingerprint(first));
    expect(["TLSv1.2", "TLSv1.3"]).toContain(handshake?.protocol);
    expect(handshake?.alpn).toBe("http/1.1");
  });

  it("refuses a client limited to TLS 1.1", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    await expect(
      client(server, { minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0" }).get(
        "/healthz",
      ),
    ).rejects.toMatchObject(VERSION_REFUSED);
    const tls12 = client(server, { maxVersion: "TLSv1.2" });
    await tls12.get("/healthz").expect(200, "ok");
    expect(tls12.handshake()?.protocol).toBe("TLSv1.2");
  });

  it("/validate-guard and /mutate answer with the review's uid; only /mutate carries the engine's patch, base64 with patchType", async () => {
    const patch: Decision["patch"] = [
      { op: "add", path: "/metadata/annotations", value: { "cluster.x-k8s.io/paused": "" } },
    ];
    const warnings = ["paused: MAPI Machine is authoritative"];
    const deps = fakeDeps(() => allow({ rule: "pause-new-capi", patch, warnings }));
    const server = await start(deps, certFiles(first));
    const c = client(server);
    const review = fixture("capi-machine-create");
    const uid = review.request.uid;
    for (const webhook of ["validate", "validate-guard"]) {
      const res = await c.post(`/${webhook}?timeout=10s`, JSON.stringify(review)).expect(200);
      expect(res.body, webhook).toEqual({ ...REVIEW_V1, response: { uid, allowed: true, warnings } });
    }
    const mutated = await c
      .post("/mutate?timeout=10s", JSON.stringify(review))
      .expect(200)
      .expect("content-type", /^application\/json/);
    expect(mutated.body).toEqual({
      ...REVIEW_V1,
      response: {
        uid,
        allowed: true,
        warnings,
        patchType: "JSONPatch",
        patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
      },
    });
    expect(deps.calls.map((call) => [call.webhook, call.request.uid])).toEqual([
      ["validate", uid],
      ["validate-guard", uid],
      ["mutate", uid],
    ]);
    expect(deps.calls[2]?.request.object).toEqual(review.request.object);
  });

  it("/mutate never patches a DELETE", async () => {
    const deps = fakeDeps(() => allow({ patch: [{ op: "remove", path: "/metadata/labels" }] }));
    const server = await start(deps, certFiles(first));
    await client(server)
      .post("/mutate", fixtureText("capi-machineset-delete"))
      .expect(200, {
        ...REVIEW_V1,
        response: { uid: "b7c6d5e4-f3a2-4b1c-9d0e-8f7a6b5c4d3e", allowed: true },
      });
  });

  it("/healthz answers ok whatever readiness says; /readyz says why it is not ready, then that it is", async () => {
    let ready = false;
    const server = await start(
      fakeDeps(undefined, {
        readiness: () => (ready ? { ready: true } : { ready: false, reason: "caches not synced: machines" }),
      }),
      certFiles(first),
    );
    const c = client(server);
    await c
      .get("/healthz")
      .expect(200, "ok")
      .expect("content-type", /^text\/plain/);
    await c.get("/readyz").expect(503, { ready: false, reason: "caches not synced: machines" });
    ready = true;
    await c.get("/readyz").expect(200, { ready: true });
    await c.get("/healthz").expect(200, "ok");
  });

  it("the webhook port has no /metrics (they are on their own authorized listener) and no debug ledger outside local mode", async () => {
    const deps = fakeDeps();
    const server = await start(deps, certFiles(first));
    const c = client(server);
    await c.post("/validate", fixtureText("capi-machine-create")).expect(200);
    const metrics = await c.get("/metrics").expect(404);
    expect(metrics.text).not.toContain("machine_api_migration_admission_requests_total");
    await c.head("/metrics").expect(404);
    await c.get("/debug/instances").expect(404);
    // The series exist all the same, on the registry the metrics listener serves.
    expect(await deps.registry.metrics()).toContain(
      'machine_api_migration_admission_requests_total{webhook="validate"',
    );
  });
});

describe("error answers on the TLS listener (SPEC §2.1): a JSON error naming the problem, never a 5xx", () => {
  const valid = (): Review => fixture("capi-machine-create");
  // Fastify's 415 for a content-type other than JSON is answered 400, as SPEC §2.1 asks.
  const malformed: Array<[string, string, string, RegExp]> = [
    ["not JSON", "{not json", "application/json", /^request body is not valid JSON/],
    [
      "empty body",
      "",
      "application/json",
      /^request body is empty; expected an admission.k8s.io\/v1 AdmissionReview$/,
    ],
    ["a JSON array", "[]", "application/json", /body must be a JSON object/],
    [
      "v1beta1 review",
      JSON.stringify({ ...valid(), apiVersion: "admission.k8s.io/v1beta1" }),
      "application/json",
      /apiVersion: must be "admission.k8s.io\/v1"/,
    ],
    [
      "wrong kind",
      JSON.stringify({ ...valid(), kind: "Pod" }),
      "application/json",
      /kind: must be "AdmissionReview"/,
    ],
    [
      "missing uid",
      JSON.stringify({ ...valid(), request: { ...valid().request, uid: undefined } }),
      "application/json",
      /request\.uid: is required/,
    ],
    [
      // A prototype key is data; this review is refused for what it lacks, as it would be without the key.
      "a review that is only a __proto__ key",
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"__proto__":{"uid":"x"}}}',
      "application/json",
      /request\.uid: is required/,
    ],
    [
      "text/plain content-type",
      JSON.stringify(valid()),
      "text/plain",
      /^content-type must be application\/json \(got "text\/plain"\)$/,
    ],
    [
      "yaml content-type",
      "apiVersion: v1",
      "application/yaml",
      /^content-type must be application\/json \(got "application\/yaml"\)$/,
    ],
    [
      "no content-type",
      JSON.stringify(valid()),
      "",
      /^content-type must be application\/json \(got "nothing"\)$/,
    ],
  ];

  let server: WebhookServer;
  let deps: FakeDeps;
  beforeAll(async () => {
    deps = fakeDeps();
    server = await startWebhookServer({
      host: "127.0.0.1",
      port: 0,
      ...certFiles(first),
      shutdownDelayMs: 0,
      deps,
    });
  });
  afterAll(() => server.close());

  it.each(malformed)("%s: 400", async (_what, body, contentType, expected) => {
    const before = deps.calls.length;
    const res = await client(server)
      .post("/validate?timeout=10s", body, contentType)
      .expect(400)
      .expect("content-type", /^application\/json/);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(expected);
    expect(deps.calls.length).toBe(before);
  });

  it("a body just under 7 MiB is accepted; one over it gets 413", async () => {
    const before = deps.calls.length;
    const review = valid() as unknown as { request: { object: { metadata: Record<string, unknown> } } };
    const base = JSON.stringify(review).length;
    review.request.object.metadata.annotations = { big: "x".repeat(BODY_LIMIT_BYTES - base - 100) };
    const fits = JSON.stringify(review);
    expect(fits.length).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    const accepted = await client(server).post("/validate", fits).expect(200);
    expect(accepted.body.response).toEqual({ uid: valid().request.uid, allowed: true });
    review.request.object.metadata.annotations = { big: "x".repeat(BODY_LIMIT_BYTES) };
    await client(server)
      .post("/validate", JSON.stringify(review))
      .expect(413, { error: "request body is larger than 7340032 bytes (7 MiB)" });
    expect(deps.calls.length).toBe(before + 1);
  });

  it("unknown paths and methods are 404, not 5xx", async () => {
    const before = deps.calls.length;
    const c = client(server);
    const json = (test: supertest.Test) =>
      test.agent(c.agent).set("content-type", "application/json").send("{}");
    const answers = [
      ["GET", "/validate", supertest(server.url).get("/validate").agent(c.agent)],
      ["GET", "/mutate", supertest(server.url).get("/mutate").agent(c.agent)],
      ["PUT", "/validate", json(supertest(server.url).put("/validate"))],
      ["POST", "/nope", json(supertest(server.url).post("/nope"))],
      ["POST", "/healthz", json(supertest(server.url).post("/healthz"))],
    ] as const;
    for (const [method, path, test] of answers) {
      const res = await test;
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body, `${method} ${path}`).toEqual({
        statusCode: 404,
        error: "Not Found",
        message: `Route ${method}:${path} not found`,
      });
    }
    expect(deps.calls.length).toBe(before);
  });
});

describe("TLS security profile (SPEC §2.1, issue 20)", () => {
  /** The cipher suite a new handshake negotiated for GET /healthz (which must answer ok over it). */
  const cipherOf = async (server: WebhookServer, tls: AgentOptions): Promise<string | undefined> => {
    const c = client(server, tls);
    await c.get("/healthz").expect(200, "ok");
    return c.handshake()?.cipher;
  };

  it("Intermediate by default: a static-RSA suite (AES128-SHA) and a CBC one are refused; ECDHE AEAD and TLS 1.3 are served", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    for (const ciphers of [
      "AES128-SHA",
      "AES256-GCM-SHA384",
      "ECDHE-RSA-AES128-SHA",
      "DHE-RSA-AES128-GCM-SHA256",
    ])
      await expect(cipherOf(server, { maxVersion: "TLSv1.2", ciphers }), ciphers).rejects.toMatchObject(
        HANDSHAKE_REFUSED,
      );
    expect(await cipherOf(server, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" })).toBe(
      "ECDHE-RSA-AES128-GCM-SHA256",
    );
    expect(await cipherOf(server, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-CHACHA20-POLY1305" })).toBe(
      "ECDHE-RSA-CHACHA20-POLY1305",
    );
    expect(await cipherOf(server, { minVersion: "TLSv1.3" })).toMatch(/^TLS_/);
  });

  it("a profile change applies to the next handshakes without a restart", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    const tls12 = { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES256-GCM-SHA384" } as const;
    expect(await cipherOf(server, tls12)).toBe("ECDHE-RSA-AES256-GCM-SHA384");
    server.setTlsProfile({ type: "Modern" });
    await expect(cipherOf(server, tls12)).rejects.toMatchObject(VERSION_REFUSED);
    expect(await cipherOf(server, { minVersion: "TLSv1.3" })).toMatch(/^TLS_/);
    server.setTlsProfile({
      type: "Custom",
      custom: { ciphers: ["ECDHE-RSA-AES256-GCM-SHA384"], minTLSVersion: "VersionTLS12" },
    });
    expect(await cipherOf(server, tls12)).toBe("ECDHE-RSA-AES256-GCM-SHA384");
    await expect(
      cipherOf(server, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" }),
    ).rejects.toMatchObject(HANDSHAKE_REFUSED);
    server.setTlsProfile(undefined);
    expect(await cipherOf(server, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" })).toBe(
      "ECDHE-RSA-AES128-GCM-SHA256",
    );
  });
});

describe("certificate reload without restart (SPEC §2.1, §9)", () => {
  it("new handshakes present the new certificate after the files change; no request fails meanwhile", async () => {
    const files = certFiles(first);
    const deps = fakeDeps();
    const server = await start(deps, files);
    const seen: string[] = [];
    const failures: unknown[] = [];
    let stop = false;
    const c = client(server);
    const loop = (async () => {
      while (!stop) {
        try {
          const res = await c.post("/validate", fixtureText("capi-machine-create"));
          if (res.status !== 200) failures.push(res.status);
          seen.push(c.handshake()?.fingerprint256 ?? "no handshake");
        } catch (err) {
          failures.push(err);
        }
      }
    })();
    await waitFor("a few requests with the first certificate", () => seen.length >= 5);
    // Written one file after the other, as a plain `cp` would: for a moment the pair does not match.
    write(files.certFile, files.keyFile, second);
    await waitFor("the new certificate on a new handshake", () => seen.at(-1) === fingerprint(second));
    const switchedAt = seen.indexOf(fingerprint(second));
    await waitFor("a few requests with the second certificate", () => seen.length >= switchedAt + 5);
    stop = true;
    await loop;
    expect(failures).toEqual([]);
    expect(seen[0]).toBe(fingerprint(first));
    expect(seen.slice(switchedAt).every((f) => f === fingerprint(second))).toBe(true);
    expect(server.certificateFingerprint()).toBe(fingerprint(second));
    expect(deps.lines().some((l) => l.msg === "serving certificate reloaded")).toBe(true);
  });

  it.each([
    ["a truncated certificate", (p: KeyPair) => ({ ...p, certPem: p.certPem.slice(0, 200) })],
    ["an empty key", (p: KeyPair) => ({ ...p, keyPem: "" })],
    ["a key of another certificate", (p: KeyPair) => ({ ...p, keyPem: first.keyPem })],
  ])("%s keeps the old certificate serving and logs an error", async (_what, spoil) => {
    const files = certFiles(first);
    const deps = fakeDeps();
    const server = await start(deps, files);
    write(files.certFile, files.keyFile, spoil(second));
    expect(await server.reloadNow()).toBe(true);
    const c = client(server);
    await c.get("/healthz").expect(200, "ok");
    expect(c.handshake()?.fingerprint256).toBe(fingerprint(first));
    expect(deps.lines().some((l) => l.level === 50 && /keeping the previous one/.test(String(l.msg)))).toBe(
      true,
    );
  });

  it("a server started before its certificate exists is not ready, then serves once the files appear", async () => {
    const files = certFiles();
    const deps = fakeDeps();
    const server = await start(deps, files);
    const before = await server.app.inject({ method: "GET", url: "/readyz" });
    expect(before.statusCode).toBe(503);
    expect(before.json().reason).toBe("serving certificate not loaded");
    write(files.certFile, files.keyFile, first);
    await waitFor(
      "the certificate to be picked up",
      async () => (await server.app.inject({ method: "GET", url: "/readyz" })).statusCode === 200,
    );
    const c = client(server);
    await c.get("/readyz").expect(200, { ready: true });
    expect(c.handshake()?.fingerprint256).toBe(fingerprint(first));
  });

  it("checkCertificatePair accepts a matching pair and names what is wrong otherwise", () => {
    expect(checkCertificatePair({ cert: first.certPem, key: first.keyPem })).toMatchObject({
      ok: true,
      fingerprint256: fingerprint(first),
    });
    expect(checkCertificatePair({ cert: "", key: first.keyPem })).toEqual({
      ok: false,
      error: "certificate file holds no complete PEM certificate",
    });
    expect(checkCertificatePair({ cert: first.certPem, key: first.keyPem.slice(0, 100) })).toEqual({
      ok: false,
      error: "key file holds no complete PEM private key",
    });
    expect(checkCertificatePair({ cert: first.certPem, key: second.keyPem })).toEqual({
      ok: false,
      error: "the private key does not belong to the certificate",
    });
  });
});

describe("listen address (SPEC §2.1): unset in a cluster, every address as Node listens with no host", () => {
  // Linux lists the IPv6 addresses here when the kernel has IPv6; without it binding `::` fails (EAFNOSUPPORT).
  const hostHasIpv6 = existsSync("/proc/net/if_inet6");
  const expected = hostHasIpv6 ? "::" : "0.0.0.0";

  /** GET /healthz on `host` (an address literal), trusting the test CA for the name `localhost`. */
  const healthz = (host: string, port: number) =>
    new Promise<number>((resolve, reject) => {
      const req = httpsGet(
        { host, port, path: "/healthz", ca: ca.certPem, servername: "localhost", agent: false },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
    });

  it(`Node's unspecified address on this host: ${expected} (IPv6 ${hostHasIpv6 ? "present" : "absent"})`, async () => {
    expect(await unspecifiedAddress()).toBe(expected);
  });

  it("no host: listens on the unspecified address, says so, and answers over IPv4 — and IPv6 where the host has it", async () => {
    const server = await startWebhookServer({
      host: undefined,
      port: 0,
      ...certFiles(first),
      shutdownDelayMs: 0,
      deps: fakeDeps(),
    });
    servers.push(server);
    expect(server.address).toBe(expected);
    expect((server.app.server.address() as AddressInfo).address).toBe(expected);
    expect(server.url).toBe(`https://127.0.0.1:${server.port}`);
    expect(await healthz("127.0.0.1", server.port)).toBe(200);
    // An IPv6-primary cluster's kubelet probes and Service reach the pod over IPv6 (decision 188).
    if (hostHasIpv6) expect(await healthz("::1", server.port)).toBe(200);
    else await expect(healthz("::1", server.port)).rejects.toThrow();
  });

  it("a host given is the host listened on, and reported", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    expect(server.address).toBe("127.0.0.1");
    expect(server.url).toBe(`https://127.0.0.1:${server.port}`);
  });
});

describe("graceful shutdown (SPEC §7)", () => {
  const refused = async (c: ReturnType<typeof client>): Promise<boolean> => {
    try {
      await c.get("/healthz");
      return false;
    } catch (err) {
      return (err as Error).message === "ECONNREFUSED: Connection refused";
    }
  };

  it("readyz false at once → still serving during the delay → stops accepting → drains the in-flight request", async () => {
    const deps = fakeDeps();
    const server = await start(deps, certFiles(first), 300);
    const body = fixtureText("capi-machine-create");
    const uid = fixture("capi-machine-create").request.uid;

    // A request whose body is still arriving when shutdown begins.
    const slow = client(server);
    const inFlight = supertest(server.url)
      .post("/validate")
      .agent(slow.agent)
      .set("content-type", "application/json")
      .set("content-length", String(Buffer.byteLength(body)));
    inFlight.write(body.slice(0, 100));
    await waitFor("the in-flight request to connect", () => slow.agent.handshakes.length === 1);

    let finished = false;
    const shutdown = server.beginShutdown().then(() => {
      finished = true;
    });
    const c = client(server);
    await c.get("/readyz").expect(503, { ready: false, reason: "shutting down" });
    await c.post("/validate", body).expect(200, { ...REVIEW_V1, response: { uid, allowed: true } });

    await waitFor("the listener to stop accepting", () => refused(c));
    expect(finished).toBe(false);
    inFlight.write(body.slice(100));
    const drained = await inFlight;
    await shutdown;
    expect(drained.status).toBe(200);
    expect(drained.body).toEqual({ ...REVIEW_V1, response: { uid, allowed: true } });
    expect(finished).toBe(true);
    expect(deps.calls).toHaveLength(2);
  });

  it("beginShutdown and close are idempotent", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    await Promise.all([server.beginShutdown(), server.beginShutdown(), server.close()]);
    expect(await refused(client(server))).toBe(true);
  });
});
