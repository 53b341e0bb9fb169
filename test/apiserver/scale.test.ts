/**
 * Volume check (SPEC §8, benchmark prerequisite): 1,000 creates of a CRD kind through HTTPS with many
 * watchers open, then a list. Asserts completeness only (every object listed, every watcher saw every
 * event); durations are logged for information, never asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import {
  allowAll,
  call,
  namespace,
  start,
  type WatchStream,
  WIDGETS,
  watch,
  widget,
  widgetCrd,
} from "./helpers.js";

let s: ApiServer;
beforeAll(async () => {
  s = await start({ admission: allowAll });
  await call(s, "POST", "/api/v1/namespaces", namespace("bulk"));
  await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
});
afterAll(() => s.stop());

describe("volume", () => {
  it("1,000 creates with 20 watchers, then one list of all of them", async () => {
    const N = 1000;
    const rv = s.store.resourceVersion();
    const watchers: WatchStream[] = [];
    for (let i = 0; i < 20; i++)
      watchers.push(await watch(s, `${WIDGETS("bulk")}?watch=true&resourceVersion=${rv}`));
    const started = performance.now();
    const queue = Array.from({ length: N }, (_, i) => i);
    const worker = async (): Promise<void> => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const r = await call(
          s,
          "POST",
          WIDGETS("bulk"),
          widget(`w-${String(i).padStart(4, "0")}`, "bulk", { replicas: i }),
        );
        if (r.status !== 201) throw new Error(`create ${i}: ${r.status} ${r.text}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const created = performance.now();
    const list = await call(s, "GET", WIDGETS("bulk"));
    const listed = performance.now();
    expect(list.body.items).toHaveLength(N);
    expect(list.body.items[0].metadata.name).toBe("w-0000");
    for (const w of watchers) {
      let seen = 0;
      while (seen < N) {
        await w.next(10_000);
        seen++;
      }
      w.close();
    }
    console.info(
      `1000 creates: ${Math.round(created - started)} ms; list: ${Math.round(listed - created)} ms; 20 watchers drained`,
    );
  });
});
