/**
 * The simulated providers of SPEC §1.1, for local mode and tests only: MAO, Cluster API and CAPA
 * stand-ins, each a separate "process" with its own identity's connection, cache and (optionally) leader
 * election, sharing one instance ledger — the simulated cloud. `startSimulatedProviders` starts all three;
 * `startMaoStandIn` / `startCapiStandIn` / `startCapaStandIn` start one, so a test can crash and restart
 * it on its own. Refusing them in a cluster is the composition root's job (src/main.ts).
 */
import type { Logger } from "pino";
import type { Clock } from "../kube/clock.js";
import { systemClock } from "../kube/clock.js";
import type { KubeConnection } from "../kube/config.js";
import { connect } from "../kube/config.js";
import { childLogger } from "../logging.js";
import { capaControllers } from "./capa.js";
import { capiControllers } from "./capi.js";
import type { InstanceLedger } from "./ledger.js";
import { createInstanceLedger } from "./ledger.js";
import { maoControllers } from "./mao.js";
import type { LeaseTimings, RunningStandIn } from "./runtime.js";
import { startStandIn } from "./runtime.js";

export type {
  ExistingMachines,
  InstanceLedger,
  InstanceRecord,
  LedgerEvent,
  LedgerSnapshot,
  UserRequest,
} from "./ledger.js";
export { createInstanceLedger } from "./ledger.js";
export type { LeaseTimings, RunningStandIn } from "./runtime.js";

/** The Lease names the stand-ins campaign for (each in the namespace its real controller runs in). */
const STAND_IN_LEASES = Object.freeze({
  mao: "machine-api-controllers-simulated",
  capi: "controller-leader-election-capi-simulated",
  capa: "controller-leader-elect-capa-simulated",
});

export interface StandInCommon {
  connection: KubeConnection;
  mapiNamespace: string;
  capiNamespace: string;
  logger: Logger;
  ledger: InstanceLedger;
  clock?: Clock;
  /** Campaign for the stand-in's own Lease (local mode); off in most tests. */
  leaderElection?: boolean;
  /** Lease timings when leader-elected (default the runtime's). */
  leaseTimings?: LeaseTimings;
}

const leaderElectionFor = (
  o: StandInCommon,
  namespace: string,
  leaseName: string,
): ({ namespace: string; leaseName: string } & LeaseTimings) | undefined =>
  o.leaderElection ? { namespace, leaseName, ...o.leaseTimings } : undefined;

export function startMaoStandIn(
  o: StandInCommon & { provisioningDelayMs?: number },
): Promise<RunningStandIn> {
  const clock = o.clock ?? systemClock;
  return startStandIn({
    name: "mao",
    connection: o.connection,
    logger: o.logger,
    clock,
    leaderElection: leaderElectionFor(o, o.mapiNamespace, STAND_IN_LEASES.mao),
    controllers: (cache, logger) =>
      maoControllers(
        {
          connection: o.connection,
          namespace: o.mapiNamespace,
          ledger: o.ledger,
          clock,
          provisioningDelayMs: o.provisioningDelayMs ?? 0,
        },
        cache,
        logger,
      ),
  });
}

export function startCapiStandIn(
  o: StandInCommon & { newName?: (machineSet: string) => string },
): Promise<RunningStandIn> {
  const clock = o.clock ?? systemClock;
  return startStandIn({
    name: "capi",
    connection: o.connection,
    logger: o.logger,
    clock,
    leaderElection: leaderElectionFor(o, o.capiNamespace, STAND_IN_LEASES.capi),
    controllers: (cache, logger) =>
      capiControllers(
        {
          connection: o.connection,
          namespace: o.capiNamespace,
          ledger: o.ledger,
          clock,
          ...(o.newName ? { newName: o.newName } : {}),
        },
        cache,
        logger,
      ),
  });
}

