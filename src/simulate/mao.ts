/**
 * The machine-api-operator stand-in (SPEC §1.1): a Machine controller and a MachineSet controller acting as
 * `machine-api-controllers`, with the actuator of the cluster's platform (its simulated cloud, clouds.ts:
 * the zone and labels it reads from the providerSpec, the providerID and provider status it writes). Pure
 * planners (`planMapiMachine`, `planMapiMachineSet`) decide one action per reconcile from the cached object;
 * the shell below executes it with the runtime's write helpers and the instance ledger. Deliberately faithful
 * where the real MAO loses machines: a deleting Machine without `machine.machine.openshift.io` is ignored, so
 * its instance stays running (the ledger reports the leak).
 */
import type { Logger } from "pino";
import { cloneJson } from "../json-text.js";
import type { Cache } from "../kube/cache.js";
import type { Clock } from "../kube/clock.js";
import type { KubeConnection } from "../kube/config.js";
import type { Controller } from "../kube/controller.js";
import { byName, byOwner, createController } from "../kube/controller.js";
import { NotFoundError } from "../kube/errors.js";
import { DELETE_MARKS, FINALIZERS, KINDS, MAPI_API_VERSION } from "../kube/kinds.js";
import type { Condition, KubeObject } from "../kube/object.js";
import {
  annotationsOf,
  getPath,
  hasFinalizer,
  isDeleting,
  isRecord,
  nameOf,
  ownerReferencesOf,
} from "../kube/object.js";
import { INDEX } from "../kube/store.js";
import { createWriteHelpers } from "../kube/write.js";
import { specAuthorityAsWritten, statusAuthorityReading } from "../protocol/authority.js";
import type { SimulatedCloud } from "./clouds.js";
import { AWS_CLOUD, findLaunched, instanceIdOfProviderID } from "./clouds.js";
import {
  assertNever,
  desiredReplicas,
  liveReplicas,
  mapiPausedConditions,
  replicaStatus,
  stringAt,
  timestamp,
} from "./common.js";
import type { InstanceLedger } from "./ledger.js";
import { createExpectations } from "./runtime.js";

const MAO_FIELD_MANAGER = "machine-api-controllers";

export type MapiMachineAction =
  | { kind: "none"; why: string }
  /** SPEC §1: MAO copies spec → status when status is empty, then returns without reconciling. */
  | { kind: "copyAuthority"; to: string }
  | { kind: "setConditions"; conditions: Condition[] }
  | { kind: "addFinalizer" }
  | { kind: "startProvisioning"; at: string }
  | { kind: "createInstance"; zone: string }
  | { kind: "requeue"; afterMs: number }
  | { kind: "setRunning"; instanceId: string; nodeName: string; at: string }
  | { kind: "terminate"; instanceId: string | undefined };

export interface MapiMachineInput {
  machine: KubeObject | undefined;
  nowMs: number;
  /** How long a Machine stays `Provisioning` once its instance exists. */
  provisioningDelayMs: number;
  /** The cloud MAO's actuator launches in (default AWS). */
  cloud?: SimulatedCloud;
}

/** SPEC §1: MAO copies spec (the CRD default applied) → status while status is unset. */
const copyAuthority = (o: KubeObject): { kind: "copyAuthority"; to: string } => ({
  kind: "copyAuthority",
  to: String(specAuthorityAsWritten(o)),
});
const phaseOf = (o: KubeObject): string => stringAt(o, ["status", "phase"]);

/** The labels MAO's actuator puts on a Machine once its instance exists (the cloud says from where). */
export const instanceLabels = (
  machine: KubeObject,
  cloud: SimulatedCloud = AWS_CLOUD,
): Record<string, string> => {
  const value = getPath(machine, ["spec", "providerSpec", "value"]);
  const labels: Record<string, string> = {};
  for (const [key, path] of Object.entries(cloud.instanceLabelPaths)) {
    const v = getPath(value, path);
    if (typeof v === "string" && v !== "") labels[`machine.openshift.io/${key}`] = v;
  }
  return labels;
};

