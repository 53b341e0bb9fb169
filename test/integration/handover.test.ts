/**
 * Whole Machine and MachineSet handovers against the local API server (SPEC §10): the local cluster of
 * src/local (CRDs with their CEL transition rules, one identity per actor), both migration controllers
 * running on their own informer cache as the product's service account, and the acknowledgers driven by
 * this test as the real controllers' identities would act — MAO writing the MAPI `Paused` condition and its
 * finalizer, CAPI and CAPA writing their `Paused` conditions and finalizers from their own pause
 * annotation, and the sync's final sync writing `Synchronized=True FinalSyncComplete` with
 * synchronizedGeneration (src/simulate and src/sync's controllers are not wired here). An observer cache
 * checks I1–I4 (`observeInvariants`) after every watch event it sees. The MachineSet has no replicas, so its
 * member-Machine checks hold trivially. Real time with short requeues; assertions are on state and Events.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Cache } from "../../src/kube/cache.js";
import { createCache } from "../../src/kube/cache.js";
import type { KubeClient } from "../../src/kube/client.js";
import { systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import type { Controller } from "../../src/kube/controller.js";
import { createEventRecorder } from "../../src/kube/events.js";
import type { ResourceType, StableAuthority } from "../../src/kube/kinds.js";
import {
  ANNOTATIONS,
  CAPI_API_VERSION,
  CONDITIONS,
  FINALIZERS,
  KINDS,
  PAUSED_BY_VALUE,
} from "../../src/kube/kinds.js";
import type { Condition, KubeObject } from "../../src/kube/object.js";
import {
  conditionOf,
  conditionsOf,
  finalizersOf,
  generationOf,
  getPath,
  setCondition,
} from "../../src/kube/object.js";
import { provisionedMapiStatus } from "../../src/local/demo.js";
import { capiCluster, infrastructure, mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { createMigrationController } from "../../src/migration/controller.js";
import { readHandoverSnapshot } from "../../src/migration/read-snapshot.js";
import type { HandoverKind, HandoverSnapshot } from "../../src/migration/snapshot.js";
import { statusAuthorityReading, synchronizedAPI } from "../../src/protocol/authority.js";
import { hasPauseMarker, isPaused, pauseAcknowledged } from "../../src/protocol/pause.js";
import {
  mapiMachineSetToCapi,
  mapiMachineStatusToCapi,
  mapiMachineToCapi,
} from "../../src/sync/conversion/index.js";
import { startTestCluster, type TestCluster } from "../cluster/backend.js";
import { silentLogger } from "../kube/fakes.js";
import type { InvariantState, Violation } from "../migration/invariants.js";
import { initialInvariantState, observeInvariants } from "../migration/invariants.js";

const NS = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };
const PRODUCT_USER = `system:serviceaccount:${NS.capiNamespace}:machine-api-migration`;
const NAME = "worker-handover-a";
/** A MachineSet with no replicas: its handover has no member Machines to check (SPEC §3.1 step 4). */
const SET_NAME = "workers-handover-b";
const stamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

let stateDir: string;
let cluster: TestCluster;
let observer: Cache;
let controllerCache: Cache;
let controllers: Controller[] = [];
const stops: (() => Promise<unknown>)[] = [];

/** One observed handover: its invariant fold and what it showed. */
interface Observed {
  kind: HandoverKind;
  name: string;
  invariants: InvariantState;
  violations: (Violation & { at: string })[];
  observed: number;
}
const observedOf = (kind: HandoverKind, name: string): Observed => ({
  kind,
  name,
  invariants: initialInvariantState,
  violations: [],
  observed: 0,
});
const MACHINE = observedOf("Machine", NAME);
const MACHINE_SET = observedOf("MachineSet", SET_NAME);

/** While set, the sync stand-in performs no final sync (a handover waits at step 7; a cancel can land). */
const hold = { finalSync: false };

const snapshotOf = (h: Observed): HandoverSnapshot => readHandoverSnapshot(observer, h.kind, h.name, NS);
const snapshot = (): HandoverSnapshot => snapshotOf(MACHINE);

