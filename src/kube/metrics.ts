/**
 * The runtime's Prometheus metrics (SPEC §7) under controller-runtime's and client-go's names and labels, so
 * the dashboards and alerts written for every other OpenShift controller read this one too: reconciles,
 * workers, the work queue, leader election and REST client requests. They are registered on a Registry the
 * caller passes in — never the global one — so every test and every process composes its own; asking twice
 * for the same registry returns the metrics already registered there, so several controllers share one set
 * of series. The work queue's in-progress gauges are computed at scrape time from the queues' own records
 * (client-go updates them on a timer). The product's own metrics live with what they count
 * (src/server/metrics.ts, src/migration/metrics.ts) under the `machine_api_migration_` prefix.
 */
import type { Registry } from "prom-client";
import { Counter, Gauge, Histogram } from "prom-client";
import type { Clock } from "./clock.js";

export const RUNTIME_METRIC_NAMES = Object.freeze({
  reconcileTotal: "controller_runtime_reconcile_total",
  reconcileErrors: "controller_runtime_reconcile_errors_total",
  terminalReconcileErrors: "controller_runtime_terminal_reconcile_errors_total",
  reconcileTime: "controller_runtime_reconcile_time_seconds",
  activeWorkers: "controller_runtime_active_workers",
  maxConcurrentReconciles: "controller_runtime_max_concurrent_reconciles",
  workqueueDepth: "workqueue_depth",
  workqueueAdds: "workqueue_adds_total",
  workqueueQueueDuration: "workqueue_queue_duration_seconds",
  workqueueWorkDuration: "workqueue_work_duration_seconds",
  workqueueUnfinishedWork: "workqueue_unfinished_work_seconds",
  workqueueLongestRunningProcessor: "workqueue_longest_running_processor_seconds",
  workqueueRetries: "workqueue_retries_total",
  leaderElectionMasterStatus: "leader_election_master_status",
  restClientRequests: "rest_client_requests_total",
});

type QueueLabels = "name" | "controller";

/** When each key now being processed started (ms on the queue's clock), and that clock's time now. */
type InProgress = () => { now: number; startedAt: Iterable<number> };

export interface RuntimeMetrics {
  /** `result`: success, error, requeue_after (controller-runtime's values; a terminal error is an error). */
  reconcileTotal: Counter<"controller" | "result">;
  reconcileErrors: Counter<"controller">;
  terminalReconcileErrors: Counter<"controller">;
  reconcileTime: Histogram<"controller">;
  activeWorkers: Gauge<"controller">;
  maxConcurrentReconciles: Gauge<"controller">;
  workqueueDepth: Gauge<QueueLabels>;
  workqueueAdds: Counter<QueueLabels>;
  workqueueQueueDuration: Histogram<QueueLabels>;
  workqueueWorkDuration: Histogram<QueueLabels>;
  workqueueRetries: Counter<QueueLabels>;
  leaderElectionMasterStatus: Gauge<"name">;
  restClientRequests: Counter<"code" | "method" | "host">;
  /**
   * Reports one queue's in-progress work in `workqueue_unfinished_work_seconds` and
   * `workqueue_longest_running_processor_seconds`, replacing an earlier source of that name; the returned
   * function removes it (and only it).
   */
  addInProgressSource(name: string, source: InProgress): () => void;
}

/** controller-runtime's reconcile-time buckets. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's work queue buckets: ExponentialBuckets(10e-9, 10, 12), 10 ns to 1000 s. */
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/**
 * The two in-progress gauges, fed at scrape time by the queues' sources. The sources live on the gauge
 * (not in module state) so a second `runtimeMetrics(registry)` finds them through the registry.
 */
class InProgressGauge extends Gauge<QueueLabels> {
  readonly sources = new Map<string, InProgress>();
}

const inProgressGauge = (
  registry: Registry,
  name: string,
  help: string,
  reduce: (ages: number[]) => number,
): InProgressGauge => {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof InProgressGauge) return existing;
  if (existing) throw new Error(`metric ${name} is already registered by something else`);
  return new InProgressGauge({
    name,
    help,
    labelNames: ["name", "controller"] as const,
    registers: [registry],
    collect(this: Gauge<QueueLabels>) {
      this.reset();
      for (const [queue, source] of (this as InProgressGauge).sources) {
        const { now, startedAt } = source();
        const ages = [...startedAt].map((t) => Math.max(0, now - t) / 1000);
        this.set({ name: queue, controller: queue }, reduce(ages));
      }
    },
  });
};

const reuse = <T>(registry: Registry, name: string, make: () => T): T =>
  (registry.getSingleMetric(name) as T | undefined) ?? make();

