/**
 * The composition root and the only place that wires things together: config → (local mode: embedded API
 * server) → client → shared informer cache → cluster view → policy engine → HTTPS webhook. Signals end it:
 * SIGTERM runs the graceful shutdown of SPEC §7 (readyz false, serve `shutdownDelay` more, drain; meanwhile
 * the controllers stop and the Lease is released once they have drained); SIGINT (a person pressing Ctrl-C
 * in local mode) skips the delay. Nothing here decides anything. Metrics: one registry for the whole process,
 * served on their own listener (SPEC §2.1) — in a cluster only to callers a TokenReview and a
 * SubjectAccessReview admit; in local mode on loopback, to anyone.
 */

import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import { type Config, demoPlatformOf, listenHosts, parseConfig, type RunMode, runMode } from "./config.js";
import { runInstaller } from "./installer/cli.js";
import { seedDemoProviders } from "./installer/demo-providers.js";
import { type Cache, createCache } from "./kube/cache.js";
import { systemClock } from "./kube/clock.js";
import { connect, KubeConfigError, type KubeConnection } from "./kube/config.js";
import type { Controller } from "./kube/controller.js";
import { createEventRecorder, type EventRecorder } from "./kube/events.js";
import { KINDS } from "./kube/kinds.js";
import { createLeaderElector, type LeaderElector } from "./kube/leader.js";
import { type LeaderGate, leaderGatedControllers } from "./kube/manager.js";
import { countRestClientRequests, type RuntimeMetrics, runtimeMetrics } from "./kube/metrics.js";
import { type LocalCluster, startLocalCluster } from "./local/cluster.js";
import { seedDemo, seedInfrastructure } from "./local/demo.js";
import { childLogger, createLogger, type LogOutput } from "./logging.js";
import { createMigrationController } from "./migration/controller.js";
import { decide } from "./policies/engine.js";
import type { PolicyContext } from "./policies/types.js";
import { clusterView } from "./policies/view.js";
import { webhookSans, writeDevelopmentCertificates } from "./server/certs.js";
import { anyoneMayScrape, delegatedMetricsAuthorizer } from "./server/metrics-auth.js";
import { type MetricsServer, startMetricsServer } from "./server/metrics-server.js";
import { startWebhookServer, type WebhookServer } from "./server/serve.js";
import { type TlsProfileWatch, watchTlsProfile } from "./server/tls-profile-watch.js";
import { type SimulatedProviders, startLocalSimulatedProviders } from "./simulate/index.js";
import { createInstanceLedger, type InstanceLedger } from "./simulate/ledger.js";
import {
  createPlatformGuard,
  type PlatformGuard,
  readServedPlatform,
  readSupport,
  reportSupport,
  type Support,
  watchSupport,
} from "./supported.js";
import { createMachineSetSyncController, createMachineSyncController } from "./sync/controller.js";
import { checkConvertible, DEFAULT_PLATFORM } from "./sync/conversion/index.js";
import type { PlatformConverter } from "./sync/conversion/platform.js";
import { conversionConverter, memoisingConverter } from "./sync/converter.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The kinds admission reads (SPEC §2.3) and where: each gets one informer in the shared cache. */
export function admissionInformers(
  config: Pick<Config, "mapiNamespace" | "capiNamespace">,
  platform: PlatformConverter = DEFAULT_PLATFORM,
) {
  return [
    [KINDS.mapiMachine, config.mapiNamespace],
    [KINDS.mapiMachineSet, config.mapiNamespace],
    [KINDS.capiMachine, config.capiNamespace],
    [KINDS.capiMachineSet, config.capiNamespace],
    [platform.infraMachine, config.capiNamespace],
    [platform.infraMachineTemplate, config.capiNamespace],
    [platform.infraCluster, config.capiNamespace],
    [KINDS.infrastructure, ""],
  ] as const;
}

/** Local mode generates the webhook's serving certificate when the configured files are missing (issue 2). */
async function ensureDevelopmentCertificates(config: Config, log: Logger): Promise<string> {
  if (!existsSync(config.tlsCertFile) || !existsSync(config.tlsKeyFile) || !existsSync(config.tlsCaFile)) {
    const dir = dirname(config.tlsCertFile);
    const files = await writeDevelopmentCertificates(
      dir,
      webhookSans("machine-api-migration", config.capiNamespace),
    );
    log.info({ dir }, "generated development certificates");
    return files.ca.certPem;
  }
  return readFile(config.tlsCaFile, "utf8");
}