const observe = (h: Observed): void => {
  const s = snapshotOf(h);
  if (!s.mapi) return;
  h.observed++;
  const r = observeInvariants(h.invariants, s);
  h.invariants = r.state;
  for (const v of r.violations)
    h.violations.push({
      ...v,
      at: `status=${statusAuthorityReading(s.mapi)} rv=${s.mapi.metadata?.resourceVersion}`,
    });
};

// ---------------------------------------------------------------------------------------------------
// The acknowledgers, each acting as its controller's identity. Every write carries the resourceVersion it
// was computed from; a conflict is simply retried on the next watch event.

const statusPatch = async (
  client: KubeClient,
  type: ResourceType,
  o: KubeObject,
  status: Record<string, unknown>,
) =>
  client.patch(
    type,
    o.metadata!.namespace!,
    o.metadata!.name!,
    { type: "merge", body: { metadata: { resourceVersion: o.metadata!.resourceVersion }, status } },
    { subresource: "status" },
  );

const finalizerPatch = async (client: KubeClient, type: ResourceType, o: KubeObject, finalizers: string[]) =>
  client.patch(type, o.metadata!.namespace!, o.metadata!.name!, {
    type: "merge",
    body: { metadata: { resourceVersion: o.metadata!.resourceVersion, finalizers } },
  });

const withCondition = (o: KubeObject, c: Omit<Condition, "lastTransitionTime">): Condition[] | undefined => {
  const before = conditionsOf(o);
  const after = setCondition(before, c, new Date());
  return after === before ? undefined : [...after];
};

/**
 * MAO: `Paused` from status.authoritativeAPI (False only under MachineAPI); its finalizer on a Machine
 * while active (MAPI MachineSets carry none).
 */
const mao = async (s: HandoverSnapshot, client: KubeClient): Promise<void> => {
  const type = s.kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet;
  const mapi = s.mapi;
  if (!mapi) return;
  const status = statusAuthorityReading(mapi);
  if (status === "absent" || status === "invalid") return;
  const active = status === "MachineAPI";
  const conditions = withCondition(
    mapi,
    active
      ? { type: "Paused", status: "False", reason: "AuthoritativeAPIMachineAPI", severity: "" }
      : { type: "Paused", status: "True", reason: "AuthoritativeAPINotMachineAPI", severity: "Info" },
  );
  if (conditions) return void (await statusPatch(client, type, mapi, { conditions }));
  if (s.kind === "Machine" && active && !finalizersOf(mapi).includes(FINALIZERS.mapiMachine))
    await finalizerPatch(client, KINDS.mapiMachine, mapi, [...finalizersOf(mapi), FINALIZERS.mapiMachine]);
};

/** CAPI and CAPA: `Paused` from the object's own annotation; their finalizer while unpaused. */
const capiLike =
  (type: ResourceType, finalizer: string) =>
  async (o: KubeObject | undefined, client: KubeClient): Promise<void> => {
    if (!o) return;
    const paused = isPaused(o);
    const conditions = withCondition(
      o,
      paused
        ? { type: "Paused", status: "True", reason: "Paused", message: "" }
        : { type: "Paused", status: "False", reason: "NotPaused", message: "" },
    );
    if (conditions) return void (await statusPatch(client, type, o, { conditions }));
    if (!paused && !finalizersOf(o).includes(finalizer))
      await finalizerPatch(client, type, o, [...finalizersOf(o), finalizer]);
  };
const capi = capiLike(KINDS.capiMachine, FINALIZERS.capiMachine);
const capa = capiLike(KINDS.awsMachine, FINALIZERS.awsMachine);
const capiMachineSet = capiLike(KINDS.capiMachineSet, FINALIZERS.capiMachineSet);

/**
 * The sync, as far as the handover sees it (SPEC §4.5): under a stable status, Synchronized=True with the
 * authoritative side's generation; while Migrating, only the final sync — once the old authority's
 * acknowledgers report Paused=True after the recorded time — with reason FinalSyncComplete.
 */
