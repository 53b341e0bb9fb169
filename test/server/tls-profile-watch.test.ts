/**
 * SPEC §2.1 TLS profile: the product watches `apiservers.config.openshift.io/cluster .spec.tlsSecurityProfile`
 * through its own informer against the local API server and re-applies it to both listeners (webhook and
 * metrics) without a restart — a new handshake with a now-disallowed version or cipher fails and an allowed
 * one succeeds; without the apiservers resource (plain Kubernetes, local mode) Intermediate stays.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import type { KubeObject } from "../../src/kube/object.js";
import { writeDevelopmentCertificates } from "../../src/server/certs.js";
import { anyoneMayScrape } from "../../src/server/metrics-auth.js";
import { startMetricsServer } from "../../src/server/metrics-server.js";
import { startWebhookServer } from "../../src/server/serve.js";
import type { TlsSecurityProfile } from "../../src/server/tls-profile.js";
import { tlsProfileOf, watchTlsProfile } from "../../src/server/tls-profile-watch.js";
import { call, start } from "../apiserver/helpers.js";
import { fakeDeps } from "./helpers.js";

const silent = pino({ level: "silent" });

const apiServerCrd: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "apiservers.config.openshift.io" },
  spec: {
    group: "config.openshift.io",
    scope: "Cluster",
    names: { plural: "apiservers", singular: "apiserver", kind: "APIServer", listKind: "APIServerList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      },
    ],
  },
};

const apiServerObject = (profile: unknown): KubeObject => ({
  apiVersion: "config.openshift.io/v1",
  kind: "APIServer",
  metadata: { name: "cluster" },
  spec: profile === undefined ? {} : { tlsSecurityProfile: profile },
});

/** The cipher a new handshake with `options` negotiates with `port`, or the handshake's error. */
const cipherOf = (
  port: number,
  ca: string,
  options: { maxVersion?: "TLSv1.2" | "TLSv1.3"; minVersion?: "TLSv1.2" | "TLSv1.3"; ciphers?: string },
): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: "127.0.0.1", port, servername: "localhost", ca, ...options }, () => {
      const name = socket.getCipher().name;
      socket.end();
      resolve(name);
    });
    socket.once("error", reject);
  });

