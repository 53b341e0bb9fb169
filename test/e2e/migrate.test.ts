/**
 * `machine-api-migration migrate` as an admin runs it (issue 24, SPEC §12): the product in local mode with
 * `--seed demo` (webhook, controllers, simulated providers), and the real CLI as a child process against
 * its kubeconfig. `--to ClusterAPI --max-in-flight 2` moves every MAPI MachineSet and Machine in waves and
 * the simulated cloud's ledger shows no instance created or terminated; `--to MachineAPI` brings them back;
 * a run interrupted with SIGINT mid-way exits 1 and, run again, completes; an object preflight's checks
 * block (a providerSpec that does not convert) is reported with admission's message and the run exits 1;
 * a flip that admission refuses all the same (an organisation's own webhook) stops the run with its message.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { startValidatingWebhook } from "../support/webhook.js";
import { mapiObjects, settled } from "./fleet.js";
import {
  cliEnv,
  getFromWebhook,
  type Product,
  runKubectl,
  runCli as runProductCli,
  startProduct,
} from "./helpers.js";

let product: Product;

const MAPI_NS = "openshift-machine-api";

const runCli = (args: readonly string[]) => runProductCli(args, { home: product.dir, timeoutMs: 120_000 });

const migrateArgs = (...rest: string[]) => ["migrate", "--kubeconfig", product.kubeconfig, ...rest];

const authorities = async (): Promise<Record<string, string>> =>
  Object.fromEntries(
    (await mapiObjects(product)).map((o) => [
      `${o.kind}/${o.metadata.name}`,
      `${o.spec.authoritativeAPI}/${o.status?.authoritativeAPI}`,
    ]),
  );

interface Ledger {
  instances: Array<{ instanceId: string; machineName: string; terminatedSeq?: number }>;
}
const ledger = async () => {
  const l = (await getFromWebhook(product, "/debug/instances")) as Ledger;
  return l.instances.map((i) => ({ id: i.instanceId, machine: i.machineName, terminated: i.terminatedSeq }));
};

beforeAll(async () => {
  product = await startProduct("migrate", ["--seed", "demo"]);
  await settled(product, 5);
}, 120_000);

afterAll(async () => {
  if (product?.child.exitCode === null) product.child.kill("SIGKILL");
  if (product?.dir) await rm(product.dir, { recursive: true, force: true });
});

const ALL = [
  "MachineSet/demo-7xk2p-worker-us-east-1a",
  "MachineSet/demo-7xk2p-worker-us-east-1b",
  "Machine/demo-7xk2p-infra-0",
  "Machine/demo-7xk2p-worker-us-east-1a-4qzbx",
  "Machine/demo-7xk2p-worker-us-east-1b-8n2vd",
];
const everyAt = (authority: string) => Object.fromEntries(ALL.map((k) => [k, `${authority}/${authority}`]));

describe("cli migrate (local mode, --seed demo)", () => {
  it("--to ClusterAPI --max-in-flight 2 moves every MachineSet, then their Machines, with no instance created or terminated", async () => {
    const before = await ledger();
    expect(before.filter((i) => i.terminated === undefined)).toHaveLength(3);

    const dry = await runCli(migrateArgs("--to", "ClusterAPI", "--max-in-flight", "2", "--dry-run"));
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      [
        "migrate to ClusterAPI: 5 objects — 1 done, 0 in flight, 4 to flip in 2 waves (at most 2 at a time), 0 blocked",
        `wave 1 (MachineSets): MachineSet ${MAPI_NS}/demo-7xk2p-worker-us-east-1a, MachineSet ${MAPI_NS}/demo-7xk2p-worker-us-east-1b`,
        `wave 2 (members): Machine ${MAPI_NS}/demo-7xk2p-worker-us-east-1a-4qzbx (after MachineSet demo-7xk2p-worker-us-east-1a), Machine ${MAPI_NS}/demo-7xk2p-worker-us-east-1b-8n2vd (after MachineSet demo-7xk2p-worker-us-east-1b)`,
        "dry run: nothing was changed.",
        "",
      ].join("\n"),
    );
    expect((await authorities())["MachineSet/demo-7xk2p-worker-us-east-1a"]).toBe("MachineAPI/MachineAPI");

    const r = await runCli(migrateArgs("--to", "ClusterAPI", "--max-in-flight", "2"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    const at = (text: string) => lines.findIndex((l) => l.startsWith(text));
    // MachineSets first, each complete before any member is flipped.
    expect(at("completed MachineSet")).toBeGreaterThan(-1);
    expect(at("flipped Machine ")).toBeGreaterThan(
      lines.findLastIndex((l) => l.startsWith("completed MachineSet")),
    );
    expect(lines).toContain("wave 2 (members): 2 objects");
    expect(lines.at(-1)).toBe(
      "done: moved 4 objects to ClusterAPI in this run; migrate to ClusterAPI: 5 objects — 5 done, 0 in flight, 0 to flip in 0 waves (at most 2 at a time), 0 blocked",
    );
    expect(await authorities()).toEqual(everyAt("ClusterAPI"));
    expect(await ledger()).toEqual(before);
  }, 120_000);

  it("--to MachineAPI brings them back (-o json: one JSON object per line), the same instances throughout", async () => {
    const before = await ledger();
    const r = await runCli(migrateArgs("--to", "MachineAPI", "--max-in-flight", "2", "-o", "json"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const events = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[0]).toMatchObject({
      event: "plan",
      target: "MachineAPI",
      summary: { objects: 5, queued: 5 },
    });
    expect(events.filter((e) => e.event === "completed")).toHaveLength(5);
    expect(events.at(-1)).toMatchObject({ event: "summary", code: 0, moved: 5, done: 5, leftOpen: [] });
    expect(await authorities()).toEqual(everyAt("MachineAPI"));
    expect(await ledger()).toEqual(before);
  }, 120_000);

  it("a run interrupted with SIGINT stops starting flips and exits 1; run again, it continues and completes", async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...migrateArgs("--to", "ClusterAPI", "--max-in-flight", "1")],
      { env: cliEnv(product.dir), stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let interrupted = false;
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      if (!interrupted && /^flipped /m.test(out)) {
        interrupted = true;
        child.kill("SIGINT");
      }
    });
    child.stderr?.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    expect(out).toContain("interrupted: starting no more flips; waiting for");
    expect(code).toBe(1);
    const midway = Object.values(await authorities());
    expect(midway).toContain("MachineAPI/MachineAPI");
    expect(midway).toContain("ClusterAPI/ClusterAPI");

    const again = await runCli(migrateArgs("--to", "ClusterAPI", "--max-in-flight", "1"));
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect(await authorities()).toEqual(everyAt("ClusterAPI"));
  }, 120_000);

  it("an object preflight's checks block is reported with admission's message; the rest move and the run exits 1", async () => {
    // A standalone Machine whose providerSpec cannot convert (deviceIndex 1): admission's
    // migration-unconvertible would refuse its flip, so the plan never makes it.
    const manifest = {
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "Machine",
      metadata: { name: "demo-7xk2p-device-1", namespace: MAPI_NS },
      spec: {
        authoritativeAPI: "MachineAPI",
        providerSpec: {
          value: {
            apiVersion: "machine.openshift.io/v1beta1",
            kind: "AWSMachineProviderConfig",
            ami: { id: "ami-0c5d61202c3b9c33e" },
            instanceType: "m6i.xlarge",
            deviceIndex: 1,
            placement: { availabilityZone: "us-east-1a", region: "us-east-1" },
            subnet: { filters: [{ name: "tag:Name", values: ["demo-7xk2p-subnet-private-us-east-1a"] }] },
            credentialsSecret: { name: "aws-cloud-credentials" },
            userDataSecret: { name: "worker-user-data" },
          },
        },
      },
    };
    const file = join(product.dir, "device-1.json");
    await writeFile(file, JSON.stringify(manifest));
    const created = await runKubectl(product.dir, product.kubeconfig, ["create", "-f", file]);
    expect(created.stderr).toBe("");
    for (let i = 0; i < 150; i++) {
      const o = (await mapiObjects(product)).find((m) => m.metadata.name === "demo-7xk2p-device-1");
      if (o?.status?.phase === "Running" && o.status.authoritativeAPI === "MachineAPI") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // Bring the demo back to MachineAPI, so that there is something to move besides the blocked Machine
    // (which is MachineAPI already: done, for this direction).
    const back = await runCli(migrateArgs("--to", "MachineAPI", "--max-in-flight", "5"));
    expect(back.stderr).toBe("");
    expect(back.code).toBe(0);

    const r = await runCli(migrateArgs("--to", "ClusterAPI", "--max-in-flight", "2"));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `blocked:\n  Machine ${MAPI_NS}/demo-7xk2p-device-1\n    admission migration-unconvertible: spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset\n`,
    );
    expect(r.stdout).toMatch(/^stopped: moved 5 objects to ClusterAPI in this run; .*, 1 blocked$/m);
    expect(r.stdout).toContain(`1 blocked: Machine ${MAPI_NS}/demo-7xk2p-device-1`);
    const after = await authorities();
    expect(after["Machine/demo-7xk2p-device-1"]).toBe("MachineAPI/MachineAPI");
    for (const k of ALL) expect(after[k]).toBe("ClusterAPI/ClusterAPI");
  }, 180_000);

  it("a flip admission refuses stops the run at once with exit 1 and admission's message; nothing after it is flipped", async () => {
    // An organisation's own validating webhook that refuses one Machine's flip: a refusal the plan cannot
    // foresee (it asks only the product's rules), met exactly as `oc patch` would meet it.
    const refused = "demo-7xk2p-worker-us-east-1a-4qzbx";
    const webhook = await startValidatingWebhook("org policy test CA", ({ name, object, oldObject }) =>
      object?.spec?.authoritativeAPI !== oldObject?.spec?.authoritativeAPI && name === refused
        ? "change freeze: this Machine stays on its API until Friday"
        : undefined,
    );
    const configuration = {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "org-change-freeze" },
      webhooks: [
        {
          name: "change-freeze.example.com",
          admissionReviewVersions: ["v1"],
          clientConfig: {
            url: webhook.url,
            caBundle: webhook.caBundle,
          },
          failurePolicy: "Fail",
          sideEffects: "None",
          timeoutSeconds: 5,
          rules: [
            {
              apiGroups: ["machine.openshift.io"],
              apiVersions: ["v1beta1"],
              operations: ["UPDATE"],
              resources: ["machines"],
              scope: "Namespaced",
            },
          ],
        },
      ],
    };
    const file = join(product.dir, "org-change-freeze.json");
    await writeFile(file, JSON.stringify(configuration));
    try {
      const created = await runKubectl(product.dir, product.kubeconfig, ["create", "-f", file]);
      expect(created.stderr).toBe("");
      // The demo is at ClusterAPI; moving it back, the refused Machine is the first of wave 2.
      const r = await runCli(migrateArgs("--to", "MachineAPI", "--max-in-flight", "2"));
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(
        `refused Machine ${MAPI_NS}/${refused}: admission webhook "change-freeze.example.com" denied the request: change freeze: this Machine stays on its API until Friday\n`,
      );
      expect(r.stdout).not.toContain("flipped Machine ");
      expect(r.stdout).toMatch(/^stopped: moved 2 objects to MachineAPI in this run;/m);
      const after = await authorities();
      expect(after[`Machine/${refused}`]).toBe("ClusterAPI/ClusterAPI");
      expect(after["Machine/demo-7xk2p-worker-us-east-1b-8n2vd"]).toBe("ClusterAPI/ClusterAPI");
      expect(after["MachineSet/demo-7xk2p-worker-us-east-1a"]).toBe("MachineAPI/MachineAPI");
    } finally {
      await runKubectl(product.dir, product.kubeconfig, [
        "delete",
        "validatingwebhookconfigurations.admissionregistration.k8s.io/org-change-freeze",
      ]);
      await webhook.close();
    }
  }, 120_000);

  it("bad usage or an unreachable cluster exits 2 naming the flag or setting; --help exits 0", async () => {
    const noTarget = await runCli(migrateArgs());
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain("--to is required (ClusterAPI or MachineAPI)");
    const badMax = await runCli(migrateArgs("--to", "ClusterAPI", "--max-in-flight", "0"));
    expect(badMax.code).toBe(2);
    expect(badMax.stderr).toContain("--max-in-flight must be a whole number from 1 to 100");
    const config = parse(await readFile(product.kubeconfig, "utf8"));
    for (const c of config.clusters) c.cluster.server = "https://127.0.0.1:1";
    const dead = join(product.dir, "dead.kubeconfig");
    await writeFile(dead, stringify(config));
    const unreachable = await runCli(["migrate", "--kubeconfig", dead, "--to", "ClusterAPI"]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain(
      `machine-api-migration migrate: cannot read the cluster at https://127.0.0.1:1 (--kubeconfig ${dead}):`,
    );
    const help = await runCli(["migrate", "-h"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: migrate --to ClusterAPI\|MachineAPI/);
  }, 60_000);
});
