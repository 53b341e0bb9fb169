/**
 * The whole product in one place (SPEC §10): the local API server with the product's real admission
 * webhook, the sync controllers and both migration controllers on one shared informer cache as the product's
 * service account (as src/main.ts composes them), and the simulated providers of SPEC §1.1 (MAO, CAPI and
 * CAPA stand-ins with the instance ledger). A user flips `spec.authoritativeAPI` with `admin`; nobody plays a
 * controller by hand. An observer cache checks I1–I4 (`observeInvariants`) after every watch event it sees;
 * the ledger proves the first duty at the end (no instance created twice, none leaked or terminated).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cache, createCache } from "../../src/kube/cache.js";
import type { KubeClient } from "../../src/kube/client.js";
import { flushMicrotasks, systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import type { Controller } from "../../src/kube/controller.js";
import { createEventRecorder } from "../../src/kube/events.js";
import type { StableAuthority } from "../../src/kube/kinds.js";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { runtimeMetrics } from "../../src/kube/metrics.js";
import { conditionOf, finalizersOf, getPath, nameOf } from "../../src/kube/object.js";
import { createIfMissing, type LocalCluster, startLocalCluster } from "../../src/local/cluster.js";
import { capiCluster, infrastructure, mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { createMigrationController } from "../../src/migration/controller.js";
import type { InvariantState, Violation } from "../../src/migration/invariants.js";
import { initialInvariantState, observeInvariants } from "../../src/migration/invariants.js";
import { readHandoverSnapshot } from "../../src/migration/read-snapshot.js";
import type { HandoverKind, HandoverSnapshot } from "../../src/migration/snapshot.js";
import { hasPause, statusAuthorityOf, synchronizedAPIOf } from "../../src/migration/snapshot.js";
import { decide } from "../../src/policies/engine.js";
import type { PolicyContext } from "../../src/policies/types.js";
import { clusterView } from "../../src/policies/view.js";
import { webhookSans, writeDevelopmentCertificates } from "../../src/server/certs.js";
import { startWebhookServer, type WebhookServer } from "../../src/server/serve.js";
import {
  createInstanceLedger,
  type RunningStandIn,
  type SimulatedProviders,
  startMaoStandIn,
  startSimulatedProviders,
} from "../../src/simulate/index.js";
import { createMachineSetSyncController, createMachineSyncController } from "../../src/sync/controller.js";
import { checkConvertible } from "../../src/sync/conversion/index.js";
import { conversionConverter } from "../../src/sync/converter.js";

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";
const ns = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
const PRODUCT = "system:serviceaccount:openshift-cluster-api:machine-api-migration";
const CONTROLLER_USERS = [
  PRODUCT,
  "system:serviceaccount:openshift-machine-api:machine-api-controllers",
  "system:serviceaccount:openshift-cluster-api:capi-manager",
  "system:serviceaccount:openshift-cluster-api:capa-controller-manager",
  "system:serviceaccount:kube-system:generic-garbage-collector",
  "system:serviceaccount:kube-system:namespace-controller",
];
const MACHINE = "e2e-handover-m1";

let dir: string;
let local: LocalCluster;
let webhook: WebhookServer;
let cache: Cache;
let observer: Cache;
let controllers: Controller[] = [];
let providers: SimulatedProviders;
/** The MAO stand-in now running (a test stops and restarts it). */
let mao: RunningStandIn;
let logger: Logger;
let admin: KubeClient;

