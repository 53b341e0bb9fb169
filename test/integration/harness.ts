/**
 * The whole product in one place for integration and model tests (SPEC §10): the local API server with the
 * product's real admission webhook (real policy engine), the sync controllers and both migration
 * controllers on one informer cache as the product's service account (as src/main.ts composes them), and
 * the simulated providers of SPEC §1.1 sharing one instance ledger. Around it: an observer cache (as
 * `admin`) that folds every watch event it sees through `observeInvariants` (I1–I4) for every handover
 * object, the ledger check (I6), a quiet-interval helper, and "crash" helpers — the product's controllers
 * and cache stopped without releasing anything and a fresh set started, or one stand-in restarted. The
 * migration controller's "wrote" log lines are captured so a test can attribute the product's writes to
 * handover steps. With `standby`, two product replicas run under leader election on the product's Lease,
 * each with its own cache, and a test can hold back one replica's watch events per kind (`holdWatch`: a
 * cache that lags) and fail the leader over onto the running standby (`failover`). `userDelete` records a
 * user's delete in the ledger before sending it, so the ledger can tell every termination's descent (I6).
 * All state lives in the returned object; nothing here is module-level.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { pino } from "pino";
import { Registry } from "prom-client";
import type { CounterSnapshot } from "../../src/apiserver/index.js";
import { type Cache, createCache } from "../../src/kube/cache.js";
import type { KubeClient } from "../../src/kube/client.js";
import { flushMicrotasks, systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import type { Controller } from "../../src/kube/controller.js";
import { KubeApiError } from "../../src/kube/errors.js";
import { createEventRecorder } from "../../src/kube/events.js";
import type { ResourceType, StableAuthority } from "../../src/kube/kinds.js";
import { KINDS, LABELS } from "../../src/kube/kinds.js";
import { createLeaderElector, type LeaderElector } from "../../src/kube/leader.js";
import { leaderGatedControllers } from "../../src/kube/manager.js";
import { type RuntimeMetrics, runtimeMetrics } from "../../src/kube/metrics.js";
import { conditionOf, getPath, type KubeObject, nameOf, ownerReferencesOf } from "../../src/kube/object.js";
import type { JsonStream, KubeRequest, Transport } from "../../src/kube/transport.js";
import { createIfMissing } from "../../src/local/cluster.js";
import {
  capiCluster,
  type DemoPlatformType,
  infrastructure,
  platformConverterOf,
} from "../../src/local/seed.js";
import { createMigrationController } from "../../src/migration/controller.js";
import { readHandoverSnapshot } from "../../src/migration/read-snapshot.js";
import type { HandoverKind, HandoverSnapshot } from "../../src/migration/snapshot.js";
import { decide } from "../../src/policies/engine.js";
import type { PolicyContext } from "../../src/policies/types.js";
import { clusterView } from "../../src/policies/view.js";
import { statusAuthorityReading, synchronizedAPI } from "../../src/protocol/authority.js";
import { isPaused } from "../../src/protocol/pause.js";
import { webhookSans, writeDevelopmentCertificates } from "../../src/server/certs.js";
import { startWebhookServer, type WebhookServer } from "../../src/server/serve.js";
import {
  createInstanceLedger,
  type InstanceLedger,
  infraProviderOf,
  type RunningStandIn,
  startCapiStandIn,
  startInfraProviderStandIn,
  startMaoStandIn,
  type UserRequest,
} from "../../src/simulate/index.js";
import { createMachineSetSyncController, createMachineSyncController } from "../../src/sync/controller.js";
import { checkConvertible } from "../../src/sync/conversion/index.js";
import { conversionConverter, memoisingConverter } from "../../src/sync/converter.js";
import { startTestCluster, type TestCluster } from "../cluster/backend.js";
import type { InvariantState, Violation } from "../migration/invariants.js";
import { initialInvariantState, observeInvariants } from "../migration/invariants.js";
import { waitFor as waitUntil } from "../support/wait.js";

export const MAPI_NS = "openshift-machine-api";
export const CAPI_NS = "openshift-cluster-api";
export const ns = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
export const PRODUCT = "system:serviceaccount:openshift-cluster-api:machine-api-migration";
export const CONTROLLER_USERS = [
  PRODUCT,
  "system:serviceaccount:openshift-machine-api:machine-api-controllers",
  "system:serviceaccount:openshift-cluster-api:capi-manager",
  "system:serviceaccount:openshift-cluster-api:capa-controller-manager",
  "system:serviceaccount:openshift-cluster-api:capo-manager",
  "system:serviceaccount:openshift-cluster-api:capi-ibmcloud-manager",
  "system:serviceaccount:kube-system:generic-garbage-collector",
  "system:serviceaccount:kube-system:namespace-controller",
];

/** One watched handover object: the invariant fold over every snapshot the observer saw. */
export interface Watched {
  kind: HandoverKind;
  name: string;
  state: InvariantState;
  violations: (Violation & { at: string })[];
  observed: number;
}