const TLS12_AES128 = { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES128-GCM-SHA256" } as const;
const TLS12_AES256 = { maxVersion: "TLSv1.2", ciphers: "ECDHE-RSA-AES256-GCM-SHA384" } as const;
const TLS13 = { minVersion: "TLSv1.3" } as const;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The local API server, both listeners, and the watch wired as src/main.ts wires it. */
async function setUp(options: { crd: boolean; profile?: unknown }) {
  const api: ApiServer = await start();
  cleanups.push(() => api.stop());
  if (options.crd) {
    const crd = await call(
      api,
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      apiServerCrd,
    );
    expect(crd.status, crd.text).toBe(201);
    for (let i = 0; (await call(api, "GET", "/apis/config.openshift.io/v1")).status !== 200; i++) {
      if (i > 100) throw new Error("apiservers.config.openshift.io never served");
      await new Promise((r) => setTimeout(r, 20));
    }
    if (options.profile !== undefined) {
      const created = await call(
        api,
        "POST",
        "/apis/config.openshift.io/v1/apiservers",
        apiServerObject(options.profile),
      );
      expect(created.status, created.text).toBe(201);
    }
  }
  const dir = await mkdtemp(join(tmpdir(), "mam-tls-watch-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const certs = await writeDevelopmentCertificates(dir, ["localhost", "127.0.0.1"]);
  const ca = certs.ca.certPem;
  const webhook = await startWebhookServer({
    host: "127.0.0.1",
    port: 0,
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    shutdownDelayMs: 0,
    deps: fakeDeps(),
  });
  cleanups.push(() => webhook.close());
  const metrics = await startMetricsServer({
    host: "127.0.0.1",
    port: 0,
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    registry: new Registry(),
    authorize: anyoneMayScrape,
    logger: silent,
  });
  cleanups.push(() => metrics.close());

  const applied: Array<TlsSecurityProfile | undefined> = [];
  const waiters: Array<() => void> = [];
  const connection = connect({ kubeconfigText: api.kubeconfig("kube:admin") });
  const watch = watchTlsProfile({
    transport: connection.transport,
    clock: systemClock,
    logger: silent,
    apply: (profile) => {
      webhook.setTlsProfile(profile);
      metrics.setTlsProfile(profile);
      applied.push(profile);
      for (const wake of waiters.splice(0)) wake();
    },
  });
  cleanups.push(() => watch.stop());
  await watch.ready;
  /** Resolves once the watch has applied `count` profiles in all. */
  const appliedCount = async (count: number): Promise<void> => {
    while (applied.length < count) await new Promise<void>((wake) => waiters.push(wake));
  };
  const ports = [webhook.port, metrics.port];
  return { api, ca, ports, watch, applied, appliedCount };
}

const REFUSED = { code: expect.stringMatching(/^(ERR_SSL_|ECONNRESET)/) };

describe("tlsProfileOf", () => {
  it.each([
    [undefined, undefined],
    [apiServerObject(undefined), undefined],
    [apiServerObject({ type: "Modern", modern: {} }), { type: "Modern" }],
    [apiServerObject({ type: "Old", old: {} }), { type: "Old" }],
    [apiServerObject({ type: "Intermediate" }), { type: "Intermediate" }],
    [apiServerObject({ type: "Bogus" }), undefined],
    [apiServerObject("Modern"), undefined],
    [
      apiServerObject({ type: "Custom", custom: { ciphers: ["A", 3, "B"], minTLSVersion: "VersionTLS13" } }),
      { type: "Custom", custom: { ciphers: ["A", "B"], minTLSVersion: "VersionTLS13" } },
    ],
    [
      apiServerObject({ type: "Custom", custom: { minTLSVersion: "TLS1.3" } }),
      { type: "Custom", custom: {} },
    ],
  ])("SPEC §2.1 TLS profile: %j asks for %j", (object, profile) => {
    expect(tlsProfileOf(object)).toEqual(profile);
  });
});

describe("the TLS profile watch (SPEC §2.1)", () => {
  it("without the apiservers resource both listeners keep Intermediate", async () => {
    const { ca, ports, watch, applied } = await setUp({ crd: false });
    expect(watch.synced()).toBe(true);
    expect(applied).toEqual([]);
    for (const port of ports) {
      expect(await cipherOf(port, ca, TLS12_AES128)).toBe("ECDHE-RSA-AES128-GCM-SHA256");
      await expect(
        cipherOf(port, ca, { maxVersion: "TLSv1.2", ciphers: "AES128-SHA" }),
      ).rejects.toMatchObject(REFUSED);
    }
  });

  it("a profile change in the cluster's APIServer applies to both listeners' next handshakes, without a restart", async () => {
    const { api, ca, ports, applied, appliedCount } = await setUp({
      crd: true,
      profile: { type: "Modern", modern: {} },
    });
    expect(applied).toEqual([{ type: "Modern" }]);
    for (const port of ports) {
      await expect(cipherOf(port, ca, TLS12_AES128)).rejects.toMatchObject(REFUSED);
      expect(await cipherOf(port, ca, TLS13)).toMatch(/^TLS_/);
    }

    const patch = (profile: unknown) =>
      call(
        api,
        "PATCH",
        "/apis/config.openshift.io/v1/apiservers/cluster",
        { spec: { tlsSecurityProfile: profile ?? null } },
        { contentType: "application/merge-patch+json" },
      );
    expect(
      (
        await patch({
          type: "Custom",
          custom: { ciphers: ["ECDHE-RSA-AES256-GCM-SHA384"], minTLSVersion: "VersionTLS12" },
        })
      ).status,
    ).toBe(200);
    await appliedCount(2);
    for (const port of ports) {
      expect(await cipherOf(port, ca, TLS12_AES256)).toBe("ECDHE-RSA-AES256-GCM-SHA384");
      await expect(cipherOf(port, ca, TLS12_AES128)).rejects.toMatchObject(REFUSED);
    }

    // The profile removed: Intermediate again.
    expect((await patch(undefined)).status).toBe(200);
    await appliedCount(3);
    expect(applied[2]).toBeUndefined();
    for (const port of ports) {
      expect(await cipherOf(port, ca, TLS12_AES128)).toBe("ECDHE-RSA-AES128-GCM-SHA256");
      await expect(
        cipherOf(port, ca, { maxVersion: "TLSv1.2", ciphers: "AES128-SHA" }),
      ).rejects.toMatchObject(REFUSED);
    }
  });

  it("a Custom profile OpenSSL cannot serve is refused: the listeners keep the profile in force", async () => {
    const { api, ca, ports, appliedCount } = await setUp({ crd: true, profile: { type: "Modern" } });
    const put = await call(
      api,
      "PATCH",
      "/apis/config.openshift.io/v1/apiservers/cluster",
      {
        spec: {
          tlsSecurityProfile: {
            type: "Custom",
            custom: { ciphers: ["NO-SUCH-CIPHER"], minTLSVersion: "VersionTLS12" },
          },
        },
      },
      { contentType: "application/merge-patch+json" },
    );
    expect(put.status, put.text).toBe(200);
    await appliedCount(2);
    for (const port of ports) {
      await expect(cipherOf(port, ca, TLS12_AES128)).rejects.toMatchObject(REFUSED);
      expect(await cipherOf(port, ca, TLS13)).toMatch(/^TLS_/);
    }
  });
});
