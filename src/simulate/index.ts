/**
 * The simulated providers of SPEC §1.1, for local mode and tests only: MAO, Cluster API and the platform's
 * infrastructure provider (CAPA on AWS, CAPO on OpenStack, CAPIBM on PowerVS) stand-ins, each a separate
 * "process" with its own identity's connection, cache and (optionally) leader election, sharing one instance
 * ledger — the simulated cloud. One cluster has one platform (`platform`, default AWS), so one
 * infrastructure provider runs. `startSimulatedProviders` starts the three; `startMaoStandIn` /
 * `startCapiStandIn` / `startCapaStandIn` / `startCapoStandIn` / `startCapibmStandIn` (or
 * `startInfraProviderStandIn` for the platform's) start one, so a test can crash and restart it on its own.
 * Refusing them in a cluster is the composition root's job (src/main.ts).
 */
import type { Logger } from "pino";
import type { Cache } from "../kube/cache.js";
import type { Clock } from "../kube/clock.js";
import { systemClock } from "../kube/clock.js";
import type { KubeConnection } from "../kube/config.js";
import { connect } from "../kube/config.js";
import type { Controller } from "../kube/controller.js";
import { childLogger } from "../logging.js";
import { awsPlatform } from "../platforms/aws/index.js";
import { openstackPlatform } from "../platforms/openstack/index.js";
import { powervsPlatform } from "../platforms/powervs/index.js";
import { DEFAULT_PLATFORM } from "../platforms/registry.js";
import type { PlatformConverter } from "../sync/conversion/platform.js";
import { capaControllers } from "./capa.js";
import { capiControllers } from "./capi.js";
import { capibmControllers } from "./capibm.js";
import { capoControllers } from "./capo.js";
import { cloudOf } from "./clouds.js";
import type { InstanceLedger } from "./ledger.js";
import { createInstanceLedger } from "./ledger.js";
import { maoControllers } from "./mao.js";
import type { LeaseTimings, RunningStandIn } from "./runtime.js";
import { startStandIn } from "./runtime.js";

export type { SimulatedCloud } from "./clouds.js";
export { AWS_CLOUD, cloudOf, OPENSTACK_CLOUD, POWERVS_CLOUD } from "./clouds.js";
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
  capo: "controller-leader-elect-capo-simulated",
  capibm: "controller-leader-elect-capibm-simulated",
});

/** The name of an infrastructure provider stand-in: its log name and its local kubeconfig context. */
export type InfraProviderName = "capa" | "capo" | "capibm";

/** An infrastructure provider stand-in: its name, its Lease, and its controllers over a cache. */
export interface InfraProviderStandIn {
  name: InfraProviderName;
  leaseName: string;
  controllers(
    deps: { connection: KubeConnection; namespace: string; ledger: InstanceLedger; clock: Clock },
    cache: Cache,
    logger: Logger,
  ): Controller[];
}

/** Each platform's infrastructure provider stand-in, by Infrastructure platform type. */
const INFRA_PROVIDERS: Readonly<Record<string, InfraProviderStandIn>> = Object.freeze({
  AWS: { name: "capa", leaseName: STAND_IN_LEASES.capa, controllers: capaControllers },
  OpenStack: { name: "capo", leaseName: STAND_IN_LEASES.capo, controllers: capoControllers },
  PowerVS: { name: "capibm", leaseName: STAND_IN_LEASES.capibm, controllers: capibmControllers },
});

/** The infrastructure provider stand-in of `platform`; a platform without one has no simulated providers. */
export const infraProviderOf = (platform: PlatformConverter): InfraProviderStandIn => {
  const provider = INFRA_PROVIDERS[platform.platform];
  if (!provider)
    throw new Error(
      `no simulated infrastructure provider for platform ${JSON.stringify(platform.platform)}: supported are ${Object.keys(INFRA_PROVIDERS).join(", ")}`,
    );
  return provider;
};

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
  /**
   * The cluster's platform (default AWS): the cloud MAO's actuator launches in, the infrastructure kinds
   * Cluster API watches, and which infrastructure provider runs.
   */
  platform?: PlatformConverter;
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
          cloud: cloudOf(o.platform ?? DEFAULT_PLATFORM),
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
          platform: o.platform ?? DEFAULT_PLATFORM,
          ...(o.newName ? { newName: o.newName } : {}),
        },
        cache,
        logger,
      ),
  });
}

