/**
 * Issue 11 item 4 (SPEC §7, §3.2): two product processes against one local API server (a child process that
 * also runs the simulated providers and the instance ledger), short lease timings. N Machines are flipped to
 * Cluster API at once; in the middle of the handovers the leader gets SIGKILL. The other process takes the
 * Lease and finishes every handover. An observer cache in this process folds every watch event through
 * `observeInvariants` (I1–I4); the ledger (I6) must be clean at the end. Size: RELIABILITY_FAILOVER_*.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { type Cache, createCache } from "../src/kube/cache.js";
import { systemClock } from "../src/kube/clock.js";
import { connect } from "../src/kube/config.js";
import { KINDS } from "../src/kube/kinds.js";
import { conditionOf, getPath, type KubeObject, nameOf } from "../src/kube/object.js";
import { mapiMachine } from "../src/local/seed.js";
import { readHandoverSnapshot } from "../src/migration/read-snapshot.js";
import { writeDevelopmentCertificates } from "../src/server/certs.js";
import {
  type InvariantState,
  initialInvariantState,
  observeInvariants,
  type Violation,
} from "../test/migration/invariants.js";
import { FAILOVER } from "./params.js";
import { type Product, startProduct } from "./product.js";
import { recordFigures } from "./report.js";

const ns = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };
const dir = mkdtempSync(join(tmpdir(), "reliability-failover-"));
const children: ChildProcess[] = [];
let observer: Cache | undefined;
afterAll(async () => {
  await observer?.stop();
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(100);
  }
}

async function startCluster(): Promise<{ controller: string; admin: string; ledger: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "reliability/fixtures/failover-cluster.ts", join(dir, "cluster")],
    {
      cwd: join(import.meta.dirname, ".."),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const m = await until(
    "the API server child",
    () =>
      /^ready: controller=(\S+) admin=(\S+) ledger=(\S+)/m.exec(out) ??
      (child.exitCode !== null && Promise.reject(new Error(out))),
    60_000,
  );
  return { controller: m[1]!, admin: m[2]!, ledger: m[3]! };
}

describe("item 4: leader failover mid-handover", () => {
  it(`SIGKILL the leader during ${FAILOVER.machines} concurrent handovers: the other takes over, all complete, I1–I4 and the ledger hold`, async () => {
    const cluster = await startCluster();
    const admin = connect({ kubeconfigText: readFileSync(cluster.admin, "utf8"), context: "admin" }).client;
    const certs = join(dir, "certs");
    await writeDevelopmentCertificates(certs, ["localhost", "127.0.0.1"]);
    const product = (which: string) =>
      startProduct(
        [
          "--kubeconfig",
          cluster.controller,
          "--webhook-port",
          "0",
          "--webhook-host",
          "127.0.0.1",
          "--state-dir",
          join(dir, which),
          "--tls-cert-file",
          join(certs, "tls.crt"),
          "--tls-key-file",
          join(certs, "tls.key"),
          "--tls-ca-file",
          join(certs, "ca.crt"),
          "--shutdown-delay",
          "0",
          "--lease-duration",
          String(FAILOVER.leaseDuration),
          "--renew-deadline",
          String(FAILOVER.renewDeadline),
          "--retry-period",
          String(FAILOVER.retryPeriod),
        ],
        dir,
      );
    const products: Product[] = [await product("a"), await product("b")];
    for (const p of products) children.push(p.child);

    // The observer: every event of a watched kind re-reads the handover of the Machine it concerns.
    observer = createCache({
      transport: connect({ kubeconfigText: readFileSync(cluster.admin, "utf8"), context: "admin" }).transport,
      clock: systemClock,
      logger: pino({ level: "silent" }),
    });
    const names = Array.from({ length: FAILOVER.machines }, (_, i) => `failover-m${i}`);
    const states = new Map<string, InvariantState>();
    const violations: Array<Violation & { name: string }> = [];
    let observed = 0;
    const fold = (o: KubeObject) => {
      const name = nameOf(o);
      if (!names.includes(name)) return;
      const snapshot = readHandoverSnapshot(observer!, "Machine", name, ns);
      const r = observeInvariants(states.get(name) ?? initialInvariantState, snapshot);
      states.set(name, r.state);
      observed++;
      for (const v of r.violations) violations.push({ ...v, name });
    };
    for (const [type, namespace] of [
      [KINDS.mapiMachine, ns.mapiNamespace],
      [KINDS.capiMachine, ns.capiNamespace],
      [KINDS.awsMachine, ns.capiNamespace],
    ] as const)
      observer
        .informerFor(type, namespace)
        .addHandlers({ onAdd: fold, onUpdate: (_p, c) => fold(c), onDelete: fold });
    await observer.waitForSync(30_000);

    for (const [i, name] of names.entries())
      await admin.create(KINDS.mapiMachine, mapiMachine(ns, name, ["a", "b", "c"][i % 3]!));
    const mapi = () =>
      observer!.list(KINDS.mapiMachine, ns.mapiNamespace).filter((o) => names.includes(nameOf(o)));
    const synced = (o: KubeObject, authority: string) =>
      getPath(o, ["status", "authoritativeAPI"]) === authority &&
      getPath(o, ["status", "synchronizedAPI"]) === authority &&
      conditionOf(o, "Synchronized")?.status === "True";
    await until(
      "every Machine Running and synchronized under MachineAPI",
      () => {
        const all = mapi();
        return (
          all.length === names.length &&
          all.every((o) => getPath(o, ["status", "phase"]) === "Running" && synced(o, "MachineAPI"))
        );
      },
      FAILOVER.convergeSeconds * 1000,
    );

    const leaderIndex =
      (await until(
        "a leader",
        () => {
          const i = products.findIndex((p) => p.output().includes("started leading"));
          return i >= 0 ? i + 1 : undefined;
        },
        30_000,
      )) - 1;
    const leader = products[leaderIndex]!;
    const follower = products[1 - leaderIndex]!;

    await Promise.all(
      names.map((name) =>
        admin.patch(KINDS.mapiMachine, ns.mapiNamespace, name, {
          type: "merge",
          body: { spec: { authoritativeAPI: "ClusterAPI" } },
        }),
      ),
    );
    // Mid-handover: some Machines already Migrating, not all of them done.
    const midway = await until(
      "handovers under way",
      () => {
        const all = mapi();
        const migrating = all.filter(
          (o) => getPath(o, ["status", "authoritativeAPI"]) === "Migrating",
        ).length;
        const done = all.filter((o) => synced(o, "ClusterAPI")).length;
        return migrating + done >= Math.ceil(names.length / 4) && done < names.length
          ? { migrating, done }
          : undefined;
      },
      60_000,
    );
    const killedAt = performance.now();
    leader.child.kill("SIGKILL");
    await until(
      "the follower leads",
      () => follower.output().includes("started leading"),
      FAILOVER.convergeSeconds * 1000,
    );
    const tookOverAt = performance.now();
    await until(
      "every handover complete",
      () => {
        const all = mapi();
        return all.length === names.length && all.every((o) => synced(o, "ClusterAPI"));
      },
      FAILOVER.convergeSeconds * 1000,
    );
    const completedAt = performance.now();
    await sleep(2_000); // let the stand-ins settle before the ledger is read
    const ledger = (await (await fetch(cluster.ledger)).json()) as {
      snapshot: { instances: unknown[] };
      violations: string[];
    };

    recordFigures("4-leader-failover", {
      machines: FAILOVER.machines,
      lease: {
        duration: FAILOVER.leaseDuration,
        renewDeadline: FAILOVER.renewDeadline,
        retryPeriod: FAILOVER.retryPeriod,
      },
      atKill: midway,
      secondsKillToTakeover: Math.round(tookOverAt - killedAt) / 1000,
      takeoverBoundSeconds: FAILOVER.leaseDuration + FAILOVER.retryPeriod,
      secondsKillToAllComplete: Math.round(completedAt - killedAt) / 1000,
      observedEvents: observed,
      invariantViolations: violations.length,
      instances: ledger.snapshot.instances.length,
      ledgerViolations: ledger.violations.length,
    });
    expect(violations).toEqual([]);
    expect(ledger.violations).toEqual([]);
    expect(ledger.snapshot.instances).toHaveLength(FAILOVER.machines);
    expect(observed).toBeGreaterThan(FAILOVER.machines * 4);
  });
});
