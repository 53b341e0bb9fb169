/** The informer's reflector logic on a manual clock over an in-process list/watch model with faults; freshness for admission. */
import { describe, expect, it } from "vitest";
import { createManualClock, flushMicrotasks } from "../../src/kube/clock.js";
import type { Informer } from "../../src/kube/informer.js";
import { backoffDelay, createInformer } from "../../src/kube/informer.js";
import { KINDS } from "../../src/kube/kinds.js";
import { modelTransport, NAMESPACE, WatchModel } from "./fake-watch-server.js";
import { silentLogger } from "./fakes.js";

const cacheState = (informer: Informer): Record<string, string> =>
  Object.fromEntries(informer.list(NAMESPACE).map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]));

const setup = (silenceMs = 60_000) => {
  const clock = createManualClock();
  const model = new WatchModel();
  model.put("a", { v: "1" });
  model.put("b", { v: "1" });
  const seen: string[] = [];
  const informer = createInformer({
    type: KINDS.configMap,
    namespace: NAMESPACE,
    transport: modelTransport(model),
    clock,
    logger: silentLogger(),
    watchSilenceTimeoutMs: silenceMs,
    watchTimeoutSeconds: 300,
    random: () => 0.5,
  });
  informer.addHandlers({
    onAdd: (o) => seen.push(`add ${o.metadata?.name}`),
    onUpdate: (_, o) => seen.push(`update ${o.metadata?.name}`),
    onDelete: (o) => seen.push(`delete ${o.metadata?.name}`),
  });
  informer.start();
  return { clock, model, informer, seen };
};

