/**
 * The admin's journey end to end (issue 9, SPEC §3, §2.3, §9), driven only through the real kubectl, the
 * webhook's `/debug/instances` ledger and the `preflight` CLI, against the product spawned as the
 * `tsx src/cli.ts serve --seed demo` that `npm start -- --seed demo` runs (node itself is the child so
 * signals reach it). One process runs the simulated providers: twins appear paused and Synchronized; a CAPI
 * twin edit is refused with its explanation; a Machine and a MachineSet are handed over to Cluster API;
 * the MAPI copy is then refused; the Machine is handed back; a delete as a handover starts ends with one
 * instance terminated and none leaked; preflight names an unconvertible Machine's field. A second process
 * runs without stand-ins, so the test plays MAO and a handover waits at step 6 for as long as it likes:
 * there a cancel and a delete land mid-way deterministically. Every wait is bounded; nothing asserts on time.
 */
import { execFile } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendName } from "../cluster/backend.js";
import { startClusterProduct } from "../cluster/product.js";
import { getFromWebhook, type Product, type Result, runKubectl, startProduct } from "./helpers.js";

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";
const MAPI_MACHINE = "machines.machine.openshift.io";
const MAPI_MACHINESET = "machinesets.machine.openshift.io";
const CAPI_MACHINE = "machines.cluster.x-k8s.io";
const CAPI_MACHINESET = "machinesets.cluster.x-k8s.io";
const AWS_MACHINE = "awsmachines.infrastructure.cluster.x-k8s.io";
const PAUSE = "cluster.x-k8s.io/paused";
const MARKER = "machine-api-migration.openshift.io/paused-by";
const MACHINE_A = "demo-7xk2p-worker-us-east-1a-4qzbx";
const MACHINE_B = "demo-7xk2p-worker-us-east-1b-8n2vd";
const STANDALONE = "demo-7xk2p-infra-0";

interface Obj {
  metadata: {
    name: string;
    annotations?: Record<string, string>;
    finalizers?: string[];
    labels?: Record<string, string>;
    ownerReferences?: Array<{ kind: string; name: string }>;
    deletionTimestamp?: string;
  };
  spec?: Record<string, unknown> & { authoritativeAPI?: string };
  status?: {
    authoritativeAPI?: string;
    synchronizedAPI?: string;
    conditions?: Array<{ type: string; status: string; reason?: string }>;
  };
}

interface Ledger {
  instances: Array<{ machineName: string; instanceId?: string; terminatedSeq?: number }>;
}

/** One product process (`serve --seed demo`) with its own state dir, certificates and kubectl HOME. */
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stopProduct(product: Product | undefined): Promise<void> {
  if (!product) return;
  if (product.stop) return product.stop();
  const { child } = product;
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await Promise.race([exited, pause(5000)]);
    if (child.exitCode === null) child.kill("SIGKILL");
  }
  await rm(product.dir, { recursive: true, force: true });
}

/** Polls `probe` until it returns a value (not undefined), at most `tries` times. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 150): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await pause(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const condition = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

/** kubectl and the reads the journey makes, bound to one product process. */
function driver(product: Product) {
  const kubectl = (args: readonly string[]): Promise<Result> =>
    runKubectl(product.dir, product.kubeconfig, args);

  const getObj = async (resource: string, namespace: string, name: string): Promise<Obj | undefined> => {
    const r = await kubectl(["get", `${resource}/${name}`, "-n", namespace, "-o", "json"]);
    return r.code === 0 ? (JSON.parse(r.stdout) as Obj) : undefined;
  };

  const mustGet = async (resource: string, namespace: string, name: string): Promise<Obj> => {
    const o = await getObj(resource, namespace, name);
    if (!o) throw new Error(`${resource}/${name} not found`);
    return o;
  };

  /** Waits until the MAPI object's status authority is `value` and its Synchronized condition is True. */
  const settledAt = (resource: string, name: string, value: string) =>
    until(`${resource}/${name} status.authoritativeAPI=${value} and Synchronized=True`, async () => {
      const o = await getObj(resource, MAPI_NS, name);
      return o?.status?.authoritativeAPI === value && condition(o, "Synchronized")?.status === "True"
        ? o
        : undefined;
    });

  const statusIs = (name: string, value: string) =>
    until(`${name} status.authoritativeAPI=${value}`, async () => {
      const o = await getObj(MAPI_MACHINE, MAPI_NS, name);
      return o?.status?.authoritativeAPI === value ? o : undefined;
    });

  const flip = (resource: string, name: string, to: string) =>
    kubectl([
      "patch",
      `${resource}/${name}`,
      "-n",
      MAPI_NS,
      "--type",
      "merge",
      "-p",
      JSON.stringify({ spec: { authoritativeAPI: to } }),
      "-o",
      "json",
    ]);

  const gone = (resource: string, namespace: string, name: string) =>
    until(`${resource}/${name} gone`, async () =>
      (await getObj(resource, namespace, name)) === undefined ? true : undefined,
    );

  const eventReasons = async (namespace: string, name: string): Promise<string[]> => {
    const r = await kubectl([
      "get",
      "events",
      "-n",
      namespace,
      "--field-selector",
      `involvedObject.name=${name}`,
      "-o",
      "json",
    ]);
    expect(r.code).toBe(0);
    return (JSON.parse(r.stdout) as { items: Array<{ reason: string }> }).items.map((e) => e.reason);
  };

  const ledger = async (): Promise<Ledger> => {
    if (product.ledger) return (await product.ledger()) as Ledger;
    return (await getFromWebhook(product, "/debug/instances")) as Ledger;
  };

  return { kubectl, getObj, mustGet, settledAt, statusIs, flip, gone, eventReasons, ledger };
}

