/**
 * `npm start -- --seed demo` as a person meets it (issue 3; spawned as the `tsx src/cli.ts serve` that npm start runs): it starts its embedded API server and
 * webhook in a child process (here also the in-process installer with the demo providers), prints `ready:` with the kubeconfig, and the real kubectl sees the seeded
 * machines and the webhook's explanation when it edits a non-authoritative copy. SIGTERM stops it with 0.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getFromWebhook, type Product, runKubectl, startProduct } from "./helpers.js";

let product: Product;
let dir: string;
let kubeconfig: string;

const kubectl = (args: string[]) => runKubectl(dir, kubeconfig, args);

beforeAll(async () => {
  product = await startProduct("local", ["--seed", "demo,demo-providers", "--with-installer"]);
  ({ dir, kubeconfig } = product);
}, 90_000);

afterAll(async () => {
  if (product?.child.exitCode === null) product.child.kill("SIGKILL");
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("npm start -- --seed demo (local mode)", () => {
  it("the simulated providers provision the seeded Machines and the sync gives each a CAPI twin", async () => {
    let table = "";
    for (let i = 0; i < 150; i++) {
      table = (await kubectl(["get", "machines.machine.openshift.io", "-n", "openshift-machine-api"])).stdout;
      if ((table.match(/Running/g) ?? []).length === 3 && /infra-0\s+Running\s+m6i/.test(table)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(table).toMatch(/NAME\s+PHASE\s+TYPE\s+REGION\s+ZONE\s+AGE/);
    expect(table).toMatch(/demo-7xk2p-infra-0\s+Running\s+m6i\.xlarge\s+us-east-1\s+us-east-1c/);
    expect(table.match(/Running/g)).toHaveLength(3);

    // Every MAPI Machine has a CAPI twin; the MAPI-authoritative ones are paused with the product's marker.
    let twins: Array<{ metadata: { name: string; annotations?: Record<string, string> } }> = [];
    for (let i = 0; i < 100 && twins.length < 3; i++) {
      const r = await kubectl([
        "get",
        "machines.cluster.x-k8s.io",
        "-n",
        "openshift-cluster-api",
        "-o",
        "json",
      ]);
      twins = JSON.parse(r.stdout).items;
      if (twins.length < 3) await new Promise((r) => setTimeout(r, 200));
    }
    const paused = Object.fromEntries(
      twins.map((t) => [
        t.metadata.name,
        t.metadata.annotations?.["machine-api-migration.openshift.io/paused-by"],
      ]),
    );
    expect(paused).toEqual({
      "demo-7xk2p-infra-0": undefined,
      "demo-7xk2p-worker-us-east-1a-4qzbx": "machine-api-migration",
      "demo-7xk2p-worker-us-east-1b-8n2vd": "machine-api-migration",
    });
  });

  it("shows the simulated instance ledger on the webhook port: one live instance per Machine", async () => {
    const ledger = (await getFromWebhook(product, "/debug/instances")) as {
      instances: Array<{ machineName: string; terminatedSeq?: number }>;
    };
    const live = ledger.instances.filter((i) => i.terminatedSeq === undefined).map((i) => i.machineName);
    expect(live.sort()).toEqual([
      "demo-7xk2p-infra-0",
      "demo-7xk2p-worker-us-east-1a-4qzbx",
      "demo-7xk2p-worker-us-east-1b-8n2vd",
    ]);
  });

  it("refuses an edit of the non-authoritative MAPI copy with the webhook's explanation", async () => {
    for (let i = 0; i < 100; i++) {
      const r = await kubectl([
        "get",
        "machines.machine.openshift.io/demo-7xk2p-infra-0",
        "-n",
        "openshift-machine-api",
        "-o",
        "jsonpath={.status.authoritativeAPI}",
      ]);
      if (r.stdout === "ClusterAPI") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const r = await kubectl([
      "patch",
      "machines.machine.openshift.io/demo-7xk2p-infra-0",
      "-n",
      "openshift-machine-api",
      "--type",
      "merge",
      "-p",
      '{"spec":{"providerSpec":{"value":{"instanceType":"m6i.2xlarge"}}}}',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'admission webhook "deny.machine-api-migration.openshift.io" denied the request: MAPI Machine openshift-machine-api/demo-7xk2p-infra-0 is not authoritative (status.authoritativeAPI=ClusterAPI): spec.providerSpec.value.instanceType changed. Edit the Cluster API copy instead: oc edit awsmachines.infrastructure.cluster.x-k8s.io/demo-7xk2p-infra-0 -n openshift-cluster-api',
    );
    const after = await kubectl([
      "get",
      "machines.machine.openshift.io/demo-7xk2p-infra-0",
      "-n",
      "openshift-machine-api",
      "-o",
      "json",
    ]);
    expect(JSON.parse(after.stdout).spec.providerSpec.value.instanceType).toBe("m6i.xlarge");
  });

  it("lets the authoritative CAPI copy be edited (the mirror of the refusal)", async () => {
    const r = await kubectl([
      "label",
      "machines.cluster.x-k8s.io/demo-7xk2p-infra-0",
      "-n",
      "openshift-cluster-api",
      "team=infra",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("a refused delete names the -guard webhook (SPEC §2.2: a webhook named `warn` that denies confuses the reader)", async () => {
    // Server-side dry run: the webhooks are called (sideEffects None) and nothing is deleted.
    const r = await kubectl([
      "delete",
      "clusters.cluster.x-k8s.io/demo-7xk2p",
      "-n",
      "openshift-cluster-api",
      "--dry-run=server",
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'admission webhook "guard.machine-api-migration.openshift.io" denied the request: Deleting CAPI Cluster openshift-cluster-api/demo-7xk2p needs confirmation',
    );
    const still = await kubectl([
      "get",
      "clusters.cluster.x-k8s.io/demo-7xk2p",
      "-n",
      "openshift-cluster-api",
    ]);
    expect(still.code).toBe(0);
  });

  it("--with-installer --seed demo-providers installs the core and AWS providers and reports on its ClusterOperator", async () => {
    let available = "";
    for (let i = 0; i < 100 && available !== "True"; i++) {
      const r = await kubectl([
        "get",
        "clusteroperators.config.openshift.io/machine-api-migration-installer",
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Available")].status}',
      ]);
      available = r.stdout.trim();
      if (available !== "True") await new Promise((r) => setTimeout(r, 200));
    }
    expect(available).toBe("True");
    const deployments = await kubectl([
      "get",
      "deployments.apps",
      "-n",
      "openshift-cluster-api",
      "-o",
      "name",
    ]);
    expect(deployments.stdout.split("\n").filter(Boolean).sort()).toEqual([
      "deployment.apps/capa-controller-manager",
      "deployment.apps/capi-controller-manager",
    ]);
  });

  it("stops with exit code 0 on SIGTERM", async () => {
    const exited = new Promise<number | null>((resolve) =>
      product.child.once("exit", (code) => resolve(code)),
    );
    product.child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
