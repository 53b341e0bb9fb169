/**
 * Pure: the issue's targets checked against one run's sections, and the table `npm run bench` prints. A
 * target whose section did not run is reported as "not run", never as met.
 */

import type { ClientRow } from "./client.js";
export interface TargetResult {
  target: string;
  value: string;
  met: boolean | "not run";
}

interface LoadSide {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  cpuUsPerRequest?: number;
}
interface LoadRow {
  connections: number;
  bare: LoadSide;
  product: LoadSide;
  rpsRatio: number;
  p50Ratio: number;
  p99Ratio: number;
}
interface DecisionRow {
  review: string;
  decisionUs: number;
  jsonParseUs: number;
  ratioToJsonParse: number;
  rule: string;
  allowed: boolean;
}
interface MemorySection {
  machines: number;
  rssPerMachineBytes: number;
  heapPerMachineBytes: number;
  readyRatio: number;
  /** The fresh process over the populated cluster, against the empty one (noisier: two processes). */
  freshProcessRssPerMachineBytes?: number;
  empty: { startToReadyMs: number; syncMs: number; rss: number };
  /** The empty-cluster process again, once the watch brought every Machine and twin into its cache. */
  grown?: { rss: number };
  populated: { startToReadyMs: number; syncMs: number; rss: number };
}
export const sumValues = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);

export interface WriteCount {
  machines: number;
  productWrites: number;
  perMachine: number;
  byStep: Record<string, number>;
  /** Of those, the ones the API server refused, as `verb resource code` (409: a conflict, retried). */
  failed: Record<string, number>;
  providerWrites: number;
}
interface HandoverSection {
  machineToClusterAPI: WriteCount;
  machineToMachineAPI: WriteCount;
  machineSetToClusterAPI: WriteCount;
  machineSetToMachineAPI: WriteCount;
  quiet: { ms: number; productWrites: number; byStep: Record<string, number> };
}
interface ScaleRow {
  machines: number;
  /** `--scale-sets`: the fleet's MachineSets, handed over (in setHandoverMs) before the timed Machines. */
  machineSets?: number;
  setHandoverMs?: number;
  error?: string;
  provisionMs: number;
  handoverMs: number;
  msPerMachine: number;
  handoverToProvision: number;
  writesPerMachine: number;
  cpuShareOfOneCore?: Record<string, number>;
  cpuMsPerMachine?: { apiserver: number; product: number; providers: number };
  reconcilesPerMachine?: Record<string, number>;
  /** µs per watch event of the fleet's objects: plain JSON.parse and the informer's parse (managedFields cut). */
  watchEventParse?: { jsonParseUs: number; withoutManagedFieldsUs: number; ratio: number };
  /** µs per UPDATE review of a fleet MAPI Machine as kube sends it: plain JSON.parse and the webhook's parse. */
  reviewParse?: { jsonParseUs: number; webhookParseUs: number; ratio: number };
  /** µs per fleet Machine for its four conversions: the plain converter, and the sync's memo when it misses. */
  conversion?: { plainUs: number; memoMissUs: number; ratio: number };
}

/** `patch infrastructure.cluster.x-k8s.io/awsmachines` → `patch infra/awsmachines`: the table stays readable. */
export const shortStep = (step: string): string =>
  step
    .replace("infrastructure.cluster.x-k8s.io/", "infra/")
    .replace("cluster.x-k8s.io/", "capi/")
    .replace("machine.openshift.io/", "mapi/");

const fmt = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");

/** A scale row's fleet: `1000`, or `1000 in 10 sets (sets 4.20 s)` with the sets' own handover time. */
const fleetOf = (r: ScaleRow): string =>
  r.machineSets
    ? `${r.machines} in ${r.machineSets} sets${r.setHandoverMs !== undefined ? ` (sets ${fmt(r.setHandoverMs / 1000, 2)} s)` : ""}`
    : String(r.machines);

