/**
 * The Cluster API core stand-in (SPEC §1.1): a Machine controller and a MachineSet controller acting as
 * `capi-manager`. Both are stopped only by their object's own pause annotation and acknowledge it with the
 * v1beta2 `Paused` condition; like the real controllers, both add their finalizer *before* they check the
 * pause, so paused objects carry it too (SPEC §3.1 step 9). The sharp edge kept on purpose: a deleting
 * Machine keeps `machine.cluster.x-k8s.io` until its InfraMachine is NotFound (read live, not the cache), so a
 * paused InfraMachine that still holds its provider's finalizer holds the Machine too; and a deleted, unpaused
 * MachineSet deletes every Machine it selects, whatever the propagation policy of its delete (SPEC §2.3
 * `orphan-ignored-by-capi`). Pure planners decide one action per reconcile; the shell executes it.
 *
 * Infrastructure kinds are resolved from references, as Cluster API does: a Machine's `infrastructureRef`
 * and a MachineSet's template reference name the kind (AWS's or OpenStack's, src/platforms/registry.ts),
 * and a MachineSet stamps the InfraMachine kind of its template's platform. The stand-in watches the kinds of
 * the cluster's platform (default AWS); a reference to a kind it does not watch waits, as Cluster API waits
 * for a provider that is not installed.
 */
import type { Logger } from "pino";
import { cloneJson } from "../json-text.js";
import type { Cache } from "../kube/cache.js";
import type { Clock } from "../kube/clock.js";
import type { KubeConnection } from "../kube/config.js";
import type { Controller } from "../kube/controller.js";
import { byName, byOwner, createController } from "../kube/controller.js";
import { ConflictError, NotFoundError } from "../kube/errors.js";
import type { ResourceType } from "../kube/kinds.js";
import {
  apiVersionOf,
  CAPI_API_VERSION,
  FINALIZERS,
  INFRA_GROUP,
  INFRASTRUCTURE_REF_PATHS,
  KINDS,
  LABELS,
} from "../kube/kinds.js";
import type { Condition, KubeObject } from "../kube/object.js";
import {
  conditionOf,
  conditionsOf,
  getPath,
  hasFinalizer,
  isDeleting,
  isRecord,
  nameOf,
  ownerReferencesOf,
  setCondition,
} from "../kube/object.js";
import { machineSetSelector, machineSetSelects } from "../kube/selector.js";
import { INDEX } from "../kube/store.js";
import { createWriteHelpers } from "../kube/write.js";
import { DEFAULT_PLATFORM, platformOfInfraKind } from "../platforms/registry.js";
import { isPaused } from "../protocol/pause.js";
import type { PlatformConverter } from "../sync/conversion/platform.js";
import { nodeNameOfProviderID } from "./clouds.js";
import {
  assertNever,
  capiPausedConditions,
  desiredReplicas,
  liveReplicas,
  replicaStatus,
  stringAt,
  timestamp,
} from "./common.js";
import type { InstanceLedger } from "./ledger.js";
import { scaleDownVictim } from "./mao.js";
import { createExpectations, randomSuffix } from "./runtime.js";

const CAPI_FIELD_MANAGER = "capi-manager";

/**
 * Where an InfraMachine reports "provisioned", by the Cluster API contract version of its API: v1beta2
 * providers (CAPA) in `status.initialization.provisioned` (or the older field name), v1beta1 providers
 * (CAPO) in `status.ready`. A version not listed reads as v1beta2.
 */
const PROVISIONED_PATHS: Readonly<Record<string, readonly (readonly string[])[]>> = Object.freeze({
  v1beta1: [["status", "ready"]],
  v1beta2: [
    ["status", "initialization", "provisioned"],
    ["status", "initialization", "infrastructureProvisioned"],
  ],
});

/**
 * Kinds whose provider contract is older than their API version: CAPIBM serves IBMPowerVSMachine at v1beta2
 * but at the v1beta1 contract, so it reports `status.ready` (its CRDs' contract label says so to Cluster API).
 */
const CONTRACT_OF_KIND: Readonly<Record<string, string>> = Object.freeze({ IBMPowerVSMachine: "v1beta1" });

