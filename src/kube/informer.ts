/**
 * One informer: a list+watch reflector for one resource type (optionally one namespace) feeding an
 * `IndexedStore`, with event handlers for controllers. It is written here rather than taken from
 * client-node because client-node's informer stops for good on any non-410 error; this one never gives up
 * while started: it re-lists on 410 (HTTP or an ERROR event), restarts with jittered exponential backoff
 * on any other failure, resumes watches from the last resourceVersion it saw (bookmarks included), and a
 * silence watchdog restarts a watch that delivered nothing — no event, no bookmark — within
 * `watchSilenceTimeoutMs`. It reports freshness for admission (SPEC §2.1): synced, and how long it has
 * been without an open watch stream (a quiet but connected watch is fresh). On request (`freshList`) it drops
 * its watch and lists afresh, so a replica that has just become leader acts on a view no older than its
 * leadership (SPEC §3.5).
 */
import type { Logger } from "pino";
import type { Clock } from "./clock.js";
import { sleep } from "./clock.js";
import { errorFromStatus, GoneError, KubeApiError } from "./errors.js";
import type { ResourceType } from "./kinds.js";
import { apiVersionOf } from "./kinds.js";
import { parseWithoutManagedFields } from "./managed-fields-text.js";
import type { KubeObject } from "./object.js";
import { isRecord } from "./object.js";
import type { Freshness, IndexFunction } from "./store.js";
import { DEFAULT_INDEXES, IndexedStore, keyOf, objectKey } from "./store.js";
import type { Transport } from "./transport.js";
import { resourcePath } from "./transport.js";

export interface InformerHandlers {
  onAdd?(object: KubeObject): void;
  onUpdate?(previous: KubeObject, current: KubeObject): void;
  onDelete?(object: KubeObject): void;
}

export interface BackoffSettings {
  initialMs: number;
  maxMs: number;
}

export interface InformerOptions {
  type: ResourceType;
  /** Watch one namespace only; omitted (or "") watches all. Ignored for cluster-scoped types. */
  namespace?: string;
  /**
   * List and watch only the objects this field selector selects (kube-apiserver's `fieldSelector`): the store
   * then holds part of the kind. Omitted (or ""): every object.
   */
  fieldSelector?: string;
  transport: Transport;
  clock: Clock;
  logger: Logger;
  /** Restart a watch that delivered nothing for this long. Must exceed the server's bookmark interval. */
  watchSilenceTimeoutMs?: number;
  /** Server-side watch timeout; by default random in [300, 600) s so replicas do not re-watch in lockstep. */
  watchTimeoutSeconds?: number;
  backoff?: BackoffSettings;
  /** In [0, 1); jitter source, injectable for tests. */
  random?: () => number;
  listPageSize?: number;
  listTimeoutMs?: number;
  indexers?: Readonly<Record<string, IndexFunction>>;
  /** Told of every failed list or watch before the backoff (the informer itself keeps trying). */
  onFailure?: (error: unknown) => void;
}

export interface Informer {
  readonly type: ResourceType;
  /** "" when it watches all namespaces. */
  readonly namespace: string;
  /** The field selector its lists and watches carry; "" when it holds every object of its kind. */
  readonly fieldSelector: string;
  start(): void;
  stop(): Promise<void>;
  hasSynced(): boolean;
  /** Resolves once the first list has filled the store. */
  readonly synced: Promise<void>;
  /**
   * Resolves once a list begun after this call has been applied to the store (handlers told what changed, as
   * in any re-list); the watch then resumes from that list. Before the first sync, the first list is that list.
   * Callers asking while no list has begun share one; a list that fails is retried with the informer's backoff
   * and only one that succeeded answers. Rejects when the informer is stopped (`InformerStoppedError`).
   */
  freshList(): Promise<void>;
  freshness(): Freshness;
  get(namespace: string, name: string): KubeObject | undefined;
  list(namespace?: string): KubeObject[];
  byIndex(indexName: string, value: string): KubeObject[];
  addIndex(name: string, fn: IndexFunction): void;
  /** Handlers run after the store changed. A handler added after sync is replayed the current objects as adds. */
  addHandlers(handlers: InformerHandlers): () => void;
  /** The resourceVersion the next watch resumes from. */
  resourceVersion(): string;
  /** Why the last list or watch failed, until one succeeds again: what a wait for sync reports. */
  lastError(): string | undefined;
}

