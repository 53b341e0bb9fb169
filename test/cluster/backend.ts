/**
 * One harness, two backends (SPEC §8.1, §10): the test files that run on both ask for a `TestCluster` and
 * get the embedded local API server (the default, `npm test`) or the real control plane
 * (`MAM_TEST_BACKEND=real`, which `npm run test:cluster` sets). Both are set up the same way, as a cluster
 * admin and the platform's operators would: namespaces, the project's CRDs, the `FeatureGate`, CAPA's
 * AWSMachine defaulting webhook, identities, and the product's webhook configurations.
 *
 * On the real control plane the identities are as in a cluster: ServiceAccounts with tokens from the
 * TokenRequest API for the product and each simulated provider (SPEC §1.1), `kube:admin` bound to
 * `cluster-admin` through `system:cluster-admins` for the tests' kubectl, and the product's own
 * `manifests/base` RBAC and `manifests/installer` RBAC applied exactly as shipped. The simulated providers
 * get the roles of the controllers they stand for (providers-rbac.yaml), never the product's.
 *
 * Fault injection and request counters are the same on both: the local server has them built in; on the
 * real control plane every client of the tests reaches kube-apiserver through a fault proxy
 * (./fault-proxy.ts) that counts and injects as the local server does.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pino } from "pino";
import type { AwsMachineDefaulter } from "../../src/apiserver/fixtures/awsmachine-defaulter.js";
import { loadProjectCrds } from "../../src/apiserver/fixtures/crds.js";
import type { CounterSnapshot, FaultInjector } from "../../src/apiserver/index.js";
import type { KubeClient } from "../../src/kube/client.js";
import { connect } from "../../src/kube/config.js";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import { conditionOf, isRecord, type KubeObject } from "../../src/kube/object.js";
import {
  clientsOf,
  createIfMissing,
  type LocalCluster,
  type LocalClusterOptions,
  putProductWebhooks,
  startLocalCluster,
  startRegisteredAwsMachineDefaulter,
} from "../../src/local/cluster.js";
import { type LocalUser, localUsers } from "../../src/local/identities.js";
import { renderKubeconfig } from "../../src/local/kubeconfig.js";
import { featureGate } from "../../src/local/seed.js";
import { localWebhookConfiguration } from "../../src/local/webhooks.js";
import { issueServingCertificate } from "../../src/server/certs.js";
import {
  type Binaries,
  type ControlPlane,
  curl,
  ensureBinaries,
  startControlPlane,
} from "./control-plane.js";
import { startFaultProxy } from "./fault-proxy.js";

const run = promisify(execFile);
const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../..");

export type BackendName = "local" | "real";

/** The backend the environment asks for: `MAM_TEST_BACKEND=real` is the real control plane. */
export const backendName = (env: NodeJS.ProcessEnv = process.env): BackendName => {
  const v = env.MAM_TEST_BACKEND ?? "local";
  if (v !== "local" && v !== "real") throw new Error(`MAM_TEST_BACKEND must be local or real, not ${v}`);
  return v;
};

/** What local mode takes, less where the embedded server listens (both backends pick free loopback ports). */
export type TestClusterOptions = Omit<LocalClusterOptions, "host" | "port">;

export interface TestCluster {
  backend: BackendName;
  kubeconfigPath: string;
  kubeconfigText: string;
  /** A client acting as the named user (`admin`, `controller`, `mao`, `capi`, `capa`, `installer`). */
  clientAs(context: string): KubeClient;
  /** A kubeconfig holding only the named user, current (what that identity's pod or person would have). */
  kubeconfigFor(context: string): string;
  /** Registers the product's three webhook configurations, calling the webhook at `baseUrl`. */
  registerProductWebhooks(baseUrl: string): Promise<void>;
  /** The server's own work after the last request is done (local: its collector; real: nothing to wait on). */
  settled(): Promise<void>;
  /** Requests by verb, resource and user, as the local server counts them (real: at the fault proxy). */
  counters(): CounterSnapshot;
  /** Starts the request counters from zero (a phase of a run counts only its own requests). */
  resetCounters(): void;
  /** Seeded 409/429/500s, latency and watch cuts for matching requests (SPEC §8 fault injection). */
  faults: FaultInjector;
  /** The embedded server; absent on the real control plane. */
  local?: LocalCluster;
  /** What the real control plane's processes last logged (empty on the local backend). */
  diagnostics(): Promise<string>;
  stop(): Promise<void>;
}