/** Is the InfraMachine provisioned, as its provider's contract reports it? */
const infraProvisioned = (infra: KubeObject | undefined): boolean => {
  const version =
    CONTRACT_OF_KIND[String(infra?.kind)] ?? String(infra?.apiVersion ?? "").split("/")[1] ?? "";
  const paths = PROVISIONED_PATHS[version] ?? PROVISIONED_PATHS.v1beta2 ?? [];
  return paths.some((path) => getPath(infra, path) === true);
};

/** The platform whose infrastructure kind `kind` is; `fallback` for a kind no platform has. */
const platformOfKind = (kind: unknown, fallback: PlatformConverter): PlatformConverter =>
  (typeof kind === "string" ? platformOfInfraKind(kind) : undefined) ?? fallback;

export type CapiMachineAction =
  | { kind: "none"; why: string }
  | { kind: "setConditions"; conditions: Condition[] }
  | { kind: "addFinalizer" }
  /** The Machine controller makes itself the controller owner of its InfraMachine (reconcileExternal). */
  | { kind: "adoptInfraMachine" }
  | { kind: "deleteInfraMachine" }
  /** Removes the finalizer once a live read confirms the InfraMachine is NotFound. */
  | { kind: "removeFinalizerIfInfraGone" }
  | { kind: "setProviderID"; providerID: string }
  | { kind: "setRunning"; nodeName: string; at: string; conditions: Condition[] };

export interface CapiMachineInput {
  machine: KubeObject | undefined;
  /** The InfraMachine named by `spec.infrastructureRef`, from the cache. */
  infraMachine: KubeObject | undefined;
  nowMs: number;
}

const ownsAsController = (owner: KubeObject, child: KubeObject): boolean =>
  ownerReferencesOf(child).some((r) => r.controller === true && r.uid === owner.metadata?.uid);

/** The CAPI Machine controller's decision for one reconcile (SPEC §1.1). */
export function planCapiMachine({ machine, infraMachine, nowMs }: CapiMachineInput): CapiMachineAction {
  if (!machine) return { kind: "none", why: "gone" };
  // As Cluster API does: the finalizer first (never on a deleting object), *then* the pause check — so a
  // paused Machine carries it too, and gets it back right after a handover toward MachineAPI removed it.
  if (!isDeleting(machine) && !hasFinalizer(machine, FINALIZERS.capiMachine)) return { kind: "addFinalizer" };
  const conditions = capiPausedConditions(machine, nowMs);
  if (conditions) return { kind: "setConditions", conditions };
  if (isPaused(machine)) return { kind: "none", why: "paused" };

  if (isDeleting(machine)) {
    if (!hasFinalizer(machine, FINALIZERS.capiMachine))
      return { kind: "none", why: `deleting without ${FINALIZERS.capiMachine}` };
    if (infraMachine && !isDeleting(infraMachine)) return { kind: "deleteInfraMachine" };
    if (infraMachine) return { kind: "none", why: "waiting for the InfraMachine to be gone" };
    return { kind: "removeFinalizerIfInfraGone" };
  }
  if (!hasFinalizer(machine, FINALIZERS.capiMachine)) return { kind: "addFinalizer" };
  if (!infraMachine) return { kind: "none", why: "waiting for the InfraMachine" };
  if (!isDeleting(infraMachine) && !ownsAsController(machine, infraMachine))
    return { kind: "adoptInfraMachine" };
  if (!infraProvisioned(infraMachine)) return { kind: "none", why: "InfraMachine not provisioned" };
  const infraProviderID = stringAt(infraMachine, ["spec", "providerID"]);
  if (!infraProviderID) return { kind: "none", why: "InfraMachine has no providerID" };
  const providerID = stringAt(machine, ["spec", "providerID"]);
  if (!providerID) return { kind: "setProviderID", providerID: infraProviderID };
  const done =
    stringAt(machine, ["status", "phase"]) === "Running" &&
    stringAt(machine, ["status", "nodeRef", "name"]) !== "" &&
    getPath(machine, ["status", "initialization", "infrastructureProvisioned"]) === true &&
    RUNNING_CONDITIONS.every((type) => conditionOf(machine, type)?.status === "True");
  if (done) return { kind: "none", why: "Running" };
  return {
    kind: "setRunning",
    nodeName: nodeNameOfProviderID(providerID, nameOf(machine)),
    at: timestamp(nowMs),
    conditions: runningConditions(machine, nowMs),
  };
}

