/**
 * The Cluster API Provider AWS stand-in (SPEC §1.1): the shared InfraMachine controller (infra-provider.ts)
 * acting as `capa-controller-manager` on AWSMachines. It honours the AWSMachine's *own* pause annotation
 * only — not its Machine's — which is why the product must pause both (SPEC §1). It finds an instance it
 * launched by its own tags (never MAO's), and reports a running one as CAPA v1beta2 does: `ready`,
 * `instanceState: running` and the v1beta2 `initialization` flags.
 */
import type { Logger } from "pino";
import type { Cache } from "../kube/cache.js";
import type { Controller } from "../kube/controller.js";
import { FINALIZERS, KINDS } from "../kube/kinds.js";
import { getPath, type KubeObject } from "../kube/object.js";
import { AWS_CLOUD } from "./clouds.js";
import { stringAt } from "./common.js";
import {
  type InfraProviderDeps,
  type InfraProviderProfile,
  infraProviderControllers,
  instanceIdAndProviderID,
} from "./infra-provider.js";

export const CAPA_PROFILE: InfraProviderProfile = Object.freeze({
  controllerName: "simulated-capa-awsmachine",
  fieldManager: "capa-controller-manager",
  type: KINDS.awsMachine,
  finalizer: FINALIZERS.awsMachine,
  cloud: AWS_CLOUD,
  launchedSpec: instanceIdAndProviderID,
  instanceIdOf: (o: KubeObject) => stringAt(o, ["spec", "instanceID"]) || undefined,
  provisionedStatus: () => ({
    ready: true,
    instanceState: AWS_CLOUD.runningState,
    initialization: { provisioned: true, infrastructureProvisioned: true },
  }),
  reportsProvisioned: (o: KubeObject) =>
    getPath(o, ["status", "initialization", "provisioned"]) === true &&
    getPath(o, ["status", "initialization", "infrastructureProvisioned"]) === true &&
    getPath(o, ["status", "ready"]) === true,
});

/** The CAPA stand-in's controller over `cache`. */
export const capaControllers = (deps: InfraProviderDeps, cache: Cache, logger: Logger): Controller[] =>
  infraProviderControllers(CAPA_PROFILE, deps, cache, logger);
