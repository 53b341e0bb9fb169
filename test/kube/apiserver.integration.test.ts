/**
 * The runtime against the local API server (src/apiserver), over HTTPS with bearer tokens: the informer
 * recovers from a cut watch stream, a 410, 500s during re-list and a silent stream and ends with exactly
 * the server's state; two leader electors contend for one Lease. Real time with small durations;
 * assertions are on behaviour and state, never on elapsed time.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiServer, ApiServerOptions } from "../../src/apiserver/index.js";
import { startApiServer } from "../../src/apiserver/index.js";
import type { Cache } from "../../src/kube/cache.js";
import { createCache } from "../../src/kube/cache.js";
import { systemClock } from "../../src/kube/clock.js";
import type { KubeConnection } from "../../src/kube/config.js";
import { connect } from "../../src/kube/config.js";
import { byName, createController } from "../../src/kube/controller.js";
import { createResourceResolver } from "../../src/kube/discovery.js";
import { ConflictError, ForbiddenError, NotFoundError } from "../../src/kube/errors.js";
import { createEventRecorder } from "../../src/kube/events.js";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import type { LeaderElector } from "../../src/kube/leader.js";
import { createLeaderElector } from "../../src/kube/leader.js";
import { INDEX } from "../../src/kube/store.js";
import { createWriteHelpers } from "../../src/kube/write.js";
import { createCertificateAuthority, issueServingCertificate } from "../../src/server/certs.js";
import { silentLogger } from "./fakes.js";

const NS = "runtime-test";
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

const users = [
  { token: "admin-token", username: "admin", groups: ["system:masters"] },
  { token: "informer-token", username: "informer", groups: ["system:masters"] },
  { token: "replica-a-token", username: "replica-a", groups: ["system:masters"] },
  { token: "replica-b-token", username: "replica-b", groups: ["system:masters"] },
  // Granted nothing: every list is a 403.
  { token: "nobody-token", username: "nobody", groups: [] },
];

let tls: ApiServerOptions["tls"];
beforeAll(() => {
  // One PKI for the file: key generation is the slow part of starting a server.
  const ca = createCertificateAuthority("runtime test CA");
  const serving = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
  tls = { certPem: serving.certPem, keyPem: serving.keyPem, caPem: ca.certPem };
});

const startServer = async (extra: Partial<ApiServerOptions> = {}) => {
  const server = await startApiServer({
    port: 0,
    users,
    bookmarkIntervalMs: 200,
    ...(tls ? { tls } : {}),
    ...extra,
  });
  stops.push(() => server.stop());
  const as = (user: string): KubeConnection => connect({ kubeconfigText: server.kubeconfig(user) });
  const admin = as("admin");
  await admin.client.create(KINDS.namespace, { metadata: { name: NS } });
  return { server, as, admin };
};

const count = (server: ApiServer, verb: string, user = "informer") =>
  server.counters.snapshot().byKey[`${verb} /configmaps ${user}`] ?? 0;

/**
 * Writes that always push the informer's resourceVersion out of a 5-event history: storage keeps between
 * 5 and 10 events (it trims in batches), so 10 writes were enough only for some counts of earlier events.
 */
const PAST_HISTORY = 11;

const writeMany = async (admin: KubeConnection, prefix: string, n: number) => {
  for (let i = 0; i < n; i++)
    await admin.client.create(KINDS.configMap, {
      metadata: { name: `${prefix}-${i}`, namespace: NS },
      data: { i: String(i) },
    });
};

