/** Controllers gated on leadership: started on election, cut off at once on loss. */
import { describe, expect, it } from "vitest";
import type { KubeClient } from "../../src/kube/client.js";
import { createManualClock, flushMicrotasks } from "../../src/kube/clock.js";
import { byName, createController } from "../../src/kube/controller.js";
import { TransportError } from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import { createLeaderElector } from "../../src/kube/leader.js";
import { leaderGatedControllers } from "../../src/kube/manager.js";
import { fakeClient, fakeInformer, silentLogger } from "./fakes.js";

describe("controllers run only while leading (SPEC §7)", () => {
  it("starts on leading, stops at once on losing the lease, and starts again on re-election", async () => {
    const clock = createManualClock();
    const calls: string[] = [];
    const informer = fakeInformer(KINDS.mapiMachine);
    const controller = createController({
      name: "sync",
      clock,
      logger: silentLogger(),
      reconcile: async (key) => {
        calls.push(key);
        return { requeueAfterMs: 1000 };
      },
    });
    controller.watch(informer, byName);
    const gate = leaderGatedControllers([controller], silentLogger());

    informer.add({ metadata: { name: "a", namespace: "ns" } });
    await flushMicrotasks();
    expect(calls).toEqual([]);

    gate.onStartedLeading();
    await flushMicrotasks();
    expect(calls).toEqual(["a"]);

    gate.onStoppedLeading();
    expect(controller.isRunning()).toBe(false);
    informer.add({ metadata: { name: "b", namespace: "ns" } });
    await clock.advance(5000);
    await gate.drained();
    expect(calls).toEqual(["a"]);

    gate.onStartedLeading();
    await flushMicrotasks();
    expect(calls.slice(1).sort()).toEqual(["a", "b"]);
    gate.onStoppedLeading();
    await gate.drained();
  });
});

describe("a key is never processed concurrently when the Lease is lost and regained (SPEC §7)", () => {
  it("a leader that stops at its renew deadline and renews again runs no reconcile beside its last batch's, and drains both before release", async () => {
    const clock = createManualClock();
    const api = fakeClient();
    let down = false;
    const link: KubeClient = {
      ...api.client,
      get: async (...a) => {
        if (down) throw new TransportError(0, "", "connection refused");
        return api.client.get(...a);
      },
      update: async (...a) => {
        if (down) throw new TransportError(0, "", "connection refused");
        return api.client.update(...a);
      },
    };
    const releases: (() => void)[] = [];
    let running = 0;
    let maxRunning = 0;
    const controller = createController({
      name: "sync",
      clock,
      logger: silentLogger(),
      workers: 2,
      reconcile: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise<void>((r) => releases.push(r));
        running--;
      },
    });
    const informer = fakeInformer(KINDS.mapiMachine);
    informer.add({ metadata: { name: "a", namespace: "ns" } });
    controller.watch(informer, byName);
    const gate = leaderGatedControllers([controller], silentLogger());
    const events: string[] = [];
    const elector = createLeaderElector({
      client: link,
      namespace: "ns",
      name: "lease",
      identity: "me",
      clock,
      logger: silentLogger(),
      random: () => 0,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      onStartedLeading: () => {
        events.push("started");
        gate.onStartedLeading();
      },
      onStoppedLeading: () => {
        events.push("stopped");
        gate.onStoppedLeading();
      },
      drained: gate.drained,
    });
    elector.start();
    await clock.advance(1);
    expect(releases.length).toBe(1);
    down = true; // the reconcile of "a" hangs on the same outage
    await clock.advance(10_500);
    down = false;
    await clock.advance(2_000); // its own record is still in the Lease: it leads again
    expect(events).toEqual(["started", "stopped", "started"]);
    expect(maxRunning).toBe(1);
    expect(releases.length).toBe(1);

    const releasing = elector.release();
    await flushMicrotasks(10);
    releases[0]!();
    await flushMicrotasks(10);
    // The second start was called off by the release: nothing ran beside or after the first batch.
    expect(releases.length).toBe(1);
    await releasing;
    expect(maxRunning).toBe(1);
    expect(running).toBe(0);
    const lease = api.raw(KINDS.lease, "ns", "lease");
    expect((lease!.spec as Record<string, unknown>).holderIdentity).toBe("");
  });

  it("released while a regained start's reconcile runs, the Lease is cleared only once every batch has returned", async () => {
    const clock = createManualClock();
    const releases: (() => void)[] = [];
    let running = 0;
    const controller = createController({
      name: "sync",
      clock,
      logger: silentLogger(),
      reconcile: async () => {
        running++;
        await new Promise<void>((r) => releases.push(r));
        running--;
      },
    });
    const informer = fakeInformer(KINDS.mapiMachine);
    informer.add({ metadata: { name: "a", namespace: "ns" } });
    controller.watch(informer, byName);
    const gate = leaderGatedControllers([controller], silentLogger());
    gate.onStartedLeading();
    await flushMicrotasks(10);
    gate.onStoppedLeading();
    gate.onStartedLeading();
    await flushMicrotasks(10);
    releases[0]!(); // the first batch returns; the second starts on "a"
    await flushMicrotasks(10);
    expect(running).toBe(1);
    gate.onStoppedLeading();
    let drained = false;
    void gate.drained().then(() => {
      drained = true;
    });
    await flushMicrotasks(10);
    expect(drained).toBe(false);
    releases[1]!();
    await flushMicrotasks(10);
    expect(drained).toBe(true);
  });
});
