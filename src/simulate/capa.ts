/**
 * The Cluster API Provider AWS stand-in (SPEC §1.1): an AWSMachine controller acting as
 * `capa-controller-manager`. It honours the AWSMachine's *own* pause annotation only — not its Machine's —
 * which is why the product must pause both (SPEC §1). On its first unpaused reconcile it adds its
 * finalizer; an AWSMachine without an instanceID gets an instance (once a CAPI Machine owns it, as CAPA
 * waits for its owner); a deleting one has its instance terminated and its finalizer removed. The pure
 * planner decides one action per reconcile; the shell executes it against the API and the ledger.
 */
import type { Logger } from "pino";
import type { Cache } from "../kube/cache.js";
import type { Clock } from "../kube/clock.js";
import type { KubeConnection } from "../kube/config.js";
import type { Controller } from "../kube/controller.js";
import { byName, createController } from "../kube/controller.js";
import { CAPI_GROUP, FINALIZERS, KINDS } from "../kube/kinds.js";
import type { Condition, KubeObject } from "../kube/object.js";
import { getPath, hasFinalizer, isDeleting, ownerReferencesOf } from "../kube/object.js";
import { createWriteHelpers } from "../kube/write.js";
import { isPaused } from "../protocol/pause.js";
import { assertNever, capiPausedConditions, DEFAULT_ZONE, stringAt } from "./common.js";
import type { InstanceLedger } from "./ledger.js";

const CAPA_FIELD_MANAGER = "capa-controller-manager";

export type AwsMachineAction =
  | { kind: "none"; why: string }
  | { kind: "setConditions"; conditions: Condition[] }
  | { kind: "addFinalizer" }
  | { kind: "createInstance"; zone: string }
  | { kind: "setProvisioned" }
  | { kind: "terminate"; instanceId: string | undefined };

export interface AwsMachineInput {
  awsMachine: KubeObject | undefined;
  /** The CAPI Machine that owns it, from the cache (its failure domain is the instance's zone). */
  ownerMachine: KubeObject | undefined;
  nowMs: number;
}

/** Does a CAPI Machine own this AWSMachine (any Machine ownerReference of the CAPI group)? */
const hasMachineOwner = (awsMachine: KubeObject): boolean =>
  ownerReferencesOf(awsMachine).some(
    (r) => r.kind === "Machine" && r.apiVersion.startsWith(`${CAPI_GROUP}/`),
  );

/** The CAPA AWSMachine controller's decision for one reconcile (SPEC §1.1). */
export function planAwsMachine({ awsMachine, ownerMachine, nowMs }: AwsMachineInput): AwsMachineAction {
  if (!awsMachine) return { kind: "none", why: "gone" };
  const conditions = capiPausedConditions(awsMachine, nowMs);
  if (conditions) return { kind: "setConditions", conditions };
  if (isPaused(awsMachine)) return { kind: "none", why: "paused by its own annotation" };
  const instanceId = stringAt(awsMachine, ["spec", "instanceID"]) || undefined;
  if (isDeleting(awsMachine)) {
    if (!hasFinalizer(awsMachine, FINALIZERS.awsMachine))
      return { kind: "none", why: `deleting without ${FINALIZERS.awsMachine}` };
    return { kind: "terminate", instanceId };
  }
  if (!hasFinalizer(awsMachine, FINALIZERS.awsMachine)) return { kind: "addFinalizer" };
  if (!instanceId) {
    if (!hasMachineOwner(awsMachine)) return { kind: "none", why: "waiting for a Machine to own it" };
    return {
      kind: "createInstance",
      zone: stringAt(ownerMachine, ["spec", "failureDomain"]) || DEFAULT_ZONE,
    };
  }
  const provisioned =
    getPath(awsMachine, ["status", "initialization", "provisioned"]) === true &&
    getPath(awsMachine, ["status", "initialization", "infrastructureProvisioned"]) === true &&
    getPath(awsMachine, ["status", "ready"]) === true;
  return provisioned ? { kind: "none", why: "provisioned" } : { kind: "setProvisioned" };
}

export interface CapaDeps {
  connection: KubeConnection;
  namespace: string;
  ledger: InstanceLedger;
  clock: Clock;
}

/** The CAPA stand-in's controller over `cache`. */
export function capaControllers(deps: CapaDeps, cache: Cache, logger: Logger): Controller[] {
  const { namespace, ledger, clock } = deps;
  const write = createWriteHelpers(deps.connection.client, CAPA_FIELD_MANAGER);
  const awsMachines = cache.informerFor(KINDS.awsMachine, namespace);
  const machines = cache.informerFor(KINDS.capiMachine, namespace);
  const controller = createController({
    name: "simulated-capa-awsmachine",
    clock,
    logger,
    reconcile: async (name) => {
      const awsMachine = awsMachines.get(namespace, name);
      const owner = ownerReferencesOf(awsMachine).find((r) => r.kind === "Machine");
      const ownerMachine = owner ? machines.get(namespace, owner.name) : undefined;
      const providerID = stringAt(awsMachine, ["spec", "providerID"]);
      if (awsMachine && providerID) ledger.recordExisting({ machineName: name, providerID });
      const action = planAwsMachine({ awsMachine, ownerMachine, nowMs: clock.now() });
      if (!awsMachine) return;
      const type = KINDS.awsMachine;
      switch (action.kind) {
        case "none":
          return;
        case "setConditions":
          await write.patchStatus(type, awsMachine, { conditions: action.conditions });
          return;
        case "addFinalizer":
          await write.ensureFinalizer(type, awsMachine, FINALIZERS.awsMachine);
          return;
        case "createInstance": {
          // CAPA finds a running instance it launched for this AWSMachine by its tags before launching one.
          const instance =
            ledger.findLive(name, "ClusterAPI") ??
            ledger.created({ machineName: name, side: "ClusterAPI", zone: action.zone });
          await write.patchWithPrecondition(type, awsMachine, {
            spec: { instanceID: instance.instanceId, providerID: instance.providerID },
          });
          return;
        }
        case "setProvisioned":
          await write.patchStatus(type, awsMachine, {
            ready: true,
            instanceState: "running",
            initialization: { provisioned: true, infrastructureProvisioned: true },
          });
          return;
        case "terminate": {
          // Like the real actuator, without an id on the object it looks the instance up by its tags.
          const instanceId = action.instanceId ?? ledger.findLive(name, "ClusterAPI")?.instanceId;
          if (instanceId)
            ledger.terminated({
              instanceId,
              machineName: name,
              by: "ClusterAPI",
              object: `AWSMachine ${namespace}/${name}`,
              deleting: isDeleting(awsMachine),
            });
          await write.removeFinalizer(type, awsMachine, FINALIZERS.awsMachine);
          return;
        }
        default:
          return assertNever(action);
      }
    },
  });
  controller.watch(awsMachines, byName);
  return [controller];
}
