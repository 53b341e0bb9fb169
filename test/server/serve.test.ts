/**
 * SPEC §2.1 / §7 / §9 on a real HTTPS listener: the test CA verifies the serving certificate, TLS ≥ 1.2 and
 * HTTP/1.1 only; the certificate is swapped on disk while a client keeps making new connections (new
 * handshakes present the new certificate, no request fails); an invalid pair keeps the old one; a server
 * started before its certificate exists becomes ready when it appears; graceful shutdown keeps serving
 * through the delay, then stops accepting and drains the request still in flight.
 */
import { X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  issueServingCertificate,
  type KeyPair,
} from "../../src/server/certs.js";
import { startWebhookServer, type WebhookServer } from "../../src/server/serve.js";
import { checkCertificatePair } from "../../src/server/tls-reload.js";
import { deny, type FakeDeps, fakeDeps, fixtureText } from "./helpers.js";

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

interface Answer {
  status: number;
  body: string;
  fingerprint256: string;
  protocol: string | null;
  alpn: string | false | null;
}

/** One request on a new connection (a new TLS handshake), trusting only the test CA. */
const call = (
  url: string,
  path: string,
  options: { method?: string; body?: string; tls?: Record<string, unknown> } = {},
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, url),
      {
        method: options.method ?? "GET",
        ca: ca.certPem,
        agent: false,
        headers: options.body ? { "content-type": "application/json" } : {},
        ...options.tls,
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
            fingerprint256: socket.getPeerCertificate().fingerprint256,
            protocol: socket.getProtocol(),
            alpn: socket.alpnProtocol,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });

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

describe("HTTPS contract (SPEC §2.1)", () => {
  it("answers the mapi-frozen fixture over HTTPS verified by the test CA, TLS ≥ 1.2, HTTP/1.1", async () => {
    const deps = fakeDeps(() => deny("MAPI Machine openshift-machine-api/worker-a is not authoritative"));
    const server = await start(deps, certFiles(first));
    const answer = await call(server.url, "/validate?timeout=10s", {
      method: "POST",
      body: fixtureText("mapi-machine-update-instance-type"),
      tls: { ALPNProtocols: ["h2", "http/1.1"] },
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).response).toMatchObject({
      uid: "6d3f1c2e-8a4b-4f5e-9c0d-1b2a3c4d5e6f",
      allowed: false,
      status: { code: 403, message: "MAPI Machine openshift-machine-api/worker-a is not authoritative" },
    });
    expect(answer.fingerprint256).toBe(fingerprint(first));
    expect(["TLSv1.2", "TLSv1.3"]).toContain(answer.protocol);
    expect(answer.alpn).toBe("http/1.1");
  });

  it("refuses a client limited to TLS 1.1", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    await expect(
      call(server.url, "/healthz", {
        tls: { minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0" },
      }),
    ).rejects.toThrow();
    expect((await call(server.url, "/healthz", { tls: { maxVersion: "TLSv1.2" } })).protocol).toBe("TLSv1.2");
  });
});