interface Running {
  webhook: WebhookServer;
  metrics: MetricsServer;
  cache: Cache;
  local?: LocalCluster;
  /** Local mode `--with-installer`: the in-process installer and how to stop it. */
  installer?: { abort: AbortController; done: Promise<void> };
  /** The leader elector and the controllers it gates (absent with --no-controllers or an unsupported cluster). */
  leadership?: { elector: LeaderElector; gate: LeaderGate };
  simulated?: SimulatedProviders;
  /** In a cluster: the watch of the cluster's TLS security profile, applied to both listeners (SPEC §2.1). */
  tlsProfile?: TlsProfileWatch;
  /** SPEC §0.1: the supported-cluster checks, re-read for the life of the process. */
  supportWatch?: { stop(): void };
}

async function shutdown(running: Running, log: Logger, graceful: boolean): Promise<void> {
  log.info({ graceful }, "shutting down");
  running.supportWatch?.stop();
  // Both at once (SPEC §7): admission answers readyz false now and drains; the controllers stop now and the
  // Lease is released as soon as their last reconciles have drained (the elector waits for the gate), so a
  // successor leads without waiting for expiry and never beside this replica's last writes.
  const stopLeading = async (): Promise<void> => {
    if (!running.leadership) return;
    await running.leadership.elector.release();
    await running.leadership.gate.drained();
  };
  await Promise.all([stopLeading(), graceful ? running.webhook.beginShutdown() : running.webhook.close()]);
  // Scraped until the end, so the last reconciles and reviews are counted.
  await running.metrics.close();
  await running.simulated?.stop();
  await running.tlsProfile?.stop();
  await running.cache.stop();
  if (running.installer) {
    running.installer.abort.abort();
    await running.installer.done.catch((e: unknown) =>
      log.error({ err: String(e) }, "installer stopped with an error"),
    );
  }
  await running.local?.stop();
}

/**
 * The product's four controllers (SPEC §3, §4) on the shared cache, as the product's identity. They are
 * built (so their informers start and admission's readiness waits for them) but run only while leading.
 */
function buildControllers(
  config: Config,
  connection: KubeConnection,
  cache: Cache,
  registry: Registry,
  events: EventRecorder,
  metrics: RuntimeMetrics,
  log: Logger,
  platformGuard: PlatformGuard,
  platform: PlatformConverter,
): Controller[] {
  const namespaces = { mapiNamespace: config.mapiNamespace, capiNamespace: config.capiNamespace };
  const syncDeps = {
    client: connection.client,
    transport: connection.transport,
    cache,
    converter: memoisingConverter(conversionConverter),
    settings: { ...namespaces, platform },
    events,
    clock: systemClock,
    metrics,
    workers: config.workers,
    platformGuard,
  };
  const controllersLog = childLogger(log, "controllers");
  return [
    createMachineSyncController({ ...syncDeps, logger: controllersLog }),
    createMachineSetSyncController({ ...syncDeps, logger: controllersLog }),
    ...(["Machine", "MachineSet"] as const).map((kind) =>
      createMigrationController({
        kind,
        cache,
        client: connection.client,
        events,
        registry,
        runtimeMetrics: metrics,
        clock: systemClock,
        logger: controllersLog,
        namespaces,
        infraMachineTypes: [platform.infraMachine],
        migrationStuckAfterMs: config.migrationStuckAfter * 1000,
        workers: config.workers,
        platformGuard,
      }),
    ),
  ];
}

/** Where SIGTERM and SIGINT come from: the process, or an emitter in tests. */
export type Signals = Pick<NodeJS.Process, "once" | "removeListener">;

