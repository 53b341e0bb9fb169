/**
 * `machine-api-migration preflight` as an admin runs it (issue 9): the real CLI as a child process
 * (`node --import tsx src/cli.ts preflight --kubeconfig F`) against a local API server seeded with the demo
 * plus a Machine whose providerSpec does not convert. It prints the supported-cluster check, one line per
 * object with its reasons indented beneath (the unconvertible field Kubernetes-style), the summary line,
 * and exits 1 because not everything could migrate.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { createMapiMachine, deviceIndexOne, type Harness, startSeededCluster } from "../ops/fixtures.js";
import { runCli as runProductCli } from "./helpers.js";

let h: Harness;

beforeAll(async () => {
  h = await startSeededCluster();
  await createMapiMachine(h.cluster, "worker-device", { providerSpec: deviceIndexOne() });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

// No in-cluster service variables and no kubeconfig of the person running the tests: the kubeconfig the test
// names is the only one.
const runCli = (args: readonly string[], env: NodeJS.ProcessEnv = {}) =>
  runProductCli(args, { home: h.dir, env, timeoutMs: 60_000 });

describe("cli preflight (child process)", () => {
  it("reports every MAPI object, the unconvertible field, the summary, and exits 1", async () => {
    const r = await runCli(["preflight", "--kubeconfig", h.cluster.kubeconfigPath]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^supported cluster: yes/);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^Machine\s+openshift-machine-api\/worker-device\s+MachineAPI\s+MachineAPI\s+\(unset\)\s+blocked \(to ClusterAPI\)$/,
      ),
    );
    expect(lines).toContain(
      "    admission migration-unconvertible: spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^Machine\s+openshift-machine-api\/demo-7xk2p-infra-0\s+ClusterAPI\s+ClusterAPI\s/,
      ),
    );
    expect(lines.at(-1)).toBe("6 objects: 0 could migrate now, 6 blocked");
  }, 60_000);

  it("-o json is machine-readable and exits 2 on a bad format", async () => {
    const json = await runCli(["preflight", "--kubeconfig", h.cluster.kubeconfigPath, "-o", "json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).summary).toEqual({ objects: 6, ready: 0, blocked: 6, migrating: 0 });
    const bad = await runCli(["preflight", "--kubeconfig", h.cluster.kubeconfigPath, "-o", "yaml"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("-o must be table or json");
  }, 60_000);

  it("reads the kubeconfig as kubectl does: KUBECONFIG (first existing of a list), then ~/.kube/config", async () => {
    const viaEnv = await runCli(["preflight", "-o", "json"], {
      KUBECONFIG: `${join(h.dir, "missing")}:${h.cluster.kubeconfigPath}`,
    });
    expect(viaEnv.stderr).toBe("");
    expect(viaEnv.code).toBe(1);
    expect(JSON.parse(viaEnv.stdout).summary.objects).toBe(6);

    const home = join(h.dir, "home");
    await mkdir(join(home, ".kube"), { recursive: true });
    await writeFile(join(home, ".kube", "config"), h.cluster.kubeconfigText);
    const viaHome = await runCli(["preflight", "-o", "json"], { HOME: home });
    expect(viaHome.stderr).toBe("");
    expect(viaHome.code).toBe(1);
    expect(JSON.parse(viaHome.stdout).summary.objects).toBe(6);
  }, 60_000);

  it("--context selects the context; an unknown context exits 2 naming --context", async () => {
    // The cluster's kubeconfig with a current context that reaches nothing; --context picks the admin one.
    const config = parse(h.cluster.kubeconfigText);
    config.clusters.push({ name: "dead", cluster: { server: "https://127.0.0.1:1" } });
    config.contexts.push({ name: "dead", context: { cluster: "dead", user: "admin" } });
    config["current-context"] = "dead";
    const path = join(h.dir, "dead-current.kubeconfig");
    await writeFile(path, stringify(config));
    const current = await runCli(["preflight"], { KUBECONFIG: path });
    expect(current.code).toBe(2);
    expect(current.stderr).toContain("cannot read the cluster");
    const chosen = await runCli(["preflight", "-o", "json", "--context", "admin"], { KUBECONFIG: path });
    expect(chosen.stderr).toBe("");
    expect(chosen.code).toBe(1);
    expect(JSON.parse(chosen.stdout).summary.objects).toBe(6);
    const unknown = await runCli(["preflight", "--context", "nope"], { KUBECONFIG: path });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`context "nope" (--context) is not in KUBECONFIG (${path})`);
  }, 60_000);

  it("with no kubeconfig anywhere and outside a pod it exits 2 saying where it looked", async () => {
    const r = await runCli(["preflight"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("preflight acts on a cluster");
    expect(r.stderr).toContain("KUBECONFIG");
  }, 60_000);
});
