/**
 * The handover controller shell (SPEC §3, §7): one implementation for Machines and MachineSets, keyed by
 * MAPI name. Every reconcile reads the snapshot from the informer cache and asks the pure planner for the
 * next step; a step that writes is planned again from live reads (SPEC §3.5: a cache can lag behind this
 * process's own writes, and a new leader's cache is as old as its last event), and its guarded write (the
 * request ./write.ts builds) is sent — followed at once by the writes SPEC lets follow it without waiting
 * for the cache (the planner's `chainedStep`, decision 91), each planned from those live reads with the
 * written object replaced by the server's answer. The watch events of those writes bring the next step;
 * nothing is planned from a cache that lacks any of them. A write whose reply was lost is settled before
 * anything else is decided. Waits requeue with a per-key growing delay, blocks requeue slowly, a 409 is
 * thrown for the runtime to back off. It reports per SPEC §3.4 (./reporting.ts, ./metrics.ts). The
 * planning itself, the checks and the request bodies are not here.
 */
import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { Cache } from "../kube/cache.js";
import { type KubeClient, withSignal } from "../kube/client.js";
import type { Clock } from "../kube/clock.js";
import type { Controller, ReconcileResult } from "../kube/controller.js";
import { createController, TerminalError } from "../kube/controller.js";
import { KubeApiError, NotFoundError, ServerError, TransportError } from "../kube/errors.js";
import type { EventRecorder } from "../kube/events.js";
import type { ResourceType } from "../kube/kinds.js";
import { KINDS } from "../kube/kinds.js";
import type { RuntimeMetrics } from "../kube/metrics.js";
import { runtimeMetrics } from "../kube/metrics.js";
import type { KubeObject } from "../kube/object.js";
import { nameOf } from "../kube/object.js";
import type { ObjectStore } from "../kube/store.js";
import { sendGuardedPatch } from "../kube/write.js";
import { DEFAULT_PLATFORM } from "../platforms/registry.js";
import { opposite, statusAuthorityReading } from "../protocol/authority.js";
import type { MigrationMetrics } from "./metrics.js";
import { migrationMetrics } from "./metrics.js";
import type { PlanOptions } from "./planner.js";
import { chainedStep, planHandover } from "./planner.js";
import { ownedMemberNames } from "./preconditions.js";
import type { SnapshotNamespaces } from "./read-snapshot.js";
import { readHandoverSnapshot, readLiveHandoverSnapshot } from "./read-snapshot.js";
import type { GaugeRows, KeyMemory, WaitBackoff } from "./reporting.js";
import {
  completionDue,
  DEFAULT_WAIT_BACKOFF,
  directionOf,
  inProgressNames,
  NO_ROWS,
  nextWaitDelay,
  progressRows,
  startedAtOf,
  synchronizedFalseRows,
  transitionEvent,
  withStep,
} from "./reporting.js";
import type { HandoverKind, HandoverSnapshot, ObjectRef } from "./snapshot.js";
import { objectOf, withObject } from "./snapshot.js";
import type { Step } from "./steps.js";
import { isWrite, stepName } from "./steps.js";
import { migrationWatches } from "./watches.js";
import type { PatchRequest } from "./write.js";
import { requestOf } from "./write.js";

/** SPEC §3.4 default of `migrationStuckAfter`. */
const DEFAULT_STUCK_AFTER_MS = 15 * 60_000;
/** A blocked handover needs a person; re-planning now and then only catches a change nobody watched. */
const DEFAULT_BLOCKED_REQUEUE_MS = 5 * 60_000;
/**
 * The most writes one reconcile sends (decision 91). The longest chain SPEC allows is four (step 4's two
 * writes and step 5's two); the bound only stops a planner that would keep answering the same write.
 */
const MAX_CHAIN = 4;
/** The field manager of the controller's writes (shown in managedFields). */
const MIGRATION_FIELD_MANAGER = "machine-api-migration";

export interface MigrationReconcilerOptions {
  kind: HandoverKind;
  /** Reads: the informer cache in production, any ObjectStore in tests. */
  store: ObjectStore;
  client: KubeClient;
  events: EventRecorder;
  metrics: MigrationMetrics;
  clock: Clock;
  logger: Logger;
  namespaces: SnapshotNamespaces;
  /** The InfraMachine kinds the cache watches (default: the default platform's, AWSMachine). */
  infraMachineTypes?: readonly ResourceType[];
  migrationStuckAfterMs?: number;
  waitBackoff?: WaitBackoff;
  blockedRequeueMs?: number;
  fieldManager?: string;
  planOptions?: PlanOptions;
  /**
   * SPEC §0.1: the live read that the platform's own migration controllers are absent or at zero, made before
   * every handover step is written (src/supported.ts `createPlatformGuard`); false → nothing is written.
   */
  platformGuard?: { clear(what: string): Promise<boolean> };
}

