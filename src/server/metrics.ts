/**
 * The admission server's metrics, registered on the registry the caller passes (never prom-client's global
 * one, so tests and several servers in one process never collide): the product's own decisions (SPEC §2.1,
 * `machine_api_migration_admission_requests_total{webhook,kind,operation,allowed,rule}` and
 * `machine_api_migration_admission_duration_seconds{webhook}`) and controller-runtime's webhook series
 * (SPEC §7, `controller_runtime_webhook_requests_total{webhook,code}`,
 * `controller_runtime_webhook_requests_in_flight{webhook}`, `controller_runtime_webhook_latency_seconds{webhook}`,
 * `webhook` being the path called, as controller-runtime labels it: `/validate-warn` has series of its own though
 * `-guard` decides it). The hot path only bumps plain numbers; the
 * Prometheus series are built when the metrics listener (./metrics-server.ts) is scraped.
 */
import type { Registry } from "prom-client";
import { KINDS } from "../kube/kinds.js";
import type { AdmissionRequest, Decision, WebhookName } from "../policies/types.js";

/** Sub-millisecond resolution where decisions live, up to kube's 10 s default timeout. */
const DURATION_BUCKETS_SECONDS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5, 10,
];

const WEBHOOKS: readonly WebhookName[] = ["validate", "validate-guard", "mutate"];

/** The product's own series carry its prefix (SPEC §2.1, §3.4, §7). */
const ADMISSION_METRIC_NAMES = Object.freeze({
  requests: "machine_api_migration_admission_requests_total",
  duration: "machine_api_migration_admission_duration_seconds",
  webhookRequests: "controller_runtime_webhook_requests_total",
  webhookInFlight: "controller_runtime_webhook_requests_in_flight",
  webhookLatency: "controller_runtime_webhook_latency_seconds",
});

/** Prometheus's default buckets, which controller-runtime's webhook latency histogram uses. */
const WEBHOOK_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Kinds are labelled `Kind.group` (`Machine.machine.openshift.io`) because MAPI and CAPI share kind names.
 * Anything outside the product's kinds is labelled `other`, so a client posting made-up kinds to /validate
 * cannot grow the series without bound.
 */
const KNOWN_KIND_LABELS: ReadonlySet<string> = new Set([
  ...Object.values(KINDS).map((t) => (t.group ? `${t.kind}.${t.group}` : t.kind)),
  "Scale.autoscaling",
]);
const OPERATIONS: ReadonlySet<string> = new Set(["CREATE", "UPDATE", "DELETE", "CONNECT"]);

const kindLabelOf = (request: Pick<AdmissionRequest, "kind">): string => {
  const label = request.kind.group ? `${request.kind.kind}.${request.kind.group}` : request.kind.kind;
  return KNOWN_KIND_LABELS.has(label) ? label : "other";
};

export interface AdmissionMetrics {
  /** Counts one answered review and its duration. */
  record(webhook: WebhookName, request: AdmissionRequest, decision: Decision, seconds: number): void;
  /** An HTTP request to an admission path arrived (controller-runtime's in-flight gauge). */
  requestStarted(path: string): void;
  /**
   * That request ended after `seconds`: answered with HTTP `code`, or (undefined) the connection closed before
   * an answer was sent, which leaves the in-flight gauge without counting a code.
   */
  requestFinished(path: string, code: number | undefined, seconds: number): void;
}

type Labels = Record<string, string>;

interface HistogramSeries {
  counts: number[];
  sum: number;
  count: number;
}
const newHistogramSeries = (buckets: readonly number[]): HistogramSeries => ({
  counts: new Array<number>(buckets.length).fill(0),
  sum: 0,
  count: 0,
});
const observe = (series: HistogramSeries, buckets: readonly number[], value: number): void => {
  series.count++;
  series.sum += value;
  // Counted in the first bucket that holds it; the scrape accumulates. Above the last bucket only +Inf counts.
  for (let i = 0; i < buckets.length; i++) {
    if (value <= buckets[i]!) {
      series.counts[i]!++;
      break;
    }
  }
};
interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/**
 * A metric in the shape prom-client's Registry reads (`name`, `help`, `type`, `get()`), computed from plain
 * numbers at scrape time. prom-client's own Counter/Histogram hash the label set on every call (≈10 µs per
 * histogram observation, more than the whole decision), which the admission hot path cannot afford.
 */
interface ScrapedMetric {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  aggregator: "sum";
  get(): Promise<{ name: string; help: string; type: string; values: MetricValue[]; aggregator: "sum" }>;
  reset(): void;
}

const register = (registry: Registry, metric: ScrapedMetric): void =>
  // The registry only calls get(), reset() and reads name/help/type/aggregator, all of which this provides.
  registry.registerMetric(metric as unknown as Parameters<Registry["registerMetric"]>[0]);

/** A counter or gauge whose series are `values` (label set → number) at scrape time. */
const scrapedValues = (
  name: string,
  help: string,
  type: "counter" | "gauge",
  values: Map<string, MetricValue>,
  reset: () => void,
): ScrapedMetric => ({
  name,
  help,
  type,
  aggregator: "sum",
  get: async () => ({
    name,
    help,
    type,
    aggregator: "sum",
    values: [...values.values()].map((v) => ({ labels: { ...v.labels }, value: v.value })),
  }),
  reset,
});

