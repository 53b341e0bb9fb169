/**
 * The supported-cluster checks of SPEC §0.1: the `MachineAPIMigration` feature gate and the MAPI CRDs'
 * migration fields (without them there is no authority to enforce: every rule allows and no controller
 * starts), and the platform's own migration controllers (if they run, the product must not run its
 * controllers beside them). They hold for the life of the process: `watchSupport` re-reads the inputs on an
 * interval and reports a change of the gate/CRD answer (main.ts then exits so the pod restarts and decides
 * again), and `createPlatformGuard` is the live read of the platform's controllers that gates controller
 * start, every handover step and every deletion write. `assessSupport`, `supportEvent`, `supportChanged` and
 * `platformControllersRunning` are pure; `readSupport` fetches the inputs and `reportSupport` says why on the
 * product's own Deployment — best effort, because a cluster the product cannot act on must still get a
 * webhook that answers (every rule allows, /readyz stays true).
 */
import type { Logger } from "pino";
import type { KubeClient } from "./kube/client.js";
import { getOrAbsent } from "./kube/client.js";
import type { EventRecorder, EventType } from "./kube/events.js";
import { KINDS, type ResourceType } from "./kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "./kube/object.js";
import { DEFAULT_PLATFORM, PLATFORMS, platformNamed } from "./platforms/registry.js";
import type { PlatformConverter } from "./sync/conversion/platform.js";

export const FEATURE_GATE = "MachineAPIMigration";
/** The product's own Deployment (manifests/base), which carries the supported-cluster Event. */
export const PRODUCT_DEPLOYMENT = "machine-api-migration";
const PLATFORM_CONTROLLERS = {
  namespace: "openshift-cluster-api",
  name: "capi-controllers",
  container: "machine-api-migration",
};

export interface SupportInputs {
  featureGate: KubeObject | undefined;
  machineCrd: KubeObject | undefined;
  machineSetCrd: KubeObject | undefined;
  platformControllers: KubeObject | undefined;
}

export interface Support {
  /** Admission enforces the rules (false: every rule allows). */
  enforcing: boolean;
  /** The sync and migration controllers may run. */
  controllers: boolean;
  /** One sentence per unmet check, for the log, the Event and the README. */
  reasons: string[];
}

const gateEnabled = (gate: KubeObject | undefined): boolean => {
  const versions = getPath(gate, ["status", "featureGates"]);
  return (
    Array.isArray(versions) &&
    versions.some(
      (v) =>
        isRecord(v) &&
        Array.isArray(v.enabled) &&
        v.enabled.some((e) => isRecord(e) && e.name === FEATURE_GATE),
    )
  );
};

const MIGRATION_FIELDS: ReadonlyArray<readonly string[]> = [
  ["spec", "authoritativeAPI"],
  ["status", "authoritativeAPI"],
  ["status", "synchronizedGeneration"],
  ["status", "synchronizedAPI"],
];

/** The migration fields missing from the served version's schema of a MAPI CRD. */
export const missingMigrationFields = (crd: KubeObject | undefined): string[] => {
  const versions = getPath(crd, ["spec", "versions"]);
  const served = Array.isArray(versions)
    ? versions.find((v) => isRecord(v) && v.name === "v1beta1" && v.served !== false)
    : undefined;
  const root = getPath(served, ["schema", "openAPIV3Schema"]);
  return MIGRATION_FIELDS.filter(
    ([section, field]) => getPath(root, ["properties", section!, "properties", field!]) === undefined,
  ).map((p) => p.join("."));
};

/**
 * §0.1: the platform's migration controllers run when their Deployment exists with the migration container
 * and is not scaled to zero (an unset `spec.replicas` is the API's default, 1).
 */
export const platformControllersRunning = (deployment: KubeObject | undefined): boolean => {
  const containers = getPath(deployment, ["spec", "template", "spec", "containers"]);
  const replicas = getPath(deployment, ["spec", "replicas"]);
  return (
    Array.isArray(containers) &&
    containers.some((c) => isRecord(c) && c.name === PLATFORM_CONTROLLERS.container) &&
    replicas !== 0
  );
};