export async function startTestCluster(opts: TestClusterOptions): Promise<TestCluster> {
  return startBackend(backendName(), opts);
}

/**
 * A cluster of the environment's backend in a fresh temporary state dir, with no product webhooks and no
 * controller users — for a test that drives the API itself; its `stop` also removes the dir.
 */
export async function startPlainTestCluster(
  prefix: string,
  namespaces: { mapiNamespace: string; capiNamespace: string },
): Promise<TestCluster> {
  const stateDir = await mkdtemp(join(tmpdir(), prefix));
  const cluster = await startTestCluster({
    stateDir,
    ...namespaces,
    controllerUsers: [],
    webhookCaPem: "",
    logger: pino({ level: "silent" }),
  });
  return {
    ...cluster,
    stop: async () => {
      await cluster.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** The named backend, whatever the environment says (the differential conformance suite starts both). */
export async function startBackend(name: BackendName, opts: TestClusterOptions): Promise<TestCluster> {
  return name === "real" ? startRealCluster(opts) : startLocal(opts);
}

async function startLocal(opts: TestClusterOptions): Promise<TestCluster> {
  const local = await startLocalCluster({ host: "127.0.0.1", port: 0, ...opts });
  return {
    backend: "local",
    kubeconfigPath: local.kubeconfigPath,
    kubeconfigText: local.kubeconfigText,
    clientAs: local.clientAs,
    kubeconfigFor: (context) =>
      onlyUser(local.api.url, local.api.caPem, local.users, context, opts.mapiNamespace),
    registerProductWebhooks: local.registerProductWebhooks,
    settled: () => local.api.settled(),
    counters: () => local.api.counters.snapshot(),
    resetCounters: () => local.api.counters.reset(),
    faults: local.api.faults,
    local,
    diagnostics: async () => "",
    stop: local.stop,
  };
}

function onlyUser(
  server: string,
  caPem: string,
  users: readonly LocalUser[],
  context: string,
  namespace: string,
): string {
  const user = users.find((u) => u.context === context);
  if (!user) throw new Error(`no user ${context} in this cluster's kubeconfig`);
  return renderKubeconfig(server, caPem, [user], namespace, context);
}

let binaries: Promise<Binaries> | undefined;

const type = (group: string, version: string, kind: string, plural: string, namespaced: boolean) =>
  ({ group, version, kind, plural, namespaced }) as ResourceType;
const CLUSTER_ROLE_BINDING = type(
  "rbac.authorization.k8s.io",
  "v1",
  "ClusterRoleBinding",
  "clusterrolebindings",
  false,
);
export const SERVICE_ACCOUNT = type("", "v1", "ServiceAccount", "serviceaccounts", true);

/** kubectl as the bootstrap admin, with its own discovery cache (never the user's). */
async function kubectl(cp: ControlPlane, kubeconfig: string, args: string[]): Promise<string> {
  const { stdout } = await run(
    "/usr/bin/kubectl",
    ["--kubeconfig", kubeconfig, "--cache-dir", join(cp.dir, "kubectl-cache"), ...args],
    { env: { PATH: "/usr/bin:/bin", HOME: cp.dir }, maxBuffer: 16 * 1024 * 1024 },
  ).catch((e: { stderr?: string; message: string }) => {
    throw new Error(`kubectl ${args.join(" ")}: ${e.stderr || e.message}`);
  });
  return stdout;
}

async function startRealCluster(opts: TestClusterOptions): Promise<TestCluster> {
  binaries ??= ensureBinaries();
  const bootstrapOf = (cp: { url: string; caPem: string; bootstrapToken: string }) => {
    const user: LocalUser = {
      context: "bootstrap",
      username: "system:admin",
      groups: ["system:masters"],
      token: cp.bootstrapToken,
    };
    const text = renderKubeconfig(cp.url, cp.caPem, [user], "default", "bootstrap");
    return { text, client: connect({ kubeconfigText: text, context: "bootstrap" }).client };
  };
  const crds = await loadProjectCrds();
  const cp = await startControlPlane(await binaries, async (early) => {
    const { client } = bootstrapOf(early);
    for (const crd of crds) await createIfMissing(client, KINDS.customResourceDefinition, crd);
    for (const crd of crds) await waitEstablished(client, String(crd.metadata?.name));
  });
  let defaulter: AwsMachineDefaulter | undefined;
  let stopProxy: (() => Promise<void>) | undefined;
  try {
    const { text: bootstrapText, client: bootstrap } = bootstrapOf(cp);
    const bootstrapKubeconfig = join(cp.dir, "bootstrap.kubeconfig");
    await writeFile(bootstrapKubeconfig, bootstrapText, { mode: 0o600 });

    // OpenShift's cluster admins: the `system:cluster-admins` group, bound to cluster-admin.
    await bootstrap.create(CLUSTER_ROLE_BINDING, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "cluster-admins" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:cluster-admins" }],
    });
    for (const ns of [opts.mapiNamespace, opts.capiNamespace])
      await createIfMissing(bootstrap, KINDS.namespace, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: ns },
      });

    const gate = featureGate();
    const created = await createIfMissing(bootstrap, KINDS.featureGate, gate);
    if (created) await bootstrap.updateStatus(KINDS.featureGate, { ...created, status: gate.status });

    // The product's RBAC as shipped, the installer's as shipped, and the stand-ins' controllers' roles.
    await kubectl(cp, bootstrapKubeconfig, [
      "apply",
      "-f",
      join(REPO, "manifests/base/serviceaccount.yaml"),
      "-f",
      join(REPO, "manifests/base/rbac.yaml"),
      "-f",
      join(REPO, "src/local/providers-rbac.yaml"),
    ]);
    await applyInstallerRbac(cp, bootstrapKubeconfig);

    // Tokens from the TokenRequest API for every ServiceAccount identity; kube:admin's is static.
    const users: LocalUser[] = [];
    for (const u of localUsers(opts)) {
      if (u.context === "admin") {
        users.push({ ...u, token: cp.adminToken });
        continue;
      }
      const [, , namespace, name] = u.username.split(":");
      if (!namespace || !name) throw new Error(`not a ServiceAccount: ${u.username}`);
      await createIfMissing(bootstrap, SERVICE_ACCOUNT, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace },
      });
      const res = await curl(
        `${cp.url}/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
        cp.bootstrapToken,
        cp.caPem,
        {
          method: "POST",
          body: {
            apiVersion: "authentication.k8s.io/v1",
            kind: "TokenRequest",
            spec: { expirationSeconds: 86_400 },
          },
        },
      );
      const token = isRecord(res.body) && isRecord(res.body.status) ? res.body.status.token : undefined;
      if (res.status !== 201 || typeof token !== "string")
        throw new Error(`TokenRequest for ${u.username}: ${res.status} ${JSON.stringify(res.body)}`);
      users.push({ ...u, token });
    }

    // The tests' clients reach the API server through the fault proxy (counting, and injecting on demand).
    const proxy = await startFaultProxy({
      upstream: cp.url,
      upstreamCaPem: cp.caPem,
      serving: issueServingCertificate(cp.ca, ["127.0.0.1", "localhost"]),
      users: new Map(users.map((u) => [u.token, u.username])),
    });
    stopProxy = proxy.stop;
    await mkdir(opts.stateDir, { recursive: true });
    const kubeconfigText = renderKubeconfig(proxy.url, cp.caPem, users, opts.mapiNamespace);
    const kubeconfigPath = resolve(join(opts.stateDir, "kubeconfig"));
    await writeFile(kubeconfigPath, kubeconfigText, { mode: 0o600 });
    const clientAs = clientsOf(kubeconfigText);

    defaulter = await startRegisteredAwsMachineDefaulter(bootstrap);
    const stopDefaulter = defaulter.stop;

    return {
      backend: "real",
      kubeconfigPath,
      kubeconfigText,
      clientAs,
      kubeconfigFor: (context) => onlyUser(proxy.url, cp.caPem, users, context, opts.mapiNamespace),
      registerProductWebhooks: (baseUrl) =>
        putProductWebhooks(bootstrap, (manifest) =>
          urlWebhookConfiguration(
            localWebhookConfiguration(manifest, { ...opts, caPem: opts.webhookCaPem }),
            baseUrl,
          ),
        ),
      settled: async () => {},
      counters: () => proxy.counters.snapshot(),
      resetCounters: () => proxy.counters.reset(),
      faults: proxy.faults,
      diagnostics: async () =>
        `--- kube-apiserver ---\n${await cp.logTail("kube-apiserver", 30)}\n` +
        `--- kube-controller-manager ---\n${await cp.logTail("kube-controller-manager", 30)}`,
      async stop() {
        await stopDefaulter();
        await proxy.stop();
        await cp.stop();
      },
    };
  } catch (e) {
    await defaulter?.stop();
    await stopProxy?.();
    const logs = await cp.logTail("kube-apiserver", 30);
    await cp.stop();
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- kube-apiserver ---\n${logs}`);
  }
}

