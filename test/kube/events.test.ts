/** The event recorder against an in-memory API: Event shape, aggregation of repeats, LRU, and never failing the caller. */
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { fakeEventRecorder } from "./fakes.js";

const machine: KubeObject = {
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: { name: "worker-a", namespace: "openshift-machine-api", uid: "u-1", resourceVersion: "7" },
};

const setup = (cacheSize?: number) => fakeEventRecorder(cacheSize ? { cacheSize } : {});

describe("event recorder", () => {
  it("creates a core/v1 Event naming the object, reason, message, type and source", async () => {
    const { recorder, events } = setup();
    await recorder.record(machine, "Normal", "MigrationStarted", "handover to ClusterAPI started");
    const [event] = events();
    expect(event).toMatchObject({
      involvedObject: {
        apiVersion: "machine.openshift.io/v1beta1",
        kind: "Machine",
        name: "worker-a",
        namespace: "openshift-machine-api",
        uid: "u-1",
      },
      reason: "MigrationStarted",
      message: "handover to ClusterAPI started",
      type: "Normal",
      source: { component: "machine-api-migration" },
      count: 1,
      firstTimestamp: "2026-11-30T10:00:00Z",
      lastTimestamp: "2026-11-30T10:00:00Z",
      metadata: { namespace: "openshift-machine-api" },
    });
  });

  it("aggregates a repeat: count bumped and lastTimestamp moved, no second Event", async () => {
    const { recorder, events, clock, api } = setup();
    await recorder.record(machine, "Warning", "SyncFailed", "conversion failed");
    await clock.advance(60_000);
    await recorder.record(machine, "Warning", "SyncFailed", "conversion failed");
    await recorder.record(machine, "Warning", "SyncFailed", "conversion failed");
    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({
      count: 3,
      firstTimestamp: "2026-11-30T10:00:00Z",
      lastTimestamp: "2026-11-30T10:01:00Z",
    });
    expect(api.calls.filter((c) => c.verb === "create")).toHaveLength(1);
    expect(api.calls.filter((c) => c.verb === "patch:merge")).toHaveLength(2);
  });

  it("a different message or reason is a different Event", async () => {
    const { recorder, events } = setup();
    await recorder.record(machine, "Warning", "SyncFailed", "one");
    await recorder.record(machine, "Warning", "SyncFailed", "two");
    await recorder.record(machine, "Warning", "Other", "one");
    expect(events()).toHaveLength(3);
  });

  it("starts a new Event when the aggregated one is gone", async () => {
    const { recorder, events, api } = setup();
    await recorder.record(machine, "Normal", "R", "m");
    api.objects.clear();
    await recorder.record(machine, "Normal", "R", "m");
    expect(events()).toHaveLength(1);
    expect(events()[0]).toMatchObject({ count: 1 });
  });

  it("never throws when the API fails", async () => {
    const { recorder, api } = setup();
    api.fail(new Error("down"));
    await expect(recorder.record(machine, "Normal", "R", "m")).resolves.toBeUndefined();
  });

  it("remembers only cacheSize Events (LRU)", async () => {
    const { recorder, events } = setup(1);
    await recorder.record(machine, "Normal", "A", "m");
    await recorder.record(machine, "Normal", "B", "m");
    await recorder.record(machine, "Normal", "A", "m");
    expect(events()).toHaveLength(3);
    expect(KINDS.event.plural).toBe("events");
  });
});
