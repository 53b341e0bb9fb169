/**
 * The two Event shapes as kube converts them (pkg/apis/events/v1/conversion.go) and kube's Event printer
 * (pkg/printers/internalversion printEvent) — the pure half of decision 157. Expected values were read off
 * kube-apiserver 1.33's answers for the same objects.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  coreEventToEventsV1,
  eventRow,
  eventSourceLabel,
  eventsV1EventToCore,
} from "../../src/apiserver/event-versions.js";
import type { KubeObject } from "../../src/kube/object.js";

const metadata = { name: "e", namespace: "ns", resourceVersion: "7", managedFields: [{ apiVersion: "v1" }] };

describe("core ↔ events.k8s.io/v1 Event conversion", () => {
  it.each<[string, KubeObject, KubeObject]>([
    [
      "the renamed fields, metadata (managedFields included) as stored",
      {
        apiVersion: "v1",
        kind: "Event",
        metadata,
        involvedObject: { kind: "ConfigMap", name: "c" },
        message: "m",
        source: { component: "c", host: "h" },
        firstTimestamp: "2026-12-05T10:00:00Z",
        lastTimestamp: null,
        count: 3,
        reportingComponent: "example.com/c",
        reportingInstance: "i",
        reason: "R",
      },
      {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata,
        regarding: { kind: "ConfigMap", name: "c" },
        note: "m",
        deprecatedSource: { component: "c", host: "h" },
        deprecatedFirstTimestamp: "2026-12-05T10:00:00Z",
        deprecatedLastTimestamp: null,
        deprecatedCount: 3,
        reportingController: "example.com/c",
        reportingInstance: "i",
        reason: "R",
        eventTime: null,
      },
    ],
    [
      "events.k8s.io leaves out its omitempty fields' zero values (client-go's old recorder writes them)",
      {
        apiVersion: "v1",
        kind: "Event",
        metadata,
        involvedObject: {},
        reportingComponent: "",
        reportingInstance: "",
        action: "",
        type: "",
        count: 0,
        eventTime: null,
      },
      {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata,
        regarding: {},
        eventTime: null,
        deprecatedSource: {},
        deprecatedFirstTimestamp: null,
        deprecatedLastTimestamp: null,
      },
    ],
    [
      "the fields both shapes name alike pass unchanged",
      {
        apiVersion: "v1",
        kind: "Event",
        metadata,
        eventTime: "2026-12-05T10:00:00.000000Z",
        series: { count: 2, lastObservedTime: "2026-12-05T10:00:01.000000Z" },
        action: "A",
        related: { kind: "Pod", name: "p" },
        type: "Normal",
      },
      {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata,
        eventTime: "2026-12-05T10:00:00.000000Z",
        series: { count: 2, lastObservedTime: "2026-12-05T10:00:01.000000Z" },
        action: "A",
        related: { kind: "Pod", name: "p" },
        type: "Normal",
        regarding: {},
        deprecatedSource: {},
        deprecatedFirstTimestamp: null,
        deprecatedLastTimestamp: null,
      },
    ],
  ])("%s", (_, core, events) => {
    expect(coreEventToEventsV1(core)).toEqual(events);
  });

  it("the core shape leaves out its own omitempty zero values and writes its other zero values, as Go does", () => {
    expect(
      eventsV1EventToCore({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata,
        note: "",
        reason: "",
        deprecatedCount: 0,
        reportingController: "",
      }),
    ).toEqual({
      apiVersion: "v1",
      kind: "Event",
      metadata,
      reportingComponent: "",
      reportingInstance: "",
      involvedObject: {},
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: null,
    });
  });

  it("a key that names a converted field of the other shape never overwrites it, and __proto__ stays data", () => {
    // The write path drops unknown fields before this runs (kube's typed decoding); the conversion does not
    // rely on it.
    const written = JSON.parse(
      '{"apiVersion":"events.k8s.io/v1","kind":"Event","note":"validated","message":"smuggled","__proto__":{"series":{"count":9}}}',
    ) as KubeObject;
    const core = eventsV1EventToCore(written);
    expect(core.message).toBe("validated");
    expect(Object.getPrototypeOf(core)).toBe(Object.prototype);
    expect(core.series).toBeUndefined();
    expect(
      coreEventToEventsV1(JSON.parse('{"involvedObject":{"name":"a"},"regarding":{"name":"b"}}')).regarding,
    ).toEqual({
      name: "a",
    });
  });

  it("an Event written through either group reads back the same through it (round trip)", () => {
    const value = fc.oneof(fc.string({ maxLength: 3 }), fc.integer({ min: 0, max: 3 }), fc.constant(null));
    const fields = [
      "regarding",
      "note",
      "deprecatedSource",
      "deprecatedFirstTimestamp",
      "deprecatedCount",
      "reportingController",
      "reportingInstance",
      "reason",
      "type",
      "series",
    ];
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...fields), value), (extra) => {
        const written: KubeObject = { apiVersion: "events.k8s.io/v1", kind: "Event", metadata, ...extra };
        const once = coreEventToEventsV1(eventsV1EventToCore(written));
        expect(coreEventToEventsV1(eventsV1EventToCore(once))).toEqual(once);
        for (const [k, v] of Object.entries(extra)) if (v !== "" && v !== 0) expect(once[k]).toEqual(v);
      }),
    );
  });
});

describe("the core `source` field label", () => {
  it.each<[string, KubeObject, string]>([
    ["the source's component", { source: { component: "kubelet" }, reportingComponent: "x" }, "kubelet"],
    ["else the reporting component (new-API Events have no source)", { reportingComponent: "x" }, "x"],
    ["neither", {}, ""],
  ])("%s", (_, o, want) => {
    expect(eventSourceLabel(o)).toBe(want);
  });
});

describe("kube's Event printer", () => {
  const base = { metadata: { name: "e" }, involvedObject: { kind: "Machine", name: "m" } };
  it.each<[string, KubeObject, Partial<ReturnType<typeof eventRow>>]>([
    [
      "an old-recorder Event: its timestamps and count",
      { ...base, firstTimestamp: "T1", lastTimestamp: "T2", count: 4, source: { component: "c", host: "h" } },
      { firstSeen: "T1", lastSeen: "T2", count: 4, source: "c, h", object: "machine/m" },
    ],
    [
      "a singleton from the new API: first seen its eventTime, last seen the same, count 1",
      { ...base, eventTime: "T0", reportingComponent: "ctl", reportingInstance: "" },
      { firstSeen: "T0", lastSeen: "T0", count: 1, source: "ctl" },
    ],
    [
      "a series: last seen and count from it",
      { ...base, eventTime: "T0", series: { count: 5, lastObservedTime: "T9" } },
      { firstSeen: "T0", lastSeen: "T9", count: 5 },
    ],
    [
      "no involved name: the kind alone; the message trimmed",
      { metadata: { name: "e" }, involvedObject: { kind: "Node" }, message: "  hi \n" },
      { object: "node", message: "hi", lastSeen: undefined, firstSeen: undefined },
    ],
  ])("%s", (_, o, want) => {
    expect(eventRow(o)).toMatchObject(want);
  });
});
