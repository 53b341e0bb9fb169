/**
 * Bench child: the local API server (src/local/cluster.ts: CRDs, namespaces, feature gate, CAPA defaulter,
 * the product's webhook configurations) in its own process, so the product's controllers and the load they
 * put on it are measured across a real process boundary. Commands: `seed` (population.ts, written straight
 * to storage), `register` (point the product webhooks at a URL), `counters`/`reset` (request counters).
 * argv: <state dir> <webhook CA PEM file>.
 */
import { readFile } from "node:fs/promises";
import { pino } from "pino";
import { KINDS } from "../src/kube/kinds.js";
import { startLocalCluster } from "../src/local/cluster.js";
import { CONTROLLER_USERS } from "./identities.js";
import { serveParent } from "./ipc.js";
import { NAMESPACES, population } from "./population.js";

const [stateDir, caFile] = process.argv.slice(2);
if (!stateDir || !caFile) throw new Error("usage: apiserver.ts <state dir> <webhook CA file>");
const local = await startLocalCluster({
  host: "127.0.0.1",
  port: 0,
  stateDir,
  ...NAMESPACES,
  controllerUsers: CONTROLLER_USERS,
  webhookCaPem: await readFile(caFile, "utf8"),
  logger: pino({ level: "silent" }),
  bookmarkIntervalMs: 5_000,
});
const seeded = new Set<string>();

serveParent(
  { url: local.api.url, kubeconfigText: local.kubeconfigText },
  {
    seed: ({ n }) => {
      let created = 0;
      for (const o of population(Number(n))) {
        const key = `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
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
