/**
 * SPEC §7: the runtime's metrics carry controller-runtime's (and client-go's) names and labels, so the
 * dashboards and alerts written for every other OpenShift controller see this one: reconcile counts, errors
 * and time, active and maximum workers, the work queue's depth, adds, latency, work duration, unfinished work
 * and retries, leader election status, and REST client requests by code, method and host. Everything on a
 * manual clock, against the real work queue, controller loop and HTTP transport.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createManualClock, flushMicrotasks } from "../../src/kube/clock.js";
import { createController } from "../../src/kube/controller.js";
import { countRestClientRequests, RUNTIME_METRIC_NAMES, runtimeMetrics } from "../../src/kube/metrics.js";
import { kubeConfigTransport } from "../../src/kube/transport.js";
import { createWorkQueue } from "../../src/kube/workqueue.js";
import { silentLogger } from "./fakes.js";

/** The value of one series, or undefined when it does not exist. */
const seriesValue = async (registry: Registry, name: string, labels: Record<string, string>) => {
  const base = name.replace(/_(bucket|sum|count)$/, "");
  const metric = await registry.getSingleMetric(base)?.get();
  return metric?.values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? base) === name &&
      Object.entries(labels).every(
        ([k, value]) => String((v.labels as Record<string, unknown>)[k]) === value,
      ),
  )?.value;
};

describe("controller-runtime's names and labels (SPEC §7)", () => {
  it.each([
    ["controller_runtime_reconcile_total", "counter", ["controller", "result"]],
    ["controller_runtime_reconcile_errors_total", "counter", ["controller"]],
    ["controller_runtime_terminal_reconcile_errors_total", "counter", ["controller"]],
    ["controller_runtime_reconcile_time_seconds", "histogram", ["controller"]],
    ["controller_runtime_active_workers", "gauge", ["controller"]],
    ["controller_runtime_max_concurrent_reconciles", "gauge", ["controller"]],
    ["workqueue_depth", "gauge", ["name", "controller"]],
    ["workqueue_adds_total", "counter", ["name", "controller"]],
    ["workqueue_queue_duration_seconds", "histogram", ["name", "controller"]],
    ["workqueue_work_duration_seconds", "histogram", ["name", "controller"]],
    ["workqueue_unfinished_work_seconds", "gauge", ["name", "controller"]],
    ["workqueue_longest_running_processor_seconds", "gauge", ["name", "controller"]],
    ["workqueue_retries_total", "counter", ["name", "controller"]],
    ["leader_election_master_status", "gauge", ["name"]],
    ["rest_client_requests_total", "counter", ["code", "method", "host"]],
  ] as const)("%s is a %s labelled %j", async (name, type, labels) => {
    const registry = new Registry();
    runtimeMetrics(registry);
    const metric = registry.getSingleMetric(name);
    expect(metric, name).toBeDefined();
    expect((await metric!.get()).type).toBe(type);
    const labelNames = (metric as unknown as { labelNames?: string[] }).labelNames ?? [];
    expect([...labelNames].sort()).toEqual([...labels].sort());
    expect(Object.values(RUNTIME_METRIC_NAMES)).toContain(name);
  });

  it("no runtime series keeps the old unprefixed names", async () => {
    const registry = new Registry();
    runtimeMetrics(registry);
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    for (const old of ["reconcile_total", "reconcile_duration_seconds", "leader"])
      expect(names).not.toContain(old);
  });

  it("asking twice for one registry returns the same metrics (several controllers share them)", () => {
    const registry = new Registry();
    const a = runtimeMetrics(registry);
    const b = runtimeMetrics(registry);
    expect(b.reconcileTotal).toBe(a.reconcileTotal);
    expect(b.activeWorkers).toBe(a.activeWorkers);
  });
});

describe("work queue metrics (client-go's semantics)", () => {
  const setup = () => {
    const clock = createManualClock();
    const registry = new Registry();
    const queue = createWorkQueue({ name: "machine-sync", clock, metrics: runtimeMetrics(registry) });
    const labels = { name: "machine-sync", controller: "machine-sync" };
    return { clock, registry, queue, labels };
  };

  it("workqueue_adds_total counts adds that queued a key; a duplicate of a waiting key is not an add", async () => {
    const { registry, queue, labels } = setup();
    queue.add("a");
    queue.add("a");
    queue.add("b");
    expect(await seriesValue(registry, "workqueue_adds_total", labels)).toBe(2);
    const a = await queue.get();
    queue.add("a"); // waiting again while processed: an add
    queue.done(a!);
    expect(await seriesValue(registry, "workqueue_adds_total", labels)).toBe(3);
  });

  it("workqueue_queue_duration_seconds is the time from add to get; workqueue_work_duration_seconds from get to done", async () => {
    const { clock, registry, queue, labels } = setup();
    queue.add("a");
    await clock.advance(250);
    const a = await queue.get();
    await clock.advance(1_500);
    queue.done(a!);
    expect(await seriesValue(registry, "workqueue_queue_duration_seconds_sum", labels)).toBeCloseTo(0.25);
    expect(await seriesValue(registry, "workqueue_queue_duration_seconds_count", labels)).toBe(1);
    expect(await seriesValue(registry, "workqueue_work_duration_seconds_sum", labels)).toBeCloseTo(1.5);
    expect(await seriesValue(registry, "workqueue_work_duration_seconds_count", labels)).toBe(1);
  });

  it("a key handed straight to a waiting worker spent no time in the queue", async () => {
    const { registry, queue, labels } = setup();
    const waiting = queue.get();
    queue.add("a");
    queue.done((await waiting)!);
    expect(await seriesValue(registry, "workqueue_queue_duration_seconds_sum", labels)).toBe(0);
    expect(await seriesValue(registry, "workqueue_queue_duration_seconds_count", labels)).toBe(1);
  });

  it("unfinished work and the longest running processor are read at scrape time from the keys in progress", async () => {
    const { clock, registry, queue, labels } = setup();
    queue.add("a");
    queue.add("b");
    const a = await queue.get();
    await clock.advance(3_000);
    const b = await queue.get();
    await clock.advance(1_000);
    expect(await seriesValue(registry, "workqueue_unfinished_work_seconds", labels)).toBeCloseTo(5);
    expect(await seriesValue(registry, "workqueue_longest_running_processor_seconds", labels)).toBeCloseTo(4);
    queue.done(a!);
    queue.done(b!);
    expect(await seriesValue(registry, "workqueue_unfinished_work_seconds", labels)).toBe(0);
    expect(await seriesValue(registry, "workqueue_longest_running_processor_seconds", labels)).toBe(0);
  });

  it("a queue that is shut down stops reporting its in-progress work (a new one comes with the next start)", async () => {
    const { clock, registry, queue, labels } = setup();
    queue.add("a");
    await queue.get();
    await clock.advance(1_000);
    queue.shutdown();
    expect(await seriesValue(registry, "workqueue_unfinished_work_seconds", labels)).toBeUndefined();
  });
});

