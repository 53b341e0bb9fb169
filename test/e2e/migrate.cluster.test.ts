/**
 * `migrate` on the real control plane (issue 24, SPEC §12; `npm run test:cluster` only): etcd, kube-apiserver
 * and kube-controller-manager of Kubernetes 1.33, the product under its ServiceAccount with the demo seeded
 * and the stand-ins in this process (test/cluster/product.ts), and the real CLI as a child process with the
 * admin's kubeconfig. `--to ClusterAPI --max-in-flight 2` moves every MAPI object and `--to MachineAPI` brings
 * them back, with no cloud instance created or terminated in the stand-ins' ledger. The local server runs the
 * larger fleet and the failure paths (test/e2e/migrate*.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterProduct, startClusterProduct } from "../cluster/product.js";
import { mapiObjects, settled } from "./fleet.js";
import { runCli } from "./helpers.js";

let product: ClusterProduct;

const authorities = async (): Promise<string[]> =>
  (await mapiObjects(product))
    .map((o) => `${o.kind}/${o.metadata.name}=${o.spec.authoritativeAPI}/${o.status?.authoritativeAPI}`)
    .sort();

interface Ledger {
  instances: Array<{ instanceId: string; machineName: string; terminatedSeq?: number }>;
}
const instances = async () => {
  const l = (await product.ledger?.snapshot()) as Ledger | undefined;
  if (!l) throw new Error("the stand-ins' ledger is not in this process");
  return l.instances.map((i) => `${i.machineName}:${i.instanceId}:${i.terminatedSeq ?? "running"}`).sort();
};

beforeAll(async () => {
  product = await startClusterProduct("migrate-real", { simulateProviders: true });
  await settled(product, 5);
}, 240_000);

afterAll(async () => {
  await product?.stop();
});

describe("cli migrate on the real control plane", () => {
  it("--to ClusterAPI --max-in-flight 2, then --to MachineAPI: everything moves and back, no instance created or terminated", async () => {
    const before = await instances();
    expect(before.filter((i) => i.endsWith(":running"))).toHaveLength(3);
    const args = (to: string) => [
      "migrate",
      "--kubeconfig",
      product.kubeconfig,
      "--to",
      to,
      "--max-in-flight",
      "2",
    ];

    const there = await runCli(args("ClusterAPI"), { home: product.dir, timeoutMs: 180_000 });
    expect(there.stderr).toBe("");
    expect(there.code).toBe(0);
    expect(await authorities()).toEqual([
      "Machine/demo-7xk2p-infra-0=ClusterAPI/ClusterAPI",
      "Machine/demo-7xk2p-worker-us-east-1a-4qzbx=ClusterAPI/ClusterAPI",
      "Machine/demo-7xk2p-worker-us-east-1b-8n2vd=ClusterAPI/ClusterAPI",
      "MachineSet/demo-7xk2p-worker-us-east-1a=ClusterAPI/ClusterAPI",
      "MachineSet/demo-7xk2p-worker-us-east-1b=ClusterAPI/ClusterAPI",
    ]);
    expect(await instances()).toEqual(before);

    const back = await runCli(args("MachineAPI"), { home: product.dir, timeoutMs: 180_000 });
    expect(back.stderr).toBe("");
    expect(back.code).toBe(0);
    expect((await authorities()).every((a) => a.endsWith("=MachineAPI/MachineAPI"))).toBe(true);
    expect(await instances()).toEqual(before);
  }, 420_000);
});
