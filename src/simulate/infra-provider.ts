/**
 * An infrastructure provider's InfraMachine controller (SPEC §1.1), written once for every platform: CAPA's
 * AWSMachine controller (capa.ts) and CAPO's OpenStackMachine controller (capo.ts) are the same machine with
 * different data — the kind, the finalizer, the cloud (clouds.ts: ids, providerIDs, how an existing instance
 * is found) and what the provider reports once its instance runs. The controller honours the InfraMachine's
 * *own* pause annotation only (so the product must pause it beside its Machine, SPEC §1), adds its finalizer
 * on its first unpaused reconcile, gives an InfraMachine without an instance ID an instance once a CAPI
 * Machine owns it (finding one it already launched first), and on deletion terminates the instance and
 * removes its finalizer. The pure planner decides one action per reconcile; the shell executes it against
 * the API and the ledger.
 */
import type { Logger } from "pino";
import type { Cache } from "../kube/cache.js";
import type { Clock } from "../kube/clock.js";
import type { KubeConnection } from "../kube/config.js";
import type { Controller } from "../kube/controller.js";
import { byName, createController } from "../kube/controller.js";
import { CAPI_GROUP, KINDS, type ResourceType } from "../kube/kinds.js";
import type { Condition, KubeObject } from "../kube/object.js";
import { hasFinalizer, isDeleting, ownerReferencesOf } from "../kube/object.js";
import { createWriteHelpers } from "../kube/write.js";
import { isPaused } from "../protocol/pause.js";
import { findLaunched, type SimulatedCloud } from "./clouds.js";
import { assertNever, capiPausedConditions, stringAt } from "./common.js";
import type { InstanceLedger } from "./ledger.js";

/** What one provider's controller is made of. */
export interface InfraProviderProfile {
  /** The controller's name in logs and metrics (`simulated-capa-awsmachine`). */
  readonly controllerName: string;
  /** The provider's field manager, as its Deployment writes (`capa-controller-manager`). */
  readonly fieldManager: string;
  /** The InfraMachine kind it reconciles. */
  readonly type: ResourceType;
  readonly finalizer: string;
  readonly cloud: SimulatedCloud;
  /** What the provider writes to its InfraMachine's spec once it has launched (or found) the instance. */
  launchedSpec(instance: { instanceId: string; providerID: string }): Record<string, unknown>;
  /** The instance id the provider keeps on its InfraMachine, if it has one. */
  instanceIdOf(infraMachine: KubeObject): string | undefined;
  /** The status the provider writes once its instance runs. */
  provisionedStatus(instanceId: string): Record<string, unknown>;
  /** Does the InfraMachine's status already say what `provisionedStatus` would write? */
  reportsProvisioned(infraMachine: KubeObject, instanceId: string): boolean;
}

export type InfraMachineAction =
  | { kind: "none"; why: string }
  | { kind: "setConditions"; conditions: Condition[] }
  | { kind: "addFinalizer" }
  | { kind: "createInstance"; zone: string }
  | { kind: "setProvisioned"; instanceId: string }
  | { kind: "terminate"; instanceId: string | undefined };

export interface InfraMachineInput {
  infraMachine: KubeObject | undefined;
  /** The CAPI Machine that owns it, from the cache (its failure domain is the instance's zone). */
  ownerMachine: KubeObject | undefined;
  nowMs: number;
}

/** Does a CAPI Machine own this InfraMachine (any Machine ownerReference of the CAPI group)? */
const hasMachineOwner = (o: KubeObject): boolean =>
  ownerReferencesOf(o).some((r) => r.kind === "Machine" && r.apiVersion.startsWith(`${CAPI_GROUP}/`));