export function runtimeMetrics(registry: Registry): RuntimeMetrics {
  const registers = [registry];
  const N = RUNTIME_METRIC_NAMES;
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    reuse(registry, name, () => new Counter<L>({ name, help, labelNames, registers }));
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    reuse(registry, name, () => new Gauge<L>({ name, help, labelNames, registers }));
  const histogram = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ) => reuse(registry, name, () => new Histogram<L>({ name, help, labelNames, buckets, registers }));
  const queue = ["name", "controller"] as const;

  const unfinished = inProgressGauge(
    registry,
    N.workqueueUnfinishedWork,
    "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads.",
    (ages) => ages.reduce((sum, age) => sum + age, 0),
  );
  const longest = inProgressGauge(
    registry,
    N.workqueueLongestRunningProcessor,
    "How many seconds has the longest running processor for workqueue been running.",
    (ages) => ages.reduce((max, age) => Math.max(max, age), 0),
  );

  return {
    reconcileTotal: counter(N.reconcileTotal, "Total number of reconciliations per controller", [
      "controller",
      "result",
    ]),
    reconcileErrors: counter(N.reconcileErrors, "Total number of reconciliation errors per controller", [
      "controller",
    ]),
    terminalReconcileErrors: counter(
      N.terminalReconcileErrors,
      "Total number of terminal reconciliation errors per controller",
      ["controller"],
    ),
    reconcileTime: histogram(
      N.reconcileTime,
      "Length of time per reconciliation per controller",
      ["controller"],
      RECONCILE_BUCKETS,
    ),
    activeWorkers: gauge(N.activeWorkers, "Number of currently used workers per controller", ["controller"]),
    maxConcurrentReconciles: gauge(
      N.maxConcurrentReconciles,
      "Maximum number of concurrent reconciles per controller",
      ["controller"],
    ),
    workqueueDepth: gauge(N.workqueueDepth, "Current depth of workqueue", queue),
    workqueueAdds: counter(N.workqueueAdds, "Total number of adds handled by workqueue", queue),
    workqueueQueueDuration: histogram(
      N.workqueueQueueDuration,
      "How long in seconds an item stays in workqueue before being requested",
      queue,
      QUEUE_BUCKETS,
    ),
    workqueueWorkDuration: histogram(
      N.workqueueWorkDuration,
      "How long in seconds processing an item from workqueue takes.",
      queue,
      QUEUE_BUCKETS,
    ),
    workqueueRetries: counter(N.workqueueRetries, "Total number of retries handled by workqueue", queue),
    leaderElectionMasterStatus: gauge(
      N.leaderElectionMasterStatus,
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
      ["name"],
    ),
    restClientRequests: counter(
      N.restClientRequests,
      "Number of HTTP requests, partitioned by status code, method, and host.",
      ["code", "method", "host"],
    ),
    addInProgressSource(name, source) {
      unfinished.sources.set(name, source);
      longest.sources.set(name, source);
      return () => {
        for (const gauge of [unfinished, longest])
          if (gauge.sources.get(name) === source) gauge.sources.delete(name);
      };
    },
  };
}

/** What a work queue reports, in client-go's terms; a no-op without metrics. */
export interface QueueMetrics {
  /** A key became waiting (not a duplicate of a waiting key); `depth` is the number waiting now. */
  added(key: string, depth: number): void;
  /** A key was handed to a worker; `depth` is the number still waiting. */
  started(key: string, depth: number): void;
  /** A worker finished a key. */
  finished(key: string): void;
  retried(): void;
  /** The queue shut down: its in-progress work is no longer reported. */
  close(): void;
}

const NO_QUEUE_METRICS: QueueMetrics = {
  added: () => {},
  started: () => {},
  finished: () => {},
  retried: () => {},
  close: () => {},
};

/**
 * The metrics of the work queue `name` (labelled name=controller=`name`, as controller-runtime does), timed
 * on the queue's clock: queue duration from the first add of a waiting key to its hand-out, work duration
 * from hand-out to done.
 */
export function queueMetrics(metrics: RuntimeMetrics | undefined, name: string, clock: Clock): QueueMetrics {
  if (!metrics) return NO_QUEUE_METRICS;
  const labels = { name, controller: name };
  const addedAt = new Map<string, number>();
  const startedAt = new Map<string, number>();
  const removeSource = metrics.addInProgressSource(name, () => ({
    now: clock.now(),
    startedAt: startedAt.values(),
  }));
  metrics.workqueueDepth.set(labels, 0);
  return {
    added(key, depth) {
      metrics.workqueueAdds.inc(labels);
      metrics.workqueueDepth.set(labels, depth);
      if (!addedAt.has(key)) addedAt.set(key, clock.now());
    },
    started(key, depth) {
      const now = clock.now();
      metrics.workqueueDepth.set(labels, depth);
      const added = addedAt.get(key);
      addedAt.delete(key);
      metrics.workqueueQueueDuration.observe(
        labels,
        added === undefined ? 0 : Math.max(0, now - added) / 1000,
      );
      startedAt.set(key, now);
    },
    finished(key) {
      const started = startedAt.get(key);
      startedAt.delete(key);
      if (started !== undefined)
        metrics.workqueueWorkDuration.observe(labels, Math.max(0, clock.now() - started) / 1000);
    },
    retried: () => metrics.workqueueRetries.inc(labels),
    close: removeSource,
  };
}

/** What the transport reports of each request it made: `code` is the HTTP status, or `<error>` without one. */
export interface RestClientResponse {
  method: string;
  code: string;
  host: string;
  /** The answer's `Date` header, when it had one: the API server's clock (cluster-clock.ts). */
  date?: string;
}

/** Counts each request in `rest_client_requests_total{code,method,host}`, as client-go's REST client does. */
export const countRestClientRequests =
  (metrics: RuntimeMetrics) =>
  (response: RestClientResponse): void =>
    metrics.restClientRequests.inc({ code: response.code, method: response.method, host: response.host });
