/**
 * Issue 21: a CAPI Machine born ClusterAPI showed no READY/AVAILABLE in `kubectl get`, because the Cluster API
 * stand-in never set the v1beta2 `Ready` and `Available` conditions those printer columns read
 * (manifests/crds/cluster.x-k8s.io_machines.yaml). The planner sets both with Running; in local mode a Table
 * request — what kubectl asks for — shows `True` in both columns.
 */
import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath } from "../../src/kube/object.js";
import type { LocalCluster } from "../../src/local/cluster.js";
import { planCapiMachine } from "../../src/simulate/capi.js";
import { waitFor } from "../support/wait.js";
import {
  awsMachineOf,
  awsMachineTemplateOf,
  CAPI_NS,
  capiMachineOf,
  capiMachineSetOf,
  EARLIER,
  NOW_MS,
} from "./builders.js";
import { type LocalStandIns, startLocalStandIns } from "./local.js";

const PROVIDER_ID = "aws:///us-east-1a/i-0123456789abcdef0";
const NOW = "2026-11-30T10:00:00Z";
const notPaused = {
  type: "Paused",
  status: "False",
  reason: "NotPaused",
  message: "",
  lastTransitionTime: EARLIER,
};
const readyTrue = {
  type: "Ready",
  status: "True",
  reason: "Ready",
  message: "",
  lastTransitionTime: EARLIER,
};
const availableTrue = {
  type: "Available",
  status: "True",
  reason: "Available",
  message: "",
  lastTransitionTime: EARLIER,
};
const running = {
  phase: "Running",
  nodeRef: { name: "n" },
  initialization: { infrastructureProvisioned: true },
};

const machine = (status: Record<string, unknown>) =>
  capiMachineOf("m-0", {
    meta: { uid: "machine-uid", finalizers: [FINALIZERS.capiMachine] },
    spec: { providerID: PROVIDER_ID },
    status,
  });
const infra = awsMachineOf("m-0", {
  meta: {
    finalizers: [FINALIZERS.awsMachine],
    ownerReferences: [
      {
        apiVersion: "cluster.x-k8s.io/v1beta2",
        kind: "Machine",
        name: "m-0",
        uid: "machine-uid",
        controller: true,
      },
    ],
  },
  spec: { providerID: PROVIDER_ID },
  status: { conditions: [notPaused], ready: true, initialization: { provisioned: true } },
});
const plan = (m: KubeObject) => planCapiMachine({ machine: m, infraMachine: infra, nowMs: NOW_MS });

describe("CAPI Machine stand-in: Ready and Available (the READY/AVAILABLE columns)", () => {
  it("setting Running sets Ready and Available True, keeping Paused as it was", () => {
    const action = plan(machine({ conditions: [notPaused] }));
    expect(action).toMatchObject({ kind: "setRunning" });
    expect(action.kind === "setRunning" && action.conditions).toEqual([
      notPaused,
      {
        type: "Ready",
        status: "True",
        reason: "Ready",
        message: "",

        lastTransitionTime: NOW,
      },
      {
        type: "Available",
        status: "True",
        reason: "Available",
        message: "",

        lastTransitionTime: NOW,
      },
    ]);
  });

  it.each([
    ["neither", [notPaused]],
    ["only Ready", [notPaused, readyTrue]],
    ["Ready False", [notPaused, { ...readyTrue, status: "False", reason: "NotReady" }, availableTrue]],
  ])("a Running Machine with %s is not done: both are set True", (_name, conditions) => {
    const action = plan(machine({ ...running, conditions }));
    expect(action.kind).toBe("setRunning");
    const written = action.kind === "setRunning" ? action.conditions : [];
    expect(written.filter((c) => c.type === "Ready" || c.type === "Available").map((c) => c.status)).toEqual([
      "True",
      "True",
    ]);
  });

  it("a Running Machine with both True is done", () => {
    expect(plan(machine({ ...running, conditions: [notPaused, readyTrue, availableTrue] }))).toEqual({
      kind: "none",
      why: "Running",
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// Local mode: the columns kubectl prints.

let standIns: LocalStandIns | undefined;
let local: LocalCluster;

beforeAll(async () => {
  standIns = await startLocalStandIns("capi-ready-", async (cluster) => {
    const admin = cluster.clientAs("admin");
    // A MachineSet born ClusterAPI: unpaused, so the CAPI and CAPA stand-ins create and provision its Machine.
    await admin.create(KINDS.awsMachineTemplate, awsMachineTemplateOf("born-capi"));
    await admin.create(KINDS.capiMachineSet, capiMachineSetOf("born-capi", 1));
  });
  ({ local } = standIns);
}, 30_000);

afterAll(async () => {
  await standIns?.stop();
});

interface Table {
  kind: string;
  columnDefinitions: Array<{ name: string }>;
  rows: Array<{ cells: unknown[] }>;
}

/** GET as kubectl does for `kubectl get`: a meta.k8s.io Table, with the admin context's token. */
async function getTable(path: string): Promise<Table> {
  const config = parse(local.kubeconfigText) as {
    clusters: Array<{ cluster: { server: string; "certificate-authority-data": string } }>;
    users: Array<{ name: string; user: { token: string } }>;
  };
  const cluster = config.clusters[0]!.cluster;
  const token = config.users.find((u) => u.name === "admin")!.user.token;
  const url = new URL(path, cluster.server);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        ca: Buffer.from(cluster["certificate-authority-data"], "base64"),
        headers: {
          accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => {
          if (res.statusCode !== 200) reject(new Error(`${res.statusCode}: ${body}`));
          else resolve(JSON.parse(body) as Table);
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("local mode: kubectl get machines.cluster.x-k8s.io", () => {
  it("a Machine born ClusterAPI shows READY True and AVAILABLE True once Running", async () => {
    const admin = local.clientAs("admin");
    const machine = await waitFor("a Running Machine with Ready", async () => {
      const [m] = (await admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items;
      return getPath(m, ["status", "phase"]) === "Running" && conditionOf(m, "Available") ? m : undefined;
    });
    const table = await getTable(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${CAPI_NS}/machines`);
    expect(table.kind).toBe("Table");
    const column = (name: string) => table.columnDefinitions.findIndex((c) => c.name === name);
    const row = table.rows.find((r) => r.cells[column("Name")] === machine.metadata?.name);
    expect({
      ready: row?.cells[column("Ready")],
      available: row?.cells[column("Available")],
      phase: row?.cells[column("Phase")],
    }).toEqual({ ready: "True", available: "True", phase: "Running" });
  });
});