export interface MigrationReconciler {
  reconcile(name: string, signal?: AbortSignal): Promise<ReconcileResult>;
  /** The gauge rows as the cache shows now (SPEC §3.4). */
  gaugeRows(): GaugeRows;
  /** What is remembered about `name` (tests, debugging). */
  memoryOf(name: string): Readonly<KeyMemory> | undefined;
}

const typeOfTarget = (
  target: ObjectRef,
  kind: HandoverKind,
  infraMachineTypes: readonly ResourceType[],
): ResourceType => {
  if (target.role === "mapi") return kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet;
  if (target.role === "capi") return kind === "Machine" ? KINDS.capiMachine : KINDS.capiMachineSet;
  const group = target.apiVersion.includes("/") ? target.apiVersion.split("/")[0] : "";
  const type = infraMachineTypes.find((t) => t.kind === target.kind && t.group === group);
  // The planner only targets an InfraMachine it read through one of these types; retrying cannot help.
  if (!type) throw new TerminalError(`no watched type for ${target.kind} ${target.apiVersion}`);
  return type;
};

/**
 * Whether the cache still shows the object of one of our last writes as it was before that write (same
 * name, the resourceVersion the write was planned from). A gone object or any newer version includes the
 * write: it was conditional on the planned version, so it is that version's direct successor.
 */
const ownWriteUnseen = (s: HandoverSnapshot, m: KeyMemory): boolean =>
  (m.pendingWrites ?? []).some((pending) => {
    const o = objectOf(s, pending.role);
    return (
      o !== undefined &&
      nameOf(o) === pending.name &&
      o.metadata?.resourceVersion === pending.plannedResourceVersion
    );
  });

/**
 * Whether a failed write may still have been applied, or be applied later: no answer at all (connection
 * reset, timeout, an unreadable answer) or a 5xx (kube-apiserver answers an etcd timeout with 500/504 while
 * the write may still commit). Any other answer is the server refusing the write.
 */
const replyMayBeLost = (e: unknown): boolean =>
  !(e instanceof KubeApiError) || e instanceof TransportError || e instanceof ServerError;

/**
 * Whether the live MAPI object shows a status transition step as done: its `status.authoritativeAPI` is
 * the one the step wrote (only that step writes it), so the transition's Event and metrics are due.
 */
const transitionShown = (step: Step, live: KubeObject | undefined): boolean =>
  (step.kind === "startMigration" || step.kind === "completeMigration" || step.kind === "cancelMigration") &&
  live !== undefined &&
  statusAuthorityReading(live) === step.statusPatch.authoritativeAPI;

