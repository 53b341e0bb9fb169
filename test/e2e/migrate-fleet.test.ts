/**
 * `migrate` on a fleet (issue 24): ten more MAPI MachineSets of twenty replicas each are added to the
 * `--seed demo` cluster in local mode — the simulated machine-api-operator creates and provisions their 200
 * Machines, the sync gives each a CAPI twin — and `migrate --to ClusterAPI --max-in-flight 40 -o json`
 * moves all 215 objects in waves (MachineSets first), with no instance created or terminated.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  getFromWebhook,
  type Product,
  runKubectl,
  runCli as runProductCli,
  startProduct,
} from "./helpers.js";

let product: Product;
const MAPI_NS = "openshift-machine-api";
const SETS = 10;
const REPLICAS = 20;

const runCli = (args: readonly string[]) =>
  runProductCli(args, { home: product.dir, timeoutMs: 240_000, maxBuffer: 64 * 1024 * 1024 });

interface MapiObject {
  kind: string;
  name: string;
  spec: string;
  status: string;
  phase: string;
  synchronized: string;
}

/** One short line per object (the JSON of 200 Machines outgrows execFile's buffer). */
const mapiObjects = async (): Promise<MapiObject[]> => {
  const r = await runKubectl(product.dir, product.kubeconfig, [
    "get",
    "machinesets.machine.openshift.io,machines.machine.openshift.io",
    "-n",
    MAPI_NS,
    "--no-headers",
    "-o",
    'custom-columns=KIND:.kind,NAME:.metadata.name,SPEC:.spec.authoritativeAPI,STATUS:.status.authoritativeAPI,PHASE:.status.phase,SYNC:.status.conditions[?(@.type=="Synchronized")].status',
  ]);
  if (r.code !== 0) throw new Error(`kubectl get: ${r.code} ${r.stderr}`);
  return r.stdout
    .trim()
    .split("\n")
    .map((line) => {
      const [kind, name, spec, status, phase, synchronized] = line.trim().split(/\s+/);
      return {
        kind: kind!,
        name: name!,
        spec: spec!,
        status: status!,
        phase: phase!,
        synchronized: synchronized!,
      };
    });
};

const steady = (o: MapiObject) =>
  o.synchronized === "True" && o.status === o.spec && (o.kind === "MachineSet" || o.phase === "Running");

const fleetSet = (template: Record<string, unknown>, name: string) => {
  const t = structuredClone(template) as {
    metadata: Record<string, unknown>;
    spec: {
      replicas: number;
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> } };
    };
  };
  t.metadata = { name, namespace: MAPI_NS, labels: t.metadata.labels };
  t.spec.replicas = REPLICAS;
  t.spec.selector.matchLabels["machine.openshift.io/cluster-api-machineset"] = name;
  t.spec.template.metadata.labels["machine.openshift.io/cluster-api-machineset"] = name;
  return { ...t, status: undefined };
};

beforeAll(async () => {
  product = await startProduct("fleet", ["--seed", "demo"]);
  const got = await runKubectl(product.dir, product.kubeconfig, [
    "get",
    "machinesets.machine.openshift.io/demo-7xk2p-worker-us-east-1a",
    "-n",
    MAPI_NS,
    "-o",
    "json",
  ]);
  const template = JSON.parse(got.stdout);
  const list = {
    apiVersion: "v1",
    kind: "List",
    items: Array.from({ length: SETS }, (_, i) => fleetSet(template, `fleet-${String(i).padStart(2, "0")}`)),
  };
  const file = join(product.dir, "fleet.json");
  await writeFile(file, JSON.stringify(list));
  const created = await runKubectl(product.dir, product.kubeconfig, [
    "create",
    "--validate=false",
    "-f",
    file,
  ]);
  if (created.code !== 0) throw new Error(created.stderr);
  const total = SETS * (REPLICAS + 1) + 5;
  let objects: MapiObject[] = [];
  for (let i = 0; i < 240; i++) {
    objects = await mapiObjects();
    if (objects.length === total && objects.every(steady)) return;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw new Error(
    `fleet not settled: ${objects.filter((o) => !steady(o)).length} of ${objects.length} not steady`,
  );
}, 300_000);

afterAll(async () => {
  if (product?.child.exitCode === null) product.child.kill("SIGKILL");
  if (product?.dir) await rm(product.dir, { recursive: true, force: true });
});

describe("cli migrate on a fleet of 200 Machines in 10 MachineSets (local mode)", () => {
  it("--to ClusterAPI --max-in-flight 40 moves every object, MachineSets first, no instance created or terminated", async () => {
    const instances = async () =>
      ((await getFromWebhook(product, "/debug/instances")) as { instances: unknown[] }).instances;
    const before = await instances();
    expect(before).toHaveLength(SETS * REPLICAS + 3);

    const r = await runCli([
      "migrate",
      "--kubeconfig",
      product.kubeconfig,
      "--to",
      "ClusterAPI",
      "--max-in-flight",
      "40",
      "-o",
      "json",
    ]);
    expect(r.stderr).toBe("");
    const events = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({
      event: "summary",
      code: 0,
      objects: SETS * (REPLICAS + 1) + 5,
      blocked: 0,
    });
    expect(r.code).toBe(0);
    const waves = events.filter((e) => e.event === "wave");
    expect(waves[0]).toMatchObject({ wave: 1, group: "MachineSets" });
    expect(waves[0].objects).toHaveLength(12);
    expect(Math.max(...waves.map((w) => w.objects.length))).toBeLessThanOrEqual(40);

    const after = await mapiObjects();
    expect(after.filter((o) => o.status !== "ClusterAPI").map((o) => o.name)).toEqual([]);
    expect(await instances()).toEqual(before);
  }, 300_000);
});