describe("informer against the local API server", () => {
  const setup = async (extra: Partial<ApiServerOptions> = {}, watchSilenceTimeoutMs = 5_000) => {
    const env = await startServer(extra);
    await writeMany(env.admin, "seed", 3);
    const cache: Cache = createCache({
      transport: env.as("informer").transport,
      clock: systemClock,
      logger: silentLogger(),
      watchSilenceTimeoutMs,
      backoff: { initialMs: 20, maxMs: 200 },
    });
    stops.push(() => cache.stop());
    const informer = cache.informerFor(KINDS.configMap, NS);
    await cache.waitForSync(10_000);
    const serverState = () =>
      Object.fromEntries(
        env.server.store
          .list({ group: "", plural: "configmaps" }, NS)
          .map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]),
      );
    const cacheState = () =>
      Object.fromEntries(informer.list(NS).map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]));
    const converged = async () => {
      await vi.waitFor(() => expect(cacheState()).toEqual(serverState()), { timeout: 15_000, interval: 25 });
      expect(Object.keys(cacheState()).length).toBeGreaterThan(0);
    };
    /** Cuts the informer's watch and keeps it from coming back until `faults.clear()`/`set`. */
    const disconnect = async () => {
      env.server.faults.set({
        rate500: 1,
        dropWatchesEveryMs: 1,
        match: { verbs: ["watch", "list"], users: ["informer"] },
      });
      await vi.waitFor(() => expect(informer.freshness().disconnectedForMs).toBeGreaterThan(0), {
        timeout: 10_000,
      });
    };
    return { ...env, cache, informer, converged, disconnect };
  };

  it("a cut watch stream: streams dropped repeatedly while objects change", async () => {
    const { server, admin, converged } = await setup();
    const watchesBefore = count(server, "watch");
    server.faults.set({ dropWatchesEveryMs: 30, match: { users: ["informer"] } });
    await writeMany(admin, "during-drops", 40);
    await vi.waitFor(() => expect(count(server, "watch")).toBeGreaterThan(watchesBefore + 2), {
      timeout: 10_000,
    });
    server.faults.clear();
    await converged();
  });

  it("a 410 (history compacted while disconnected) → re-list, deletions included", async () => {
    const { server, admin, informer, converged, disconnect } = await setup({ watchHistorySize: 5 });
    await disconnect();
    await writeMany(admin, "while-away", PAST_HISTORY);
    await admin.client.delete(KINDS.configMap, NS, "seed-0");
    const listsBefore = count(server, "list");
    server.faults.clear();
    await converged();
    expect(count(server, "list")).toBeGreaterThan(listsBefore);
    expect(informer.get(NS, "seed-0")).toBeUndefined();
  });

  it("500s during re-list are retried until the list succeeds", async () => {
    const { server, admin, converged, disconnect } = await setup({ watchHistorySize: 5 });
    await disconnect();
    await writeMany(admin, "while-away", PAST_HISTORY);
    const listsBefore = count(server, "list");
    // The watch may resume (and get 410); every list fails.
    server.faults.set({ rate500: 1, match: { verbs: ["list"], users: ["informer"] } });
    await vi.waitFor(() => expect(count(server, "list")).toBeGreaterThan(listsBefore + 2), {
      timeout: 10_000,
    });
    server.faults.clear();
    await converged();
  });

  it("a silent stream (no events, no bookmarks) is restarted by the watchdog", async () => {
    const { server, admin, converged } = await setup({ bookmarkIntervalMs: 600_000 }, 300);
    const watchesBefore = count(server, "watch");
    await vi.waitFor(() => expect(count(server, "watch")).toBeGreaterThan(watchesBefore + 1), {
      timeout: 10_000,
    });
    await writeMany(admin, "after-silence", 2);
    await converged();
  });

  it("freshness: a quiet connected watch (bookmarks only) is fresh", async () => {
    const { informer, cache } = await setup({ bookmarkIntervalMs: 100 }, 2_000);
    await vi.waitFor(() => expect(informer.freshness()).toEqual({ synced: true, disconnectedForMs: 0 }));
    expect(cache.freshness(KINDS.configMap).synced).toBe(true);
  });
});

