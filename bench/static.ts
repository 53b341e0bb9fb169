/**
 * Items 1, 2 and 5 of the bench, on one "static" cluster (no controllers): the API server child holds the
 * population, the product child caches it and serves /validate, the bare child is the baseline. Memory and
 * start-to-ready are measured on a product child over an empty cluster first (the same-run baseline), then
 * on one over `machines` Machines with their twins; that second child is then decided on and loaded.
 */

import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeObject } from "../src/kube/object.js";
import { productNodeFlags } from "./image.js";
import { type Child, startChild } from "./ipc.js";
import type { BenchOptions } from "./options.js";
import { reviewBody } from "./population.js";
import { ratio, round } from "./stats.js";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const AUTOCANNON = fileURLToPath(new URL("../node_modules/autocannon/autocannon.js", import.meta.url));

export interface Workspace {
  dir: string;
  certDir: string;
  caFile: string;
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** The server process's CPU (user + system) per answered request, µs. */
  cpuUsPerRequest?: number;
}

/** One autocannon run in its own process against `url` POSTing `bodyFile`, parsed from its --json output. */
export async function autocannon(url: string, bodyFile: string, connections: number, seconds: number) {
  const args = [
    AUTOCANNON,
    "--json",
    "-c",
    String(connections),
    "-d",
    String(seconds),
    "-m",
    "POST",
    "-H",
    "content-type=application/json",
    "-i",
    bodyFile,
    url,
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${err.slice(0, 500)}`);
  const r = JSON.parse(out) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  return {
    rps: round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
  } satisfies LoadResult;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Two runs of each server in A-B-B-A order, averaged, so drift on a shared machine hits both alike. Each run
 * also reads the server process's CPU time before and after: CPU per request is what the throughput ratio is
 * made of once the server's core is saturated.
 */
async function compare(servers: { bare: Child; product: Child }, bodyFile: string, c: number, s: number) {
  const runs = { bare: [] as LoadResult[], product: [] as LoadResult[] };
  for (const which of ["bare", "product", "product", "bare"] as const) {
    const server = servers[which];
    const cpuBefore = await server.ask<number>("cpuMs");
    const run = await autocannon(`${(server.ready as { url: string }).url}/validate`, bodyFile, c, s);
    const cpuMs = (await server.ask<number>("cpuMs")) - cpuBefore;
    runs[which].push({ ...run, cpuUsPerRequest: run.requests > 0 ? (cpuMs * 1000) / run.requests : 0 });
  }
  const avg = (rs: LoadResult[]): LoadResult => ({
    rps: round(mean(rs.map((r) => r.rps))),
    p50Ms: round(mean(rs.map((r) => r.p50Ms)), 2),
    p99Ms: round(mean(rs.map((r) => r.p99Ms)), 2),
    requests: rs.reduce((a, r) => a + r.requests, 0),
    non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    cpuUsPerRequest: round(mean(rs.map((r) => r.cpuUsPerRequest ?? 0)), 1),
  });
  const bare = avg(runs.bare);
  const product = avg(runs.product);
  return {
    connections: c,
    bare,
    product,
    rpsRatio: ratio(product.rps, bare.rps),
    cpuRatio: ratio(product.cpuUsPerRequest ?? 0, bare.cpuUsPerRequest ?? 0),
    p50Ratio: ratio(product.p50Ms, bare.p50Ms),
    p99Ratio: ratio(product.p99Ms, bare.p99Ms),
  };
}

interface Ready {
  url: string;
  moduleLoadMs: number;
  startToReadyMs: number;
  syncMs: number;
}
interface Memory {
  rss: number;
  heapUsed: number;
  gc: boolean;
}

/** With `--cpu-prof`, the V8 flags that make a child write its profile (named by pid) when it stops. */
const cpuProfArgs = (o: BenchOptions): string[] =>
  o.cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", o.cpuProfDir] : [];

const startProduct = (
  ws: Workspace,
  kubeconfig: string,
  o: BenchOptions,
  flags: readonly string[] = [],
): Promise<Child> =>
  startChild(join(HERE, "product.ts"), [kubeconfig, ws.certDir, ...flags], {
    execArgv: ["--expose-gc", ...productNodeFlags(o), ...cpuProfArgs(o)],
  });

/**
 * `--admission-shell`: the product with its engine taken out (bench/product.ts `--decision=first`), with the
 * denial's log line and without it, each loaded at 10 connections against the same bare server as the rows
 * above — the part of the product's cost per review that no policy engine, however cheap, can remove.
 */
const SHELLS = [
  { label: "decision fixed", tag: "fixed", flags: ["--decision=first"] },
  {
    label: "decision fixed, no log line",
    tag: "fixed, no line",
    flags: ["--decision=first", "--log-level=warn"],
  },
] as const;

export async function runStatic(ws: Workspace, o: BenchOptions, log: (line: string) => void) {
  const want = new Set(o.only);
  const results: Record<string, unknown> = {};
  const api = await startChild(join(HERE, "apiserver.ts"), [
    join(ws.dir, "static"),
    ws.caFile,
    ...(o.apiServer === "real" ? ["--real"] : []),
  ]);
  const kubeconfig = join(ws.dir, "static", "kubeconfig");
  const children: Child[] = [api];
  try {
    await api.ask("seed", { n: 0 });
    let empty: { ready: Ready; memory: Memory } | undefined;
    let grown: Memory | undefined;
    if (want.has("memory")) {
      // RSS growth is measured in ONE process: before, and after the watch brought the Machines in. Two fresh
      // processes differ by ±15 MB of RSS on their own (module loading, allocator state), more than 1,000
      // Machines weigh; the fresh populated process below is still reported, and gives the ready time.
      log("memory: product over an empty cluster, then the same process after the Machines arrive");
      const p0 = await startProduct(ws, kubeconfig, o);
      try {
        empty = { ready: p0.ready as Ready, memory: await p0.ask<Memory>("memory") };
        await api.ask("seed", { n: o.machines });
        const deadline = Date.now() + 120_000;
        while ((await p0.ask<number>("cached")) < o.machines) {
          if (Date.now() > deadline) throw new Error("memory: the product's cache never held every Machine");
          await new Promise((r) => setTimeout(r, 100));
        }
        grown = await p0.ask<Memory>("memory");
      } finally {
        await p0.stop();
      }
    }
    log(`seeding ${o.machines} Machines with their twins`);
    await api.ask("seed", { n: o.machines });
    const product = await startProduct(ws, kubeconfig, o);
    children.push(product);
    const ready = product.ready as Ready;
    if (empty && grown) {
      const full = await product.ask<Memory>("memory");
      results.memory = {
        machines: o.machines,
        empty: {
          ...empty.memory,
          startToReadyMs: round(empty.ready.startToReadyMs),
          moduleLoadMs: round(empty.ready.moduleLoadMs),
          syncMs: round(empty.ready.syncMs),
        },
        grown,
        populated: {
          ...full,
          moduleLoadMs: round(ready.moduleLoadMs),
          startToReadyMs: round(ready.startToReadyMs),
          syncMs: round(ready.syncMs),
        },
        rssPerMachineBytes: Math.round((grown.rss - empty.memory.rss) / o.machines),
        heapPerMachineBytes: Math.round((grown.heapUsed - empty.memory.heapUsed) / o.machines),
        freshProcessRssPerMachineBytes: Math.round((full.rss - empty.memory.rss) / o.machines),
        readyRatio: ratio(ready.startToReadyMs, empty.ready.startToReadyMs),
      };
    }
    if (want.has("decision")) {
      log("decision: µs per decide() on the populated cache");
      const reviews = [
        "migration",
        "mapi-machine-update-instance-type.json",
        "mapi-machineset-scale-update.json",
        "capi-machine-create.json",
        "infra-machine",
      ];
      const rows: unknown[] = [];
      for (const review of reviews) {
        const r = await product.ask<{ decisionUs: number; jsonParseUs: number }>("decide", {
          review,
          rounds: o.decisionRounds,
          batch: 50,
        });
        rows.push({
          review,
          ...r,
          decisionUs: round(r.decisionUs, 2),
          jsonParseUs: round(r.jsonParseUs, 2),
          ratioToJsonParse: ratio(r.decisionUs, r.jsonParseUs),
        });
      }
      results.decision = rows;
    }
    if (want.has("admission")) {
      // Profiled too with --cpu-prof: the product's profile is read against the baseline's, per request.
      const bare = await startChild(join(HERE, "bare.ts"), [ws.certDir], { execArgv: cpuProfArgs(o) });
      children.push(bare);
      const bodyFile = join(ws.dir, "review.json");
      await writeFile(bodyFile, reviewBody());
      const urls = { bare: (bare.ready as { url: string }).url, product: ready.url };
      // Warm-up: JIT, TLS session setup and connection pools, not measured.
      await autocannon(`${urls.bare}/validate`, bodyFile, 10, 1);
      await autocannon(`${urls.product}/validate`, bodyFile, 10, 1);
      const rows = [];
      for (const c of o.connections) {
        log(`admission: ${c} connection(s), ${o.durationS}s × 4 runs`);
        rows.push(await compare({ bare, product }, bodyFile, c, o.durationS));
      }
      // The same review as kube-apiserver sends it: both objects with the managedFields the API server keeps
      // for such a Machine. Beside the target's rows, not instead of them (the target is read at 10 above).
      const review = JSON.parse(reviewBody()) as {
        request: { object: KubeObject; oldObject: KubeObject };
      };
      const { managedFields } = await api.ask<{ managedFields: unknown[] }>("managedFieldsOf", {
        object: review.request.oldObject,
      });
      for (const side of [review.request.object, review.request.oldObject])
        side.metadata = { ...side.metadata, managedFields } as KubeObject["metadata"];
      const kubeSentFile = join(ws.dir, "review-managed-fields.json");
      const kubeSent = JSON.stringify(review);
      await writeFile(kubeSentFile, kubeSent);
      log(`admission: 10 connections, ${o.durationS}s × 4 runs, the review with its managedFields`);
      await autocannon(`${urls.bare}/validate`, kubeSentFile, 10, 1);
      await autocannon(`${urls.product}/validate`, kubeSentFile, 10, 1);
      const withManagedFields = {
        bodyBytes: Buffer.byteLength(kubeSent),
        runs: [await compare({ bare, product }, kubeSentFile, 10, o.durationS)],
      };
      const shell = [];
      if (o.admissionShell) {
        for (const { label, tag, flags } of SHELLS) {
          log(`admission: 10 connections, ${o.durationS}s × 4 runs, the product with its ${label}`);
          const fixed = await startProduct(ws, kubeconfig, o, flags);
          try {
            const url = `${(fixed.ready as Ready).url}/validate`;
            await autocannon(url, bodyFile, 10, 1);
            shell.push({
              label,
              tag,
              ...(await compare({ bare, product: fixed }, bodyFile, 10, o.durationS)),
            });
          } finally {
            await fixed.stop();
          }
        }
      }
      results.admission = {
        bodyBytes: Buffer.byteLength(reviewBody()),
        machinesCached: o.machines,
        runs: rows,
        withManagedFields,
        ...(shell.length > 0 ? { shell } : {}),
      };
    }
  } finally {
    for (const c of children.reverse()) await c.stop();
  }
  return results;
}