export function evaluateTargets(sections: Record<string, unknown>): TargetResult[] {
  const out: TargetResult[] = [];
  const notRun = (target: string): void => {
    out.push({ target, value: "", met: "not run" });
  };
  const admission = sections.admission as { runs: LoadRow[] } | undefined;
  const at10 = admission?.runs.find((r) => r.connections === 10);
  if (at10) {
    out.push({
      target: "admission rps ≥ 90 % of bare at 10 connections",
      value: `${fmt(at10.rpsRatio * 100)} % (${fmt(at10.product.rps, 0)} vs ${fmt(at10.bare.rps, 0)} rps)`,
      met: at10.rpsRatio >= 0.9,
    });
    out.push({
      target: "admission p99 ≤ 1.5× bare at 10 connections",
      value: `${fmt(at10.p99Ratio, 2)}× (${at10.product.p99Ms} vs ${at10.bare.p99Ms} ms)`,
      met: at10.p99Ratio <= 1.5,
    });
  } else {
    notRun("admission rps ≥ 90 % of bare at 10 connections");
    notRun("admission p99 ≤ 1.5× bare at 10 connections");
  }
  const decision = sections.decision as DecisionRow[] | undefined;
  if (decision && decision.length > 0) {
    const worst = decision.reduce((a, b) => (b.decisionUs > a.decisionUs ? b : a));
    out.push({
      target: "a decision ≤ 20 µs (heaviest review)",
      value: `${fmt(worst.decisionUs, 2)} µs (${worst.review})`,
      met: worst.decisionUs <= 20,
    });
  } else notRun("a decision ≤ 20 µs (heaviest review)");
  const handover = sections.handover as HandoverSection | undefined;
  if (handover) {
    const worst = Math.max(handover.machineToClusterAPI.perMachine, handover.machineToMachineAPI.perMachine);
    out.push({
      target: "≤ 12 writes per Machine handover",
      value: `${fmt(worst)} (worst direction)`,
      met: worst <= 12,
    });
    out.push({
      target: "0 writes to machine kinds when quiet",
      value: `${handover.quiet.productWrites} in ${handover.quiet.ms} ms`,
      met: handover.quiet.productWrites === 0,
    });
  } else {
    notRun("≤ 12 writes per Machine handover");
    notRun("0 writes to machine kinds when quiet");
  }
  const scale = (sections.scale as ScaleRow[] | undefined)?.filter((r) => r.error === undefined);
  const s1000 = scale?.find((r) => r.machines === 1000);
  if (s1000) {
    out.push({
      target: "1,000 Machines handed over in ≤ 10 s",
      value: `${fmt(s1000.handoverMs / 1000, 2)} s${s1000.machineSets ? ` (Machines of ${s1000.machineSets} MachineSets)` : ""}`,
      met: s1000.handoverMs <= 10_000,
    });
  } else notRun("1,000 Machines handed over in ≤ 10 s");
  if (scale && scale.length >= 2) {
    // Each step of the fleet sizes run (the full run's 100 → 1,000 and issue 25's 1,000 → 5,000).
    for (let i = 1; i < scale.length; i++) {
      const from = scale[i - 1] as ScaleRow;
      const to = scale[i] as ScaleRow;
      const growth = to.msPerMachine / from.msPerMachine;
      out.push({
        target: `cost per Machine flat (${from.machines} → ${to.machines}: ≤ 1.25×)`,
        value: `${fmt(growth, 2)}× (${fmt(from.msPerMachine, 2)} → ${fmt(to.msPerMachine, 2)} ms/Machine)`,
        met: growth <= 1.25,
      });
    }
  } else notRun("cost per Machine flat");
  const memory = sections.memory as MemorySection | undefined;
  if (memory) {
    out.push({
      target: "≤ 20 KB RSS per cached Machine with its twins",
      value: `${fmt(memory.rssPerMachineBytes / 1024)} KB (heap ${fmt(memory.heapPerMachineBytes / 1024)} KB)`,
      met: memory.rssPerMachineBytes <= 20 * 1024,
    });
    out.push({
      target: `ready ≤ 2 s with ${memory.machines} Machines`,
      value: `${fmt(memory.populated.startToReadyMs, 0)} ms (empty: ${fmt(memory.empty.startToReadyMs, 0)} ms)`,
      met: memory.populated.startToReadyMs <= 2000,
    });
  } else {
    notRun("≤ 20 KB RSS per cached Machine with its twins");
    notRun("ready ≤ 2 s with the cached Machines");
  }
  return out;
}

