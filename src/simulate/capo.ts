/**
 * The Cluster API Provider OpenStack stand-in (SPEC §1.1, §5.5): the shared InfraMachine controller
 * (infra-provider.ts) acting as `capo-manager` on OpenStackMachines, CAPA's counterpart
 * (capa.ts) on OpenStack. Like CAPA it honours the OpenStackMachine's *own* pause annotation only. Unlike
 * CAPA it finds a server it may already have by the Machine's name, as CAPO does (clouds.ts): a server MAPO
 * created for the twin is adopted, not created again. It reports as src/platforms/openstack/status.ts reads
 * it: `providerID openstack:///<uuid>`, `spec.instanceID`, and status `ready`, `instanceID`,
 * `instanceState: ACTIVE`.
 */
import type { Logger } from "pino";
import type { Cache } from "../kube/cache.js";
import type { Controller } from "../kube/controller.js";
import { FINALIZERS, KINDS } from "../kube/kinds.js";
import { getPath, type KubeObject } from "../kube/object.js";
import { OPENSTACK_CLOUD } from "./clouds.js";
import { stringAt } from "./common.js";
import {
  type InfraProviderDeps,
  type InfraProviderProfile,
  infraProviderControllers,
  instanceIdAndProviderID,
} from "./infra-provider.js";

/** The status CAPO reports for a running server (what src/platforms/openstack/status.ts reads). */
export const provisionedStatus = (instanceId: string): Record<string, unknown> => ({
  ready: true,
  instanceID: instanceId,
  instanceState: OPENSTACK_CLOUD.runningState,
});

export const CAPO_PROFILE: InfraProviderProfile = Object.freeze({
  controllerName: "simulated-capo-openstackmachine",
  fieldManager: "capo-manager",
  type: KINDS.openStackMachine,
  finalizer: FINALIZERS.openStackMachine,
  cloud: OPENSTACK_CLOUD,
  launchedSpec: instanceIdAndProviderID,
  // CAPO keeps the server ID in `spec.instanceID`, and reports it in status too.
  instanceIdOf: (o: KubeObject) =>
    stringAt(o, ["spec", "instanceID"]) || stringAt(o, ["status", "instanceID"]) || undefined,
  provisionedStatus,
  reportsProvisioned: (o: KubeObject, instanceId: string) =>
    Object.entries(provisionedStatus(instanceId)).every(
      ([key, value]) => getPath(o, ["status", key]) === value,
    ),
});

/** The CAPO stand-in's controller over `cache`. */
export const capoControllers = (deps: InfraProviderDeps, cache: Cache, logger: Logger): Controller[] =>
  infraProviderControllers(CAPO_PROFILE, deps, cache, logger);
