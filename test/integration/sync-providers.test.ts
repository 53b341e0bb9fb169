/**
 * The sync controllers with the simulated providers of SPEC §1.1 (MAO, CAPI and CAPA stand-ins with their
 * real finalizer semantics and the instance ledger) against the local API server with the product's real
 * admission webhook: a Machine and a MachineSet under MachineAPI, a Machine born under ClusterAPI, each
 * through its deletion row of §4.6. The ledger proves the first duty after each: no instance created
 * twice, none leaked, none terminated that was not deleted. Users act as `admin`; nobody plays a provider
 * by hand here. Waiting polls for a state, never asserts elapsed time.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cache, createCache } from "../../src/kube/cache.js";
import type { KubeClient } from "../../src/kube/client.js";
import { flushMicrotasks, systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import type { Controller } from "../../src/kube/controller.js";
import { NotFoundError } from "../../src/kube/errors.js";
import { createEventRecorder } from "../../src/kube/events.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import { ANNOTATIONS, KINDS } from "../../src/kube/kinds.js";
import { type RuntimeMetrics, runtimeMetrics } from "../../src/kube/metrics.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import { createIfMissing, type LocalCluster, startLocalCluster } from "../../src/local/cluster.js";
import { capiCluster, infrastructure, mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { decide } from "../../src/policies/engine.js";
import type { PolicyContext } from "../../src/policies/types.js";
import { clusterView } from "../../src/policies/view.js";
import { webhookSans, writeDevelopmentCertificates } from "../../src/server/certs.js";
import { startWebhookServer, type WebhookServer } from "../../src/server/serve.js";
import {
  createInstanceLedger,
  type SimulatedProviders,
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

let dir: string;
let local: LocalCluster;
let webhook: WebhookServer;
let cache: Cache;
let controllers: Controller[] = [];
let providers: SimulatedProviders;
let metrics: RuntimeMetrics;
let admin: KubeClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sync-providers-"));
  const logger = pino({ level: "silent" });
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
  metrics = runtimeMetrics(registry);
  const deps = {
    client: connection.client,
    transport: connection.transport,
    cache,
    converter: conversionConverter,
    settings: ns,
    events: createEventRecorder({
      client: connection.client,
      component: "machine-api-migration",
      clock: systemClock,
      logger,
    }),
    clock: systemClock,
    logger,
    metrics,
    workers: 2,
    maxDelayMs: 500,
  };
  // The controllers create the informers admission reads too (one shared cache, as in src/main.ts).
  controllers = [createMachineSyncController(deps), createMachineSetSyncController(deps)];
  await cache.waitForSync();
  await local.registerProductWebhooks(webhook.url);
  await Promise.all(controllers.map((c) => c.start()));
  const as = (context: string) => connect({ kubeconfigText: local.kubeconfigText, context });
  providers = await startSimulatedProviders({
    connections: { mao: as("mao"), capi: as("capi"), capa: as("capa") },
    ...ns,
    logger,
    ledger: createInstanceLedger(),
    provisioningDelayMs: 0,
  });
}, 60_000);

afterAll(async () => {
  await providers?.stop();
  await Promise.all(controllers.map((c) => c.stop()));
  await cache?.stop();
  await webhook?.close();
  await local?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const waitFor = async <T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
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

const gone = (type: ResourceType, namespace: string, name: string) =>
  waitFor(`${type.kind} ${namespace}/${name} gone`, () =>
    admin.get(type, namespace, name).then(
      () => false,
      (e: unknown) => e instanceof NotFoundError,
    ),
  );

const existing = async () => ({
  mapi: (await admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.map(nameOf),
  capi: (await admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items.map(nameOf),
});

const instancesOf = (machineName: string) =>
  providers.ledger.snapshot().instances.filter((i) => i.machineName === machineName);

const idle = (): boolean =>
  controllers.every((c) => (c.queue()?.len() ?? 0) === 0 && (c.queue()?.processing().length ?? 0) === 0) &&
  [providers.mao, providers.capi, providers.capa].every((s) => s.idle());

/** Everyone idle several polls in a row: the simulation has converged. */
const quiesce = async (): Promise<void> => {
  let calm = 0;
  await waitFor("sync controllers and stand-ins idle", async () => {
    await local.api.settled();
    await flushMicrotasks();
    calm = idle() ? calm + 1 : 0;
    return calm >= 5;
  });
};