/** The installer's RBAC objects from manifests/installer as shipped (its Deployment has nothing to run). */
async function applyInstallerRbac(cp: ControlPlane, kubeconfig: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "mam-installer-rbac-"));
  try {
    const yaml = await kubectl(cp, kubeconfig, [
      "create",
      "--dry-run=client",
      "-o",
      "yaml",
      "-f",
      join(REPO, "manifests/installer/installer.yaml"),
    ]);
    const { parseAllDocuments, stringify } = await import("yaml");
    const rbac = parseAllDocuments(yaml)
      .flatMap((d) => {
        const v = d.toJS() as unknown;
        return isRecord(v) && v.kind === "List" && Array.isArray(v.items) ? v.items : [v];
      })
      .filter(
        (o): o is KubeObject =>
          isRecord(o) &&
          ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"].includes(
            String(o.kind),
          ),
      );
    const file = join(dir, "installer-rbac.yaml");
    await writeFile(file, rbac.map((o) => stringify(o)).join("---\n"));
    await kubectl(cp, kubeconfig, ["apply", "-f", file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A webhook configuration that calls `baseUrl` + each webhook's service path, as an out-of-cluster webhook. */
export function urlWebhookConfiguration(config: KubeObject, baseUrl: string): KubeObject {
  const copy = structuredClone(config);
  for (const webhook of Array.isArray(copy.webhooks) ? copy.webhooks.filter(isRecord) : []) {
    const clientConfig = isRecord(webhook.clientConfig) ? webhook.clientConfig : {};
    const service = isRecord(clientConfig.service) ? clientConfig.service : {};
    const path = typeof service.path === "string" ? service.path : "/";
    webhook.clientConfig = { url: `${baseUrl}${path}`, caBundle: clientConfig.caBundle };
  }
  return copy;
}

async function waitEstablished(client: KubeClient, name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const crd = await client.get(KINDS.customResourceDefinition, "", name).catch(() => undefined);
    if (crd && conditionOf(crd, "Established")?.status === "True") return;
    if (Date.now() > deadline) throw new Error(`CRD ${name} not Established after 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
