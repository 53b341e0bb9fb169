/**
 * Bench child: the product as src/main.ts composes it — shared informer cache over the admission kinds, the
 * cluster view, the policy engine behind the real HTTPS webhook server — against the bench's API server
 * (argv: <kubeconfig file> <cert dir> [--controllers] [--decision=first] [--log-level=warn]). With
 * `--controllers` it also runs the two sync and two migration controllers on the same cache as the product
 * identity (started directly: one replica, no Lease to wait for). `--decision=first` takes the engine out of
 * the admission section's load: each webhook answers every review with the decision its first review got
 * (the section sends one review, so the answer is the same), and `--log-level=warn` drops the denial's line —
 * what the server around the engine costs on its own (`--admission-shell`). Commands: `memory` (RSS after a
 * full GC), `cached` (Machines with twins in the cache), `decide` (µs per decision, median of many, with a
 * same-run JSON.parse baseline) and `idle` (controllers have nothing queued or in flight).
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { collectDefaultMetrics, Registry } from "prom-client";
import { parseConfig } from "../src/config.js";
import { createCache } from "../src/kube/cache.js";
import { systemClock } from "../src/kube/clock.js";
import { connect } from "../src/kube/config.js";
import type { Controller } from "../src/kube/controller.js";
import { createEventRecorder } from "../src/kube/events.js";
import { KINDS, type ResourceType } from "../src/kube/kinds.js";
import { parseWithoutManagedFields } from "../src/kube/managed-fields-text.js";
import { runtimeMetrics } from "../src/kube/metrics.js";
import { getPath, type KubeObject, nameOf } from "../src/kube/object.js";
import { resourcePath } from "../src/kube/transport.js";
import { childLogger, createLogger, logDestination } from "../src/logging.js";
import { admissionInformers } from "../src/main.js";
import { createMigrationController } from "../src/migration/controller.js";
import { decide } from "../src/policies/engine.js";
import type { AdmissionRequest, Decision, PolicyContext, WebhookName } from "../src/policies/types.js";
import { clusterView } from "../src/policies/view.js";
import { decodeAdmissionReview } from "../src/server/admission-review.js";
import { parseJsonBody } from "../src/server/json-body.js";
import { startWebhookServer } from "../src/server/serve.js";
import { createMachineSetSyncController, createMachineSyncController } from "../src/sync/controller.js";
import { checkConvertible } from "../src/sync/conversion/index.js";
import { conversionConverter, memoisingConverter } from "../src/sync/converter.js";
import type { SyncConverter } from "../src/sync/snapshot.js";
import { CONTROLLER_USERS } from "./identities.js";
import { serveParent } from "./ipc.js";
import { infraMachineReviewBody, migrationReviewBody, NAMESPACES, reviewBody } from "./population.js";
import { median } from "./stats.js";

const [kubeconfigPath, certDir, ...flags] = process.argv.slice(2);
if (!kubeconfigPath || !certDir)
  throw new Error(
    "usage: product.ts <kubeconfig> <cert dir> [--controllers] [--workers=N] [--decision=first] [--log-level=warn]",
  );
const withControllers = flags.includes("--controllers");
const firstDecisionOnly = flags.includes("--decision=first");
// Workers per controller: absent = the product's default (the `workers` setting, src/config.ts).
const workersFlag = flags.find((f) => f.startsWith("--workers="));
const defaults = parseConfig([], {});
if (!defaults.ok) throw new Error(defaults.error);
const workers = {
  workers: workersFlag ? Number(workersFlag.slice("--workers=".length)) : defaults.config.workers,
};
// Static imports are evaluated before this line: what follows is the product's own start-up.
const bodyStart = performance.now();
// The product's logger as src/main.ts builds it (JSON lines, RFC 3339 time, `logger` name), at the default
// level: a denial writes one info line. It goes to /dev/null, through the product's own buffered destination —
// or, to see what the product did in a run, at debug to the file MAM_BENCH_PRODUCT_LOG names (not for figures).
const logFile = process.env.MAM_BENCH_PRODUCT_LOG;
const logger = createLogger(logFile ? "debug" : flags.includes("--log-level=warn") ? "warn" : "info", {
  tty: false,
  stream: logDestination(logFile ?? "/dev/null"),
});
// As src/main.ts: the product's client reads answers without managedFields.
const connection = connect({ kubeconfigPath, context: "controller" }, {}, { dropManagedFields: true });
const cache = createCache({ transport: connection.transport, logger, clock: systemClock });
for (const [type, namespace] of admissionInformers(NAMESPACES)) cache.informerFor(type, namespace);
const policy: PolicyContext = {
  view: clusterView(cache, NAMESPACES),
  settings: {
    ...NAMESPACES,
    controllerUsers: CONTROLLER_USERS,
    requireDeleteConfirmation: false,
    cacheStaleAfterMs: 30_000,
  },
  checkConvertible,
  enforcing: true,
};
// As src/main.ts: the process metrics (event-loop lag, GC) are collected beside the admission series.
const registry = new Registry();
collectDefaultMetrics({ register: registry });
const controllers: Controller[] = [];
if (withControllers) {
  const metrics = runtimeMetrics(registry);
  const events = createEventRecorder({
    client: connection.client,
    component: "machine-api-migration",
    clock: systemClock,
    logger,
  });
  const syncDeps = {
    client: connection.client,
    transport: connection.transport,
    cache,
    converter: memoisingConverter(conversionConverter),
    settings: NAMESPACES,
    events,
    clock: systemClock,
    logger,
    metrics,
    ...workers,
  };
  controllers.push(
    createMachineSyncController(syncDeps),
    createMachineSetSyncController(syncDeps),
    ...(["Machine", "MachineSet"] as const).map((kind) =>
      createMigrationController({
        kind,
        cache,
        client: connection.client,
        events,
        registry,
        runtimeMetrics: metrics,
        clock: systemClock,
        logger,
        namespaces: NAMESPACES,
        ...workers,
      }),
    ),
  );
}
/** `decide`, called once per webhook: every later review on that webhook gets the first one's decision. */
function firstDecisionOf(
  context: PolicyContext,
): (webhook: WebhookName, request: AdmissionRequest) => Decision {
  const first = new Map<WebhookName, Decision>();
  return (webhook, request) => {
    let decision = first.get(webhook);
    if (decision === undefined) {
      decision = decide(webhook, request, context);
      first.set(webhook, decision);
    }
    return decision;
  };
}
const webhook = await startWebhookServer({
  host: "127.0.0.1",
  port: 0,
  certFile: join(certDir, "tls.crt"),
  keyFile: join(certDir, "tls.key"),
  shutdownDelayMs: 0,
  deps: {
    decide: firstDecisionOnly ? firstDecisionOf(policy) : (name, request) => decide(name, request, policy),
    logger: childLogger(logger, "admission"),
    registry,
    readiness: () => (cache.synced() ? { ready: true } : { ready: false, reason: "not synced" }),
  },
});
const syncStart = performance.now();
await cache.waitForSync();
const readyMs = performance.now();
if (withControllers) await Promise.all(controllers.map((c) => c.start()));

