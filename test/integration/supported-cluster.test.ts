/**
 * SPEC §0.1 for the life of the process, with the product spawned as `npm start` runs it (test/e2e/helpers.ts
 * `startProduct`: local mode, its own embedded API server): when the FeatureGate stops reporting
 * MachineAPIMigration the process says why and exits 0, so its pod restarts and decides again; and when the
 * platform's own migration controllers are scaled above zero, the next handover step is not written — a live
 * read refuses it, the product's controllers stop, and the MAPI object's status stays where it was. Waiting
 * polls for a state or a log line; nothing asserts elapsed time.
 */
import type { ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/kube/config.js";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import { type Product, startProduct } from "../e2e/helpers.js";
import { waitFor } from "../support/wait.js";

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";
const DEPLOYMENT: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};

const started: Product[] = [];
afterEach(async () => {
  for (const p of started.splice(0)) {
    if (p.child.exitCode === null) p.child.kill("SIGKILL");
    await rm(p.dir, { recursive: true, force: true });
  }
});

/** Everything the process writes from now on (startProduct's `output` is what it wrote until `ready:`). */
const follow = (child: ChildProcess): (() => string) => {
  let text = "";
  const collect = (c: Buffer) => {
    text += c.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return () => text;
};

const exitOf = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once("exit", (code) => resolve(code)));

/** Waits as test/support/wait.ts does, for up to a minute, probing every 50 ms. */
const poll = <T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> =>
  waitFor(what, probe, { timeoutMs: 60_000, intervalMs: 50 });

describe("SPEC §0.1 the supported-cluster checks hold for the life of the process", () => {
  it("the FeatureGate stops reporting MachineAPIMigration: the process says why and exits 0", async () => {
    const product = await startProduct("support-gate", ["--support-check-interval", "0.2"]);
    started.push(product);
    const output = follow(product.child);
    const exited = exitOf(product.child);
    const admin = connect({ kubeconfigPath: product.kubeconfig, context: "admin" }).client;

    const gate = await admin.get(KINDS.featureGate, "", "cluster");
    await admin.updateStatus(KINDS.featureGate, {
      ...gate,
      status: {
        featureGates: [{ version: "4.20.0", enabled: [], disabled: [{ name: "MachineAPIMigration" }] }],
      },
    });

    expect(await exited).toBe(0);
    const said = output()
      .split("\n")
      .find((l) => l.includes("no longer support the migration"));
    expect(said).toBeDefined();
    expect(said).toContain("exiting so that the pod restarts and decides again");
    expect(said).toContain("does not report MachineAPIMigration enabled");
  }, 120_000);

  it("the platform's migration controllers scaled above zero: the next handover step is not written", async () => {
    // The periodic re-read is out of the way (an hour): the handover step's own live read is what refuses.
    const product = await startProduct("support-platform", [
      "--seed",
      "demo",
      "--support-check-interval",
      "3600",
    ]);
    started.push(product);
    const output = follow(product.child);
    const admin = connect({ kubeconfigPath: product.kubeconfig, context: "admin" }).client;

    // A MachineAPI Machine ready to hand over: Running, synchronized, its CAPI twin provisioned.
    const machine = await poll("a MachineAPI Machine ready to hand over", async () => {
      for (const m of (await admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items) {
        if (getPath(m, ["status", "authoritativeAPI"]) !== "MachineAPI") continue;
        if (getPath(m, ["status", "phase"]) !== "Running") continue;
        if (conditionOf(m, "Synchronized")?.status !== "True") continue;
        const twin: KubeObject | undefined = await admin
          .get(KINDS.capiMachine, CAPI_NS, nameOf(m))
          .catch(() => undefined);
        if (getPath(twin, ["status", "initialization", "infrastructureProvisioned"]) === true)
          return nameOf(m);
      }
      return false;
    });

    // An upgrade brings the platform's own migration controllers back (cluster-capi-operator's Deployment).
    const labels = { "k8s-app": "capi-controllers" };
    await admin.create(DEPLOYMENT, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "capi-controllers", namespace: CAPI_NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: "machine-api-migration", image: "quay.io/openshift/capi:latest" }] },
        },
      },
    });

    await admin.patch(KINDS.mapiMachine, MAPI_NS, machine, {
      type: "merge",
      body: { spec: { authoritativeAPI: "ClusterAPI" } },
    });
    const refusal = await poll("the live read refusing the handover's first step", async () =>
      output()
        .split("\n")
        // The handover's first write (recording the acknowledgement, step 4) is the one refused.
        .find((l) => /handover step \w+ of Machine (\S+) not written/.exec(l)?.[1] === machine),
    );
    expect(refusal).toContain("runs the platform's own migration controllers");
    expect(refusal).toContain("the product's controllers stop (admission keeps serving)");

    const after = await admin.get(KINDS.mapiMachine, MAPI_NS, machine);
    expect(getPath(after, ["spec", "authoritativeAPI"])).toBe("ClusterAPI");
    expect(getPath(after, ["status", "authoritativeAPI"])).toBe("MachineAPI");
    // Admission keeps serving: the process is still up and answers readyz.
    expect(product.child.exitCode).toBeNull();
  }, 180_000);
});