/** A histogram whose series are `series` (label set → buckets, sum, count) at scrape time. */
const scrapedHistogram = (
  name: string,
  help: string,
  buckets: readonly number[],
  series: Map<string, { labels: Labels; series: HistogramSeries }>,
  reset: () => void,
): ScrapedMetric => ({
  name,
  help,
  type: "histogram",
  aggregator: "sum",
  get: async () => {
    const values: MetricValue[] = [];
    for (const { labels, series: s } of series.values()) {
      let cumulative = 0;
      buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({
          metricName: `${name}_bucket`,
          labels: { le: String(le), ...labels },
          value: cumulative,
        });
      });
      values.push({ metricName: `${name}_bucket`, labels: { le: "+Inf", ...labels }, value: s.count });
      values.push({ metricName: `${name}_sum`, labels: { ...labels }, value: s.sum });
      values.push({ metricName: `${name}_count`, labels: { ...labels }, value: s.count });
    }
    return { name, help, type: "histogram", aggregator: "sum", values };
  },
  reset,
});

/** One histogram series per key (a webhook or a path), all present from the start. */
const perWebhook = (keys: readonly string[], buckets: readonly number[]) =>
  new Map(keys.map((key) => [key, { labels: { webhook: key }, series: newHistogramSeries(buckets) }]));

const increment = (values: Map<string, MetricValue>, key: string, labels: () => Labels, by = 1): void => {
  const counted = values.get(key);
  if (counted === undefined) values.set(key, { labels: labels(), value: by });
  else counted.value += by;
};

/**
 * `paths`: the admission paths served (app.ts), whose controller-runtime series exist from the start; a path
 * outside them is not counted there.
 */
export function createAdmissionMetrics(registry: Registry, paths: readonly string[]): AdmissionMetrics {
  const N = ADMISSION_METRIC_NAMES;
  const requestCounts = new Map<string, MetricValue>();
  const durations = perWebhook(WEBHOOKS, DURATION_BUCKETS_SECONDS);
  const webhookRequests = new Map<string, MetricValue>();
  const inFlight = new Map<string, MetricValue>();
  const resetInFlight = () => {
    for (const path of paths) inFlight.set(path, { labels: { webhook: path }, value: 0 });
  };
  resetInFlight();
  const latencies = perWebhook(paths, WEBHOOK_LATENCY_BUCKETS);

  register(
    registry,
    scrapedValues(
      N.requests,
      "Admission reviews answered, by webhook, object kind, operation, verdict and deciding rule.",
      "counter",
      requestCounts,
      () => requestCounts.clear(),
    ),
  );
  register(
    registry,
    scrapedHistogram(
      N.duration,
      "Time spent decoding and deciding one admission review, by webhook.",
      DURATION_BUCKETS_SECONDS,
      durations,
      () => {
        for (const entry of durations.values()) entry.series = newHistogramSeries(DURATION_BUCKETS_SECONDS);
      },
    ),
  );
  register(
    registry,
    scrapedValues(
      N.webhookRequests,
      "Total number of admission requests by HTTP status code.",
      "counter",
      webhookRequests,
      () => webhookRequests.clear(),
    ),
  );
  register(
    registry,
    scrapedValues(
      N.webhookInFlight,
      "Current number of admission requests being served.",
      "gauge",
      inFlight,
      resetInFlight,
    ),
  );
  register(
    registry,
    scrapedHistogram(
      N.webhookLatency,
      "Histogram of the latency of processing admission requests",
      WEBHOOK_LATENCY_BUCKETS,
      latencies,
      () => {
        for (const entry of latencies.values()) entry.series = newHistogramSeries(WEBHOOK_LATENCY_BUCKETS);
      },
    ),
  );

  return {
    record(webhook, request, decision, seconds) {
      const kind = kindLabelOf(request);
      const operation = OPERATIONS.has(request.operation) ? request.operation : "other";
      const allowed = decision.allowed ? "true" : "false";
      const key = `${webhook}\u0000${kind}\u0000${operation}\u0000${allowed}\u0000${decision.rule}`;
      increment(requestCounts, key, () => ({ webhook, kind, operation, allowed, rule: decision.rule }));
      const entry = durations.get(webhook);
      if (entry) observe(entry.series, DURATION_BUCKETS_SECONDS, seconds);
    },
    requestStarted(path) {
      const gauge = inFlight.get(path);
      if (gauge) gauge.value++;
    },
    requestFinished(path, code, seconds) {
      const gauge = inFlight.get(path);
      if (gauge === undefined) return;
      gauge.value--;
      if (code === undefined) return;
      const entry = latencies.get(path);
      if (entry) observe(entry.series, WEBHOOK_LATENCY_BUCKETS, seconds);
      increment(webhookRequests, `${path}\u0000${code}`, () => ({ webhook: path, code: String(code) }));
    },
  };
}