describe("SPEC §12, decision 151: an informer with a field selector (`migrate` watches only MigrationBlocked Events)", () => {
  const event = (name: string, reason: string) => ({
    metadata: { name, namespace: NS },
    involvedObject: { kind: "ConfigMap", name: "cm", namespace: NS },
    reason,
    message: `${reason} on cm`,
    type: "Warning",
  });
  const names = (objects: readonly { metadata?: { name?: string } }[]) =>
    objects.map((o) => o.metadata?.name).sort();
  /** A server holding one MigrationBlocked Event and one of another reason, and a cache on it with no informer yet. */
  const withTwoEvents = async () => {
    const { admin, as } = await startServer();
    await admin.client.create(KINDS.event, event("blocked-1", "MigrationBlocked"));
    await admin.client.create(KINDS.event, event("other-1", "Synchronized"));
    const cache = createCache({
      transport: as("informer").transport,
      clock: systemClock,
      logger: silentLogger(),
    });
    stops.push(() => cache.stop());
    return { admin, cache };
  };

  it("lists and watches only what it selects; the cache reads an unfiltered informer of the kind first", async () => {
    const { admin, cache } = await withTwoEvents();
    const selected = cache.informerFor(KINDS.event, NS, { fieldSelector: "reason=MigrationBlocked" });
    expect(selected.fieldSelector).toBe("reason=MigrationBlocked");
    const seen: string[] = [];
    selected.addHandlers({ onAdd: (o) => seen.push(o.metadata?.name ?? "") });
    await cache.waitForSync(10_000);
    expect(names(cache.list(KINDS.event, NS))).toEqual(["blocked-1"]);
    // From the watch: an Event of another reason neither arrives nor wakes a handler.
    await admin.client.create(KINDS.event, event("other-2", "Synchronized"));
    await admin.client.create(KINDS.event, event("blocked-2", "MigrationBlocked"));
    await vi.waitFor(() => expect(names(cache.list(KINDS.event, NS))).toEqual(["blocked-1", "blocked-2"]));
    expect(seen).toEqual(["blocked-1", "blocked-2"]);
    // Asked again with the selector: the same informer; without it, another that sees every Event — and
    // the cache's reads now answer from that one, since a selected informer holds only part of the kind.
    expect(cache.informerFor(KINDS.event, NS, { fieldSelector: "reason=MigrationBlocked" })).toBe(selected);
    const all = cache.informerFor(KINDS.event, NS);
    expect(all).not.toBe(selected);
    expect(all.fieldSelector).toBe("");
    await cache.waitForSync(10_000);
    expect(names(cache.list(KINDS.event, NS))).toEqual(["blocked-1", "blocked-2", "other-1", "other-2"]);
    expect(cache.get(KINDS.event, NS, "other-2")?.reason).toBe("Synchronized");
  });

  it("a namespace's whole informer is read before an all-namespaces one with a selector", async () => {
    const { cache } = await withTwoEvents();
    cache.informerFor(KINDS.event, "", { fieldSelector: "reason=MigrationBlocked" });
    await cache.waitForSync(10_000);
    expect(names(cache.list(KINDS.event, NS))).toEqual(["blocked-1"]);
    expect(names(cache.list(KINDS.event))).toEqual(["blocked-1"]);
    cache.informerFor(KINDS.event, NS);
    await cache.waitForSync(10_000);
    expect(names(cache.list(KINDS.event, NS))).toEqual(["blocked-1", "other-1"]);
    expect(cache.get(KINDS.event, NS, "other-1")?.reason).toBe("Synchronized");
    expect(names(cache.byIndex(KINDS.event, NS, INDEX.namespace, NS))).toEqual(["blocked-1", "other-1"]);
  });
});

