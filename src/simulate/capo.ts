/**
 * The Cluster API Provider OpenStack stand-in (SPEC §1.1, §5.5): an OpenStackMachine controller acting as
 * `capo-controller-manager`, CAPA's counterpart (capa.ts) on OpenStack. Like CAPA it honours the
 * OpenStackMachine's *own* pause annotation only (so the product must pause it beside its Machine), adds its
 * finalizer on its first unpaused reconcile, gives an OpenStackMachine without an instance ID a server once a
 * CAPI Machine owns it, and on deletion deletes the server and removes its finalizer. Unlike CAPA it finds a
 * server it may already have by the Machine's name, as CAPO does (clouds.ts): a server MAPO created for the
 * twin is adopted, not created again. It reports as status.ts reads it: `providerID openstack:///<uuid>`,
 * `spec.instanceID`, and status `ready`, `instanceID`, `instanceState: ACTIVE`. The pure planner decides one
 * action per reconcile; the shell executes it against the API and the ledger.
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
import { findLaunched, OPENSTACK_CLOUD } from "./clouds.js";
import { assertNever, capiPausedConditions, stringAt } from "./common.js";
import type { InstanceLedger } from "./ledger.js";

const CAPO_FIELD_MANAGER = "capo-controller-manager";

export type OpenStackMachineAction =
  | { kind: "none"; why: string }
  | { kind: "setConditions"; conditions: Condition[] }
  | { kind: "addFinalizer" }
  | { kind: "createServer"; zone: string }
  | { kind: "setProvisioned"; instanceId: string }
  | { kind: "deleteServer"; instanceId: string | undefined };

export interface OpenStackMachineInput {
  openStackMachine: KubeObject | undefined;
  /** The CAPI Machine that owns it, from the cache (its failure domain is the server's zone). */
  ownerMachine: KubeObject | undefined;
  nowMs: number;
}

/** Does a CAPI Machine own this OpenStackMachine (any Machine ownerReference of the CAPI group)? */
const hasMachineOwner = (o: KubeObject): boolean =>
  ownerReferencesOf(o).some((r) => r.kind === "Machine" && r.apiVersion.startsWith(`${CAPI_GROUP}/`));

/** The server ID CAPO keeps for an OpenStackMachine: `spec.instanceID`, or the status copy of it. */
const instanceIdOf = (o: KubeObject): string | undefined =>
  stringAt(o, ["spec", "instanceID"]) || stringAt(o, ["status", "instanceID"]) || undefined;

/** The status CAPO reports for a running server (what src/platforms/openstack/status.ts reads). */
export const provisionedStatus = (instanceId: string): Record<string, unknown> => ({
  ready: true,
  instanceID: instanceId,
  instanceState: OPENSTACK_CLOUD.runningState,
});

const reportsProvisioned = (o: KubeObject, instanceId: string): boolean =>
  Object.entries(provisionedStatus(instanceId)).every(
    ([key, value]) => getPath(o, ["status", key]) === value,
  );

/** The CAPO OpenStackMachine controller's decision for one reconcile (SPEC §1.1). */
export function planOpenStackMachine({
  openStackMachine,
  ownerMachine,
  nowMs,
}: OpenStackMachineInput): OpenStackMachineAction {
  if (!openStackMachine) return { kind: "none", why: "gone" };
  const conditions = capiPausedConditions(openStackMachine, nowMs);
  if (conditions) return { kind: "setConditions", conditions };
  if (isPaused(openStackMachine)) return { kind: "none", why: "paused by its own annotation" };
  const instanceId = instanceIdOf(openStackMachine);
  if (isDeleting(openStackMachine)) {
    if (!hasFinalizer(openStackMachine, FINALIZERS.openStackMachine))
      return { kind: "none", why: `deleting without ${FINALIZERS.openStackMachine}` };
    return { kind: "deleteServer", instanceId };
  }
  if (!hasFinalizer(openStackMachine, FINALIZERS.openStackMachine)) return { kind: "addFinalizer" };
  if (!instanceId) {
    if (!hasMachineOwner(openStackMachine)) return { kind: "none", why: "waiting for a Machine to own it" };
    return {
      kind: "createServer",
      zone: stringAt(ownerMachine, ["spec", "failureDomain"]) || OPENSTACK_CLOUD.defaultZone,
    };
  }
  return reportsProvisioned(openStackMachine, instanceId)
    ? { kind: "none", why: "provisioned" }
    : { kind: "setProvisioned", instanceId };
}

export interface CapoDeps {
  connection: KubeConnection;
  namespace: string;
  ledger: InstanceLedger;
  clock: Clock;
}

/** The CAPO stand-in's controller over `cache`. */
export function capoControllers(deps: CapoDeps, cache: Cache, logger: Logger): Controller[] {
  const { namespace, ledger, clock } = deps;
  const write = createWriteHelpers(deps.connection.client, CAPO_FIELD_MANAGER);
  const openStackMachines = cache.informerFor(KINDS.openStackMachine, namespace);
  const machines = cache.informerFor(KINDS.capiMachine, namespace);
  const controller = createController({
    name: "simulated-capo-openstackmachine",
    clock,
    logger,
    reconcile: async (name) => {
      const openStackMachine = openStackMachines.get(namespace, name);
      const owner = ownerReferencesOf(openStackMachine).find((r) => r.kind === "Machine");
      const ownerMachine = owner ? machines.get(namespace, owner.name) : undefined;
      const providerID = stringAt(openStackMachine, ["spec", "providerID"]);
      if (openStackMachine && providerID) ledger.recordExisting({ machineName: name, providerID });
      const action = planOpenStackMachine({ openStackMachine, ownerMachine, nowMs: clock.now() });
      if (!openStackMachine) return;
      const type = KINDS.openStackMachine;
      switch (action.kind) {
        case "none":
          return;
        case "setConditions":
          await write.patchStatus(type, openStackMachine, { conditions: action.conditions });
          return;
        case "addFinalizer":
          await write.ensureFinalizer(type, openStackMachine, FINALIZERS.openStackMachine);
          return;
        case "createServer": {
          // CAPO looks for a server named after the Machine before it creates one (whoever created it).
          const server =
            findLaunched(OPENSTACK_CLOUD, ledger, name, "ClusterAPI") ??
            ledger.created({
              machineName: name,
              side: "ClusterAPI",
              zone: action.zone,
              cloud: OPENSTACK_CLOUD,
            });
          await write.patchWithPrecondition(type, openStackMachine, {
            spec: { instanceID: server.instanceId, providerID: server.providerID },
          });
          return;
        }
        case "setProvisioned":
          await write.patchStatus(type, openStackMachine, provisionedStatus(action.instanceId));
          return;
        case "deleteServer": {
          // Without an ID on the object, CAPO looks the server up by name, as it does before creating one.
          const instanceId =
            action.instanceId ?? findLaunched(OPENSTACK_CLOUD, ledger, name, "ClusterAPI")?.instanceId;
          if (instanceId)
            ledger.terminated({
              instanceId,
              machineName: name,
              by: "ClusterAPI",
              object: `OpenStackMachine ${namespace}/${name}`,
              deleting: isDeleting(openStackMachine),
            });
          await write.removeFinalizer(type, openStackMachine, FINALIZERS.openStackMachine);
          return;
        }
        default:
          return assertNever(action);
      }
    },
  });
  controller.watch(openStackMachines, byName);
  return [controller];
}
