/** The work queue of SPEC §7 on a manual clock: dedup, one key at a time, re-add while processing, per-key backoff and reset, requeueAfter. */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createManualClock } from "../../src/kube/clock.js";
import { runtimeMetrics } from "../../src/kube/metrics.js";
import { createWorkQueue, retryDelay } from "../../src/kube/workqueue.js";

const setup = () => {
  const clock = createManualClock();
  const registry = new Registry();
  const metrics = runtimeMetrics(registry);
  const queue = createWorkQueue({ name: "test", clock, metrics });
  return { clock, queue, registry };
};

/** One turn of the event loop has passed: a waiting worker is handed a key per turn (decision 103). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("work queue (SPEC §7)", () => {
  it("duplicate adds collapse into one queued key", async () => {
    const { queue } = setup();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe("a");
    expect(await queue.get()).toBe("b");
    expect(queue.len()).toBe(0);
  });

  it("a key is never handed out while it is being processed", async () => {
    const { queue } = setup();
    queue.add("a");
    const first = await queue.get();
    queue.add("a");
    expect(queue.len()).toBe(0);
    let second: string | undefined;
    void queue.get().then((k) => {
      second = k;
    });
    await settled();
    expect(second).toBeUndefined();
    queue.done(first!);
    await settled();
    expect(second).toBe("a");
  });

  it("a key re-added while processing is processed exactly once more after", async () => {
    const { queue } = setup();
    queue.add("a");
    const k = await queue.get();
    queue.add("a");
    queue.add("a");
    queue.done(k!);
    expect(queue.len()).toBe(1);
    const again = await queue.get();
    queue.done(again!);
    expect(queue.len()).toBe(0);
  });

  it("adds in one turn coalesce even when a worker is already waiting (client-go: the worker takes the key later)", async () => {
    const { queue } = setup();
    const handed: (string | undefined)[] = [];
    void queue.get().then((k) => handed.push(k));
    // One watch event maps to the same key twice (old and new object), and a second event in the same
    // turn adds it again: client-go's worker would find one queued key, so one reconcile.
    queue.add("a");
    queue.add("a");
    queue.add("a");
    await settled();
    expect(handed).toEqual(["a"]);
    queue.done("a");
    expect(queue.len()).toBe(0);
    expect(queue.processing()).toEqual([]);
  });

  it("a waiting worker is handed keys in order, one each, and the rest stay queued", async () => {
    const { queue } = setup();
    const handed: (string | undefined)[] = [];
    void queue.get().then((k) => handed.push(k));
    void queue.get().then((k) => handed.push(k));
    queue.add("a");
    queue.add("b");
    queue.add("c");
    queue.add("b");
    await settled();
    expect(handed).toEqual(["a"]);
    await settled();
    expect(handed).toEqual(["a", "b"]);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe("c");
  });

  it("adds from separate callbacks of one round of I/O coalesce: the waiting worker takes the key after them (decision 103)", async () => {
    const { queue } = setup();
    const handed: (string | undefined)[] = [];
    void queue.get().then((k) => handed.push(k));
    // One write's events reach the product on several watch streams: each arrives in its own callback of the
    // same poll phase, as these two immediates, queued together, run in one check phase (with microtasks and
    // nextTicks between them, as between I/O callbacks). Two zero-delay timers do not always: Node reads the
    // clock for each, and a millisecond passing between the two calls puts them in different turns.
    await new Promise<void>((resolve) => {
      setImmediate(() => queue.add("a"));
      setImmediate(() => {
        queue.add("a");
        resolve();
      });
    });
    await settled();
    expect(handed).toEqual(["a"]);
    queue.done("a");
    // Handed out after the first add, the key would be queued again for the second: two reconciles.
    expect(queue.len()).toBe(0);
  });

  it("each waiting worker gets its key in a turn of its own, after the previous worker's nextTick callbacks (decision 103)", async () => {
    const { queue } = setup();
    const order: string[] = [];
    // A reconcile's request is sent from a process.nextTick callback (Node's agent hands the request its
    // socket there): the next worker should start only after it.
    const worker = async (): Promise<void> => {
      const key = await queue.get();
      order.push(`start ${key}`);
      process.nextTick(() => order.push(`sent ${key}`));
    };
    const workers = [worker(), worker()];
    queue.add("a");
    queue.add("b");
    await Promise.all(workers);
    await settled();
    expect(order).toEqual(["start a", "sent a", "start b", "sent b"]);
  });

  it("a key done without re-add is not queued again", async () => {
    const { queue } = setup();
    queue.add("a");
    queue.done((await queue.get())!);
    expect(queue.len()).toBe(0);
    expect(queue.processing()).toEqual([]);
  });

  it("failures back off exponentially from 5 ms, doubling, capped at 1000 s", () => {
    const delays = [1, 2, 3, 4, 10, 18, 19, 40].map((n) => retryDelay(n, 5, 1_000_000));
    expect(delays).toEqual([5, 10, 20, 40, 2560, 655_360, 1_000_000, 1_000_000]);
  });

  it("addRateLimited waits the key's backoff, growing per failure, and forget resets it", async () => {
    const { queue, clock, registry } = setup();
    queue.addRateLimited("a");
    await clock.advance(4);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
    queue.done((await queue.get())!);

    queue.addRateLimited("a");
    await clock.advance(9);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
    queue.done((await queue.get())!);
    expect(queue.numRequeues("a")).toBe(2);

    queue.forget("a");
    expect(queue.numRequeues("a")).toBe(0);
    queue.addRateLimited("a");
    await clock.advance(5);
    expect(queue.len()).toBe(1);
    const retries = await registry.getSingleMetricAsString("workqueue_retries_total");
    expect(retries).toContain('workqueue_retries_total{name="test",controller="test"} 3');
  });

  it("backoff is per key: one key's failures do not delay another", async () => {
    const { queue, clock } = setup();
    for (let i = 0; i < 5; i++) {
      queue.addRateLimited("slow");
      await clock.advance(retryDelay(i + 1, 5, 1_000_000));
      queue.done((await queue.get())!);
    }
    queue.addRateLimited("slow");
    queue.addRateLimited("fast");
    await clock.advance(5);
    expect(await queue.get()).toBe("fast");
    expect(queue.len()).toBe(0);
  });

  it("requeueAfter (addAfter) adds the key when the delay passes; the earliest pending delay wins", async () => {
    const { queue, clock } = setup();
    queue.addAfter("a", 1000);
    queue.addAfter("a", 200);
    queue.addAfter("a", 5000);
    await clock.advance(199);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(1);
    queue.done((await queue.get())!);
    await clock.advance(10_000);
    expect(queue.len()).toBe(0);
  });

  it("addAfter with no delay adds at once", () => {
    const { queue } = setup();
    queue.addAfter("a", 0);
    expect(queue.len()).toBe(1);
  });

  it("shutdown releases waiting getters and drops delayed keys", async () => {
    const { queue, clock } = setup();
    const waiting = queue.get();
    queue.addAfter("later", 100);
    queue.shutdown();
    expect(await waiting).toBeUndefined();
    await clock.advance(200);
    expect(queue.len()).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  it("workqueue_depth follows the keys waiting, as client-go counts them", async () => {
    const { queue, registry } = setup();
    const depth = async () => await registry.getSingleMetricAsString("workqueue_depth");
    queue.add("a");
    queue.add("b");
    expect(await depth()).toContain('workqueue_depth{name="test",controller="test"} 2');
    const a = await queue.get();
    expect(await depth()).toContain('workqueue_depth{name="test",controller="test"} 1');
    // Re-added while processing: waiting (client-go counts it), though not handed out until done.
    queue.add("a");
    expect(await depth()).toContain('workqueue_depth{name="test",controller="test"} 2');
    queue.done(a!);
    await queue.get();
    await queue.get();
    expect(await depth()).toContain('workqueue_depth{name="test",controller="test"} 0');
  });
});