const productMachineWrites = (): number => {
  let n = 0;
  for (const [key, count] of Object.entries(local.api.counters.snapshot().byKey)) {
    const [verb, resource, user] = key.split(" ");
    if (user !== PRODUCT || !["create", "update", "patch", "delete"].includes(verb ?? "")) continue;
    if (
      /^(machine\.openshift\.io|cluster\.x-k8s\.io|infrastructure\.cluster\.x-k8s\.io)\//.test(resource ?? "")
    )
      n += count;
  }
  return n;
};

const reconciles = async (): Promise<number> =>
  (await metrics.reconcileTotal.get()).values.reduce((sum, v) => sum + v.value, 0);

/**
 * The quiet interval: after convergence, an event that concerns every key of both controllers (a change
 * to the Infrastructure) is reconciled for every key and causes no write by the product to any machine kind.
 */
const expectQuietInterval = async (): Promise<void> => {
  await quiesce();
  const keys = (mapi: ResourceType, capi: ResourceType) =>
    new Set([...cache.list(mapi, MAPI_NS).map(nameOf), ...cache.list(capi, CAPI_NS).map(nameOf)]).size;
  const expected =
    keys(KINDS.mapiMachine, KINDS.capiMachine) + keys(KINDS.mapiMachineSet, KINDS.capiMachineSet);
  const writes = productMachineWrites();
  const before = await reconciles();
  const infra = await admin.get(KINDS.infrastructure, "", "cluster");
  await admin.patch(KINDS.infrastructure, "", "cluster", {
    type: "merge",
    body: {
      metadata: {
        resourceVersion: infra.metadata?.resourceVersion,
        annotations: { "sync-test/touched": String(before) },
      },
    },
  });
  await waitFor("every key reconciled", async () => (await reconciles()) >= before + expected);
  await quiesce();
  expect(productMachineWrites()).toBe(writes);
};

const userMachine = (name: string, authority: "MachineAPI" | "ClusterAPI"): KubeObject => {
  const m = mapiMachine(ns, name, "a");
  return { ...m, spec: { ...m.spec, authoritativeAPI: authority } };
};

const synchronized = (type: ResourceType, name: string) =>
  waitFor(`${type.kind} ${name} Synchronized=True`, async () => {
    const o = await admin.get(type, MAPI_NS, name);
    return conditionOf(o, "Synchronized")?.status === "True" ? o : undefined;
  });

