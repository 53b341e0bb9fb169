/**
 * SPEC §7 Events: the reporting pod is named (`reportingInstance`), and an object's Event stream cannot flood —
 * per (object, reason) a burst, then a slow refill (client-go's EventCorrelator spam filter), with held-back
 * repeats still counted on the Event already sent. The limiter itself is the pure `takeToken`.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_EVENT_RATE_LIMIT,
  type EventRateLimit,
  type TokenBucket,
  takeToken,
} from "../../src/kube/events.js";
import type { KubeObject } from "../../src/kube/object.js";
import { fakeEventRecorder } from "./fakes.js";

const machine = (uid = "u-1", name = "worker-a"): KubeObject => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: { name, namespace: "openshift-machine-api", uid, resourceVersion: "7" },
});

const T0 = Date.UTC(2026, 10, 30, 10, 0, 0);
const LIMIT: EventRateLimit = { burst: 3, refillEveryMs: 60_000 };

describe("takeToken (the pure limiter)", () => {
  const full: TokenBucket = { tokens: 3, at: T0 };
  it.each<[string, TokenBucket | undefined, number, boolean, TokenBucket]>([
    ["a new key starts with a full burst and takes one", undefined, T0, true, { tokens: 2, at: T0 }],
    ["a full bucket gives a token", full, T0, true, { tokens: 2, at: T0 }],
    ["the last whole token is given", { tokens: 1, at: T0 }, T0, true, { tokens: 0, at: T0 }],
    ["an empty bucket refuses", { tokens: 0, at: T0 }, T0, false, { tokens: 0, at: T0 }],
    [
      "half a refill interval is not enough",
      { tokens: 0, at: T0 },
      T0 + 30_000,
      false,
      { tokens: 0.5, at: T0 + 30_000 },
    ],
    [
      "one refill interval gives one token",
      { tokens: 0, at: T0 },
      T0 + 60_000,
      true,
      { tokens: 0, at: T0 + 60_000 },
    ],
    [
      "refill stops at the burst",
      { tokens: 0, at: T0 },
      T0 + 3_600_000,
      true,
      { tokens: 2, at: T0 + 3_600_000 },
    ],
    [
      "a clock that went back refills nothing",
      { tokens: 0.5, at: T0 },
      T0 - 60_000,
      false,
      { tokens: 0.5, at: T0 },
    ],
  ])("%s", (_name, bucket, now, allowed, after) => {
    expect(takeToken(bucket, now, LIMIT)).toEqual({ allowed, bucket: after });
  });

  it("after the burst, writes are allowed at the refill rate and no faster", () => {
    let bucket: TokenBucket | undefined;
    const allowedAt: number[] = [];
    // One attempt a second for ten minutes.
    for (let s = 0; s < 600; s++) {
      const taken = takeToken(bucket, T0 + s * 1000, LIMIT);
      bucket = taken.bucket;
      if (taken.allowed) allowedAt.push(s);
    }
    expect(allowedAt).toEqual([0, 1, 2, 60, 120, 180, 240, 300, 360, 420, 480, 540]);
  });

  it("defaults to client-go's spam filter: a burst of 25, one every 5 minutes", () => {
    expect(DEFAULT_EVENT_RATE_LIMIT).toEqual({ burst: 25, refillEveryMs: 300_000 });
  });
});

const setup = (options: { rateLimit?: EventRateLimit; reportingInstance?: string } = {}) => {
  const recorded = fakeEventRecorder(options, T0);
  const writes = () => recorded.api.calls.filter((c) => c.verb === "create" || c.verb.startsWith("patch"));
  return { ...recorded, writes };
};

describe("event recorder: reportingInstance", () => {
  it("names the reporting pod on every Event it creates", async () => {
    const { recorder, events } = setup({ reportingInstance: "machine-api-migration-7d9f8-abcde" });
    await recorder.record(machine(), "Normal", "MigrationStarted", "handover to ClusterAPI started");
    expect(events()[0]).toMatchObject({
      reportingComponent: "machine-api-migration",
      reportingInstance: "machine-api-migration-7d9f8-abcde",
      source: { component: "machine-api-migration" },
    });
  });

  it("leaves reportingInstance out when the recorder was not given one", async () => {
    const { recorder, events } = setup();
    await recorder.record(machine(), "Normal", "MigrationStarted", "handover to ClusterAPI started");
    expect(events()[0]).not.toHaveProperty("reportingInstance");
  });
});

describe("event recorder: rate limit per (object, reason)", () => {
  it("100 identical warnings in a tight loop write at most the default burst, into one Event counting all 100", async () => {
    const { recorder, events, writes } = setup();
    for (let i = 0; i < 100; i++)
      await recorder.record(machine(), "Warning", "SyncFailed", "conversion failed");
    expect(writes().length).toBeLessThanOrEqual(DEFAULT_EVENT_RATE_LIMIT.burst);
    expect(events()).toHaveLength(1);
    // Not yet 100 on the server: the held-back repeats ride on the next write.
    expect(events()[0]?.count).toBe(DEFAULT_EVENT_RATE_LIMIT.burst);
  });

  it("concurrent identical warnings aggregate into one Event instead of racing to create several", async () => {
    const { recorder, events, writes } = setup();
    await Promise.all(
      Array.from({ length: 100 }, () =>
        recorder.record(machine(), "Warning", "SyncFailed", "conversion failed"),
      ),
    );
    expect(events()).toHaveLength(1);
    expect(writes().length).toBeLessThanOrEqual(DEFAULT_EVENT_RATE_LIMIT.burst);
  });

  it("a write after the refill carries the repeats held back in between", async () => {
    const { recorder, events, writes, clock } = setup({ rateLimit: LIMIT });
    for (let i = 0; i < 10; i++)
      await recorder.record(machine(), "Warning", "SyncFailed", "conversion failed");
    expect(writes()).toHaveLength(3);
    expect(events()[0]).toMatchObject({ count: 3, lastTimestamp: "2026-11-30T10:00:00Z" });
    await clock.advance(60_000);
    await recorder.record(machine(), "Warning", "SyncFailed", "conversion failed");
    expect(writes()).toHaveLength(4);
    expect(events()[0]).toMatchObject({ count: 11, lastTimestamp: "2026-11-30T10:01:00Z" });
  });

  it("different messages under one reason share the object's budget; the ones over it are dropped", async () => {
    const { recorder, events, writes } = setup({ rateLimit: LIMIT });
    for (let i = 0; i < 10; i++) await recorder.record(machine(), "Warning", "SyncFailed", `attempt ${i}`);
    expect(writes()).toHaveLength(3);
    expect(events().map((e) => e.message)).toEqual(["attempt 0", "attempt 1", "attempt 2"]);
  });

  it("another reason, or another object, has a budget of its own", async () => {
    const { recorder, writes } = setup({ rateLimit: LIMIT });
    for (let i = 0; i < 5; i++) {
      await recorder.record(machine(), "Warning", "SyncFailed", "m");
      await recorder.record(machine(), "Normal", "WaitingForSync", "m");
      await recorder.record(machine("u-2", "worker-b"), "Warning", "SyncFailed", "m");
    }
    expect(writes()).toHaveLength(9);
  });
});
