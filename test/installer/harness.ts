/**
 * Test bed for the installer on either backend (SPEC §6, §8, §8.1): `startTestCluster` gives the local API
 * server, or the real control plane when MAM_TEST_BACKEND=real, set up as a cluster would be (the CAPI
 * namespace, the project's CRDs, and on the real one the installer's RBAC exactly as
 * manifests/installer/installer.yaml ships it). On top: an Infrastructure of the chosen platform, transport
 * ConfigMaps packed from components text the way `pack-provider` does, and `runInstaller` running as the
 * installer's own identity (context `installer`) on a test clock with every run recorded. Tests read what
 * the installer did through the API as the admin, never from a server's storage, so the same assertions
 * hold on both backends. Shared by the installer integration and cluster tests.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { vi } from "vitest";
import { parse, stringify } from "yaml";
import { parseConfig } from "../../src/config.js";
import { type InstallerRun, type InstallerSettings, runInstaller } from "../../src/installer/cli.js";
import { DEMO_IMAGES } from "../../src/installer/demo-providers.js";
import { packProvider } from "../../src/installer/pack.js";
import { type Clock, createManualClock, type ManualClock, systemClock } from "../../src/kube/clock.js";
import type { KubeConnection } from "../../src/kube/config.js";
import { connect } from "../../src/kube/config.js";
import { NotFoundError } from "../../src/kube/errors.js";
import { CONFIG_API_VERSION, KINDS, type ResourceType } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { isRecord } from "../../src/kube/object.js";
import { startTestCluster, type TestCluster } from "../cluster/backend.js";

export const NS = "openshift-cluster-api";
const MAPI_NS = "openshift-machine-api";
export const INSTALLER_USER = "system:serviceaccount:openshift-cluster-api:machine-api-migration-installer";

const type = (group: string, version: string, kind: string, plural: string, namespaced = true) =>
  ({ group, version, kind, plural, namespaced }) as const satisfies ResourceType;
const RBAC = "rbac.authorization.k8s.io";
const ADMISSION = "admissionregistration.k8s.io";

/** The kinds the installer writes, as the tests read them back. */
export const TYPES = {
  deployments: type("apps", "v1", "Deployment", "deployments"),
  clusterroles: type(RBAC, "v1", "ClusterRole", "clusterroles", false),
  clusterrolebindings: type(RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", false),
  roles: type(RBAC, "v1", "Role", "roles"),
  rolebindings: type(RBAC, "v1", "RoleBinding", "rolebindings"),
  validatingwebhookconfigurations: type(
    ADMISSION,
    "v1",
    "ValidatingWebhookConfiguration",
    "validatingwebhookconfigurations",
    false,
  ),
  services: type("", "v1", "Service", "services"),
  serviceaccounts: type("", "v1", "ServiceAccount", "serviceaccounts"),
  configmaps: KINDS.configMap,
  namespaces: KINDS.namespace,
  crds: KINDS.customResourceDefinition,
} as const;

/**
 * The installer's clock: `now()` and every wait of a second or more move only when a test calls
 * `advance` (retries, resyncs, Degraded after five minutes), while shorter waits — polling a CRD until the
 * API server has Established it, a work queue's first backoff — pass in real time. The local server
 * establishes a CRD in the create itself; kube-apiserver does it moments later, and a poll on a clock that
 * only a test moves would never see it.
 */
const REAL_TIME_BELOW_MS = 1_000;
export function createTestClock(): ManualClock {
  const manual = createManualClock();
  const real: Clock = systemClock;
  return {
    ...manual,
    setTimeout: (fn, ms) => (ms < REAL_TIME_BELOW_MS ? real.setTimeout(fn, ms) : manual.setTimeout(fn, ms)),
  };
}

/** The ServiceAccounts of the simulated CAPI and CAPA controllers, which the demo providers also ship. */
const STAND_IN_SERVICE_ACCOUNTS = ["capi-manager", "capa-controller-manager"];

export function installerSettings(overrides: Partial<InstallerSettings> = {}): InstallerSettings {
  const parsed = parseConfig([], {});
  if (!parsed.ok) throw new Error(parsed.error);
  return { ...parsed.config, ...overrides };
}

/** Components that pack: for a test that then writes the ConfigMap's `data` itself, as pack-provider would not. */
export const PLACEHOLDER = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: placeholder}\n";

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

export const IMAGES_CONFIGMAP = "machine-api-migration-images";