const instancesOf = (l: Ledger, machine: string) => l.instances.filter((i) => i.machineName === machine);

function mapiSetOf(machine: Obj): string {
  const owner = machine.metadata.ownerReferences?.find((o) => o.kind === "MachineSet");
  if (!owner) throw new Error(`${machine.metadata.name} has no MachineSet owner`);
  return owner.name;
}

/**
 * The product as the backend runs it: `serve --seed demo` in local mode, or on the real control plane
 * (`npm run test:cluster`) the product under its ServiceAccount with the demo seeded and the stand-ins in
 * this process (test/cluster/product.ts).
 */
async function journeyProduct(name: string, simulateProviders: boolean): Promise<Product> {
  if (backendName() === "local")
    return startProduct(name, ["--seed", "demo", ...(simulateProviders ? [] : ["--no-simulate-providers"])]);
  const p = await startClusterProduct(name, { simulateProviders });
  const first = p.processes[0]!;
  return {
    dir: p.dir,
    child: first.child,
    kubeconfig: p.kubeconfig,
    webhookUrl: p.webhookUrl,
    output: first.output(),
    ...(p.ledger ? { ledger: async () => p.ledger?.snapshot() } : {}),
    stop: p.stop,
  };
}

let simulated: Product | undefined;
let held: Product | undefined;
let sim: ReturnType<typeof driver>;
let hold: ReturnType<typeof driver>;

beforeAll(async () => {
  // Both processes start together; the second runs no stand-ins, so the test itself plays MAO there.
  [simulated, held] = await Promise.all([
    journeyProduct("journey-simulated", true),
    journeyProduct("journey-held", false),
  ]);
  sim = driver(simulated);
  hold = driver(held);
}, 120_000);

afterAll(async () => {
  await Promise.all([stopProduct(simulated), stopProduct(held)]);
});

