/**
 * A built-in's unknown fields at any depth, as kube's typed decoding finds them: dropped and warned (`Warn`),
 * refused naming each (`Strict`), in the body's order with kube's paths (`spec.bogus`,
 * `status.conditions[0].z`). The expected texts were read off kube-apiserver 1.33 for the same bodies
 * (conformance backlog item 19).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { allowAll, call, namespace, start } from "./helpers.js";

let s: ApiServer;
const NS = "typed";

beforeAll(async () => {
  s = await start({ admission: allowAll });
  await call(s, "POST", "/api/v1/namespaces", namespace(NS));
});
afterAll(() => s.stop());

describe("a built-in's nested unknown fields (conformance backlog item 19)", () => {
  it("a Lease's: dropped, each warned in the body's order", async () => {
    const r = await call(
      s,
      "POST",
      `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases?fieldValidation=Warn`,
      {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "nested" },
        spec: { zz: 1, holderIdentity: "a", bogus: { x: 1 } },
        top: 1,
      },
    );
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBe(
      '299 - "unknown field \\"spec.zz\\"", 299 - "unknown field \\"spec.bogus\\"", 299 - "unknown field \\"top\\""',
    );
    expect(r.body.spec).toEqual({ holderIdentity: "a" });
  });

  it("an Event's, in its object references, source and series: refused under Strict", async () => {
    const r = await call(s, "POST", `/api/v1/namespaces/${NS}/events?fieldValidation=Strict`, {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "nested" },
      involvedObject: { kind: "ConfigMap", namespace: NS, name: "c", bogus: 1 },
      source: { component: "x", extra: 2 },
      series: { count: 2, lastObservedTime: "2026-12-05T10:00:00.000000Z", more: 3 },
      related: { kind: "Pod", what: 4 },
      reason: "R",
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'Event in version "v1" cannot be handled as a Event: strict decoding error: unknown field "involvedObject.bogus", unknown field "source.extra", unknown field "series.more", unknown field "related.what"',
    );
  });

  it("a Namespace's, in a list's element too", async () => {
    const r = await call(s, "POST", "/api/v1/namespaces?fieldValidation=Strict", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "nested-ns" },
      spec: { finalizers: [], x: 1 },
      status: { phase: "Active", y: 2, conditions: [{ type: "A", status: "True", z: 3 }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      'Namespace in version "v1" cannot be handled as a Namespace: strict decoding error: unknown field "spec.x", unknown field "status.y", unknown field "status.conditions[0].z"',
    );
  });

  it("an events.k8s.io Event's regarding, ignored: dropped without a word", async () => {
    const r = await call(s, "POST", `/apis/events.k8s.io/v1/namespaces/${NS}/events?fieldValidation=Ignore`, {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "ignored" },
      eventTime: "2026-12-05T10:00:00.000000Z",
      regarding: { kind: "ConfigMap", namespace: NS, name: "c", bogus: 1 },
      reportingController: "example.com/c",
      reportingInstance: "c-1",
      action: "A",
      reason: "R",
      type: "Normal",
    });
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBeUndefined();
    expect(r.body.regarding).toEqual({ kind: "ConfigMap", namespace: NS, name: "c" });
  });
});
