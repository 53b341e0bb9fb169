/**
 * The sync controller shell's live reads, with an in-memory cache (fake informers the test fills) and the
 * in-memory API of test/kube/fakes.ts standing for the API server, so the cache and the live answers can
 * disagree on purpose: SPEC §4.2 `confirmAbsent` (a lagging cache is no proof that an authoritative twin
 * was deleted) and the §4.6 storage read (namespaces and CRDs read live, never from the cache).
 */
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import type { Cache } from "../../src/kube/cache.js";
import type { KubeClient } from "../../src/kube/client.js";
import { systemClock } from "../../src/kube/clock.js";
import type { Controller } from "../../src/kube/controller.js";
import type { EventRecorder } from "../../src/kube/events.js";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { type RuntimeMetrics, runtimeMetrics } from "../../src/kube/metrics.js";
import { getPath, type KubeObject } from "../../src/kube/object.js";
import type { Transport } from "../../src/kube/transport.js";
import { createMachineSyncController } from "../../src/sync/controller.js";
import { fakeCache, fakeClient, silentLogger } from "../kube/fakes.js";
import {
  awsMachine,
  CAPI_NS,
  capiCluster,
  capiMachine,
  condition,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  deps as syncDeps,
} from "./builders.js";

const noDiscovery: Transport = {
  request: async () => {
    throw new Error("no discovery in this test");
  },
  stream: async () => {
    throw new Error("no streams in this test");
  },
};

const running: Controller[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
});

