/**
 * The sync controllers' shell (SPEC §4, §7): MachineSync and MachineSetSync, one implementation with a
 * small per-kind table (which types, which reader and planner, how InfraMachines or templates map back to
 * a key). A reconcile reads one snapshot from the shared informer cache, asks the pure planner
 * (plan.ts) what to do, does the live reads a plan may ask for (§4.6 storage and Cluster cascade, `confirmAbsent`),
 * executes the writes in order (execute.ts), reports an API server refusal as `Synchronized=False` on the
 * MAPI object, records the plan's Events and hands requeues to the runtime. Nothing here decides what
 * to write; queueing, backoff and metrics are the runtime's (src/kube/controller.ts).
 */
import type { Logger } from "pino";
import type { Cache } from "../kube/cache.js";
import { getOrAbsent, type KubeClient, withSignal } from "../kube/client.js";
import type { Clock } from "../kube/clock.js";
import type {
  Controller,
  KeyMapper,
  ReconcileContext,
  ReconcileResult,
  WatchOptions,
} from "../kube/controller.js";
import { beyondStatus, byName, createController } from "../kube/controller.js";
import type { EventRecorder } from "../kube/events.js";
import type { ResourceType } from "../kube/kinds.js";
import { CONDITIONS, KINDS } from "../kube/kinds.js";
import type { RuntimeMetrics } from "../kube/metrics.js";
import type { KubeObject } from "../kube/object.js";
import { conditionOf, generationOf, isDeleting, nameOf, ownerReferencesOf } from "../kube/object.js";
import type { Transport } from "../kube/transport.js";
import type { ObjectStore } from "../policies/types.js";
import { statusAuthority } from "../protocol/authority.js";
import type { SyncKind } from "./condition.js";
import { mapiStatusWrite, REASONS, refusedWriteCondition } from "./condition.js";
import type { PlatformConverter } from "./conversion/platform.js";
import { type ExecuteDeps, type ExecuteOutcome, executeWrites } from "./execute.js";
import type { SyncPlan } from "./plan.js";
import { planMachineSetSync, planMachineSync } from "./plan.js";
import type { ObjectAddress } from "./plan-draft.js";
import { ownerSetFactsChanged } from "./plan-machine.js";
import { memberFactsChanged } from "./plan-machine-set.js";
import { liveReadOf, readClusterCascade } from "./shell/cascade.js";
import { createInfraTypes } from "./shell/infra-types.js";
import { readStorageBeingRemoved } from "./shell/storage.js";
import type {
  MachineSetSnapshot,
  MachineSnapshot,
  SnapshotReadOptions,
  SyncConverter,
  SyncDeps,
  SyncSettings,
} from "./snapshot.js";
import {
  clusterNameOf,
  infrastructureRefOf,
  machineKeysFor,
  machineSetKeysFor,
  platformOf,
  readMachineSetSnapshot,
  readMachineSnapshot,
  storageToCheck,
} from "./snapshot.js";

export interface SyncControllerDeps {
  /** Writes and the live reads (§4.6 storage, confirmAbsent), as the product's own identity. */
  client: KubeClient;
  /** Discovery for infrastructure kinds first referenced at run time. */
  transport: Transport;
  /** The shared informer cache; the controller starts the informers it watches in it. */
  cache: Cache;
  converter: SyncConverter;
  settings: SyncSettings;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  metrics?: RuntimeMetrics;
  /** SPEC §0.1: the live read before every deletion write (src/sync/execute.ts). */
  platformGuard?: ExecuteDeps["platformGuard"];
  workers?: number;
  /** Work-queue backoff (SPEC §7 defaults: 5 ms doubling to 1000 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * When a live read finds the cache behind (`confirmAbsent`, `confirmAuthority`, `confirmSource`): look again
   * after this long. Default 5 s.
   */
  confirmAbsentRetryMs?: number;
}