describe("SPEC §4 with the simulated providers and the instance ledger", () => {
  it("MachineAPI Machine: one instance (MAO's), a paused twin CAPA never provisions; deletion terminates it once", async () => {
    const name = "prov-m1";
    await admin.create(KINDS.mapiMachine, userMachine(name, "MachineAPI"));
    await waitFor("MAPI Machine Running and synchronized", async () => {
      const o = await admin.get(KINDS.mapiMachine, MAPI_NS, name);
      return getPath(o, ["status", "phase"]) === "Running" &&
        conditionOf(o, "Synchronized")?.status === "True"
        ? o
        : undefined;
    });
    await quiesce();
    const aws = await admin.get(KINDS.awsMachine, CAPI_NS, name);
    expect(aws.metadata?.annotations?.[ANNOTATIONS.paused]).toBe("");
    expect(conditionOf(aws, "Paused")?.status).toBe("True");
    expect(instancesOf(name)).toMatchObject([{ side: "MachineAPI" }]);

    await admin.delete(KINDS.mapiMachine, MAPI_NS, name);
    await gone(KINDS.mapiMachine, MAPI_NS, name);
    await gone(KINDS.capiMachine, CAPI_NS, name);
    await gone(KINDS.awsMachine, CAPI_NS, name);
    await quiesce();
    expect(instancesOf(name)).toHaveLength(1);
    expect(instancesOf(name)[0]?.terminatedBy).toBe("MachineAPI");
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });

  it("Machine born ClusterAPI: CAPA provisions the only instance, mirrored back; deleting the CAPI Machine ends all", async () => {
    const name = "prov-m2";
    await admin.create(KINDS.mapiMachine, userMachine(name, "ClusterAPI"));
    const mapi = await waitFor("providerID mirrored to the MAPI copy", async () => {
      const o = await admin.get(KINDS.mapiMachine, MAPI_NS, name);
      return typeof o.spec?.providerID === "string" && conditionOf(o, "Synchronized")?.status === "True"
        ? o
        : undefined;
    });
    await quiesce();
    expect(instancesOf(name)).toMatchObject([{ side: "ClusterAPI", providerID: mapi.spec?.providerID }]);

    await admin.delete(KINDS.capiMachine, CAPI_NS, name);
    await gone(KINDS.capiMachine, CAPI_NS, name);
    await gone(KINDS.awsMachine, CAPI_NS, name);
    await gone(KINDS.mapiMachine, MAPI_NS, name);
    await quiesce();
    expect(instancesOf(name)).toHaveLength(1);
    expect(instancesOf(name)[0]?.terminatedBy).toBe("ClusterAPI");
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });

  it("MachineAPI MachineSet: MAO's Machine gets a paused twin, the paused CAPI MachineSet creates none; quiet once converged", async () => {
    const set = mapiMachineSet(ns, "b", 1);
    const name = nameOf(set);
    await admin.create(KINDS.mapiMachineSet, set);
    await synchronized(KINDS.mapiMachineSet, name);
    const machine = await waitFor("MAO's Machine Running and synchronized", async () => {
      const items = (await admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((m) =>
        nameOf(m).startsWith(`${name}-`),
      );
      return items.length === 1 &&
        getPath(items[0], ["status", "phase"]) === "Running" &&
        conditionOf(items[0], "Synchronized")?.status === "True"
        ? items[0]
        : undefined;
    });
    await quiesce();
    const capiMachines = (await admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items.map(nameOf);
    expect(capiMachines.filter((n) => n.startsWith(`${name}-`))).toEqual([nameOf(machine)]);
    expect(
      providers.ledger.snapshot().instances.filter((i) => i.machineName.startsWith(`${name}-`)),
    ).toMatchObject([{ side: "MachineAPI", machineName: nameOf(machine) }]);

    await expectQuietInterval();
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });
  it("deleting that MachineAPI MachineSet: its Machine goes, the instance is terminated once, nothing leaks", async () => {
    const name = nameOf(mapiMachineSet(ns, "b", 1));
    const machines = (await admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items
      .map(nameOf)
      .filter((n) => n.startsWith(`${name}-`));
    expect(machines).toHaveLength(1);
    const capiSet = await admin.get(KINDS.capiMachineSet, CAPI_NS, name);
    const template = String(getPath(capiSet, ["spec", "template", "spec", "infrastructureRef", "name"]));
    await admin.delete(KINDS.mapiMachineSet, MAPI_NS, name);
    await gone(KINDS.mapiMachineSet, MAPI_NS, name);
    await gone(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.awsMachineTemplate, CAPI_NS, template);
    for (const m of machines) {
      await gone(KINDS.mapiMachine, MAPI_NS, m);
      await gone(KINDS.capiMachine, CAPI_NS, m);
      await gone(KINDS.awsMachine, CAPI_NS, m);
    }
    await quiesce();
    for (const m of machines)
      expect(instancesOf(m)).toMatchObject([{ side: "MachineAPI", terminatedBy: "MachineAPI" }]);
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });
  it("MachineSet born ClusterAPI: CAPI's Machine is mirrored to MAPI (never provisioned twice); deleting the CAPI set ends all", async () => {
    const base = mapiMachineSet(ns, "c", 1);
    const set = JSON.parse(JSON.stringify(base).replaceAll('"MachineAPI"', '"ClusterAPI"')) as KubeObject;
    const name = nameOf(set);
    await admin.create(KINDS.mapiMachineSet, set);
    const mirror = await waitFor("a mirrored MAPI Machine, synchronized", async () => {
      const items = (await admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((m) =>
        nameOf(m).startsWith(`${name}-`),
      );
      return items.length === 1 &&
        typeof items[0]?.spec?.providerID === "string" &&
        conditionOf(items[0], "Synchronized")?.status === "True"
        ? items[0]
        : undefined;
    });
    expect(mirror.spec?.authoritativeAPI).toBe("ClusterAPI");
    expect(mirror.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "MachineSet",
      name,
      controller: true,
    });
    await quiesce();
    expect(instancesOf(nameOf(mirror))).toMatchObject([
      { side: "ClusterAPI", providerID: mirror.spec?.providerID },
    ]);
    // The CAPI → MAPI direction is quiet once converged too.
    await expectQuietInterval();

    await admin.delete(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.mapiMachineSet, MAPI_NS, name);
    await gone(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.capiMachine, CAPI_NS, nameOf(mirror));
    await gone(KINDS.mapiMachine, MAPI_NS, nameOf(mirror));
    await quiesce();
    expect(instancesOf(nameOf(mirror))).toMatchObject([{ side: "ClusterAPI", terminatedBy: "ClusterAPI" }]);
    expect(providers.ledger.violations(await existing())).toEqual([]);
  });
});
