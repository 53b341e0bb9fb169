/**
 * Bench child: the API server the bench measures against, in its own process, so the product's controllers
 * and the load they put on it are measured across a real process boundary. By default the local API server
 * (src/local/cluster.ts: CRDs, namespaces, feature gate, CAPA defaulter, the product's webhook
 * configurations); with `--real` the real control plane (etcd, kube-apiserver, kube-controller-manager built
 * from Kubernetes' modules, test/cluster/backend.ts) set up the same way, its clients going through the
 * test backend's counting proxy (issue 25: "run the scale benchmark against the real control plane too").
 * Commands: `seed` (population.ts: written straight to storage locally, created through the API on the real
 * one), `register` (point the product webhooks at a URL), `counters`/`reset` (request counters), `cpuMs`
 * (this process; on the real one etcd, kube-apiserver and kube-controller-manager, without the proxy).
 * argv: <state dir> <webhook CA PEM file> [--real].
 */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { pino } from "pino";
import type { CounterSnapshot } from "../src/apiserver/faults.js";
import { KINDS, type ResourceType } from "../src/kube/kinds.js";
import type { KubeObject } from "../src/kube/object.js";
import { createIfMissing, startLocalCluster } from "../src/local/cluster.js";
import { startBackend } from "../test/cluster/backend.js";
import { CONTROLLER_USERS } from "./identities.js";
import { type Handler, serveParent } from "./ipc.js";
import { NAMESPACES, population } from "./population.js";

const [stateDir, caFile, ...flags] = process.argv.slice(2);
if (!stateDir || !caFile) throw new Error("usage: apiserver.ts <state dir> <webhook CA file> [--real]");
const options = {
  ...NAMESPACES,
  controllerUsers: CONTROLLER_USERS,
  webhookCaPem: await readFile(caFile, "utf8"),
  logger: pino({ level: "silent" }),
};
const keyOf = (o: KubeObject): string =>
  `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
const seeded = new Set<string>();

/** The population's kinds, for creating them through the API. */
const TYPES: Record<string, ResourceType> = {
  Infrastructure: KINDS.infrastructure,
  Cluster: KINDS.capiCluster,
  AWSCluster: KINDS.awsCluster,
  "machine.openshift.io/v1beta1/Machine": KINDS.mapiMachine,
  "cluster.x-k8s.io/v1beta1/Machine": KINDS.capiMachine,
  AWSMachine: KINDS.awsMachine,
};
const typeOf = (o: KubeObject): ResourceType => {
  const t = TYPES[`${o.apiVersion}/${o.kind}`] ?? TYPES[String(o.kind)];
  if (!t) throw new Error(`bench seed: no resource type for ${o.apiVersion} ${o.kind}`);
  return t;
};

/** CPU seconds (user + system) of the processes running one of `binaries`, from /proc, in ms. */
const cpuOfBinaries = (binaries: readonly string[]): number => {
  const tick = 100; // USER_HZ on Linux
  let ms = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
      if (!binaries.some((b) => cmd.endsWith(`/${b}`))) continue;
      // Fields after the command's closing parenthesis: state is 3rd, utime 14th, stime 15th (1-based).
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ms += ((Number(fields[11]) + Number(fields[12])) * 1000) / tick;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ms;
};

const minus = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(a)
      .map(([k, v]) => [k, v - (b[k] ?? 0)] as const)
      .filter(([, v]) => v !== 0),
  );
const since = (now: CounterSnapshot, base: CounterSnapshot | undefined): CounterSnapshot =>
  base
    ? {
        total: now.total - base.total,
        byVerb: minus(now.byVerb, base.byVerb),
        byResource: minus(now.byResource, base.byResource),
        byUser: minus(now.byUser, base.byUser),
        byKey: minus(now.byKey, base.byKey),
        failures: minus(now.failures, base.failures),
      }
    : now;

if (flags.includes("--real")) {
  const cluster = await startBackend("real", { stateDir, ...options });
  const admin = cluster.clientAs("admin");
  let base: CounterSnapshot | undefined;
  const seed: Handler = async ({ n }) => {
    let created = 0;
    for (const o of population(Number(n))) {
      const key = keyOf(o);
      if (seeded.has(key)) continue;
      seeded.add(key);
      const type = typeOf(o);
      const made = await createIfMissing(admin, type, o);
      if (made && o.status !== undefined) await admin.updateStatus(type, { ...made, status: o.status });
      created++;
    }
    return created;
  };
  serveParent(
    { url: "real control plane", kubeconfigText: cluster.kubeconfigText },
    {
      seed,
      machines: async () =>
        (await admin.list(KINDS.mapiMachine, { namespace: NAMESPACES.mapiNamespace })).items.length,
      register: ({ url }) => cluster.registerProductWebhooks(String(url)),
      counters: () => since(cluster.counters(), base),
      reset: () => {
        base = cluster.counters();
      },
      settled: () => cluster.settled(),
      // The control plane's own processes: the counting proxy this process runs in front of it is the
      // bench's, not kube's, and is left out.
      cpuMs: () => cpuOfBinaries(["etcd", "kube-apiserver", "kube-controller-manager"]),
    },
    () => cluster.stop(),
  );
} else {
  const local = await startLocalCluster({
    host: "127.0.0.1",
    port: 0,
    stateDir,
    ...options,
    bookmarkIntervalMs: 5_000,
  });
  serveParent(
    { url: local.api.url, kubeconfigText: local.kubeconfigText },
    {
      seed: ({ n }) => {
        let created = 0;
        for (const o of population(Number(n))) {
          const key = keyOf(o);
          if (seeded.has(key)) continue;
          seeded.add(key);
          local.api.store.create(o);
          created++;
        }
        return created;
      },
      machines: () => local.api.store.list(KINDS.mapiMachine, NAMESPACES.mapiNamespace).length,
      register: ({ url }) => local.registerProductWebhooks(String(url)),
      counters: () => local.api.counters.snapshot(),
      reset: () => local.api.counters.reset(),
      settled: () => local.api.settled(),
    },
    () => local.stop(),
  );
}