/** Thrown so the runtime backs off: the plan asked for `requeue: "backoff"` (conversion error, waiting). */
class SyncPendingError extends Error {
  override name = "SyncPendingError";
}

/** Thrown after a refused write was reported on the MAPI object, so the key backs off. */
class SyncWriteRefusedError extends Error {
  override name = "SyncWriteRefusedError";
}

interface SnapshotBase {
  name: string;
  mapi?: KubeObject;
  capi?: KubeObject;
  storageBeingRemoved?: boolean;
  clusterCascade?: boolean;
}

/** A watch of objects a key's snapshot reads but the key does not name; `options` say which updates count. */
export interface ExtraWatch {
  type: ResourceType;
  namespace: string;
  mapper: KeyMapper;
  options?: WatchOptions;
}

/** What differs between MachineSync and MachineSetSync; everything else is shared. */
interface KindShell<S extends SnapshotBase> {
  kind: SyncKind;
  controllerName: string;
  mapiType: ResourceType;
  capiType: ResourceType;
  /** The platform's infrastructure kind, watched from the start. */
  /** The platform's InfraMachine (or template) kind, watched from the start. */
  defaultInfraType(platform: PlatformConverter): ResourceType;
  read(store: ObjectStore, name: string, options: SnapshotReadOptions): S;
  plan(snapshot: S, deps: SyncDeps, now: Date): SyncPlan;
  /** §4.1: the keys an InfraMachine / template event concerns. */
  infraKeys(object: KubeObject, cache: Cache, settings: SyncSettings): readonly string[];
  /** Further watches on read-only inputs of the snapshot (owners, twins of owners). */
  extraWatches(cache: Cache, settings: SyncSettings): readonly ExtraWatch[];
}

const controllerOwnerNamed =
  (kind: string, name: string) =>
  (o: KubeObject): boolean =>
    ownerReferencesOf(o).some((r) => r.controller === true && r.kind === kind && r.name === name);

const machineShell: KindShell<MachineSnapshot> = {
  kind: "Machine",
  controllerName: "machine-sync",
  mapiType: KINDS.mapiMachine,
  capiType: KINDS.capiMachine,
  defaultInfraType: (platform) => platform.infraMachine,
  read: readMachineSnapshot,
  plan: planMachineSync,
  infraKeys: (o) => machineKeysFor(o),
  extraWatches(cache, settings) {
    // A Machine's owner references (§4.3) and the mirror decision (§4.2) read the MachineSets of both APIs:
    // an event on a set (either API) concerns the Machines of either API that a set of that name controls.
    const machinesOfSet: KeyMapper = (set) => {
      const owned = controllerOwnerNamed("MachineSet", nameOf(set));
      return [
        ...cache.list(KINDS.mapiMachine, settings.mapiNamespace).filter(owned),
        ...cache.list(KINDS.capiMachine, settings.capiNamespace).filter(owned),
      ].map(nameOf);
    };
    const everyMachine = everyKeyOf(
      { mapiType: KINDS.mapiMachine, capiType: KINDS.capiMachine },
      cache,
      settings,
    );
    // A CAPI set's selector (or its going) also decides whether a mirror not yet created would be adopted
    // (§4.6): the MAPI Machines waiting on that (reason MirrorWouldBeAdopted) are looked at again. A plan
    // that waits so also requeues itself, in case this event came before its condition reached the cache.
    const machinesOfCapiSet: KeyMapper = (set) => [
      ...new Set([
        ...machinesOfSet(set),
        ...cache
          .list(KINDS.mapiMachine, settings.mapiNamespace)
          .filter((m) => conditionOf(m, CONDITIONS.synchronized)?.reason === REASONS.mirrorWouldBeAdopted)
          .map(nameOf),
      ]),
    ];
    // A Machine's plan reads of a set only its identity, deletion and selector (`ownerSetFactsChanged`); its
    // status changes with every Machine that comes, goes or becomes ready, its replicas with every scale.
    const setFacts: WatchOptions = { updateConcerns: ownerSetFactsChanged };
    return [
      {
        type: KINDS.mapiMachineSet,
        namespace: settings.mapiNamespace,
        mapper: machinesOfSet,
        options: setFacts,
      },
      {
        type: KINDS.capiMachineSet,
        namespace: settings.capiNamespace,
        mapper: machinesOfCapiSet,
        options: setFacts,
      },
      // The InfraCluster (AWSCluster, OpenStackCluster) feeds the conversion of control-plane Machines: its
      // spec, of the one named after the cluster (decision 142).
      {
        type: platformOf(settings).infraCluster,
        namespace: settings.capiNamespace,
        mapper: ofTheCluster(cache, everyMachine),
        options: beyondStatus,
      },
    ];
  },
};

