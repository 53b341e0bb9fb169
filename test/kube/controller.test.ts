/** The controller loop on a manual clock: outcomes (success, error with backoff, conflict, terminal, requeueAfter), workers, stop, and the key mappers. */
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
import { KINDS } from "../../src/kube/kinds.js";
import { runtimeMetrics } from "../../src/kube/metrics.js";
import type { KubeObject } from "../../src/kube/object.js";
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