describe("waiting for the cache's sync (SPEC §12: migrate ends with exit 2 and the reason, not a minute's wait)", () => {
  /** A cache whose informers list as a user granted nothing: every list is a 403. */
  const cacheOfNobody = async (): Promise<Cache> => {
    const env = await startServer();
    const cache = createCache({
      transport: env.as("nobody").transport,
      logger: silentLogger(),
      clock: systemClock,
      backoff: { initialMs: 20, maxMs: 200 },
    });
    stops.push(() => cache.stop());
    return cache;
  };

  it("a caller that calls a 403 fatal hears of it at once, naming the kind; the informer keeps trying", async () => {
    const cache = await cacheOfNobody();
    const informer = cache.informerFor(KINDS.configMap, NS);
    const failures: unknown[] = [];
    // An hour's timeout: only the 403 can end this wait within the test's own.
    await expect(
      cache.waitForSync(3_600_000, (e) => {
        failures.push(e);
        return e instanceof ForbiddenError;
      }),
    ).rejects.toThrow(/^cannot list or watch configmaps\.\/v1: HTTP 403 Forbidden: /);
    expect(failures.length).toBe(1);
    expect(informer.hasSynced()).toBe(false);
    await vi.waitFor(() => expect(failures.length).toBe(1)); // the listener is gone with the wait
  });

  it("a failure the caller does not call fatal leaves the wait to its timeout", async () => {
    const cache = await cacheOfNobody();
    cache.informerFor(KINDS.configMap, NS);
    let asked = 0;
    await expect(
      cache.waitForSync(1_000, () => {
        asked++;
        return false;
      }),
    ).rejects.toThrow(
      /^informer cache not synced after 1000 ms: configmaps\.\/v1 \(its last list or watch: HTTP 403/,
    );
    expect(asked).toBeGreaterThan(1);
  });
});

describe("leader election against the local API server", () => {
  const elector = (
    env: Awaited<ReturnType<typeof startServer>>,
    who: "a" | "b",
    leaseDurationMs: number,
    retryPeriodMs = Math.round(leaseDurationMs / 8),
  ) => {
    const state = { leading: false, starts: 0 };
    const e: LeaderElector = createLeaderElector({
      client: env.as(`replica-${who}`).client,
      namespace: NS,
      name: "machine-api-migration",
      identity: `replica-${who}`,
      leaseDurationMs,
      renewDeadlineMs: Math.round(leaseDurationMs * (2 / 3)),
      retryPeriodMs,
      clock: systemClock,
      logger: silentLogger(),
      onStartedLeading: () => {
        state.leading = true;
        state.starts++;
      },
      onStoppedLeading: () => {
        state.leading = false;
      },
    });
    stops.push(() => e.stop());
    return { e, state };
  };

  const holder = async (env: Awaited<ReturnType<typeof startServer>>) =>
    (
      (await env.admin.client.get(KINDS.lease, NS, "machine-api-migration")).spec as {
        holderIdentity?: string;
      }
    ).holderIdentity;

  it("exactly one of two replicas leads; killing it (no release) hands over after the lease expires", async () => {
    const env = await startServer();
    const a = elector(env, "a", 1500);
    const b = elector(env, "b", 1500);
    a.e.start();
    b.e.start();
    await vi.waitFor(() => expect(a.state.leading || b.state.leading).toBe(true), { timeout: 10_000 });
    // Sample for a while: never two leaders at once.
    for (let i = 0; i < 15; i++) {
      expect([a.state.leading, b.state.leading].filter(Boolean)).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 50));
    }
    const [leader, follower] = a.state.leading ? [a, b] : [b, a];
    expect(await holder(env)).toBe(leader === a ? "replica-a" : "replica-b");
    await leader.e.stop(); // a crash: the Lease still names the dead replica
    expect(await holder(env)).toBe(leader === a ? "replica-a" : "replica-b");
    await vi.waitFor(() => expect(follower.state.leading).toBe(true), { timeout: 10_000 });
    expect(await holder(env)).toBe(follower === a ? "replica-a" : "replica-b");
  });

  it("a clean shutdown releases the Lease and the successor takes over without waiting for expiry", async () => {
    const env = await startServer();
    // A lease far longer than the test's timeout: a handover proves no expiry was awaited.
    const a = elector(env, "a", 120_000, 100);
    a.e.start();
    await vi.waitFor(() => expect(a.state.leading).toBe(true), { timeout: 10_000 });
    const b = elector(env, "b", 120_000, 100);
    b.e.start();
    await new Promise((r) => setTimeout(r, 200));
    expect(b.state.leading).toBe(false);
    await a.e.release();
    expect(a.state.leading).toBe(false);
    await vi.waitFor(() => expect(b.state.leading).toBe(true), { timeout: 20_000 });
    expect(await holder(env)).toBe("replica-b");
  });
});