/** The reconciler alone (no queue, no watches): `createMigrationController` runs it; unit tests call it. */
export function createMigrationReconciler(options: MigrationReconcilerOptions): MigrationReconciler {
  const { kind, store, client, events, metrics, clock, namespaces } = options;
  const infraMachineTypes = options.infraMachineTypes ?? [DEFAULT_PLATFORM.infraMachine];
  const backoff = options.waitBackoff ?? DEFAULT_WAIT_BACKOFF;
  const stuckAfterMs = options.migrationStuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
  const blockedRequeueMs = options.blockedRequeueMs ?? DEFAULT_BLOCKED_REQUEUE_MS;
  const fieldManager = options.fieldManager ?? MIGRATION_FIELD_MANAGER;
  const planOptions = options.planOptions ?? {};
  const mapiType = kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet;
  const memory = new Map<string, KeyMemory>();
  const logger = options.logger.child({ kind });

  const snapshotOf = (name: string): HandoverSnapshot =>
    readHandoverSnapshot(store, kind, name, namespaces, infraMachineTypes, { members: "whenPlanned" });

  const emit = async (s: HandoverSnapshot, m: KeyMemory, step: Step): Promise<KeyMemory> => {
    const event = transitionEvent(m, step);
    // Without the MAPI object there is nothing to attach an Event to (a cache wait before it is seen).
    if (!event || !s.mapi) return m;
    await events.record(s.mapi, event.type, event.reason, event.message);
    return { ...m, lastEvent: { reason: event.reason, message: event.message } };
  };

  /** The client with a reconcile's signal on every request: a stopped controller stops waiting (decision 198). */
  const signalled = (signal: AbortSignal | undefined): KubeClient =>
    signal ? withSignal(client, signal) : client;

  /**
   * Sends the request through kube/write.ts's guarded send (a failed `test` is a ConflictError like a 409);
   * answers the object as the server wrote it.
   */
  const send = async (request: PatchRequest, signal: AbortSignal | undefined): Promise<KubeObject> => {
    const { target } = request;
    return sendGuardedPatch(
      signalled(signal),
      typeOfTarget(target, kind, infraMachineTypes),
      target,
      request.patchType === "application/merge-patch+json"
        ? {
            type: "merge",
            body: request.body,
            ...(request.subresource ? { subresource: request.subresource } : {}),
          }
        : { type: "json", body: request.body },
      fieldManager,
    );
  };

  /** Bookkeeping of the writes that end or start a handover: start time, counters, duration. */
  const account = (m: KeyMemory, step: Step, now: number, subject: KubeObject | undefined): KeyMemory => {
    switch (step.kind) {
      case "startMigration":
        return { ...m, startedAt: now };
      case "completeMigration": {
        const direction = directionOf(opposite(step.to), step.to);
        const held: KeyMemory = subject ? { ...m, pendingCompletion: { event: step.event, subject } } : m;
        metrics.migrationsTotal.inc({ kind, direction, result: "completed" });
        if (m.startedAt !== undefined)
          metrics.migrationDuration.observe({ kind, direction }, Math.max(0, now - m.startedAt) / 1000);
        return { ...held, startedAt: undefined };
      }
      case "cancelMigration":
        // `to` is the old authority: the cancelled handover went from it to the other one.
        metrics.migrationsTotal.inc({
          kind,
          direction: directionOf(step.to, opposite(step.to)),
          result: "cancelled",
        });
        return { ...m, startedAt: undefined };
      default:
        return m;
    }
  };

  /**
   * The bookkeeping of a write the server accepted: the watch event to wait for (added to those of the
   * writes before it in this reconcile), metrics, the Event.
   */
  const wrote = async (
    s: HandoverSnapshot,
    m: KeyMemory,
    step: Step,
    request: PatchRequest,
    writtenVersion: string | undefined,
    now: number,
  ): Promise<KeyMemory> => {
    const next = account(
      {
        ...m,
        waitDelayMs: undefined,
        unconfirmedWrite: undefined,
        // A write the server took as a no-op (same resourceVersion) brings no watch event to wait for.
        pendingWrites:
          writtenVersion === request.target.resourceVersion
            ? m.pendingWrites
            : [
                ...(m.pendingWrites ?? []),
                {
                  role: request.target.role,
                  name: request.target.name,
                  plannedResourceVersion: request.target.resourceVersion,
                },
              ],
      },
      step,
      now,
      s.mapi,
    );
    return emit(s, next, step);
  };

  /** §0.1: the platform's migration controllers are absent or at zero, read live, before a step is written. */
  const clearToWrite = (step: Step, name: string): Promise<boolean> =>
    options.platformGuard
      ? options.platformGuard.clear(`handover step ${stepName(step)} of ${kind} ${name}`)
      : Promise.resolve(true);

  /** Sends the request of `step`; a reply that may be lost is remembered as unconfirmed, then rethrown. */
  const sendRemembering = async (
    name: string,
    m: KeyMemory,
    step: Step,
    request: PatchRequest,
    signal: AbortSignal | undefined,
  ): Promise<KubeObject> => {
    try {
      return await send(request, signal);
    } catch (e) {
      memory.set(name, replyMayBeLost(e) ? { ...m, unconfirmedWrite: { request, step } } : m);
      throw e;
    }
  };

  /**
   * SPEC §3.5 "after any pending write of this process is visible": a write whose reply was lost may still
   * be applied up to the API server's request timeout, so nothing is decided before it is settled. When
   * the live object has moved on from the version the write was planned from, the write either landed or
   * can no longer land (it is preconditioned on that version). Otherwise the same request is sent again:
   * whichever copy reaches the server first lands and the other fails its precondition. Answers the memory
   * to plan with, or the result of a reconcile that sent the request again.
   */
  const settle = async (
    name: string,
    cached: HandoverSnapshot,
    m: KeyMemory,
    now: number,
    signal: AbortSignal | undefined,
  ): Promise<{ memory: KeyMemory; result?: ReconcileResult }> => {
    const unconfirmed = m.unconfirmedWrite;
    if (!unconfirmed) return { memory: m };
    const { request, step } = unconfirmed;
    const { target } = request;
    let live: KubeObject | undefined;
    try {
      live = await signalled(signal).get(
        typeOfTarget(target, kind, infraMachineTypes),
        target.namespace,
        target.name,
      );
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
    }
    const settled = { ...m, unconfirmedWrite: undefined };
    const unchanged =
      live !== undefined &&
      live.metadata?.resourceVersion === target.resourceVersion &&
      (target.uid === undefined || live.metadata?.uid === target.uid);
    if (!unchanged) {
      const subject = target.role === "mapi" && live ? live : cached.mapi;
      const next = transitionShown(step, target.role === "mapi" ? live : undefined)
        ? await wrote(
            { ...cached, ...(subject ? { mapi: subject } : {}) },
            settled,
            step,
            request,
            undefined,
            now,
          )
        : settled;
      memory.set(name, next);
      return { memory: next };
    }
    if (signal?.aborted) return { memory: m, result: {} };
    if (!(await clearToWrite(step, target.name))) return { memory: m, result: {} };
    // A refusal of the copy settles it too (the first attempt, on the same state, can only be refused as well).
    const written = await sendRemembering(name, settled, step, request, signal);
    logger.info(
      {
        name,
        step: stepName(step),
        target: `${target.role} ${target.namespace}/${target.name}`,
        // The reply to the first attempt was lost: this is the same request again.
        resent: true,
      },
      "wrote",
    );
    const next = await wrote(
      cached,
      withStep(settled, stepName(step), now),
      step,
      request,
      written.metadata?.resourceVersion,
      now,
    );
    memory.set(name, next);
    return { memory: next, result: {} };
  };

  /**
   * Sends the write `first`, then each write SPEC lets follow it before the cache shows it (decision 91:
   * `chainedStep`), each planned from this reconcile's live reads with the written object replaced by the
   * server's answer, and each with its own platform check and resourceVersion precondition. Ends at the
   * first step that is not such a write, at a write the server took as a no-op, or at MAX_CHAIN writes.
   */
  const writeChain = async (
    name: string,
    live: HandoverSnapshot,
    first: Step,
    start: KeyMemory,
    startedAt: number,
    signal: AbortSignal | undefined,
  ): Promise<ReconcileResult> => {
    // Every earlier write is in the cache (or this reconcile would have waited for it): only this chain's count.
    let m: KeyMemory = { ...start, pendingWrites: undefined };
    let s = live;
    let step = first;
    let now = startedAt;
    for (let n = 1; ; n++) {
      const request = requestOf(step);
      if (!request) {
        memory.set(name, m);
        return {};
      }
      if (signal?.aborted) return {};
      if (!(await clearToWrite(step, name))) return {};
      const written = await sendRemembering(name, m, step, request, signal);
      const { target } = request;
      logger.info(
        { name, step: stepName(step), target: `${target.role} ${target.namespace}/${target.name}` },
        "wrote",
      );
      const writtenVersion = written.metadata?.resourceVersion;
      m = await wrote(s, m, step, request, writtenVersion, now);
      memory.set(name, m);
      if (writtenVersion === target.resourceVersion || n >= MAX_CHAIN) return {};
      s = withObject(s, target.role, written);
      now = clock.now();
      const next = chainedStep(step, s, new Date(now), planOptions);
      if (!next) return {};
      step = next;
      m = withStep(m, stepName(step), now);
    }
  };

  const reconcile = async (name: string, signal?: AbortSignal): Promise<ReconcileResult> => {
    const now = clock.now();
    const cached = snapshotOf(name);
    const settling = await settle(name, cached, memory.get(name) ?? {}, now, signal);
    if (settling.result) return settling.result;
    let previous = settling.memory;
    if (ownWriteUnseen(cached, previous)) {
      // Plan only from a cache that shows our last write: an older view can pick a branch the write already
      // ruled out (the model campaign saw a roll-back chosen from a cache that still showed the finalizer
      // step 9 had just removed). The write's watch event brings this key back.
      return { requeueAfterMs: backoff.initialMs };
    }
    let s = cached;
    let step = planHandover(s, new Date(now), planOptions);
    if (isWrite(step)) {
      // SPEC §3.5: whether step 9 has begun, every fact that decides between roll-back and completion, and
      // everything a finalizer or status.authoritativeAPI write depends on is read live, never from the cache
      // alone. A cache lags behind this process's own writes (a lost reply) and a new leader's is as old as
      // its last event; one object's informer can be behind another's. Every write is planned from live reads.
      s = await readLiveHandoverSnapshot(
        signalled(signal),
        kind,
        name,
        namespaces,
        infraMachineTypes,
        ownedMemberNames(cached),
      );
      step = planHandover(s, new Date(now), planOptions);
    }
    const status = s.mapi ? statusAuthorityReading(s.mapi) : "absent";
    if (completionDue(previous, status === "MachineAPI" || status === "ClusterAPI", step)) {
      const { event, subject } = previous.pendingCompletion!;
      // Gone before step 11 was seen: the Event goes to the object as it was at the step-10 write.
      await events.record(s.mapi ?? subject, event.type, event.reason, event.message);
      previous = {
        ...previous,
        pendingCompletion: undefined,
        lastEvent: { reason: event.reason, message: event.message },
      };
      memory.set(name, previous);
    }
    if (step.kind === "done") {
      // Gone or steady: nothing to remember; a later handover starts with a clean slate.
      memory.delete(name);
      return {};
    }
    const label = stepName(step);
    let m = withStep(previous, label, now);
    if (m.startedAt === undefined) {
      const started = startedAtOf(s.mapi);
      if (started !== undefined) m = { ...m, startedAt: started };
    }
    const log = logger.child({ name, step: label });

    switch (step.kind) {
      case "wait": {
        const delay = nextWaitDelay(previous, label, backoff);
        m = await emit(s, { ...m, waitDelayMs: delay }, step);
        memory.set(name, m);
        log.debug({ waitFor: step.for, requeueAfterMs: delay }, "waiting");
        return { requeueAfterMs: delay };
      }
      case "blocked": {
        m = await emit(s, m, step);
        memory.set(name, m);
        log.debug("blocked");
        return { requeueAfterMs: blockedRequeueMs };
      }
      default:
        return writeChain(name, s, step, m, now, signal);
    }
  };

  return {
    reconcile,
    gaugeRows() {
      const now = clock.now();
      const mapis = store.list(mapiType, namespaces.mapiNamespace);
      const handovers = inProgressNames(mapis).map((name) => ({
        name,
        step: planHandover(snapshotOf(name), new Date(now), planOptions),
      }));
      return {
        ...progressRows(kind, handovers, (n) => memory.get(n), now, stuckAfterMs),
        synchronizedFalse: synchronizedFalseRows(kind, mapis),
      };
    },
    memoryOf: (name) => memory.get(name),
  };
}

