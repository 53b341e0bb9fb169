/**
 * `npm start -- --seed demo-openstack` as an admin on OpenStack meets it (issue 23): the product in local mode
 * serves the Infrastructure's platform — the stand-ins for MAO, Cluster API and CAPO provision the seeded
 * Machines with `openstack:///…` providerIDs, the sync gives each a CAPI Machine and an OpenStackMachine, and
 * the real kubectl and `migrate` CLI hand every MachineSet and Machine to ClusterAPI and back. The simulated
 * cloud's ledger shows the same three servers throughout: none created twice, leaked or terminated.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mapiObjects, settled } from "./fleet.js";
import { getFromWebhook, type Product, runCli, runKubectl, startProduct } from "./helpers.js";

let product: Product;

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";
const kubectl = (args: string[]) => runKubectl(product.dir, product.kubeconfig, args);
const migrate = (...rest: string[]) =>
  runCli(["migrate", "--kubeconfig", product.kubeconfig, ...rest], { home: product.dir, timeoutMs: 120_000 });

interface Ledger {
  instances: Array<{ instanceId: string; machineName: string; terminatedSeq?: number }>;
}
const ledger = async () => {
  const l = (await getFromWebhook(product, "/debug/instances")) as Ledger;
  return l.instances
    .map((i) => ({ id: i.instanceId, machine: i.machineName, terminated: i.terminatedSeq }))
    .sort((a, b) => a.machine.localeCompare(b.machine));
};

const authorities = async (): Promise<Record<string, string>> =>
  Object.fromEntries(
    (await mapiObjects(product)).map((o) => [
      `${o.kind}/${o.metadata.name}`,
      `${o.spec.authoritativeAPI}/${o.status?.authoritativeAPI}`,
    ]),
  );

const SETS = ["MachineSet/demo-7xk2p-worker-az-a", "MachineSet/demo-7xk2p-worker-az-b"];
const MACHINES = [
  "Machine/demo-7xk2p-infra-0",
  "Machine/demo-7xk2p-worker-az-a-4qzbx",
  "Machine/demo-7xk2p-worker-az-b-8n2vd",
];
const everyAt = (authority: string) =>
  Object.fromEntries([...SETS, ...MACHINES].map((k) => [k, `${authority}/${authority}`]));

/** `kind/name → paused-by` of the OpenStackMachines (or templates) kubectl lists. */
const openStackObjects = async (resource: string) => {
  const r = await kubectl(["get", resource, "-n", CAPI_NS, "-o", "json"]);
  expect(r.stderr).toBe("");
  const items = JSON.parse(r.stdout).items as Array<{
    apiVersion: string;
    metadata: { name: string; annotations?: Record<string, string>; finalizers?: string[] };
    spec: { providerID?: string };
  }>;
  return items;
};

beforeAll(async () => {
  product = await startProduct("openstack", ["--seed", "demo-openstack"]);
  await settled(product, 5);
}, 120_000);

afterAll(async () => {
  if (product?.child.exitCode === null) product.child.kill("SIGKILL");
  if (product?.dir) await rm(product.dir, { recursive: true, force: true });
});

