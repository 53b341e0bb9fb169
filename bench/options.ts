/**
 * The bench's command line, parsed into one options record (pure, tested): which sections run and how big
 * and long each is. `--quick` is the ~1-minute profile; flags after it override single values.
 */

export const SECTIONS = ["admission", "decision", "memory", "client", "handover", "scale"] as const;
export type Section = (typeof SECTIONS)[number];

export interface BenchOptions {
  quick: boolean;
  only: readonly Section[];
  /** Machines (each with its two twins) in the cache for admission, decision and memory. */
  machines: number;
  /** autocannon connection counts and seconds per measured run. */
  connections: readonly number[];
  durationS: number;
  /** Timed rounds (of `batch` calls each) per decision measurement. */
  decisionRounds: number;
  /** GETs per measured round of the client section (the product's transport against a bare Node client). */
  clientRequests: number;
  /** Machines handed over in each direction for the write counts (item 3). */
  handoverMachines: number;
  /** Length of the quiet interval in which no machine-kind write is expected. */
  quietMs: number;
  /** Fleet sizes handed over concurrently (item 4). */
  scale: readonly number[];
  /**
   * The scale fleet's owners (`--scale-sets K`): absent = standalone Machines (the targets' fleet); K = K
   * MAPI MachineSets sharing the fleet, handed over first (as `cli migrate` does, SPEC §12), then their
   * Machines — the timed part. Most of a real cluster's Machines belong to a MachineSet.
   */
  scaleSets?: number;
  /** Workers per controller in items 3 and 4; absent = the product's default (1, as src/main.ts runs them). */
  workers?: number;
  /** Where the JSON result goes (default bench/results). */
  outDir?: string;
  /**
   * Write a V8 CPU profile of each product child and of the bare baseline here (`--cpu-prof`), to profile
   * before optimising (bench/profile-summary.ts reads them).
   */
  cpuProfDir?: string;
  /**
   * The API server the sections run against: the local one (the targets' reference) or the real control
   * plane (`--api-server real`: etcd, kube-apiserver, kube-controller-manager, as `npm run test:cluster`
   * builds them), reported beside it.
   */
  apiServer: "local" | "real";
  /**
   * V8's semi-space cap (MB) for the product's process (`--product-semi-space`): absent = the image's
   * (`NODE_OPTIONS` of the Dockerfile's runtime stage, bench/image.ts); 0 = V8's own sizing.
   */
  productSemiSpaceMb?: number;
  /**
   * Also load two products whose engine is taken out (`--admission-shell`): each answers every review with
   * the decision its first one got, with and without the denial's log line — what the server around the
   * engine costs on its own, beside the product's rows.
   */
  admissionShell: boolean;
}

// The full run is issue 25's scenario: 5,000 cached Machines (admission, decisions, memory and readiness) and
// fleets of 100, 1,000 and 5,000 handed over, so one run shows every target.
const FULL: Omit<BenchOptions, "only"> = {
  quick: false,
  machines: 5000,
  connections: [1, 10, 50],
  durationS: 10,
  decisionRounds: 400,
  clientRequests: 20_000,
  handoverMachines: 10,
  quietMs: 10_000,
  scale: [100, 1000, 5000],
  apiServer: "local",
  admissionShell: false,
};

const QUICK: Omit<BenchOptions, "only"> = {
  quick: true,
  machines: 1000,
  connections: [1, 10, 50],
  durationS: 2,
  decisionRounds: 100,
  clientRequests: 2_000,
  handoverMachines: 2,
  quietMs: 2_000,
  scale: [10, 40],
  apiServer: "local",
  admissionShell: false,
};

const positiveInts = (flag: string, v: string): number[] => {
  const xs = v.split(",").map((s) => Number(s.trim()));
  if (xs.length === 0 || xs.some((x) => !Number.isInteger(x) || x <= 0))
    throw new Error(`${flag}: expected positive integers separated by commas, got ${JSON.stringify(v)}`);
  return xs;
};
const positiveInt = (flag: string, v: string): number => {
  const [x, ...rest] = positiveInts(flag, v);
  if (x === undefined || rest.length > 0) throw new Error(`${flag}: expected one positive integer`);
  return x;
};

/** One MachineSet per availability-zone letter of the demo platform (src/local/seed.ts). */
export const MAX_SCALE_SETS = 26;

export const USAGE = `usage: npm run bench -- [--quick] [--only ${SECTIONS.join(",")}]
  [--machines N] [--connections 1,10,50] [--duration S] [--decision-rounds N] [--client-requests N]
  [--handover-machines N] [--quiet-ms MS] [--scale 100,1000[,5000]] [--scale-sets K] [--workers N] [--out DIR] [--cpu-prof DIR] [--api-server local|real]
  [--product-semi-space MB] [--admission-shell]`;

export function parseOptions(argv: readonly string[]): BenchOptions {
  const quick = argv.includes("--quick");
  const o: BenchOptions = { ...(quick ? QUICK : FULL), only: SECTIONS };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    if (flag === "--quick") continue;
    if (flag === "--admission-shell") {
      o.admissionShell = true;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith("--")) throw new Error(`${flag}: missing value\n${USAGE}`);
    i++;
    switch (flag) {
      case "--only": {
        const names = value.split(",").map((s) => s.trim());
        const unknown = names.filter((n) => !(SECTIONS as readonly string[]).includes(n));
        if (unknown.length > 0) throw new Error(`--only: unknown section(s) ${unknown.join(", ")}\n${USAGE}`);
        o.only = SECTIONS.filter((s) => names.includes(s));
        break;
      }
      case "--machines":
        o.machines = positiveInt(flag, value);
        break;
      case "--connections":
        o.connections = positiveInts(flag, value);
        break;
      case "--duration":
        o.durationS = positiveInt(flag, value);
        break;
      case "--decision-rounds":
        o.decisionRounds = positiveInt(flag, value);
        break;
      case "--client-requests":
        o.clientRequests = positiveInt(flag, value);
        break;
      case "--handover-machines":
        o.handoverMachines = positiveInt(flag, value);
        break;
      case "--quiet-ms":
        o.quietMs = positiveInt(flag, value);
        break;
      case "--scale":
        o.scale = positiveInts(flag, value);
        break;
      case "--scale-sets":
        o.scaleSets = positiveInt(flag, value);
        if (o.scaleSets > MAX_SCALE_SETS)
          throw new Error(
            `--scale-sets: at most ${MAX_SCALE_SETS} MachineSets, got ${o.scaleSets}\n${USAGE}`,
          );
        break;
      case "--out":
        o.outDir = value;
        break;
      case "--workers":
        o.workers = positiveInt(flag, value);
        break;
      case "--cpu-prof":
        o.cpuProfDir = value;
        break;
      case "--product-semi-space":
        if (!/^(0|[1-9][0-9]*)$/.test(value))
          throw new Error(
            `--product-semi-space: expected MB (0: V8's own sizing), got ${JSON.stringify(value)}\n${USAGE}`,
          );
        o.productSemiSpaceMb = Number(value);
        break;
      case "--api-server":
        if (value !== "local" && value !== "real")
          throw new Error(`--api-server: expected local or real, got ${JSON.stringify(value)}\n${USAGE}`);
        o.apiServer = value;
        break;
      default:
        throw new Error(`unknown flag ${flag}\n${USAGE}`);
    }
  }
  return o;
}
