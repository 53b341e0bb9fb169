/**
 * The pure reporting rules of the handover controller (SPEC §3.4, src/migration/reporting.ts): which step
 * is an Event-worthy transition, the wait backoff, when a held MigrationCompleted is due, when a handover
 * started, and the gauge rows computed from what the cache shows.
 */
import { describe, expect, it } from "vitest";
import { CONDITIONS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import type { KeyMemory } from "../../src/migration/reporting.js";
import {
  completionDue,
  DEFAULT_WAIT_BACKOFF,
  directionOf,
  handoverInProgress,
  nextWaitDelay,
  progressRows,
  startedAtOf,
  synchronizedFalseRows,
  transitionEvent,
  withStep,
} from "../../src/migration/reporting.js";
import type { HandoverEvent, Step } from "../../src/migration/steps.js";
import { putCondition, setSpecAuthority, stableSnapshot } from "./world.js";

const ref = {
  role: "mapi" as const,
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  namespace: "openshift-machine-api",
  name: "worker-a",
  resourceVersion: "7",
};
const waitingForSync: Step = {
  kind: "wait",
  for: "sync",
  retry: "onChange",
  event: { type: "Normal", reason: "WaitingForSync", message: "Synchronized is False" },
};
const started: HandoverEvent = { type: "Normal", reason: "MigrationStarted", message: "started" };
const completed: HandoverEvent = { type: "Normal", reason: "MigrationCompleted", message: "completed" };
const startStep: Step = {
  kind: "startMigration",
  target: ref,
  statusPatch: {},
  from: "MachineAPI",
  to: "ClusterAPI",
  event: started,
};
const completeStep: Step = {
  kind: "completeMigration",
  target: ref,
  statusPatch: {},
  to: "ClusterAPI",
  event: completed,
};
const unpauseStep: Step = { kind: "unpause", target: { ...ref, role: "capi" }, removeAnnotations: [] };

describe("transitionEvent: one Event per transition (SPEC §3.4)", () => {
  it("a wait emits its Event once; the same reason and message again is not a transition", () => {
    expect(transitionEvent({}, waitingForSync)).toEqual(waitingForSync.event);
    expect(
      transitionEvent(
        { lastEvent: { reason: "WaitingForSync", message: "Synchronized is False" } },
        waitingForSync,
      ),
    ).toBeUndefined();
  });

  it("the same reason with another message is a transition", () => {
    expect(
      transitionEvent({ lastEvent: { reason: "WaitingForSync", message: "something else" } }, waitingForSync),
    ).toEqual(waitingForSync.event);
  });

  it("MigrationStarted rides on its write, whatever was said before", () => {
    expect(
      transitionEvent({ lastEvent: { reason: "MigrationStarted", message: "started" } }, startStep),
    ).toEqual(started);
  });

  it("MigrationCompleted is held at the step-10 write (emitted once step 11 is done)", () => {
    expect(transitionEvent({}, completeStep)).toBeUndefined();
  });

  it("steps without an Event: none", () => {
    expect(transitionEvent({}, unpauseStep)).toBeUndefined();
    expect(transitionEvent({}, { kind: "done", why: "steady" })).toBeUndefined();
  });
});

describe("completionDue: MigrationCompleted after step 11 (SPEC §3.1)", () => {
  const held: KeyMemory = { pendingCompletion: { event: completed, subject: {} } };
  it.each([
    ["status still Migrating in the cache", false, { kind: "done", why: "steady" } as Step, false],
    ["step 11's unpause still to do", true, unpauseStep, false],
    ["steady", true, { kind: "done", why: "steady" } as Step, true],
    ["a new handover already waiting", true, waitingForSync, true],
    ["the object is gone", false, { kind: "done", why: "gone" } as Step, true],
  ])("%s → %s", (_what, stable, step, due) => {
    expect(completionDue(held, stable, step)).toBe(due);
  });

  it("nothing held → never due", () => {
    expect(completionDue({}, true, { kind: "done", why: "steady" })).toBe(false);
  });
});

describe("wait backoff and the stuck clock", () => {
  it("nextWaitDelay starts at 1 s, doubles at the same step, caps at 60 s, starts over at another step", () => {
    let memory: KeyMemory = {};
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const delay = nextWaitDelay(memory, "wait:sync", DEFAULT_WAIT_BACKOFF);
      delays.push(delay);
      memory = { ...withStep(memory, "wait:sync", 0), waitDelayMs: delay };
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    expect(nextWaitDelay(memory, "wait:pauseAck", DEFAULT_WAIT_BACKOFF)).toBe(1_000);
  });

  it("withStep keeps the time a step was first planned and resets it when the step changes", () => {
    const m1 = withStep({}, "wait:sync", 100);
    expect(withStep(m1, "wait:sync", 900)).toMatchObject({ step: "wait:sync", stepSince: 100 });
    expect(withStep(m1, "pause", 900)).toMatchObject({ step: "pause", stepSince: 900 });
  });
});

describe("labels and the cache-derived readings", () => {
  it("directionOf", () => {
    expect(directionOf("MachineAPI", "ClusterAPI")).toBe("MachineAPIToClusterAPI");
    expect(directionOf("ClusterAPI", "MachineAPI")).toBe("ClusterAPIToMachineAPI");
  });

  it("handoverInProgress: spec ≠ stable status, or Migrating; not when steady or before step 2", () => {
    const steady = stableSnapshot("Machine", "MachineAPI").mapi!;
    expect(handoverInProgress(steady)).toBe(false);
    expect(
      handoverInProgress(setSpecAuthority(stableSnapshot("Machine", "MachineAPI"), "ClusterAPI").mapi!),
    ).toBe(true);
    expect(
      handoverInProgress({ ...steady, status: { ...steady.status, authoritativeAPI: "Migrating" } }),
    ).toBe(true);
    expect(handoverInProgress({ ...steady, status: {} })).toBe(false);
  });

  it("startedAtOf: the AwaitingFinalSync transition of a Migrating object (after a restart)", () => {
    const mapi: KubeObject = structuredClone(stableSnapshot("Machine", "MachineAPI").mapi!);
    mapi.status = { ...mapi.status, authoritativeAPI: "Migrating" };
    putCondition(mapi, {
      type: CONDITIONS.synchronized,
      status: "Unknown",
      reason: "AwaitingFinalSync",
      lastTransitionTime: "2026-11-30T10:00:00Z",
    });
    expect(startedAtOf(mapi)).toBe(Date.parse("2026-11-30T10:00:00Z"));
    putCondition(mapi, { type: CONDITIONS.synchronized, status: "True", reason: "FinalSyncComplete" });
    expect(startedAtOf(mapi)).toBeUndefined();
  });

  it("synchronizedFalseRows counts False only, by reason", () => {
    const base = stableSnapshot("Machine", "MachineAPI").mapi!;
    const withSync = (status: string, reason: string, name: string): KubeObject => {
      const o = structuredClone(base);
      o.metadata = { ...o.metadata, name };
      putCondition(o, { type: CONDITIONS.synchronized, status, reason });
      return o;
    };
    expect(
      synchronizedFalseRows("Machine", [
        withSync("False", "ConversionFailed", "a"),
        withSync("False", "ConversionFailed", "b"),
        withSync("False", "FailedToUpdateCAPIMachine", "c"),
        withSync("True", "ResourceSynchronized", "d"),
        withSync("Unknown", "AwaitingFinalSync", "e"),
      ]),
    ).toEqual([
      { labels: { kind: "Machine", reason: "ConversionFailed" }, value: 2 },
      { labels: { kind: "Machine", reason: "FailedToUpdateCAPIMachine" }, value: 1 },
    ]);
  });

  it("progressRows: in progress by step; stuck only when the remembered step is the current one for long enough", () => {
    const rows = progressRows(
      "Machine",
      [
        { name: "a", step: waitingForSync },
        { name: "b", step: waitingForSync },
        { name: "c", step: unpauseStep },
        { name: "d", step: { kind: "done", why: "steady" } },
      ],
      (name) =>
        name === "a"
          ? { step: "wait:sync", stepSince: 0 }
          : name === "b"
            ? { step: "wait:pauseAck", stepSince: 0 }
            : undefined,
      1_000,
      1_000,
    );
    expect(rows.inProgress).toEqual([
      { labels: { kind: "Machine", step: "wait:sync" }, value: 2 },
      { labels: { kind: "Machine", step: "unpause" }, value: 1 },
    ]);
    expect(rows.stuck).toEqual([
      { labels: { kind: "Machine", name: "a", step: "wait:sync" }, value: 1 },
      { labels: { kind: "Machine", name: "b", step: "wait:sync" }, value: 0 },
      { labels: { kind: "Machine", name: "c", step: "unpause" }, value: 0 },
    ]);
  });
});
