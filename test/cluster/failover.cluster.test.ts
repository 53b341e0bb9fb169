/**
 * Leader failover on the real control plane (SPEC §7, §8.1): replicas of the product as processes under its
 * ServiceAccount, one Lease in the CAPI namespace. A leader that crashes (SIGKILL: nothing released) is
 * succeeded once the Lease expires, and the successor carries a handover through; a leader stopped gracefully
 * (SIGTERM) releases the Lease, so its successor leads at once. The webhook configurations point at a
 * replica that stays up, as the Service would route around a dead pod. Timings are short here by flag; the
 * defaults are OpenShift's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KINDS } from "../../src/kube/kinds.js";
import { conditionOf, getPath, type KubeObject } from "../../src/kube/object.js";
import { type ClusterProduct, startClusterProduct } from "./product.js";

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";
const MACHINE = "demo-7xk2p-worker-us-east-1a-4qzbx";
const LEASE_SECONDS = 6;

let p: ClusterProduct;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(200);
  }
}

const lease = () => p.cluster.clientAs("admin").get(KINDS.lease, CAPI_NS, "machine-api-migration");
const holder = async (): Promise<string> => String(getPath(await lease(), ["spec", "holderIdentity"]) ?? "");
const mapiMachine = () => p.cluster.clientAs("admin").get(KINDS.mapiMachine, MAPI_NS, MACHINE);
const settled = (authority: string) =>
  until(`${MACHINE} steady under ${authority}`, async () => {
    const o: KubeObject = await mapiMachine();
    return getPath(o, ["status", "authoritativeAPI"]) === authority &&
      conditionOf(o, "Synchronized")?.status === "True"
      ? o
      : undefined;
  });
const flip = (to: string) =>
  p.cluster.clientAs("admin").patch(KINDS.mapiMachine, MAPI_NS, MACHINE, {
    type: "merge",
    body: { spec: { authoritativeAPI: to } },
  });

beforeAll(async () => {
  p = await startClusterProduct("failover", {
    serveArgs: ["--lease-duration", String(LEASE_SECONDS), "--renew-deadline", "4", "--retry-period", "1"],
  });
}, 300_000);

afterAll(async () => {
  await p?.stop();
});

describe("leader election against the real API server (SPEC §7)", () => {
  it("a crashed leader is succeeded after the Lease expires, and the successor completes a handover", async () => {
    await settled("MachineAPI");
    const first = await until("a leader", async () => (await holder()) || undefined);
    const standby = await p.startReplica();
    await p.routeWebhooksTo(standby);
    // The first replica leads (the standby only campaigns); crash it.
    expect(await holder()).toBe(first);
    await p.processes[0]!.stop("SIGKILL");
    await flip("ClusterAPI");
    const next = await until("a new leader", async () => {
      const h = await holder();
      return h && h !== first ? h : undefined;
    });
    expect(next).not.toBe(first);
    await settled("ClusterAPI");
    const instances = p.ledger?.snapshot().instances.filter((i) => i.machineName === MACHINE) ?? [];
    expect(instances).toHaveLength(1);
    expect(instances[0]?.terminatedSeq).toBeUndefined();
  });

  it("a leader stopped with SIGTERM releases the Lease; the next replica leads and hands the Machine back", async () => {
    const leader = p.processes[1]!;
    const leaderIdentity = await holder();
    const successor = await p.startReplica();
    await p.routeWebhooksTo(successor);
    await leader.stop("SIGTERM");
    expect(leader.output()).toContain("lease released");
    const released = await lease();
    // Released: no holder, or already the successor's — never the stopped replica's.
    expect(getPath(released, ["spec", "holderIdentity"]) ?? "").not.toBe(leaderIdentity);
    await flip("MachineAPI");
    await settled("MachineAPI");
    expect(await holder()).not.toBe(leaderIdentity);
    expect(p.ledger?.snapshot().instances.filter((i) => i.machineName === MACHINE)).toHaveLength(1);
  });
});