/** One write the migration controller reported (its `wrote` log line): which step, which object. */
export interface MigrationWrite {
  kind: HandoverKind;
  name: string;
  step: string;
  target: string;
}

/** `infra`: the platform's infrastructure provider (CAPA on AWS, CAPO on OpenStack). */
export type StandInName = "mao" | "capi" | "infra";

export interface HarnessOptions {
  /** Prefix of the temporary directory. */
  name: string;
  /** The cluster's platform: its Infrastructure, InfraCluster, kinds and provider stand-in (default AWS). */
  platform?: DemoPlatformType;
  provisioningDelayMs?: number;
  /** Watch every MAPI Machine and MachineSet the observer sees (the model test), not only `watch`ed ones. */
  watchEverything?: boolean;
  /** Migration controller backoff (default 50–500 ms). */
  waitBackoff?: { initialMs: number; maxMs: number };
  /** Run the migration controllers too (default true); false runs the sync controllers alone. */
  migration?: boolean;
  /** Requeue delay of the sync controllers' backoff cap (default 500 ms). */
  syncMaxDelayMs?: number;
  /** The sync controllers' first retry delay (default the runtime's). */
  syncBaseDelayMs?: number;
  /** Start the simulated providers (default true); false when a test plays the providers itself. */
  standIns?: boolean;
  /** Informers the product's cache starts with besides the controllers' own (a test reads them). */
  informers?: readonly (readonly [ResourceType, string])[];
  /**
   * Run two product replicas under leader election on the product's Lease (as src/main.ts), each with its
   * own informer cache and controllers: the leader and a running standby (`failover`, `holdWatch`). Off by
   * default: one replica whose controllers run without a Lease.
   */
  standby?: boolean;
  /** The ledger counts a termination only when it descends from a recorded user request (`userDelete`). */
  requireRecordedDeletes?: boolean;
}

/** Which running product replica: the one leading, or the standby (with `standby`). */
export type ReplicaRole = "leader" | "standby";

