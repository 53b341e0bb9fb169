/**
 * The composition root's graceful stop (SPEC §7, issue 21): `serve` against a cluster (the local API server
 * as a kubeconfig cluster, with the feature gate and CRDs that make it supported) takes the controllers'
 * Lease, and SIGTERM releases it — holderIdentity cleared, so a successor leads at its next retry instead of
 * after LeaseDuration (137 s by default) — then returns 0 with no signal listener left behind.
 */
import { EventEmitter } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parse, stringify } from "yaml";
import { SETTINGS } from "../src/config.js";
import { KINDS } from "../src/kube/kinds.js";
import { type LocalCluster, startLocalCluster } from "../src/local/cluster.js";
import { type Signals, serve } from "../src/main.js";
import { webhookSans, writeDevelopmentCertificates } from "../src/server/certs.js";

const CAPI_NS = SETTINGS.capiNamespace.default;
const LEASE = SETTINGS.leaseName.default;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A supported cluster reached through a kubeconfig whose current context is the product's identity. */
async function cluster(): Promise<{ local: LocalCluster; args: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), "main-serve-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const certs = await writeDevelopmentCertificates(join(dir, "certs"), webhookSans(LEASE, CAPI_NS));
  const local = await startLocalCluster({
    host: "127.0.0.1",
    port: 0,
    stateDir: join(dir, "state"),
    mapiNamespace: SETTINGS.mapiNamespace.default,
    capiNamespace: CAPI_NS,
    controllerUsers: SETTINGS.controllerUsers.default,
    webhookCaPem: certs.ca.certPem,
    logger: pino({ level: "silent" }),
  });
  cleanups.push(() => local.stop());
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(kubeconfig, stringify({ ...parse(local.kubeconfigText), "current-context": "controller" }));
  const args = [
    `--kubeconfig=${kubeconfig}`,
    "--webhook-host=127.0.0.1",
    "--webhook-port=0",
    "--metrics-port=0",
    `--tls-cert-file=${join(dir, "certs", "tls.crt")}`,
    `--tls-key-file=${join(dir, "certs", "tls.key")}`,
    `--tls-ca-file=${join(dir, "certs", "ca.crt")}`,
    "--shutdown-delay=0",
    "--log-level=silent",
  ];
  return { local, args };
}

const leaseSpec = async (local: LocalCluster): Promise<Record<string, unknown>> =>
  ((await local.clientAs("admin").get(KINDS.lease, CAPI_NS, LEASE)).spec ?? {}) as Record<string, unknown>;

describe("serve: graceful stop (SPEC §7)", () => {
  it("SIGTERM releases the controllers' Lease (holderIdentity cleared) and returns 0", async () => {
    const { local, args } = await cluster();
    const signals = new EventEmitter();
    const exit = serve(args, {}, signals as unknown as Signals);
    let settled = false;
    void exit.finally(() => {
      settled = true;
    });

    await vi.waitFor(
      async () => {
        if (settled) throw new Error(`serve returned ${await exit} before leading`);
        expect(String((await leaseSpec(local)).holderIdentity).startsWith(`${hostname()}_`)).toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );
    // OpenShift's LeaseDuration: without the release a successor would wait this long.
    expect((await leaseSpec(local)).leaseDurationSeconds).toBe(137);

    signals.emit("SIGTERM");
    const code = await Promise.race([exit, new Promise((r) => setTimeout(() => r("still running"), 15_000))]);
    expect(code).toBe(0);
    expect(await leaseSpec(local)).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    expect(signals.listenerCount("SIGTERM") + signals.listenerCount("SIGINT")).toBe(0);
  }, 60_000);
});

describe("serve: a kubeconfig it cannot use is a setting's error (exit 2), never a stack trace", () => {
  it.each([
    ["an empty file", ""],
    ["a file that is not a kubeconfig", "- a\n- b\n"],
  ])("%s", async (_, text) => {
    const dir = await mkdtemp(join(tmpdir(), "main-kubeconfig-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const kubeconfig = join(dir, "kubeconfig");
    await writeFile(kubeconfig, text);
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    cleanups.push(async () => {
      vi.restoreAllMocks();
    });
    const code = await serve([`--kubeconfig=${kubeconfig}`, "--log-level=silent"], {});
    expect(code).toBe(2);
    expect(written.join("")).toMatch(
      new RegExp(
        `^machine-api-migration: cannot load setting kubeconfig \\(--kubeconfig ${kubeconfig}\\)|^machine-api-migration: setting kubeconfig \\(--kubeconfig ${kubeconfig}\\) holds no clusters`,
      ),
    );
  });
});