const machineSetShell: KindShell<MachineSetSnapshot> = {
  kind: "MachineSet",
  controllerName: "machineset-sync",
  mapiType: KINDS.mapiMachineSet,
  capiType: KINDS.capiMachineSet,
  defaultInfraType: (platform) => platform.infraMachineTemplate,
  read: readMachineSetSnapshot,
  plan: planMachineSetSync,
  infraKeys: (o, cache, settings) => machineSetKeysFor(o, cache, settings),
  extraWatches(cache, settings) {
    // Orphaning on deletion (§4.6) and the replicas carry (§2.2) read the MAPI Machines a MAPI MachineSet owns.
    const ownerSets: KeyMapper = (m) =>
      ownerReferencesOf(m)
        .filter((r) => r.kind === "MachineSet")
        .map((r) => r.name);
    // A CAPI MachineSet using another set's labelled template brings that set back when it changes or goes
    // (§4.6: the template is deleted once no set references it).
    const templateOwners: KeyMapper = (o) => machineSetKeysFor(o, cache, settings);
    // The replicas carry (§2.2) waits for the members' delete marks to show on their CAPI copies: a CAPI
    // Machine concerns the sets that own its MAPI twin.
    const setsOfMapiTwin: KeyMapper = (m) => {
      const twin = cache.get(KINDS.mapiMachine, settings.mapiNamespace, nameOf(m));
      return twin ? ownerSets(twin) : [];
    };
    // A set's plan reads its Machines' owners, deletion and delete marks (and its members' CAPI copies' marks),
    // nothing else; their status, finalizers and annotations change several times in each Machine's handover
    // and concern no set.
    const memberFacts = { updateConcerns: memberFactsChanged };
    return [
      { type: KINDS.mapiMachine, namespace: settings.mapiNamespace, mapper: ownerSets, options: memberFacts },
      {
        type: KINDS.capiMachine,
        namespace: settings.capiNamespace,
        mapper: setsOfMapiTwin,
        options: memberFacts,
      },
      { type: KINDS.capiMachineSet, namespace: settings.capiNamespace, mapper: templateOwners },
    ];
  },
};

/**
 * Only the Cluster (or InfraCluster) the snapshots read, the one named after the Infrastructure's
 * infrastructureName: another in the namespace concerns no key.
 */
const ofTheCluster =
  (cache: Cache, mapper: KeyMapper): KeyMapper =>
  (o) =>
    nameOf(o) === clusterNameOf(cache.get(KINDS.infrastructure, "", "cluster")) ? mapper(o) : [];

/** Every object either API holds of the shell's kind: the keys a read-only input of every plan concerns. */
const everyKeyOf =
  (
    shell: { mapiType: ResourceType; capiType: ResourceType },
    cache: Cache,
    settings: SyncSettings,
  ): KeyMapper =>
  () => [
    ...new Set([
      ...cache.list(shell.mapiType, settings.mapiNamespace).map(nameOf),
      ...cache.list(shell.capiType, settings.capiNamespace).map(nameOf),
    ]),
  ];