export interface Harness {
  /** The cluster under test: the local API server or the real control plane (test/cluster/backend.ts). */
  cluster: TestCluster;
  admin: KubeClient;
  ledger: InstanceLedger;
  /** The stand-in now running under each name (restarts replace them). */
  standIns(): Record<StandInName, RunningStandIn>;
  /** The product's runtime metrics (shared by every start). */
  metrics: RuntimeMetrics;
  /** The product's informer cache now in use (a crash replaces it). */
  productCache(): Cache;
  /** The product's controllers now running (a crash replaces them). */
  controllers(): readonly Controller[];
  watch(kind: HandoverKind, name: string): Watched;
  watched(): readonly Watched[];
  snapshotOf(w: Pick<Watched, "kind" | "name">): HandoverSnapshot;
  /**
   * Calls `listener` after the observer folds each watch event it sees (every Machine kind), synchronously
   * in that event's turn: a test reacts to a state the moment it is visible. Returns the unsubscribe.
   */
  onObserved(listener: () => void): () => void;
  /** Every I1–I4 violation any watched object showed so far. */
  violations(): { kind: HandoverKind; name: string; invariant: string; message: string; at: string }[];
  /** Every broken promise of the first duty (I6) given what exists now. */
  ledgerViolations(): Promise<string[]>;
  existing(): Promise<{ mapi: string[]; capi: string[] }>;
  waitFor<T>(
    what: string,
    probe: () => Promise<T | undefined | false> | T | undefined | false,
    timeoutMs?: number,
  ): Promise<T>;
  /** Controllers' queues and the stand-ins idle, the server's own controllers settled, five polls in a row. */
  quiesce(timeoutMs?: number): Promise<void>;
  setSpecAuthority(kind: HandoverKind, name: string, authority: StableAuthority): Promise<void>;
  /** Status, synchronizedAPI and pause state all match `authority`, and Synchronized=True. */
  steady(
    w: Pick<Watched, "kind" | "name">,
    authority: StableAuthority,
    timeoutMs?: number,
  ): Promise<HandoverSnapshot>;
  eventReasons(w: Pick<Watched, "kind" | "name">): Promise<string[]>;
  /** Crash: stop the product's controllers and cache (nothing released, nothing flushed) and start fresh ones. */
  restartProduct(): Promise<void>;
  /**
   * With `standby`: the leader dies (nothing released) and the running standby — its cache as it is, held
   * watches included — takes the Lease once it expires; then a fresh standby starts. Resolves once the new
   * leader leads.
   */
  failover(): Promise<void>;
  /**
   * Holds back delivery of watch events (and re-lists) of `type` to that replica's cache: its cache lags for
   * that kind until `releaseWatches` (the product's live reads are not held).
   */
  holdWatch(role: ReplicaRole, type: ResourceType): void;
  /** Releases what `holdWatch` held, on one replica or all. */
  releaseWatches(role?: ReplicaRole): void;
  /** The kinds held back per replica, for a trace. */
  heldWatches(): Record<ReplicaRole, string[]>;
  /**
   * A user's delete, as kubectl would send it, recorded in the ledger first as `request` (I6) and withdrawn
   * when the server refuses it. Errors are rethrown.
   */
  userDelete(
    type: ResourceType,
    namespace: string,
    name: string,
    request: UserRequest,
    options?: { propagationPolicy?: "Foreground" | "Background" | "Orphan" },
  ): Promise<void>;
  /**
   * A user's create of a Machine (either API) under a name a deleted Machine had, recorded in the ledger first
   * (a `Create`: the deleted Machine's requests no longer cover the instances of this one, I6) and withdrawn
   * when the server refuses it (409 while the old one is still deleting). Errors are rethrown.
   */
  userCreate(type: ResourceType, object: KubeObject): Promise<KubeObject>;
  /** Crash one stand-in and start a fresh one on the same ledger. */
  restartStandIn(which: StandInName): Promise<void>;
  stopStandIn(which: StandInName): Promise<void>;
  startStandIn(which: StandInName): Promise<void>;
  /** The migration controller's writes since the harness started (from its log). */
  migrationWrites(): readonly MigrationWrite[];
  counters(): CounterSnapshot;
  stop(): Promise<void>;
}

/** The product's writes to machine kinds in `after` minus `before`, by `verb resource` (events, leases excluded). */
export const productMachineWrites = (
  before: CounterSnapshot,
  after: CounterSnapshot,
): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(after.byKey)) {
    const [verb, resource, user] = key.split(" ");
    if (user !== PRODUCT || !verb || !resource) continue;
    if (!["create", "update", "patch", "delete", "deletecollection"].includes(verb)) continue;
    if (/events|leases/.test(resource)) continue;
    if (!/machine|cluster\.x-k8s\.io|awsmachine/i.test(resource)) continue;
    const d = n - (before.byKey[key] ?? 0);
    if (d > 0) out[`${verb} ${resource}`] = d;
  }
  return out;
};

