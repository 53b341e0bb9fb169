/**
 * The product as it runs in a cluster, for e2e tests on the real control plane (SPEC §8.1): a
 * `tsx src/cli.ts serve --kubeconfig F` process whose kubeconfig holds only its ServiceAccount's token,
 * its webhook registered by URL with the shipped configurations, the demo seed written as a cluster admin
 * and MAO would, and the simulated providers (SPEC §1.1) running in the test process under their own
 * controllers' identities — the cluster's, not the product's, business.
 *
 * `startClusterProduct` returns what test/e2e/helpers.ts `startProduct` returns for local mode (a kubeconfig
 * for kubectl as `kube:admin`, the webhook URL, the process), plus the ledger, so one e2e file can drive
 * either.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { SETTINGS } from "../../src/config.js";
import { seedDemo } from "../../src/local/demo.js";
import { webhookSans, writeDevelopmentCertificates } from "../../src/server/certs.js";
import {
  createInstanceLedger,
  type InstanceLedger,
  type SimulatedProviders,
  startLocalSimulatedProviders,
} from "../../src/simulate/index.js";
import { spawnServe } from "../e2e/helpers.js";
import { startTestCluster, type TestCluster } from "./backend.js";

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";

export interface ProductProcess {
  child: ChildProcess;
  webhookUrl: string;
  /** The metrics listener (SPEC §2.1): its own port, scrapes authorized by TokenReview + SubjectAccessReview. */
  metricsUrl: string;
  output(): string;
  /** SIGTERM (graceful: the Lease is released) or SIGKILL (a crash), and wait for the exit. */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
}

export interface ClusterProduct {
  dir: string;
  cluster: TestCluster;
  /** kubectl's kubeconfig: every context, `admin` (kube:admin, a cluster admin) current. */
  kubeconfig: string;
  webhookUrl: string;
  processes: ProductProcess[];
  ledger?: InstanceLedger;
  /** Starts one more replica of the product on the same cluster (leader election decides who acts). */
  startReplica(extra?: readonly string[]): Promise<ProductProcess>;
  /** Points the webhook configurations at this replica. */
  routeWebhooksTo(p: ProductProcess): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterProductOptions {
  /** Run the MAO/CAPI/CAPA stand-ins (default true); false when the test plays MAO itself. */
  simulateProviders?: boolean;
  /** Extra `serve` flags for every replica (e.g. short leader-election timings). */
  serveArgs?: readonly string[];
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startClusterProduct(
  name: string,
  options: ClusterProductOptions = {},
): Promise<ClusterProduct> {
  const dir = await mkdtemp(join(tmpdir(), `mam-cluster-${name}-`));
  const certs = await writeDevelopmentCertificates(
    join(dir, "certs"),
    webhookSans("machine-api-migration", CAPI_NS),
  );
  const ns = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
  const cluster = await startTestCluster({
    stateDir: join(dir, "state"),
    ...ns,
    controllerUsers: SETTINGS.controllerUsers.default,
    webhookCaPem: certs.ca.certPem,
    logger: pino({ level: "silent" }),
  });
  const productKubeconfig = join(dir, "product.kubeconfig");
  await writeFile(productKubeconfig, cluster.kubeconfigFor("controller"), { mode: 0o600 });
  const processes: ProductProcess[] = [];
  let simulated: SimulatedProviders | undefined;

  const startReplica = async (extra: readonly string[] = []): Promise<ProductProcess> => {
    const serve = await spawnServe(
      [
        "--kubeconfig",
        productKubeconfig,
        "--webhook-host",
        "127.0.0.1",
        "--webhook-port",
        "0",
        "--tls-cert-file",
        certs.certFile,
        "--tls-key-file",
        certs.keyFile,
        "--tls-ca-file",
        certs.caFile,
        "--shutdown-delay",
        "0",
        ...(options.serveArgs ?? []),
        ...extra,
      ],
      dir,
    );
    const { child, output } = serve;
    const exited = new Promise<void>((r) => {
      if (child.exitCode !== null || child.signalCode !== null) r();
      else child.once("exit", () => r());
    });
    const [, webhookUrl, metricsUrl] = /^ready: webhook=(\S+) metrics=(\S+)/.exec(serve.ready) ?? [];
    if (!webhookUrl || !metricsUrl) {
      child.kill("SIGKILL");
      throw new Error(`the product did not become ready against the cluster:\n${output()}`);
    }
    const p: ProductProcess = {
      child,
      webhookUrl,
      metricsUrl,
      output,
      async stop(signal = "SIGTERM") {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill(signal);
          await Promise.race([exited, pause(10_000)]);
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
          await exited;
        }
      },
    };
    processes.push(p);
    return p;
  };

  try {
    const first = await startReplica();
    await cluster.registerProductWebhooks(first.webhookUrl);
    const simulate = options.simulateProviders ?? true;
    // As local mode does: with the stand-ins running the seed leaves provisioning to them and the sync.
    await seedDemo(cluster, ns, { provisioned: !simulate });
    const ledger = simulate ? createInstanceLedger() : undefined;
    if (ledger)
      simulated = await startLocalSimulatedProviders({
        kubeconfigText: cluster.kubeconfigText,
        ...ns,
        logger: pino({ level: "silent" }),
        ledger,
        provisioningDelayMs: 200,
      });
    return {
      dir,
      cluster,
      kubeconfig: cluster.kubeconfigPath,
      webhookUrl: first.webhookUrl,
      processes,
      ...(ledger ? { ledger } : {}),
      startReplica,
      routeWebhooksTo: (p) => cluster.registerProductWebhooks(p.webhookUrl),
      async stop() {
        await simulated?.stop();
        await Promise.all(processes.map((p) => p.stop("SIGKILL")));
        await cluster.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await Promise.all(processes.map((p) => p.stop("SIGKILL")));
    await cluster.stop();
    throw e;
  }
}