/**
 * The watches of both sync controllers beside their own kinds: the Infrastructure (the platform, the cluster's
 * name) and the Cluster concern every key. Of the Cluster a plan reads its existence, deletion and identity
 * (§4.3: the twins' owner), never its status — which Cluster API's cluster controller rewrites as Machines
 * change, each write then waking the whole fleet twice (decision 142).
 */
const sharedWatches = (
  shell: { mapiType: ResourceType; capiType: ResourceType },
  cache: Cache,
  settings: SyncSettings,
): ExtraWatch[] => {
  const everyKey = everyKeyOf(shell, cache, settings);
  return [
    { type: KINDS.infrastructure, namespace: "", mapper: everyKey },
    {
      type: KINDS.capiCluster,
      namespace: settings.capiNamespace,
      mapper: ofTheCluster(cache, everyKey),
      options: beyondStatus,
    },
  ];
};

/** The watches of MachineSync or MachineSetSync beside their own kinds (exported for tests: what wakes which key). */
export const syncExtraWatches = (
  kind: SyncKind,
  cache: Cache,
  settings: SyncSettings,
): readonly ExtraWatch[] => {
  const shell = kind === "Machine" ? machineShell : machineSetShell;
  return [...sharedWatches(shell, cache, settings), ...shell.extraWatches(cache, settings)];
};

export function createMachineSyncController(deps: SyncControllerDeps): Controller {
  return createSyncController(deps, machineShell);
}

export function createMachineSetSyncController(deps: SyncControllerDeps): Controller {
  return createSyncController(deps, machineSetShell);
}

