/**
 * Issue 11 item 6 (SPEC §7): a watch that goes silent — the TCP connection stays open but nothing more
 * arrives, as behind a wedged load balancer — is detected by the informer's silence watchdog and restarted,
 * and the cache ends equal to the server. The stall is real: a TCP proxy between informer and API server
 * stops forwarding on the connections open at that moment (new connections pass). The server sends
 * bookmarks well inside the silence window, so only a stalled stream can trip the watchdog.
 */
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiServer, startApiServer } from "../src/apiserver/index.js";
import { type Cache, createCache } from "../src/kube/cache.js";
import { systemClock } from "../src/kube/clock.js";
import { connect, type KubeConnection } from "../src/kube/config.js";
import { KINDS } from "../src/kube/kinds.js";
import { PARAMS } from "./params.js";
import { recordFigures } from "./report.js";

const NS = "stall-test";
const users = [
  { token: "admin-token", username: "admin", groups: ["system:masters"] },
  { token: "informer-token", username: "informer", groups: ["system:masters"] },
];

/** A TCP proxy whose `stall()` silences every connection open now, in both directions, for good. */
async function stallingProxy(
  target: URL,
): Promise<{ port: number; stall(): number; close(): Promise<void> }> {
  const open = new Set<{ client: Socket; upstream: Socket; stalled: boolean }>();
  const server: Server = createServer((client) => {
    const upstream = netConnect(Number(target.port), target.hostname);
    const pair = { client, upstream, stalled: false };
    open.add(pair);
    client.on("data", (d) => {
      if (!pair.stalled) upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (!pair.stalled) client.write(d);
    });
    const end = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    stall: () => {
      let n = 0;
      for (const pair of open) {
        if (pair.stalled) continue;
        pair.stalled = true;
        n++;
      }
      return n;
    },
    close: async () => {
      for (const pair of open) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let api: ApiServer;
let proxy: Awaited<ReturnType<typeof stallingProxy>>;
let cache: Cache;
let admin: KubeConnection;
beforeAll(async () => {
  api = await startApiServer({ port: 0, users, bookmarkIntervalMs: Math.max(50, PARAMS.watchSilenceMs / 5) });
  admin = connect({ kubeconfigText: api.kubeconfig("admin") });
  await admin.client.create(KINDS.namespace, { metadata: { name: NS } });
  proxy = await stallingProxy(new URL(api.url));
  const viaProxy = api.kubeconfig("informer").replace(api.url, `https://127.0.0.1:${proxy.port}`);
  cache = createCache({
    transport: connect({ kubeconfigText: viaProxy }).transport,
    clock: systemClock,
    logger: pino({ level: "silent" }),
    watchSilenceTimeoutMs: PARAMS.watchSilenceMs,
    backoff: { initialMs: 20, maxMs: 200 },
  });
  cache.informerFor(KINDS.configMap, NS);
  await cache.waitForSync(15_000);
});
afterAll(async () => {
  await cache?.stop();
  await proxy?.close();
  await api?.stop();
});

const watches = () => api.counters.snapshot().byKey["watch /configmaps informer"] ?? 0;
const serverState = () =>
  Object.fromEntries(
    api.store
      .list({ group: "", plural: "configmaps" }, NS)
      .map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]),
  );
const cacheState = () =>
  Object.fromEntries(
    cache
      .informerFor(KINDS.configMap, NS)
      .list(NS)
      .map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]),
  );

describe("item 6: watch stall", () => {
  it(`${PARAMS.stallRounds} stalls: each detected and restarted, the cache ends equal to the server`, async () => {
    const detectSeconds: number[] = [];
    const convergeSeconds: number[] = [];
    await vi.waitFor(() => expect(watches()).toBeGreaterThan(0), { timeout: 10_000 });
    for (let round = 0; round < PARAMS.stallRounds; round++) {
      const watchesBefore = watches();
      const stalledAt = performance.now();
      expect(proxy.stall()).toBeGreaterThan(0);
      // Changes the stalled stream never delivers: creates, an update and a delete.
      for (let i = 0; i < 5; i++)
        await admin.client.create(KINDS.configMap, {
          metadata: { name: `r${round}-${i}`, namespace: NS },
          data: { round: String(round) },
        });
      const first = await admin.client.get(KINDS.configMap, NS, `r${round}-0`);
      await admin.client.update(KINDS.configMap, {
        ...first,
        data: { round: String(round), updated: "yes" },
      });
      if (round > 0) await admin.client.delete(KINDS.configMap, NS, `r${round - 1}-1`);
      await vi.waitFor(() => expect(watches()).toBeGreaterThan(watchesBefore), {
        timeout: PARAMS.watchSilenceMs * 10 + 10_000,
        interval: 10,
      });
      detectSeconds.push(Math.round(performance.now() - stalledAt) / 1000);
      await vi.waitFor(() => expect(cacheState()).toEqual(serverState()), { timeout: 20_000, interval: 20 });
      convergeSeconds.push(Math.round(performance.now() - stalledAt) / 1000);
    }
    recordFigures("6-watch-stall", {
      rounds: PARAMS.stallRounds,
      watchSilenceTimeoutSeconds: PARAMS.watchSilenceMs / 1000,
      secondsToRestart: detectSeconds,
      secondsToConverge: convergeSeconds,
      objects: Object.keys(serverState()).length,
    });
    expect(Object.keys(cacheState()).length).toBe(PARAMS.stallRounds * 5 - (PARAMS.stallRounds - 1));
  });
});
