/**
 * Test bed for the installer against the local API server (SPEC §6, §8): a server with the project's CRDs,
 * the CAPI namespace and an Infrastructure of the chosen platform, transport ConfigMaps packed from
 * components text the way `pack-provider` does, and `runInstaller` running on a manual clock with every
 * run recorded. Shared by the installer integration tests.
 */
import { pino } from "pino";
import { vi } from "vitest";
import { loadProjectCrds } from "../../src/apiserver/fixtures/crds.js";
import type { ApiServer, ApiServerOptions } from "../../src/apiserver/index.js";
import { startApiServer } from "../../src/apiserver/index.js";
import { parseConfig } from "../../src/config.js";
import { type InstallerRun, type InstallerSettings, runInstaller } from "../../src/installer/cli.js";
import { packProvider } from "../../src/installer/pack.js";
import { createManualClock, type ManualClock } from "../../src/kube/clock.js";
import type { KubeConnection } from "../../src/kube/config.js";
import { connect } from "../../src/kube/config.js";
import { CONFIG_API_VERSION, KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { createCertificateAuthority, issueServingCertificate } from "../../src/server/certs.js";

export const NS = "openshift-cluster-api";
export const INSTALLER_USER = "system:serviceaccount:openshift-cluster-api:machine-api-migration-installer";

let tls: ApiServerOptions["tls"] | undefined;
/** One PKI per test file: key generation is the slow part of starting a server. */
const tlsOnce = (): NonNullable<ApiServerOptions["tls"]> => {
  if (!tls) {
    const ca = createCertificateAuthority("installer test CA");
    const serving = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
    tls = { certPem: serving.certPem, keyPem: serving.keyPem, caPem: ca.certPem };
  }
  return tls;
};

export function installerSettings(overrides: Partial<InstallerSettings> = {}): InstallerSettings {
  const parsed = parseConfig([], {});
  if (!parsed.ok) throw new Error(parsed.error);
  return { ...parsed.config, ...overrides };
}

export function transport(
  name: string,
  type: string,
  version: string,
  components: string,
  configMapName?: string,
): KubeObject {
  const packed = packProvider({
    name,
    type,
    version,
    namespace: NS,
    components,
    ...(configMapName ? { configMapName } : {}),
  });
  if (!packed.ok) throw new Error(packed.error);
  return packed.configMap;
}

export function infrastructureObject(platform: string): KubeObject {
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: "Infrastructure",
    metadata: { name: "cluster" },
    spec: { platformSpec: { type: platform } },
    status: { infrastructureName: "test-x2k4", platform, platformStatus: { type: platform } },
  };
}

export interface Bed {
  server: ApiServer;
  admin: KubeConnection;
  installer: KubeConnection;
  clock: ManualClock;
  runs: InstallerRun[];
  /** Starts the installer; resolves once its first run has finished. */
  start(settings?: Partial<InstallerSettings>): Promise<void>;
  /**
   * The first run after the first `after` runs that satisfies `until` (default: any). A run already under
   * way when the test changed something may finish first; `until` waits past it.
   */
  nextRun(after: number, until?: (run: InstallerRun) => boolean): Promise<InstallerRun>;
  setPlatform(platform: string): Promise<void>;
  /** Writes by the installer's identity, from the server's request counters. */
  installerWrites(): number;
  clusterOperator(): Promise<KubeObject | undefined>;
  stop(): Promise<void>;
}

export async function startBed(): Promise<Bed> {
  const server = await startApiServer({
    port: 0,
    users: [
      { token: "admin-token", username: "admin", groups: ["system:masters"] },
      { token: "installer-token", username: INSTALLER_USER, groups: ["system:serviceaccounts"] },
    ],
    tls: tlsOnce(),
  });
  const admin = connect({ kubeconfigText: server.kubeconfig("admin") });
  const installer = connect({ kubeconfigText: server.kubeconfig(INSTALLER_USER) });
  await admin.client.create(KINDS.namespace, { metadata: { name: NS } });
  for (const crd of await loadProjectCrds()) await admin.client.create(KINDS.customResourceDefinition, crd);
  const clock = createManualClock();
  const runs: InstallerRun[] = [];
  const abort = new AbortController();
  let running: Promise<void> | undefined;

  const bed: Bed = {
    server,
    admin,
    installer,
    clock,
    runs,
    async start(settings = {}) {
      running = runInstaller(installerSettings(settings), {
        connection: installer,
        logger: pino({ level: "silent" }),
        clock,
        signal: abort.signal,
        onRun: (r) => runs.push(r),
      });
      await bed.nextRun(0);
    },
    async nextRun(after, until = () => true) {
      return vi.waitFor(
        () => {
          const found = runs.slice(after).find(until);
          if (!found) throw new Error(`waiting for an installer run after run ${after}`);
          return found;
        },
        { timeout: 15_000, interval: 10 },
      );
    },
    async setPlatform(platform) {
      const infra = infrastructureObject(platform);
      const existing = await admin.client.get(KINDS.infrastructure, "", "cluster").catch(() => undefined);
      const base = existing ?? (await admin.client.create(KINDS.infrastructure, infra));
      await admin.client.updateStatus(KINDS.infrastructure, { ...base, status: infra.status });
    },
    installerWrites() {
      const byKey = server.counters.snapshot().byKey;
      return Object.entries(byKey)
        .filter(([k]) => k.endsWith(` ${INSTALLER_USER}`))
        .filter(([k]) => /^(create|update|patch|delete|deletecollection) /.test(k))
        .reduce((n, [, v]) => n + v, 0);
    },
    async clusterOperator() {
      return admin.client
        .get(KINDS.clusterOperator, "", "machine-api-migration-installer")
        .catch(() => undefined);
    },
    async stop() {
      abort.abort();
      await running;
      await server.stop();
    },
  };
  return bed;
}
