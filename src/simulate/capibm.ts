/**
 * The Cluster API Provider IBM Cloud stand-in on PowerVS (SPEC §1.1, §5.5): the shared InfraMachine
 * controller (infra-provider.ts) acting as `capi-ibmcloud-manager` on IBMPowerVSMachines, CAPA's and CAPO's
 * counterpart (capa.ts, capo.ts) on PowerVS. Like them it honours the IBMPowerVSMachine's *own* pause
 * annotation only. Like CAPO it finds an instance it may already have by the Machine's name, as CAPIBM does
 * (clouds.ts): an instance MAPI's actuator created for the twin is adopted, not created again. Unlike CAPO,
 * CAPIBM's spec has no instance ID: it keeps the ID in `status.instanceID`, and until it has reported it the
 * ID is read from the providerID it set. It reports as src/platforms/powervs/status.ts reads it:
 * `providerID ibmpowervs://<region>/<zone>/<workspace>/<id>` and status `ready`, `instanceID`,
 * `instanceState: ACTIVE`.
 */
import type { Logger } from "pino";
import type { Cache } from "../kube/cache.js";
import type { Controller } from "../kube/controller.js";
import { FINALIZERS, KINDS } from "../kube/kinds.js";
import { getPath, type KubeObject } from "../kube/object.js";
import { POWERVS_CLOUD } from "./clouds.js";
import { stringAt } from "./common.js";
import {
  type InfraProviderDeps,
  type InfraProviderProfile,
  infraProviderControllers,
} from "./infra-provider.js";

/** The status CAPIBM reports for a running instance (what src/platforms/powervs/status.ts reads). */
export const provisionedStatus = (instanceId: string): Record<string, unknown> => ({
  ready: true,
  instanceID: instanceId,
  instanceState: POWERVS_CLOUD.runningState,
});

export const CAPIBM_PROFILE: InfraProviderProfile = Object.freeze({
  controllerName: "simulated-capibm-ibmpowervsmachine",
  fieldManager: "capi-ibmcloud-manager",
  type: KINDS.ibmPowerVSMachine,
  finalizer: FINALIZERS.ibmPowerVSMachine,
  cloud: POWERVS_CLOUD,
  // CAPIBM's spec has no instance ID: at launch it writes the providerID only, and keeps the ID in
  // `status.instanceID`; until the status says it, the ID is read from the providerID.
  launchedSpec: (instance: { providerID: string }) => ({ providerID: instance.providerID }),
  instanceIdOf: (o: KubeObject) =>
    stringAt(o, ["status", "instanceID"]) ||
    POWERVS_CLOUD.instanceIdOf(stringAt(o, ["spec", "providerID"])) ||
    undefined,
  provisionedStatus,
  reportsProvisioned: (o: KubeObject, instanceId: string) =>
    Object.entries(provisionedStatus(instanceId)).every(
      ([key, value]) => getPath(o, ["status", key]) === value,
    ),
});

/** The CAPIBM stand-in's controller over `cache`. */
export const capibmControllers = (deps: InfraProviderDeps, cache: Cache, logger: Logger): Controller[] =>
  infraProviderControllers(CAPIBM_PROFILE, deps, cache, logger);
