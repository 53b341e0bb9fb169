/**
 * The pause half of the authority protocol (src/protocol/pause.ts): SPEC §0's pause annotation and marker,
 * §4.2's twin the product does not manage, §3.1 step 4's `paused-false-at` record and step 6's check — the
 * one check the sync's fork and the migration planner both gate on.
 */
import { describe, expect, it } from "vitest";
import { ANNOTATIONS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import {
  ACKNOWLEDGERS,
  awaitedPauseAcknowledgers,
  decodePausedFalseAt,
  encodePausedFalseAt,
  type HandoverObjects,
  hasPauseMarker,
  isForeignUnderMachineAPI,
  isPaused,
  isPausedWithMarker,
  needsAttention,
  pauseAcknowledged,
  pauseAcknowledgements,
  pausedTransitionTime,
  reportsPaused,
} from "../../src/protocol/pause.js";

const FALSE_AT = "2026-01-01T10:00:00Z";
const BEFORE = "2026-01-01T09:00:00Z";
const AFTER = "2026-01-01T11:00:00Z";

const annotated = (annotations: Record<string, string>): KubeObject => ({ metadata: { annotations } });
const PAUSE = { [ANNOTATIONS.paused]: "" };
const MARKED = { ...PAUSE, [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE };
const pausedCondition = (status: "True" | "False", at?: string): KubeObject => ({
  metadata: {},
  status: {
    conditions: [
      { type: "Paused", status, reason: "r", ...(at === undefined ? {} : { lastTransitionTime: at }) },
    ],
  },
});
const withRecord = (record: string | undefined, o: KubeObject = { metadata: {} }): KubeObject => ({
  ...o,
  metadata: {
    ...o.metadata,
    annotations: record === undefined ? {} : { [ANNOTATIONS.pausedFalseAt]: record },
  },
});

describe("§0 the pause annotation: presence alone pauses; the marker makes it the product's", () => {
  it.each([
    ["no annotations", {}, false, false, false],
    ["pause with an empty value", PAUSE, true, false, false],
    ["pause with any value", { [ANNOTATIONS.paused]: "false" }, true, false, false],
    ["pause and marker", MARKED, true, true, true],
    ["marker alone (a lifted pause)", { [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE }, false, true, false],
    ["pause and someone else's marker", { ...PAUSE, [ANNOTATIONS.pausedBy]: "admin" }, true, false, false],
  ])("%s: paused %s, marker %s, paused with marker %s", (_name, annotations, paused, marker, both) => {
    const o = annotated(annotations);
    expect(isPaused(o)).toBe(paused);
    expect(hasPauseMarker(o)).toBe(marker);
    expect(isPausedWithMarker(o)).toBe(both);
  });

  it("an absent object is not paused", () => {
    expect(isPaused(undefined)).toBe(false);
    expect(isPausedWithMarker(undefined)).toBe(false);
  });
});

describe("§4.2 a CAPI object under MachineAPI the product does not manage", () => {
  it.each([
    ["absent", undefined, false],
    ["paused by the product", annotated(MARKED), false],
    ["paused without the marker (adopted by the handover)", annotated(PAUSE), false],
    ["unpaused (a user's twin from a race, I1)", annotated({}), true],
    ["paused and marked needs-attention", annotated({ ...MARKED, [ANNOTATIONS.needsAttention]: "x" }), true],
  ])("%s → foreign %s", (_name, o, foreign) => {
    expect(isForeignUnderMachineAPI(o)).toBe(foreign);
  });

  it("needs-attention is read by presence", () => {
    expect(needsAttention(annotated({ [ANNOTATIONS.needsAttention]: "" }))).toBe(true);
    expect(needsAttention(annotated(MARKED))).toBe(false);
  });
});

describe("§1 a controller acknowledges with its Paused condition", () => {
  it.each([
    ["Paused=True with a time", pausedCondition("True", AFTER), true, AFTER, undefined],
    ["Paused=False with a time", pausedCondition("False", FALSE_AT), false, undefined, FALSE_AT],
    ["Paused=True without a time", pausedCondition("True"), true, undefined, undefined],
    ["no condition", { metadata: {} }, false, undefined, undefined],
  ])("%s: reports paused %s, True at %s, False at %s", (_name, o, reports, trueAt, falseAt) => {
    expect(reportsPaused(o)).toBe(reports);
    expect(pausedTransitionTime(o, "True")).toBe(trueAt);
    expect(pausedTransitionTime(o, "False")).toBe(falseAt);
  });
});

describe("§3.1 step 4 the paused-false-at record", () => {
  it("encodes canonically: equal records give equal annotation values, whatever the key order", () => {
    const a = encodePausedFalseAt({ infraMachine: AFTER, capiMachine: FALSE_AT });
    const b = encodePausedFalseAt({ capiMachine: FALSE_AT, infraMachine: AFTER });
    expect(a).toBe(b);
    expect(a).toBe(`{"capiMachine":"${FALSE_AT}","infraMachine":"${AFTER}"}`);
  });

  it.each([
    ["a written record round-trips", encodePausedFalseAt({ mapi: FALSE_AT }), { mapi: FALSE_AT }],
    ["no annotation", undefined, undefined],
    ["an empty value", "", undefined],
    ["not JSON", "{mapi:", undefined],
    ["JSON that is not an object", '["mapi"]', undefined],
    ["non-string times are dropped", '{"mapi":"t","capiMachine":5}', { mapi: "t" }],
  ])("decode: %s", (_name, value, expected) => {
    expect(decodePausedFalseAt(withRecord(value))).toEqual(expected);
  });

  it("acknowledgers by kind and authority use the record's keys", () => {
    expect(ACKNOWLEDGERS.Machine.MachineAPI.map((a) => a.key)).toEqual(["mapi"]);
    expect(ACKNOWLEDGERS.Machine.ClusterAPI.map((a) => `${a.role}:${a.key}`)).toEqual([
      "capi:capiMachine",
      "infraMachine:infraMachine",
    ]);
    expect(ACKNOWLEDGERS.MachineSet.MachineAPI.map((a) => a.key)).toEqual(["mapi"]);
    expect(ACKNOWLEDGERS.MachineSet.ClusterAPI.map((a) => `${a.role}:${a.key}`)).toEqual([
      "capi:capiMachineSet",
    ]);
  });
});

describe("§3.1 step 6: the old authority's acknowledgers report Paused=True no earlier than the recorded Paused=False", () => {
  const leavingMachineAPI = (mapiPaused: KubeObject, record: string | undefined): HandoverObjects => ({
    kind: "Machine",
    mapi: withRecord(record, mapiPaused),
  });
  const recorded = encodePausedFalseAt({ mapi: FALSE_AT });

  it.each([
    ["Paused=True after the recorded False: acknowledged", pausedCondition("True", AFTER), recorded, []],
    ["Paused=True at the recorded time: acknowledged", pausedCondition("True", FALSE_AT), recorded, []],
    [
      "Paused=True from before the recorded False (stale): awaited",
      pausedCondition("True", BEFORE),
      recorded,
      ["mapi"],
    ],
    ["still Paused=False: awaited", pausedCondition("False", FALSE_AT), recorded, ["mapi"]],
    ["Paused=True without a time: awaited", pausedCondition("True"), recorded, ["mapi"]],
    [
      "no record: awaited (a fresh True cannot be told from a stale one)",
      pausedCondition("True", AFTER),
      undefined,
      ["mapi"],
    ],
    [
      "a time that does not parse never counts as fresh",
      pausedCondition("True", "yesterday"),
      recorded,
      ["mapi"],
    ],
  ])("MachineAPI → ClusterAPI, %s", (_name, mapi, record, awaited) => {
    const objects = leavingMachineAPI(mapi, record);
    expect(awaitedPauseAcknowledgers(objects, "MachineAPI")).toEqual(awaited);
    expect(pauseAcknowledged(objects, "MachineAPI")).toBe(awaited.length === 0);
  });

  it("leaving ClusterAPI, a Machine waits for both the CAPI Machine and its InfraMachine, in table order", () => {
    const objects: HandoverObjects = {
      kind: "Machine",
      mapi: withRecord(encodePausedFalseAt({ capiMachine: FALSE_AT, infraMachine: FALSE_AT })),
      capi: pausedCondition("True", AFTER),
      infraMachine: pausedCondition("False", FALSE_AT),
    };
    expect(awaitedPauseAcknowledgers(objects, "ClusterAPI")).toEqual(["infraMachine"]);
    expect(awaitedPauseAcknowledgers({ ...objects, infraMachine: undefined }, "ClusterAPI")).toEqual([
      "infraMachine",
    ]);
    expect(
      awaitedPauseAcknowledgers({ ...objects, infraMachine: pausedCondition("True", AFTER) }, "ClusterAPI"),
    ).toEqual([]);
  });

  it("leaving ClusterAPI, a MachineSet waits for its CAPI MachineSet", () => {
    const objects: HandoverObjects = {
      kind: "MachineSet",
      mapi: withRecord(encodePausedFalseAt({ capiMachineSet: FALSE_AT })),
      capi: pausedCondition("True", BEFORE),
    };
    expect(awaitedPauseAcknowledgers(objects, "ClusterAPI")).toEqual(["capiMachineSet"]);
  });

  it("says why each acknowledger is awaited: unrecorded, or its True against its recorded False", () => {
    const objects: HandoverObjects = {
      kind: "Machine",
      mapi: withRecord(encodePausedFalseAt({ capiMachine: FALSE_AT })),
      capi: pausedCondition("True", BEFORE),
      infraMachine: pausedCondition("True", AFTER),
    };
    expect(
      pauseAcknowledgements(objects, "ClusterAPI").map(({ state, ack, ...rest }) => ({
        state,
        key: ack.key,
        pausedAt: "pausedAt" in rest ? rest.pausedAt : undefined,
        since: "since" in rest ? rest.since : undefined,
      })),
    ).toEqual([
      { state: "awaited", key: "capiMachine", pausedAt: BEFORE, since: FALSE_AT },
      { state: "unrecorded", key: "infraMachine", pausedAt: undefined, since: undefined },
    ]);
  });

  it("§3.5 ending: a gone acknowledger is skipped and a missing record does not hold up the deletion", () => {
    const objects: HandoverObjects = {
      kind: "Machine",
      mapi: withRecord(undefined),
      capi: pausedCondition("True", BEFORE),
    };
    expect(awaitedPauseAcknowledgers(objects, "ClusterAPI", { ending: true })).toEqual([]);
    expect(awaitedPauseAcknowledgers(objects, "ClusterAPI")).toEqual(["capiMachine", "infraMachine"]);
    expect(
      awaitedPauseAcknowledgers({ ...objects, capi: pausedCondition("False", AFTER) }, "ClusterAPI", {
        ending: true,
      }),
    ).toEqual(["capiMachine"]);
  });
});
