/**
 * The installer's entry points (SPEC §6). `runInstaller` is the shell of installer mode: informers on the
 * CAPI namespace's ConfigMaps and on `Infrastructure/cluster` feed a one-key controller whose reconcile
 * reads (reader.ts), renders (render.ts), applies and prunes (apply.ts) and reports on the ClusterOperator
 * (status.ts), re-running on every change of a transport or images ConfigMap or of the Infrastructure, after
 * failures, and periodically to repair drift. `runPackProvider` is the `pack-provider` command around
 * pack.ts, and `runInstallerCommand` the `installer` subcommand around `runInstaller`. None reads the
 * environment or exits the process: the caller passes arguments, environment and I/O in.
 */
import { existsSync } from "node:fs";
import pino, { type Logger } from "pino";
import { asksForHelp, type Config, parseCommandLine, settingsUsage } from "../config.js";
import { createCache } from "../kube/cache.js";
import { getOrAbsent } from "../kube/client.js";
import { type Clock, systemClock } from "../kube/clock.js";
import {
  connect,
  KubeConfigError,
  type KubeConnection,
  resolveKubeconfig,
  sourceOf,
} from "../kube/config.js";
import { createController } from "../kube/controller.js";
import { createResourceResolver } from "../kube/discovery.js";
import { CONFIG_API_VERSION, KINDS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { labelsOf, nameOf } from "../kube/object.js";
import { childLogger } from "../logging.js";
import type { ApplyOutcome, PrunePermission } from "./apply.js";
import { applyProviders } from "./apply.js";
import { TRANSPORT_LABELS } from "./model.js";
import { type ComponentsFile, packProvider } from "./pack.js";
import { imagesAndVariables, selectProviders } from "./reader.js";
import { renderProviders } from "./render.js";
import type { RunReport } from "./status.js";
import { clusterOperatorStatus, failingSinceOf, previousKinds } from "./status.js";

/** A failed run is retried this soon (sooner when Degraded is due earlier). */
const RETRY_AFTER_MS = 30_000;
/** A successful run is repeated this often, repairing drift of what was applied. */
export const RESYNC_AFTER_MS = 10 * 60_000;
const KEY = "install";

export interface InstallerRun {
  report: RunReport;
  outcome?: ApplyOutcome;
  statusWritten: boolean;
}

export interface InstallerDeps {
  connection: KubeConnection;
  logger: Logger;
  clock: Clock;
  /** Aborting stops the installer; `runInstaller` then resolves. */
  signal?: AbortSignal;
  /** Called after every run (tests and local mode wait on it). */
  onRun?: (run: InstallerRun) => void;
}

export type InstallerSettings = Pick<
  Config,
  | "capiNamespace"
  | "installerClusterOperator"
  | "installerImagesConfigMap"
  | "installerDegradedAfter"
  | "watchSilenceTimeout"
>;

const isTransportConfigMap = (o: KubeObject): boolean => TRANSPORT_LABELS.name in labelsOf(o);

/** Runs installer mode until `deps.signal` aborts. */
export async function runInstaller(config: InstallerSettings, deps: InstallerDeps): Promise<void> {
  const { connection, clock } = deps;
  const logger = childLogger(deps.logger, "installer");
  const namespace = config.capiNamespace;
  if (deps.signal?.aborted) return;
  const cache = createCache({
    transport: connection.transport,
    logger: childLogger(logger, "cache"),
    clock,
    watchSilenceTimeoutMs: config.watchSilenceTimeout * 1000,
  });
  const configMaps = cache.informerFor(KINDS.configMap, namespace);
  const infrastructures = cache.informerFor(KINDS.infrastructure);
  let failingSince: number | undefined;
  let firstRun = true;

  const reconcile = async (_key: string, context: { signal: AbortSignal }) => {
    const previous = await readClusterOperator(connection, config.installerClusterOperator);
    if (firstRun) failingSince = failingSinceOf(previous);
    firstRun = false;
    const { report, outcome } = await installOnce(config, connection, {
      logger,
      clock,
      signal: context.signal,
      infrastructure: infrastructures.get("", "cluster"),
      configMaps: configMaps.list(namespace),
      previous,
    });
    const now = clock.now();
    if (report.kind === "failed") failingSince ??= now;
    else failingSince = undefined;
    const degradedAfterMs = config.installerDegradedAfter * 1000;
    const { status, changed } = clusterOperatorStatus({
      previous,
      report,
      now,
      failingSinceMs: failingSince,
      degradedAfterMs,
      namespace,
    });
    if (changed && !context.signal.aborted)
      await writeClusterOperatorStatus(connection, config.installerClusterOperator, previous, status);
    logger.info(
      {
        result: report.kind,
        written: outcome?.written.length ?? 0,
        pruned: outcome?.pruned.length ?? 0,
        statusWritten: changed,
      },
      "installer run finished",
    );
    deps.onRun?.({ report, ...(outcome ? { outcome } : {}), statusWritten: changed });
    if (report.kind !== "failed") return { requeueAfterMs: RESYNC_AFTER_MS };
    const untilDegraded = (failingSince ?? now) + degradedAfterMs - now;
    return { requeueAfterMs: untilDegraded > 0 ? Math.min(RETRY_AFTER_MS, untilDegraded) : RETRY_AFTER_MS };
  };

  const controller = createController({ name: "installer", reconcile, clock, logger });
  controller.watch(configMaps, (o) =>
    isTransportConfigMap(o) || nameOf(o) === config.installerImagesConfigMap ? [KEY] : [],
  );
  controller.watch(infrastructures, (o) => (nameOf(o) === "cluster" ? [KEY] : []));
  const stopped = new Promise<void>((resolve) => {
    if (deps.signal?.aborted) resolve();
    deps.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  try {
    await Promise.race([controller.start(), stopped]);
    // Nothing to replay (no ConfigMap, no Infrastructure) must still report: one run at start.
    controller.enqueue(KEY);
    await stopped;
  } finally {
    await controller.stop();
    await cache.stop();
  }
}

interface RunInputs {
  logger: Logger;
  clock: Clock;
  signal: AbortSignal;
  infrastructure: KubeObject | undefined;
  configMaps: KubeObject[];
  previous: KubeObject | undefined;
}

/** One pass: select → render → apply (+ prune when every source was sound) → the report. */
async function installOnce(
  config: Pick<InstallerSettings, "capiNamespace" | "installerImagesConfigMap">,
  connection: KubeConnection,
  inputs: RunInputs,
): Promise<{ report: RunReport; outcome?: ApplyOutcome }> {
  const namespace = config.capiNamespace;
  const selection = selectProviders(inputs.infrastructure, inputs.configMaps, namespace);
  if (selection.kind === "infrastructureUnreadable")
    return { report: { kind: "failed", failures: [selection.reason], appliedKinds: [] } };
  if (selection.kind === "unsupportedPlatform") {
    inputs.logger.info({ platform: selection.platform }, "unsupported platform: nothing to install");
    return { report: { kind: "unsupportedPlatform", platform: selection.platform } };
  }
  const imagesConfigMap = inputs.configMaps.find((c) => nameOf(c) === config.installerImagesConfigMap);
  const { images, variables } = imagesAndVariables(imagesConfigMap);
  const resolver = createResourceResolver(connection.transport);
  const rendered = renderProviders(selection.sources, {
    namespace,
    images,
    variables,
    imagesConfigMap: config.installerImagesConfigMap,
  });
  const problems = [...selection.problems, ...rendered.flatMap((r) => (r.ok ? [] : r.errors))];
  const providers = rendered.flatMap((r) => (r.ok ? [r.provider] : []));
  const prune: PrunePermission =
    problems.length === 0 && providers.length === selection.wanted.length
      ? { allowed: true, labels: providers.map((p) => p.label) }
      : { allowed: false, reason: "a transport ConfigMap is missing or does not render" };
  const outcome = await applyProviders(
    providers,
    {
      namespace,
      prune,
      imagesConfigMap: config.installerImagesConfigMap,
      previousKinds: previousKinds(inputs.previous),
    },
    {
      client: connection.client,
      resolver,
      clock: inputs.clock,
      logger: inputs.logger,
      signal: inputs.signal,
    },
  );
  const failures = [...problems, ...outcome.failures.map((f) => f.message)];
  if (failures.length > 0)
    return { report: { kind: "failed", failures, appliedKinds: outcome.appliedKinds }, outcome };
  return {
    report: {
      kind: "installed",
      providers: providers.map((p) => ({
        label: p.label,
        version: p.version,
        revision: p.revision,
        configMap: p.configMap,
      })),
      leftForManualRemoval: outcome.leftForManualRemoval,
      appliedKinds: outcome.appliedKinds,
    },
    outcome,
  };
}

async function readClusterOperator(
  connection: KubeConnection,
  name: string,
): Promise<KubeObject | undefined> {
  return getOrAbsent(connection.client, KINDS.clusterOperator, "", name);
}

/** Creates the ClusterOperator when missing, then writes its status guarded by the resourceVersion read. */
async function writeClusterOperatorStatus(
  connection: KubeConnection,
  name: string,
  previous: KubeObject | undefined,
  status: Record<string, unknown>,
): Promise<void> {
  const { client } = connection;
  const base =
    previous ??
    (await client.create(KINDS.clusterOperator, {
      apiVersion: CONFIG_API_VERSION,
      kind: "ClusterOperator",
      metadata: { name },
      spec: {},
    }));
  await client.updateStatus(KINDS.clusterOperator, { ...base, status });
}

// -----------------------------------------------------------------------------------------------------------

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

const INSTALLER_USAGE = "usage: installer [--kubeconfig FILE] [--context NAME] [settings…]";

const INSTALLER_HELP = `${INSTALLER_USAGE}

Installer mode (SPEC §6): installs the Cluster API provider components from the transport ConfigMaps
and reports on its ClusterOperator, until SIGTERM/SIGINT. It needs a cluster: --kubeconfig, else
KUBECONFIG, else ~/.kube/config, else the pod's service account (its own Deployment).

  --kubeconfig FILE           kubeconfig of the cluster
  --context NAME              kubeconfig context (default: its current-context)
  -h, --help                  this help

settings (flag, else environment variable, else default):
${settingsUsage([
  "capiNamespace",
  "installerClusterOperator",
  "installerImagesConfigMap",
  "installerDegradedAfter",
  "watchSilenceTimeout",
  "logLevel",
])}`;

/**
 * `cli installer`: the installer's own process (its own Deployment and service account, SPEC §6). It needs a
 * cluster (in-cluster or `--kubeconfig`); local mode runs the installer in-process instead
 * (`npm start -- --with-installer`). Runs until SIGTERM/SIGINT; 2 on bad configuration.
 */
export async function runInstallerCommand(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: CommandIo,
  signals: Pick<NodeJS.Process, "once" | "removeListener"> = process,
  exists: (path: string) => boolean = existsSync,
): Promise<number> {
  if (asksForHelp(args)) {
    io.stdout.write(`${INSTALLER_HELP}\n`);
    return 0;
  }
  const parsed = parseCommandLine(args, env, { context: { type: "string" } });
  if (!parsed.ok) {
    io.stderr.write(`machine-api-migration installer: ${parsed.error}\n${INSTALLER_USAGE}\n`);
    return 2;
  }
  if (parsed.rest.length > 0) {
    io.stderr.write(
      `machine-api-migration installer: unexpected argument ${JSON.stringify(parsed.rest[0])}\n${INSTALLER_USAGE}\n`,
    );
    return 2;
  }
  const config = parsed.config;
  const context = typeof parsed.flags.context === "string" ? parsed.flags.context : undefined;
  // Found as kubectl finds it (SPEC §9): the installer is a command an admin points at a cluster.
  const found = resolveKubeconfig({ explicit: config.kubeconfig, env, exists });
  if (found.kind === "none") {
    io.stderr.write(
      `machine-api-migration installer: installer mode acts on a cluster: run it in a pod or set kubeconfig (--kubeconfig) or KUBECONFIG (${found.reason}); for local mode use \`serve --with-installer\`\n`,
    );
    return 2;
  }
  if (found.kind === "in-cluster" && context) {
    io.stderr.write(
      "machine-api-migration installer: --context needs a kubeconfig (--kubeconfig, KUBECONFIG or ~/.kube/config)\n",
    );
    return 2;
  }
  const mode = found.kind === "in-cluster" ? "in-cluster" : "kubeconfig";
  let connection: KubeConnection;
  try {
    connection = connect(sourceOf(found, context));
  } catch (e) {
    if (!(e instanceof KubeConfigError)) throw e;
    io.stderr.write(`machine-api-migration installer: ${e.message}\n`);
    return 2;
  }
  const logger = pino({ level: config.logLevel, base: { component: "machine-api-migration-installer" } });
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  signals.once("SIGTERM", stop);
  signals.once("SIGINT", stop);
  logger.info({ mode, clusterOperator: config.installerClusterOperator }, "installer starting");
  try {
    await runInstaller(config, { connection, logger, clock: systemClock, signal: abort.signal });
  } finally {
    signals.removeListener("SIGTERM", stop);
    signals.removeListener("SIGINT", stop);
  }
  logger.info("installer stopped");
  return 0;
}

// -----------------------------------------------------------------------------------------------------------

export interface PackProviderIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  readFile(path: string): Promise<string>;
}

const PACK_USAGE = [
  "usage: pack-provider --name NAME --type core|infrastructure --version VERSION -f components.yaml [-f …]",
  "                     [--namespace openshift-cluster-api] [--configmap-name NAME]",
  "",
  "Prints the transport ConfigMap (SPEC §6) for a provider's components YAML, with cert-manager",
  "Certificates, Issuers and inject-ca-from annotations rewritten to OpenShift service-ca. -f may be",
  "given more than once: the files are packed into the one ConfigMap in the order given.",
].join("\n");

const PACK_FLAGS: Readonly<Record<string, string>> = {
  "--name": "name",
  "--type": "type",
  "--version": "version",
  "-f": "file",
  "--filename": "file",
  "--namespace": "namespace",
  "--configmap-name": "configMapName",
};

/**
 * `pack-provider`: 0 on success, 1 when the input cannot be packed (unreadable, not YAML, no Kubernetes
 * objects), 2 on bad usage or input outside the YAML bounds (an alias bomb is refused as bad input, not
 * reported as a failure to pack). `-f` repeats, as `convert -f` does; any other flag given twice is refused
 * rather than the last one silently winning.
 */
export async function runPackProvider(argv: readonly string[], io: PackProviderIo): Promise<number> {
  const values: Record<string, string> = {};
  const files: string[] = [];
  const usageError = (message: string): number => {
    io.stderr.write(`pack-provider: ${message}\n\n${PACK_USAGE}\n`);
    return 2;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") {
      io.stdout.write(`${PACK_USAGE}\n`);
      return 0;
    }
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const key = PACK_FLAGS[flag];
    if (!key) return usageError(`unknown argument ${JSON.stringify(arg)}`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === "") return usageError(`${flag} needs a value`);
    if (key === "file") {
      // The same file twice would pack every object in it twice.
      if (files.includes(value))
        return usageError(`flag ${flag} given twice for the same file ${JSON.stringify(value)}`);
      files.push(value);
    } else if (values[key] !== undefined) return usageError(`flag ${flag} given twice`);
    else values[key] = value;
  }
  const missing = [
    ...["name", "type", "version"].filter((k) => !values[k]).map((k) => `--${k}`),
    ...(files.length === 0 ? ["-f"] : []),
  ];
  if (missing.length > 0) return usageError(`missing ${missing.join(", ")}`);
  const components: ComponentsFile[] = [];
  for (const path of files) {
    try {
      components.push({ path, text: await io.readFile(path) });
    } catch (e) {
      io.stderr.write(`pack-provider: cannot read ${path}: ${e instanceof Error ? e.message : String(e)}\n`);
      return 1;
    }
  }
  const result = packProvider({
    name: values.name!,
    type: values.type!,
    version: values.version!,
    namespace: values.namespace ?? "openshift-cluster-api",
    ...(values.configMapName ? { configMapName: values.configMapName } : {}),
    components,
  });
  if (!result.ok) {
    io.stderr.write(`pack-provider: ${result.error}\n`);
    return result.usage || result.bound ? 2 : 1;
  }
  for (const w of result.warnings) io.stderr.write(`pack-provider: ${w}\n`);
  io.stdout.write(result.yaml);
  return 0;
}