export function startCapaStandIn(o: StandInCommon): Promise<RunningStandIn> {
  const clock = o.clock ?? systemClock;
  return startStandIn({
    name: "capa",
    connection: o.connection,
    logger: o.logger,
    clock,
    leaderElection: leaderElectionFor(o, o.capiNamespace, STAND_IN_LEASES.capa),
    controllers: (cache, logger) =>
      capaControllers(
        { connection: o.connection, namespace: o.capiNamespace, ledger: o.ledger, clock },
        cache,
        logger,
      ),
  });
}

export interface SimulatedProvidersOptions {
  /** One connection per identity (SPEC §1.1): local mode's contexts `mao`, `capi`, `capa`. */
  connections: { mao: KubeConnection; capi: KubeConnection; capa: KubeConnection };
  mapiNamespace: string;
  capiNamespace: string;
  logger: Logger;
  clock?: Clock;
  leaderElection?: boolean;
  leaseTimings?: LeaseTimings;
  /** How long a MAPI Machine stays Provisioning once its instance exists (default 0). */
  provisioningDelayMs?: number;
  /** Default: a new ledger that logs one line per instance event on `logger`. */
  ledger?: InstanceLedger;
}

export interface SimulatedProviders {
  ledger: InstanceLedger;
  mao: RunningStandIn;
  capi: RunningStandIn;
  capa: RunningStandIn;
  stop(): Promise<void>;
}

export async function startSimulatedProviders(opts: SimulatedProvidersOptions): Promise<SimulatedProviders> {
  const logger = childLogger(opts.logger, "simulated-providers");
  const ledger = opts.ledger ?? createInstanceLedger({ logger: childLogger(logger, "cloud") });
  const common = {
    mapiNamespace: opts.mapiNamespace,
    capiNamespace: opts.capiNamespace,
    logger,
    ledger,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.leaderElection !== undefined ? { leaderElection: opts.leaderElection } : {}),
    ...(opts.leaseTimings ? { leaseTimings: opts.leaseTimings } : {}),
  };
  const started: RunningStandIn[] = [];
  try {
    const mao = await startMaoStandIn({
      ...common,
      connection: opts.connections.mao,
      ...(opts.provisioningDelayMs !== undefined ? { provisioningDelayMs: opts.provisioningDelayMs } : {}),
    });
    started.push(mao);
    const capi = await startCapiStandIn({ ...common, connection: opts.connections.capi });
    started.push(capi);
    const capa = await startCapaStandIn({ ...common, connection: opts.connections.capa });
    started.push(capa);
    return {
      ledger,
      mao,
      capi,
      capa,
      async stop() {
        await Promise.all(started.map((s) => s.stop({ release: true })));
      },
    };
  } catch (e) {
    await Promise.all(started.map((s) => s.stop()));
    throw e;
  }
}

/**
 * Local mode's one-call start (SPEC §1.1): the three stand-ins leader-elected under the `mao`, `capi` and
 * `capa` contexts of the local kubeconfig (src/local/identities.ts). Start it after the demo seed is
 * written: the seed writes status with the resourceVersion of its own create, which a stand-in's first
 * write would otherwise make stale.
 */
export function startLocalSimulatedProviders(opts: {
  kubeconfigText: string;
  mapiNamespace: string;
  capiNamespace: string;
  logger: Logger;
  ledger: InstanceLedger;
  provisioningDelayMs?: number;
}): Promise<SimulatedProviders> {
  const as = (context: string) => connect({ kubeconfigText: opts.kubeconfigText, context });
  return startSimulatedProviders({
    connections: { mao: as("mao"), capi: as("capi"), capa: as("capa") },
    mapiNamespace: opts.mapiNamespace,
    capiNamespace: opts.capiNamespace,
    logger: opts.logger,
    ledger: opts.ledger,
    leaderElection: true,
    // Slow enough that a person watching `kubectl get machines -w` sees Provisioning.
    provisioningDelayMs: opts.provisioningDelayMs ?? 2_000,
  });
}