const gc = (globalThis as { gc?: () => void }).gc;

/** µs per call of `fn`, median over `rounds` rounds of `batch` calls (a batch amortises the timer's cost). */
const microsPerCall = (fn: () => unknown, rounds: number, batch: number): number => {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) fn();
    samples.push(Number(process.hrtime.bigint() - t) / 1e3 / batch);
  }
  return median(samples);
};

/**
 * Medians over `rounds` rounds of two measurements taking turns, after one warm-up of each. Each goes first in
 * every other round, so the garbage one leaves is collected in the other's time as often as in its own.
 */
const inTurns = (a: () => number, b: () => number, rounds: number): readonly [number, number] => {
  a();
  b();
  const samples: [number[], number[]] = [[], []];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      samples[0].push(a());
      samples[1].push(b());
    } else {
      samples[1].push(b());
      samples[0].push(a());
    }
  }
  return [median(samples[0]), median(samples[1])];
};

serveParent(
  {
    url: webhook.url,
    pid: process.pid,
    // Module loading (tsx transpiles src on the fly here; the image runs compiled JS), the product's start-up
    // to ready (connect, informers, webhook listening, caches synced) and the informer sync alone.
    moduleLoadMs: bodyStart,
    startToReadyMs: readyMs - bodyStart,
    syncMs: readyMs - syncStart,
  },
  {
    memory: () => {
      for (let i = 0; i < 3; i++) gc?.();
      const m = process.memoryUsage();
      return {
        rss: m.rss,
        heapUsed: m.heapUsed,
        heapTotal: m.heapTotal,
        external: m.external,
        gc: gc !== undefined,
      };
    },
    /** How many of each seeded machine kind the cache holds (the memory item waits for all of them). */
    cached: () =>
      Math.min(
        cache.list(KINDS.mapiMachine, NAMESPACES.mapiNamespace).length,
        cache.list(KINDS.capiMachine, NAMESPACES.capiNamespace).length,
        cache.list(KINDS.awsMachine, NAMESPACES.capiNamespace).length,
      ),
    decide: ({ review, rounds, batch }) => {
      const body =
        review === "migration"
          ? migrationReviewBody()
          : review === "infra-machine"
            ? infraMachineReviewBody()
            : reviewBody(String(review));
      const decoded = decodeAdmissionReview(JSON.parse(body));
      if (!decoded.ok) throw new Error(decoded.error);
      const request = decoded.request;
      const decision = decide("validate", request, policy);
      const r = Number(rounds ?? 200);
      const b = Number(batch ?? 50);
      // Warm up both paths so the JIT has compiled them before anything is timed.
      microsPerCall(() => decide("validate", request, policy), 20, b);
      microsPerCall(() => JSON.parse(body), 20, b);
      return {
        decisionUs: microsPerCall(() => decide("validate", request, policy), r, b),
        jsonParseUs: microsPerCall(() => JSON.parse(body), r, b),
        bodyBytes: Buffer.byteLength(body),
        allowed: decision.allowed,
        rule: decision.rule,
      };
    },
    /**
     * µs to parse the fleet's machine objects as the API server serves them (managedFields and all), plain
     * `JSON.parse` against the product's own parse: one watch event of each (the informer's) and an UPDATE
     * review of each MAPI Machine (the webhook's), both of which cut managedFields from the text first.
     */
    decode: async ({ rounds }) => {
      const objects: unknown[] = [];
      for (const [type, namespace] of [
        [KINDS.mapiMachine, NAMESPACES.mapiNamespace],
        [KINDS.capiMachine, NAMESPACES.capiNamespace],
        [KINDS.awsMachine, NAMESPACES.capiNamespace],
      ] as const) {
        // Read with plain JSON.parse: the objects as served, managedFields and all.
        const list = (await connection.transport.request({
          method: "GET",
          path: resourcePath(type, namespace),
        })) as { items: unknown[] };
        objects.push(...list.items);
      }
      const events = objects.map((object) => JSON.stringify({ type: "MODIFIED", object }));
      // A MAPI Machine's UPDATE review as kube-apiserver sends it: both objects with their managedFields.
      const machines = objects.filter((o) => (o as { kind?: string }).kind === KINDS.mapiMachine.kind);
      const reviews = machines.map((m) =>
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          request: { uid: "bench", operation: "UPDATE", object: m, oldObject: m },
        }),
      );
      const withoutManagedFields = parseWithoutManagedFields("event");
      /** µs per text of `parse` over `texts`. */
      const per = (texts: string[], parse: (t: string) => unknown) => (): number => {
        const t = process.hrtime.bigint();
        for (const text of texts) parse(text);
        return Number(process.hrtime.bigint() - t) / 1e3 / texts.length;
      };
      const r = Number(rounds ?? 5);
      const [jsonParseUs, withoutManagedFieldsUs] = inTurns(
        per(events, JSON.parse),
        per(events, withoutManagedFields),
        r,
      );
      const [reviewJsonParseUs, reviewParseUs] = inTurns(
        per(reviews, JSON.parse),
        per(reviews, parseJsonBody),
        r,
      );
      return {
        events: events.length,
        bytesPerEvent: Math.round(events.reduce((n, e) => n + e.length, 0) / events.length),
        jsonParseUs,
        withoutManagedFieldsUs,
        bytesPerReview: Math.round(reviews.reduce((n, e) => n + e.length, 0) / reviews.length),
        reviewJsonParseUs,
        reviewParseUs,
      };
    },
    /**
     * µs to convert each of the fleet's Machines — its four Machine conversions, spec and status both ways, as
     * a sync reconcile asks for them — with the plain converter, against the sync's memoising converter
     * meeting every object for the first time (a fresh memo per round, so every call misses): what a
     * reconcile pays for the conversions after an event replaced one of its objects.
     */
    convert: async ({ rounds }) => {
      const list = async (type: ResourceType, namespace: string): Promise<KubeObject[]> =>
        (
          (await connection.transport.request({
            method: "GET",
            path: resourcePath(type, namespace),
            parse: parseWithoutManagedFields("list"),
          })) as { items: KubeObject[] }
        ).items;
      const infrastructure = (await connection.transport.request({
        method: "GET",
        path: resourcePath(KINDS.infrastructure, undefined, "cluster"),
      })) as KubeObject;
      const [mapis, capis, awsMachines] = await Promise.all([
        list(KINDS.mapiMachine, NAMESPACES.mapiNamespace),
        list(KINDS.capiMachine, NAMESPACES.capiNamespace),
        list(KINDS.awsMachine, NAMESPACES.capiNamespace),
      ]);
      const capiByName = new Map(capis.map((o) => [nameOf(o), o]));
      const awsByName = new Map(awsMachines.map((o) => [nameOf(o), o]));
      const twins = mapis.flatMap((mapi) => {
        const capi = capiByName.get(nameOf(mapi));
        const aws = awsByName.get(String(getPath(capi, ["spec", "infrastructureRef", "name"]) ?? ""));
        return capi && aws ? [{ mapi, capi, aws }] : [];
      });
      if (twins.length === 0) throw new Error("convert: no Machine with both twins to convert");
      const now = new Date().toISOString();
      const toCapi = { capiNamespace: NAMESPACES.capiNamespace };
      const toMapi = { mapiNamespace: NAMESPACES.mapiNamespace };
      /** µs per Machine for its four conversions with `c` (a fresh memo misses on every call). */
      const per = (c: SyncConverter): number => {
        const t = process.hrtime.bigint();
        for (const { mapi, capi, aws } of twins) {
          c.mapiMachineToCapi(mapi, infrastructure, toCapi);
          c.capiMachineToMapi(capi, aws, infrastructure, toMapi);
          c.mapiMachineStatusToCapi(mapi, infrastructure, { now, capiMachine: capi });
          c.capiMachineStatusToMapi(capi, aws, infrastructure, { now, mapiMachine: mapi });
        }
        return Number(process.hrtime.bigint() - t) / 1e3 / twins.length;
      };
      const [plainUs, memoMissUs] = inTurns(
        () => per(conversionConverter),
        () => per(memoisingConverter(conversionConverter)),
        Number(rounds ?? 6),
      );
      return { machines: twins.length, plainUs, memoMissUs };
    },
    /** Reconciles so far per controller (all results), from the runtime's `reconcile_total` counter. */
    reconciles: async () => {
      const counted: Record<string, number> = {};
      const metric = registry.getSingleMetric("controller_runtime_reconcile_total");
      for (const v of metric ? (await metric.get()).values : []) {
        const controller = String(v.labels.controller);
        counted[controller] = (counted[controller] ?? 0) + v.value;
      }
      return counted;
    },
    idle: () =>
      controllers.every((c) => (c.queue()?.len() ?? 0) === 0 && (c.queue()?.processing().length ?? 0) === 0),
  },
  async () => {
    await Promise.all(controllers.map((c) => c.stop()));
    await webhook.close();
    await cache.stop();
  },
);