describe("informer: list + watch (SPEC §7)", () => {
  it("lists, syncs, then follows the watch; handlers run after the store changed", async () => {
    const { model, informer, seen, clock } = setup();
    await informer.synced;
    expect(informer.hasSynced()).toBe(true);
    await flushMicrotasks();
    model.put("c", { v: "1" });
    model.put("a", { v: "2" });
    model.delete("b");
    await clock.advance(0);
    expect(cacheState(informer)).toEqual(model.state());
    expect(seen).toEqual(["add a", "add b", "add c", "update a", "delete b"]);
    expect(informer.get(NAMESPACE, "a")?.data).toEqual({ v: "2" });
    expect(informer.get(NAMESPACE, "a")?.kind).toBe("ConfigMap");
    await informer.stop();
  });

  it("requests bookmarks and resumes from the bookmark's resourceVersion", async () => {
    const { model, informer, clock } = setup();
    await informer.synced;
    await flushMicrotasks();
    model.rv += 10; // other kinds moved the global counter
    model.bookmark();
    await clock.advance(0);
    expect(informer.resourceVersion()).toBe(String(model.rv));
    await informer.stop();
  });

  it("drops managedFields from cached objects", async () => {
    const { informer } = setup();
    await informer.synced;
    expect(informer.get(NAMESPACE, "a")?.metadata?.managedFields).toBeUndefined();
    await informer.stop();
  });

  it("parses its lists and watch events with managedFields cut from the text (SPEC §7)", async () => {
    const model = new WatchModel();
    model.put("a", { v: "1" });
    const inner = modelTransport(model);
    const parsers: Record<string, ((text: string) => unknown) | undefined> = {};
    const informer = createInformer({
      type: KINDS.configMap,
      namespace: NAMESPACE,
      transport: {
        request: (req) => {
          parsers.list = req.parse;
          return inner.request(req);
        },
        stream: (req) => {
          parsers.watch = req.parse;
          return inner.stream(req);
        },
      },
      clock: createManualClock(),
      logger: silentLogger(),
      random: () => 0.5,
    });
    informer.start();
    await informer.synced;
    await flushMicrotasks();
    const object = { metadata: { name: "a", managedFields: [{ manager: "m" }] }, spec: { managedFields: 1 } };
    const kept = { metadata: { name: "a" }, spec: { managedFields: 1 } };
    expect(parsers.list?.(JSON.stringify({ items: [object] }))).toEqual({ items: [kept] });
    expect(parsers.watch?.(JSON.stringify({ type: "ADDED", object }))).toEqual({
      type: "ADDED",
      object: kept,
    });
    await informer.stop();
  });

  it("a cut stream resumes from the last resourceVersion without a re-list and misses nothing", async () => {
    const { model, informer, clock } = setup();
    await informer.synced;
    await flushMicrotasks();
    model.cutWatches();
    model.put("a", { v: "cut" });
    model.delete("b");
    await clock.advance(1000);
    expect(cacheState(informer)).toEqual(model.state());
    expect(model.counters.lists).toBe(1);
    await informer.stop();
  });

  it.each(["http", "event"] as const)(
    "a 410 (%s) re-lists and ends with the server's state, deletions included",
    async (goneAs) => {
      const { model, informer, clock, seen } = setup();
      await informer.synced;
      await flushMicrotasks();
      model.goneAs = goneAs;
      model.cutWatches();
      model.put("c", { v: "1" });
      model.delete("a");
      model.compact();
      await clock.advance(1000);
      expect(model.counters.gone).toBeGreaterThanOrEqual(1);
      expect(model.counters.lists).toBe(2);
      expect(cacheState(informer)).toEqual(model.state());
      expect(seen).toContain("delete a");
      await informer.stop();
    },
  );

  it("500s during re-list are retried with backoff until the list succeeds", async () => {
    const { model, informer, clock } = setup();
    await informer.synced;
    await flushMicrotasks();
    model.failLists = 3;
    model.cutWatches();
    model.put("z", { v: "1" });
    model.compact();
    await clock.advance(60_000);
    expect(model.counters.listFailures).toBe(3);
    expect(cacheState(informer)).toEqual(model.state());
    await informer.stop();
  });

  it("a silent stream (no event, no bookmark) is restarted after the silence timeout", async () => {
    const { model, informer, clock } = setup(10_000);
    await informer.synced;
    await flushMicrotasks();
    model.freezeWatches();
    model.put("a", { v: "lost-on-frozen-stream" });
    await clock.advance(9_000);
    expect(informer.get(NAMESPACE, "a")?.data).toEqual({ v: "1" });
    const watchesBefore = model.counters.watches;
    await clock.advance(1_500);
    expect(model.counters.watches).toBe(watchesBefore + 1);
    expect(cacheState(informer)).toEqual(model.state());
    await informer.stop();
  });

  it("bookmarks keep a quiet watch alive: no restart while they arrive", async () => {
    const { model, informer, clock } = setup(10_000);
    await informer.synced;
    await flushMicrotasks();
    const watches = model.counters.watches;
    for (let i = 0; i < 10; i++) {
      await clock.advance(5_000);
      model.bookmark();
    }
    expect(model.counters.watches).toBe(watches);
    await informer.stop();
  });

  it("freshness (SPEC §2.1): a quiet connected watch is fresh; time without an open stream is reported", async () => {
    const { model, informer, clock } = setup(1_000_000);
    expect(informer.freshness().synced).toBe(false);
    await informer.synced;
    await flushMicrotasks();
    await clock.advance(120_000);
    expect(informer.freshness()).toEqual({ synced: true, disconnectedForMs: 0 });
    model.down = true;
    model.cutWatches();
    await clock.advance(40_000);
    const { disconnectedForMs } = informer.freshness();
    expect(disconnectedForMs).toBe(40_000);
    model.down = false;
    await clock.advance(60_000);
    expect(informer.freshness().disconnectedForMs).toBe(0);
    await informer.stop();
  });

  it("keeps retrying while the server is unreachable and syncs once it is back", async () => {
    const clock = createManualClock();
    const model = new WatchModel();
    model.down = true;
    model.put("a", { v: "1" });
    const informer = createInformer({
      type: KINDS.configMap,
      namespace: NAMESPACE,
      transport: modelTransport(model),
      clock,
      logger: silentLogger(),
      random: () => 0,
    });
    informer.start();
    await clock.advance(300_000);
    expect(informer.hasSynced()).toBe(false);
    model.down = false;
    await clock.advance(30_000);
    expect(informer.hasSynced()).toBe(true);
    expect(cacheState(informer)).toEqual(model.state());
    await informer.stop();
  });

  it("stop ends the loop: no more requests", async () => {
    const { model, informer, clock } = setup();
    await informer.synced;
    await informer.stop();
    const counts = { ...model.counters };
    model.cutWatches();
    await clock.advance(100_000);
    expect(model.counters).toEqual(counts);
    expect(clock.pending()).toBe(0);
  });
});

