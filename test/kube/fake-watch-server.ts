/**
 * A tiny list/watch API for one collection (ConfigMaps in one namespace), with the faults the informer
 * must survive: cut streams, compaction (410 as HTTP status or as an ERROR event), 500s on list, silent
 * (frozen) streams, and refusing connections. Two front ends share the model: an in-process `Transport`
 * (for tests on a manual clock) and a real HTTP server reached through a `KubeConfig` (for the transport's
 * own stream parsing and socket handling).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { errorFromStatus, TransportError } from "../../src/kube/errors.js";
import type { KubeObject } from "../../src/kube/object.js";
import type { JsonStream, KubeRequest, Transport } from "../../src/kube/transport.js";

export const NAMESPACE = "ns";
export const COLLECTION = `/api/v1/namespaces/${NAMESPACE}/configmaps`;

interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: Record<string, unknown>;
}

interface Watcher {
  send(event: WatchEvent): void;
  end(broken: boolean): void;
  frozen: boolean;
  bookmarks: boolean;
}

const statusBody = (code: number, reason: string, message: string) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code,
  reason,
  message,
});

export class WatchModel {
  rv = 0;
  readonly objects = new Map<string, KubeObject>();
  private history: { rv: number; event: WatchEvent }[] = [];
  compactedBefore = 0;
  readonly watchers = new Set<Watcher>();
  counters = { lists: 0, watches: 0, gone: 0, listFailures: 0 };
  /** The next n lists answer 500. */
  failLists = 0;
  /** Watches below the compaction point get 410 as HTTP status ("http") or as an ERROR event ("event"). */
  goneAs: "http" | "event" = "http";
  /** New watches are accepted and then never written to. */
  freezeNewWatches = false;
  /** Every request fails as if the server were unreachable. */
  down = false;
  /** While set, a list's answer (taken when the request arrives) is delivered only once this resolves. */
  listsHeld: Promise<void> | undefined;

  /** Holds back the answers of lists from now on (a slow list, or one a test must see in flight); returns the release. */
  holdLists(): () => void {
    let release: () => void = () => {};
    this.listsHeld = new Promise<void>((r) => {
      release = r;
    });
    return () => {
      this.listsHeld = undefined;
      release();
    };
  }

  private emit(type: WatchEvent["type"], object: KubeObject): void {
    const event = { type, object: object as Record<string, unknown> };
    this.history.push({ rv: this.rv, event });
    for (const w of this.watchers) if (!w.frozen) w.send(event);
  }

  put(name: string, data: Record<string, string>): void {
    const existing = this.objects.get(name);
    this.rv++;
    const object: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace: NAMESPACE,
        uid: existing?.metadata?.uid ?? `uid-${name}`,
        resourceVersion: String(this.rv),
        managedFields: [{ manager: "test" }],
      },
      data,
    };
    this.objects.set(name, object);
    this.emit(existing ? "MODIFIED" : "ADDED", object);
  }

  delete(name: string): void {
    const existing = this.objects.get(name);
    if (!existing) return;
    this.rv++;
    this.objects.delete(name);
    this.emit("DELETED", {
      ...existing,
      metadata: { ...existing.metadata, resourceVersion: String(this.rv) },
    });
  }

  /** Forgets history: any watch resuming from an older resourceVersion is answered 410. */
  compact(): void {
    this.compactedBefore = this.rv;
    this.history = [];
  }

  /** Breaks every open stream (as a load balancer dropping connections would). */
  cutWatches(): void {
    for (const w of [...this.watchers]) w.end(true);
    this.watchers.clear();
  }

  /** Open streams stop receiving anything (events and bookmarks) but stay open. */
  freezeWatches(): void {
    for (const w of this.watchers) w.frozen = true;
  }

  bookmark(): void {
    for (const w of this.watchers)
      if (!w.frozen && w.bookmarks)
        w.send({
          type: "BOOKMARK",
          object: { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: String(this.rv) } },
        });
  }

  /** The state the informer must end with: name → resourceVersion. */
  state(): Record<string, string> {
    return Object.fromEntries([...this.objects].map(([n, o]) => [n, o.metadata!.resourceVersion!]));
  }

  list(): { code: number; body: unknown } {
    this.counters.lists++;
    if (this.failLists > 0) {
      this.failLists--;
      this.counters.listFailures++;
      return { code: 500, body: statusBody(500, "InternalError", "etcdserver: request timed out") };
    }
    const items = [...this.objects.values()].map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    return {
      code: 200,
      body: {
        kind: "ConfigMapList",
        apiVersion: "v1",
        metadata: { resourceVersion: String(this.rv) },
        items,
      },
    };
  }

  /** Registers a watch from `fromRv`; returns "gone" when that is older than the compaction point. */
  watch(fromRv: number, watcher: Watcher): "gone" | "ok" {
    this.counters.watches++;
    if (fromRv < this.compactedBefore) {
      this.counters.gone++;
      if (this.goneAs === "http") return "gone";
      watcher.send({
        type: "ERROR",
        object: statusBody(410, "Expired", `too old resource version: ${fromRv}`),
      });
      watcher.end(false);
      return "ok";
    }
    if (this.freezeNewWatches) watcher.frozen = true;
    for (const h of this.history) if (h.rv > fromRv && !watcher.frozen) watcher.send(h.event);
    this.watchers.add(watcher);
    return "ok";
  }

  unwatch(watcher: Watcher): void {
    this.watchers.delete(watcher);
  }
}