describe("controller metrics", () => {
  it("active workers while reconciling, the configured maximum, reconcile time and errors", async () => {
    const clock = createManualClock();
    const registry = new Registry();
    const releases: (() => void)[] = [];
    let failNext = false;
    const controller = createController({
      name: "migration-machine",
      clock,
      logger: silentLogger(),
      metrics: runtimeMetrics(registry),
      workers: 4,
      reconcile: async () => {
        await new Promise<void>((resolve) => releases.push(resolve));
        if (failNext) {
          failNext = false;
          throw new Error("boom");
        }
      },
    });
    const labels = { controller: "migration-machine" };
    await controller.start();
    expect(await seriesValue(registry, "controller_runtime_max_concurrent_reconciles", labels)).toBe(4);
    expect(await seriesValue(registry, "controller_runtime_active_workers", labels)).toBe(0);
    controller.enqueue("a");
    controller.enqueue("b");
    await flushMicrotasks();
    expect(await seriesValue(registry, "controller_runtime_active_workers", labels)).toBe(2);
    await clock.advance(120);
    failNext = true;
    for (const release of releases.splice(0)) release();
    await flushMicrotasks(20);
    expect(await seriesValue(registry, "controller_runtime_active_workers", labels)).toBe(0);
    expect(await seriesValue(registry, "controller_runtime_reconcile_errors_total", labels)).toBe(1);
    expect(
      await seriesValue(registry, "controller_runtime_reconcile_total", { ...labels, result: "success" }),
    ).toBe(1);
    expect(await seriesValue(registry, "controller_runtime_reconcile_time_seconds_count", labels)).toBe(2);
    expect(await seriesValue(registry, "controller_runtime_reconcile_time_seconds_sum", labels)).toBeCloseTo(
      0.24,
    );
    await controller.stop();
  });
});

describe("rest_client_requests_total (client-go's REST client metric)", () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  const apiServer = async (answer: (req: http.IncomingMessage) => number) => {
    const server = http.createServer((req, res) => {
      const code = answer(req);
      res.writeHead(code, { "Content-Type": "application/json" });
      res.end(JSON.stringify(code < 300 ? { kind: "ConfigMap" } : { kind: "Status", code }));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return `127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const kubeConfigFor = (host: string) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: `http://${host}`, skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "ctx", cluster: "c", user: "u" }],
      currentContext: "ctx",
    });
    return kc;
  };

  it("counts every answer by its status code, method and host, and a request with no answer as <error>", async () => {
    const host = await apiServer((req) =>
      req.method === "POST" ? 201 : req.url?.includes("missing") ? 404 : 200,
    );
    const registry = new Registry();
    const transport = kubeConfigTransport(kubeConfigFor(host), {
      onResponse: countRestClientRequests(runtimeMetrics(registry)),
    });
    await transport.request({ method: "GET", path: "/api/v1/namespaces/a/configmaps/x" });
    await transport.request({ method: "GET", path: "/api/v1/namespaces/a/configmaps/x" });
    await transport.request({ method: "POST", path: "/api/v1/namespaces/a/configmaps", body: {} });
    await transport
      .request({ method: "GET", path: "/api/v1/namespaces/a/configmaps/missing" })
      .catch(() => {});
    const stream = await transport.stream({
      method: "GET",
      path: "/api/v1/configmaps",
      query: { watch: true },
    });
    stream.close();
    const count = (code: string, method: string) =>
      seriesValue(registry, "rest_client_requests_total", { code, method, host });
    expect(await count("200", "GET")).toBe(3);
    expect(await count("201", "POST")).toBe(1);
    expect(await count("404", "GET")).toBe(1);

    const unreachable = kubeConfigTransport(kubeConfigFor("127.0.0.1:1"), {
      onResponse: countRestClientRequests(runtimeMetrics(registry)),
    });
    await expect(unreachable.request({ method: "GET", path: "/api" })).rejects.toThrow();
    expect(
      await seriesValue(registry, "rest_client_requests_total", {
        code: "<error>",
        method: "GET",
        host: "127.0.0.1:1",
      }),
    ).toBe(1);
  });
});