export const sumOf = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), `${options.name}-`));
  const writes: MigrationWrite[] = [];
  // The product's logger keeps only the migration controller's "wrote" lines (step attribution); the
  // stand-ins and the server log nothing.
  const productLogger: Logger = pino(
    { level: "info" },
    {
      write(line: string) {
        if (line.includes('"deleted"') && line.includes('"synchronized"')) {
          // The sync's propagated deletes, attributed like the migration's steps (I6 diagnosis).
          const o = JSON.parse(line) as Record<string, unknown>;
          for (const d of Array.isArray(o.deleted) ? o.deleted : []) {
            const [kind = "", ref = ""] = String(d).split(" ");
            writes.push({
              kind: kind as HandoverKind,
              name: ref.split("/")[1] ?? ref,
              step: `syncDelete(${String(d)}; cascade=${String(o.clusterCascade)}; branch=${String(o.branch)})`,
              target: ref,
            });
          }
          return;
        }
        if (!line.includes('"wrote"')) return;
        const o = JSON.parse(line) as Record<string, unknown>;
        if (o.msg === "wrote" && typeof o.step === "string")
          writes.push({
            kind: o.kind as HandoverKind,
            name: String(o.name),
            step: o.step,
            target: String(o.target),
          });
      },
    },
  );
  const quiet = pino({ level: "silent" });
  const certs = await writeDevelopmentCertificates(
    join(dir, "certs"),
    webhookSans("machine-api-migration", CAPI_NS),
  );
  const cluster = await startTestCluster({
    stateDir: dir,
    ...ns,
    controllerUsers: CONTROLLER_USERS,
    webhookCaPem: certs.ca.certPem,
    logger: quiet,
    bookmarkIntervalMs: 500,
  });
  const admin = cluster.clientAs("admin");
  const platform = platformConverterOf(options.platform ?? "AWS");
  const infra = infrastructure(options.platform);
  const createdInfra = await createIfMissing(admin, KINDS.infrastructure, infra);
  if (createdInfra) await admin.updateStatus(KINDS.infrastructure, { ...createdInfra, status: infra.status });
  for (const o of capiCluster(ns, options.platform))
    await admin.create(o.kind === "Cluster" ? KINDS.capiCluster : platform.infraCluster, o);

  const registry = new Registry();
  const metrics = runtimeMetrics(registry);
  const settings = {
    ...ns,
    controllerUsers: CONTROLLER_USERS,
    requireDeleteConfirmation: false,
    cacheStaleAfterMs: 30_000,
  };
  // The webhook reads the product's current cache, as in src/main.ts; a crash gives it the new one.
  const webhook: WebhookServer = await startWebhookServer({
    host: "127.0.0.1",
    port: 0,
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    shutdownDelayMs: 0,
    deps: {
      decide: (name, request) => {
        const policy = currentPolicy();
        if (!policy) throw new Error("webhook called before the product's cache exists");
        return decide(name, request, policy);
      },
      logger: quiet,
      registry,
      readiness: () => ({ ready: true }),
    },
  });

  /** One product replica: its own connection, cache (watches that can be held back) and controllers. */
  interface Replica {
    id: string;
    cache: Cache;
    lag: LaggingTransport;
    controllers: Controller[];
    policy: PolicyContext;
    elector?: LeaderElector;
  }
  let replicas: Replica[] = [];
  // Short Lease timings so a failover takes about a second; long enough that two busy cores keep renewing.
  const lease = { leaseDurationMs: 1_500, renewDeadlineMs: 1_200, retryPeriodMs: 100 };
  const leaderOf = (): Replica | undefined =>
    options.standby ? replicas.find((r) => r.elector?.isLeader()) : replicas[0];
  const startReplica = async (): Promise<Replica> => {
    const connection = connect({ kubeconfigText: cluster.kubeconfigText, context: "controller" });
    // The cache reads through a transport whose watches a test can hold back; the client's reads are live.
    const lag = laggingTransport(connection.transport);
    const c = createCache({ transport: lag, logger: quiet, clock: systemClock });
    const replicaPolicy: PolicyContext = {
      view: clusterView(c, ns),
      settings,
      checkConvertible,
      enforcing: true,
    };
    const events = createEventRecorder({
      client: connection.client,
      component: "machine-api-migration",
      clock: systemClock,
      logger: quiet,
    });
    const syncDeps = {
      client: connection.client,
      transport: connection.transport,
      cache: c,
      converter: memoisingConverter(conversionConverter),
      settings: { ...ns, platform },
      events,
      clock: systemClock,
      logger: quiet,
      metrics,
      workers: 2,
      maxDelayMs: options.syncMaxDelayMs ?? 500,
      ...(options.syncBaseDelayMs !== undefined ? { baseDelayMs: options.syncBaseDelayMs } : {}),
    };
    for (const [type, namespace] of options.informers ?? []) c.informerFor(type, namespace);
    const migration = (kind: HandoverKind) =>
      createMigrationController({
        kind,
        cache: c,
        client: connection.client,
        events,
        // A fresh registry per start: the controller registers its metrics once per registry.
        registry: new Registry(),
        clock: systemClock,
        logger: productLogger,
        namespaces: ns,
        infraMachineTypes: [platform.infraMachine],
        waitBackoff: options.waitBackoff ?? { initialMs: 50, maxMs: 500 },
        blockedRequeueMs: 1_000,
      });
    const built = [
      createMachineSyncController(syncDeps),
      createMachineSetSyncController(syncDeps),
      ...(options.migration === false ? [] : [migration("Machine"), migration("MachineSet")]),
    ];
    await c.waitForSync(10_000);
    const replica: Replica = {
      id: `product-${randomBytes(4).toString("hex")}`,
      cache: c,
      lag,
      controllers: built,
      policy: replicaPolicy,
    };
    if (options.standby) {
      const gate = leaderGatedControllers(built, quiet);
      replica.elector = createLeaderElector({
        client: connection.client,
        namespace: CAPI_NS,
        name: "machine-api-migration",
        identity: replica.id,
        ...lease,
        clock: systemClock,
        logger: quiet,
        onStartedLeading: gate.onStartedLeading,
        onStoppedLeading: gate.onStoppedLeading,
        drained: gate.drained,
      });
      replica.elector.start();
    } else await Promise.all(built.map((x) => x.start()));
    return replica;
  };
  /** A crash: controllers, elector (without releasing the Lease) and cache stopped; held watches dropped. */
  const crashReplica = async (r: Replica): Promise<void> => {
    replicas = replicas.filter((x) => x !== r);
    await r.elector?.stop();
    await Promise.all(r.controllers.map((c) => c.stop()));
    r.lag.releaseAll();
    await r.cache.stop();
  };
  const waitForLeader = async (timeoutMs = 20_000): Promise<Replica> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const l = leaderOf();
      if (l) return l;
      if (Date.now() > deadline) throw new Error("no product replica took the Lease");
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const startProduct = async (): Promise<void> => {
    replicas.push(await startReplica());
    if (options.standby) {
      replicas.push(await startReplica());
      await waitForLeader();
    }
  };
  /** The replica that serves admission in this harness: the leader's cache, or the last one's while none leads. */
  const currentPolicy = (): PolicyContext | undefined => (leaderOf() ?? replicas.at(-1))?.policy;
  const replicaOf = (role: ReplicaRole): Replica | undefined => {
    const l = leaderOf();
    return role === "leader" ? l : replicas.find((r) => r !== l);
  };
  await startProduct();
  await cluster.registerProductWebhooks(webhook.url);

  const ledger = createInstanceLedger(options.requireRecordedDeletes ? { requireRecordedDeletes: true } : {});
  const as = (context: string) => connect({ kubeconfigText: cluster.kubeconfigText, context });
  const standInStarters: Record<StandInName, () => Promise<RunningStandIn>> = {
    mao: () =>
      startMaoStandIn({
        connection: as("mao"),
        ...ns,
        logger: quiet,
        ledger,
        platform,
        provisioningDelayMs: options.provisioningDelayMs ?? 0,
      }),
    capi: () => startCapiStandIn({ connection: as("capi"), ...ns, logger: quiet, ledger, platform }),
    infra: () =>
      startInfraProviderStandIn({
        connection: as(infraProviderOf(platform).name),
        ...ns,
        logger: quiet,
        ledger,
        platform,
      }),
  };
  const running: Partial<Record<StandInName, RunningStandIn>> = {};
  if (options.standIns !== false)
    for (const n of ["mao", "capi", "infra"] as const) running[n] = await standInStarters[n]();

  const adminConnection = connect({ kubeconfigText: cluster.kubeconfigText, context: "admin" });
  const observer = createCache({ transport: adminConnection.transport, logger: quiet, clock: systemClock });
  const watchedList: Watched[] = [];
  /** `${kind}/${name}` → its entry: one lookup per event, not a scan of every run's objects. */
  const watchedByKey = new Map<string, Watched>();
  const observedListeners = new Set<() => void>();
  const snapshotOf = (w: Pick<Watched, "kind" | "name">): HandoverSnapshot =>
    readHandoverSnapshot(observer, w.kind, w.name, ns, [platform.infraMachine]);
  const watch = (kind: HandoverKind, name: string): Watched => {
    const key = `${kind}/${name}`;
    const found = watchedByKey.get(key);
    if (found) return found;
    const w: Watched = { kind, name, state: initialInvariantState, violations: [], observed: 0 };
    watchedList.push(w);
    watchedByKey.set(key, w);
    return w;
  };
  const fold = (w: Watched): void => {
    const s = snapshotOf(w);
    if (!s.mapi) return;
    w.observed++;
    const r = observeInvariants(w.state, s);
    w.state = r.state;
    for (const v of r.violations)
      w.violations.push({
        ...v,
        at: `status=${statusAuthorityReading(s.mapi)} rv=${s.mapi.metadata?.resourceVersion}`,
      });
  };
  /**
   * The handover objects an event of `o` can change: the one of its name (either copy, or its InfraMachine)
   * and the MachineSet it belongs to (owner or set label). Only those are folded again: folding every
   * watched object on every event grew with the campaign's world (every earlier run's objects) and
   * starved the product sharing this process.
   */
  const observe = (type: ResourceType, o: KubeObject, before?: KubeObject): void => {
    const name = nameOf(o);
    if (options.watchEverything && type === KINDS.mapiMachine) watch("Machine", name);
    if (options.watchEverything && type === KINDS.mapiMachineSet) watch("MachineSet", name);
    // The sets it belongs to, before and after (an update can orphan it or move it).
    const sets = new Set<string>(
      [o, before].flatMap((x) => {
        const labels = x?.metadata?.labels ?? {};
        return [
          ...ownerReferencesOf(x)
            .filter((ref) => ref.kind === "MachineSet")
            .map((ref) => ref.name),
          ...[labels[LABELS.capiSetName], labels[LABELS.templateMachineSet]].filter(
            (v): v is string => typeof v === "string",
          ),
        ];
      }),
    );
    const affected = [
      watchedByKey.get(`Machine/${name}`),
      watchedByKey.get(`MachineSet/${name}`),
      ...[...sets].map((set) => watchedByKey.get(`MachineSet/${set}`)),
    ];
    for (const w of new Set(affected)) if (w) fold(w);
    for (const listener of observedListeners) listener();
  };
  for (const [type, namespace] of [
    [KINDS.mapiMachine, MAPI_NS],
    [KINDS.mapiMachineSet, MAPI_NS],
    [KINDS.capiMachine, CAPI_NS],
    [KINDS.capiMachineSet, CAPI_NS],
    [platform.infraMachine, CAPI_NS],
  ] as const)
    observer.informerFor(type, namespace).addHandlers({
      onAdd: (o) => observe(type, o),
      onUpdate: (before, after) => observe(type, after, before),
      onDelete: (o) => observe(type, o),
    });
  await observer.waitForSync(10_000);

  const waitFor = <T>(
    what: string,
    probe: () => Promise<T | undefined | false> | T | undefined | false,
    timeoutMs = 20_000,
  ): Promise<T> => waitUntil(what, probe, { timeoutMs });
  const standIns = (): Record<StandInName, RunningStandIn> => {
    const { mao, capi, infra } = running;
    if (!mao || !capi || !infra) throw new Error("a stand-in is stopped");
    return { mao, capi, infra };
  };
  const idle = (): boolean =>
    replicas.every((r) => r.lag.held().length === 0) &&
    replicas
      .flatMap((r) => r.controllers)
      .every((c) => (c.queue()?.len() ?? 0) === 0 && (c.queue()?.processing().length ?? 0) === 0) &&
    Object.values(running).every((s) => s.idle());
  const existing = async () => {
    const listedFrom = ledger.currentSeq();
    return {
      mapi: (await admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.map(nameOf),
      capi: (await admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items.map(nameOf),
      listedFrom,
    };
  };

  const harness: Harness = {
    cluster,
    admin,
    ledger,
    standIns,
    metrics,
    productCache: () => {
      const r = leaderOf() ?? replicas[0];
      if (!r) throw new Error("the product is not running");
      return r.cache;
    },
    controllers: () => leaderOf()?.controllers ?? [],
    watch,
    watched: () => watchedList,
    onObserved(listener) {
      observedListeners.add(listener);
      return () => {
        observedListeners.delete(listener);
      };
    },
    snapshotOf,
    violations: () =>
      watchedList.flatMap((w) => w.violations.map((v) => ({ kind: w.kind, name: w.name, ...v }))),
    ledgerViolations: async () => ledger.violations(await existing()),
    existing,
    waitFor,
    async quiesce(timeoutMs = 20_000) {
      let calm = 0;
      await waitFor(
        "controllers and stand-ins idle",
        async () => {
          await cluster.settled();
          await flushMicrotasks();
          calm = idle() ? calm + 1 : 0;
          return calm >= 5;
        },
        timeoutMs,
      );
    },
    async setSpecAuthority(kind, name, authority) {
      const type = kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet;
      await admin.patch(type, MAPI_NS, name, {
        type: "merge",
        body: { spec: { authoritativeAPI: authority } },
      });
    },
    steady: (w, authority, timeoutMs) =>
      waitFor(
        `${w.kind} ${w.name} steady under ${authority}`,
        () => {
          const s = snapshotOf(w);
          if (
            !s.mapi ||
            statusAuthorityReading(s.mapi) !== authority ||
            synchronizedAPI(s.mapi) !== authority
          )
            return false;
          if (conditionOf(s.mapi, "Synchronized")?.status !== "True") return false;
          const pauseTargets = w.kind === "Machine" ? [s.capi, s.infraMachine] : [s.capi];
          return (
            pauseTargets.every((o) => o !== undefined && isPaused(o) === (authority === "MachineAPI")) && s
          );
        },
        timeoutMs,
      ),
    async eventReasons(w) {
      return (await admin.list(KINDS.event, { namespace: MAPI_NS })).items
        .filter(
          (e) =>
            getPath(e, ["involvedObject", "name"]) === w.name &&
            getPath(e, ["involvedObject", "kind"]) === w.kind,
        )
        .flatMap((e) => Array.from({ length: Number(e.count ?? 1) }, () => String(e.reason)));
    },
    async restartProduct() {
      for (const r of [...replicas]) await crashReplica(r);
      await startProduct();
    },
    async failover() {
      if (!options.standby) throw new Error("failover needs a harness started with standby: true");
      const leader = await waitForLeader();
      await crashReplica(leader);
      await waitForLeader();
      replicas.push(await startReplica());
    },
    holdWatch(role, type) {
      replicaOf(role)?.lag.hold(type);
    },
    releaseWatches(role) {
      for (const r of role ? [replicaOf(role)] : replicas) r?.lag.releaseAll();
    },
    heldWatches: () => ({
      leader: replicaOf("leader")?.lag.held() ?? [],
      standby: replicaOf("standby")?.lag.held() ?? [],
    }),
    async userDelete(type, namespace, name, request, deleteOptions) {
      const id = ledger.userRequested(request, `delete ${type.plural}.${type.group} ${namespace}/${name}`);
      try {
        await admin.delete(type, namespace, name, deleteOptions);
      } catch (e) {
        if (e instanceof KubeApiError) ledger.withdrawn(id);
        throw e;
      }
    },
    async userCreate(type, object) {
      const name = nameOf(object);
      const id = ledger.userRequested(
        { kind: "Create", name },
        `create ${type.plural}.${type.group} ${object.metadata?.namespace}/${name}`,
      );
      try {
        return await admin.create(type, object);
      } catch (e) {
        if (e instanceof KubeApiError) ledger.withdrawn(id);
        throw e;
      }
    },
    async stopStandIn(which) {
      const s = running[which];
      delete running[which];
      await s?.stop();
    },
    async startStandIn(which) {
      if (!running[which]) running[which] = await standInStarters[which]();
    },
    async restartStandIn(which) {
      await harness.stopStandIn(which);
      await harness.startStandIn(which);
    },
    migrationWrites: () => writes,
    counters: () => cluster.counters(),
    async stop() {
      cluster.faults.clear();
      await Promise.all(Object.values(running).map((s) => s.stop({ release: true })));
      for (const r of [...replicas]) await crashReplica(r);
      await observer.stop();
      await webhook.close();
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** How many more times each reason was reported than in `before` (the recorder aggregates repeats). */
export const newReasons = (before: readonly string[], after: readonly string[]): string[] => {
  const left = [...before];
  return after.filter((r) => {
    const i = left.indexOf(r);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
};

/** A transport whose watch events and lists of chosen kinds can be held back: a cache that lags per kind. */
export interface LaggingTransport extends Transport {
  hold(type: ResourceType): void;
  releaseAll(): void;
  /** The kinds held now, as `plural.group`. */
  held(): string[];
}

const lagKey = (type: ResourceType): string => `${type.plural}.${type.group || "core"}`;

/** `plural.group` of a collection path (`/api/v1/…` or `/apis/<group>/<version>/…`), if it is one. */
const lagKeyOfPath = (path: string): string | undefined => {
  const parts = path.split("/").filter(Boolean);
  const group = parts[0] === "api" ? "core" : parts[0] === "apis" ? parts[1] : undefined;
  if (!group) return undefined;
  const rest = parts.slice(parts[0] === "api" ? 2 : 3);
  const plural = rest[0] === "namespaces" ? rest[2] : rest[0];
  const named = rest[0] === "namespaces" ? rest.length > 3 : rest.length > 1;
  return plural && !named ? `${plural}.${group}` : undefined;
};

/**
 * Wraps `base` so that, while a kind is held, a watch stream of it delivers nothing (events wait, in order,
 * and flow again on release) and a list of it waits: the informer stays where it was. Named GETs, writes and
 * everything else pass. An abort (a stopped cache) ends the wait.
 */
export function laggingTransport(base: Transport): LaggingTransport {
  const held = new Set<string>();
  let wake: (() => void)[] = [];
  const released = (key: string, signal: AbortSignal | undefined): Promise<void> =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!held.has(key) || signal?.aborted) resolve();
        else wake.push(check);
      };
      signal?.addEventListener("abort", () => resolve(), { once: true });
      check();
    });
  const notify = () => {
    const w = wake;
    wake = [];
    for (const f of w) f();
  };
  return {
    async request(req: KubeRequest) {
      const key = req.method === "GET" ? lagKeyOfPath(req.path) : undefined;
      if (key && held.has(key)) await released(key, req.signal);
      return base.request(req);
    },
    async stream(req: KubeRequest): Promise<JsonStream> {
      const key = lagKeyOfPath(req.path);
      const inner = await base.stream(req);
      if (!key) return inner;
      return {
        close: () => inner.close(),
        async *[Symbol.asyncIterator]() {
          for await (const event of inner) {
            if (held.has(key)) await released(key, req.signal);
            if (req.signal?.aborted) return;
            yield event;
          }
        },
      };
    },
    hold(type) {
      held.add(lagKey(type));
    },
    releaseAll() {
      held.clear();
      notify();
    },
    held: () => [...held],
  };
}