/** The MAO Machine controller's decision for one reconcile (SPEC §1, §1.1). */
export function planMapiMachine({
  machine,
  nowMs,
  provisioningDelayMs,
  cloud = AWS_CLOUD,
}: MapiMachineInput): MapiMachineAction {
  if (!machine) return { kind: "none", why: "gone" };
  const status = statusAuthorityReading(machine);
  if (status === "absent") return copyAuthority(machine);
  const conditions = mapiPausedConditions(machine, status, nowMs);
  if (conditions) return { kind: "setConditions", conditions };
  const active = status === "MachineAPI";
  if (!active) return { kind: "none", why: `paused: status.authoritativeAPI is ${status}` };

  const providerID = stringAt(machine, ["spec", "providerID"]);
  const instanceId = providerID ? instanceIdOfProviderID(providerID) : undefined;
  if (isDeleting(machine)) {
    // The real MAO keys all its deletion work on its finalizer: without it there is nothing to clean up.
    if (!hasFinalizer(machine, FINALIZERS.mapiMachine))
      return { kind: "none", why: `deleting without ${FINALIZERS.mapiMachine}: ignored` };
    return { kind: "terminate", instanceId };
  }
  if (!hasFinalizer(machine, FINALIZERS.mapiMachine)) return { kind: "addFinalizer" };

  const phase = phaseOf(machine);
  if (!providerID) {
    if (phase === "") return { kind: "startProvisioning", at: timestamp(nowMs) };
    if (phase === "Provisioning")
      return {
        kind: "createInstance",
        zone:
          stringAt(machine, ["spec", "providerSpec", "value", ...cloud.mapiZonePath]) || cloud.defaultZone,
      };
    return { kind: "none", why: `phase ${phase} without a providerID` };
  }
  if (phase === "Running" || phase === "Failed") return { kind: "none", why: `phase ${phase}` };
  if (instanceId === undefined) return { kind: "none", why: `providerID ${providerID} names no instance` };
  // Pace Provisioning → Running from the moment provisioning started (status.lastUpdated).
  const since = Date.parse(stringAt(machine, ["status", "lastUpdated"]));
  const remaining =
    phase === "Provisioning" && Number.isFinite(since) ? since + provisioningDelayMs - nowMs : 0;
  if (remaining > 0) return { kind: "requeue", afterMs: remaining };
  return {
    kind: "setRunning",
    instanceId,
    nodeName: cloud.nodeName(instanceId, nameOf(machine)),
    at: timestamp(nowMs),
  };
}

export type MapiMachineSetAction =
  | { kind: "none"; why: string }
  | { kind: "copyAuthority"; to: string }
  | { kind: "setConditions"; conditions: Condition[] }
  | { kind: "createMachine"; machine: KubeObject }
  | { kind: "deleteMachine"; machine: KubeObject }
  | { kind: "setReplicaStatus"; status: Record<string, number> };

export interface MapiMachineSetInput {
  machineSet: KubeObject | undefined;
  /** Machines the set controls (ownerReference with its uid) in the cache. */
  machines: readonly KubeObject[];
  /** Names the set created that the cache does not show yet (they count as replicas). */
  pendingCreates: readonly string[];
  /** Names the set deleted that the cache does not yet show deleting. */
  pendingDeletes: readonly string[];
  nowMs: number;
}

const isDeleteMarked = (o: KubeObject): boolean =>
  DELETE_MARKS.some((m) => Object.hasOwn(annotationsOf(o), m));

/** Which Machine a scale-down removes: delete-marked first, then the newest (stable by name). */
export const scaleDownVictim = (machines: readonly KubeObject[]): KubeObject | undefined =>
  [...machines].sort((a, b) => {
    const marked = Number(isDeleteMarked(b)) - Number(isDeleteMarked(a));
    if (marked !== 0) return marked;
    const ca = String(a.metadata?.creationTimestamp ?? "");
    const cb = String(b.metadata?.creationTimestamp ?? "");
    return cb.localeCompare(ca) || nameOf(b).localeCompare(nameOf(a));
  })[0];

