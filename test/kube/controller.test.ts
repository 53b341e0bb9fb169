/** The controller loop on a manual clock: outcomes (success, error with backoff, conflict, terminal, requeueAfter), workers, stop, and the key mappers. */
import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createManualClock, flushMicrotasks } from "../../src/kube/clock.js";
import type { Reconciler } from "../../src/kube/controller.js";
import {
  anyOf,
  beyondStatus,
  byLabel,
  byName,
  byOwner,
  createController,
  TerminalError,
} from "../../src/kube/controller.js";
import { ConflictError } from "../../src/kube/errors.js";
import { createInformer } from "../../src/kube/informer.js";
import { KINDS } from "../../src/kube/kinds.js";
import { leaderGatedControllers } from "../../src/kube/manager.js";
import { runtimeMetrics } from "../../src/kube/metrics.js";
import type { KubeObject } from "../../src/kube/object.js";
import { getPath } from "../../src/kube/object.js";
import { modelTransport, NAMESPACE, WatchModel } from "./fake-watch-server.js";
import { fakeInformer, silentLogger } from "./fakes.js";

const machine = (
  name: string,
  namespace = "openshift-machine-api",
  extra: Partial<KubeObject["metadata"]> = {},
): KubeObject => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: "1", ...extra },
});

const setup = (reconcile: Reconciler, workers = 1) => {
  const clock = createManualClock();
  const registry = new Registry();
  const controller = createController({
    name: "test",
    reconcile,
    clock,
    logger: silentLogger(),
    metrics: runtimeMetrics(registry),
    workers,
  });
  return { clock, registry, controller };
};

const metric = async (registry: Registry, name: string) =>
  (await registry.getSingleMetricAsString(name)) ?? "";

