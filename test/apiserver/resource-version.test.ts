/**
 * resourceVersion as kube-apiserver 1.33 reads it (conformance backlog item 7; probes `rv:` in
 * test/cluster/conformance-probes.ts): a write's is a precondition parsed as an unsigned 64-bit integer, with
 * "" and "0" meaning none (built-ins update unconditionally, custom resources refuse with 422) and anything
 * else a 500; a read's is served "not older than" it, waiting up to 3 s for a revision not reached (504).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import {
  awaitResourceVersion,
  parseResourceVersion,
  readResourceVersion,
} from "../../src/apiserver/resource-version.js";
import { ApiError } from "../../src/apiserver/status.js";
import { Storage } from "../../src/apiserver/storage.js";
import { allowAll, call, configMap, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

const MERGE = { contentType: "application/merge-patch+json" };
const CMS = "/api/v1/namespaces/rv/configmaps";

let s: ApiServer;
beforeAll(async () => {
  s = await start({ admission: allowAll });
  expect((await call(s, "POST", "/api/v1/namespaces", namespace("rv"))).status).toBe(201);
  expect(
    (await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd())).status,
  ).toBe(201);
});
afterAll(() => s.stop());

describe("parsing", () => {
  it("reads an unsigned 64-bit integer as Go's strconv.ParseUint does, with its error texts", () => {
    expect(parseResourceVersion("42")).toBe(42n);
    expect(parseResourceVersion("0")).toBe(0n);
    expect(parseResourceVersion("18446744073709551615")).toBe(18446744073709551615n);
    expect(parseResourceVersion("abc")).toBe('strconv.ParseUint: parsing "abc": invalid syntax');
    expect(parseResourceVersion("+1")).toBe('strconv.ParseUint: parsing "+1": invalid syntax');
    expect(parseResourceVersion("18446744073709551616")).toBe(
      'strconv.ParseUint: parsing "18446744073709551616": value out of range',
    );
  });

  it("a read's resourceVersion: none when empty, a 500 without a reason when not a number", () => {
    expect(readResourceVersion(null)).toBeUndefined();
    expect(readResourceVersion("")).toBeUndefined();
    expect(readResourceVersion("7")).toBe(7n);
    const e = (() => {
      try {
        readResourceVersion("abc");
      } catch (err) {
        return err as ApiError;
      }
    })();
    expect(e).toBeInstanceOf(ApiError);
    expect(e?.toStatus()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
      code: 500,
    });
  });
});

describe("waiting for a resourceVersion (kube's watch cache)", () => {
  it("returns once a write reaches it, and is a 504 client-go recognises when none does in time", async () => {
    const storage = new Storage();
    storage.put("/configmaps", { metadata: { name: "a", namespace: "n" } }, storage.nextRv());
    await awaitResourceVersion(storage, 1n, 10);
    const waiting = awaitResourceVersion(storage, 2n, 5_000);
    storage.put("/configmaps", { metadata: { name: "b", namespace: "n" } }, storage.nextRv());
    await waiting;
    const late = await awaitResourceVersion(storage, 9n, 20).catch((e: ApiError) => e);
    expect(late).toBeInstanceOf(ApiError);
    expect((late as ApiError).toStatus()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Timeout: Too large resource version: 9, current: 2",
      reason: "Timeout",
      details: {
        causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
        retryAfterSeconds: 1,
      },
      code: 504,
    });
  });

  it("a list not older than a resourceVersion the server has not reached waits for it", async () => {
    const next = Number(s.store.resourceVersion()) + 1;
    const listing = call(s, "GET", `${CMS}?resourceVersion=${next}`);
    await new Promise((r) => setTimeout(r, 100));
    await call(s, "POST", CMS, configMap("arrives-later", "rv"));
    const list = await listing;
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain(
      "arrives-later",
    );
  });

  it("a list with a limit reads exactly: a future resourceVersion is etcd's internal error at once", async () => {
    const future = Number(s.store.resourceVersion()) + 1000;
    const r = await call(s, "GET", `${CMS}?resourceVersion=${future}&limit=1`);
    expect(r.status).toBe(500);
    expect(r.body.message).toBe("etcdserver: mvcc: required revision is a future revision");
  });
});

describe("a write's resourceVersion precondition", () => {
  it('"0" is no precondition: a ConfigMap PUT or patch updates unconditionally', async () => {
    const c = await call(s, "POST", CMS, configMap("zero", "rv", { k: "1" }));
    await call(s, "PATCH", `${CMS}/zero`, { data: { k: "2" } }, MERGE);
    const put = await call(s, "PUT", `${CMS}/zero`, {
      ...c.body,
      metadata: { ...c.body.metadata, resourceVersion: "0" },
      data: { k: "3" },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({ k: "3" });
    const patch = await call(
      s,
      "PATCH",
      `${CMS}/zero`,
      { metadata: { resourceVersion: "0" }, data: { k: "4" } },
      MERGE,
    );
    expect(patch.status).toBe(200);
    expect(patch.body.data).toEqual({ k: "4" });
  });

  it("one that is not a number is the storage versioner's 500, for PUT and patch alike", async () => {
    await call(s, "POST", CMS, configMap("abc", "rv", { k: "1" }));
    const patch = await call(s, "PATCH", `${CMS}/abc`, { metadata: { resourceVersion: "abc" } }, MERGE);
    expect(patch.status).toBe(500);
    expect(patch.body.message).toBe('strconv.ParseUint: parsing "abc": invalid syntax');
    expect(patch.body.reason).toBeUndefined();
    const range = await call(s, "PUT", `${CMS}/abc`, {
      ...configMap("abc", "rv"),
      metadata: { name: "abc", resourceVersion: "99999999999999999999" },
    });
    expect(range.status).toBe(500);
    expect(range.body.message).toBe('strconv.ParseUint: parsing "99999999999999999999": value out of range');
  });

  it('a custom resource refuses "0", and a patch removing the resourceVersion, as unconditional (422)', async () => {
    const w = await call(s, "POST", WIDGETS("rv"), widget("w0", "rv", { replicas: 1 }));
    const message =
      'widgets.example.com "w0" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update';
    const put = await call(s, "PUT", `${WIDGETS("rv")}/w0`, {
      ...w.body,
      metadata: { ...w.body.metadata, resourceVersion: "0" },
    });
    expect(put.status).toBe(422);
    expect(put.body.message).toBe(message);
    for (const rv of ["0", null]) {
      const patch = await call(
        s,
        "PATCH",
        `${WIDGETS("rv")}/w0`,
        { metadata: { resourceVersion: rv, labels: { a: "b" } } },
        MERGE,
      );
      expect(patch.status).toBe(422);
      expect(patch.body.message).toBe(message);
    }
    const abc = await call(
      s,
      "PATCH",
      `${WIDGETS("rv")}/w0`,
      { metadata: { resourceVersion: "abc" } },
      MERGE,
    );
    expect(abc.status).toBe(500);
  });

  it('a Scale\'s resourceVersion is the object\'s: "0" is 422 on a custom resource, "abc" 500, none unconditional', async () => {
    await call(s, "POST", WIDGETS("rv"), widget("ws", "rv", { replicas: 1 }));
    const scale = (rv?: string) => ({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "ws", ...(rv === undefined ? {} : { resourceVersion: rv }) },
      spec: { replicas: 2 },
    });
    expect((await call(s, "PUT", `${WIDGETS("rv")}/ws/scale`, scale("0"))).status).toBe(422);
    expect((await call(s, "PUT", `${WIDGETS("rv")}/ws/scale`, scale("abc"))).status).toBe(500);
    expect(
      (await call(s, "PATCH", `${WIDGETS("rv")}/ws/scale`, { metadata: { resourceVersion: "0" } }, MERGE))
        .status,
    ).toBe(422);
    expect((await call(s, "PUT", `${WIDGETS("rv")}/ws/scale`, scale())).status).toBe(200);
    expect((await call(s, "PUT", `${WIDGETS("rv")}/ws/scale`, scale("1"))).status).toBe(409);
  });
});