const table = (head: readonly string[], rows: readonly (readonly string[])[]): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
};

export function renderTable(sections: Record<string, unknown>, targets: readonly TargetResult[]): string {
  const parts: string[] = [];
  const admission = sections.admission as
    | {
        runs: LoadRow[];
        bodyBytes: number;
        withManagedFields?: { bodyBytes: number; runs: LoadRow[] };
        shell?: (LoadRow & { label: string; tag: string })[];
      }
    | undefined;
  const kubeSent = admission?.withManagedFields;
  const shell = admission?.shell ?? [];
  if (admission)
    parts.push(
      `Admission (/validate, ${admission.bodyBytes}-byte review) vs bare Fastify HTTPS${kubeSent ? `; "+mf": the same review with its objects' managedFields as kube-apiserver sends them (${kubeSent.bodyBytes} bytes)` : ""}${shell.length > 0 ? `; "fixed": the product answering every review with its first decision (no engine), "no line": and without the denial's log line` : ""}`,
      table(
        [
          "conns",
          "bare rps",
          "product rps",
          "ratio",
          "bare p50/p99 ms",
          "product p50/p99 ms",
          "p99 ratio",
          "CPU µs/req bare/product",
          "non2xx/err",
        ],
        [
          ...admission.runs.map((r) => ({ ...r, label: String(r.connections) })),
          ...(kubeSent?.runs ?? []).map((r) => ({ ...r, label: `${r.connections} +mf` })),
          ...shell.map((r) => ({ ...r, label: `${r.connections} ${r.tag}` })),
        ].map((r) => [
          r.label,
          fmt(r.bare.rps, 0),
          fmt(r.product.rps, 0),
          fmt(r.rpsRatio, 3),
          `${r.bare.p50Ms}/${r.bare.p99Ms}`,
          `${r.product.p50Ms}/${r.product.p99Ms}`,
          fmt(r.p99Ratio, 2),
          `${fmt(r.bare.cpuUsPerRequest ?? Number.NaN, 0)}/${fmt(r.product.cpuUsPerRequest ?? Number.NaN, 0)}`,
          `${r.product.non2xx + r.bare.non2xx}/${r.product.errors + r.bare.errors}`,
        ]),
      ),
    );
  const decision = sections.decision as DecisionRow[] | undefined;
  if (decision)
    parts.push(
      "Decision (median µs per decide(), populated cache) vs JSON.parse of the same body",
      table(
        ["review", "µs", "JSON.parse µs", "ratio", "verdict"],
        decision.map((d) => [
          d.review,
          fmt(d.decisionUs, 2),
          fmt(d.jsonParseUs, 2),
          fmt(d.ratioToJsonParse, 2),
          `${d.allowed ? "allow" : "deny"} ${d.rule}`,
        ]),
      ),
    );
  const client = sections.client as ClientRow | undefined;
  if (client)
    parts.push(
      `Client (one GET of a ${client.answerBytes}-byte MAPI Machine, ${client.concurrency} in flight): the product's transport and client vs bare https.request + JSON.parse`,
      table(
        ["GETs/round", "CPU µs/GET bare", "CPU µs/GET product", "ratio", "rounds bare", "rounds product"],
        [
          [
            String(client.requestsPerRound),
            fmt(client.bareUsPerRequest, 1),
            fmt(client.productUsPerRequest, 1),
            fmt(client.ratio, 3),
            client.samples.bare.join(" "),
            client.samples.product.join(" "),
          ],
        ],
      ),
    );
  const handover = sections.handover as HandoverSection | undefined;
  if (handover) {
    const rows = (
      [
        ["Machine → ClusterAPI", handover.machineToClusterAPI],
        ["Machine → MachineAPI", handover.machineToMachineAPI],
        ["MachineSet → ClusterAPI", handover.machineSetToClusterAPI],
        ["MachineSet → MachineAPI", handover.machineSetToMachineAPI],
      ] as const
    ).map(([name, w]) => [
      name,
      String(w.machines),
      fmt(w.perMachine),
      fmt(sumValues(w.failed ?? {}) / w.machines),
      Object.entries(w.byStep)
        .map(([k, v]) => `${shortStep(k)}=${fmt(v / w.machines)}`)
        .join(" "),
    ]);
    rows.push(["quiet", `${handover.quiet.ms} ms`, String(handover.quiet.productWrites), "", ""]);
    parts.push(
      "Handover writes to machine kinds by the product",
      table(["handover", "n", "writes/each", "of which 409/each", "by step (per each)"], rows),
    );
  }
  const scale = sections.scale as ScaleRow[] | undefined;
  if (scale)
    parts.push(
      "Scale: concurrent MAPI → CAPI handover (API server in its own process)",
      table(
        [
          "machines",
          "provision s",
          "handover s",
          "ms/Machine",
          "handover/provision",
          "writes/Machine",
          "CPU (cores) api/product/providers",
          "CPU ms/Machine api/product/providers",
          "product reconciles/Machine",
          "event parse µs plain/informer",
          "review parse µs plain/webhook",
          "conversion µs plain/memo miss",
        ],
        scale.map((r) =>
          r.error
            ? [fleetOf(r), `did not finish: ${r.error.slice(0, 100)}`]
            : [
                fleetOf(r),
                fmt(r.provisionMs / 1000, 2),
                fmt(r.handoverMs / 1000, 2),
                fmt(r.msPerMachine, 2),
                fmt(r.handoverToProvision, 2),
                fmt(r.writesPerMachine),
                r.cpuShareOfOneCore
                  ? `${r.cpuShareOfOneCore.apiserver}/${r.cpuShareOfOneCore.product}/${r.cpuShareOfOneCore.providers}`
                  : "",
                r.cpuMsPerMachine
                  ? `${fmt(r.cpuMsPerMachine.apiserver)}/${fmt(r.cpuMsPerMachine.product)}/${fmt(r.cpuMsPerMachine.providers)}`
                  : "",
                r.reconcilesPerMachine
                  ? Object.entries(r.reconcilesPerMachine)
                      .map(([c, v]) => `${c} ${fmt(v)}`)
                      .join(", ")
                  : "",
                r.watchEventParse
                  ? `${fmt(r.watchEventParse.jsonParseUs)}/${fmt(r.watchEventParse.withoutManagedFieldsUs)} (${fmt(r.watchEventParse.ratio, 2)})`
                  : "",
                r.reviewParse
                  ? `${fmt(r.reviewParse.jsonParseUs)}/${fmt(r.reviewParse.webhookParseUs)} (${fmt(r.reviewParse.ratio, 2)})`
                  : "",
                r.conversion
                  ? `${fmt(r.conversion.plainUs)}/${fmt(r.conversion.memoMissUs)} (${fmt(r.conversion.ratio, 2)})`
                  : "",
              ],
        ),
      ),
    );
  const memory = sections.memory as MemorySection | undefined;
  if (memory)
    parts.push(
      `Memory and readiness (product over an empty cluster vs ${memory.machines} Machines with twins)`,
      table(
        ["", "RSS MB", "start→ready ms", "informer sync ms"],
        [
          [
            "empty",
            fmt(memory.empty.rss / 2 ** 20),
            fmt(memory.empty.startToReadyMs, 0),
            fmt(memory.empty.syncMs, 0),
          ],
          ...(memory.grown
            ? [[`same process + ${memory.machines} Machines`, fmt(memory.grown.rss / 2 ** 20), "", ""]]
            : []),
          [
            `fresh, ${memory.machines} Machines`,
            fmt(memory.populated.rss / 2 ** 20),
            fmt(memory.populated.startToReadyMs, 0),
            fmt(memory.populated.syncMs, 0),
          ],
        ],
      ),
    );
  parts.push(
    "Targets",
    table(
      ["target", "value", "met"],
      targets.map((t) => [t.target, t.value, t.met === "not run" ? "not run" : t.met ? "yes" : "NO"]),
    ),
  );
  return parts.join("\n\n");
}
