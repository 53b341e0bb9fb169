/**
 * Watch streams as kube serves them: newline-delimited JSON with the headers flushed at once, the initial
 * objects (or the events since a resourceVersion, 410 Expired for a compacted one), live events through the
 * same selectors, bookmarks, `timeoutSeconds`, Table rows on request, and watches cut by fault injection.
 * Slow readers are handled by watch-writer.ts; what a list selects, by list-pages.ts.
 */
import type { ServerResponse } from "node:http";
import type pino from "pino";
import { jsonText } from "../json-text.js";
import type { KubeObject } from "../kube/object.js";
import { listOptionCauses } from "./builtin-validation.js";
import type { FaultInjector, RequestInfo } from "./faults.js";
import { byNamespaceName, type CollectionRequest, type Collections } from "./list-pages.js";
import { partialObjectMetadata } from "./negotiation.js";
import { integerParameter } from "./query.js";
import { asVersion, gvOf } from "./rest/index.js";
import { ApiError, invalid } from "./status.js";
import { deliver, type Storage } from "./storage.js";
import { tableFor } from "./table.js";
import type { StoreEvent, WatchEventType } from "./types.js";
import { resourceKey } from "./types.js";
import { createWatchWriter } from "./watch-writer.js";
import { includeOf, type SerializedObjects } from "./wire.js";

const MAX_WATCH_BACKLOG_BYTES = 64 * 1024 * 1024;

export interface WatchDeps {
  storage: Storage;
  collections: Collections;
  /** Where a watch event leaves the JSON it made of a stored object, for the write's own response. */
  serialized: SerializedObjects;
  faults: FaultInjector;
  clock: () => number;
  bookmarkIntervalMs: number;
  logger?: pino.Logger;
}

export class Watches {
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly deps: WatchDeps) {}

  /** Ends every open watch (server stop). */
  closeAll(): void {
    for (const r of this.open) r.destroy();
    this.open.clear();
  }

  /** Serves one watch until the client goes, its timeout passes or an injected fault cuts it. */
  serve(request: CollectionRequest, info: RequestInfo): void {
    const { req, res, type, version, namespace, q } = request;
    const match = this.deps.collections.predicates(type, q);
    const causes = listOptionCauses(q, true);
    if (causes.length > 0) throw invalid("meta.k8s.io", "ListOptions", "", causes);
    const rvParam = q.get("resourceVersion") ?? "";
    const since = rvParam === "" || rvParam === "0" ? undefined : Number(rvParam);
    // The watch cache parses it late, as an internal error without a reason.
    if (since !== undefined && !/^\d+$/.test(rvParam))
      throw new ApiError(
        500,
        "",
        `resourceVersion: Invalid value: ${JSON.stringify(rvParam)}: strconv.ParseUint: parsing ${JSON.stringify(rvParam)}: invalid syntax`,
      );
    const { rendering } = request;
    const include = includeOf(q);
    const key = resourceKey(type);
    const sameVersion = version === type.storageVersion;

    res.writeHead(200, {
      "Content-Type": "application/json",
      "Cache-Control": "no-cache, private",
      "Transfer-Encoding": "chunked",
    });
    res.flushHeaders();
    this.open.add(res);

    let firstTable = true;
    const line = (type_: string, e: StoreEvent | undefined, o: KubeObject): string => {
      if (rendering.as === "Table") {
        const t = tableFor(type, [asVersion(type, version, o)], {
          resourceVersion: o.metadata?.resourceVersion,
          include,
          now: this.deps.clock(),
          withColumns: firstTable,
          version: rendering.version,
        });
        firstTable = false;
        return `{"type":"${type_}","object":${jsonText(t)}}\n`;
      }
      if (rendering.as === "PartialObjectMetadata") {
        const partial = partialObjectMetadata(asVersion(type, version, o), rendering.version);
        return `{"type":"${type_}","object":${jsonText(partial)}}\n`;
      }
      if (e && sameVersion) {
        if (e.json === undefined) {
          e.json = jsonText(e.object);
          this.deps.serialized.remember(e.object, e.json);
        }
        return `{"type":"${type_}","object":${e.json}}\n`;
      }
      return `{"type":"${type_}","object":${jsonText(asVersion(type, version, o))}}\n`;
    };
    const stream = createWatchWriter(res, {
      maxBacklog: MAX_WATCH_BACKLOG_BYTES,
      onStalled: () =>
        this.deps.logger?.warn(
          { resource: info.resource, user: info.user },
          "closing a watch that stopped reading",
        ),
    });
    // kube's watch cannot encode an event as a PartialObjectMetadataList (one object is not a list): it ends
    // the stream at the first event, and the client sees it close without one.
    const write =
      rendering.as === "PartialObjectMetadataList" ? (_line: string): void => stream.end() : stream.write;

    if (since !== undefined) {
      const events = this.deps.storage.eventsSince(key, since);
      if (!events) {
        const oldest = this.deps.storage.oldestResumableRv();
        const status = new ApiError(
          410,
          "Expired",
          `too old resource version: ${since} (${oldest + 1})`,
        ).toStatus();
        res.end(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
        this.open.delete(res);
        return;
      }
      // Replay goes through the same selector translation as live events.
      const replay = {
        key,
        namespace,
        matches: match,
        send: (t: WatchEventType, ev: StoreEvent) => write(line(t, ev, ev.object)),
      };
      for (const e of events) deliver(replay, e);
    } else {
      const initial = this.deps.collections.select(type, namespace, q).sort(byNamespaceName);
      for (const o of initial) write(line("ADDED", undefined, o));
    }

    const remove = this.deps.storage.addWatcher({
      key,
      namespace,
      matches: match,
      send: (t, e) => write(line(t, e, e.object)),
    });
    const timers: NodeJS.Timeout[] = [];
    const intervals: NodeJS.Timeout[] = [];
    const close = (): void => {
      remove();
      for (const t of timers) clearTimeout(t);
      for (const t of intervals) clearInterval(t);
      stream.discard();
      this.open.delete(res);
    };
    if (q.get("allowWatchBookmarks") === "true") {
      const bookmark = (): void => {
        const metadata = { resourceVersion: String(this.deps.storage.currentRv()) };
        const object =
          rendering.as === "PartialObjectMetadata"
            ? partialObjectMetadata({ metadata }, rendering.version)
            : { kind: type.kind, apiVersion: gvOf(type, version), metadata };
        write(`{"type":"BOOKMARK","object":${JSON.stringify(object)}}\n`);
      };
      intervals.push(setInterval(bookmark, this.deps.bookmarkIntervalMs));
      // kube's watch cache also sends one 2 s before the watch's deadline (when that is still ahead and
      // sooner than the periodic one), so a client resumes from as recent a resourceVersion as it can.
      const preTimeoutMs = (integerParameter(q, "timeoutSeconds") ?? 0) * 1000 - 2000;
      if (preTimeoutMs > 0 && preTimeoutMs < this.deps.bookmarkIntervalMs)
        timers.push(setTimeout(bookmark, preTimeoutMs));
    }
    const timeout = integerParameter(q, "timeoutSeconds") ?? 0;
    if (timeout > 0) timers.push(setTimeout(stream.end, timeout * 1000));
    const drop = this.deps.faults.watchDropAfter(info);
    if (drop !== undefined) timers.push(setTimeout(stream.end, drop));
    res.on("close", close);
    req.on("close", close);
  }
}