/** One watched handover: the invariant fold over every snapshot the observer saw. */
interface Watched {
  kind: HandoverKind;
  name: string;
  state: InvariantState;
  violations: (Violation & { at: string })[];
  observed: number;
}
const watched: Watched[] = [];
const watch = (kind: HandoverKind, name: string): Watched => {
  const w: Watched = { kind, name, state: initialInvariantState, violations: [], observed: 0 };
  watched.push(w);
  return w;
};
const snapshotOf = (w: Watched): HandoverSnapshot => readHandoverSnapshot(observer, w.kind, w.name, ns);
const observeAll = (): void => {
  for (const w of watched) {
    const s = snapshotOf(w);
    if (!s.mapi) continue;
    w.observed++;
    const r = observeInvariants(w.state, s);
    w.state = r.state;
    for (const v of r.violations)
      w.violations.push({
        ...v,
        at: `status=${statusAuthorityOf(s.mapi)} rv=${s.mapi.metadata?.resourceVersion}`,
      });
  }
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "handover-e2e-"));
  logger = pino({ level: "silent" });
  const certs = await writeDevelopmentCertificates(
    join(dir, "certs"),
    webhookSans("machine-api-migration", CAPI_NS),
  );
  local = await startLocalCluster({
    host: "127.0.0.1",
    port: 0,
    stateDir: dir,
    ...ns,
    controllerUsers: CONTROLLER_USERS,
    webhookCaPem: certs.ca.certPem,
    logger,
    bookmarkIntervalMs: 500,
  });
  admin = local.clientAs("admin");
  const infra = infrastructure();
  const createdInfra = await createIfMissing(admin, KINDS.infrastructure, infra);
  if (createdInfra) await admin.updateStatus(KINDS.infrastructure, { ...createdInfra, status: infra.status });
  for (const o of capiCluster(ns))
    await admin.create(o.kind === "Cluster" ? KINDS.capiCluster : KINDS.awsCluster, o);

  const connection = connect({ kubeconfigText: local.kubeconfigText, context: "controller" });
  cache = createCache({ transport: connection.transport, logger, clock: systemClock });
  const policy: PolicyContext = {
    view: clusterView(cache, ns),
    settings: {
      ...ns,
      controllerUsers: CONTROLLER_USERS,
      requireDeleteConfirmation: false,
      cacheStaleAfterMs: 30_000,
    },
    checkConvertible,
    enforcing: true,
  };
  const registry = new Registry();
  webhook = await startWebhookServer({
    host: "127.0.0.1",
    port: 0,
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    shutdownDelayMs: 0,
    deps: {
      decide: (name, request) => decide(name, request, policy),
      logger,
      registry,
      readiness: () => ({ ready: true }),
    },
  });
  const metrics = runtimeMetrics(registry);
  const events = createEventRecorder({
    client: connection.client,
    component: "machine-api-migration",
    clock: systemClock,
    logger,
  });
  const syncDeps = {
    client: connection.client,
    transport: connection.transport,
    cache,
    converter: conversionConverter,
    settings: ns,
    events,
    clock: systemClock,
    logger,
    metrics,
    workers: 2,
    maxDelayMs: 500,
  };
  const migration = (kind: HandoverKind) =>
    createMigrationController({
      kind,
      cache,
      client: connection.client,
      events,
      registry,
      clock: systemClock,
      logger,
      namespaces: ns,
      waitBackoff: { initialMs: 50, maxMs: 500 },
      blockedRequeueMs: 1_000,
    });
  controllers = [
    createMachineSyncController(syncDeps),
    createMachineSetSyncController(syncDeps),
    migration("Machine"),
    migration("MachineSet"),
  ];
  await cache.waitForSync();
  await local.registerProductWebhooks(webhook.url);

  const adminConnection = connect({ kubeconfigText: local.kubeconfigText, context: "admin" });
  observer = createCache({ transport: adminConnection.transport, logger, clock: systemClock });
  for (const [type, namespace] of [
    [KINDS.mapiMachine, MAPI_NS],
    [KINDS.mapiMachineSet, MAPI_NS],
    [KINDS.capiMachine, CAPI_NS],
    [KINDS.capiMachineSet, CAPI_NS],
    [KINDS.awsMachine, CAPI_NS],
  ] as const)
    observer.informerFor(type, namespace).addHandlers({
      onAdd: observeAll,
      onUpdate: observeAll,
      onDelete: observeAll,
    });
  await observer.waitForSync(10_000);

  await Promise.all(controllers.map((c) => c.start()));
  const as = (context: string) => connect({ kubeconfigText: local.kubeconfigText, context });
  providers = await startSimulatedProviders({
    connections: { mao: as("mao"), capi: as("capi"), capa: as("capa") },
    ...ns,
    logger,
    ledger: createInstanceLedger(),
    provisioningDelayMs: 0,
  });
  mao = providers.mao;
}, 60_000);

