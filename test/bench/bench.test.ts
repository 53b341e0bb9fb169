/**
 * The bench harness (bench/, issue 10) cannot rot: its option parsing, target evaluation and write counting
 * are checked as pure functions, and `npm run bench` runs end to end in a tiny mode (one second of load on one
 * connection, 20 cached Machines, a handful of timed decisions) and writes a result file every section
 * promised. Nothing here asserts a speed: the machine is shared, so only shapes and invariants are checked.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { machineWrites, writeCount } from "../../bench/handover.js";
import { PRODUCT_USER } from "../../bench/identities.js";
import { imageNodeOptions, productNodeFlags } from "../../bench/image.js";
import { parseOptions, SECTIONS } from "../../bench/options.js";
import { population } from "../../bench/population.js";
import { steadyFrom } from "../../bench/readings.js";
import { evaluateTargets, shortStep } from "../../bench/report.js";
import { percentile, ratio } from "../../bench/stats.js";

const run = promisify(execFile);

describe("bench options", () => {
  it.each([
    [
      [],
      { quick: false, only: SECTIONS, machines: 5000, connections: [1, 10, 50], scale: [100, 1000, 5000] },
    ],
    [["--quick"], { quick: true, only: SECTIONS, machines: 1000 }],
    [["--quick", "--only", "decision,admission"], { quick: true, only: ["admission", "decision"] }],
    [["--scale", "100,1000,5000", "--workers", "4"], { scale: [100, 1000, 5000], workers: 4 }],
    [[], { apiServer: "local" }],
    [["--only", "scale", "--api-server", "real"], { only: ["scale"], apiServer: "real" }],
    [["--product-semi-space", "32"], { productSemiSpaceMb: 32 }],
    [["--product-semi-space", "0"], { productSemiSpaceMb: 0 }],
    [["--scale", "1000", "--scale-sets", "10"], { scale: [1000], scaleSets: 10 }],
    [[], { admissionShell: false }],
    [["--only", "admission", "--admission-shell", "--duration", "5"], { admissionShell: true, durationS: 5 }],
  ])("%j parses", (argv, expected) => {
    expect(parseOptions(argv)).toMatchObject(expected);
  });

  it.each([
    [["--only", "nope"], /unknown section/],
    [["--connections", "0"], /positive integers/],
    [["--duration"], /missing value/],
    [["--frobnicate", "1"], /unknown flag/],
    [["--api-server", "kind"], /--api-server: expected local or real/],
    [["--product-semi-space", "16MB"], /--product-semi-space: expected MB/],
    [["--product-semi-space", "-1"], /missing value|expected MB/],
    [["--scale-sets", "0"], /positive integers/],
    [["--scale-sets", "27"], /--scale-sets: at most 26 MachineSets/],
  ])("%j is refused", (argv, message) => {
    expect(() => parseOptions(argv)).toThrow(message);
  });

  it("the scale fleet is standalone Machines (the targets' fleet) unless --scale-sets is given", () => {
    expect(parseOptions([]).scaleSets).toBeUndefined();
    expect(parseOptions(["--quick"]).scaleSets).toBeUndefined();
  });

  it("the product runs with the image's NODE_OPTIONS unless --product-semi-space replaces the cap", () => {
    expect(parseOptions([]).productSemiSpaceMb).toBeUndefined();
    expect(productNodeFlags({})).toEqual(["--max-semi-space-size=32"]);
    expect(productNodeFlags({ productSemiSpaceMb: 64 })).toEqual(["--max-semi-space-size=64"]);
    expect(productNodeFlags({ productSemiSpaceMb: 0 })).toEqual([]);
    const dockerfile = (env: string) =>
      `FROM node:24-slim AS build\nENV NODE_OPTIONS=--jitless\nFROM node:24-slim\n${env}\n`;
    expect(
      imageNodeOptions(dockerfile("ENV NODE_ENV=production NODE_OPTIONS=--max-semi-space-size=8")),
    ).toEqual(["--max-semi-space-size=8"]);
    expect(imageNodeOptions(dockerfile("ENV NODE_ENV=production"))).toEqual([]);
  });
});

describe("bench pure helpers", () => {
  it("percentile and ratio", () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 100], 99)).toBe(100);
    expect(ratio(1, 4)).toBe(0.25);
    expect(ratio(1, 0)).toBeNaN();
  });

  it("the population holds each Machine with its CAPI Machine and AWSMachine twin", () => {
    const objects = population(3);
    const kinds = objects.map((o) => `${String(o.apiVersion).split("/")[0]} ${o.kind}`);
    expect(kinds.filter((k) => k === "machine.openshift.io Machine")).toHaveLength(3);
    expect(kinds.filter((k) => k === "cluster.x-k8s.io Machine")).toHaveLength(3);
    expect(kinds.filter((k) => k === "infrastructure.cluster.x-k8s.io AWSMachine")).toHaveLength(3);
    // The reviewed Machine itself is cached, so the review's twin lookup finds something.
    expect(objects.some((o) => o.kind === "Machine" && o.metadata?.name === "worker-a")).toBe(true);
  });

  it("writes are counted for the product identity on machine kinds only", () => {
    const snapshot = {
      total: 0,
      byVerb: {},
      byResource: {},
      byUser: {},
      byKey: {
        [`patch machine.openshift.io/machines/status ${PRODUCT_USER}`]: 4,
        [`patch cluster.x-k8s.io/machines ${PRODUCT_USER}`]: 2,
        [`create /events ${PRODUCT_USER}`]: 9,
        [`update coordination.k8s.io/leases ${PRODUCT_USER}`]: 9,
        [`get machine.openshift.io/machines ${PRODUCT_USER}`]: 9,
        [`patch cluster.x-k8s.io/clusters ${PRODUCT_USER}`]: 9,
        "patch machine.openshift.io/machines/status system:serviceaccount:openshift-machine-api:machine-api-controllers": 3,
      },
      failures: {
        [`patch machine.openshift.io/machines/status ${PRODUCT_USER} 409`]: 1,
        [`create /events ${PRODUCT_USER} 409`]: 1,
      },
    };
    expect(machineWrites(snapshot, (u) => u === PRODUCT_USER)).toEqual({
      "patch machine.openshift.io/machines/status": 4,
      "patch cluster.x-k8s.io/machines": 2,
    });
    expect(writeCount(snapshot, 2)).toMatchObject({
      productWrites: 6,
      perMachine: 3,
      providerWrites: 3,
      failed: { "patch machine.openshift.io/machines/status 409": 1 },
    });
    expect(shortStep("patch infrastructure.cluster.x-k8s.io/awsmachines")).toBe("patch infra/awsmachines");
  });

  it("a target whose section did not run is never reported as met", () => {
    const targets = evaluateTargets({});
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.every((t) => t.met === "not run")).toBe(true);
    const met = evaluateTargets({
      handover: {
        quiet: { ms: 10, productWrites: 1, byStep: {} },
        machineToClusterAPI: {
          machines: 1,
          productWrites: 12,
          perMachine: 12,
          byStep: {},
          providerWrites: 0,
        },
        machineToMachineAPI: {
          machines: 1,
          productWrites: 13,
          perMachine: 13,
          byStep: {},
          providerWrites: 0,
        },
      },
    });
    expect(met.find((t) => t.target.startsWith("≤ 12 writes"))?.met).toBe(false);
    expect(met.find((t) => t.target.startsWith("0 writes"))?.met).toBe(false);
  });

  // Each letter a Machine in the store: upper case steady under ClusterAPI, lower case still Migrating.
  it.each([
    ["none steady", "abcd", 0, { all: false, next: 0 }],
    ["the first two steady", "ABcd", 0, { all: false, next: 2 }],
    ["resumes where the last call stopped", "ABCd", 2, { all: false, next: 3 }],
    ["every name steady", "ABCD", 2, { all: true, next: 4 }],
    [
      "a name found steady before is not any more: the final pass sees it",
      "aBCD",
      3,
      { all: false, next: 0 },
    ],
    ["a name the store does not hold is not steady", "ABD", 0, { all: false, next: 2 }],
  ])(
    "a fleet's handover is done when every name is steady at once (decision 105): %s",
    (_, held, from, expected) => {
      const machine = (name: string, authority: string) => ({
        apiVersion: "machine.openshift.io/v1beta1",
        kind: "Machine",
        metadata: { name, namespace: "openshift-machine-api" },
        status: {
          authoritativeAPI: authority,
          synchronizedAPI: authority,
          conditions: [{ type: "Synchronized", status: "True" }],
        },
      });
      const store = new Map(
        [...held].map((c) => [
          c.toLowerCase(),
          machine(c.toLowerCase(), c === c.toUpperCase() ? "ClusterAPI" : "Migrating"),
        ]),
      );
      expect(steadyFrom(["a", "b", "c", "d"], from, "ClusterAPI", (n) => store.get(n))).toEqual(expected);
    },
  );

  it("the cost per Machine is judged at each step of the fleet sizes (issue 25: 1,000 → 5,000 too)", () => {
    const row = (machines: number, msPerMachine: number) => ({
      machines,
      msPerMachine,
      handoverMs: machines * msPerMachine,
    });
    const targets = evaluateTargets({ scale: [row(100, 17), row(1000, 13), row(5000, 16.5)] });
    const flat = targets.filter((t) => t.target.startsWith("cost per Machine flat"));
    expect(flat.map((t) => [t.target, t.met])).toEqual([
      ["cost per Machine flat (100 → 1000: ≤ 1.25×)", true],
      ["cost per Machine flat (1000 → 5000: ≤ 1.25×)", false],
    ]);
    expect(targets.find((t) => t.target.startsWith("1,000 Machines"))?.value).toBe("13.00 s");
  });
});

describe("npm run bench, tiny mode", () => {
  it("runs admission, decision and memory end to end and writes its JSON result", async () => {
    const out = await mkdtemp(join(tmpdir(), "bench-test-"));
    try {
      const args = ["--import", "tsx", "bench/run.ts", "--quick", "--only", "admission,decision,memory"];
      args.push("--machines", "20", "--connections", "1", "--duration", "1", "--decision-rounds", "5");
      args.push("--admission-shell");
      // Figures differ between runtimes and heap settings (decision 92): the run names both.
      const env = { ...process.env, NODE_OPTIONS: "--max-semi-space-size=16" };
      const { stdout } = await run(process.execPath, [...args, "--out", out], { timeout: 150_000, env });
      expect(stdout).toMatch(/Admission .* vs bare Fastify HTTPS/);
      expect(stdout).toContain(
        `Node ${process.version} (NODE_OPTIONS=--max-semi-space-size=16); the product with --max-semi-space-size=32`,
      );
      const [file] = await readdir(out);
      const result = JSON.parse(await readFile(join(out, file as string), "utf8"));
      expect(result.host).toMatchObject({
        node: process.version,
        nodeOptions: "--max-semi-space-size=16",
        productNodeFlags: ["--max-semi-space-size=32"],
      });
      const [load] = result.sections.admission.runs;
      expect(load.connections).toBe(1);
      for (const side of [load.bare, load.product]) {
        expect(side.requests).toBeGreaterThan(0);
        expect(side.non2xx + side.errors).toBe(0);
      }
      // The review as kube-apiserver sends it, its objects' managedFields included, beside the target's rows.
      const kubeSent = result.sections.admission.withManagedFields;
      expect(kubeSent.bodyBytes).toBeGreaterThan(result.sections.admission.bodyBytes);
      expect(stdout).toMatch(/^10 \+mf /m);
      for (const side of [kubeSent.runs[0].bare, kubeSent.runs[0].product]) {
        expect(side.requests).toBeGreaterThan(0);
        expect(side.non2xx + side.errors).toBe(0);
      }
      // --admission-shell: the product without its engine, with and without the denial's line, same bare server.
      type Side = { requests: number; non2xx: number; errors: number };
      const shell = result.sections.admission.shell as {
        label: string;
        connections: number;
        bare: Side;
        product: Side;
      }[];
      expect(shell.map((r) => [r.label, r.connections])).toEqual([
        ["decision fixed", 10],
        ["decision fixed, no log line", 10],
      ]);
      for (const side of shell.flatMap((r) => [r.bare, r.product])) {
        expect(side.requests).toBeGreaterThan(0);
        expect(side.non2xx + side.errors).toBe(0);
      }
      expect(stdout).toMatch(/^10 fixed {2}/m);
      expect(stdout).toMatch(/^10 fixed, no line /m);
      expect(result.sections.decision.map((d: { review: string }) => d.review)).toEqual(
        expect.arrayContaining(["migration", "infra-machine"]),
      );
      expect(result.sections.memory.machines).toBe(20);
      expect(result.targets.find((t: { target: string }) => t.target.startsWith("≤ 12 writes")).met).toBe(
        "not run",
      );
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 180_000);

  it("measures one GET on the product's client against a bare Node client (the client section)", async () => {
    const out = await mkdtemp(join(tmpdir(), "bench-test-"));
    try {
      const args = ["--import", "tsx", "bench/run.ts", "--quick", "--only", "client"];
      args.push("--client-requests", "40", "--out", out);
      const { stdout } = await run(process.execPath, args, { timeout: 120_000 });
      expect(stdout).toMatch(/^Client \(one GET of a \d+-byte MAPI Machine, 8 in flight\)/m);
      const [file] = await readdir(out);
      const { client } = JSON.parse(await readFile(join(out, file as string), "utf8")).sections;
      expect(client).toMatchObject({ concurrency: 8, requestsPerRound: 40 });
      // A MAPI Machine as served, managedFields included: the requester checks every answer is that Machine,
      // with them from the bare client and without from the product's.
      expect(client.answerBytes).toBeGreaterThan(4_000);
      for (const side of [client.samples.product, client.samples.bare]) {
        expect(side).toHaveLength(4);
        for (const us of side) expect(us).toBeGreaterThan(0);
      }
      expect(client.ratio).toBeGreaterThan(0);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 150_000);

  it("hands over a MachineSet-owned fleet: the sets first, then their Machines (--scale-sets)", async () => {
    const out = await mkdtemp(join(tmpdir(), "bench-test-"));
    try {
      const args = ["--import", "tsx", "bench/run.ts", "--quick", "--only", "scale"];
      args.push("--scale", "5", "--scale-sets", "2", "--out", out);
      const { stdout } = await run(process.execPath, args, { timeout: 200_000 });
      expect(stdout).toMatch(/^5 in 2 sets \(sets \d+\.\d\d s\)/m);
      const [file] = await readdir(out);
      const result = JSON.parse(await readFile(join(out, file as string), "utf8"));
      const [row] = result.sections.scale;
      expect(row).toMatchObject({ machines: 5, machineSets: 2 });
      expect(row.error).toBeUndefined();
      // What parsing the fleet's objects costs the product, plain and its own way, in the same process.
      for (const parse of [row.watchEventParse, row.reviewParse]) expect(parse.ratio).toBeGreaterThan(0);
      expect(row.watchEventParse.events).toBe(15);
      // What converting the fleet's Machines costs the sync: plain, and its memo meeting new objects.
      expect(row.conversion).toMatchObject({ machines: 5 });
      expect(row.conversion.ratio).toBeGreaterThan(0);
      expect(row.setHandoverMs).toBeGreaterThan(0);
      // Every Machine went through the handover: the product flipped status.authoritativeAPI on each.
      expect(row.requestsPerMachine["product patch machine.openshift.io/machines/status"]).toBeGreaterThan(0);
      expect(Object.keys(row.reconcilesPerMachine)).toEqual(
        expect.arrayContaining(["machine-sync", "machineset-sync", "migration-machineset"]),
      );
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 240_000);
});
