/**
 * The runtime's Prometheus metrics (SPEC §7), registered on a Registry the caller passes in — never the
 * global one — so every test and every process composes its own. Asking twice for the same registry
 * returns the metrics already registered there, so several controllers share one set of series.
 */
import type { Registry } from "prom-client";
import { Counter, Gauge, Histogram } from "prom-client";

export interface RuntimeMetrics {
  reconcileTotal: Counter<"controller" | "result">;
  reconcileDuration: Histogram<"controller">;
  workqueueDepth: Gauge<"name">;
  workqueueRetries: Counter<"name">;
  leader: Gauge<"lease">;
}

const reuse = <T>(registry: Registry, name: string, make: () => T): T =>
  (registry.getSingleMetric(name) as T | undefined) ?? make();

export function runtimeMetrics(registry: Registry): RuntimeMetrics {
  const registers = [registry];
  return {
    reconcileTotal: reuse(
      registry,
      "reconcile_total",
      () =>
        new Counter({
          name: "reconcile_total",
          help: "Reconciliations by controller and result (success, error, requeue_after, terminal_error).",
          labelNames: ["controller", "result"] as const,
          registers,
        }),
    ),
    reconcileDuration: reuse(
      registry,
      "reconcile_duration_seconds",
      () =>
        new Histogram({
          name: "reconcile_duration_seconds",
          help: "Time spent in one reconcile call.",
          labelNames: ["controller"] as const,
          buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers,
        }),
    ),
    workqueueDepth: reuse(
      registry,
      "workqueue_depth",
      () =>
        new Gauge({
          name: "workqueue_depth",
          help: "Keys waiting in a work queue (not counting delayed ones).",
          labelNames: ["name"] as const,
          registers,
        }),
    ),
    workqueueRetries: reuse(
      registry,
      "workqueue_retries_total",
      () =>
        new Counter({
          name: "workqueue_retries_total",
          help: "Keys re-queued with backoff after a failed reconcile.",
          labelNames: ["name"] as const,
          registers,
        }),
    ),
    leader: reuse(
      registry,
      "leader",
      () =>
        new Gauge({
          name: "leader",
          help: "1 while this replica holds the leader-election Lease.",
          labelNames: ["lease"] as const,
          registers,
        }),
    ),
  };
}