describe("watch backoff", () => {
  it.each([
    [1, 0, 125],
    [1, 0.999999, 250],
    [3, 0, 500],
    [20, 0, 15_000],
  ])("failure %i with jitter %d waits %d ms", (failures, r, expected) => {
    expect(Math.round(backoffDelay(failures, { initialMs: 250, maxMs: 30_000 }, () => r))).toBe(expected);
  });
});

describe("fresh list (SPEC §3.5: a new leader acts on nothing until its caches have caught up)", () => {
  it("freshList re-lists a synced informer whose watch lags, tells handlers what changed, and resumes the watch from the list", async () => {
    const { model, informer, clock, seen } = setup();
    await informer.synced;
    await flushMicrotasks();
    model.freezeWatches();
    model.put("a", { v: "2" });
    model.delete("b");
    model.put("c", { v: "1" });
    await clock.advance(1_000);
    expect(informer.get(NAMESPACE, "a")?.data).toEqual({ v: "1" });
    seen.length = 0;
    await informer.freshList();
    expect(cacheState(informer)).toEqual(model.state());
    expect(seen.sort()).toEqual(["add c", "delete b", "update a"]);
    expect(model.counters.lists).toBe(2);
    expect(informer.resourceVersion()).toBe(String(model.rv));
    model.put("d", { v: "1" });
    await clock.advance(0);
    expect(cacheState(informer)).toEqual(model.state());
    expect(model.counters.lists).toBe(2);
    await informer.stop();
  });

  it("callers asking at once share one list", async () => {
    const { model, informer } = setup();
    await informer.synced;
    await flushMicrotasks();
    await Promise.all([informer.freshList(), informer.freshList(), informer.freshList()]);
    expect(model.counters.lists).toBe(2);
    await informer.stop();
  });

  it("a list already in flight when asked does not count: the caller waits for the next one", async () => {
    const { model, informer } = setup();
    await informer.synced;
    await flushMicrotasks();
    const releaseFirst = model.holdLists();
    const first = informer.freshList();
    await flushMicrotasks();
    expect(model.counters.lists).toBe(2);
    model.put("a", { v: "2" });
    let secondDone = false;
    const second = informer.freshList().then(() => {
      secondDone = true;
    });
    releaseFirst();
    const releaseSecond = model.holdLists();
    await first;
    await flushMicrotasks();
    expect(informer.get(NAMESPACE, "a")?.data).toEqual({ v: "1" });
    expect(secondDone).toBe(false);
    expect(model.counters.lists).toBe(3);
    releaseSecond();
    await second;
    expect(informer.get(NAMESPACE, "a")?.data).toEqual({ v: "2" });
    await informer.stop();
  });

  it("a failed list is retried with the informer's backoff; the caller is answered only by a list that succeeded", async () => {
    const { model, informer, clock } = setup();
    await informer.synced;
    await flushMicrotasks();
    model.freezeWatches();
    model.put("a", { v: "2" });
    model.failLists = 2;
    let done = false;
    const fresh = informer.freshList().then(() => {
      done = true;
    });
    await clock.advance(100);
    expect(model.counters.listFailures).toBe(1);
    expect(done).toBe(false);
    expect(informer.lastError()).toContain("HTTP 500");
    await clock.advance(5_000);
    await fresh;
    expect(model.counters.listFailures).toBe(2);
    expect(informer.get(NAMESPACE, "a")?.data).toEqual({ v: "2" });
    expect(informer.lastError()).toBeUndefined();
    await informer.stop();
  });

  it("stopping the informer rejects a caller waiting for a list, and any later caller", async () => {
    const { model, informer } = setup();
    await informer.synced;
    await flushMicrotasks();
    model.holdLists();
    const fresh = informer.freshList();
    await flushMicrotasks();
    await informer.stop();
    await expect(fresh).rejects.toThrow(/stopped/);
    await expect(informer.freshList()).rejects.toThrow(/stopped/);
  });

  it("before the first sync, the first list is the fresh one: no second list", async () => {
    const { model, informer } = setup();
    await informer.freshList();
    expect(informer.hasSynced()).toBe(true);
    expect(model.counters.lists).toBe(1);
    await informer.stop();
  });
});
