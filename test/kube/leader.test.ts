/** Leader election as a state machine on a manual clock against an in-memory Lease API: contention, crash hand-over, clean release, renew deadline. */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { KubeClient } from "../../src/kube/client.js";
import type { ManualClock } from "../../src/kube/clock.js";
import { createManualClock } from "../../src/kube/clock.js";
import { TransportError } from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import { canAcquire, createLeaderElector, microTime } from "../../src/kube/leader.js";
import { runtimeMetrics } from "../../src/kube/metrics.js";
import { fakeClient, silentLogger } from "./fakes.js";

/** A client that can be cut off from the API (as a partitioned replica). */
const partitionable = (client: KubeClient) => {
  let down = false;
  const guard =
    <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      if (down) throw new TransportError(0, "", "connection refused");
      return fn(...a);
    };
  const wrapped: KubeClient = {
    get: guard(client.get),
    list: guard(client.list),
    create: guard(client.create),
    update: guard(client.update),
    updateStatus: guard(client.updateStatus),
    patch: guard(client.patch),
    delete: guard(client.delete),
  };
  return { client: wrapped, setDown: (v: boolean) => (down = v) };
};

const replica = (identity: string, client: KubeClient, clock: ManualClock, registry = new Registry()) => {
  const events: string[] = [];
  const elector = createLeaderElector({
    client,
    namespace: "openshift-cluster-api",
    name: "machine-api-migration",
    identity,
    clock,
    logger: silentLogger(),
    metrics: runtimeMetrics(registry),
    random: () => 0,
    onStartedLeading: () => events.push("started"),
    onStoppedLeading: () => events.push("stopped"),
  });
  return { elector, events, registry };
};

const leaseOf = (api: ReturnType<typeof fakeClient>) =>
  api.raw(KINDS.lease, "openshift-cluster-api", "machine-api-migration");

describe("leader election (SPEC §7: 15 s / 10 s / 2 s)", () => {
  it("two replicas contend: exactly one leads, and the Lease names it", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const a = replica("a", api.client, clock);
    const b = replica("b", api.client, clock);
    a.elector.start();
    b.elector.start();
    for (let i = 0; i < 20; i++) {
      await clock.advance(1000);
      expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean).length).toBe(1);
    }
    const holder = (leaseOf(api)!.spec as { holderIdentity: string }).holderIdentity;
    expect(holder).toBe(a.elector.isLeader() ? "a" : "b");
    expect(await a.registry.getSingleMetricAsString("leader")).toContain(
      `leader{lease="machine-api-migration"} ${a.elector.isLeader() ? 1 : 0}`,
    );
    await a.elector.stop();
    await b.elector.stop();
  });

  it("a killed leader (no release) is replaced only after the lease duration", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const a = replica("a", api.client, clock);
    a.elector.start();
    await clock.advance(1);
    expect(a.elector.isLeader()).toBe(true);
    const b = replica("b", api.client, clock);
    b.elector.start();
    await clock.advance(5000);
    expect(b.elector.isLeader()).toBe(false);
    await a.elector.stop(); // a crash: the Lease still names "a"
    const killedAt = clock.now();
    await clock.advance(12_000);
    expect(b.elector.isLeader()).toBe(false);
    await clock.advance(6000);
    expect(b.elector.isLeader()).toBe(true);
    expect(clock.now() - killedAt).toBeGreaterThanOrEqual(15_000 - 2000);
    const spec = leaseOf(api)!.spec as Record<string, unknown>;
    expect(spec.holderIdentity).toBe("b");
    expect(spec.leaseTransitions).toBe(1);
    await b.elector.stop();
  });

  it("a clean release hands over at the successor's next retry, without waiting for expiry", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const a = replica("a", api.client, clock);
    a.elector.start();
    await clock.advance(1);
    const b = replica("b", api.client, clock);
    b.elector.start();
    await clock.advance(3000);
    await a.elector.release();
    expect(a.events).toEqual(["started", "stopped"]);
    expect((leaseOf(api)!.spec as Record<string, unknown>).holderIdentity).toBe("");
    await clock.advance(2500);
    expect(b.elector.isLeader()).toBe(true);
    await b.elector.stop();
  });

  it("a leader that cannot renew stops leading after the renew deadline, before the lease expires", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const link = partitionable(api.client);
    const a = replica("a", link.client, clock);
    a.elector.start();
    await clock.advance(1);
    expect(a.elector.isLeader()).toBe(true);
    link.setDown(true);
    await clock.advance(9000);
    expect(a.elector.isLeader()).toBe(true);
    await clock.advance(1500);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toEqual(["started", "stopped"]);
    // It keeps campaigning and leads again once the API is back (its own record is still in the Lease).
    link.setDown(false);
    await clock.advance(3000);
    expect(a.elector.isLeader()).toBe(true);
    await a.elector.stop();
  });

  it("a leader that finds another holder in the Lease stops at once", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const a = replica("a", api.client, clock);
    a.elector.start();
    await clock.advance(1);
    const live = leaseOf(api)!;
    await api.client.update(KINDS.lease, { ...live, spec: { ...live.spec, holderIdentity: "intruder" } });
    await clock.advance(2500);
    expect(a.elector.isLeader()).toBe(false);
    await a.elector.stop();
  });

  it("writes a well-formed Lease record", async () => {
    const clock = createManualClock(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    const api = fakeClient();
    const a = replica("a", api.client, clock);
    a.elector.start();
    await clock.advance(1);
    expect(leaseOf(api)?.spec).toEqual({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      acquireTime: "2026-01-02T03:04:05.678000Z",
      renewTime: "2026-01-02T03:04:05.678000Z",
      leaseTransitions: 0,
    });
    await a.elector.stop();
  });
});

describe("canAcquire", () => {
  it.each([
    ["a free lease", { holderIdentity: "" }, 0, 0, true],
    ["my own lease", { holderIdentity: "me", leaseDurationSeconds: 15 }, 0, 1, true],
    [
      "another's lease, observed changing 14 s ago",
      { holderIdentity: "x", leaseDurationSeconds: 15 },
      0,
      14_000,
      false,
    ],
    [
      "another's lease, unchanged for 15 s",
      { holderIdentity: "x", leaseDurationSeconds: 15 },
      0,
      15_000,
      true,
    ],
    ["another's released lease (1 s)", { holderIdentity: "x", leaseDurationSeconds: 1 }, 0, 1000, true],
  ] as const)("%s", (_t, spec, observedAt, now, expected) => {
    expect(canAcquire(spec, "me", observedAt, now, 15_000)).toBe(expected);
  });
  it("microTime has microseconds", () => {
    expect(microTime(Date.UTC(2026, 0, 1))).toBe("2026-01-01T00:00:00.000000Z");
  });
});