describe("npm start -- --seed demo-openstack (local mode on OpenStack)", () => {
  it("the stand-ins provision servers and the sync mirrors each Machine as a CAPI Machine and an OpenStackMachine", async () => {
    const table = (await kubectl(["get", "machines.machine.openshift.io", "-n", MAPI_NS])).stdout;
    expect(table.match(/Running/g)).toHaveLength(3);
    expect(table).toMatch(/demo-7xk2p-worker-az-a-4qzbx\s+Running\s+m1\.xlarge/);

    const machines = await openStackObjects("openstackmachines.infrastructure.cluster.x-k8s.io");
    expect(machines.map((m) => m.metadata.name).sort()).toEqual([
      "demo-7xk2p-infra-0",
      "demo-7xk2p-worker-az-a-4qzbx",
      "demo-7xk2p-worker-az-b-8n2vd",
    ]);
    expect(new Set(machines.map((m) => m.apiVersion))).toEqual(
      new Set(["infrastructure.cluster.x-k8s.io/v1beta1"]),
    );
    const byName = Object.fromEntries(machines.map((m) => [m.metadata.name, m]));
    // The ClusterAPI-authoritative Machine's OpenStackMachine is CAPO's: unpaused, with CAPO's finalizer.
    expect(byName["demo-7xk2p-infra-0"]?.metadata.annotations?.["cluster.x-k8s.io/paused"]).toBeUndefined();
    expect(byName["demo-7xk2p-infra-0"]?.metadata.finalizers).toContain(
      "openstackmachine.infrastructure.cluster.x-k8s.io",
    );
    // The MachineAPI-authoritative Machines' mirrors are paused by the product and carry no CAPO finalizer.
    for (const name of ["demo-7xk2p-worker-az-a-4qzbx", "demo-7xk2p-worker-az-b-8n2vd"]) {
      expect(byName[name]?.metadata.annotations?.["machine-api-migration.openshift.io/paused-by"]).toBe(
        "machine-api-migration",
      );
      expect(byName[name]?.metadata.finalizers ?? []).not.toContain(
        "openstackmachine.infrastructure.cluster.x-k8s.io",
      );
    }
    const templates = await openStackObjects("openstackmachinetemplates.infrastructure.cluster.x-k8s.io");
    expect(templates).toHaveLength(2);

    const live = (await ledger()).filter((i) => i.terminated === undefined);
    expect(live.map((i) => i.machine)).toEqual([
      "demo-7xk2p-infra-0",
      "demo-7xk2p-worker-az-a-4qzbx",
      "demo-7xk2p-worker-az-b-8n2vd",
    ]);
    for (const name of ["demo-7xk2p-worker-az-a-4qzbx", "demo-7xk2p-worker-az-b-8n2vd"])
      expect(byName[name]?.spec.providerID).toMatch(/^openstack:\/\/\/[0-9a-f-]{36}$/);
  });

  it("an OpenStackMachine field the providerSpec cannot hold is refused, naming the rule", async () => {
    const r = await kubectl([
      "patch",
      "openstackmachines.infrastructure.cluster.x-k8s.io/demo-7xk2p-infra-0",
      "-n",
      CAPI_NS,
      "--type=merge",
      "-p",
      '{"spec":{"flavorID":"5f3a"}}',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/openstack-unsupported-fields/);
    expect(r.stderr).toMatch(/flavorID/);
  });

  it("migrate --to ClusterAPI, then --to MachineAPI: every object handed over both ways on the same servers", async () => {
    const before = await ledger();
    expect(before.filter((i) => i.terminated === undefined)).toHaveLength(3);

    const there = await migrate("--to", "ClusterAPI", "--max-in-flight", "2");
    expect(there.stderr).toBe("");
    expect(there.code).toBe(0);
    expect(await authorities()).toEqual(everyAt("ClusterAPI"));
    // CAPO now runs every server: each OpenStackMachine is unpaused and holds CAPO's finalizer.
    for (const m of await openStackObjects("openstackmachines.infrastructure.cluster.x-k8s.io")) {
      expect(m.metadata.annotations?.["cluster.x-k8s.io/paused"]).toBeUndefined();
      expect(m.metadata.finalizers).toContain("openstackmachine.infrastructure.cluster.x-k8s.io");
    }
    expect(await ledger()).toEqual(before);

    const back = await migrate("--to", "MachineAPI", "--max-in-flight", "2");
    expect(back.stderr).toBe("");
    expect(back.code).toBe(0);
    expect(await authorities()).toEqual(everyAt("MachineAPI"));
    for (const m of await openStackObjects("openstackmachines.infrastructure.cluster.x-k8s.io")) {
      expect(m.metadata.annotations?.["machine-api-migration.openshift.io/paused-by"]).toBe(
        "machine-api-migration",
      );
      expect(m.metadata.finalizers ?? []).not.toContain("openstackmachine.infrastructure.cluster.x-k8s.io");
    }
    expect(await ledger()).toEqual(before);
  }, 240_000);
});
