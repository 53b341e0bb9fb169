/**
 * Local mode's `--seed demo-providers` (SPEC §6): the demo transport ConfigMaps install completely on the
 * seeded AWS Infrastructure, seeding twice is harmless; and the `installer` subcommand refuses what it
 * cannot run (bad configuration, local mode, a kubeconfig that does not load) with exit 2.
 */
import { EventEmitter } from "node:events";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runInstallerCommand } from "../../src/installer/cli.js";
import { demoProviderConfigMaps, seedDemoProviders } from "../../src/installer/demo-providers.js";
import { TRANSPORT_LABELS } from "../../src/installer/model.js";
import { conditionOf } from "../../src/kube/object.js";
import { type Bed, kubeconfigFor, NS, startBed, TYPES } from "./harness.js";

const beds: Bed[] = [];
afterEach(async () => {
  for (const b of beds.splice(0)) await b.stop();
});

describe("demo providers", () => {
  it("are transport ConfigMaps for core and AWS", () => {
    expect(demoProviderConfigMaps(NS).map((c) => c.metadata?.labels)).toEqual([
      {
        [TRANSPORT_LABELS.name]: "cluster-api",
        [TRANSPORT_LABELS.type]: "core",
        [TRANSPORT_LABELS.version]: "v1.10.0",
      },
      {
        [TRANSPORT_LABELS.name]: "aws",
        [TRANSPORT_LABELS.type]: "infrastructure",
        [TRANSPORT_LABELS.version]: "v2.9.0",
      },
    ]);
  });

  it("seeded (twice) into the cluster, install completely", async () => {
    const bed = await startBed();
    beds.push(bed);
    const settings = { capiNamespace: NS, installerImagesConfigMap: "machine-api-migration-images" };
    await seedDemoProviders(bed.admin.client, settings);
    await seedDemoProviders(bed.admin.client, settings);
    await bed.start();
    const run = await bed.nextRun(0, (r) => r.report.kind === "installed");
    expect(run.outcome?.failures).toEqual([]);
    expect(conditionOf(await bed.clusterOperator(), "Available")?.status).toBe("True");
    expect((await bed.list(TYPES.deployments, NS)).map((d) => d.metadata?.name).sort()).toEqual([
      "capa-controller-manager",
      "capi-controller-manager",
    ]);
  });
});

describe("installer subcommand", () => {
  const io = () => {
    const err: string[] = [];
    return { err, io: { stdout: { write: () => true }, stderr: { write: (s: string) => err.push(s) } } };
  };
  const signals = new EventEmitter() as unknown as Pick<NodeJS.Process, "once" | "removeListener">;

  it.each([
    [
      ["--installer-cluster-operator", "cluster-api"],
      {},
      "setting installerClusterOperator may not be the platform's own cluster-api",
    ],
    [["extra"], {}, 'unexpected argument "extra"'],
    [[], {}, "installer mode acts on a cluster: run it in a pod or set kubeconfig (--kubeconfig)"],
    [
      ["--kubeconfig", "/nonexistent/kubeconfig"],
      {},
      "cannot load setting kubeconfig (--kubeconfig /nonexistent/kubeconfig)",
    ],
  ])("%j exits 2", async (args, env, message) => {
    const t = io();
    expect(await runInstallerCommand(args, env, t.io, signals)).toBe(2);
    expect(t.err.join("")).toContain(message);
  });

  it("with a kubeconfig: installs, reports on the ClusterOperator, and exits 0 on SIGTERM", async () => {
    const bed = await startBed();
    beds.push(bed);
    await seedDemoProviders(bed.admin.client, {
      capiNamespace: NS,
      installerImagesConfigMap: "machine-api-migration-images",
    });
    const dir = await mkdtemp(join(tmpdir(), "installer-command-"));
    const kubeconfig = join(dir, "kubeconfig");
    await writeFile(kubeconfig, kubeconfigFor(bed.cluster.kubeconfigText, "installer"));
    const emitter = new EventEmitter();
    const t = io();
    const exit = runInstallerCommand(
      ["--kubeconfig", kubeconfig, "--log-level", "silent"],
      {},
      t.io,
      emitter as never,
    );
    await vi.waitFor(
      async () => expect(conditionOf(await bed.clusterOperator(), "Available")?.status).toBe("True"),
      {
        timeout: 15_000,
        interval: 50,
      },
    );
    emitter.emit("SIGTERM");
    expect(await exit).toBe(0);
    expect(emitter.listenerCount("SIGTERM")).toBe(0);
    expect(t.err).toEqual([]);
  });
});