function createSyncController<S extends SnapshotBase>(
  deps: SyncControllerDeps,
  shell: KindShell<S>,
): Controller {
  const { cache, client, clock, settings } = deps;
  const syncDeps: SyncDeps = { converter: deps.converter, settings };
  const confirmRetryMs = deps.confirmAbsentRetryMs ?? 5_000;

  /**
   * The live checks a plan may ask for, read through `reading` (the reconcile's client, which carries its
   * signal: decision 198).
   */
  const liveChecks = (reading: KubeClient) => {
    /** An object a plan names, read live (NotFound as absent); `type` when the shell already knows it. */
    const readLive = async (ref: ObjectAddress, type?: ResourceType): Promise<KubeObject | undefined> =>
      getOrAbsent(reading, type ?? (await infra.typeOf(ref.apiVersion, ref.kind)), ref.namespace, ref.name);
    /** The very object the plan read (by uid), not another one made since under the same name. */
    const sameObject = (live: KubeObject, ref: ObjectAddress): boolean =>
      ref.uid === undefined || live.metadata?.uid === ref.uid;

    /** §4.2 `confirmAbsent`: is the twin the plan believes deleted really gone from the API server? */
    const existsLive = async (ref: NonNullable<SyncPlan["confirmAbsent"]>): Promise<boolean> =>
      (await readLive(ref)) !== undefined;

    /** §4.2/§3.5/§4.6 `confirmAuthority`: is that MAPI object (same uid) live, with the authority the plan read? */
    const authorityLive = async (ref: NonNullable<SyncPlan["confirmAuthority"]>): Promise<boolean> => {
      const live = await readLive(ref, shell.mapiType);
      return live !== undefined && sameObject(live, ref) && statusAuthority(live) === ref.authority;
    };

    /**
     * §4.2 `confirmSource` (decision 148): is the object a create is converted from still there live — the same
     * uid, not being deleted and, for a MAPI object, of the authority the plan read?
     */
    const sourceLive = async (ref: NonNullable<SyncPlan["confirmSource"]>): Promise<boolean> => {
      const live = await readLive(ref);
      return (
        live !== undefined &&
        sameObject(live, ref) &&
        !isDeleting(live) &&
        (ref.authority === undefined || (statusAuthority(live) ?? "") === ref.authority)
      );
    };

    /**
     * `confirmCurrent` (decisions 160, 163): is the authoritative object the plan mirrors, read older than the MAPI
     * copy's record, the same object at the generation read? If not, the cache is behind and nothing is written.
     */
    const currentLive = async (ref: NonNullable<SyncPlan["confirmCurrent"]>): Promise<boolean> => {
      const live = await readLive(ref);
      return live !== undefined && sameObject(live, ref) && generationOf(live) === ref.generation;
    };
    return { existsLive, authorityLive, sourceLive, currentLive };
  };

  /** §4.5: a write the API server refused becomes Synchronized=False on the MAPI object, and an Event. */
  const reportRefusal = async (
    snapshot: S,
    refused: Extract<ExecuteOutcome, { kind: "refused" }>,
    now: Date,
    context: ReconcileContext,
  ): Promise<string> => {
    const condition = refusedWriteCondition(shell.kind, refused.write, refused.message);
    const mapi = snapshot.mapi;
    // When the refused write was the MAPI status write itself, writing the condition would be refused too.
    const refusedTheStatusWrite =
      refused.write.kind === "applyStatus" && refused.write.target.uid === mapi?.metadata?.uid;
    if (mapi && !refusedTheStatusWrite && !context.signal.aborted) {
      // Earlier writes of the plan may have changed the MAPI object: start from what they returned.
      const rv = refused.resourceVersions.get(mapi.metadata?.uid ?? "");
      const current = rv ? { ...mapi, metadata: { ...mapi.metadata, resourceVersion: rv } } : mapi;
      const statusWrite = mapiStatusWrite(current, { now, condition });
      if (statusWrite) {
        const reported = await executeWrites({ client, typeOf: infra.typeOf, signal: context.signal }, [
          statusWrite,
        ]);
        if (reported.kind === "refused")
          context.logger.error({ err: reported.message }, "could not report a refused write");
      }
    }
    const subject = snapshot.mapi ?? snapshot.capi;
    if (subject) await deps.events.record(subject, "Warning", condition.reason, condition.message);
    return condition.message;
  };

  const reconcile = async (name: string, context: ReconcileContext): Promise<ReconcileResult | undefined> => {
    const log = context.logger;
    // Every live read of this reconcile carries its signal, as its writes do (executeWrites): a stopped
    // controller stops waiting (decision 198).
    const reading = withSignal(client, context.signal);
    const { existsLive, authorityLive, sourceLive, currentLive } = liveChecks(reading);
    const ref = infrastructureRefOf(cache.get(shell.capiType, settings.capiNamespace, name));
    // A kind first referenced now: start and sync its informer before reading (§4.1 dynamic watches).
    const infraType = ref ? await infra.ensure(ref) : shell.defaultInfraType(platformOf(settings));
    let snapshot = shell.read(cache, name, { ...settings, resolveInfraType: infra.resolve });
    const now = new Date(clock.now());
    let plan = shell.plan(snapshot, syncDeps, now);
    // Each live read is made at most once per reconcile; a plan may need both (storage first, then the cascade).
    for (let read = 0; read < 2; read++) {
      if (plan.needsCascadeCheck && snapshot.clusterCascade === undefined && snapshot.capi) {
        const cascade = await readClusterCascade(liveReadOf(reading), snapshot.capi, settings);
        snapshot = { ...snapshot, clusterCascade: cascade };
      } else if (plan.needsStorageCheck && snapshot.storageBeingRemoved === undefined) {
        const removing = await readStorageBeingRemoved(
          reading,
          storageToCheck(shell.kind, settings, infraType),
        );
        snapshot = { ...snapshot, storageBeingRemoved: removing };
      } else break;
      plan = shell.plan(snapshot, syncDeps, now);
    }
    log.debug(
      { branch: plan.branch.kind, writes: plan.writes.map((w) => w.kind), waitingFor: plan.waitingFor },
      "planned",
    );
    if (plan.confirmAuthority && !(await authorityLive(plan.confirmAuthority))) {
      // The cache is behind: the twin may be rightly active, or the object read gone; nothing is written.
      log.info(
        { mapi: plan.confirmAuthority },
        "MAPI object not live with the authority the plan read; nothing written",
      );
      return { requeueAfterMs: confirmRetryMs };
    }
    if (plan.confirmSource && !(await sourceLive(plan.confirmSource))) {
      // The cache is behind: what the create would copy is gone, going or changed; nothing is created.
      log.info({ source: plan.confirmSource }, "source not as the cache shows it live; nothing created");
      return { requeueAfterMs: confirmRetryMs };
    }
    if (plan.confirmCurrent && !(await currentLive(plan.confirmCurrent))) {
      // The cache is behind the authoritative copy: mirroring it now would undo what the MAPI copy already shows.
      log.info(
        { authoritative: plan.confirmCurrent },
        "authoritative copy newer live than the cache shows; nothing written",
      );
      return { requeueAfterMs: confirmRetryMs };
    }
    if (plan.confirmAbsent && plan.writes.length > 0 && (await existsLive(plan.confirmAbsent))) {
      // The cache is behind (or re-listing): the authoritative twin exists, so nothing is deleted.
      log.info({ twin: plan.confirmAbsent }, "authoritative twin exists live; not propagating its deletion");
      return { requeueAfterMs: confirmRetryMs };
    }

    const outcome = await executeWrites(
      {
        client,
        typeOf: infra.typeOf,
        signal: context.signal,
        ...(deps.platformGuard ? { platformGuard: deps.platformGuard } : {}),
      },
      plan.writes,
    );
    if (outcome.kind === "aborted") return undefined;
    if (outcome.kind === "refused")
      throw new SyncWriteRefusedError(await reportRefusal(snapshot, outcome, now, context));

    const subject = snapshot.mapi ?? snapshot.capi;
    if (subject) for (const e of plan.events) await deps.events.record(subject, e.type, e.reason, e.message);
    if (outcome.written > 0) {
      // Every delete the sync propagates is named, with the cascade verdict it was decided on (I6 diagnosis).
      const deleted = plan.writes.flatMap((w) =>
        w.kind === "delete"
          ? [
              `${w.target.kind} ${w.target.namespace}/${w.target.name}${w.propagationPolicy ? ` ${w.propagationPolicy}` : ""}`,
            ]
          : [],
      );
      log.info(
        {
          branch: plan.branch.kind,
          writes: plan.writes.map((w) => w.kind),
          ...(deleted.length > 0 ? { deleted, clusterCascade: snapshot.clusterCascade ?? null } : {}),
        },
        "synchronized",
      );
    }
    if (plan.requeue === "backoff")
      throw new SyncPendingError(
        plan.waitingFor ??
          (plan.condition ? `${plan.condition.reason}: ${plan.condition.message}` : "requeue"),
      );
    return plan.requeue ? { requeueAfterMs: plan.requeue.afterMs } : undefined;
  };

  const controller = createController({
    name: shell.controllerName,
    clock,
    logger: deps.logger,
    reconcile,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    ...(deps.workers !== undefined ? { workers: deps.workers } : {}),
    ...(deps.baseDelayMs !== undefined ? { baseDelayMs: deps.baseDelayMs } : {}),
    ...(deps.maxDelayMs !== undefined ? { maxDelayMs: deps.maxDelayMs } : {}),
  });

  controller.watch(cache.informerFor(shell.mapiType, settings.mapiNamespace), byName);
  controller.watch(cache.informerFor(shell.capiType, settings.capiNamespace), byName);
  for (const w of [...sharedWatches(shell, cache, settings), ...shell.extraWatches(cache, settings)])
    controller.watch(cache.informerFor(w.type, w.namespace), w.mapper, w.options);
  const infra = createInfraTypes({
    cache,
    transport: deps.transport,
    namespace: settings.capiNamespace,
    initial: [shell.defaultInfraType(platformOf(settings))],
    clock,
    onInformer: (informer) => controller.watch(informer, (o) => shell.infraKeys(o, cache, settings)),
  });
  return controller;
}