export async function serve(
  args: readonly string[],
  env: Env,
  signals: Signals = process,
  logOutput: LogOutput = { tty: process.stdout.isTTY === true },
): Promise<number> {
  const parsed = parseConfig(args, env);
  if (!parsed.ok) {
    process.stderr.write(`machine-api-migration: ${parsed.error}\n`);
    return 2;
  }
  if (parsed.rest.length > 0) {
    process.stderr.write(`machine-api-migration: unexpected argument ${JSON.stringify(parsed.rest[0])}\n`);
    return 2;
  }
  const config = parsed.config;
  const mode: RunMode = runMode(config, env);
  // Local mode: the demo seed's platform (`demo`: AWS, `demo-openstack`: OpenStack), written before the
  // process reads which platform it serves.
  const demoPlatform = demoPlatformOf(config.seed);
  if (mode !== "local" && config.simulateProviders) {
    process.stderr.write(
      "machine-api-migration: setting simulateProviders (--simulate-providers) is refused in a cluster\n",
    );
    return 2;
  }
  const log = createLogger(config.logLevel, logOutput);
  log.info({ mode }, "starting");

  // Created first: the client's requests are counted from the first one (rest_client_requests_total).
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const runtime = runtimeMetrics(registry);
  const countRequests = { onResponse: countRestClientRequests(runtime) };
  // The controllers read no managedFields: the client's answers come without them, as the cache's do.
  const productClient = { dropManagedFields: true };

  let local: LocalCluster | undefined;
  let connection: KubeConnection;
  if (mode === "local") {
    const webhookCaPem = await ensureDevelopmentCertificates(config, log);
    local = await startLocalCluster({
      host: config.apiHost,
      port: config.apiPort,
      stateDir: config.stateDir,
      mapiNamespace: config.mapiNamespace,
      capiNamespace: config.capiNamespace,
      controllerUsers: config.controllerUsers,
      webhookCaPem,
      logger: log.child({}, { level: config.logLevel === "info" ? "warn" : config.logLevel }),
    });
    connection = connect(
      { kubeconfigText: local.kubeconfigText, context: "controller" },
      countRequests,
      productClient,
    );
  } else {
    try {
      connection =
        mode === "in-cluster"
          ? connect({ inCluster: true }, countRequests, productClient)
          : connect({ kubeconfigPath: config.kubeconfig! }, countRequests, productClient);
    } catch (e) {
      // The message names the setting and the file (src/kube/config.ts): a setting's error, as above.
      if (!(e instanceof KubeConfigError)) throw e;
      process.stderr.write(`machine-api-migration: ${e.message}\n`);
      return 2;
    }
  }

  if (local && demoPlatform !== undefined) await seedInfrastructure(local, config, demoPlatform);
  const support: Support = await readSupport(connection.client);
  const served = await readServedPlatform(connection.client);
  if (served.reason) log.warn({ check: "platform" }, served.reason);
  else log.info({ platform: served.platform.platform }, "serving the cluster's platform");
  const platform = served.platform;
  for (const reason of support.reasons) log.warn({ check: "supported-cluster" }, reason);
  // SPEC §0.1: also say why on the product's own Deployment (best effort; /readyz stays true regardless).
  const events = createEventRecorder({
    client: connection.client,
    component: "machine-api-migration",
    // In a pod the hostname is the pod's name (SPEC §7: Events name the reporting instance).
    reportingInstance: hostname(),
    clock: systemClock,
    logger: log,
  });
  await reportSupport(
    {
      client: connection.client,
      events,
      namespace: config.capiNamespace,
      logger: childLogger(log, "supported-cluster"),
    },
    support,
  );

  const cache = createCache({
    transport: connection.transport,
    logger: childLogger(log, "cache"),
    clock: systemClock,
    watchSilenceTimeoutMs: config.watchSilenceTimeout * 1000,
  });
  for (const [type, namespace] of admissionInformers(config, platform)) cache.informerFor(type, namespace);

  const view = clusterView(cache, config);
  const policy: PolicyContext = {
    view,
    settings: {
      mapiNamespace: config.mapiNamespace,
      capiNamespace: config.capiNamespace,
      controllerUsers: config.controllerUsers,
      requireDeleteConfirmation: config.requireDeleteConfirmation,
      cacheStaleAfterMs: config.cacheStaleAfter * 1000,
    },
    checkConvertible,
    enforcing: support.enforcing,
  };
  // SPEC §0.1: a live read before controller start, every handover step and every deletion write; when it
  // finds the platform's migration controllers running, the product's controllers stop (admission serves on).
  const supportLog = childLogger(log, "supported-cluster");
  let stopControllers: () => void = () => {};
  const platformGuard = createPlatformGuard({
    client: connection.client,
    logger: supportLog,
    onRunning: (reason) => {
      stopControllers();
      void reportSupport(
        { client: connection.client, events, namespace: config.capiNamespace, logger: supportLog },
        { enforcing: true, controllers: false, reasons: [reason] },
      );
    },
  });
  const controllers =
    support.controllers && config.controllers
      ? buildControllers(config, connection, cache, registry, events, runtime, log, platformGuard, platform)
      : [];
  if (!config.controllers) log.info("controllers disabled (--no-controllers): admission only");
  const simulate = mode === "local" && (config.simulateProviders ?? config.controllers);
  const ledger: InstanceLedger | undefined = simulate
    ? createInstanceLedger({ logger: childLogger(log, "simulated-cloud") })
    : undefined;

  // SPEC §2.1: in a cluster the listeners follow the APIServer's TLS profile (watched once both listen, below);
  // not ready until it has been read. Local mode keeps Intermediate.
  let tlsProfile: TlsProfileWatch | undefined;
  const tlsProfileKnown = (): boolean => mode === "local" || (tlsProfile?.synced() ?? false);
  const webhook = await startWebhookServer({
    host: listenHosts(config, mode).webhook,
    port: config.webhookPort,
    certFile: config.tlsCertFile,
    keyFile: config.tlsKeyFile,
    shutdownDelayMs: config.shutdownDelay * 1000,
    deps: {
      decide: (webhookName, request) => decide(webhookName, request, policy),
      logger: childLogger(log, "admission"),
      registry,
      readiness: () =>
        !cache.synced()
          ? { ready: false, reason: "informer caches not synced" }
          : tlsProfileKnown()
            ? { ready: true }
            : { ready: false, reason: "TLS security profile not read yet" },
      // Local mode only (SPEC §2.1): the simulated instance ledger.
      ...(ledger ? { debugRoutes: { instances: () => ledger.snapshot() } } : {}),
    },
  });
  const metricsLog = childLogger(log, "metrics");
  let metrics: MetricsServer;
  try {
    metrics = await startMetricsServer({
      host: listenHosts(config, mode).metrics,
      port: config.metricsPort,
      certFile: config.tlsCertFile,
      keyFile: config.tlsKeyFile,
      registry,
      // SPEC §2.1: in a cluster, as controller-runtime's metrics filter; local mode needs no token.
      authorize:
        mode === "local"
          ? anyoneMayScrape
          : delegatedMetricsAuthorizer({
              transport: connection.transport,
              clock: systemClock,
              logger: metricsLog,
            }),
      logger: metricsLog,
    });
  } catch (e) {
    await webhook.close();
    await cache.stop();
    await local?.stop();
    throw e;
  }
  if (mode !== "local") {
    tlsProfile = watchTlsProfile({
      transport: connection.transport,
      clock: systemClock,
      logger: childLogger(log, "tls-profile"),
      watchSilenceTimeoutMs: config.watchSilenceTimeout * 1000,
      apply: (profile) => {
        webhook.setTlsProfile(profile);
        metrics.setTlsProfile(profile);
      },
    });
  }
  // Set once the stop promise below exists; a change reported before that is remembered.
  let supportChangedEarly = false;
  let supportChanged: () => void = () => {
    supportChangedEarly = true;
  };
  const running: Running = {
    webhook,
    metrics,
    cache,
    ...(local ? { local } : {}),
    ...(tlsProfile ? { tlsProfile } : {}),
  };

  try {
    await cache.waitForSync();
    if (local) {
      await local.registerProductWebhooks(webhook.url);
      // With the stand-ins running, the demo seed leaves provisioning to them (and the sync), as a cluster would.
      if (demoPlatform !== undefined)
        await seedDemo(local, config, { provisioned: !simulate, platform: demoPlatform });
      if (simulate && ledger)
        running.simulated = await startLocalSimulatedProviders({
          kubeconfigText: local.kubeconfigText,
          mapiNamespace: config.mapiNamespace,
          capiNamespace: config.capiNamespace,
          logger: log,
          ledger,
          platform,
        });
      if (config.seed.includes("demo-providers")) await seedDemoProviders(local.clientAs("admin"), config);
      if (config.withInstaller) {
        const abort = new AbortController();
        const done = runInstaller(config, {
          connection: connect({ kubeconfigText: local.kubeconfigText, context: "installer" }),
          logger: log,
          clock: systemClock,
          signal: abort.signal,
        });
        running.installer = { abort, done };
      }
      process.stdout.write(
        `ready: kubeconfig=${local.kubeconfigPath} apiserver=${local.api.url} webhook=${webhook.url} metrics=${metrics.url}\n` +
          `  try: KUBECONFIG=${local.kubeconfigPath} kubectl get machines.machine.openshift.io\n`,
      );
    } else process.stdout.write(`ready: webhook=${webhook.url} metrics=${metrics.url}\n`);
    if (controllers.length > 0) {
      const gate = leaderGatedControllers(controllers, childLogger(log, "controllers"));
      stopControllers = () => gate.onStoppedLeading();
      // SPEC §0.1: the controllers start only after a live read shows the platform's own absent or at zero.
      const startIfClear = async (): Promise<void> => {
        for (;;) {
          if (!elector.isLeader() || platformGuard.tripped()) return;
          try {
            if (await platformGuard.clear("controller start")) {
              if (elector.isLeader()) gate.onStartedLeading();
              return;
            }
            return;
          } catch (e) {
            supportLog.warn(
              { err: e instanceof Error ? e.message : String(e) },
              "could not read the platform's migration controllers before starting; trying again",
            );
            await new Promise((r) => setTimeout(r, config.retryPeriod * 1000));
          }
        }
      };
      const elector: LeaderElector = createLeaderElector({
        client: connection.client,
        namespace: config.capiNamespace,
        name: config.leaseName,
        identity: `${hostname()}_${randomBytes(4).toString("hex")}`,
        leaseDurationMs: config.leaseDuration * 1000,
        renewDeadlineMs: config.renewDeadline * 1000,
        retryPeriodMs: config.retryPeriod * 1000,
        clock: systemClock,
        logger: childLogger(log, "leader-election"),
        metrics: runtime,
        onStartedLeading: () => void startIfClear(),
        onStoppedLeading: gate.onStoppedLeading,
        drained: gate.drained,
      });
      elector.start();
      running.leadership = { elector, gate };
    }
    running.supportWatch = watchSupport({
      client: connection.client,
      started: support,
      intervalMs: config.supportCheckInterval * 1000,
      logger: supportLog,
      onChange: (now) => {
        supportLog.error(
          { check: "supported-cluster", reasons: now.reasons },
          now.enforcing
            ? "the FeatureGate and the MAPI CRDs now support the migration: exiting so that the pod restarts and enforces"
            : "the FeatureGate or the MAPI CRDs no longer support the migration: exiting so that the pod restarts and decides again",
        );
        supportChanged();
      },
      onPlatformControllers: () => {
        if (controllers.length > 0 && !platformGuard.tripped())
          void platformGuard.clear("running controllers").catch(() => undefined);
      },
    });
  } catch (e) {
    await shutdown(running, log, false);
    throw e;
  }

  const signal = await new Promise<"SIGTERM" | "SIGINT" | "supportChanged">((resolve) => {
    const onTerm = (): void => stopOn("SIGTERM");
    const onInt = (): void => stopOn("SIGINT");
    const stopOn = (name: "SIGTERM" | "SIGINT" | "supportChanged"): void => {
      signals.removeListener("SIGTERM", onTerm);
      signals.removeListener("SIGINT", onInt);
      resolve(name);
    };
    signals.once("SIGTERM", onTerm);
    signals.once("SIGINT", onInt);
    supportChanged = () => stopOn("supportChanged");
    if (supportChangedEarly) stopOn("supportChanged");
  });
  await shutdown(running, log, signal !== "SIGINT");
  log.info({ signal }, "stopped");
  // SPEC §0.1: a changed supported-cluster answer exits 0 too, so the pod restarts and decides again.
  return 0;
}