/** The v1beta2 conditions the CRD's READY and AVAILABLE columns read; True once the Machine runs. */
const RUNNING_CONDITIONS = ["Ready", "Available"] as const;

/**
 * The Machine's conditions with `Ready` and `Available` True, as Cluster API reports a Machine whose node is
 * up (no MinReadySeconds here, so Available comes with Ready); the others, `Paused` included, as they were.
 */
const runningConditions = (machine: KubeObject, nowMs: number): Condition[] => {
  const at = new Date(nowMs);
  const generation =
    typeof machine.metadata?.generation === "number"
      ? { observedGeneration: machine.metadata.generation }
      : {};
  return [
    ...RUNNING_CONDITIONS.reduce(
      (conditions, type) =>
        setCondition(conditions, { type, status: "True", reason: type, message: "", ...generation }, at),
      conditionsOf(machine) as readonly Condition[],
    ),
  ];
};

export type CapiMachineSetAction =
  | { kind: "none"; why: string }
  | { kind: "setConditions"; conditions: Condition[] }
  | { kind: "addFinalizer" }
  | { kind: "createMachine"; machine: KubeObject; infraMachine: KubeObject }
  | { kind: "deleteMachine"; machine: KubeObject }
  | { kind: "setReplicaStatus"; status: Record<string, number> }
  | { kind: "removeFinalizer" };

export interface CapiMachineSetInput {
  machineSet: KubeObject | undefined;
  /** The template named by `spec.template.spec.infrastructureRef`, from the cache. */
  infraTemplate: KubeObject | undefined;
  /** Machines the set controls, from the cache. */
  machines: readonly KubeObject[];
  /**
   * Machines its selector matches that no controller owns (orphaned by the garbage collector, say): Cluster
   * API's MachineSet controller adopts them, so a deleting set deletes them too. Default none.
   */
  orphans?: readonly KubeObject[];
  pendingCreates: readonly string[];
  pendingDeletes: readonly string[];
  /** Name for a Machine created now (the Machine and its InfraMachine share it). */
  newName: string;
  nowMs: number;
}

/**
 * A CAPI Machine and its InfraMachine stamped from a MachineSet's template and infrastructure template; the
 * InfraMachine is of the template's platform (an AWSMachineTemplate stamps an AWSMachine, an
 * OpenStackMachineTemplate an OpenStackMachine).
 */