/** The infrastructure provider stand-in of `o.platform` (default AWS: CAPA), under its own Lease. */
export function startInfraProviderStandIn(o: StandInCommon): Promise<RunningStandIn> {
  const clock = o.clock ?? systemClock;
  const provider = infraProviderOf(o.platform ?? DEFAULT_PLATFORM);
  return startStandIn({
    name: provider.name,
    connection: o.connection,
    logger: o.logger,
    clock,
    leaderElection: leaderElectionFor(o, o.capiNamespace, provider.leaseName),
    controllers: (cache, logger) =>
      provider.controllers(
        { connection: o.connection, namespace: o.capiNamespace, ledger: o.ledger, clock },
        cache,
        logger,
      ),
  });
}

/** The CAPA stand-in (AWS). */
export const startCapaStandIn = (o: Omit<StandInCommon, "platform">): Promise<RunningStandIn> =>
  startInfraProviderStandIn({ ...o, platform: awsPlatform });

/** The CAPO stand-in (OpenStack). */
export const startCapoStandIn = (o: Omit<StandInCommon, "platform">): Promise<RunningStandIn> =>
  startInfraProviderStandIn({ ...o, platform: openstackPlatform });

/** The CAPIBM stand-in (PowerVS). */
export const startCapibmStandIn = (o: Omit<StandInCommon, "platform">): Promise<RunningStandIn> =>
  startInfraProviderStandIn({ ...o, platform: powervsPlatform });

export interface SimulatedProvidersOptions {
  /**
   * One connection per identity (SPEC §1.1): local mode's contexts `mao`, `capi`, and the platform's
   * infrastructure provider's (`capa` on AWS, `capo` on OpenStack, `capibm` on PowerVS; only that one is
   * needed).
   */
  connections: { mao: KubeConnection; capi: KubeConnection } & Partial<
    Record<InfraProviderName, KubeConnection>
  >;
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
  /** The cluster's platform (default AWS): which infrastructure provider runs, and the cloud of all three. */
  platform?: PlatformConverter;
}

export interface SimulatedProviders {
  ledger: InstanceLedger;
  mao: RunningStandIn;
  capi: RunningStandIn;
  /** The platform's infrastructure provider (CAPA, CAPO or CAPIBM); its `name` says which. */
  infraProvider: RunningStandIn;
  stop(): Promise<void>;
}

export async function startSimulatedProviders(opts: SimulatedProvidersOptions): Promise<SimulatedProviders> {
  const platform = opts.platform ?? DEFAULT_PLATFORM;
  const provider = infraProviderOf(platform);
  const providerConnection = opts.connections[provider.name];
  if (!providerConnection)
    throw new Error(
      `simulated providers on ${platform.platform} need a connection for ${provider.name} (connections.${provider.name})`,
    );
  const logger = childLogger(opts.logger, "simulated-providers");
  const ledger = opts.ledger ?? createInstanceLedger({ logger: childLogger(logger, "cloud") });
  const common = {
    mapiNamespace: opts.mapiNamespace,
    capiNamespace: opts.capiNamespace,
    logger,
    ledger,
    platform,
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
    const infraProvider = await startInfraProviderStandIn({ ...common, connection: providerConnection });
    started.push(infraProvider);
    return {
      ledger,
      mao,
      capi,
      infraProvider,
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
 * infrastructure provider (`capa`, `capo` on OpenStack, `capibm` on PowerVS) contexts of the local kubeconfig
 * (src/local/identities.ts). Start it after the demo seed is written: the seed writes status with the
 * resourceVersion of its own create, which a stand-in's first write would otherwise make stale.
 */
export function startLocalSimulatedProviders(opts: {
  kubeconfigText: string;
  mapiNamespace: string;
  capiNamespace: string;
  logger: Logger;
  ledger: InstanceLedger;
  provisioningDelayMs?: number;
  /** The cluster's platform (default AWS). */
  platform?: PlatformConverter;
}): Promise<SimulatedProviders> {
  const platform = opts.platform ?? DEFAULT_PLATFORM;
  const provider = infraProviderOf(platform).name;
  const as = (context: string) => connect({ kubeconfigText: opts.kubeconfigText, context });
  return startSimulatedProviders({
    connections: { mao: as("mao"), capi: as("capi"), [provider]: as(provider) },
    mapiNamespace: opts.mapiNamespace,
    capiNamespace: opts.capiNamespace,
    logger: opts.logger,
    ledger: opts.ledger,
    platform,
    leaderElection: true,
    // Slow enough that a person watching `kubectl get machines -w` sees Provisioning.
    provisioningDelayMs: opts.provisioningDelayMs ?? 2_000,
  });
}