export function assessSupport(inputs: SupportInputs): Support {
  const reasons: string[] = [];
  if (!gateEnabled(inputs.featureGate))
    reasons.push(
      `FeatureGate/cluster does not report ${FEATURE_GATE} enabled: the MAPI CRDs carry no authority fields`,
    );
  for (const [label, crd] of [
    ["machines.machine.openshift.io", inputs.machineCrd],
    ["machinesets.machine.openshift.io", inputs.machineSetCrd],
  ] as const) {
    if (!crd) reasons.push(`CRD ${label} is not installed`);
    else {
      const missing = missingMigrationFields(crd);
      if (missing.length > 0) reasons.push(`CRD ${label} lacks the migration fields ${missing.join(", ")}`);
    }
  }
  const enforcing = reasons.length === 0;
  let controllers = enforcing;
  if (platformControllersRunning(inputs.platformControllers)) {
    controllers = false;
    reasons.push(`${PLATFORM_CONTROLLERS_RUNNING}: this product starts no controllers beside them`);
  }
  return { enforcing, controllers, reasons };
}

/** The sentence that says why the product will not act beside the platform's controllers. */
const PLATFORM_CONTROLLERS_RUNNING = `Deployment ${PLATFORM_CONTROLLERS.namespace}/${PLATFORM_CONTROLLERS.name} runs the platform's own migration controllers (container ${PLATFORM_CONTROLLERS.container})`;

/**
 * §0.1 "when the FeatureGate or the MAPI CRDs change so that the answer changes": the gate/CRD answer
 * (`enforcing`) differs from the one the process started with. The platform's controllers are not part of
 * it: they are the live guard's business, which stops the controllers without a restart.
 */
export const supportChanged = (started: Support, now: Support): boolean =>
  started.enforcing !== now.enforcing;

const DEPLOYMENT: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};

export async function readSupport(client: KubeClient): Promise<Support> {
  const [featureGate, machineCrd, machineSetCrd, platformControllers] = await Promise.all([
    getOrAbsent(client, KINDS.featureGate, "", "cluster"),
    getOrAbsent(client, KINDS.customResourceDefinition, "", "machines.machine.openshift.io"),
    getOrAbsent(client, KINDS.customResourceDefinition, "", "machinesets.machine.openshift.io"),
    getOrAbsent(client, DEPLOYMENT, PLATFORM_CONTROLLERS.namespace, PLATFORM_CONTROLLERS.name),
  ]);
  return assessSupport({ featureGate, machineCrd, machineSetCrd, platformControllers });
}

/**
 * The platform this process serves (decision 87): the one Infrastructure `cluster` names, read once at
 * start (OpenShift's platform never changes), or AWS with the reason when it names none the product supports.
 * Only that platform's infrastructure kinds are watched: another platform's CRDs are not installed.
 */
export async function readServedPlatform(
  client: KubeClient,
): Promise<{ platform: PlatformConverter; reason?: string }> {
  const infrastructure = await getOrAbsent(client, KINDS.infrastructure, "", "cluster");
  const type = getPath(infrastructure, ["status", "platformStatus", "type"]);
  const named = platformNamed(type);
  if (named !== undefined) return { platform: named };
  const why =
    infrastructure === undefined
      ? "Infrastructure cluster does not exist"
      : `Infrastructure cluster names platform ${JSON.stringify(type ?? "")}, which the product does not support (${PLATFORMS.map((p) => p.platform).join(", ")})`;
  return { platform: DEFAULT_PLATFORM, reason: `${why}: serving ${DEFAULT_PLATFORM.platform}'s kinds` };
}

export interface SupportEvent {
  type: EventType;
  reason: "UnsupportedCluster" | "PlatformMigrationControllersRunning";
  message: string;
}

/**
 * The Event that tells an admin why the product is not enforcing or runs no controllers; undefined on a
 * supported cluster (nothing to say: a Normal Event at every start would only be noise).
 */
export function supportEvent(support: Support): SupportEvent | undefined {
  if (support.reasons.length === 0) return undefined;
  const effect = !support.enforcing
    ? "every admission rule allows and no controller starts"
    : "admission enforces, but no sync or migration controller starts";
  return {
    type: "Warning",
    reason: support.enforcing ? "PlatformMigrationControllersRunning" : "UnsupportedCluster",
    message: `${effect}: ${support.reasons.join("; ")}`,
  };
}