const sync = async (s: HandoverSnapshot, client: KubeClient): Promise<void> => {
  const { mapi, capi: twin } = s;
  if (!mapi || !twin) return;
  const status = statusAuthorityReading(mapi);
  let reason: string;
  let source: StableAuthority;
  if (status === "MachineAPI" || status === "ClusterAPI") {
    reason = "ResourceSynchronized";
    source = status;
  } else if (status === "Migrating") {
    const old = synchronizedAPI(mapi);
    if (hold.finalSync || !old || !pauseAcknowledged(s, old)) return;
    reason = "FinalSyncComplete";
    source = old;
  } else return;
  const generation = generationOf(source === "MachineAPI" ? mapi : twin);
  const conditions = withCondition(mapi, {
    type: CONDITIONS.synchronized,
    status: "True",
    reason,
    message: `Successfully synchronized from ${source}`,
    severity: "",
  });
  if (!conditions && getPath(mapi, ["status", "synchronizedGeneration"]) === generation) return;
  await statusPatch(client, s.kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet, mapi, {
    synchronizedGeneration: generation,
    conditions: conditions ?? conditionsOf(mapi),
  });
};

let acting: Promise<void> = Promise.resolve();
let again = false;
/** Runs every acknowledger once per observed change, one round at a time. */
const kick = (): void => {
  if (again) return;
  again = true;
  acting = acting.then(async () => {
    again = false;
    const m = snapshotOf(MACHINE);
    const set = snapshotOf(MACHINE_SET);
    const actors: (() => Promise<void>)[] = [
      () => mao(m, cluster.clientAs("mao")),
      () => capi(m.capi, cluster.clientAs("capi")),
      () => capa(m.infraMachine, cluster.clientAs("capa")),
      () => sync(m, cluster.clientAs("controller")),
      () => mao(set, cluster.clientAs("mao")),
      () => capiMachineSet(set.capi, cluster.clientAs("capi")),
      () => sync(set, cluster.clientAs("controller")),
    ];
    for (const run of actors)
      await run().catch(() => {
        // A conflict: the watch event of the write that won brings another round.
        setTimeout(kick, 20);
      });
  });
};

// ---------------------------------------------------------------------------------------------------

const events = async (
  h: Observed = MACHINE,
): Promise<{ reason: string; type: string; message: string; count: number }[]> => {
  const list = await cluster.clientAs("admin").list(KINDS.event, { namespace: NS.mapiNamespace });
  return list.items
    .filter(
      (e) =>
        getPath(e, ["involvedObject", "name"]) === h.name &&
        getPath(e, ["involvedObject", "kind"]) === h.kind,
    )
    .sort((a, b) =>
      String(a.metadata?.resourceVersion).localeCompare(String(b.metadata?.resourceVersion), "en", {
        numeric: true,
      }),
    )
    .map((e) => ({
      reason: String(e.reason),
      type: String(e.type),
      message: String(e.message),
      count: Number(e.count ?? 1),
    }));
};
/** Every report, a repeat aggregated into one Event (`count`) included once per time it was reported. */
const reasons = async (h: Observed = MACHINE) =>
  (await events(h)).flatMap((e) => Array.from({ length: e.count }, () => e.reason));