/** The provider's decision for one reconcile of its InfraMachine (SPEC §1.1). */
export function planInfraMachine(
  profile: InfraProviderProfile,
  { infraMachine, ownerMachine, nowMs }: InfraMachineInput,
): InfraMachineAction {
  if (!infraMachine) return { kind: "none", why: "gone" };
  const conditions = capiPausedConditions(infraMachine, nowMs);
  if (conditions) return { kind: "setConditions", conditions };
  if (isPaused(infraMachine)) return { kind: "none", why: "paused by its own annotation" };
  const instanceId = profile.instanceIdOf(infraMachine);
  if (isDeleting(infraMachine)) {
    if (!hasFinalizer(infraMachine, profile.finalizer))
      return { kind: "none", why: `deleting without ${profile.finalizer}` };
    return { kind: "terminate", instanceId };
  }
  if (!hasFinalizer(infraMachine, profile.finalizer)) return { kind: "addFinalizer" };
  if (!instanceId) {
    if (!hasMachineOwner(infraMachine)) return { kind: "none", why: "waiting for a Machine to own it" };
    return {
      kind: "createInstance",
      zone: stringAt(ownerMachine, ["spec", "failureDomain"]) || profile.cloud.defaultZone,
    };
  }
  return profile.reportsProvisioned(infraMachine, instanceId)
    ? { kind: "none", why: "provisioned" }
    : { kind: "setProvisioned", instanceId };
}

/** CAPA and CAPO keep the instance's id in the spec beside its providerID. */
export const instanceIdAndProviderID = (instance: { instanceId: string; providerID: string }) => ({
  instanceID: instance.instanceId,
  providerID: instance.providerID,
});

export interface InfraProviderDeps {
  connection: KubeConnection;
  namespace: string;
  ledger: InstanceLedger;
  clock: Clock;
}

/** The provider's InfraMachine controller over `cache`. */
export function infraProviderControllers(
  profile: InfraProviderProfile,
  deps: InfraProviderDeps,
  cache: Cache,
  logger: Logger,
): Controller[] {
  const { namespace, ledger, clock } = deps;
  const { type, finalizer, cloud } = profile;
  const write = createWriteHelpers(deps.connection.client, profile.fieldManager);
  const infraMachines = cache.informerFor(type, namespace);
  const machines = cache.informerFor(KINDS.capiMachine, namespace);
  const controller = createController({
    name: profile.controllerName,
    clock,
    logger,
    reconcile: async (name) => {
      const infraMachine = infraMachines.get(namespace, name);
      const owner = ownerReferencesOf(infraMachine).find((r) => r.kind === "Machine");
      const ownerMachine = owner ? machines.get(namespace, owner.name) : undefined;
      const providerID = stringAt(infraMachine, ["spec", "providerID"]);
      if (infraMachine && providerID) ledger.recordExisting({ machineName: name, providerID });
      const action = planInfraMachine(profile, { infraMachine, ownerMachine, nowMs: clock.now() });
      if (!infraMachine) return;
      switch (action.kind) {
        case "none":
          return;
        case "setConditions":
          await write.patchStatus(type, infraMachine, { conditions: action.conditions });
          return;
        case "addFinalizer":
          await write.ensureFinalizer(type, infraMachine, finalizer);
          return;
        case "createInstance": {
          // The provider finds an instance it launched for this Machine (by its tags, or CAPO by name)
          // before it launches one.
          const instance =
            findLaunched(cloud, ledger, name, "ClusterAPI") ??
            ledger.created({ machineName: name, side: "ClusterAPI", zone: action.zone, cloud });
          await write.patchWithPrecondition(type, infraMachine, { spec: profile.launchedSpec(instance) });
          return;
        }
        case "setProvisioned":
          await write.patchStatus(type, infraMachine, profile.provisionedStatus(action.instanceId));
          return;
        case "terminate": {
          // Like the real actuators, without an id on the object it looks the instance up as before a launch.
          const instanceId = action.instanceId ?? findLaunched(cloud, ledger, name, "ClusterAPI")?.instanceId;
          if (instanceId)
            ledger.terminated({
              instanceId,
              machineName: name,
              by: "ClusterAPI",
              object: `${type.kind} ${namespace}/${name}`,
              deleting: isDeleting(infraMachine),
            });
          await write.removeFinalizer(type, infraMachine, finalizer);
          return;
        }
        default:
          return assertNever(action);
      }
    },
  });
  controller.watch(infraMachines, byName);
  return [controller];
}