describe("discovery against the local API server", () => {
  it("resolves a kind outside SPEC §0 to its plural and scope, and refuses an unknown one", async () => {
    const env = await startServer();
    const resolver = createResourceResolver(env.admin.transport);
    expect(await resolver.resolve("v1", "Secret")).toMatchObject({
      group: "",
      plural: "secrets",
      namespaced: true,
    });
    await expect(resolver.resolve("v1", "NoSuchKind")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("write discipline against the local API server (SPEC §7)", () => {
  const seed = async () => {
    const env = await startServer();
    const live = await env.admin.client.create(KINDS.configMap, {
      metadata: { name: "cm", namespace: NS, finalizers: ["example.com/keep"] },
      data: { a: "1" },
    });
    return { ...env, live, write: createWriteHelpers(env.admin.client, "machine-api-migration") };
  };

  it("finalizer add/remove are JSON Patches guarded by a test of the list read", async () => {
    const { admin, live, write } = await seed();
    const added = await write.ensureFinalizer(KINDS.configMap, live, FINALIZERS.sync);
    expect(added.metadata?.finalizers).toEqual(["example.com/keep", FINALIZERS.sync]);
    // `live` is stale now: its finalizer list no longer matches.
    await expect(write.removeFinalizer(KINDS.configMap, live, "example.com/keep")).rejects.toBeInstanceOf(
      ConflictError,
    );
    const removed = await write.removeFinalizer(KINDS.configMap, added, "example.com/keep");
    expect(removed.metadata?.finalizers).toEqual([FINALIZERS.sync]);
    const bare = await admin.client.create(KINDS.configMap, { metadata: { name: "bare", namespace: NS } });
    expect(
      (await write.ensureFinalizer(KINDS.configMap, bare, FINALIZERS.sync)).metadata?.finalizers,
    ).toEqual([FINALIZERS.sync]);
  });

  it("a finalizer patch computed for one object is refused on a new object under the same name (uid)", async () => {
    const { admin, live, write } = await seed();
    await admin.client.patch(KINDS.configMap, NS, "cm", {
      type: "json",
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
    await admin.client.delete(KINDS.configMap, NS, "cm");
    const again = await admin.client.create(KINDS.configMap, {
      metadata: { name: "cm", namespace: NS, finalizers: ["example.com/keep"] },
      data: { a: "1" },
    });
    expect(again.metadata?.uid).not.toBe(live.metadata?.uid);
    await expect(write.ensureFinalizer(KINDS.configMap, live, FINALIZERS.sync)).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(write.removeFinalizer(KINDS.configMap, live, "example.com/keep")).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect((await admin.client.get(KINDS.configMap, NS, "cm")).metadata?.finalizers).toEqual([
      "example.com/keep",
    ]);
  });

  it("a merge patch carries the resourceVersion it was computed from: stale → 409", async () => {
    const { live, write } = await seed();
    const next = await write.patchWithPrecondition(KINDS.configMap, live, { data: { a: "2" } });
    expect(next.data).toEqual({ a: "2" });
    await expect(
      write.patchWithPrecondition(KINDS.configMap, live, { data: { a: "3" } }),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it("server-side apply under a named field manager", async () => {
    const { admin, server } = await seed();
    const applied = await admin.client.patch(KINDS.configMap, NS, "applied", {
      type: "apply",
      body: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "applied", namespace: NS },
        data: { owned: "yes" },
      },
      fieldManager: "machine-api-migration",
      force: true,
    });
    expect(applied.data).toEqual({ owned: "yes" });
    const stored = server.store.get({ group: "", plural: "configmaps" }, NS, "applied");
    const managers = (stored?.metadata?.managedFields as { manager?: string }[] | undefined)?.map(
      (m) => m.manager,
    );
    expect(managers).toContain("machine-api-migration");
  });

  it("deletes carry uid + resourceVersion preconditions: a stale read is refused", async () => {
    const { admin, live, write } = await seed();
    await admin.client.patch(KINDS.configMap, NS, "cm", { type: "merge", body: { data: { a: "changed" } } });
    await expect(write.deleteWithPreconditions(KINDS.configMap, live)).rejects.toBeInstanceOf(ConflictError);
    const fresh = await admin.client.get(KINDS.configMap, NS, "cm");
    await write.deleteWithPreconditions(KINDS.configMap, fresh);
    const after = await admin.client.get(KINDS.configMap, NS, "cm");
    expect(after.metadata?.deletionTimestamp).toBeTruthy(); // held by its finalizer
  });

  it("typed errors carry the server's message", async () => {
    const { admin } = await seed();
    const e = await admin.client.get(KINDS.configMap, NS, "missing").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NotFoundError);
    expect((e as NotFoundError).message).toContain("missing");
  });

  it("the event recorder aggregates repeats into one Event with a count", async () => {
    const { admin, live } = await seed();
    const recorder = createEventRecorder({
      client: admin.client,
      component: "machine-api-migration",
      clock: systemClock,
      logger: silentLogger(),
    });
    for (let i = 0; i < 3; i++) await recorder.record(live, "Warning", "SyncFailed", "conversion failed");
    const { items } = await admin.client.list(KINDS.event, { namespace: NS });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      count: 3,
      reason: "SyncFailed",
      type: "Warning",
      involvedObject: { kind: "ConfigMap", name: "cm", uid: live.metadata?.uid },
    });
  });
});

describe("controller on the shared cache against the local API server", () => {
  it("reconciles watched objects and starts a watch at run time for a kind first referenced then", async () => {
    const env = await startServer();
    const informerConnection = env.as("informer");
    const cache = createCache({
      transport: informerConnection.transport,
      clock: systemClock,
      logger: silentLogger(),
      backoff: { initialMs: 20, maxMs: 200 },
    });
    stops.push(() => cache.stop());
    const resolver = createResourceResolver(informerConnection.transport);
    const reconciled: string[] = [];
    const controller = createController({
      name: "dynamic",
      clock: systemClock,
      logger: silentLogger(),
      reconcile: async (key) => {
        reconciled.push(key);
        const holder = cache.get(KINDS.configMap, NS, key);
        const ref = (holder?.data as Record<string, string> | undefined)?.ref;
        if (!ref) return;
        const [apiVersion, kind] = ref.split("|") as [string, string];
        const type = await resolver.resolve(apiVersion, kind);
        const before = cache.informers().length;
        const informer = cache.informerFor(type, NS);
        // A new kind: watch it and map its objects back to the ConfigMap of the same name.
        if (cache.informers().length > before) controller.watch(informer, byName);
      },
    });
    stops.push(() => controller.stop());
    controller.watch(cache.informerFor(KINDS.configMap, NS), byName);
    await cache.waitForSync(10_000);
    await controller.start();

    await env.admin.client.create(KINDS.configMap, {
      metadata: { name: "holder", namespace: NS },
      data: { ref: "v1|Secret" },
    });
    await vi.waitFor(() => expect(cache.informers().map((i) => i.type.plural)).toContain("secrets"), {
      timeout: 10_000,
    });
    const count = reconciled.filter((k) => k === "holder").length;
    await env.admin.client.create(
      { group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true },
      {
        metadata: { name: "holder", namespace: NS },
        data: {},
      },
    );
    await vi.waitFor(() => expect(reconciled.filter((k) => k === "holder").length).toBeGreaterThan(count), {
      timeout: 10_000,
    });
  });
});