/** The reports in `after` that were not in `before` (aggregation moves Events, so no positions). */
const newReasons = (before: readonly string[], after: readonly string[]): string[] => {
  const left = [...before];
  return after.filter((r) => {
    const i = left.indexOf(r);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
};

const setSpecAuthority = async (authority: StableAuthority, h: Observed = MACHINE): Promise<void> => {
  const type = h.kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet;
  await cluster.clientAs("admin").patch(type, NS.mapiNamespace, h.name, {
    type: "merge",
    body: { spec: { authoritativeAPI: authority } },
  });
};

const untilSteady = async (authority: StableAuthority, h: Observed = MACHINE): Promise<HandoverSnapshot> => {
  await vi.waitFor(
    () => {
      const s = snapshotOf(h);
      expect(statusAuthorityReading(s.mapi!)).toBe(authority);
      expect(synchronizedAPI(s.mapi!)).toBe(authority);
      expect(conditionOf(s.mapi, CONDITIONS.synchronized)).toMatchObject({ status: "True" });
      for (const o of h.kind === "Machine" ? [s.capi, s.infraMachine] : [s.capi]) {
        expect(isPaused(o)).toBe(authority === "MachineAPI");
        expect(hasPauseMarker(o)).toBe(authority === "MachineAPI");
      }
      expect(conditionOf(s.mapi, "Paused")?.status).toBe(authority === "MachineAPI" ? "False" : "True");
    },
    { timeout: 20_000, interval: 50 },
  );
  return snapshotOf(h);
};

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "handover-it-"));
  cluster = await startTestCluster({
    stateDir,
    ...NS,
    controllerUsers: [PRODUCT_USER],
    // The product's webhooks are not registered here: the controller and its writes are under test.
    webhookCaPem: "",
    logger: silentLogger(),
    bookmarkIntervalMs: 1_000,
  });
  stops.push(() => cluster.stop());
  const admin = cluster.clientAs("admin");
  const createdInfra = await admin.create(KINDS.infrastructure, infrastructure());
  const infra = await admin.updateStatus(KINDS.infrastructure, {
    ...createdInfra,
    status: infrastructure().status,
  });
  const [capiClusterObject, awsCluster] = capiCluster(NS);
  await admin.create(KINDS.capiCluster, capiClusterObject!);
  await admin.create(KINDS.awsCluster, awsCluster!);

  // The MAPI Machine, created and provisioned by MAO; status.authoritativeAPI is left to the controller
  // (SPEC §3.1 step 2).
  const maoClient = cluster.clientAs("mao");
  const seed = mapiMachine(NS, NAME, "a");
  const { _providerID: providerID, ...provisioned } = provisionedMapiStatus(seed, 7, "MachineAPI");
  const { authoritativeAPI: _a, synchronizedAPI: _s, conditions: _c, ...mapiStatus } = provisioned;
  const created = await maoClient.create(KINDS.mapiMachine, { ...seed, spec: { ...seed.spec, providerID } });
  const mapi = await maoClient.updateStatus(KINDS.mapiMachine, { ...created, status: mapiStatus });

  // Its CAPI twin and AWSMachine as the sync creates them: converted, paused with the product's marker.
  const product = cluster.clientAs("controller");
  const converted = mapiMachineToCapi(mapi, infra, { capiNamespace: NS.capiNamespace });
  if (!converted.ok) throw new Error(JSON.stringify(converted.errors));
  const pause = { [ANNOTATIONS.paused]: "", [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE };
  const capiMachine = await product.create(KINDS.capiMachine, {
    ...converted.value.machine,
    metadata: {
      ...converted.value.machine.metadata,
      annotations: { ...converted.value.machine.metadata?.annotations, ...pause },
    },
  });
  const awsMachine = await product.create(KINDS.awsMachine, {
    ...converted.value.infraMachine,
    metadata: {
      ...converted.value.infraMachine.metadata,
      annotations: { ...converted.value.infraMachine.metadata?.annotations, ...pause },
      ownerReferences: [
        {
          apiVersion: CAPI_API_VERSION,
          kind: "Machine",
          name: NAME,
          uid: capiMachine.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  });
  const statuses = mapiMachineStatusToCapi({ ...mapi, status: { ...mapiStatus } }, infra, {
    capiMachine,
    now: stamp(),
  });
  if (!statuses.ok) throw new Error(JSON.stringify(statuses.errors));
  await cluster
    .clientAs("capi")
    .updateStatus(KINDS.capiMachine, { ...capiMachine, status: statuses.value.machineStatus });
  await cluster
    .clientAs("capa")
    .updateStatus(KINDS.awsMachine, { ...awsMachine, status: statuses.value.infraMachineStatus });

  // The MachineSet (no replicas) as the admin creates it, and its CAPI twin and template as the sync does.
  const seedSet = mapiMachineSet(NS, "b", 0);
  const mapiSet = await admin.create(KINDS.mapiMachineSet, {
    ...seedSet,
    metadata: { ...seedSet.metadata, name: SET_NAME },
  });
  const convertedSet = mapiMachineSetToCapi(mapiSet, infra, { capiNamespace: NS.capiNamespace });
  if (!convertedSet.ok) throw new Error(JSON.stringify(convertedSet.errors));
  await product.create(KINDS.awsMachineTemplate, convertedSet.value.infraTemplate);
  await product.create(KINDS.capiMachineSet, {
    ...convertedSet.value.machineSet,
    metadata: {
      ...convertedSet.value.machineSet.metadata,
      annotations: { ...convertedSet.value.machineSet.metadata?.annotations, ...pause },
    },
  });

  // The observer: every watch event is checked against I1–I4 and gives the acknowledgers a turn.
  const adminConnection = connect({ kubeconfigText: cluster.kubeconfigText, context: "admin" });
  observer = createCache({
    transport: adminConnection.transport,
    clock: systemClock,
    logger: silentLogger(),
  });
  stops.push(() => observer.stop());
  const changed = (): void => {
    observe(MACHINE);
    observe(MACHINE_SET);
    kick();
  };
  for (const [type, ns] of [
    [KINDS.mapiMachine, NS.mapiNamespace],
    [KINDS.capiMachine, NS.capiNamespace],
    [KINDS.awsMachine, NS.capiNamespace],
    [KINDS.mapiMachineSet, NS.mapiNamespace],
    [KINDS.capiMachineSet, NS.capiNamespace],
  ] as const)
    observer.informerFor(type, ns).addHandlers({ onAdd: changed, onUpdate: changed, onDelete: changed });
  await observer.waitForSync(10_000);

  // The controller, on its own cache, as the product's service account.
  const productConnection = connect({ kubeconfigText: cluster.kubeconfigText, context: "controller" });
  controllerCache = createCache({
    transport: productConnection.transport,
    clock: systemClock,
    logger: silentLogger(),
  });
  stops.push(() => controllerCache.stop());
  const events = createEventRecorder({
    client: productConnection.client,
    component: "machine-api-migration",
    clock: systemClock,
    logger: silentLogger(),
  });
  const registry = new Registry();
  controllers = (["Machine", "MachineSet"] as const).map((kind) =>
    createMigrationController({
      kind,
      cache: controllerCache,
      client: productConnection.client,
      events,
      registry,
      clock: systemClock,
      logger: silentLogger(),
      namespaces: NS,
      waitBackoff: { initialMs: 50, maxMs: 500 },
      blockedRequeueMs: 500,
    }),
  );
  for (const c of controllers) stops.push(() => c.stop());
  await Promise.all(controllers.map((c) => c.start()));
}, 60_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await rm(stateDir, { recursive: true, force: true });
});

describe("handovers against the local API server (SPEC §3, §10)", () => {
  it("step 2: the controller initialises status from spec; the acknowledgers settle under MachineAPI", async () => {
    await untilSteady("MachineAPI");
    expect(MACHINE.violations).toEqual([]);
  });

  it("MachineAPI → ClusterAPI: the whole handover, I1–I4 after every observed event, one Event per transition", async () => {
    const observedBefore = MACHINE.observed;
    await setSpecAuthority("ClusterAPI");
    const s = await untilSteady("ClusterAPI");
    expect(finalizersOf(s.capi)).toContain(FINALIZERS.capiMachine);
    expect(finalizersOf(s.infraMachine)).toContain(FINALIZERS.awsMachine);
    expect(finalizersOf(s.mapi)).not.toContain(FINALIZERS.mapiMachine);
    expect(MACHINE.observed - observedBefore).toBeGreaterThan(5);
    expect(MACHINE.violations).toEqual([]);
    await vi.waitFor(async () => expect(await reasons()).toContain("MigrationCompleted"), { timeout: 5_000 });
    const r = await reasons();
    expect(r.filter((x) => x === "MigrationStarted")).toHaveLength(1);
    expect(r.filter((x) => x === "MigrationCompleted")).toHaveLength(1);
    expect(r.indexOf("MigrationStarted")).toBeLessThan(r.indexOf("MigrationCompleted"));
  });

  it("ClusterAPI → MachineAPI: back again, the CAPI side paused with the marker before MAPI is active", async () => {
    await setSpecAuthority("MachineAPI");
    const s = await untilSteady("MachineAPI");
    expect(finalizersOf(s.mapi)).toContain(FINALIZERS.mapiMachine);
    // Step 9 toward MachineAPI removes CAPA's finalizer only; Cluster API's own stays on the paused twin
    // (its controller adds it before it checks the pause; SPEC v5 §3.1 step 9).
    expect(finalizersOf(s.capi)).toContain(FINALIZERS.capiMachine);
    expect(finalizersOf(s.infraMachine)).not.toContain(FINALIZERS.awsMachine);
    expect(MACHINE.violations).toEqual([]);
    await vi.waitFor(
      async () => expect((await reasons()).filter((x) => x === "MigrationCompleted")).toHaveLength(2),
      { timeout: 5_000 },
    );
    expect((await reasons()).filter((x) => x === "MigrationStarted")).toHaveLength(2);
  });

  it("a cancel (SPEC §3.3): the final sync never comes, spec goes back, status returns to MachineAPI", async () => {
    hold.finalSync = true;
    const before = await reasons();
    await setSpecAuthority("ClusterAPI");
    await vi.waitFor(() => expect(statusAuthorityReading(snapshot().mapi!)).toBe("Migrating"), {
      timeout: 20_000,
    });
    // The controller waits at step 7 and says so once.
    await vi.waitFor(async () => expect(newReasons(before, await reasons())).toContain("WaitingForSync"), {
      timeout: 10_000,
    });
    await setSpecAuthority("MachineAPI");
    await vi.waitFor(
      () => {
        const mapi = snapshot().mapi!;
        expect(statusAuthorityReading(mapi)).toBe("MachineAPI");
      },
      { timeout: 20_000 },
    );
    hold.finalSync = false;
    const s = await untilSteady("MachineAPI");
    expect(finalizersOf(s.mapi)).toContain(FINALIZERS.mapiMachine);
    expect(MACHINE.violations).toEqual([]);
    await vi.waitFor(async () => expect(await reasons()).toContain("MigrationCancelled"), { timeout: 5_000 });
    const all = await events();
    // The recorder aggregates a repeat of the first start (same message) into its Event: count 2.
    const total = (reason: string) => all.filter((e) => e.reason === reason).reduce((n, e) => n + e.count, 0);
    expect(total("MigrationStarted")).toBe(3);
    expect(total("MigrationCancelled")).toBe(1);
    expect(all.find((e) => e.reason === "MigrationCancelled")?.message).toBe(
      `Migration of MAPI Machine ${NS.mapiNamespace}/${NAME} to ClusterAPI cancelled: spec.authoritativeAPI was set back to MachineAPI`,
    );
  });

  it("MachineSet MachineAPI → ClusterAPI and back: the CAPI MachineSet gets Cluster API's finalizer, which stays on its paused copy back under MachineAPI, I1–I4 hold", async () => {
    await untilSteady("MachineAPI", MACHINE_SET);
    await setSpecAuthority("ClusterAPI", MACHINE_SET);
    const there = await untilSteady("ClusterAPI", MACHINE_SET);
    expect(finalizersOf(there.capi)).toContain(FINALIZERS.capiMachineSet);
    await setSpecAuthority("MachineAPI", MACHINE_SET);
    const back = await untilSteady("MachineAPI", MACHINE_SET);
    expect(finalizersOf(back.capi)).toContain(FINALIZERS.capiMachineSet);
    expect(MACHINE_SET.observed).toBeGreaterThan(5);
    expect(MACHINE_SET.violations).toEqual([]);
    await vi.waitFor(
      async () =>
        expect((await reasons(MACHINE_SET)).filter((r) => r === "MigrationCompleted")).toHaveLength(2),
      { timeout: 5_000 },
    );
    expect((await reasons(MACHINE_SET)).filter((r) => r === "MigrationStarted")).toHaveLength(2);
  });

  it("the controller's pause and finalizer writes on the CAPI side were made as the product's identity", () => {
    const byKey = cluster.counters().byKey;
    // The acknowledgers patch these kinds as capi/capa; only the migration controller does as the product.
    expect(byKey[`patch cluster.x-k8s.io/machines ${PRODUCT_USER}`]).toBeGreaterThan(0);
    expect(byKey[`patch infrastructure.cluster.x-k8s.io/awsmachines ${PRODUCT_USER}`]).toBeGreaterThan(0);
  });
});
