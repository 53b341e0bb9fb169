/**
 * Admission metrics of SPEC §2.1: `admission_requests_total{webhook,kind,operation,allowed,rule}` and
 * `admission_duration_seconds{webhook}`, registered on the registry the caller passes (never prom-client's
 * global one, so tests and several servers in one process never collide). Label children are cached per
 * label tuple because prom-client hashes the label object on every `inc`, which the hot path cannot afford.
 */
import { Counter, Histogram, type Registry } from "prom-client";
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

type Child<T> = T extends Counter<infer _L> ? ReturnType<T["labels"]> : never;

export function createAdmissionMetrics(registry: Registry): AdmissionMetrics {
  const requests = new Counter({
    name: "admission_requests_total",
    help: "Admission reviews answered, by webhook, object kind, operation, verdict and deciding rule.",
    labelNames: ["webhook", "kind", "operation", "allowed", "rule"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "admission_duration_seconds",
    help: "Time from a decoded AdmissionReview to its answer, by webhook.",
    labelNames: ["webhook"] as const,
    buckets: DURATION_BUCKETS_SECONDS,
    registers: [registry],
  });
  const durationByWebhook = new Map(WEBHOOKS.map((w) => [w, duration.labels(w)]));
  const requestChildren = new Map<string, Child<typeof requests>>();
  return {
    record(webhook, request, decision, seconds) {
      const kind = kindLabelOf(request);
      const operation = OPERATIONS.has(request.operation) ? request.operation : "other";
      const allowed = decision.allowed ? "true" : "false";
      const key = `${webhook}\u0000${kind}\u0000${operation}\u0000${allowed}\u0000${decision.rule}`;
      let child = requestChildren.get(key);
      if (child === undefined) {
        child = requests.labels(webhook, kind, operation, allowed, decision.rule);
        requestChildren.set(key, child);
      }
      child.inc();
      durationByWebhook.get(webhook)?.observe(seconds);
    },
  };
}
