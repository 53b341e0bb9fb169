/**
 * Objects as deep as kube-apiserver stores them (issue 22, the deep-object conformance probes): kube decodes
 * and stores an object up to 10,000 levels, managedFields included — a custom resource's preserve-unknown
 * field can hold a value ~9,990 levels deep. The local server must create, read, list, watch, patch and
 * update such an object as kube does, where JavaScript's own `JSON.stringify` and `structuredClone` overflow
 * the stack near 5,000 levels. Bodies are built and read as text: the test's own JSON.stringify would recurse.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { depthOf } from "../support/deep.js";
import { allowAll, call, namespace, start, WIDGETS, watch, widgetCrd } from "./helpers.js";

let s: ApiServer;
const NS = "deep";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

beforeAll(async () => {
  s = await start({ admission: allowAll });
  expect((await call(s, "POST", "/api/v1/namespaces", namespace(NS))).status).toBe(201);
  expect((await call(s, "POST", CRDS, widgetCrd())).status).toBe(201);
});
afterAll(() => s.stop());

/** A Widget whose spec.free.crafted nests so the object is `depth` levels deep (object 1, spec 2, free 3). */
const deepWidget = (name: string, depth: number, leaf = "1"): string => {
  const levels = depth - 2;
  return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"${name}","namespace":"${NS}"},"spec":{"free":${'{"n":'.repeat(levels)}${leaf}${"}".repeat(levels)}}}`;
};

const DEPTH = 9_990;
/**
 * Each case writes and reads objects 10,000 levels deep several times: 30–50 s alone here, past the suite's
 * minute when the machine is loaded.
 */
const DEEP_TIMEOUT_MS = 240_000;

describe("SPEC §8.1 a custom resource 9,990 levels deep, as kube-apiserver stores it", () => {
  it(
    "is created, read, listed and watched whole",
    async () => {
      const w = await watch(s, `${WIDGETS(NS)}?watch=true`);
      const created = await call(s, "POST", WIDGETS(NS), undefined, { raw: deepWidget("w1", DEPTH) });
      expect(created.status).toBe(201);
      expect(depthOf(created.body.spec)).toBe(DEPTH - 1);
      const read = await call(s, "GET", `${WIDGETS(NS)}/w1`);
      expect(read.status).toBe(200);
      expect(depthOf(read.body.spec)).toBe(DEPTH - 1);
      const list = await call(s, "GET", WIDGETS(NS));
      expect(list.status).toBe(200);
      expect(depthOf(list.body.items[0].spec)).toBe(DEPTH - 1);
      const added = await w.next();
      expect(added.type).toBe("ADDED");
      expect(depthOf(added.object.spec)).toBe(DEPTH - 1);
      w.close();
    },
    DEEP_TIMEOUT_MS,
  );

  it(
    "is patched (merge, JSON and server-side apply) and updated",
    async () => {
      const merge = await call(
        s,
        "PATCH",
        `${WIDGETS(NS)}/w1`,
        { metadata: { labels: { a: "b" } } },
        {
          contentType: "application/merge-patch+json",
        },
      );
      expect(merge.status).toBe(200);
      expect(depthOf(merge.body.spec)).toBe(DEPTH - 1);
      const json = await call(
        s,
        "PATCH",
        `${WIDGETS(NS)}/w1`,
        [{ op: "add", path: "/metadata/labels/c", value: "d" }],
        {
          contentType: "application/json-patch+json",
        },
      );
      expect(json.status).toBe(200);
      expect(json.body.metadata.labels).toEqual({ a: "b", c: "d" });
      const current = await call(s, "GET", `${WIDGETS(NS)}/w1`);
      const updated = await call(s, "PUT", `${WIDGETS(NS)}/w1`, undefined, {
        raw: deepWidget("w1", DEPTH, "2").replace(
          '"namespace":"deep"}',
          `"namespace":"deep","resourceVersion":"${current.body.metadata.resourceVersion}"}`,
        ),
      });
      expect(updated.status).toBe(200);
      const applied = await call(s, "PATCH", `${WIDGETS(NS)}/w2?fieldManager=me`, undefined, {
        raw: deepWidget("w2", DEPTH),
        contentType: "application/apply-patch+yaml",
      });
      expect(applied.status, applied.text.slice(0, 300)).toBe(201);
      expect(depthOf(applied.body.spec)).toBe(DEPTH - 1);
      // Applied again onto the deep live object, by another manager (forced: it takes the field over).
      const reapplied = await call(s, "PATCH", `${WIDGETS(NS)}/w2?fieldManager=other&force=true`, undefined, {
        raw: deepWidget("w2", DEPTH, "3"),
        contentType: "application/apply-patch+yaml",
      });
      expect(reapplied.status, reapplied.text.slice(0, 300)).toBe(200);
      expect(reapplied.text).toContain('{"n":3}');
    },
    DEEP_TIMEOUT_MS,
  );

  it(
    "has its scale subresource written and read",
    async () => {
      // Written first: it has no replicas yet, and kube refuses (500) to read the Scale of such an object.
      const scaled = await call(
        s,
        "PATCH",
        `${WIDGETS(NS)}/w1/scale`,
        { spec: { replicas: 2 } },
        {
          contentType: "application/merge-patch+json",
        },
      );
      expect(scaled.status, scaled.text.slice(0, 300)).toBe(200);
      const scale = await call(s, "GET", `${WIDGETS(NS)}/w1/scale`);
      expect(scale.status, scale.text.slice(0, 300)).toBe(200);
      expect(scale.body.spec.replicas).toBe(2);
      expect((await call(s, "GET", `${WIDGETS(NS)}/w1`)).body.spec.replicas).toBe(2);
    },
    DEEP_TIMEOUT_MS,
  );
});

describe("SPEC §8.1, decision 139: the answers built around a deep object", () => {
  // 6,000 levels: past where JSON.stringify overflows (near 5,000), cheaper than the cases above.
  const NS2 = "deep-answers";
  const deepIn = (ns: string, name: string, depth: number): string =>
    deepWidget(name, depth).replace(`"namespace":"${NS}"`, `"namespace":"${ns}"`);

  it(
    "is listed and watched as a Table with its object, and deleted by collection — not a 500",
    async () => {
      expect((await call(s, "POST", "/api/v1/namespaces", namespace(NS2))).status).toBe(201);
      const tableWatch = await watch(
        s,
        `${WIDGETS(NS2)}?watch=true&includeObject=Object`,
        undefined,
        "application/json;as=Table;v=v1;g=meta.k8s.io",
      );
      const created = await call(s, "POST", WIDGETS(NS2), undefined, { raw: deepIn(NS2, "t1", 6_000) });
      expect(created.status).toBe(201);
      const table = await call(s, "GET", `${WIDGETS(NS2)}?includeObject=Object`, undefined, {
        accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
      });
      expect(table.status, table.text.slice(0, 200)).toBe(200);
      expect(depthOf(table.body.rows[0].object.spec)).toBe(5_999);
      const event = await tableWatch.next();
      expect(event.type).toBe("ADDED");
      expect(depthOf(event.object.rows[0].object.spec)).toBe(5_999);
      tableWatch.close();
      // A merge patch as deep: it recursed, and answered 500 from 4,000 levels.
      const levels = 5_990;
      const patch = `{"spec":{"free":${'{"m":'.repeat(levels)}1${"}".repeat(levels)}}}`;
      const patched = await call(s, "PATCH", `${WIDGETS(NS2)}/t1`, undefined, {
        raw: patch,
        contentType: "application/merge-patch+json",
      });
      expect(patched.status, patched.text.slice(0, 200)).toBe(200);
      expect(depthOf(patched.body.spec.free.m)).toBe(levels - 1);
      expect(depthOf(patched.body.spec.free.n)).toBe(5_997);
      // kube answers a delete of the collection with the objects it deleted: once 500 after deleting them.
      const deleted = await call(s, "DELETE", WIDGETS(NS2));
      expect(deleted.status, deleted.text.slice(0, 200)).toBe(200);
      expect(deleted.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(["t1"]);
      expect(depthOf(deleted.body.items[0].spec)).toBe(5_999);
    },
    DEEP_TIMEOUT_MS,
  );
});