describe("TLS security profile (SPEC §2.1, issue 20)", () => {
  const cipherOf = (url: string, tls: Record<string, unknown>): Promise<string | undefined> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(new URL("/healthz", url), { ca: ca.certPem, agent: false, ...tls }, (res) => {
        const cipher = (res.socket as TLSSocket).getCipher().name;
        res.resume();
        res.on("end", () => resolve(cipher));
      });
      req.on("error", reject);
      req.end();
    });

  it("Intermediate by default: a static-RSA suite (AES128-SHA) and a CBC one are refused; ECDHE AEAD and TLS 1.3 are served", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    for (const ciphers of [
      "AES128-SHA",
      "AES256-GCM-SHA384",
      "ECDHE-RSA-AES128-SHA",
      "DHE-RSA-AES128-GCM-SHA256",
    ])
      await expect(cipherOf(server.url, { maxVersion: "TLSv1.2", ciphers })).rejects.toThrow();
    expect(
      await cipherOf(server.url, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" }),
    ).toBe("ECDHE-RSA-AES128-GCM-SHA256");
    expect(
      await cipherOf(server.url, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-CHACHA20-POLY1305" }),
    ).toBe("ECDHE-RSA-CHACHA20-POLY1305");
    expect(await cipherOf(server.url, { minVersion: "TLSv1.3" })).toMatch(/^TLS_/);
  });

  it("a profile change applies to the next handshakes without a restart", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    const tls12 = { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES256-GCM-SHA384" } as const;
    expect(await cipherOf(server.url, tls12)).toBe("ECDHE-RSA-AES256-GCM-SHA384");
    server.setTlsProfile({ type: "Modern" });
    await expect(cipherOf(server.url, tls12)).rejects.toThrow();
    expect(await cipherOf(server.url, { minVersion: "TLSv1.3" })).toMatch(/^TLS_/);
    server.setTlsProfile({
      type: "Custom",
      custom: { ciphers: ["ECDHE-RSA-AES256-GCM-SHA384"], minTLSVersion: "VersionTLS12" },
    });
    expect(await cipherOf(server.url, tls12)).toBe("ECDHE-RSA-AES256-GCM-SHA384");
    await expect(
      cipherOf(server.url, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" }),
    ).rejects.toThrow();
    server.setTlsProfile(undefined);
    expect(
      await cipherOf(server.url, { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" }),
    ).toBe("ECDHE-RSA-AES128-GCM-SHA256");
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
    const client = (async () => {
      while (!stop) {
        try {
          const answer = await call(server.url, "/validate", {
            method: "POST",
            body: fixtureText("capi-machine-create"),
          });
          if (answer.status !== 200) failures.push(answer.status);
          seen.push(answer.fingerprint256);
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
    await client;
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
    const answer = await call(server.url, "/healthz");
    expect(answer.status).toBe(200);
    expect(answer.fingerprint256).toBe(fingerprint(first));
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
    expect((await call(server.url, "/readyz")).fingerprint256).toBe(fingerprint(first));
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

describe("graceful shutdown (SPEC §7)", () => {
  it("readyz false at once → still serving during the delay → stops accepting → drains the in-flight request", async () => {
    const deps = fakeDeps();
    const server = await start(deps, certFiles(first), 300);
    const body = fixtureText("capi-machine-create");

    // A request whose body is still arriving when shutdown begins.
    let inFlightStatus = 0;
    let inFlightRequest: { end: (chunk: string) => void } | undefined;
    let connected = false;
    const inFlight = new Promise<void>((resolve, reject) => {
      const req = httpsRequest(
        new URL("/validate", server.url),
        {
          method: "POST",
          ca: ca.certPem,
          agent: false,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          inFlightStatus = res.statusCode ?? 0;
          res.resume();
          res.on("end", resolve);
        },
      );
      req.on("error", reject);
      req.on("socket", (socket) =>
        socket.on("secureConnect", () => {
          connected = true;
        }),
      );
      req.write(body.slice(0, 100));
      inFlightRequest = req;
    });
    await waitFor("the in-flight request to connect", () => connected);

    let finished = false;
    const shutdown = server.beginShutdown().then(() => {
      finished = true;
    });
    const readyz = await call(server.url, "/readyz");
    expect(readyz.status).toBe(503);
    expect(JSON.parse(readyz.body)).toEqual({ ready: false, reason: "shutting down" });
    expect((await call(server.url, "/validate", { method: "POST", body })).status).toBe(200);

    await waitFor("the listener to stop accepting", async () => {
      try {
        await call(server.url, "/healthz");
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === "ECONNREFUSED";
      }
    });
    expect(finished).toBe(false);
    inFlightRequest!.end(body.slice(100));
    await inFlight;
    await shutdown;
    expect(inFlightStatus).toBe(200);
    expect(finished).toBe(true);
    expect(deps.calls).toHaveLength(2);
  });

  it("beginShutdown and close are idempotent", async () => {
    const server = await start(fakeDeps(), certFiles(first));
    await Promise.all([server.beginShutdown(), server.beginShutdown(), server.close()]);
    await expect(call(server.url, "/healthz")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
