/**
 * The informer over the real HTTP transport (node:http, KubeConfig auth, newline-delimited JSON) against a
 * fake list/watch server with faults. Real time, short timeouts; assertions are on state, never on time.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createCache } from "../../src/kube/cache.js";
import { systemClock } from "../../src/kube/clock.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { INDEX } from "../../src/kube/store.js";
import { jsonLines, kubeConfigTransport } from "../../src/kube/transport.js";
import { NAMESPACE, startModelServer, WatchModel } from "./fake-watch-server.js";
import { silentLogger } from "./fakes.js";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

const setup = async () => {
  const model = new WatchModel();
  model.put("a", { v: "1" });
  model.put("b", { v: "1" });
  const server = await startModelServer(model);
  stops.push(server.stop);
  const cache = createCache({
    transport: kubeConfigTransport(server.kubeConfig),
    clock: systemClock,
    logger: silentLogger(),
    watchSilenceTimeoutMs: 400,
    backoff: { initialMs: 10, maxMs: 100 },
  });
  stops.push(() => cache.stop());
  const informer = cache.informerFor(KINDS.configMap, NAMESPACE);
  await cache.waitForSync(10_000);
  const state = () =>
    Object.fromEntries(
      cache
        .list(KINDS.configMap, NAMESPACE)
        .map((o: KubeObject) => [o.metadata!.name!, o.metadata!.resourceVersion!]),
    );
  const converged = () =>
    vi.waitFor(() => expect(state()).toEqual(model.state()), { timeout: 10_000, interval: 20 });
  return { model, cache, informer, converged };
};

describe("informer over HTTP recovers and ends with exactly the server's state", () => {
  it("follows events on a live stream", async () => {
    const { model, converged } = await setup();
    model.put("c", { v: "1" });
    model.delete("a");
    await converged();
  });

  it("a cut watch stream", async () => {
    const { model, converged } = await setup();
    await vi.waitFor(() => expect(model.watchers.size).toBe(1));
    model.cutWatches();
    model.put("a", { v: "2" });
    model.delete("b");
    await converged();
    expect(model.counters.lists).toBe(1);
  });

  it.each(["http", "event"] as const)("a 410 Gone (%s) → re-list", async (goneAs) => {
    const { model, converged } = await setup();
    await vi.waitFor(() => expect(model.watchers.size).toBe(1));
    model.goneAs = goneAs;
    model.cutWatches();
    model.delete("a");
    model.put("d", { v: "1" });
    model.compact();
    await converged();
    expect(model.counters.gone).toBeGreaterThanOrEqual(1);
    expect(model.counters.lists).toBeGreaterThanOrEqual(2);
  });

  it("500s during re-list", async () => {
    const { model, converged } = await setup();
    await vi.waitFor(() => expect(model.watchers.size).toBe(1));
    model.failLists = 4;
    model.cutWatches();
    model.put("e", { v: "1" });
    model.compact();
    await converged();
    expect(model.counters.listFailures).toBe(4);
  });

  it("a silent stream is restarted by the watchdog", async () => {
    const { model, converged } = await setup();
    await vi.waitFor(() => expect(model.watchers.size).toBe(1));
    const watches = model.counters.watches;
    model.freezeWatches();
    model.put("a", { v: "missed-by-the-frozen-stream" });
    await converged();
    expect(model.counters.watches).toBeGreaterThan(watches);
  });
});

describe("cache manager", () => {
  it("informerFor is idempotent; the cache is an ObjectStore across informers", async () => {
    const { cache, informer, model } = await setup();
    expect(cache.informerFor(KINDS.configMap, NAMESPACE)).toBe(informer);
    expect(cache.synced()).toBe(true);
    expect(cache.get(KINDS.configMap, NAMESPACE, "a")?.metadata?.resourceVersion).toBe(
      model.objects.get("a")?.metadata?.resourceVersion,
    );
    expect(cache.get(KINDS.configMap, "other", "a")).toBeUndefined();
    const filed = (namespace: string, value: string) =>
      cache
        .byIndex(KINDS.configMap, namespace, INDEX.namespace, value)
        .map((o) => o.metadata?.name)
        .sort();
    expect(filed(NAMESPACE, NAMESPACE)).toEqual(["a", "b"]);
    expect(filed("other", NAMESPACE)).toEqual([]);
    expect(cache.byIndex(KINDS.mapiMachine, NAMESPACE, INDEX.namespace, NAMESPACE)).toEqual([]);
    // Right after sync the watch is being opened; once open, a quiet stream is fresh.
    await vi.waitFor(() =>
      expect(cache.freshness(KINDS.configMap)).toEqual({ synced: true, disconnectedForMs: 0 }),
    );
    expect(cache.freshness(KINDS.mapiMachine)).toEqual({
      synced: false,
      disconnectedForMs: Number.POSITIVE_INFINITY,
    });
    expect(cache.list(KINDS.mapiMachine)).toEqual([]);
  });

  it("a dynamically added informer makes the cache unsynced until it syncs", async () => {
    const { cache } = await setup();
    // The fake server only serves ConfigMaps: Machines answer 404 forever, so this informer never syncs.
    cache.informerFor(KINDS.mapiMachine, "openshift-machine-api");
    expect(cache.synced()).toBe(false);
    // The error says why, so an admin told "not synced" learns it is a 404 (or RBAC's 403), not a slow server.
    await expect(cache.waitForSync(200)).rejects.toThrow(
      /^informer cache not synced after 200 ms: machines\S* \(its last list or watch: .*404.*\)$/,
    );
  });
});

describe("newline-delimited JSON: the watch streams of SPEC §4.1", () => {
  it("splits chunks on newlines, across chunk boundaries", async () => {
    async function* chunks() {
      yield Buffer.from('{"a":1}\n{"b"');
      yield Buffer.from(':2}\n\n{"c":3}');
    }
    const out: unknown[] = [];
    for await (const v of jsonLines(chunks())) out.push(v);
    expect(out).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });
  it("a character whose bytes two chunks share arrives whole (decision 137: it became two U+FFFD)", async () => {
    const bytes = Buffer.from('{"metadata":{"labels":{"team":"équipe-🚀"}}}\n');
    const at = [bytes.indexOf(0xc3) + 1, bytes.indexOf(0xf0) + 2];
    async function* chunks() {
      yield bytes.subarray(0, at[0]);
      yield bytes.subarray(at[0], at[1]);
      yield bytes.subarray(at[1]);
    }
    const out: unknown[] = [];
    for await (const v of jsonLines(chunks())) out.push(v);
    expect(out).toEqual([{ metadata: { labels: { team: "équipe-🚀" } } }]);
  });
  it("a 16 MB line in 64-byte chunks is read once, not rescanned per chunk (decision 137)", async () => {
    // Rescanning the line so far for a newline after every chunk: 250,000 chunks × megabytes — it did not finish.
    const line = Buffer.from(`{"v":"${"x".repeat(16 * 1024 * 1024)}"}\n{"w":1}\n`);
    async function* chunks() {
      for (let i = 0; i < line.length; i += 64) yield line.subarray(i, i + 64);
    }
    const out: unknown[] = [];
    for await (const v of jsonLines(chunks())) out.push(v);
    expect(out).toHaveLength(2);
    expect((out[0] as { v: string }).v).toHaveLength(16 * 1024 * 1024);
    expect(out[1]).toEqual({ w: 1 });
  });
  it("a broken line ends the stream with an error", async () => {
    async function* chunks() {
      yield Buffer.from("{nope\n");
    }
    await expect(async () => {
      for await (const _ of jsonLines(chunks())) {
        /* drain */
      }
    }).rejects.toThrow(/watch stream broke/);
  });
});
