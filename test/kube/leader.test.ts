/**
 * Leader election as a state machine on a manual clock against an in-memory Lease API: contention, crash
 * hand-over, clean release (only once the controllers have drained), renew deadline — with short timings
 * (15 s / 10 s / 2 s) so each scenario takes few steps — and the defaults of SPEC §7 (OpenShift's
 * 137 s / 107 s / 26 s), which ride out an API outage a kube-apiserver rollout causes.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config.js";
import type { KubeClient } from "../../src/kube/client.js";
import type { Clock, ManualClock } from "../../src/kube/clock.js";
import { createManualClock, flushMicrotasks, sleep } from "../../src/kube/clock.js";
import { TransportError } from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import {
  canAcquire,
  createLeaderElector,
  LEADER_DEFAULTS,
  type LeaderElectionOptions,
  microTime,
} from "../../src/kube/leader.js";
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

/** Short timings for the state-machine scenarios; the defaults have their own tests below. */
const SHORT = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 } as const;

const replica = (
  identity: string,
  client: KubeClient,
  clock: ManualClock,
  options: Partial<LeaderElectionOptions> = SHORT,
) => {
  const events: string[] = [];
  const registry = new Registry();
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
    ...options,
  });
  return { elector, events, registry };
};

/** A drain the test finishes by hand: stands for controllers whose last reconcile is still running. */
const manualDrain = () => {
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { drained: () => done, finish: () => finish() };
};

const leaseOf = (api: ReturnType<typeof fakeClient>) =>
  api.raw(KINDS.lease, "openshift-cluster-api", "machine-api-migration");

describe("leader election (short timings: 15 s / 10 s / 2 s)", () => {
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
    expect(await a.registry.getSingleMetricAsString("leader_election_master_status")).toContain(
      `leader_election_master_status{name="machine-api-migration"} ${a.elector.isLeader() ? 1 : 0}`,
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

describe("leader election defaults (SPEC §7: OpenShift's 137 s / 107 s / 26 s)", () => {
  const DEFAULTS = {};

  it("are LeaseDuration 137 s, RenewDeadline 107 s, RetryPeriod 26 s, in the elector and in the product's settings", () => {
    expect(LEADER_DEFAULTS).toEqual({
      leaseDurationMs: 137_000,
      renewDeadlineMs: 107_000,
      retryPeriodMs: 26_000,
    });
    expect([
      SETTINGS.leaseDuration.default * 1000,
      SETTINGS.renewDeadline.default * 1000,
      SETTINGS.retryPeriod.default * 1000,
    ]).toEqual([
      LEADER_DEFAULTS.leaseDurationMs,
      LEADER_DEFAULTS.renewDeadlineMs,
      LEADER_DEFAULTS.retryPeriodMs,
    ]);
  });

  it("a leader rides out a 100 s API outage (a kube-apiserver rollout) and keeps leading afterwards", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const link = partitionable(api.client);
    const a = replica("a", link.client, clock, DEFAULTS);
    a.elector.start();
    await clock.advance(1);
    expect(a.elector.isLeader()).toBe(true);
    link.setDown(true);
    await clock.advance(100_000);
    expect(a.elector.isLeader()).toBe(true);
    link.setDown(false);
    await clock.advance(26_000);
    await clock.advance(100_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.events).toEqual(["started"]);
    expect((leaseOf(api)!.spec as Record<string, unknown>).leaseDurationSeconds).toBe(137);
    await a.elector.stop();
  });

  it("a leader that has not renewed for 107 s stops leading, 30 s before its Lease expires", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const link = partitionable(api.client);
    const a = replica("a", link.client, clock, DEFAULTS);
    a.elector.start();
    await clock.advance(1);
    link.setDown(true);
    await clock.advance(106_000);
    expect(a.elector.isLeader()).toBe(true);
    await clock.advance(1_000);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toEqual(["started", "stopped"]);
    await a.elector.stop();
  });

  it("a standby takes a silent leader's Lease only after 137 s without a change", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const link = partitionable(api.client);
    const a = replica("a", link.client, clock, DEFAULTS);
    a.elector.start();
    await clock.advance(1);
    const b = replica("b", api.client, clock, DEFAULTS);
    b.elector.start();
    await clock.advance(1);
    link.setDown(true);
    await clock.advance(130_000);
    expect(b.elector.isLeader()).toBe(false);
    await clock.advance(137_000 + 26_000 - 130_000);
    expect(a.elector.isLeader()).toBe(false);
    expect(b.elector.isLeader()).toBe(true);
    await a.elector.stop();
    await b.elector.stop();
  });
});

