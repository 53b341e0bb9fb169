/**
 * Admission metrics of SPEC §2.1: `admission_requests_total{webhook,kind,operation,allowed,rule}` and
 * `admission_duration_seconds{webhook}`, registered on the registry the caller passes (never prom-client's
 * global one, so tests and several servers in one process never collide). The hot path only bumps plain
 * numbers; the Prometheus series are built when /metrics is scraped.
 */
import type { Registry } from "prom-client";
import { KINDS } from "../kube/kinds.js";
import type { AdmissionRequest, Decision, WebhookName } from "../policies/types.js";

/** Sub-millisecond resolution where decisions live, up to kube's 10 s default timeout. */
export const DURATION_BUCKETS_SECONDS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5, 10,
];

const WEBHOOKS: readonly WebhookName[] = ["validate", "validate-warn", "mutate"];

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

export const kindLabelOf = (request: Pick<AdmissionRequest, "kind">): string => {
  const label = request.kind.group ? `${request.kind.kind}.${request.kind.group}` : request.kind.kind;
  return KNOWN_KIND_LABELS.has(label) ? label : "other";
};

export interface AdmissionMetrics {
  /** Counts one answered review and its duration. */
  record(webhook: WebhookName, request: AdmissionRequest, decision: Decision, seconds: number): void;
}

type Labels = Record<string, string>;
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
  type: "counter" | "histogram";
  aggregator: "sum";
  get(): Promise<{ name: string; help: string; type: string; values: MetricValue[]; aggregator: "sum" }>;
  reset(): void;
}

const register = (registry: Registry, metric: ScrapedMetric): void =>
  // The registry only calls get(), reset() and reads name/help/type/aggregator, all of which this provides.
  registry.registerMetric(metric as unknown as Parameters<Registry["registerMetric"]>[0]);

export function createAdmissionMetrics(registry: Registry): AdmissionMetrics {
  const requestCounts = new Map<string, MetricValue>();
  const requests: ScrapedMetric = {
    name: "admission_requests_total",
    help: "Admission reviews answered, by webhook, object kind, operation, verdict and deciding rule.",
    type: "counter",
    aggregator: "sum",
    get: async () => ({
      name: requests.name,
      help: requests.help,
      type: requests.type,
      aggregator: "sum",
      values: [...requestCounts.values()].map((v) => ({ labels: { ...v.labels }, value: v.value })),
    }),
    reset: () => requestCounts.clear(),
  };

  const buckets = DURATION_BUCKETS_SECONDS;
  const newSeries = () => ({ counts: new Array<number>(buckets.length).fill(0), sum: 0, count: 0 });
  const durations = new Map(WEBHOOKS.map((w) => [w, newSeries()]));
  const duration: ScrapedMetric = {
    name: "admission_duration_seconds",
    help: "Time spent decoding and deciding one admission review, by webhook.",
    type: "histogram",
    aggregator: "sum",
    get: async () => {
      const values: MetricValue[] = [];
      for (const [webhook, series] of durations) {
        let cumulative = 0;
        buckets.forEach((le, i) => {
          cumulative += series.counts[i]!;
          values.push({
            metricName: `${duration.name}_bucket`,
            labels: { le: String(le), webhook },
            value: cumulative,
          });
        });
        values.push({
          metricName: `${duration.name}_bucket`,
          labels: { le: "+Inf", webhook },
          value: series.count,
        });
        values.push({ metricName: `${duration.name}_sum`, labels: { webhook }, value: series.sum });
        values.push({ metricName: `${duration.name}_count`, labels: { webhook }, value: series.count });
      }
      return { name: duration.name, help: duration.help, type: duration.type, aggregator: "sum", values };
    },
    reset: () => {
      for (const webhook of WEBHOOKS) durations.set(webhook, newSeries());
    },
  };
  register(registry, requests);
  register(registry, duration);

  return {
    record(webhook, request, decision, seconds) {
      const kind = kindLabelOf(request);
      const operation = OPERATIONS.has(request.operation) ? request.operation : "other";
      const allowed = decision.allowed ? "true" : "false";
      const key = `${webhook}\u0000${kind}\u0000${operation}\u0000${allowed}\u0000${decision.rule}`;
      const counted = requestCounts.get(key);
      if (counted === undefined) {
        requestCounts.set(key, {
          labels: { webhook, kind, operation, allowed, rule: decision.rule },
          value: 1,
        });
      } else counted.value++;
      const series = durations.get(webhook);
      if (series === undefined) return;
      series.count++;
      series.sum += seconds;
      // Counted in the first bucket that holds it; get() accumulates. Above the last bucket only +Inf counts.
      for (let i = 0; i < buckets.length; i++) {
        if (seconds <= buckets[i]!) {
          series.counts[i]!++;
          break;
        }
      }
    },
  };
}