const DEFAULT_WATCH_SILENCE_TIMEOUT_MS = 90_000;
// The cache keeps no managedFields (store.ts): they are cut from the text before it is parsed.
const parseList = parseWithoutManagedFields("list");
const parseEvent = parseWithoutManagedFields("event");
const DEFAULT_BACKOFF: BackoffSettings = { initialMs: 250, maxMs: 30_000 };

/** A list or watch failure as an admin reads it: the HTTP status and the server's message. */
export const failureText = (e: unknown): string =>
  e instanceof KubeApiError && e.code > 0
    ? `HTTP ${e.code}${e.reason ? ` ${e.reason}` : ""}: ${e.message}`
    : e instanceof Error
      ? e.message
      : String(e);

/** Exponential backoff with jitter: the n-th consecutive failure waits in [d/2, d), d = initial·2^(n-1) ≤ max. */
export const backoffDelay = (failures: number, settings: BackoffSettings, random: () => number): number => {
  const d = Math.min(settings.maxMs, settings.initialMs * 2 ** Math.max(0, failures - 1));
  return d / 2 + (d / 2) * random();
};

/** What a caller waiting for a fresh list gets when the informer stops first. */
export class InformerStoppedError extends Error {
  constructor(what: string) {
    super(`informer ${what} stopped before a fresh list`);
    this.name = "InformerStoppedError";
  }
}

/** A caller of `freshList`, answered by the first list begun after it asked. */
interface FreshListWaiter {
  resolve(): void;
  reject(error: Error): void;
}

// "refresh": the watch was dropped because a caller wants a fresh list.
type WatchOutcome = "ended" | "gone" | "silent" | "stopped" | "refresh";

