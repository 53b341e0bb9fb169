/**
 * SPEC §2.1: the metrics listener on a real HTTPS socket, called with supertest over a new TLS connection per
 * request — its own port, `/metrics` only, every scrape put
 * to the authorizer (401/403 from it are passed on, 200 serves the registry in Prometheus text format), the
 * same TLS security profile as the webhook (Intermediate by default, changed in place) and the same
 * serving certificate, reloaded when the files change. The authorizer is a fake here; its own table is
 * metrics-auth.test.ts.
 */
import { X509Certificate } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AgentOptions } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Counter, Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  issueServingCertificate,
  type KeyPair,
} from "../../src/server/certs.js";
import type { MetricsAuthorizer, ScrapeRequest } from "../../src/server/metrics-auth.js";
import { type MetricsServer, startMetricsServer } from "../../src/server/metrics-server.js";
import { captureLogger, overTls } from "./helpers.js";

let ca: CertificateAuthority;
let first: KeyPair;
let second: KeyPair;
let dir: string;
let fileCounter = 0;

beforeAll(() => {
  ca = createCertificateAuthority("metrics test CA");
  first = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
  second = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
  dir = mkdtempSync(join(tmpdir(), "metrics-serve-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const certFiles = (pair: KeyPair) => {
  const sub = join(dir, `t${fileCounter++}`);
  mkdirSync(sub, { recursive: true });
  const files = { certFile: join(sub, "tls.crt"), keyFile: join(sub, "tls.key") };
  writeFileSync(files.certFile, pair.certPem);
  writeFileSync(files.keyFile, pair.keyPem);
  return files;
};

/** Allows `Bearer good`, refuses `Bearer bad` with 403, anything else with 401; remembers what it was asked. */
const fakeAuthorizer = () => {
  const asked: ScrapeRequest[] = [];
  const authorize: MetricsAuthorizer = async (request) => {
    asked.push(request);
    if (request.authorization === "Bearer good") return { code: 200, user: "prometheus" };
    if (request.authorization === "Bearer bad")
      return { code: 403, message: "Authorization denied for user x" };
    return { code: 401, message: "Unauthorized" };
  };
  return { asked, authorize };
};

const start = async (
  options: { authorize?: MetricsAuthorizer; pair?: KeyPair; host?: string | undefined } = {},
) => {
  const registry = new Registry();
  new Counter({ name: "controller_runtime_reconcile_total", help: "h", registers: [registry] }).inc(3);
  const { logger, lines } = captureLogger();
  const files = certFiles(options.pair ?? first);
  const server = await startMetricsServer({
    host: "host" in options ? options.host : "127.0.0.1",
    port: 0,
    ...files,
    registry,
    authorize: options.authorize ?? fakeAuthorizer().authorize,
    logger,
    certificatePollIntervalMs: 200,
    certificateDebounceMs: 20,
  });
  servers.push(server);
  return { server, files, lines };
};

/** supertest to the real listener, one new connection (a new TLS handshake) per request, trusting only the test CA. */
const client = (server: MetricsServer, tls: AgentOptions = {}) => overTls(server.url, ca.certPem, tls);

/** The server's TLS alert when it refuses a handshake (40: no cipher in common; 70: protocol version). */
const HANDSHAKE_REFUSED = { code: "EPROTO", message: expect.stringContaining("SSL alert number 40") };
const VERSION_REFUSED = { code: "EPROTO", message: expect.stringContaining("SSL alert number 70") };

describe("the metrics listener (SPEC §2.1)", () => {
  it("401 without a token, 403 for a token without the grant, the registry with one", async () => {
    const { server } = await start();
    const c = client(server);
    const none = await c.get("/metrics").expect(401);
    expect(none.text).toContain("Unauthorized");
    expect(none.text).not.toContain("controller_runtime");
    const bad = await c.get("/metrics").set("authorization", "Bearer bad").expect(403);
    expect(bad.text).toContain("Authorization denied for user x");
    expect(bad.text).not.toContain("controller_runtime");
    const good = await c
      .get("/metrics")
      .set("authorization", "Bearer good")
      .expect(200)
      .expect("content-type", /^text\/plain; version=0\.0\.4/);
    expect(good.text).toContain("# TYPE controller_runtime_reconcile_total counter");
    expect(good.text).toContain("controller_runtime_reconcile_total 3");
  });

  it("asks the authorizer with the Authorization header, the verb in lower case and the path", async () => {
    const fake = fakeAuthorizer();
    const { server } = await start({ authorize: fake.authorize });
    await client(server).get("/metrics?x=1").set("authorization", "Bearer good").expect(200);
    expect(fake.asked).toEqual([{ authorization: "Bearer good", verb: "get", path: "/metrics" }]);
  });

  it("serves /metrics only: the webhook's paths and health are not here, and unknown paths ask no one", async () => {
    const fake = fakeAuthorizer();
    const { server } = await start({ authorize: fake.authorize });
    const c = client(server);
    for (const path of ["/validate", "/healthz", "/readyz", "/debug/instances", "/"]) {
      const res = await c.get(path).set("authorization", "Bearer good");
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toContain("controller_runtime");
    }
    expect(fake.asked).toEqual([]);
  });

  it("an authorizer that throws gives 500 and the process keeps serving", async () => {
    let calls = 0;
    const { server, lines } = await start({
      authorize: async () => {
        calls++;
        if (calls === 1) throw new Error("boom");
        return { code: 200 };
      },
    });
    const c = client(server);
    const failed = await c.get("/metrics").expect(500);
    expect(failed.text).not.toContain("controller_runtime");
    const served = await c.get("/metrics").expect(200);
    expect(served.text).toContain("controller_runtime_reconcile_total 3");
    expect(JSON.stringify(lines())).toContain("boom");
  });

  it("close is idempotent and stops accepting", async () => {
    const { server } = await start();
    await Promise.all([server.close(), server.close()]);
    await expect(client(server).get("/metrics")).rejects.toThrow("ECONNREFUSED: Connection refused");
  });
});

describe("TLS: the webhook's profile and certificate (SPEC §2.1)", () => {
  /** The cipher suite a new handshake negotiated for an authorized scrape (which must succeed over it). */
  const cipherOf = async (server: MetricsServer, tls: AgentOptions): Promise<string | undefined> => {
    const c = client(server, tls);
    await c.get("/metrics").set("authorization", "Bearer good").expect(200);
    return c.handshake()?.cipher;
  };

  it("Intermediate by default: no TLS 1.1, no static-RSA or CBC suite; HTTP/1.1 only", async () => {
    const { server } = await start();
    await expect(
      cipherOf(server, { minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0" }),
    ).rejects.toMatchObject(VERSION_REFUSED);
    for (const ciphers of ["AES128-SHA", "AES256-GCM-SHA384", "ECDHE-RSA-AES128-SHA"])
      await expect(cipherOf(server, { maxVersion: "TLSv1.2", ciphers }), ciphers).rejects.toMatchObject(
        HANDSHAKE_REFUSED,
      );
    expect(await cipherOf(server, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" })).toBe(
      "ECDHE-RSA-AES128-GCM-SHA256",
    );
    const alpn = client(server, { ALPNProtocols: ["h2", "http/1.1"] });
    await alpn.get("/metrics").set("authorization", "Bearer good").expect(200);
    expect(alpn.handshake()?.alpn).toBe("http/1.1");
  });

  it("a profile given at start applies from the first handshake", async () => {
    const registry = new Registry();
    const server = await startMetricsServer({
      host: "127.0.0.1",
      port: 0,
      ...certFiles(first),
      registry,
      authorize: fakeAuthorizer().authorize,
      logger: captureLogger().logger,
      tlsProfile: { type: "Modern" },
    });
    servers.push(server);
    await expect(
      cipherOf(server, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" }),
    ).rejects.toMatchObject(VERSION_REFUSED);
    expect(await cipherOf(server, { minVersion: "TLSv1.3" })).toMatch(/^TLS_/);
  });

  it("a profile change applies to the next handshakes without a restart", async () => {
    const { server } = await start();
    const tls12 = { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES256-GCM-SHA384" } as const;
    expect(await cipherOf(server, tls12)).toBe("ECDHE-RSA-AES256-GCM-SHA384");
    server.setTlsProfile({ type: "Modern" });
    await expect(cipherOf(server, tls12)).rejects.toMatchObject(VERSION_REFUSED);
    server.setTlsProfile(undefined);
    expect(await cipherOf(server, tls12)).toBe("ECDHE-RSA-AES256-GCM-SHA384");
  });

  it("new handshakes present the new certificate after the files change", async () => {
    const { server, files } = await start({ pair: first });
    const fingerprint = (pair: KeyPair) => new X509Certificate(pair.certPem).fingerprint256;
    const c = client(server);
    const presented = async (): Promise<string | undefined> => {
      await c.get("/metrics").set("authorization", "Bearer good").expect(200);
      return c.handshake()?.fingerprint256;
    };
    expect(await presented()).toBe(fingerprint(first));
    writeFileSync(files.certFile, second.certPem);
    writeFileSync(files.keyFile, second.keyPem);
    for (let i = 0; i < 250; i++) {
      if ((await presented()) === fingerprint(second)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await presented()).toBe(fingerprint(second));
  });
});

describe("its address (SPEC §2.1): unset in a cluster, every address as Node listens with no host", () => {
  it("listens on `::` where the host has IPv6 (else 0.0.0.0), logs it, and serves scrapes at its url", async () => {
    const hostHasIpv6 = existsSync("/proc/net/if_inet6");
    const { server, lines } = await start({ host: undefined });
    expect(server.address).toBe(hostHasIpv6 ? "::" : "0.0.0.0");
    expect(server.url).toBe(`https://127.0.0.1:${server.port}`);
    expect(lines().find((l) => l.msg === "metrics server listening")).toMatchObject({
      address: server.address,
      port: server.port,
      url: server.url,
    });
    const res = await client(server).get("/metrics").set("authorization", "Bearer good");
    expect(res.status).toBe(200);
  });
});

describe("its settings (SPEC §2.1: --metrics-port, default 8443)", () => {
  it("8443 by default, 0 for a free port, never the webhook's port", () => {
    const parsed = (args: string[]) => parseConfig(args, {});
    expect(parsed([])).toMatchObject({ ok: true, config: { metricsPort: 8443, metricsHost: undefined } });
    expect(parsed(["--metrics-port", "0", "--webhook-port", "0"])).toMatchObject({
      ok: true,
      config: { metricsPort: 0 },
    });
    expect(parsed(["--metrics-port", "9443"])).toEqual({
      ok: false,
      error: "settings webhookPort and metricsPort must differ (metrics have their own listener)",
    });
  });
});