/** The Machine a MAPI MachineSet stamps from its template; authority from `spec.template.spec` (SPEC §1). */
export function mapiMachineFromTemplate(machineSet: KubeObject): KubeObject {
  const template = getPath(machineSet, ["spec", "template"]);
  const metadata = isRecord(getPath(template, ["metadata"]))
    ? (getPath(template, ["metadata"]) as object)
    : {};
  const spec = getPath(template, ["spec"]);
  return {
    apiVersion: MAPI_API_VERSION,
    kind: "Machine",
    metadata: {
      ...metadata,
      generateName: `${nameOf(machineSet)}-`,
      namespace: machineSet.metadata?.namespace ?? "",
      ownerReferences: [
        {
          apiVersion: MAPI_API_VERSION,
          kind: "MachineSet",
          name: nameOf(machineSet),
          uid: machineSet.metadata?.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: isRecord(spec) ? cloneJson(spec) : {},
  };
}

/** The MAO MachineSet controller's decision for one reconcile: scale to `replicas` while MAPI-authoritative. */
export function planMapiMachineSet(input: MapiMachineSetInput): MapiMachineSetAction {
  const set = input.machineSet;
  if (!set) return { kind: "none", why: "gone" };
  const status = statusAuthorityReading(set);
  if (status === "absent") return copyAuthority(set);
  const conditions = mapiPausedConditions(set, status, input.nowMs);
  if (conditions) return { kind: "setConditions", conditions };
  if (status !== "MachineAPI") return { kind: "none", why: `paused: status.authoritativeAPI is ${status}` };
  if (isDeleting(set)) return { kind: "none", why: "deleting: the garbage collector removes its Machines" };
  const { live, count } = liveReplicas(input.machines, input.pendingCreates, input.pendingDeletes);
  const want = desiredReplicas(set);
  if (count < want) return { kind: "createMachine", machine: mapiMachineFromTemplate(set) };
  if (count > want) {
    const victim = scaleDownVictim(live);
    if (victim) return { kind: "deleteMachine", machine: victim };
  }
  const replicas = count === live.length ? replicaStatus(set, live, true) : undefined;
  if (replicas) return { kind: "setReplicaStatus", status: replicas };
  return { kind: "none", why: `${count} of ${want} replicas` };
}

export interface MaoDeps {
  connection: KubeConnection;
  namespace: string;
  ledger: InstanceLedger;
  clock: Clock;
  provisioningDelayMs: number;
  /** The cloud of the cluster's platform (default AWS). */
  cloud?: SimulatedCloud;
}

/** The MAO stand-in's controllers over `cache` (shell: read cache → plan → one write). */
export function maoControllers(deps: MaoDeps, cache: Cache, logger: Logger): Controller[] {
  const { namespace, ledger, clock } = deps;
  const cloud = deps.cloud ?? AWS_CLOUD;
  const write = createWriteHelpers(deps.connection.client, MAO_FIELD_MANAGER);
  const client = deps.connection.client;
  const machines = cache.informerFor(KINDS.mapiMachine, namespace);
  const machineSets = cache.informerFor(KINDS.mapiMachineSet, namespace);
  const machineController = createController({
    name: "simulated-mao-machine",
    clock,
    logger,
    reconcile: async (name) => {
      const machine = machines.get(namespace, name);
      const providerID = stringAt(machine, ["spec", "providerID"]);
      if (machine && providerID) ledger.recordExisting({ machineName: name, providerID });
      const action = planMapiMachine({
        machine,
        nowMs: clock.now(),
        provisioningDelayMs: deps.provisioningDelayMs,
        cloud,
      });
      if (!machine) return;
      const type = KINDS.mapiMachine;
      switch (action.kind) {
        case "none":
          return;
        case "copyAuthority":
          await write.patchStatus(type, machine, { authoritativeAPI: action.to });
          return;
        case "setConditions":
          await write.patchStatus(type, machine, { conditions: action.conditions });
          return;
        case "addFinalizer":
          await write.ensureFinalizer(type, machine, FINALIZERS.mapiMachine);
          return;
        case "startProvisioning":
          await write.patchStatus(type, machine, { phase: "Provisioning", lastUpdated: action.at });
          return;
        case "createInstance": {
          // The actuator finds an instance it already launched for this Machine (by tag or name) before launching.
          const instance =
            findLaunched(cloud, ledger, name, "MachineAPI") ??
            ledger.created({ machineName: name, side: "MachineAPI", zone: action.zone, cloud });
          // The actuator's update also labels the Machine with what it launched (OpenShift's printer columns read them).
          await write.patchWithPrecondition(type, machine, {
            metadata: {
              labels: instanceLabels(machine, cloud),
              annotations: { "machine.openshift.io/instance-state": cloud.runningState },
            },
            spec: { providerID: instance.providerID },
          });
          return;
        }
        case "requeue":
          return { requeueAfterMs: action.afterMs };
        case "setRunning":
          await write.patchStatus(type, machine, {
            phase: "Running",
            lastUpdated: action.at,
            nodeRef: { apiVersion: "v1", kind: "Node", name: action.nodeName },
            providerStatus: cloud.providerStatus?.(
              action.instanceId,
              stringAt(machine, ["spec", "providerID"]),
            ) ?? {
              instanceId: action.instanceId,
              instanceState: cloud.runningState,
            },
          });
          return;
        case "terminate": {
          // Like the real actuator, without an id on the object it looks the instance up (by tag or name).
          const instanceId = action.instanceId ?? findLaunched(cloud, ledger, name, "MachineAPI")?.instanceId;
          if (instanceId)
            ledger.terminated({
              instanceId,
              machineName: name,
              by: "MachineAPI",
              object: `Machine ${namespace}/${name}`,
              deleting: isDeleting(machine),
            });
          await write.removeFinalizer(type, machine, FINALIZERS.mapiMachine);
          return;
        }
        default:
          return assertNever(action);
      }
    },
  });
  machineController.watch(machines, byName);

  const expectations = createExpectations(clock);
  const machineSetController = createController({
    name: "simulated-mao-machineset",
    clock,
    logger,
    reconcile: async (name) => {
      const set = machineSets.get(namespace, name);
      const uid = set?.metadata?.uid ?? "";
      // The informer files Machines under their owners' uids: the set's own, without reading the fleet.
      const owned = uid
        ? machines
            .byIndex(INDEX.owner, uid)
            .filter((m) => ownerReferencesOf(m).some((r) => r.controller && r.uid === uid))
        : [];
      const pending = expectations.pending(name, (n) => {
        const m = machines.get(namespace, n);
        return !m ? "absent" : isDeleting(m) ? "deleting" : "present";
      });
      const action = planMapiMachineSet({
        machineSet: set,
        machines: owned,
        pendingCreates: pending.creating,
        pendingDeletes: pending.deleting,
        nowMs: clock.now(),
      });
      if (!set) return;
      const type = KINDS.mapiMachineSet;
      switch (action.kind) {
        case "none":
          return;
        case "copyAuthority":
          await write.patchStatus(type, set, { authoritativeAPI: action.to });
          return;
        case "setConditions":
          await write.patchStatus(type, set, { conditions: action.conditions });
          return;
        case "setReplicaStatus":
          await write.patchStatus(type, set, action.status);
          return;
        case "createMachine": {
          const created = await client.create(KINDS.mapiMachine, action.machine, {
            fieldManager: MAO_FIELD_MANAGER,
          });
          expectations.created(name, nameOf(created));
          ledger.memberCreated(name, nameOf(created));
          logger.info({ machineSet: name, machine: nameOf(created) }, "MachineSet created a Machine");
          return;
        }
        case "deleteMachine": {
          const victim = nameOf(action.machine);
          ledger.memberDeleted({ machineSet: name, machineName: victim, reason: "scaleDown" });
          try {
            await write.deleteWithPreconditions(KINDS.mapiMachine, action.machine);
          } catch (e) {
            if (!(e instanceof NotFoundError)) throw e;
          }
          expectations.deleted(name, victim);
          logger.info({ machineSet: name, machine: victim }, "MachineSet deleted a Machine");
          return;
        }
        default:
          return assertNever(action);
      }
    },
  });
  machineSetController.watch(machineSets, byName);
  machineSetController.watch(machines, byOwner("MachineSet", MAPI_API_VERSION));
  return [machineController, machineSetController];
}