export function capiMachineFromTemplate(
  machineSet: KubeObject,
  infraTemplate: KubeObject,
  name: string,
): { machine: KubeObject; infraMachine: KubeObject } {
  const namespace = machineSet.metadata?.namespace ?? "";
  const template = getPath(machineSet, ["spec", "template"]);
  const templateMeta = getPath(template, ["metadata"]);
  const labels = {
    ...(isRecord(getPath(templateMeta, ["labels"])) ? (getPath(templateMeta, ["labels"]) as object) : {}),
    [LABELS.capiSetName]: nameOf(machineSet),
    [LABELS.capiClusterName]: stringAt(machineSet, ["spec", "clusterName"]),
  };
  const annotations = getPath(templateMeta, ["annotations"]);
  const spec = isRecord(getPath(template, ["spec"])) ? cloneJson(getPath(template, ["spec"]) as object) : {};
  const infraSpec = getPath(infraTemplate, ["spec", "template", "spec"]);
  const infraType = platformOfKind(infraTemplate.kind, DEFAULT_PLATFORM).infraMachine;
  const setOwner = {
    apiVersion: CAPI_API_VERSION,
    kind: "MachineSet",
    name: nameOf(machineSet),
    uid: machineSet.metadata?.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
  return {
    // CAPI creates the InfraMachine owned by the MachineSet; the Machine controller then adopts it.
    infraMachine: {
      apiVersion: apiVersionOf(infraType),
      kind: infraType.kind,
      metadata: { name, namespace, labels, ownerReferences: [setOwner] },
      spec: isRecord(infraSpec) ? cloneJson(infraSpec) : {},
    },
    machine: {
      apiVersion: CAPI_API_VERSION,
      kind: "Machine",
      metadata: {
        name,
        namespace,
        labels,
        ...(isRecord(annotations) ? { annotations: annotations as Record<string, string> } : {}),
        ownerReferences: [setOwner],
      },
      spec: { ...spec, infrastructureRef: { apiGroup: INFRA_GROUP, kind: infraType.kind, name } },
    },
  };
}

/** The CAPI MachineSet controller's decision for one reconcile: scale Machines + InfraMachines while unpaused. */
export function planCapiMachineSet(input: CapiMachineSetInput): CapiMachineSetAction {
  const set = input.machineSet;
  if (!set) return { kind: "none", why: "gone" };
  // Before the pause check, as Cluster API's MachineSet controller does (never on a deleting set).
  if (!isDeleting(set) && !hasFinalizer(set, FINALIZERS.capiMachineSet)) return { kind: "addFinalizer" };
  const conditions = capiPausedConditions(set, input.nowMs);
  if (conditions) return { kind: "setConditions", conditions };
  if (isPaused(set)) return { kind: "none", why: "paused" };
  const { live, count } = liveReplicas(input.machines, input.pendingCreates, input.pendingDeletes);
  if (isDeleting(set)) {
    // As Cluster API's reconcileDelete: every Machine it selects goes, whatever the propagation policy of the
    // set's own delete (an orphaning delete included) and whether or not its finalizer is still there.
    const orphans = (input.orphans ?? []).filter((m) => !isDeleting(m));
    const victim = live[0] ?? orphans[0];
    if (victim) return { kind: "deleteMachine", machine: victim };
    if (count > 0 || input.machines.length > 0)
      return { kind: "none", why: "waiting for its Machines to go" };
    if (!hasFinalizer(set, FINALIZERS.capiMachineSet)) return { kind: "none", why: "deleting" };
    return { kind: "removeFinalizer" };
  }
  if (!hasFinalizer(set, FINALIZERS.capiMachineSet)) return { kind: "addFinalizer" };
  const want = desiredReplicas(set);
  if (count < want) {
    if (!input.infraTemplate)
      return {
        kind: "none",
        why: `infrastructure template ${stringAt(set, ["spec", "template", "spec", "infrastructureRef", "name"])} not found`,
      };
    return { kind: "createMachine", ...capiMachineFromTemplate(set, input.infraTemplate, input.newName) };
  }
  if (count > want) {
    const victim = scaleDownVictim(live);
    if (victim) return { kind: "deleteMachine", machine: victim };
  }
  const replicas = count === live.length ? replicaStatus(set, live, false) : undefined;
  if (replicas) return { kind: "setReplicaStatus", status: replicas };
  return { kind: "none", why: `${count} of ${want} replicas` };
}

export interface CapiDeps {
  connection: KubeConnection;
  namespace: string;
  ledger: InstanceLedger;
  clock: Clock;
  /** Names for new MachineSet Machines; default `<set>-<5 random>`. */
  newName?: (machineSet: string) => string;
  /** The cluster's platform, whose InfraMachine and template kinds the stand-in watches (default AWS). */
  platform?: PlatformConverter;
}

/** The CAPI stand-in's controllers over `cache`. */
export function capiControllers(deps: CapiDeps, cache: Cache, logger: Logger): Controller[] {
  const { namespace, ledger, clock } = deps;
  const platform = deps.platform ?? DEFAULT_PLATFORM;
  const client = deps.connection.client;
  const write = createWriteHelpers(client, CAPI_FIELD_MANAGER);
  const machines = cache.informerFor(KINDS.capiMachine, namespace);
  const machineSets = cache.informerFor(KINDS.capiMachineSet, namespace);
  const infraMachines = cache.informerFor(platform.infraMachine, namespace);
  const templates = cache.informerFor(platform.infraMachineTemplate, namespace);
  /** The InfraMachine kind a Machine references (a kind no platform has reads as the watched one). */
  const infraTypeOf = (machine: KubeObject | undefined): ResourceType =>
    platformOfKind(getPath(machine, ["spec", "infrastructureRef", "kind"]), platform).infraMachine;
  /** The referenced InfraMachine from the cache; undefined when absent or of a kind not watched. */
  const infraOf = (machine: KubeObject | undefined): KubeObject | undefined => {
    const name = stringAt(machine, ["spec", "infrastructureRef", "name"]);
    return name && infraTypeOf(machine).kind === platform.infraMachine.kind
      ? infraMachines.get(namespace, name)
      : undefined;
  };
  /** A MachineSet's infrastructure template from the cache; undefined when absent or of a kind not watched. */
  const templateOf = (set: KubeObject | undefined): KubeObject | undefined => {
    const ref = INFRASTRUCTURE_REF_PATHS.machineSet;
    const name = stringAt(set, [...ref, "name"]);
    const type = platformOfKind(getPath(set, [...ref, "kind"]), platform).infraMachineTemplate;
    return name && type.kind === platform.infraMachineTemplate.kind
      ? templates.get(namespace, name)
      : undefined;
  };
  const infraTypeOfObject = (o: KubeObject): ResourceType => platformOfKind(o.kind, platform).infraMachine;

  const machineController = createController({
    name: "simulated-capi-machine",
    clock,
    logger,
    reconcile: async (name) => {
      const machine = machines.get(namespace, name);
      const infraMachine = infraOf(machine);
      const action = planCapiMachine({ machine, infraMachine, nowMs: clock.now() });
      if (!machine) return;
      const type = KINDS.capiMachine;
      switch (action.kind) {
        case "none":
          return;
        case "setConditions":
          await write.patchStatus(type, machine, { conditions: action.conditions });
          return;
        case "addFinalizer":
          await write.ensureFinalizer(type, machine, FINALIZERS.capiMachine);
          return;
        case "adoptInfraMachine": {
          const infra = infraMachine!;
          const others = ownerReferencesOf(infra).filter((r) => !r.controller);
          await write.patchWithPrecondition(infraTypeOf(machine), infra, {
            metadata: {
              ownerReferences: [
                ...others,
                {
                  apiVersion: CAPI_API_VERSION,
                  kind: "Machine",
                  name,
                  uid: machine.metadata?.uid ?? "",
                  controller: true,
                  blockOwnerDeletion: true,
                },
              ],
            },
          });
          return;
        }
        case "deleteInfraMachine":
          try {
            await write.deleteWithPreconditions(infraTypeOf(machine), infraMachine!);
          } catch (e) {
            if (!(e instanceof NotFoundError)) throw e;
          }
          return;
        case "removeFinalizerIfInfraGone": {
          // The cache cannot prove absence (it may not have seen a new InfraMachine yet): ask the server.
          const infraName = stringAt(machine, ["spec", "infrastructureRef", "name"]);
          if (infraName) {
            try {
              await client.get(infraTypeOf(machine), namespace, infraName);
              throw new ConflictError(409, "Conflict", `InfraMachine ${namespace}/${infraName} still exists`);
            } catch (e) {
              if (!(e instanceof NotFoundError)) throw e;
            }
          }
          await write.removeFinalizer(type, machine, FINALIZERS.capiMachine);
          return;
        }
        case "setProviderID":
          ledger.recordExisting({ machineName: name, providerID: action.providerID });
          await write.patchWithPrecondition(type, machine, { spec: { providerID: action.providerID } });
          return;
        case "setRunning":
          await write.patchStatus(type, machine, {
            phase: "Running",
            nodeRef: { name: action.nodeName },
            initialization: { infrastructureProvisioned: true },
            lastUpdated: action.at,
            conditions: action.conditions,
          });
          return;
        default:
          return assertNever(action);
      }
    },
  });
  machineController.watch(machines, byName);
  // An InfraMachine event reaches the Machine that references it (same name by convention, and its owner).
  machineController.watch(infraMachines, (o) => [
    ...new Set([nameOf(o), ...byOwner("Machine", CAPI_API_VERSION)(o)].filter(Boolean)),
  ]);

  const expectations = createExpectations(clock);
  const newName = deps.newName ?? ((set: string) => `${set}-${randomSuffix()}`);
  const machineSetController = createController({
    name: "simulated-capi-machineset",
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
      const selects = machineSetSelector(set);
      const orphans = isDeleting(set)
        ? machines
            .list(namespace)
            .filter((m) => !ownerReferencesOf(m).some((r) => r.controller) && selects(m))
        : [];
      const pending = expectations.pending(name, (n) => {
        const m = machines.get(namespace, n);
        return !m ? "absent" : isDeleting(m) ? "deleting" : "present";
      });
      const action = planCapiMachineSet({
        machineSet: set,
        infraTemplate: templateOf(set),
        machines: owned,
        orphans,
        pendingCreates: pending.creating,
        pendingDeletes: pending.deleting,
        newName: newName(name),
        nowMs: clock.now(),
      });
      if (!set) return;
      const type = KINDS.capiMachineSet;
      switch (action.kind) {
        case "none":
          return;
        case "setConditions":
          await write.patchStatus(type, set, { conditions: action.conditions });
          return;
        case "addFinalizer":
          await write.ensureFinalizer(type, set, FINALIZERS.capiMachineSet);
          return;
        case "createMachine": {
          const machineName = nameOf(action.machine);
          const infraType = infraTypeOfObject(action.infraMachine);
          await createTolerant(client, infraType, action.infraMachine);
          try {
            await createTolerant(client, KINDS.capiMachine, action.machine);
          } catch (e) {
            // As CAPI does: an InfraMachine whose Machine could not be created would be orphaned under a fresh name.
            await client.delete(infraType, namespace, machineName).catch(() => undefined);
            throw e;
          }
          expectations.created(name, machineName);
          ledger.memberCreated(name, machineName);
          logger.info(
            { machineSet: name, machine: machineName },
            `MachineSet created a Machine and ${infraType.kind}`,
          );
          return;
        }
        case "deleteMachine": {
          const victim = nameOf(action.machine);
          ledger.memberDeleted({
            machineSet: name,
            machineName: victim,
            reason: isDeleting(set) ? "setDeleting" : "scaleDown",
          });
          try {
            await write.deleteWithPreconditions(KINDS.capiMachine, action.machine);
          } catch (e) {
            if (!(e instanceof NotFoundError)) throw e;
          }
          expectations.deleted(name, victim);
          logger.info({ machineSet: name, machine: victim }, "MachineSet deleted a Machine");
          return;
        }
        case "setReplicaStatus":
          await write.patchStatus(type, set, action.status);
          return;
        case "removeFinalizer":
          await write.removeFinalizer(type, set, FINALIZERS.capiMachineSet);
          return;
        default:
          return assertNever(action);
      }
    },
  });
  machineSetController.watch(machineSets, byName);
  // As Cluster API's MachineToMachineSets: a Machine goes to its controlling set, and a Machine no controller
  // owns to every set whose selector matches it (the sets that would adopt it — a deleting one deletes it).
  const owningSets = byOwner("MachineSet", CAPI_API_VERSION);
  machineSetController.watch(machines, (m) =>
    ownerReferencesOf(m).some((r) => r.controller)
      ? owningSets(m)
      : machineSets
          .list(namespace)
          .filter((set) => machineSetSelects(set, m))
          .map(nameOf),
  );
  // A template created after its MachineSet lets the set scale: map it to the sets that reference it.
  machineSetController.watch(templates, (t) =>
    machineSets
      .list(namespace)
      .filter((s) => stringAt(s, ["spec", "template", "spec", "infrastructureRef", "name"]) === nameOf(t))
      .map(nameOf),
  );
  return [machineController, machineSetController];
}

/** Create, treating AlreadyExists as done: a retried create of a fixed-name child is not an error. */
async function createTolerant(
  client: KubeConnection["client"],
  type: ResourceType,
  object: KubeObject,
): Promise<void> {
  try {
    await client.create(type, object, { fieldManager: CAPI_FIELD_MANAGER });
  } catch (e) {
    if (!(e instanceof ConflictError && e.alreadyExists)) throw e;
  }
}