export function createInformer(options: InformerOptions): Informer {
  const { type, transport, clock } = options;
  const namespace = type.namespaced ? (options.namespace ?? "") : "";
  const what = `${type.plural}.${type.group || "core"}`;
  const logger = options.logger.child({ informer: what, namespace });
  const silenceMs = options.watchSilenceTimeoutMs ?? DEFAULT_WATCH_SILENCE_TIMEOUT_MS;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const random = options.random ?? Math.random;
  const pageSize = options.listPageSize ?? 500;
  const store = new IndexedStore({ ...DEFAULT_INDEXES, ...options.indexers });
  const handlers = new Set<InformerHandlers>();
  const collectionPath = resourcePath(type, namespace || undefined);
  const fieldSelector = options.fieldSelector || undefined;

  let running: Promise<void> | undefined;
  let stopping = false;
  let current: AbortController | undefined;
  let synced = false;
  let markSynced: () => void = () => {};
  const syncedPromise = new Promise<void>((resolve) => {
    markSynced = resolve;
  });
  let resourceVersion = "";
  let connected = false;
  let disconnectedSince = clock.now();
  // Callers waiting for a list not yet begun, and those the list now running answers.
  let wanted: FreshListWaiter[] = [];
  let answering: FreshListWaiter[] = [];
  // Whether a watch is open or opening: only a watch is dropped for a fresh list (a list is finished, a backoff
  // waited out, and the next turn of the loop lists).
  let watching = false;

  const notify = (fn: (h: InformerHandlers) => void): void => {
    for (const h of handlers) {
      try {
        fn(h);
      } catch (e) {
        logger.error({ err: e }, "informer event handler threw");
      }
    }
  };

  const withTypeMeta = (o: KubeObject): KubeObject =>
    o.apiVersion && o.kind ? o : { ...o, apiVersion: apiVersionOf(type), kind: type.kind };

  const apply = (eventType: string, raw: KubeObject): void => {
    if (eventType === "DELETED") {
      const gone = store.remove(objectKey(raw));
      notify((h) => h.onDelete?.(gone ?? raw));
      return;
    }
    const { previous, current: now } = store.upsert(withTypeMeta(raw));
    if (previous) notify((h) => h.onUpdate?.(previous, now));
    else notify((h) => h.onAdd?.(now));
  };

  /** Lists every page and replaces the store, telling handlers what changed. Returns the list's RV. */
  const relist = async (signal: AbortSignal): Promise<string> => {
    const items: KubeObject[] = [];
    let token: string | undefined;
    let rv = "";
    do {
      const page = await transport.request({
        method: "GET",
        path: collectionPath,
        query: { limit: pageSize, continue: token, fieldSelector },
        timeoutMs: options.listTimeoutMs ?? 60_000,
        signal,
        parse: parseList,
      });
      if (!isRecord(page) || !Array.isArray(page.items))
        throw new KubeApiError(0, "", "list answer has no items");
      for (const item of page.items) if (isRecord(item)) items.push(withTypeMeta(item as KubeObject));
      const meta = isRecord(page.metadata) ? page.metadata : {};
      token = typeof meta.continue === "string" && meta.continue ? meta.continue : undefined;
      if (typeof meta.resourceVersion === "string") rv = meta.resourceVersion;
    } while (token);
    const seen = new Set<string>();
    for (const item of items) {
      seen.add(objectKey(item));
      const before = store.get(objectKey(item));
      if (before?.metadata?.resourceVersion === item.metadata?.resourceVersion && before) continue;
      apply("MODIFIED", item);
    }
    for (const key of store.keys()) if (!seen.has(key)) apply("DELETED", store.get(key)!);
    logger.debug({ count: items.length, resourceVersion: rv }, "listed");
    return rv;
  };

  /** One watch stream from `resourceVersion` until it ends, breaks, goes silent or says 410. */
  const watchOnce = async (
    controller: AbortController,
  ): Promise<{ outcome: WatchOutcome; lines: number }> => {
    watching = true;
    let lines = 0;
    let silent = false;
    // Aborted by neither stop nor the watchdog: `freshList` dropped this watch.
    const interrupted = (): boolean => controller.signal.aborted && !stopping && !silent;
    let watchdog = clock.setTimeout(() => {}, 0);
    const arm = (): void => {
      watchdog.cancel();
      watchdog = clock.setTimeout(() => {
        silent = true;
        controller.abort();
      }, silenceMs);
    };
    arm();
    const timeoutSeconds = options.watchTimeoutSeconds ?? Math.floor(300 + 300 * random());
    try {
      const stream = await transport.stream({
        method: "GET",
        path: collectionPath,
        query: {
          watch: true,
          allowWatchBookmarks: true,
          resourceVersion,
          timeoutSeconds,
          fieldSelector,
        },
        signal: controller.signal,
        parse: parseEvent,
      });
      connected = true;
      try {
        for await (const event of stream) {
          arm();
          lines++;
          if (!isRecord(event) || typeof event.type !== "string" || !isRecord(event.object)) continue;
          const object = event.object as KubeObject;
          if (event.type === "ERROR") {
            const code = typeof object.code === "number" ? object.code : 0;
            if (code === 410) return { outcome: "gone", lines };
            throw errorFromStatus(code || 500, object);
          }
          const rv = object.metadata?.resourceVersion;
          if (event.type !== "BOOKMARK") apply(event.type, object);
          if (typeof rv === "string" && rv) resourceVersion = rv;
        }
      } finally {
        stream.close();
      }
      return { outcome: interrupted() ? "refresh" : "ended", lines };
    } catch (e) {
      if (stopping) return { outcome: "stopped", lines };
      if (silent) return { outcome: "silent", lines };
      if (interrupted()) return { outcome: "refresh", lines };
      if (e instanceof GoneError) return { outcome: "gone", lines };
      throw e;
    } finally {
      watching = false;
      watchdog.cancel();
      if (connected) disconnectedSince = clock.now();
      connected = false;
    }
  };

  let lastError: string | undefined;
  const run = async (): Promise<void> => {
    let needList = true;
    let failures = 0;
    while (!stopping) {
      const controller = new AbortController();
      current = controller;
      try {
        if (needList || wanted.length > 0) {
          // Whoever asked before this list began is answered by it; whoever asks from now on, by the next.
          answering = [...answering, ...wanted];
          wanted = [];
          resourceVersion = await relist(controller.signal);
          needList = false;
          lastError = undefined;
          if (!synced) {
            synced = true;
            markSynced();
            logger.info({ count: store.size }, "informer synced");
          }
          const answered = answering;
          answering = [];
          if (answered.length > 0)
            logger.debug({ count: store.size, resourceVersion, callers: answered.length }, "listed afresh");
          for (const w of answered) w.resolve();
          // A caller who asked while that list ran gets one of its own, at once.
          if (wanted.length > 0) continue;
        }
        const { outcome, lines } = await watchOnce(controller);
        if (outcome === "stopped") break;
        if (outcome === "refresh") continue;
        if (outcome === "silent") {
          logger.warn({ silenceMs, resourceVersion }, "watch delivered nothing in time; restarting it");
        }
        if (outcome === "gone") {
          logger.info({ resourceVersion }, "watch resourceVersion too old (410); re-listing");
          needList = true;
          // The first 410 re-lists at once; a server that keeps answering 410 gets backoff.
          if (++failures === 1) continue;
        } else if (lines > 0) {
          // A stream that carried something proves the server healthy: resume at once.
          failures = 0;
          continue;
        } else {
          // An empty stream counts as a failure so a server that closes every watch at once is not hammered.
          failures++;
        }
      } catch (e) {
        if (stopping) break;
        if (e instanceof GoneError) needList = true;
        failures++;
        lastError = failureText(e);
        logger.warn({ err: lastError, failures }, "list/watch failed; backing off");
        options.onFailure?.(e);
      }
      // A caller whose list failed waits for the next one, after the backoff like any re-list.
      wanted = [...answering, ...wanted];
      answering = [];
      await sleep(clock, backoffDelay(failures, backoff, random), controller.signal);
    }
  };

  /** Answers every waiting caller with `InformerStoppedError`: no list will come. */
  const rejectWaiting = (): void => {
    const waiting = [...answering, ...wanted];
    answering = [];
    wanted = [];
    for (const w of waiting) w.reject(new InformerStoppedError(what));
  };

  return {
    type,
    namespace,
    fieldSelector: fieldSelector ?? "",
    start() {
      if (running) return;
      stopping = false;
      disconnectedSince = clock.now();
      running = run().catch((e) => logger.error({ err: e }, "informer loop crashed"));
    },
    async stop() {
      stopping = true;
      current?.abort();
      await running;
      running = undefined;
      rejectWaiting();
    },
    hasSynced: () => synced,
    lastError: () => lastError,
    synced: syncedPromise,
    freshList() {
      if (stopping) return Promise.reject(new InformerStoppedError(what));
      return new Promise<void>((resolve, reject) => {
        // Before the first sync, the list that syncs the informer answers (a process's first start lists once).
        if (!synced) answering.push({ resolve, reject });
        else {
          wanted.push({ resolve, reject });
          if (watching) current?.abort();
        }
      });
    },
    freshness: () => ({ synced, disconnectedForMs: connected ? 0 : clock.now() - disconnectedSince }),
    get: (ns, name) => store.get(keyOf(type.namespaced ? ns : "", name)),
    list: (ns) => store.list(type.namespaced ? ns : undefined),
    byIndex: (indexName, value) => store.byIndex(indexName, value),
    addIndex: (name, fn) => store.addIndex(name, fn),
    addHandlers(h) {
      handlers.add(h);
      if (synced) for (const o of store.list()) h.onAdd?.(o);
      return () => void handlers.delete(h);
    },
    resourceVersion: () => resourceVersion,
  };
}
