/**
 * SPEC §8: the local server validates built-in kinds and list options as kube-apiserver does — the
 * differences the differential conformance suite found (test/cluster/conformance.cluster.test.ts), each
 * checked here against kube's rule.
 */
import { describe, expect, it } from "vitest";
import {
  builtinCauses,
  builtinDecodeProblem,
  listOptionCauses,
  MAX_DATA_BYTES,
  typedTimes,
} from "../../src/apiserver/builtin-validation.js";
import type { KubeObject } from "../../src/kube/object.js";

const core = (kind: string) => ({ group: "", kind });
const lease = { group: "coordination.k8s.io", kind: "Lease" };
const vwc = { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration" };
const fields = (o: KubeObject, res: { group: string; kind: string }) =>
  builtinCauses(res, o).map((c) => c.field);

describe("ConfigMap and Secret size (kube: at most 1 MiB of keys and values)", () => {
  it.each([
    ["exactly 1 MiB of data is allowed", MAX_DATA_BYTES - 1, []],
    ["one byte over is refused", MAX_DATA_BYTES, ["[]"]],
  ] as const)("%s", (_, valueBytes, expected) => {
    const o = { metadata: { name: "c" }, data: { k: "x".repeat(valueBytes) } };
    expect(fields(o, core("ConfigMap"))).toEqual(expected);
    expect(fields(o, core("Secret"))).toEqual(expected);
  });
  it("binaryData counts too", () => {
    expect(fields({ binaryData: { a: "x".repeat(MAX_DATA_BYTES) } }, core("ConfigMap"))).toEqual(["[]"]);
  });
});

describe("Event: involvedObject.namespace must match the Event's namespace (legacyValidateEvent)", () => {
  it.each([
    ["same namespace", "ns", "ns", []],
    ["another namespace", "ns", "other", ["involvedObject.namespace"]],
    // A cluster-scoped object's Event belongs in "default" (client-go's recorder puts it there).
    ["no namespace, the Event in a namespace", "ns", undefined, ["involvedObject.namespace"]],
    ["no namespace, the Event in default", "default", undefined, []],
  ] as const)("%s", (_, namespace, involvedNamespace, expected) => {
    const o = {
      metadata: { name: "e", namespace },
      involvedObject: { kind: "Machine", namespace: involvedNamespace },
    };
    expect(fields(o as KubeObject, core("Event"))).toEqual(expected);
  });
});

describe("Events with an eventTime, and events.k8s.io/v1 Events (ValidateEventCreate)", () => {
  const events = { group: "events.k8s.io", kind: "Event" };
  const complete = {
    metadata: { name: "e", namespace: "ns" },
    eventTime: "2026-12-05T10:00:00.000000Z",
    regarding: { kind: "ConfigMap", namespace: "ns", name: "c" },
    reportingController: "example.com/probe",
    reportingInstance: "probe-1",
    action: "Probe",
    reason: "Test",
    type: "Normal",
    note: "n",
  };
  it("a core Event with an eventTime needs a reporting component, instance and action", () => {
    const o = {
      metadata: { name: "e", namespace: "ns" },
      involvedObject: { namespace: "ns" },
      eventTime: "2026-12-05T10:00:00.000000Z",
      reason: "Test",
    };
    expect(fields(o as KubeObject, core("Event")).sort()).toEqual([
      "action",
      "reportingComponent",
      "reportingComponent",
      "reportingComponent",
      "reportingInstance",
    ]);
  });
  it.each([
    ["a complete Event", {}, []],
    ["no eventTime", { eventTime: undefined }, ["eventTime"]],
    ["a note over 1 KiB, refused on the internal field's name", { note: "n".repeat(1025) }, ["message"]],
    ["a note of exactly 1 KiB", { note: "n".repeat(1024) }, []],
    ["a type other than Normal or Warning", { type: "Info" }, ["type"]],
    [
      "the deprecated fields set",
      {
        deprecatedCount: 2,
        deprecatedSource: { host: "h" },
        deprecatedFirstTimestamp: "2026-12-05T10:00:00Z",
        deprecatedLastTimestamp: "2026-12-05T10:00:00Z",
      },
      ["count", "firstTimestamp", "lastTimestamp", "source"],
    ],
    ["a series of one", { series: { count: 1 } }, ["series.count", "series.lastObservedTime"]],
  ] as const)("%s", (_, change, expected) => {
    expect(fields({ ...complete, ...change } as KubeObject, events).sort()).toEqual(expected);
  });
  it("an update may change the series only", () => {
    const old = complete as KubeObject;
    const series = { count: 2, lastObservedTime: "2026-12-05T11:00:00.000000Z" };
    expect(builtinCauses(events, { ...complete, series } as KubeObject, old)).toEqual([]);
    expect(builtinCauses(events, { ...complete, note: "x" } as KubeObject, old).map((c) => c.field)).toEqual([
      "message",
    ]);
  });
});

describe("Lease: leaseDurationSeconds above 0, leaseTransitions not negative", () => {
  it.each([
    ["a valid spec", { leaseDurationSeconds: 1, leaseTransitions: 0 }, []],
    ["leaseDurationSeconds 0", { leaseDurationSeconds: 0 }, ["spec.leaseDurationSeconds"]],
    ["leaseTransitions -1", { leaseTransitions: -1 }, ["spec.leaseTransitions"]],
  ] as const)("%s", (_, spec, expected) => {
    expect(fields({ spec } as KubeObject, lease)).toEqual(expected);
  });
});

describe("Namespace: spec.finalizers are validated on create (ValidateNamespace)", () => {
  const ns = (finalizers: string[]) => ({ metadata: { name: "n" }, spec: { finalizers } }) as KubeObject;
  it.each([
    ["kube's own", ["kubernetes"], []],
    ["a qualified name", ["example.com/x"], []],
    // Not a qualified name, and no standard finalizer without a '/': two causes, as kube gives.
    ["not valid", ["not valid"], ["spec.finalizers", "spec.finalizers"]],
    ["neither standard nor qualified", ["custom"], ["spec.finalizers"]],
  ] as const)("%s", (_, finalizers, expected) => {
    expect(fields(ns([...finalizers]), core("Namespace"))).toEqual(expected);
  });
  it("an update keeps the stored spec, so it is not validated again", () => {
    expect(builtinCauses(core("Namespace"), ns(["not valid"]), ns(["kubernetes"]))).toEqual([]);
  });
});

describe("webhook configurations: sideEffects, admissionReviewVersions, one clientConfig", () => {
  const webhook = {
    name: "a.example.com",
    clientConfig: { url: "https://x/y" },
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
  };
  it.each([
    ["a complete webhook", webhook, []],
    ["no sideEffects", { ...webhook, sideEffects: undefined }, ["webhooks[0].sideEffects"]],
    ["sideEffects Some", { ...webhook, sideEffects: "Some" }, ["webhooks[0].sideEffects"]],
    [
      "no admissionReviewVersions",
      { ...webhook, admissionReviewVersions: [] },
      ["webhooks[0].admissionReviewVersions"],
    ],
    ["only v2", { ...webhook, admissionReviewVersions: ["v2"] }, ["webhooks[0].admissionReviewVersions"]],
    [
      "url and service",
      { ...webhook, clientConfig: { url: "https://x", service: { name: "s", namespace: "n" } } },
      ["webhooks[0].clientConfig"],
    ],
  ] as const)("%s", (_, w, expected) => {
    expect(fields({ webhooks: [w] } as unknown as KubeObject, vwc)).toEqual(expected);
  });
});

describe("Lease decoding: MicroTime strings and 32-bit integers", () => {
  it.each([
    ["a well-typed Lease", { renewTime: "2026-12-01T15:00:00.000000Z", leaseDurationSeconds: 137 }, false],
    ["renewTime not a time", { renewTime: "yesterday" }, true],
    ["leaseDurationSeconds as a string", { leaseDurationSeconds: "15" }, true],
    ["leaseDurationSeconds fractional", { leaseDurationSeconds: 1.5 }, true],
    ["no spec fields", {}, false],
    // A MicroTime has exactly six fraction digits: JavaScript's toISOString() (three) is refused.
    ["renewTime from toISOString()", { renewTime: "2026-12-05T10:00:00.000Z" }, true],
    ["acquireTime without a fraction", { acquireTime: "2026-12-05T10:00:00Z" }, true],
    ["renewTime with nine fraction digits", { renewTime: "2026-12-05T10:00:00.123456789Z" }, true],
    ["renewTime with an offset", { renewTime: "2026-12-05T12:00:00.000000+02:00" }, false],
    ["renewTime on February 30th", { renewTime: "2026-02-30T10:00:00.000000Z" }, true],
    ["renewTime null", { renewTime: null }, false],
  ] as const)("%s", (_, spec, refused) => {
    expect(builtinDecodeProblem(lease, { spec } as KubeObject) !== undefined).toBe(refused);
  });
  it("the refusal is Go's time.Parse error, as kube-apiserver answers it", () => {
    expect(
      builtinDecodeProblem(lease, { spec: { renewTime: "2026-12-05T10:00:00.000Z" } } as KubeObject),
    ).toBe(
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-12-05T10:00:00.000Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".000Z" as ".000000"',
    );
  });
  it("an Event's eventTime is a MicroTime, its firstTimestamp a Time (any fraction)", () => {
    const event = (extra: Record<string, unknown>) => ({ metadata: { name: "e" }, ...extra }) as KubeObject;
    expect(builtinDecodeProblem(core("Event"), event({ eventTime: "2026-12-05T10:00:00.000Z" }))).toMatch(
      /^Event in version "v1" cannot be handled as a Event: parsing time/,
    );
    expect(
      builtinDecodeProblem(core("Event"), event({ firstTimestamp: "2026-12-05T10:00:00.123Z" })),
    ).toBeUndefined();
  });
  it("other kinds are not decoded here", () => {
    expect(
      builtinDecodeProblem(core("ConfigMap"), { spec: { renewTime: "yesterday" } } as KubeObject),
    ).toBeUndefined();
  });
});

describe("typedTimes: timestamps as kube writes them back (UTC; seconds or microseconds)", () => {
  it("a Lease's MicroTimes with an offset are stored in UTC", () => {
    const spec = {
      renewTime: "2026-12-05T12:00:00.123456+02:00",
      acquireTime: "2026-12-05T00:30:00.000001-01:30",
      holderIdentity: "a",
    };
    expect(typedTimes(lease, { spec } as KubeObject).spec).toEqual({
      renewTime: "2026-12-05T10:00:00.123456Z",
      acquireTime: "2026-12-05T02:00:00.000001Z",
      holderIdentity: "a",
    });
  });
  it("an Event's Times lose their fraction and offset; the zero time is null", () => {
    const o = {
      firstTimestamp: "2026-12-05T10:00:00.123Z",
      lastTimestamp: "2026-12-05T12:00:00+02:00",
      eventTime: "0001-01-01T00:00:00.000000Z",
    } as KubeObject;
    expect(typedTimes(core("Event"), o)).toEqual({
      firstTimestamp: "2026-12-05T10:00:00Z",
      lastTimestamp: "2026-12-05T10:00:00Z",
      eventTime: null,
    });
  });
  it("a time kube cannot read, and an object already in typed form, are left as they are", () => {
    const o = { spec: { renewTime: "yesterday", acquireTime: "2026-12-05T10:00:00.000000Z" } } as KubeObject;
    expect(typedTimes(lease, o)).toBe(o);
  });
});

describe("list options (kube's ValidateListOptions)", () => {
  it.each([
    ["no options", "", []],
    [
      "resourceVersionMatch without resourceVersion",
      "resourceVersionMatch=NotOlderThan",
      ["resourceVersionMatch"],
    ],
    ["NotOlderThan with a resourceVersion", "resourceVersionMatch=NotOlderThan&resourceVersion=5", []],
    ["Exact with a resourceVersion", "resourceVersionMatch=Exact&resourceVersion=5", []],
    ["Exact at 0", "resourceVersionMatch=Exact&resourceVersion=0", ["resourceVersionMatch"]],
    ["an unknown match", "resourceVersionMatch=Newest&resourceVersion=5", ["resourceVersionMatch"]],
  ] as const)("%s", (_, query, expected) => {
    expect(listOptionCauses(new URLSearchParams(query)).map((c) => c.field)).toEqual(expected);
  });
});
