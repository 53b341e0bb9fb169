/**
 * `npx tsx bench/profile-summary.ts <file.cpuprofile>[:requests] …` (issue 25): where a bench server's main
 * thread spent its time, by category — the profiles `npm run bench -- --only admission --cpu-prof DIR` writes
 * for the product and the bare baseline. Each sample goes to the category of its deepest frame that names
 * one (so the body parse is not charged with the handler Fastify calls from the parser's callback); idle is
 * left out, and module loading and the informer cache are shown but not counted as busy. With `:requests`
 * (the answered requests, warm-up included) each category is also given in µs per request. The profiler
 * samples wall time: on a loaded machine a saturated server's figures include the time it was preempted, so
 * compare the two servers' shares and the categories only the product has, not absolute µs across runs.
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Category of a frame, first match wins; undefined: look at the caller. */
const CATEGORIES: ReadonlyArray<[string, (f: CallFrame) => boolean]> = [
  [
    "startup (module loading)",
    (f) => f.url.startsWith("node:internal/modules") || f.url.includes("node_modules/tsx/"),
  ],
  ["informer cache", (f) => f.url.includes("/src/kube/")],
  ["decide (policy engine)", (f) => f.functionName === "decide" && f.url.includes("/policies/engine")],
  [
    "logging (pino)",
    (f) => /node_modules\/(pino|sonic-boom)\//.test(f.url) || f.url.endsWith("/src/logging.ts"),
  ],
  ["metrics", (f) => f.url.endsWith("/src/server/metrics.ts")],
  [
    "decode review",
    (f) => f.url.endsWith("/admission-review.ts") && f.functionName !== "encodeAdmissionResponse",
  ],
  ["encode response", (f) => f.functionName === "encodeAdmissionResponse"],
  [
    "JSON body parse",
    (f) =>
      (f.functionName === "parseJsonBody" && f.url.endsWith("/json-body.ts")) ||
      (f.functionName === "parse" && f.url.includes("secure-json-parse")),
  ],
  ["serialise response", (f) => f.functionName === "serialize" && f.url.includes("fastify/lib/reply")],
  ["socket write (TLS + send)", (f) => /(^|\.)_write(Generic|v)$/.test(f.functionName)],
  ["GC", (f) => f.functionName === "(garbage collector)"],
];
const NOT_BUSY = new Set(["startup (module loading)", "informer cache"]);

function categoryOf(stack: readonly CallFrame[]): string | undefined {
  if (stack[0]?.functionName === "(idle)") return undefined;
  for (const frame of stack) for (const [name, test] of CATEGORIES) if (test(frame)) return name;
  if (stack[0]?.functionName === "(program)") return "(program)";
  if (stack.some((f) => /node_modules\/(fastify|find-my-way|@fastify)\//.test(f.url)))
    return "Fastify (routing, hooks, reply)";
  if (stack.some((f) => f.url.endsWith("/src/server/app.ts"))) return "app.ts";
  if (stack.some((f) => /^node:(_http|_tls|net|internal\/(streams|tls|stream_base))/.test(f.url)))
    return "node http/TLS/streams";
  return "other";
}

function summarise(file: string, requests: number | undefined): string {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const micros = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node) stack.push(node.callFrame);
    }
    const category = categoryOf(stack);
    if (category) micros.set(category, (micros.get(category) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const busy = [...micros].filter(([c]) => !NOT_BUSY.has(c)).reduce((a, [, us]) => a + us, 0);
  const lines = [
    `${file}: busy ${(busy / 1000).toFixed(0)} ms${requests ? `, ${(busy / requests).toFixed(1)} µs per request` : ""}`,
  ];
  for (const [category, us] of [...micros].sort((a, b) => b[1] - a[1])) {
    const share = NOT_BUSY.has(category) ? "  (not busy)" : `${((100 * us) / busy).toFixed(1).padStart(5)} %`;
    const perRequest = requests ? `${(us / requests).toFixed(1).padStart(7)} µs/req  ` : "";
    lines.push(`  ${perRequest}${share}  ${category}`);
  }
  return lines.join("\n");
}

for (const arg of process.argv.slice(2)) {
  const [file, count] = arg.split(/:(?=\d+$)/);
  process.stdout.write(`${summarise(file as string, count ? Number(count) : undefined)}\n`);
}