describe("the admin's journey (simulated providers, kubectl; local mode or the real control plane)", () => {
  it("CAPI twins appear, paused with the product's marker where MAPI is authoritative, and Synchronized", async () => {
    const { getObj, mustGet } = sim;
    for (const name of [MACHINE_A, MACHINE_B]) {
      const twin = await until(`CAPI twin ${name}`, () => getObj(CAPI_MACHINE, CAPI_NS, name));
      expect(twin.metadata.annotations?.[PAUSE]).toBe("");
      expect(twin.metadata.annotations?.[MARKER]).toBe("machine-api-migration");
      const aws = await until(`AWSMachine ${name}`, () => getObj(AWS_MACHINE, CAPI_NS, name));
      expect(aws.metadata.annotations?.[PAUSE]).toBe("");
    }
    for (const name of [MACHINE_A, MACHINE_B, STANDALONE]) {
      const mapi = await until(`${name} Running and Synchronized`, async () => {
        const o = await getObj(MAPI_MACHINE, MAPI_NS, name);
        return condition(o, "Synchronized")?.status === "True" &&
          (o?.status as { phase?: string } | undefined)?.phase === "Running"
          ? o
          : undefined;
      });
      expect(mapi.status?.authoritativeAPI).toBe(name === STANDALONE ? "ClusterAPI" : "MachineAPI");
    }
    const standalone = await mustGet(CAPI_MACHINE, CAPI_NS, STANDALONE);
    expect(standalone.metadata.annotations?.[PAUSE]).toBeUndefined();
  }, 60_000);

  it("refuses an edit of a paused CAPI twin with the explanation (capi-frozen)", async () => {
    const r = await sim.kubectl([
      "label",
      `${CAPI_MACHINE}/${MACHINE_A}`,
      "-n",
      CAPI_NS,
      "cluster.x-k8s.io/test=yes",
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'admission webhook "deny.machine-api-migration.openshift.io" denied the request',
    );
    expect(r.stderr).toContain(`oc edit ${MAPI_MACHINE}/${MACHINE_A} -n ${MAPI_NS}`);
    const twin = await sim.mustGet(CAPI_MACHINE, CAPI_NS, MACHINE_A);
    expect(twin.metadata.labels?.["cluster.x-k8s.io/test"]).toBeUndefined();
  });

  it("hands a Machine over to Cluster API: status, pauses, finalizers, Events, the same instance", async () => {
    const { flip, settledAt, getObj, mustGet, eventReasons, ledger } = sim;
    const before = instancesOf(await ledger(), MACHINE_A);
    expect(before).toHaveLength(1);
    expect((await flip(MAPI_MACHINE, MACHINE_A, "ClusterAPI")).code).toBe(0);
    const mapi = await settledAt(MAPI_MACHINE, MACHINE_A, "ClusterAPI");
    expect(mapi.status?.synchronizedAPI).toBe("ClusterAPI");
    expect(mapi.metadata.finalizers ?? []).not.toContain("machine.machine.openshift.io");
    const capi = await until("CAPI Machine unpaused", async () => {
      const o = await getObj(CAPI_MACHINE, CAPI_NS, MACHINE_A);
      return o && o.metadata.annotations?.[PAUSE] === undefined ? o : undefined;
    });
    expect(capi.metadata.annotations?.[MARKER]).toBeUndefined();
    expect(capi.metadata.finalizers).toContain("machine.cluster.x-k8s.io");
    const aws = await mustGet(AWS_MACHINE, CAPI_NS, MACHINE_A);
    expect(aws.metadata.annotations?.[PAUSE]).toBeUndefined();
    expect(aws.metadata.finalizers).toContain("awsmachine.infrastructure.cluster.x-k8s.io");
    expect(await eventReasons(MAPI_NS, MACHINE_A)).toEqual(
      expect.arrayContaining(["MigrationStarted", "MigrationCompleted"]),
    );
    // SPEC §3.2 I6: the same cloud instance throughout, none created, none terminated.
    expect(instancesOf(await ledger(), MACHINE_A)).toEqual(before);
  }, 60_000);

  it("now refuses an edit of the MAPI copy (mapi-frozen) and names the CAPI object to edit", async () => {
    const r = await sim.kubectl([
      "patch",
      `${MAPI_MACHINE}/${MACHINE_A}`,
      "-n",
      MAPI_NS,
      "--type",
      "merge",
      "-p",
      '{"spec":{"providerSpec":{"value":{"instanceType":"m6i.2xlarge"}}}}',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`MAPI Machine ${MAPI_NS}/${MACHINE_A} is not authoritative`);
    expect(r.stderr).toContain(`oc edit ${AWS_MACHINE}/${MACHINE_A} -n ${CAPI_NS}`);
  });

  it("hands a MachineSet over to Cluster API: the CAPI MachineSet unpaused with its finalizer", async () => {
    const { flip, settledAt, getObj, mustGet, eventReasons } = sim;
    const set = mapiSetOf(await mustGet(MAPI_MACHINE, MAPI_NS, MACHINE_A));
    expect((await flip(MAPI_MACHINESET, set, "ClusterAPI")).code).toBe(0);
    const mapi = await settledAt(MAPI_MACHINESET, set, "ClusterAPI");
    expect(mapi.status?.synchronizedAPI).toBe("ClusterAPI");
    const capi = await until("CAPI MachineSet unpaused", async () => {
      const o = await getObj(CAPI_MACHINESET, CAPI_NS, set);
      return o && o.metadata.annotations?.[PAUSE] === undefined ? o : undefined;
    });
    expect(capi.metadata.finalizers).toContain("cluster.x-k8s.io/machineset");
    expect(await eventReasons(MAPI_NS, set)).toEqual(
      expect.arrayContaining(["MigrationStarted", "MigrationCompleted"]),
    );
  }, 60_000);

  it("hands the Machine back to Machine API: the CAPI twin paused again, MAO's finalizer back", async () => {
    const { flip, settledAt, mustGet, kubectl, ledger } = sim;
    expect((await flip(MAPI_MACHINE, MACHINE_A, "MachineAPI")).code).toBe(0);
    const mapi = await settledAt(MAPI_MACHINE, MACHINE_A, "MachineAPI");
    expect(mapi.metadata.finalizers).toContain("machine.machine.openshift.io");
    const capi = await mustGet(CAPI_MACHINE, CAPI_NS, MACHINE_A);
    expect(capi.metadata.annotations?.[PAUSE]).toBe("");
    expect(capi.metadata.annotations?.[MARKER]).toBe("machine-api-migration");
    // Cluster API adds its own finalizer before it checks the pause (SPEC §3.1 step 9), so the paused twin
    // keeps it; what held the instance on the CAPI side, CAPA's finalizer, is gone.
    expect(capi.metadata.finalizers ?? []).toContain("machine.cluster.x-k8s.io");
    const aws = await mustGet(AWS_MACHINE, CAPI_NS, MACHINE_A);
    expect(aws.metadata.annotations?.[PAUSE]).toBe("");
    expect(aws.metadata.finalizers ?? []).not.toContain("awsmachine.infrastructure.cluster.x-k8s.io");
    // The MAPI copy is editable again.
    const r = await kubectl(["label", `${MAPI_MACHINE}/${MACHINE_A}`, "-n", MAPI_NS, "team=workers"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(instancesOf(await ledger(), MACHINE_A)).toHaveLength(1);
  }, 60_000);

  it("deleting a Machine as its handover starts ends cleanly: both twins gone, its one instance terminated, none leaked", async () => {
    // Whether the delete lands before, during or after the handover's steps, the end state is the same;
    // the held-handover block below deletes deterministically mid-way.
    const { flip, kubectl, gone, ledger, settledAt } = sim;
    await settledAt(MAPI_MACHINE, MACHINE_B, "MachineAPI");
    expect(instancesOf(await ledger(), MACHINE_B).filter((i) => i.terminatedSeq === undefined)).toHaveLength(
      1,
    );
    expect((await flip(MAPI_MACHINE, MACHINE_B, "ClusterAPI")).code).toBe(0);
    const del = await kubectl(["delete", `${MAPI_MACHINE}/${MACHINE_B}`, "-n", MAPI_NS, "--wait=false"]);
    expect(del.code).toBe(0);
    await gone(MAPI_MACHINE, MAPI_NS, MACHINE_B);
    await gone(CAPI_MACHINE, CAPI_NS, MACHINE_B);
    await gone(AWS_MACHINE, CAPI_NS, MACHINE_B);
    const after = await ledger();
    const deleted = instancesOf(after, MACHINE_B);
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.terminatedSeq).toBeDefined();
    for (const name of [MACHINE_A, STANDALONE]) {
      const own = instancesOf(after, name);
      expect(own).toHaveLength(1);
      expect(own[0]!.terminatedSeq).toBeUndefined();
    }
  }, 60_000);

  it("preflight names a deliberately unconvertible Machine's field error and exits 1", async () => {
    const template = await sim.mustGet(MAPI_MACHINE, MAPI_NS, MACHINE_A);
    const providerSpec = (template.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec;
    const machine = {
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "Machine",
      metadata: { name: "worker-device", namespace: MAPI_NS },
      spec: { providerSpec: { value: { ...providerSpec.value, deviceIndex: 1 } } },
    };
    const file = join(simulated!.dir, "worker-device.json");
    await writeFile(file, JSON.stringify(machine));
    const created = await sim.kubectl(["create", "-f", file]);
    expect(created.stderr).toBe("");
    const r = await new Promise<Result>((resolve) => {
      execFile(
        "npm",
        ["run", "cli", "--", "preflight", "--kubeconfig", simulated!.kubeconfig],
        {
          env: { ...process.env, KUBERNETES_SERVICE_HOST: "", KUBERNETES_SERVICE_PORT: "" },
          timeout: 60_000,
        },
        (error, stdout, stderr) => {
          const code = error && typeof error.code === "number" ? error.code : error ? -1 : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Machine\s+openshift-machine-api\/worker-device\s/m);
    expect(r.stdout).toContain(
      "spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
    );
  }, 60_000);
});

describe("a held handover (--no-simulate-providers: the test plays MAO, so step 6 waits for it)", () => {
  /** Flips to ClusterAPI and waits until the controller reports it waits for MAO's Paused=True (§3.1 step 6). */
  async function holdAtPause(name: string): Promise<void> {
    await hold.settledAt(MAPI_MACHINE, name, "MachineAPI");
    expect((await hold.flip(MAPI_MACHINE, name, "ClusterAPI")).code).toBe(0);
    await hold.statusIs(name, "Migrating");
    await until(`${name} WaitingForPause`, async () =>
      (await hold.eventReasons(MAPI_NS, name)).includes("WaitingForPause") ? true : undefined,
    );
  }

  it("a cancel while status is Migrating rolls back (SPEC §3.3): status, finalizers, pause, Event", async () => {
    await holdAtPause(MACHINE_B);
    const cancel = await hold.flip(MAPI_MACHINE, MACHINE_B, "MachineAPI");
    expect(cancel.code).toBe(0);
    expect((JSON.parse(cancel.stdout) as Obj).status?.authoritativeAPI).toBe("Migrating");
    const mapi = await hold.statusIs(MACHINE_B, "MachineAPI");
    expect(mapi.status?.synchronizedAPI).toBe("MachineAPI");
    expect(mapi.metadata.finalizers).toContain("machine.machine.openshift.io");
    expect(await hold.eventReasons(MAPI_NS, MACHINE_B)).toEqual(
      expect.arrayContaining(["MigrationStarted", "WaitingForPause", "MigrationCancelled"]),
    );
    const capi = await hold.mustGet(CAPI_MACHINE, CAPI_NS, MACHINE_B);
    expect(capi.metadata.annotations?.[PAUSE]).toBe("");
    expect(capi.metadata.annotations?.[MARKER]).toBe("machine-api-migration");
    expect(capi.metadata.finalizers ?? []).not.toContain("machine.cluster.x-k8s.io");
    const aws = await hold.mustGet(AWS_MACHINE, CAPI_NS, MACHINE_B);
    expect(aws.metadata.finalizers ?? []).not.toContain("awsmachine.infrastructure.cluster.x-k8s.io");
    // Back in the steady state: the sync runs again.
    await hold.settledAt(MAPI_MACHINE, MACHINE_B, "MachineAPI");
  }, 60_000);

  it("deleting the Machine mid-handover rolls back to MachineAPI, which performs the deletion (SPEC §3.5)", async () => {
    await holdAtPause(MACHINE_A);
    const del = await hold.kubectl(["delete", `${MAPI_MACHINE}/${MACHINE_A}`, "-n", MAPI_NS, "--wait=false"]);
    expect(del.code).toBe(0);
    const mapi = await hold.statusIs(MACHINE_A, "MachineAPI");
    expect(mapi.metadata.deletionTimestamp).toBeDefined();
    expect(condition(mapi, "Synchronized")?.reason).toBe("MigrationCancelled");
    expect(await hold.eventReasons(MAPI_NS, MACHINE_A)).toContain("MigrationCancelled");
    // The product never takes MAO's finalizer: only the controller that terminates the instance does.
    expect(mapi.metadata.finalizers).toContain("machine.machine.openshift.io");
    // MAO (played here) terminates the instance and releases its finalizer; the sync finishes the rest.
    const released = await hold.kubectl([
      "--context",
      "mao",
      "patch",
      `${MAPI_MACHINE}/${MACHINE_A}`,
      "-n",
      MAPI_NS,
      "--type",
      "json",
      "-p",
      JSON.stringify([
        { op: "test", path: "/metadata/finalizers/0", value: "machine.machine.openshift.io" },
        { op: "remove", path: "/metadata/finalizers/0" },
      ]),
    ]);
    expect(released.stderr).toBe("");
    await hold.gone(MAPI_MACHINE, MAPI_NS, MACHINE_A);
    await hold.gone(CAPI_MACHINE, CAPI_NS, MACHINE_A);
    await hold.gone(AWS_MACHINE, CAPI_NS, MACHINE_A);
  }, 60_000);
});