export interface MigrationControllerOptions extends Omit<MigrationReconcilerOptions, "store" | "metrics"> {
  cache: Cache;
  /**
   * Where the metrics go: a registry (metrics created or reused there) or ready-made metrics. With
   * neither, they are kept on a private registry nobody scrapes.
   */
  registry?: Registry;
  metrics?: MigrationMetrics;
  /** The runtime's reconcile/workqueue metrics; default: on `registry` when given. */
  runtimeMetrics?: RuntimeMetrics;
  workers?: number;
}

/**
 * The migration controller of one kind ("migration-machine" or "migration-machineset"), ready to
 * `start()` under leadership. Its gauges report only while it runs, so a replica that does not lead
 * exports none of them.
 */
export function createMigrationController(options: MigrationControllerOptions): Controller {
  const registry = options.registry;
  const metrics = options.metrics ?? migrationMetrics(registry ?? new Registry());
  const runtime = options.runtimeMetrics ?? (registry ? runtimeMetrics(registry) : undefined);
  const infraMachineTypes = options.infraMachineTypes ?? [DEFAULT_PLATFORM.infraMachine];
  const reconciler = createMigrationReconciler({
    ...options,
    store: options.cache,
    metrics,
    infraMachineTypes,
  });
  const name = options.kind === "Machine" ? "migration-machine" : "migration-machineset";
  const controller = createController({
    name,
    clock: options.clock,
    logger: options.logger,
    reconcile: (key, context) => reconciler.reconcile(key, context.signal),
    ...(runtime ? { metrics: runtime } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
  });
  for (const w of migrationWatches(options.kind, options.namespaces, infraMachineTypes, options.cache))
    controller.watch(options.cache.informerFor(w.type, w.namespace), w.mapper);
  metrics.addGaugeSource(name, () => (controller.isRunning() ? reconciler.gaugeRows() : NO_ROWS));
  return controller;
}