describe("controller loop (SPEC §7)", () => {
  it("reconciles each watched object once after start and counts success", async () => {
    const calls: string[] = [];
    const { controller, registry } = setup(async (key) => {
      calls.push(key);
    });
    const informer = fakeInformer(KINDS.mapiMachine);
    informer.add(machine("a"));
    informer.add(machine("b"));
    controller.watch(informer, byName);
    await controller.start();
    await flushMicrotasks();
    expect(calls.sort()).toEqual(["a", "b"]);
    expect(await metric(registry, "controller_runtime_reconcile_total")).toContain(
      'controller_runtime_reconcile_total{controller="test",result="success"} 2',
    );
    await controller.stop();
  });

  it("an error backs off per key (5 ms, 10 ms, …) and a success resets the backoff", async () => {
    let failuresLeft = 3;
    const calls: number[] = [];
    const { controller, clock } = setup(async () => {
      calls.push(clock.now());
      if (failuresLeft-- > 0) throw new Error("boom");
    });
    await controller.start();
    const t0 = clock.now();
    controller.enqueue("a");
    await flushMicrotasks();
    await clock.advance(4);
    expect(calls.length).toBe(1);
    await clock.advance(1); // 5 ms
    expect(calls.length).toBe(2);
    await clock.advance(10); // +10 ms
    expect(calls.length).toBe(3);
    await clock.advance(20); // +20 ms → success
    expect(calls.map((t) => t - t0)).toEqual([0, 5, 15, 35]);
    expect(controller.queue()!.numRequeues("a")).toBe(0);
    await controller.stop();
  });

  it("a conflict is an error: requeued with backoff", async () => {
    let first = true;
    let count = 0;
    const { controller, clock, registry } = setup(async () => {
      count++;
      if (first) {
        first = false;
        throw new ConflictError(409, "Conflict", "the object has been modified");
      }
    });
    await controller.start();
    controller.enqueue("a");
    await clock.advance(5);
    expect(count).toBe(2);
    expect(await metric(registry, "controller_runtime_reconcile_total")).toContain('result="error"} 1');
    expect(await metric(registry, "controller_runtime_reconcile_errors_total")).toContain(
      'controller_runtime_reconcile_errors_total{controller="test"} 1',
    );
    await controller.stop();
  });

  it("a terminal error is not retried, and is counted as controller-runtime counts it (an error, and terminal)", async () => {
    let count = 0;
    const { controller, clock, registry } = setup(async () => {
      count++;
      throw new TerminalError("unsupported platform");
    });
    await controller.start();
    controller.enqueue("a");
    await clock.advance(2_000_000);
    expect(count).toBe(1);
    expect(await metric(registry, "controller_runtime_reconcile_total")).toContain(
      'controller_runtime_reconcile_total{controller="test",result="error"} 1',
    );
    expect(await metric(registry, "controller_runtime_reconcile_errors_total")).toContain(
      'controller_runtime_reconcile_errors_total{controller="test"} 1',
    );
    expect(await metric(registry, "controller_runtime_terminal_reconcile_errors_total")).toContain(
      'controller_runtime_terminal_reconcile_errors_total{controller="test"} 1',
    );
    await controller.stop();
  });

  it("requeueAfter reconciles the key again after the delay", async () => {
    const calls: number[] = [];
    const { controller, clock } = setup(async () => {
      calls.push(clock.now());
      return calls.length < 3 ? { requeueAfterMs: 30_000 } : undefined;
    });
    await controller.start();
    controller.enqueue("a");
    await flushMicrotasks();
    await clock.advance(29_999);
    expect(calls.length).toBe(1);
    await clock.advance(1);
    expect(calls.length).toBe(2);
    await clock.advance(30_000);
    expect(calls.length).toBe(3);
    await clock.advance(100_000);
    expect(calls.length).toBe(3);
    await controller.stop();
  });

  it("with several workers a key is never reconciled concurrently, distinct keys are", async () => {
    const running = new Set<string>();
    let maxParallel = 0;
    let overlapSameKey = false;
    const gates: (() => void)[] = [];
    const { controller } = setup(async (key) => {
      if (running.has(key)) overlapSameKey = true;
      running.add(key);
      maxParallel = Math.max(maxParallel, running.size);
      await new Promise<void>((r) => gates.push(r));
      running.delete(key);
    }, 3);
    await controller.start();
    controller.enqueue("a");
    controller.enqueue("b");
    await flushMicrotasks();
    controller.enqueue("a"); // while "a" runs
    await flushMicrotasks();
    expect(running.size).toBe(2);
    while (gates.length > 0) {
      gates.shift()!();
      await flushMicrotasks();
    }
    expect(overlapSameKey).toBe(false);
    expect(maxParallel).toBe(2);
    await controller.stop();
  });

  it("stop aborts the context signal and waits for the in-flight reconcile", async () => {
    let release: () => void = () => {};
    let aborted = false;
    let finished = false;
    const { controller } = setup(async (_key, { signal }) => {
      await new Promise<void>((r) => {
        release = r;
      });
      aborted = signal.aborted;
      finished = true;
    });
    await controller.start();
    controller.enqueue("a");
    await flushMicrotasks();
    const stopped = controller.stop();
    await flushMicrotasks();
    expect(finished).toBe(false);
    release();
    await stopped;
    expect(finished).toBe(true);
    expect(aborted).toBe(true);
    expect(controller.isRunning()).toBe(false);
  });

  it("the context signal takes any number of listeners: every request of every worker listens on it (decision 198)", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const { controller } = setup(async (_key, { signal }) => {
        // A worker's parallel live reads, each with its request's listener.
        for (let i = 0; i < 12; i++) signal.addEventListener("abort", () => {});
      });
      await controller.start();
      controller.enqueue("a");
      await flushMicrotasks();
      await controller.stop();
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("waits for watched informers to sync before reconciling", async () => {
    const calls: string[] = [];
    const { controller } = setup(async (key) => {
      calls.push(key);
    });
    const informer = fakeInformer(KINDS.mapiMachine, false);
    controller.watch(informer, byName);
    const started = controller.start();
    informer.add(machine("a"));
    await flushMicrotasks();
    expect(calls).toEqual([]);
    informer.markSynced();
    await started;
    await flushMicrotasks();
    expect(calls).toEqual(["a"]);
    await controller.stop();
  });

  it("watch events map to keys: updates enqueue keys of the old and new object", async () => {
    const calls: string[] = [];
    const { controller } = setup(async (key) => {
      calls.push(key);
    });
    const informer = fakeInformer(KINDS.awsMachineTemplate);
    controller.watch(informer, byLabel("machine.openshift.io/cluster-api-machineset"));
    await controller.start();
    informer.add(machine("t", "ns", { labels: { "machine.openshift.io/cluster-api-machineset": "one" } }));
    await flushMicrotasks();
    informer.update(machine("t", "ns", { labels: { "machine.openshift.io/cluster-api-machineset": "two" } }));
    await flushMicrotasks();
    expect(calls).toEqual(["one", "one", "two"]);
    await controller.stop();
  });

  it("a watch's update predicate (beyondStatus): a status-only update maps to no key; adds, deletes and the replay always map", async () => {
    const calls: string[] = [];
    const { controller } = setup(async (key) => {
      calls.push(key);
    });
    const informer = fakeInformer(KINDS.mapiMachine);
    informer.add({ ...machine("a"), status: { phase: "Provisioning" } });
    controller.watch(informer, byName, beyondStatus);
    await controller.start();
    await flushMicrotasks();
    expect(calls).toEqual(["a"]);
    informer.update({ ...machine("a", undefined, { resourceVersion: "2" }), status: { phase: "Running" } });
    await flushMicrotasks();
    expect(calls).toEqual(["a"]);
    informer.update({ ...machine("a", undefined, { resourceVersion: "3", labels: { l: "1" } }) });
    await flushMicrotasks();
    expect(calls).toEqual(["a", "a"]);
    informer.add(machine("b"));
    informer.remove(machine("b"));
    await flushMicrotasks();
    expect(calls).toEqual(["a", "a", "b"]);
    await controller.stop();
  });
});

/**
 * A controller over a real informer of ConfigMaps (fake-watch-server.ts): each reconcile records what the cache
 * showed for its key, `name=v`, so a test sees whether it acted on a view older than the server's.
 */
const overLiveInformer = () => {
  const clock = createManualClock();
  const model = new WatchModel();
  model.put("a", { v: "1" });
  const informer = createInformer({
    type: KINDS.configMap,
    namespace: NAMESPACE,
    transport: modelTransport(model),
    clock,
    logger: silentLogger(),
    watchTimeoutSeconds: 300,
    random: () => 0.5,
  });
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const seen: string[] = [];
  const make = (name: string) =>
    createController({
      name,
      clock,
      logger,
      reconcile: async (key) => {
        seen.push(`${key}=${getPath(informer.get(NAMESPACE, key), ["data", "v"]) ?? "absent"}`);
      },
    });
  const controller = make("test");
  controller.watch(informer, byName);
  /** Time passes as for a standby: its watch delivers nothing more while the server moves on. */
  const lagBehind = async (change: () => void) => {
    await flushMicrotasks();
    model.freezeWatches();
    change();
    await clock.advance(60_000);
  };
  return { clock, model, informer, controller, make, seen, lines, lagBehind };
};

describe("a controller acts on nothing until its caches caught up with a fresh list (SPEC §3.5, §7)", () => {
  it("started again (leadership acquired again), it hands out no key until each informer applied a list begun after the start", async () => {
    const { clock, model, informer, controller, seen, lines, lagBehind } = overLiveInformer();
    // First start while the informer syncs: its first list serves, and no second is made.
    const first = controller.start();
    informer.start();
    await first;
    await flushMicrotasks();
    expect(seen).toEqual(["a=1"]);
    expect(model.counters.lists).toBe(1);
    await controller.stop();

    await lagBehind(() => {
      model.put("a", { v: "2" });
      model.put("b", { v: "1" });
    });
    seen.length = 0;
    const release = model.holdLists();
    const again = controller.start();
    await clock.advance(1_000);
    controller.enqueue("a");
    await clock.advance(1_000);
    expect(seen).toEqual([]);
    expect(controller.isRunning()).toBe(true);
    release();
    await again;
    await flushMicrotasks();
    expect(seen.sort()).toEqual(["a=2", "b=1"]);
    expect(model.counters.lists).toBe(2);
    expect(lines.filter((l) => l.msg === "caught up with a fresh list").at(-1)).toMatchObject({
      informers: 1,
      objects: 2,
    });
    await controller.stop();
    await informer.stop();
  });

  it("started for the first time long after its informers synced, it waits for a fresh list too", async () => {
    const { model, informer, controller, seen, lagBehind } = overLiveInformer();
    informer.start();
    await informer.synced;
    await lagBehind(() => model.put("a", { v: "2" }));
    await controller.start();
    await flushMicrotasks();
    expect(seen).toEqual(["a=2"]);
    await controller.stop();
    await informer.stop();
  });

  it("controllers started together on leadership share one list of an informer they all watch", async () => {
    const { clock, model, informer, controller, make, seen, lagBehind } = overLiveInformer();
    const other = make("other");
    other.watch(informer, byName);
    other.watch(informer, byLabel("unused"));
    informer.start();
    await informer.synced;
    await lagBehind(() => model.put("a", { v: "2" }));
    const gate = leaderGatedControllers([controller, other], silentLogger());
    gate.onStartedLeading();
    await clock.advance(0);
    await flushMicrotasks();
    expect(seen).toEqual(["a=2", "a=2"]);
    expect(model.counters.lists).toBe(2);
    gate.onStoppedLeading();
    await gate.drained();
    await informer.stop();
  });

  it("does not start on a failed list: the informer backs off and lists again, and the controller starts on the list that succeeded", async () => {
    const { clock, model, informer, controller, seen, lagBehind } = overLiveInformer();
    informer.start();
    await informer.synced;
    await lagBehind(() => model.put("a", { v: "2" }));
    model.failLists = 2;
    const started = controller.start();
    await clock.advance(100);
    expect(model.counters.listFailures).toBe(1);
    expect(seen).toEqual([]);
    await clock.advance(5_000);
    await started;
    await flushMicrotasks();
    expect(model.counters.listFailures).toBe(2);
    expect(seen).toEqual(["a=2"]);
    await controller.stop();
    await informer.stop();
  });

  it("stopped while it waits (leadership lost again), its start ends without running; the next start waits for its own list", async () => {
    const { clock, model, informer, controller, seen, lagBehind } = overLiveInformer();
    informer.start();
    await informer.synced;
    await lagBehind(() => model.put("a", { v: "2" }));
    const release = model.holdLists();
    const first = controller.start();
    await clock.advance(1_000);
    await controller.stop();
    await first;
    expect(controller.isRunning()).toBe(false);
    model.put("a", { v: "3" });
    const second = controller.start();
    release();
    await second;
    await flushMicrotasks();
    expect(seen).toEqual(["a=3"]);
    expect(controller.isRunning()).toBe(true);
    await controller.stop();
    await informer.stop();
  });

  it("its informer stopped while it waits, the start fails and leaves the controller stopped", async () => {
    const { clock, model, informer, controller, seen, lagBehind } = overLiveInformer();
    informer.start();
    await informer.synced;
    await lagBehind(() => model.put("a", { v: "2" }));
    model.holdLists();
    const started = controller.start();
    await clock.advance(1_000);
    await informer.stop();
    await expect(started).rejects.toThrow(/stopped/);
    expect(controller.isRunning()).toBe(false);
    expect(seen).toEqual([]);
  });
});

describe("a key is never processed concurrently, across leadership changes (SPEC §7)", () => {
  /** A started controller whose one key's reconcile is running and blocked until released. */
  const startedOnOneBlockedKey = async () => {
    const r = blockedReconciles();
    const controller = createController({
      name: "t",
      clock: createManualClock(),
      logger: silentLogger(),
      reconcile: r.reconcile,
    });
    const informer = fakeInformer(KINDS.mapiMachine);
    informer.add(machine("m1"));
    controller.watch(informer, byName);
    await controller.start();
    await flushMicrotasks();
    return { controller, r };
  };

  /** A reconcile the test finishes by hand, counting how many run per key at once. */
  const blockedReconciles = () => {
    const releases: (() => void)[] = [];
    const running = new Map<string, number>();
    let maxSameKey = 0;
    const reconcile: Reconciler = async (key) => {
      running.set(key, (running.get(key) ?? 0) + 1);
      maxSameKey = Math.max(maxSameKey, running.get(key)!);
      await new Promise<void>((r) => releases.push(r));
      running.set(key, running.get(key)! - 1);
    };
    const inFlight = () => [...running.values()].reduce((a, b) => a + b, 0);
    return { reconcile, releases, inFlight, maxSameKey: () => maxSameKey };
  };

  it("leadership regained while the last reconciles still run starts no worker until they have returned, and drained() waits for every batch", async () => {
    const clock = createManualClock();
    const r = blockedReconciles();
    const controller = createController({
      name: "t",
      clock,
      logger: silentLogger(),
      workers: 2,
      reconcile: r.reconcile,
    });
    const informer = fakeInformer(KINDS.mapiMachine);
    informer.add(machine("m1"));
    controller.watch(informer, byName);
    const gate = leaderGatedControllers([controller], silentLogger());

    gate.onStartedLeading();
    await flushMicrotasks(10);
    expect(r.releases.length).toBe(1);
    gate.onStoppedLeading(); // the Lease lost: the first batch's reconcile of m1 is still running
    gate.onStartedLeading(); // and regained before it returns
    await flushMicrotasks(10);
    expect(r.maxSameKey()).toBe(1);
    expect(r.releases.length).toBe(1);

    let drained = false;
    void gate.drained().then(() => {
      drained = true;
    });
    await flushMicrotasks(10);
    expect(drained).toBe(false); // the first batch still runs

    r.releases[0]!();
    await flushMicrotasks(10);
    expect(r.releases.length).toBe(2); // the second batch starts only now
    expect(r.maxSameKey()).toBe(1);

    gate.onStoppedLeading();
    drained = false;
    void gate.drained().then(() => {
      drained = true;
    });
    await flushMicrotasks(10);
    expect(r.inFlight()).toBe(1);
    expect(drained).toBe(false); // the second batch's reconcile runs
    r.releases[1]!();
    await flushMicrotasks(10);
    expect(drained).toBe(true);
    expect(r.inFlight()).toBe(0);
  });

  it("a stop after a stop (no start between) still waits for the first batch's reconcile", async () => {
    const { controller, r } = await startedOnOneBlockedKey();
    expect(r.inFlight()).toBe(1);
    void controller.stop();
    let stopped = false;
    void controller.stop().then(() => {
      stopped = true;
    });
    await flushMicrotasks(10);
    expect(stopped).toBe(false);
    r.releases[0]!();
    await flushMicrotasks(10);
    expect(stopped).toBe(true);
  });

  it("started again and stopped again before the first batch returned, it never runs a worker beside it", async () => {
    const { controller, r } = await startedOnOneBlockedKey();
    const firstStop = controller.stop();
    const second = controller.start();
    await flushMicrotasks(10);
    expect(controller.isRunning()).toBe(true);
    let stopped = false;
    const secondStop = controller.stop().then(() => {
      stopped = true;
    });
    await flushMicrotasks(10);
    expect(stopped).toBe(false);
    r.releases[0]!();
    await flushMicrotasks(10);
    const handedOut = r.releases.length;
    for (const release of r.releases) release();
    await Promise.all([firstStop, second, secondStop]);
    expect(handedOut).toBe(1);
    expect(r.maxSameKey()).toBe(1);
  });
});

describe("key mappers", () => {
  const owned = machine("aws-1", "openshift-cluster-api", {
    labels: { "cluster.x-k8s.io/set-name": "set-a" },
    ownerReferences: [
      { apiVersion: "cluster.x-k8s.io/v1beta2", kind: "Machine", name: "m-1", uid: "u1" },
      { apiVersion: "v1", kind: "ConfigMap", name: "cm", uid: "u2" },
    ],
  });
  it.each([
    ["own object by name (twin across namespaces shares it)", byName, ["aws-1"]],
    ["owner reference of a kind", byOwner("Machine"), ["m-1"]],
    ["owner reference of a kind and apiVersion", byOwner("Machine", "machine.openshift.io/v1beta1"), []],
    ["label value", byLabel("cluster.x-k8s.io/set-name"), ["set-a"]],
    ["absent label", byLabel("nope"), []],
    ["any of several, deduplicated", anyOf(byName, byOwner("Machine"), byName), ["aws-1", "m-1"]],
  ] as const)("%s", (_title, mapper, expected) => {
    expect(mapper(owned)).toEqual(expected);
  });
});