describe("a standby times the Lease from when it saw it, on a monotonic clock (client-go; never two leaders)", () => {
  const DEFAULTS = {};

  it("a standby whose GET is answered late (429 retries) times the Lease from the answer, not from when it asked", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const link = partitionable(api.client);
    // B's first GET sits out a minute of Retry-After waits before it is answered.
    let firstGetDelayMs = 60_000;
    const slow: KubeClient = {
      ...api.client,
      get: async (...a) => {
        const delay = firstGetDelayMs;
        firstGetDelayMs = 0;
        if (delay) await sleep(clock, delay);
        return api.client.get(...a);
      },
    };
    const a = replica("a", link.client, clock, DEFAULTS);
    a.elector.start();
    await clock.advance(40_000);
    const b = replica("b", slow, clock, DEFAULTS);
    b.elector.start(); // its GET is sent at 40 s and answered at 100 s, with A's renewal of 78 s
    await clock.advance(39_000);
    link.setDown(true); // from 79 s A renews no more: it stops leading at 78 + 107 = 185 s
    for (let i = 0; i < 40; i++) {
      await clock.advance(5_000);
      expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean).length).toBeLessThanOrEqual(1);
    }
    expect(b.elector.isLeader()).toBe(true);
    await a.elector.stop();
    await b.elector.stop();
  });

  it("a standby whose wall clock steps 150 s forward does not take a Lease its holder keeps renewing", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    // A's renewals take 3 s to be answered.
    const slowWrites: KubeClient = {
      ...api.client,
      update: async (...a) => {
        await sleep(clock, 3_000);
        return api.client.update(...a);
      },
    };
    let step = 0;
    // B's wall clock (NTP, a VM resumed) jumps; its monotonic clock does not.
    const stepped: Clock = {
      now: () => clock.now() + step,
      monotonic: () => clock.monotonic(),
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    };
    const a = replica("a", slowWrites, clock, DEFAULTS);
    a.elector.start();
    await clock.advance(5_000);
    const b = replica("b", api.client, clock, { clock: stepped });
    b.elector.start();
    for (let t = 0; t < 200; t++) {
      await clock.advance(1_000);
      if (t === 35) step = 150_000;
      expect(b.elector.isLeader()).toBe(false);
      expect(a.elector.isLeader()).toBe(true);
    }
    await a.elector.stop();
    await b.elector.stop();
  });

  it("the Lease's renewTime and acquireTime are still wall times", async () => {
    const clock = createManualClock(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    const wall: Clock = {
      now: () => clock.now(),
      monotonic: () => 42,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    };
    const api = fakeClient();
    const a = replica("a", api.client, clock, { ...SHORT, clock: wall });
    a.elector.start();
    await clock.advance(1);
    expect(leaseOf(api)?.spec).toMatchObject({
      acquireTime: "2026-01-02T03:04:05.678000Z",
      renewTime: "2026-01-02T03:04:05.678000Z",
    });
    await a.elector.stop();
  });
});