/** The images ConfigMap the installer reads: the demo providers' images, plus `data`. */
export const imagesConfigMap = (data: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: IMAGES_CONFIGMAP, namespace: NS },
  data: { ...DEMO_IMAGES, ...data },
});

/** `kubeconfigText` with `context` as its current context (what `--kubeconfig` alone selects). */
export function kubeconfigFor(kubeconfigText: string, context: string): string {
  const config: unknown = parse(kubeconfigText);
  if (!isRecord(config) || !Array.isArray(config.contexts))
    throw new Error("the test cluster's kubeconfig has no contexts");
  if (!config.contexts.some((c) => isRecord(c) && c.name === context))
    throw new Error(`the test cluster's kubeconfig has no context ${context}`);
  return stringify({ ...config, "current-context": context });
}

export interface Bed {
  cluster: TestCluster;
  admin: KubeConnection;
  /** The installer's own identity: its ServiceAccount, with the shipped RBAC on the real control plane. */
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
  /** One object as the admin reads it; undefined when there is none. */
  get(type: ResourceType, namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Objects of a kind as the admin lists them: in `namespace`, or everywhere. */
  list(type: ResourceType, namespace?: string): Promise<KubeObject[]>;
  /** Creates the ConfigMap as the admin, or replaces the one there. */
  putConfigMap(configMap: KubeObject): Promise<void>;
  /** Writes by the installer's identity, from the request counters (the local server's or the proxy's). */
  installerWrites(): number;
  clusterOperator(): Promise<KubeObject | undefined>;
  stop(): Promise<void>;
}

export async function startBed(): Promise<Bed> {
  const dir = await mkdtemp(join(tmpdir(), "installer-bed-"));
  let cluster: TestCluster;
  try {
    cluster = await startTestCluster({
      stateDir: dir,
      mapiNamespace: MAPI_NS,
      capiNamespace: NS,
      controllerUsers: [],
      // The product's webhooks are never registered here: the installer runs without them.
      webhookCaPem: "",
      logger: pino({ level: "silent" }),
    });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const admin = connect({ kubeconfigText: cluster.kubeconfigText, context: "admin" });
  const installer = connect({ kubeconfigText: cluster.kubeconfigText, context: "installer" });
  try {
    // The real control plane creates the simulated providers' ServiceAccounts up front, for their tokens
    // (SPEC §1.1). Where the installer installs the providers, those ServiceAccounts are its to create:
    // left in place, no-takeover rightly refuses to apply over them. Nothing here acts as a provider.
    for (const name of STAND_IN_SERVICE_ACCOUNTS)
      await admin.client.delete(TYPES.serviceaccounts, NS, name).catch((e: unknown) => {
        if (!(e instanceof NotFoundError)) throw e;
      });
  } catch (e) {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const clock = createTestClock();
  const runs: InstallerRun[] = [];
  const abort = new AbortController();
  let running: Promise<void> | undefined;

  const bed: Bed = {
    cluster,
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
      const existing = await bed.get(KINDS.infrastructure, "", "cluster");
      const base = existing ?? (await admin.client.create(KINDS.infrastructure, infra));
      await admin.client.updateStatus(KINDS.infrastructure, { ...base, status: infra.status });
    },
    async get(type, namespace, name) {
      try {
        return await admin.client.get(type, namespace, name);
      } catch (e) {
        if (e instanceof NotFoundError) return undefined;
        throw e;
      }
    },
    async list(type, namespace) {
      return (await admin.client.list(type, namespace === undefined ? {} : { namespace })).items;
    },
    async putConfigMap(configMap) {
      const live = await bed.get(KINDS.configMap, NS, String(configMap.metadata?.name));
      if (!live) await admin.client.create(KINDS.configMap, configMap);
      else
        await admin.client.update(KINDS.configMap, {
          ...configMap,
          metadata: { ...configMap.metadata, resourceVersion: live.metadata?.resourceVersion },
        });
    },
    installerWrites() {
      const byKey = cluster.counters().byKey;
      return Object.entries(byKey)
        .filter(([k]) => k.endsWith(` ${INSTALLER_USER}`))
        .filter(([k]) => /^(create|update|patch|delete|deletecollection) /.test(k))
        .reduce((n, [, v]) => n + v, 0);
    },
    async clusterOperator() {
      return bed.get(KINDS.clusterOperator, "", "machine-api-migration-installer");
    },
    async stop() {
      abort.abort();
      await running;
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return bed;
}
