/**
 * Bench child: the simulated providers of SPEC §1.1 (MAO, CAPI and CAPA stand-ins with the instance ledger),
 * each under its own identity, in their own process so their work does not share the product's event loop
 * and their writes are told apart by user in the API server's counters. argv: <kubeconfig file>.
 */
import { pino } from "pino";
import { connect } from "../src/kube/config.js";
import { createInstanceLedger, startSimulatedProviders } from "../src/simulate/index.js";
import { serveParent } from "./ipc.js";
import { NAMESPACES } from "./population.js";

const [kubeconfigPath] = process.argv.slice(2);
if (!kubeconfigPath) throw new Error("usage: providers.ts <kubeconfig>");
const logger = pino({ level: "silent" });
const as = (context: string) => connect({ kubeconfigPath, context });
const providers = await startSimulatedProviders({
  connections: { mao: as("mao"), capi: as("capi"), capa: as("capa") },
  ...NAMESPACES,
  logger,
  ledger: createInstanceLedger({ logger }),
  provisioningDelayMs: 0,
});

serveParent(
  { pid: process.pid },
  {
    idle: () => [providers.mao, providers.capi, providers.infraProvider].every((s) => s.idle()),
    instances: () => providers.ledger.snapshot().instances.length,
  },
  () => providers.stop(),
);
