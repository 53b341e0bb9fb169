/**
 * Watch streams as kube-apiserver serves them (SPEC §8): headers flushed at once, ADDED replay for
 * resourceVersion 0/absent, ADDED/MODIFIED/DELETED live, resume from a resourceVersion, 410 Expired as
 * an ERROR event when the version left the history window, bookmarks when asked, timeoutSeconds,
 * selectors (an object leaving the selector is DELETED), the legacy /watch/ path and Table events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { allowAll, call, configMap, namespace, start, watch } from "./helpers.js";

let s: ApiServer;
const CM = "/api/v1/namespaces/w/configmaps";
const merge = { contentType: "application/merge-patch+json" };

beforeAll(async () => {
  s = await start({ admission: allowAll, bookmarkIntervalMs: 50, watchHistorySize: 20 });
  await call(s, "POST", "/api/v1/namespaces", namespace("w"));
});
afterAll(() => s.stop());

describe("watch", () => {
  it("flushes headers before any event and replays current objects as ADDED when resourceVersion is absent", async () => {
    await call(s, "POST", CM, configMap("first", "w"));
    const empty = await watch(
      s,
      "/api/v1/namespaces/w/configmaps?watch=true&fieldSelector=metadata.name%3Dnothing",
    );
    expect(empty.status).toBe(200);
    expect(empty.headers["content-type"]).toBe("application/json");
    empty.close();
    const w = await watch(s, `${CM}?watch=true`);
    const e = await w.next();
    expect(e.type).toBe("ADDED");
    expect(e.object).toMatchObject({ kind: "ConfigMap", apiVersion: "v1", metadata: { name: "first" } });
    w.close();
  });

  it("streams ADDED, MODIFIED and DELETED with typed objects and the new resourceVersions", async () => {
    const list = await call(s, "GET", CM);
    const w = await watch(s, `${CM}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
    const c = await call(s, "POST", CM, configMap("live", "w"));
    const m = await call(s, "PATCH", `${CM}/live`, { data: { a: "1" } }, merge);
    const d = await call(s, "DELETE", `${CM}/live`);
    expect(d.status).toBe(200);
    const events = [await w.next(), await w.next(), await w.next()];
    expect(events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    expect(events[0]!.object.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
    expect(events[1]!.object.metadata.resourceVersion).toBe(m.body.metadata.resourceVersion);
    expect(Number(events[2]!.object.metadata.resourceVersion)).toBeGreaterThan(
      Number(m.body.metadata.resourceVersion),
    );
    w.close();
  });

  it("resumes from a recent resourceVersion with exactly the later events", async () => {
    const a = await call(s, "POST", CM, configMap("r1", "w"));
    await call(s, "POST", CM, configMap("r2", "w"));
    await call(s, "PATCH", `${CM}/r1`, { data: { x: "y" } }, merge);
    const w = await watch(s, `${CM}?watch=true&resourceVersion=${a.body.metadata.resourceVersion}`);
    const e1 = await w.next();
    const e2 = await w.next();
    expect([e1.type, e1.object.metadata.name, e2.type, e2.object.metadata.name]).toEqual([
      "ADDED",
      "r2",
      "MODIFIED",
      "r1",
    ]);
    w.close();
  });

  it("answers a resourceVersion older than the history window with an ERROR 410 Expired event", async () => {
    for (let i = 0; i < 50; i++) await call(s, "POST", CM, configMap(`bulk-${i}`, "w"));
    const w = await watch(s, `${CM}?watch=true&resourceVersion=2`);
    const e = await w.next();
    expect(e.type).toBe("ERROR");
    expect(e.object).toMatchObject({ kind: "Status", status: "Failure", reason: "Expired", code: 410 });
    expect(e.object.message).toMatch(/^too old resource version: 2 \(\d+\)$/);
    await w.ended;
  });

  it("sends BOOKMARK events only when allowWatchBookmarks=true", async () => {
    const rv = s.store.resourceVersion();
    const w = await watch(s, `${CM}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`);
    const e = await w.next();
    expect(e).toEqual({
      type: "BOOKMARK",
      object: { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: rv } },
    });
    w.close();
    const plain = await watch(s, `${CM}?watch=true&resourceVersion=${rv}`);
    await expect(plain.next(200)).rejects.toThrow(/no watch event/);
    plain.close();
  });

  it("ends the stream after timeoutSeconds", async () => {
    const w = await watch(
      s,
      `${CM}?watch=true&resourceVersion=${s.store.resourceVersion()}&timeoutSeconds=1`,
    );
    await w.ended;
    expect(w.status).toBe(200);
  });

  it("applies label selectors: an object entering the selector is ADDED, leaving it is DELETED", async () => {
    await call(s, "POST", CM, configMap("sel", "w", {}, { team: "a" }));
    const w = await watch(
      s,
      `${CM}?watch=true&labelSelector=team%3Db&resourceVersion=${s.store.resourceVersion()}`,
    );
    await call(s, "PATCH", `${CM}/sel`, { metadata: { labels: { team: "b" } } }, merge);
    await call(s, "PATCH", `${CM}/sel`, { data: { k: "v" } }, merge);
    await call(s, "PATCH", `${CM}/sel`, { metadata: { labels: { team: "c" } } }, merge);
    const types = [await w.next(), await w.next(), await w.next()].map((e) => e.type);
    expect(types).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    w.close();
  });

  it("serves the legacy /watch/ path and cluster-wide watches", async () => {
    const w = await watch(
      s,
      `/api/v1/watch/namespaces/w/configmaps?resourceVersion=${s.store.resourceVersion()}`,
    );
    const all = await watch(s, `/api/v1/configmaps?watch=1&resourceVersion=${s.store.resourceVersion()}`);
    await call(s, "POST", CM, configMap("legacy", "w"));
    expect((await w.next()).object.metadata.name).toBe("legacy");
    expect((await all.next()).object.metadata.name).toBe("legacy");
    w.close();
    all.close();
  });

  it("sends Table rows as events when the watch asks for as=Table", async () => {
    const w = await watch(
      s,
      `${CM}?watch=true&fieldSelector=metadata.name%3Dfirst`,
      undefined,
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    );
    const e = await w.next();
    expect(e.object.kind).toBe("Table");
    expect(e.object.rows[0].cells[0]).toBe("first");
    w.close();
  });

  it("removes watchers when clients disconnect", async () => {
    const w = await watch(s, `${CM}?watch=true&resourceVersion=${s.store.resourceVersion()}`);
    const before = s.watchCount();
    w.close();
    for (let i = 0; i < 50 && s.watchCount() >= before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(s.watchCount()).toBe(before - 1);
  });

  it("a burst of writes reaches every watcher in order, each event the object its write answered", async () => {
    const list = await call(s, "GET", CM);
    const watchers = await Promise.all(
      [1, 2, 3].map(() => watch(s, `${CM}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`)),
    );
    await call(s, "POST", CM, configMap("burst", "w"));
    const answers = await Promise.all(
      ["1", "2", "3", "4"].map((v) => call(s, "PATCH", `${CM}/burst`, { data: { [`k${v}`]: v } }, merge)),
    );
    const written = answers
      .map((r) => r.body)
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
    for (const w of watchers) {
      expect((await w.next()).type).toBe("ADDED");
      const events = [await w.next(), await w.next(), await w.next(), await w.next()];
      expect(events.map((e) => e.type)).toEqual(["MODIFIED", "MODIFIED", "MODIFIED", "MODIFIED"]);
      expect(events.map((e) => e.object)).toEqual(written);
      w.close();
    }
  });
});
