/**
 * SPEC §8: core and `events.k8s.io` Events are one resource, as in kube-apiserver — an Event written through
 * either group is read, listed, watched, selected and deleted through both, converted between the two shapes
 * (decision 157; the differential suite's probes run the same requests against kube-apiserver). What each
 * assertion expects was read off kube-apiserver 1.33's answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { allowAll, call, namespace, start, watch } from "./helpers.js";

let s: ApiServer;
const NS = "ev";
const CORE = `/api/v1/namespaces/${NS}/events`;
const NEW = `/apis/events.k8s.io/v1/namespaces/${NS}/events`;
const TABLE = { accept: "application/json;as=Table;g=meta.k8s.io;v=v1" };

const coreEvent = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name },
  involvedObject: { kind: "ConfigMap", namespace: NS, name: "c", uid: "u1" },
  reason: "Recorded",
  message: "by the old recorder",
  count: 3,
  firstTimestamp: "2026-12-05T10:00:00Z",
  lastTimestamp: "2026-12-05T10:05:00Z",
  source: { component: "old-recorder", host: "node-1" },
  ...extra,
});
const newEvent = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name },
  eventTime: "2026-12-05T10:00:00.000000Z",
  regarding: { kind: "Machine", namespace: NS, name: "m", fieldPath: "spec" },
  reportingController: "example.com/controller",
  reportingInstance: "controller-1",
  action: "Reconcile",
  reason: "Reported",
  type: "Warning",
  note: "  by the new recorder ",
  series: { count: 2, lastObservedTime: "2026-12-05T10:01:00.000000Z" },
  ...extra,
});
const names = (r: { body: { items?: Array<{ metadata: { name: string } }> } }) =>
  (r.body.items ?? []).map((i) => i.metadata.name).sort();

beforeAll(async () => {
  s = await start({ admission: allowAll });
  await call(s, "POST", "/api/v1/namespaces", namespace(NS));
  expect((await call(s, "POST", CORE, coreEvent("old"))).status).toBe(201);
  expect((await call(s, "POST", NEW, newEvent("new"))).status).toBe(201);
});
afterAll(() => s.stop());

describe("one store for core and events.k8s.io Events (decision 157)", () => {
  it("reads a core Event through events.k8s.io with the new names", async () => {
    const r = await call(s, "GET", `${NEW}/old`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      regarding: { kind: "ConfigMap", name: "c", uid: "u1" },
      note: "by the old recorder",
      deprecatedSource: { component: "old-recorder", host: "node-1" },
      deprecatedFirstTimestamp: "2026-12-05T10:00:00Z",
      deprecatedLastTimestamp: "2026-12-05T10:05:00Z",
      deprecatedCount: 3,
      reason: "Recorded",
    });
    for (const core of ["involvedObject", "message", "source", "count", "firstTimestamp"])
      expect(r.body).not.toHaveProperty(core);
  });

  it("reads an events.k8s.io Event through the core group with the old names", async () => {
    const r = await call(s, "GET", `${CORE}/new`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      apiVersion: "v1",
      involvedObject: { kind: "Machine", name: "m" },
      message: "  by the new recorder ",
      reportingComponent: "example.com/controller",
      reportingInstance: "controller-1",
      series: { count: 2 },
      type: "Warning",
    });
    for (const v1 of ["regarding", "note", "reportingController"]) expect(r.body).not.toHaveProperty(v1);
  });

  it("lists every Event through both groups, at one resourceVersion", async () => {
    const [core, v1] = [await call(s, "GET", CORE), await call(s, "GET", NEW)];
    expect(names(core)).toEqual(["new", "old"]);
    expect(names(v1)).toEqual(["new", "old"]);
    expect(v1.body.kind).toBe("EventList");
    expect(v1.body.items.map((i: { apiVersion: string }) => i.apiVersion)).toEqual([
      "events.k8s.io/v1",
      "events.k8s.io/v1",
    ]);
  });

  it("refuses a second Event of the same name through the other group", async () => {
    const r = await call(s, "POST", NEW, newEvent("old"));
    expect(r.status).toBe(409);
  });

  it.each([
    ["events.k8s.io by regarding.name", NEW, "regarding.name=m", 200, ["new"]],
    ["events.k8s.io by reportingController", NEW, "reportingController=example.com/controller", 200, ["new"]],
    ["events.k8s.io by type", NEW, "type=Warning", 200, ["new"]],
    ["events.k8s.io by regarding.uid and reason", NEW, "regarding.uid=u1,reason=Recorded", 200, ["old"]],
    ["events.k8s.io refuses the core name involvedObject.name", NEW, "involvedObject.name=m", 400, []],
    ["events.k8s.io refuses source", NEW, "source=old-recorder", 400, []],
    ["events.k8s.io refuses reportingComponent", NEW, "reportingComponent=x", 400, []],
    ["core by involvedObject.name", CORE, "involvedObject.name=c", 200, ["old"]],
    ["core by source: the component", CORE, "source=old-recorder", 200, ["old"]],
    ["core by source: else the reporting component", CORE, "source=example.com/controller", 200, ["new"]],
    ["core by reportingComponent", CORE, "reportingComponent=example.com/controller", 200, ["new"]],
    ["core refuses the new name regarding.name", CORE, "regarding.name=m", 400, []],
  ] as const)("field selector: %s", async (_, path, selector, status, want) => {
    const r = await call(s, "GET", `${path}?fieldSelector=${encodeURIComponent(selector)}`);
    expect(r.status).toBe(status);
    if (status === 200) expect(names(r)).toEqual(want);
    else expect(r.body.message).toBe(`field label not supported: ${selector.split("=")[0]}`);
  });

  it("delivers a core write to an events.k8s.io watch, converted, and a delete through the other group", async () => {
    const list = await call(s, "GET", NEW);
    const w = await watch(s, `${NEW}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
    expect((await call(s, "POST", CORE, coreEvent("watched"))).status).toBe(201);
    expect((await call(s, "DELETE", `${NEW}/watched`)).status).toBe(200);
    const [added, deleted] = [await w.next(), await w.next()];
    w.close();
    expect(added.type).toBe("ADDED");
    expect(added.object).toMatchObject({ apiVersion: "events.k8s.io/v1", note: "by the old recorder" });
    expect(added.object).not.toHaveProperty("message");
    expect(deleted.type).toBe("DELETED");
    expect(deleted.object).toMatchObject({ apiVersion: "events.k8s.io/v1", metadata: { name: "watched" } });
    expect((await call(s, "GET", `${CORE}/watched`)).status).toBe(404);
  });

  it("resumes an events.k8s.io watch over core writes", async () => {
    const c = await call(s, "POST", CORE, coreEvent("resumed"));
    await call(s, "DELETE", `${CORE}/resumed`);
    const w = await watch(
      s,
      `${NEW}?watch=true&resourceVersion=${Number(c.body.metadata.resourceVersion) - 1}`,
    );
    const events = [await w.next(), await w.next()];
    w.close();
    expect(events.map((e) => `${e.type} ${e.object.apiVersion} ${e.object.note}`)).toEqual([
      "ADDED events.k8s.io/v1 by the old recorder",
      "DELETED events.k8s.io/v1 by the old recorder",
    ]);
  });

  it("keeps an events.k8s.io update's rules on an Event the core group wrote: only the series may change", async () => {
    const r = await call(
      s,
      "PATCH",
      `${NEW}/old`,
      { note: "rewritten" },
      {
        contentType: "application/merge-patch+json",
      },
    );
    expect(r.status).toBe(422);
    const series = await call(
      s,
      "PATCH",
      `${NEW}/new`,
      { series: { count: 3, lastObservedTime: "2026-12-05T10:02:00.000000Z" } },
      { contentType: "application/merge-patch+json" },
    );
    expect(series.status).toBe(200);
    expect((await call(s, "GET", `${CORE}/new`)).body.series).toEqual({
      count: 3,
      lastObservedTime: "2026-12-05T10:02:00.000000Z",
    });
  });
});

describe("an Event's unknown fields, as kube's typed decoding drops them (decision 157)", () => {
  afterAll(async () => {
    for (const name of ["smuggled", "strict", "core-unknown"]) await call(s, "DELETE", `${CORE}/${name}`);
  });

  it("a core name written through events.k8s.io is an unknown field: dropped with a warning, never stored as the note", async () => {
    const r = await call(
      s,
      "POST",
      NEW,
      newEvent("smuggled", { note: "short", message: "x".repeat(2048), bogus: 1 }),
    );
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBe('299 - "unknown field \\"message\\"", 299 - "unknown field \\"bogus\\""');
    for (const path of [`${NEW}/smuggled`, `${CORE}/smuggled`]) {
      const read = await call(s, "GET", path);
      expect(read.body.note ?? read.body.message).toBe("short");
      expect(read.body).not.toHaveProperty("bogus");
    }
  });

  it("under Strict, refused naming every unknown field", async () => {
    const r = await call(
      s,
      "POST",
      `${NEW}?fieldValidation=Strict`,
      newEvent("strict", { message: "m", bogus: 1 }),
    );
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'Event in version "v1" cannot be handled as a Event: strict decoding error: unknown field "message", unknown field "bogus"',
    );
  });

  it("a core Event's unknown field is dropped too", async () => {
    const r = await call(s, "POST", CORE, coreEvent("core-unknown", { note: "n", bogus: 1 }));
    expect(r.status).toBe(201);
    expect(r.body).not.toHaveProperty("note");
    expect(r.body).not.toHaveProperty("bogus");
  });
});

describe("managedFields across the two groups (decision 157)", () => {
  const managers = (r: { body: { metadata: { managedFields?: Array<Record<string, unknown>> } } }) =>
    (r.body.metadata.managedFields ?? []).map((e) => `${e.manager} ${e.apiVersion}`);

  it("a write through one group drops the managers of the other: kube's field manager cannot convert between groups", async () => {
    try {
      await call(s, "POST", `${NEW}?fieldManager=a`, newEvent("managed"));
      const core = await call(
        s,
        "PATCH",
        `${CORE}/managed?fieldManager=b`,
        { message: "changed" },
        {
          contentType: "application/merge-patch+json",
        },
      );
      expect(managers(core)).toEqual(["b v1"]);
      const back = await call(
        s,
        "PATCH",
        `${NEW}/managed?fieldManager=c`,
        { series: { count: 3, lastObservedTime: "2026-12-05T10:09:00.000000Z" } },
        { contentType: "application/merge-patch+json" },
      );
      expect(managers(back)).toEqual(["c events.k8s.io/v1"]);
    } finally {
      await call(s, "DELETE", `${CORE}/managed`);
    }
  });
});

describe("the Events table, as kube's printer fills it (decision 157)", () => {
  it.each([
    ["core", CORE],
    ["events.k8s.io", NEW],
  ])("through %s: ten columns, the wide ones at priority 1", async (_, path) => {
    const r = await call(s, "GET", path, undefined, TABLE);
    expect(r.status).toBe(200);
    expect(
      r.body.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}:${c.priority}`),
    ).toEqual([
      "Last Seen:0",
      "Type:0",
      "Reason:0",
      "Object:0",
      "Subobject:1",
      "Source:1",
      "Message:0",
      "First Seen:1",
      "Count:1",
      "Name:1",
    ]);
    const rows = r.body.rows.map((row: { cells: unknown[] }) => [
      ...row.cells.slice(1, 7),
      ...row.cells.slice(8),
    ]);
    expect(rows).toEqual([
      [
        "Warning",
        "Reported",
        "machine/m",
        "spec",
        "example.com/controller, controller-1",
        "by the new recorder",
        3,
        "new",
      ],
      ["", "Recorded", "configmap/c", "", "old-recorder, node-1", "by the old recorder", 3, "old"],
    ]);
  });
});
