/** Controllers gated on leadership: started on election, cut off at once on loss. */
import { describe, expect, it } from "vitest";
import { createManualClock, flushMicrotasks } from "../../src/kube/clock.js";
import { byName, createController } from "../../src/kube/controller.js";
import { KINDS } from "../../src/kube/kinds.js";
import { leaderGatedControllers } from "../../src/kube/manager.js";
import { fakeInformer, silentLogger } from "./fakes.js";

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