const reconciled = async (metrics: RuntimeMetrics, result: string): Promise<void> => {
  for (let i = 0; i < 400; i++) {
    const values = (await metrics.reconcileTotal.get()).values;
    if (values.some((v) => v.labels.result === result && v.value > 0)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no reconcile with result ${result}`);
};

/** The Machine sync controller over `cache` and `client`, started; its metrics say when it reconciled. */
const startSync = async (
  cache: Cache,
  client: KubeClient,
  events: EventRecorder,
): Promise<RuntimeMetrics> => {
  const metrics = runtimeMetrics(new Registry());
  const { converter, settings } = syncDeps();
  const controller = createMachineSyncController({
    client,
    transport: noDiscovery,
    cache,
    converter,
    settings,
    events,
    clock: systemClock,
    logger: silentLogger(),
    metrics,
    confirmAbsentRetryMs: 60_000,
  });
  running.push(controller);
  await controller.start();
  return metrics;
};

/** The world of one test: a ClusterAPI MAPI Machine that was synchronized, whose CAPI twin the cache lacks. */
const setup = async (options: { capiLive: boolean; capiNamespaceDeleting?: boolean }) => {
  const cache = fakeCache();
  const fake = fakeClient();
  // The API server and the cache agree on the MAPI copy (same resourceVersion); they differ on the twin.
  const mapi = await fake.client.create(
    KINDS.mapiMachine,
    mapiMachine("m-1", {
      authority: "ClusterAPI",
      status: { conditions: [condition("Synchronized", "True")] },
    }),
  );
  cache.informer(KINDS.mapiMachine, MAPI_NS).add(mapi);
  for (const name of [MAPI_NS, CAPI_NS])
    await fake.client.create(KINDS.namespace, {
      metadata: {
        name,
        ...(options.capiNamespaceDeleting && name === CAPI_NS
          ? { deletionTimestamp: "2026-11-30T10:00:00Z" }
          : {}),
      },
    });
  for (const name of [
    "machines.machine.openshift.io",
    "machines.cluster.x-k8s.io",
    "awsmachines.infrastructure.cluster.x-k8s.io",
  ])
    await fake.client.create(KINDS.customResourceDefinition, { metadata: { name } });
  if (options.capiLive) await fake.client.create(KINDS.capiMachine, capiMachine("m-1"));
  const deletes: { kind: string; name: string; preconditions: unknown }[] = [];
  /** Each request the controller sent, and the signal it carried. */
  const signals: { call: string; signal: AbortSignal | undefined }[] = [];
  const client: KubeClient = {
    ...fake.client,
    get(type, namespace, name, opts) {
      signals.push({ call: `get ${type.kind} ${name}`, signal: opts?.signal });
      return fake.client.get(type, namespace, name, opts);
    },
    patch(type, namespace, name, patch, opts) {
      signals.push({ call: `patch ${type.kind} ${name}`, signal: opts?.signal });
      return fake.client.patch(type, namespace, name, patch, opts);
    },
    async delete(type, namespace, name, opts) {
      signals.push({ call: `delete ${type.kind} ${name}`, signal: opts?.signal });
      deletes.push({ kind: type.kind, name, preconditions: opts?.preconditions });
      return fake.client.delete(type, namespace, name, opts);
    },
  };
  const recorded: string[] = [];
  const events: EventRecorder = {
    record: async (_o: KubeObject, _type, reason) => {
      recorded.push(reason);
    },
  };
  const metrics = await startSync(cache, client, events);
  return { fake, deletes, metrics, mapi, recorded, signals };
};

describe("SPEC §7 losing the Lease stops the controllers immediately", () => {
  it("every live read and write of a reconcile carries its signal, so a stop ends their waits (decision 198)", async () => {
    const { metrics, signals } = await setup({ capiLive: false });
    await reconciled(metrics, "success");
    expect(signals.map((s) => s.call)).toEqual(
      expect.arrayContaining(["get Machine m-1", "delete Machine m-1"]),
    );
    for (const { call, signal } of signals) expect(signal, call).toBeInstanceOf(AbortSignal);
  });
});

describe("SPEC §4.2 ClusterAPI without twin: the deletion is confirmed live before it is propagated", () => {
  it("the cache lacks the CAPI twin but the API server has it: nothing is deleted, the key is looked at again", async () => {
    const { fake, deletes, metrics } = await setup({ capiLive: true });
    await reconciled(metrics, "requeue_after");
    expect(fake.calls.some((c) => c.verb === "get" && c.type === "Machine" && c.name === "m-1")).toBe(true);
    expect(deletes).toEqual([]);
  });

  it("the API server confirms the twin is gone: the MAPI copy is deleted with uid and resourceVersion preconditions", async () => {
    const { deletes, metrics, mapi } = await setup({ capiLive: false });
    await reconciled(metrics, "success");
    expect(deletes).toEqual([
      {
        kind: "Machine",
        name: "m-1",
        preconditions: { uid: mapi.metadata?.uid, resourceVersion: mapi.metadata?.resourceVersion },
      },
    ]);
  });
});

describe("SPEC §4.6 storage read", () => {
  it("reads both namespaces and the twins' CRDs live; a deleting namespace stops the deletion", async () => {
    const { fake, deletes, metrics } = await setup({ capiLive: false, capiNamespaceDeleting: true });
    await reconciled(metrics, "success");
    const liveReads = fake.calls.filter((c) => c.verb === "get").map((c) => `${c.type}/${c.name}`);
    expect(liveReads).toEqual(
      expect.arrayContaining([
        `Namespace/${MAPI_NS}`,
        `Namespace/${CAPI_NS}`,
        "CustomResourceDefinition/machines.machine.openshift.io",
        "CustomResourceDefinition/machines.cluster.x-k8s.io",
        "CustomResourceDefinition/awsmachines.infrastructure.cluster.x-k8s.io",
      ]),
    );
    expect(deletes).toEqual([]);
    const statusPatch = fake.calls.find((c) => c.verb === "patch:merge" && c.name === "m-1");
    expect(JSON.stringify(statusPatch?.body)).toContain("StorageBeingRemoved");
  });
});

describe("SPEC §4.2/§3.5 an unpaused twin under MachineAPI is confirmed live before it is paused and marked", () => {
  // Seed 20261220 run 73 of the model campaign: a new leader whose MAPI view lagged (still MachineAPI) met the
  // CAPI twin unpaused by a completed handover to ClusterAPI, paused it and marked it needs-attention.
  it("the cache shows MachineAPI, the API server ClusterAPI: the active twin is left alone", async () => {
    const cache = fakeCache();
    const fake = fakeClient();
    const synced = { conditions: [condition("Synchronized", "True")] };
    // Live: the handover to ClusterAPI completed; the cache still holds the Machine as it was under MachineAPI.
    const live = await fake.client.create(
      KINDS.mapiMachine,
      mapiMachine("m-2", { authority: "ClusterAPI", status: synced }),
    );
    const stale = mapiMachine("m-2", { authority: "MachineAPI", status: synced });
    cache
      .informer(KINDS.mapiMachine, MAPI_NS)
      .add({ ...stale, metadata: { ...stale.metadata, uid: live.metadata?.uid, resourceVersion: "1" } });
    const twin = await fake.client.create(
      KINDS.capiMachine,
      capiMachine("m-2", { meta: { annotations: {} } }),
    );
    cache.informer(KINDS.capiMachine, CAPI_NS).add(twin);
    const metrics = await startSync(cache, fake.client, { record: async () => {} });
    await reconciled(metrics, "requeue_after");
    expect(fake.calls.some((c) => c.verb === "get" && c.type === "Machine" && c.name === "m-2")).toBe(true);
    expect(fake.calls.filter((c) => c.verb.startsWith("patch") && c.name === "m-2")).toEqual([]);
  });
});

describe("SPEC §4.2 a twin is created only for a source the API server still has (decision 148)", () => {
  // Seed 20261240 run 70 of the model campaign: a MAPI Machine deleted while its handover was rolled back was
  // released (its mirror deleted, every finalizer removed); the new leader's MAPI view, held back, still showed
  // it, its CAPI view did not show the mirror, and the sync created a new, paused mirror nobody would delete.
  const world = async (mapi: KubeObject, options: { live: boolean }) => {
    const cache = fakeCache();
    const fake = fakeClient();
    const { settings } = syncDeps();
    cache.informer(KINDS.infrastructure, "").add(infrastructure());
    cache.informer(KINDS.capiCluster, settings.capiNamespace).add(capiCluster());
    const stored = options.live ? await fake.client.create(KINDS.mapiMachine, mapi) : mapi;
    cache.informer(KINDS.mapiMachine, MAPI_NS).add(stored);
    const metrics = await startSync(cache, fake.client, { record: async () => {} });
    return { fake, metrics };
  };
  const creates = (fake: ReturnType<typeof fakeClient>) =>
    fake.calls.filter((c) => c.verb === "create").map((c) => `${c.type}/${c.name}`);

  it("a MachineAPI Machine the cache shows but the API server no longer has gets no CAPI mirror", async () => {
    const gone = mapiMachine("m-4", { status: { conditions: [condition("Synchronized", "True")] } });
    const { fake, metrics } = await world(gone, { live: false });
    await reconciled(metrics, "requeue_after");
    expect(fake.calls.some((c) => c.verb === "get" && c.type === "Machine" && c.name === "m-4")).toBe(true);
    expect(creates(fake)).toEqual([]);
  });

  it("a Machine born ClusterAPI, deleted live, gets no twin: no instance nobody asked for", async () => {
    const gone = mapiMachine("m-5", { authority: "ClusterAPI" });
    const { fake, metrics } = await world(gone, { live: false });
    await reconciled(metrics, "requeue_after");
    expect(creates(fake)).toEqual([]);
  });

  it("…and when the API server has it, the mirror is created after the one live read", async () => {
    const { fake, metrics } = await world(mapiMachine("m-6"), { live: true });
    await reconciled(metrics, "success");
    expect(creates(fake)).toEqual(expect.arrayContaining(["Machine/m-6", "AWSMachine/m-6"]));
  });
});

describe("SPEC §4.4 a lagging view of a ClusterAPI Machine's CAPI copy is confirmed live before it is mirrored (decision 163)", () => {
  // The Machine-level twin of decision 160: a new leader's view of CAPI Machines lags behind the generation the
  // MAPI Machine records. Mirrored as it stands, it puts the MAPI Machine's spec back and asks for a lower
  // synchronizedGeneration, which the CRD's transition rule refuses (each refusal a Warning Event).
  const world = async (options: { liveGeneration: number }) => {
    const cache = fakeCache();
    const fake = fakeClient();
    const { settings } = syncDeps();
    cache.informer(KINDS.infrastructure, "").add(infrastructure());
    cache.informer(KINDS.capiCluster, settings.capiNamespace).add(capiCluster());
    const providerID = "aws:///us-east-1a/i-0abc";
    const mapi = await fake.client.create(
      KINDS.mapiMachine,
      mapiMachine("m-7", {
        authority: "ClusterAPI",
        meta: { finalizers: [FINALIZERS.sync] },
        spec: { providerID },
        status: { synchronizedGeneration: 2, conditions: [condition("Synchronized", "True")] },
      }),
    );
    cache.informer(KINDS.mapiMachine, MAPI_NS).add(mapi);
    const owned = { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] };
    // The cache's view: generation 1, before the provider set the providerID.
    const viewed = await fake.client.create(KINDS.capiMachine, capiMachine("m-7", { meta: owned }));
    cache.informer(KINDS.capiMachine, CAPI_NS).add(viewed);
    if (options.liveGeneration > 1)
      await fake.client.update(KINDS.capiMachine, {
        ...viewed,
        metadata: { ...viewed.metadata, generation: options.liveGeneration },
        spec: { ...viewed.spec, providerID },
      });
    const infra = await fake.client.create(
      KINDS.awsMachine,
      awsMachine("m-7", { meta: { annotations: {}, finalizers: [FINALIZERS.sync, FINALIZERS.awsMachine] } }),
    );
    cache.informer(KINDS.awsMachine, CAPI_NS).add(infra);
    const metrics = await startSync(cache, fake.client, { record: async () => {} });
    const writesToMapi = () =>
      fake.calls.filter((c) => c.verb.startsWith("patch") && c.type === "Machine" && c.name === "m-7");
    return { fake, metrics, writesToMapi };
  };

  it("the API server has the newer generation: nothing is written, the key is looked at again", async () => {
    const { fake, metrics, writesToMapi } = await world({ liveGeneration: 2 });
    await reconciled(metrics, "requeue_after");
    expect(fake.calls.some((c) => c.verb === "get" && c.type === "Machine" && c.name === "m-7")).toBe(true);
    expect(writesToMapi()).toEqual([]);
    expect(getPath(fake.raw(KINDS.mapiMachine, MAPI_NS, "m-7"), ["spec", "providerID"])).toBe(
      "aws:///us-east-1a/i-0abc",
    );
  });

  it("the API server has the generation the view shows (a record that no longer holds): mirrored as before", async () => {
    const { metrics, writesToMapi } = await world({ liveGeneration: 1 });
    await reconciled(metrics, "success");
    expect(writesToMapi().length).toBeGreaterThan(0);
  });
});

describe("SPEC §3.5/§4.6 a deletion step is written only on the authority the API server shows (decision 167)", () => {
  /**
   * A cache and an API server that disagree on the MAPI copy; the twins as given, the same in both. Storage is
   * live and staying (namespaces and CRDs present), so any plan that writes gets past the §4.6 storage read.
   */
  const world = async (view: KubeObject, live: KubeObject | undefined, twins: KubeObject[]) => {
    const cache = fakeCache();
    const fake = fakeClient();
    const { settings } = syncDeps();
    cache.informer(KINDS.infrastructure, "").add(infrastructure());
    cache.informer(KINDS.capiCluster, settings.capiNamespace).add(capiCluster());
    for (const name of [MAPI_NS, CAPI_NS]) await fake.client.create(KINDS.namespace, { metadata: { name } });
    for (const name of [
      "machines.machine.openshift.io",
      "machines.cluster.x-k8s.io",
      "awsmachines.infrastructure.cluster.x-k8s.io",
    ])
      await fake.client.create(KINDS.customResourceDefinition, { metadata: { name } });
    const stored = live ? await fake.client.create(KINDS.mapiMachine, live) : undefined;
    cache.informer(KINDS.mapiMachine, MAPI_NS).add({
      ...view,
      metadata: { ...view.metadata, resourceVersion: stored?.metadata?.resourceVersion ?? "1" },
    });
    for (const twin of twins) {
      const type = twin.kind === "AWSMachine" ? KINDS.awsMachine : KINDS.capiMachine;
      cache.informer(type, CAPI_NS).add(await fake.client.create(type, twin));
    }
    const setUp = fake.calls.length;
    const metrics = await startSync(cache, fake.client, { record: async () => {} });
    const writes = () => fake.calls.slice(setUp).filter((c) => c.verb !== "get" && c.verb !== "list");
    return { fake, metrics, writes };
  };
  const deleting = { deletionTimestamp: "2026-12-07T10:00:00Z" };

  // Found by an audit (2026-12-07): a new leader whose MAPI view still showed MachineAPI after a handover to
  // ClusterAPI read the authoritative CAPI Machine, deleted by a person, as a foreign twin to release: it paused
  // it, deleted its AWSMachine and stripped CAPA's finalizer — the instance leaked.
  it("the cache shows MachineAPI, the API server ClusterAPI: a person's delete of the active CAPI Machine is left to Cluster API", async () => {
    const synced = { conditions: [condition("Synchronized", "True")] };
    const { fake, metrics, writes } = await world(
      mapiMachine("m-8", { authority: "MachineAPI", status: synced, meta: { uid: "uid-m-8" } }),
      mapiMachine("m-8", { authority: "ClusterAPI", status: synced, meta: { uid: "uid-m-8" } }),
      [
        capiMachine("m-8", {
          meta: { annotations: {}, finalizers: [FINALIZERS.capiMachine, FINALIZERS.sync], ...deleting },
        }),
        awsMachine("m-8", {
          meta: { annotations: {}, finalizers: [FINALIZERS.awsMachine, FINALIZERS.sync] },
        }),
      ],
    );
    await reconciled(metrics, "requeue_after");
    expect(fake.calls.some((c) => c.verb === "get" && c.type === "Machine" && c.name === "m-8")).toBe(true);
    expect(writes()).toEqual([]);
  });

  // Found by the same audit: a Machine deleted and re-created under its name while the new leader's MAPI view
  // still held the old one, deleting: the old Machine's delete was propagated to the new Machine's twins.
  it("the cache shows the old Machine deleting, the API server a new one under the name: its twins are not deleted", async () => {
    const { fake, metrics, writes } = await world(
      mapiMachine("m-9", { meta: { uid: "old-uid", ...deleting, finalizers: [FINALIZERS.sync] } }),
      mapiMachine("m-9", { meta: { uid: "new-uid" } }),
      [capiMachine("m-9"), awsMachine("m-9")],
    );
    await reconciled(metrics, "requeue_after");
    expect(fake.calls.some((c) => c.verb === "get" && c.type === "Machine" && c.name === "m-9")).toBe(true);
    expect(writes()).toEqual([]);
  });

  it("…and when the API server shows what the cache does, the delete is propagated", async () => {
    const mapi = mapiMachine("m-10", { meta: { ...deleting, finalizers: [FINALIZERS.sync] } });
    const { metrics, writes } = await world(mapi, mapi, [capiMachine("m-10"), awsMachine("m-10")]);
    await reconciled(metrics, "success");
    expect(writes().map((c) => `${c.verb} ${c.type}/${c.name}`)).toEqual(
      expect.arrayContaining(["delete Machine/m-10"]),
    );
  });
});