afterAll(async () => {
  await providers?.stop();
  if (mao && mao !== providers?.mao) await mao.stop({ release: true });
  await Promise.all(controllers.map((c) => c.stop()));
  await observer?.stop();
  await cache?.stop();
  await webhook?.close();
  await local?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const waitFor = async <T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

const idle = (): boolean =>
  controllers.every((c) => (c.queue()?.len() ?? 0) === 0 && (c.queue()?.processing().length ?? 0) === 0) &&
  [mao, providers.capi, providers.capa].every((s) => s.idle());

const quiesce = async (): Promise<void> => {
  let calm = 0;
  await waitFor("controllers and stand-ins idle", async () => {
    await local.api.settled();
    await flushMicrotasks();
    calm = idle() ? calm + 1 : 0;
    return calm >= 5;
  });
};

const existing = async () => ({
  mapi: (await admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.map(nameOf),
  capi: (await admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items.map(nameOf),
});

const instancesOf = (machineName: string) =>
  providers.ledger.snapshot().instances.filter((i) => i.machineName === machineName);

const setSpecAuthority = async (kind: HandoverKind, name: string, authority: StableAuthority) => {
  const type = kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet;
  await admin.patch(type, MAPI_NS, name, { type: "merge", body: { spec: { authoritativeAPI: authority } } });
};

/** Status, synchronizedAPI and the pause state all match `authority`, and the sync has caught up. */
const steady = (w: Watched, authority: StableAuthority) =>
  waitFor(`${w.kind} ${w.name} steady under ${authority}`, () => {
    const s = snapshotOf(w);
    if (!s.mapi || statusAuthorityOf(s.mapi) !== authority || synchronizedAPIOf(s.mapi) !== authority)
      return false;
    if (conditionOf(s.mapi, "Synchronized")?.status !== "True") return false;
    const pauseTargets = w.kind === "Machine" ? [s.capi, s.infraMachine] : [s.capi];
    return pauseTargets.every((o) => o !== undefined && hasPause(o) === (authority === "MachineAPI")) && s;
  });

/** How many more times each reason was reported than in `before` (the recorder aggregates repeats). */
const newReasons = (before: readonly string[], after: readonly string[]): string[] => {
  const left = [...before];
  return after.filter((r) => {
    const i = left.indexOf(r);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
};

const eventReasons = async (w: Watched): Promise<string[]> =>
  (await admin.list(KINDS.event, { namespace: MAPI_NS })).items
    .filter(
      (e) =>
        getPath(e, ["involvedObject", "name"]) === w.name &&
        getPath(e, ["involvedObject", "kind"]) === w.kind,
    )
    .flatMap((e) => Array.from({ length: Number(e.count ?? 1) }, () => String(e.reason)));

describe("handover with the real webhook, the sync controllers and the simulated providers (SPEC §10)", () => {
  it("Machine MachineAPI → ClusterAPI → MachineAPI: one instance throughout, I1–I4 after every event", async () => {
    const w = watch("Machine", MACHINE);
    const m = mapiMachine(ns, MACHINE, "a");
    await admin.create(KINDS.mapiMachine, m);
    await waitFor("MAO's Machine Running", async () => {
      const o = await admin.get(KINDS.mapiMachine, MAPI_NS, MACHINE);
      return getPath(o, ["status", "phase"]) === "Running" || undefined;
    });
    await steady(w, "MachineAPI");
    await quiesce();
    expect(instancesOf(MACHINE)).toMatchObject([{ side: "MachineAPI" }]);

    await setSpecAuthority("Machine", MACHINE, "ClusterAPI");
    const there = await steady(w, "ClusterAPI");
    await quiesce();
    expect(finalizersOf(there.capi)).toContain(FINALIZERS.capiMachine);
    expect(finalizersOf(there.infraMachine)).toContain(FINALIZERS.awsMachine);
    expect(finalizersOf(there.mapi)).not.toContain(FINALIZERS.mapiMachine);
    // CAPA adopted the instance through the AWSMachine's instanceID: it created none.
    expect(instancesOf(MACHINE)).toMatchObject([{ side: "MachineAPI" }]);
    expect(instancesOf(MACHINE)[0]?.terminatedSeq).toBeUndefined();

    await setSpecAuthority("Machine", MACHINE, "MachineAPI");
    const back = await steady(w, "MachineAPI");
    await quiesce();
    expect(finalizersOf(back.mapi)).toContain(FINALIZERS.mapiMachine);
    expect(instancesOf(MACHINE)).toHaveLength(1);
    expect(instancesOf(MACHINE)[0]?.terminatedSeq).toBeUndefined();

    expect(w.observed).toBeGreaterThan(10);
    expect(w.violations).toEqual([]);
    const reasons = await eventReasons(w);
    expect(reasons.filter((r) => r === "MigrationStarted")).toHaveLength(2);
    expect(reasons.filter((r) => r === "MigrationCompleted")).toHaveLength(2);
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });

  it("a cancel (SPEC §3.3) while MAO is down: the stop is never acknowledged, spec goes back, nothing moved", async () => {
    const w = watched.find((x) => x.kind === "Machine" && x.name === MACHINE)!;
    await steady(w, "MachineAPI");
    await quiesce();
    const before = await eventReasons(w);
    await mao.stop();
    await setSpecAuthority("Machine", MACHINE, "ClusterAPI");
    await waitFor("status Migrating", () => statusAuthorityOf(snapshotOf(w).mapi!) === "Migrating");
    // Step 6 waits for MAO's Paused=True, which cannot come.
    await waitFor("WaitingForPause", async () =>
      newReasons(before, await eventReasons(w)).includes("WaitingForPause"),
    );
    await setSpecAuthority("Machine", MACHINE, "MachineAPI");
    await waitFor("status MachineAPI", () => statusAuthorityOf(snapshotOf(w).mapi!) === "MachineAPI");
    mao = await startMaoStandIn({
      connection: connect({ kubeconfigText: local.kubeconfigText, context: "mao" }),
      ...ns,
      logger,
      ledger: providers.ledger,
      provisioningDelayMs: 0,
    });
    const s = await steady(w, "MachineAPI");
    await quiesce();
    expect(finalizersOf(s.mapi)).toContain(FINALIZERS.mapiMachine);
    expect(finalizersOf(s.capi)).not.toContain(FINALIZERS.capiMachine);
    expect(instancesOf(MACHINE)).toHaveLength(1);
    expect(w.violations).toEqual([]);
    const after = newReasons(before, await eventReasons(w));
    expect(after.filter((r) => r === "MigrationCancelled")).toHaveLength(1);
    expect(after).not.toContain("MigrationCompleted");
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });

  it("MachineSet MachineAPI → ClusterAPI → MachineAPI: its Machine's twin is the new set's, no new instance, I1–I4 hold", async () => {
    const set = mapiMachineSet(ns, "b", 1);
    const name = nameOf(set);
    const w = watch("MachineSet", name);
    await admin.create(KINDS.mapiMachineSet, set);
    const member = await waitFor("MAO's Machine Running and synchronized", async () => {
      const items = (await admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((o) =>
        nameOf(o).startsWith(`${name}-`),
      );
      return items.length === 1 &&
        getPath(items[0], ["status", "phase"]) === "Running" &&
        conditionOf(items[0], "Synchronized")?.status === "True"
        ? items[0]
        : undefined;
    });
    await steady(w, "MachineAPI");
    await quiesce();

    await setSpecAuthority("MachineSet", name, "ClusterAPI");
    const there = await steady(w, "ClusterAPI");
    await quiesce();
    expect(finalizersOf(there.capi)).toContain(FINALIZERS.capiMachineSet);
    // A MachineSet handover does not migrate its Machines (SPEC §1): the member stays MAPI-authoritative.
    const memberNow = await admin.get(KINDS.mapiMachine, MAPI_NS, nameOf(member));
    expect(getPath(memberNow, ["status", "authoritativeAPI"])).toBe("MachineAPI");
    // The unpaused CAPI MachineSet found its replica in the member's twin: nobody created another.
    const machinesOfSet = (await existing()).capi.filter((n) => n.startsWith(`${name}-`));
    expect(machinesOfSet).toEqual([nameOf(member)]);
    expect(
      providers.ledger.snapshot().instances.filter((i) => i.machineName.startsWith(`${name}-`)),
    ).toHaveLength(1);

    await setSpecAuthority("MachineSet", name, "MachineAPI");
    const back = await steady(w, "MachineAPI");
    await quiesce();
    expect(finalizersOf(back.capi)).not.toContain(FINALIZERS.capiMachineSet);
    expect((await existing()).mapi.filter((n) => n.startsWith(`${name}-`))).toEqual([nameOf(member)]);
    expect(
      providers.ledger.snapshot().instances.filter((i) => i.machineName.startsWith(`${name}-`)),
    ).toHaveLength(1);
    expect(w.observed).toBeGreaterThan(5);
    expect(w.violations).toEqual([]);
    const reasons = await eventReasons(w);
    expect(reasons.filter((r) => r === "MigrationCompleted")).toHaveLength(2);
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });
});