/** An async channel: pushes become iteration values; `end(true)` makes the iterator throw. */
const channel = () => {
  const values: unknown[] = [];
  let ended: "no" | "clean" | "broken" = "no";
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(v: unknown) {
      if (ended !== "no") return;
      values.push(v);
      notify();
    },
    end(broken: boolean) {
      if (ended !== "no") return;
      ended = broken ? "broken" : "clean";
      notify();
    },
    async *iterate(): AsyncGenerator<unknown> {
      for (;;) {
        if (values.length > 0) {
          yield values.shift();
          continue;
        }
        if (ended === "broken") throw new TransportError(0, "", "stream reset");
        if (ended === "clean") return;
        await new Promise<void>((r) => {
          wake = r;
        });
      }
    },
  };
};

/** The model as an in-process Transport. */
export function modelTransport(model: WatchModel): Transport {
  return {
    async request(req: KubeRequest) {
      if (model.down) throw new TransportError(0, "", "connection refused");
      const answer = model.list();
      const body = structuredClone(answer.body);
      if (model.listsHeld) {
        const held = model.listsHeld;
        await new Promise<void>((resolve, reject) => {
          req.signal?.addEventListener("abort", () => reject(new TransportError(0, "", "aborted")), {
            once: true,
          });
          void held.then(resolve);
        });
      }
      if (answer.code !== 200) throw errorFromStatus(answer.code, body);
      return body;
    },
    async stream(req: KubeRequest): Promise<JsonStream> {
      if (model.down) throw new TransportError(0, "", "connection refused");
      const ch = channel();
      const watcher: Watcher = {
        send: (e) => ch.push(structuredClone(e)),
        end: (broken) => ch.end(broken),
        frozen: false,
        bookmarks: req.query?.allowWatchBookmarks === true,
      };
      if (model.watch(Number(req.query?.resourceVersion ?? 0), watcher) === "gone")
        throw errorFromStatus(410, statusBody(410, "Expired", "too old resource version"));
      const close = () => {
        model.unwatch(watcher);
        ch.end(true);
      };
      req.signal?.addEventListener("abort", close, { once: true });
      return { close, [Symbol.asyncIterator]: () => ch.iterate() };
    },
  };
}

/** The model behind a real HTTP server; `kubeConfig` points at it (plain HTTP, skipTLSVerify). */
export async function startModelServer(model: WatchModel) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const json = (code: number, body: unknown) => {
      res.writeHead(code, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (model.down) return req.socket.destroy();
    if (url.pathname !== COLLECTION) return json(404, statusBody(404, "NotFound", url.pathname));
    if (url.searchParams.get("watch") !== "true") {
      const answer = model.list();
      return json(answer.code, answer.body);
    }
    const watcher: Watcher = {
      send: (e) => res.write(`${JSON.stringify(e)}\n`),
      end: (broken) => (broken ? req.socket.destroy() : res.end()),
      frozen: false,
      bookmarks: url.searchParams.get("allowWatchBookmarks") === "true",
    };
    const from = Number(url.searchParams.get("resourceVersion") ?? 0);
    if (model.goneAs === "http" && from < model.compactedBefore) {
      model.counters.watches++;
      model.counters.gone++;
      return json(410, statusBody(410, "Expired", "too old resource version"));
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.flushHeaders();
    model.watch(from, watcher);
    req.on("close", () => model.unwatch(watcher));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "fake", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "c", cluster: "fake", user: "u" }],
    currentContext: "c",
  });
  return {
    kubeConfig,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