describe("the Lease's own requests end before the renew deadline (decision 162's budget, SPEC §7)", () => {
  /** A client whose next `hang` calls of `verb` are never answered (a server sitting on them), until aborted. */
  const stalling = (client: KubeClient) => {
    let hang = { get: 0, update: 0 };
    const seen: { verb: string; timeoutMs: number | undefined }[] = [];
    const held =
      <A extends unknown[], R>(verb: "get" | "update", fn: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        const options = a.at(-1) as { signal?: AbortSignal; timeoutMs?: number } | undefined;
        seen.push({ verb, timeoutMs: options?.timeoutMs });
        if (hang[verb] > 0) {
          hang[verb]--;
          const signal = options?.signal;
          await new Promise<void>((_resolve, reject) =>
            signal?.addEventListener("abort", () => reject(new TransportError(0, "", "aborted")), {
              once: true,
            }),
          );
        }
        return fn(...a);
      };
    const wrapped: KubeClient = {
      ...client,
      get: held("get", client.get),
      update: held("update", client.update),
    };
    return { client: wrapped, seen, hang: (h: Partial<typeof hang>) => (hang = { ...hang, ...h }) };
  };

  it("a renewal the server sits on is given up within half the renew deadline and tried again, so the leader keeps leading", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const link = stalling(api.client);
    const a = replica("a", link.client, clock);
    a.elector.start();
    await clock.advance(1);
    expect(a.elector.isLeader()).toBe(true);
    link.hang({ update: 1 }); // the renewal at 2 s is never answered
    for (let i = 0; i < 15; i++) {
      await clock.advance(1_000);
      expect(a.elector.isLeader()).toBe(true);
    }
    expect(a.events).toEqual(["started"]);
    // Every Lease request carries a budget within the renew deadline.
    for (const r of link.seen) expect(r.timeoutMs).toBeLessThanOrEqual(SHORT.renewDeadlineMs / 2);
    await a.elector.stop();
  });

  it("stop does not wait for a Lease request the server sits on", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const link = stalling(api.client);
    const a = replica("a", link.client, clock, LEADER_DEFAULTS);
    link.hang({ get: 1 });
    a.elector.start();
    await clock.advance(1);
    let stopped = false;
    void a.elector.stop().then(() => {
      stopped = true;
    });
    await flushMicrotasks(10);
    expect(stopped).toBe(true);
  });
});

describe("graceful release (SPEC §7: the Lease is released on a graceful stop, after the controllers drain)", () => {
  it("stops the controllers at once, and clears holderIdentity only once their last reconciles have drained", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const drain = manualDrain();
    const a = replica("a", api.client, clock, { ...SHORT, drained: drain.drained });
    a.elector.start();
    await clock.advance(1);
    const releasing = a.elector.release();
    await flushMicrotasks();
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toEqual(["started", "stopped"]);
    expect((leaseOf(api)!.spec as Record<string, unknown>).holderIdentity).toBe("a");
    drain.finish();
    await releasing;
    expect(leaseOf(api)!.spec).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
  });

  it("a successor does not lead while the old leader drains, and leads at its next retry once released", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const drain = manualDrain();
    const a = replica("a", api.client, clock, { ...SHORT, drained: drain.drained });
    a.elector.start();
    await clock.advance(1);
    const b = replica("b", api.client, clock);
    b.elector.start();
    await clock.advance(1);
    const releasing = a.elector.release();
    await clock.advance(10_000);
    expect(b.elector.isLeader()).toBe(false);
    drain.finish();
    await releasing;
    await clock.advance(2_500);
    expect(b.elector.isLeader()).toBe(true);
    await b.elector.stop();
  });

  it("a standby's release writes nothing and does not wait for a drain", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const a = replica("a", api.client, clock);
    a.elector.start();
    await clock.advance(1);
    const b = replica("b", api.client, clock, { ...SHORT, drained: () => new Promise<void>(() => {}) });
    b.elector.start();
    await clock.advance(1);
    const before = leaseOf(api);
    await b.elector.release();
    expect(leaseOf(api)).toEqual(before);
    expect(b.events).toEqual([]);
    await a.elector.stop();
  });

  it("a drain longer than the Lease leaves the successor that took the expired Lease alone", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    const drain = manualDrain();
    const a = replica("a", api.client, clock, { ...SHORT, drained: drain.drained });
    a.elector.start();
    await clock.advance(1);
    const b = replica("b", api.client, clock);
    b.elector.start();
    await clock.advance(1);
    const releasing = a.elector.release();
    await clock.advance(20_000);
    expect(b.elector.isLeader()).toBe(true);
    drain.finish();
    await releasing;
    expect((leaseOf(api)!.spec as Record<string, unknown>).holderIdentity).toBe("b");
    await clock.advance(2_500);
    expect(b.elector.isLeader()).toBe(true);
    await b.elector.stop();
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