export interface ReportSupportDeps {
  client: KubeClient;
  events: EventRecorder;
  /** The CAPI namespace, where the product's Deployment runs. */
  namespace: string;
  logger: Logger;
}

/**
 * Records `supportEvent` on the product's Deployment (SPEC §0.1). Never throws: the Deployment may be
 * missing (local mode, a renamed install) or unreadable, and the log line main.ts writes already says why.
 */
export async function reportSupport(deps: ReportSupportDeps, support: Support): Promise<void> {
  const event = supportEvent(support);
  if (!event) return;
  let deployment: KubeObject | undefined;
  try {
    deployment = await getOrAbsent(deps.client, DEPLOYMENT, deps.namespace, PRODUCT_DEPLOYMENT);
  } catch (e) {
    deps.logger.warn(
      { err: e instanceof Error ? e.message : String(e) },
      `could not read Deployment ${deps.namespace}/${PRODUCT_DEPLOYMENT} for the supported-cluster Event`,
    );
    return;
  }
  if (!deployment) {
    deps.logger.info(
      `no Deployment ${deps.namespace}/${PRODUCT_DEPLOYMENT}: supported-cluster Event not recorded`,
    );
    return;
  }
  await deps.events.record(deployment, event.type, event.reason, event.message);
}

/** The live read of SPEC §0.1 before controller start, every handover step and every deletion write. */
export interface PlatformGuard {
  /**
   * One GET of the platform's migration controllers' Deployment: true when absent or scaled to zero, so
   * `what` may be written. Otherwise logs why, calls `onRunning` (once) and answers false. A failed read
   * throws: nothing is written on a guess, and the caller's reconcile backs off.
   */
  clear(what: string): Promise<boolean>;
  /** Whether a read has found them running (the controllers were stopped). */
  tripped(): boolean;
}

export interface PlatformGuardDeps {
  client: KubeClient;
  logger: Logger;
  /** Stops the product's controllers (admission keeps serving). Called once. */
  onRunning(reason: string): void;
}

export function createPlatformGuard(deps: PlatformGuardDeps): PlatformGuard {
  let tripped = false;
  return {
    async clear(what) {
      const deployment = await getOrAbsent(
        deps.client,
        DEPLOYMENT,
        PLATFORM_CONTROLLERS.namespace,
        PLATFORM_CONTROLLERS.name,
      );
      if (!platformControllersRunning(deployment)) return true;
      const reason = `${PLATFORM_CONTROLLERS_RUNNING}: ${what} not written; the product's controllers stop (admission keeps serving)`;
      if (!tripped) {
        tripped = true;
        deps.logger.error({ check: "supported-cluster", refused: what }, reason);
        deps.onRunning(reason);
      } else deps.logger.warn({ check: "supported-cluster", refused: what }, reason);
      return false;
    },
    tripped: () => tripped,
  };
}

export interface SupportWatchDeps {
  client: KubeClient;
  /** The answer the process started with. */
  started: Support;
  intervalMs: number;
  logger: Logger;
  /** The gate/CRD answer changed (`supportChanged`): the caller exits so the pod decides again. */
  onChange(now: Support): void;
  /** The platform's controllers run now (the caller stops its own controllers). */
  onPlatformControllers?(now: Support): void;
}

/**
 * Re-reads the §0.1 inputs every `intervalMs` (four GETs by name — all the product's RBAC grants on them;
 * docs/decisions.md) until stopped or a change is reported. A failed read is logged and tried again at the
 * next tick: an API outage is not a change of the cluster.
 */
export function watchSupport(deps: SupportWatchDeps): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    try {
      const now = await readSupport(deps.client);
      if (stopped) return;
      if (supportChanged(deps.started, now)) {
        stopped = true;
        deps.onChange(now);
        return;
      }
      if (!now.controllers && now.enforcing) deps.onPlatformControllers?.(now);
    } catch (e) {
      deps.logger.warn(
        { check: "supported-cluster", err: e instanceof Error ? e.message : String(e) },
        "could not re-read the supported-cluster checks; trying again",
      );
    }
    if (!stopped) timer = setTimeout(() => void tick(), deps.intervalMs);
  };
  timer = setTimeout(() => void tick(), deps.intervalMs);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
