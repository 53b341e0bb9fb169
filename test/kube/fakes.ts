/**
 * Test doubles for the runtime: a silent logger, an in-memory informer whose events the test drives, and
 * a tiny in-memory Kubernetes REST client (get/create/update/patch/delete with resourceVersion
 * conflicts) for the lease and event tests.
 */
import jsonpatch from "fast-json-patch";
import { pino } from "pino";
import type { Cache } from "../../src/kube/cache.js";
import type { KubeClient } from "../../src/kube/client.js";
import { createManualClock, systemClock } from "../../src/kube/clock.js";
import { createController, type KeyMapper, type WatchOptions } from "../../src/kube/controller.js";
import { ConflictError, InvalidError, NotFoundError } from "../../src/kube/errors.js";
import { createEventRecorder, type EventRecorderOptions } from "../../src/kube/events.js";
import type { Informer, InformerHandlers } from "../../src/kube/informer.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { isRecord, nameOf, namespaceOf } from "../../src/kube/object.js";
import { IndexedStore, keyOf, objectKey } from "../../src/kube/store.js";
import type { WorkQueue } from "../../src/kube/workqueue.js";

export const silentLogger = () => pino({ level: "silent" });

export interface FakeInformer extends Informer {
  add(o: KubeObject): void;
  update(o: KubeObject): void;
  remove(o: KubeObject): void;
  markSynced(): void;
}

export function fakeInformer(type: ResourceType, synced = true): FakeInformer {
  const store = new IndexedStore();
  const handlers = new Set<InformerHandlers>();
  let isSynced = false;
  let resolve: () => void = () => {};
  const syncedPromise = new Promise<void>((r) => {
    resolve = r;
  });
  const self: FakeInformer = {
    type,
    namespace: "",
    fieldSelector: "",
    start() {},
    async stop() {},
    hasSynced: () => isSynced,
    synced: syncedPromise,
    // The fake's store is the server: it is always as fresh as the test made it, once synced.
    freshList: () => syncedPromise,
    freshness: () => ({ synced: isSynced, disconnectedForMs: 0 }),
    get: (ns, name) => store.get(keyOf(ns, name)),
    list: (ns) => store.list(ns),
    byIndex: (i, v) => store.byIndex(i, v),
    addIndex: (n, f) => store.addIndex(n, f),
    addHandlers(h) {
      handlers.add(h);
      return () => void handlers.delete(h);
    },
    resourceVersion: () => "",
    lastError: () => undefined,
    add(o) {
      const { current } = store.upsert(o);
      for (const h of handlers) h.onAdd?.(current);
    },
    update(o) {
      const { previous, current } = store.upsert(o);
      for (const h of handlers) h.onUpdate?.(previous!, current);
    },
    remove(o) {
      store.remove(objectKey(o));
      for (const h of handlers) h.onDelete?.(o);
    },
    markSynced() {
      isSynced = true;
      resolve();
    },
  };
  if (synced) self.markSynced();
  return self;
}

/** A Cache over fake informers: one per (type, namespace), created on first use like the real one. */
export const fakeCache = (): Cache & { informer(type: ResourceType, namespace: string): FakeInformer } => {
  const informers = new Map<string, FakeInformer>();
  const informer = (type: ResourceType, namespace = ""): FakeInformer => {
    const key = `${type.plural}.${type.group}@${type.namespaced ? namespace : ""}`;
    let i = informers.get(key);
    if (!i) {
      i = fakeInformer(type);
      informers.set(key, i);
    }
    return i;
  };
  return {
    informer,
    informerFor: informer,
    informers: () => [...informers.values()],
    synced: () => true,
    waitForSync: async () => {},
    stop: async () => {},
    get: (type, namespace, name) => informer(type, namespace).get(namespace, name),
    list: (type, namespace) => informer(type, namespace ?? "").list(namespace),
    byIndex: (type, namespace, index, value) => informer(type, namespace).byIndex(index, value),
    freshness: () => ({ synced: true, disconnectedForMs: 0 }),
  };
};

/** One watch of a controller: what it watches, how an object maps to keys, and what an update must change. */
export interface WatchSpec {
  type: ResourceType;
  namespace: string;
  mapper: KeyMapper;
  options?: WatchOptions;
}

/**
 * `watches` registered on the real controller runtime over `cache`, with a reconcile that does nothing, so
 * the queue shows exactly what an event wakes: `woken(event)` lets the queue drain, fires the event (fake
 * informers deliver synchronously) and answers how many keys it queued.
 */
export async function watchRig(cache: ReturnType<typeof fakeCache>, watches: readonly WatchSpec[]) {
  const controller = createController({
    name: "watch-rig",
    reconcile: async () => {},
    clock: systemClock,
    logger: silentLogger(),
  });
  for (const w of watches) controller.watch(cache.informer(w.type, w.namespace), w.mapper, w.options);
  await controller.start();
  const drained = async (): Promise<WorkQueue> => {
    for (let i = 0; i < 1000; i++) {
      const q = controller.queue();
      if (!q) throw new Error("the rig's controller stopped");
      if (q.len() === 0 && q.processing().length === 0) return q;
      await new Promise((r) => setImmediate(r));
    }
    throw new Error("the rig's queue never drained");
  };
  return {
    async woken(event: () => void): Promise<number> {
      const q = await drained();
      event();
      return q.len();
    },
    stop: () => controller.stop(),
  };
}

/** An in-memory API for any types: resourceVersion conflicts on update, JSON and merge patches. */
export function fakeClient() {
  const objects = new Map<string, KubeObject>();
  let rv = 0;
  const calls: { verb: string; type: string; name: string; body?: unknown }[] = [];
  let failing: Error | undefined;
  const k = (t: ResourceType, ns: string, name: string) => `${t.plural}.${t.group}|${keyOf(ns, name)}`;
  const store = (t: ResourceType, o: KubeObject): KubeObject => {
    const copy = structuredClone(o);
    copy.metadata = { ...copy.metadata, resourceVersion: String(++rv) };
    copy.metadata.uid ??= `uid-${nameOf(o)}`;
    objects.set(k(t, namespaceOf(o), nameOf(o)), copy);
    return structuredClone(copy);
  };
  const mergePatch = (target: unknown, patch: unknown): unknown => {
    if (!isRecord(patch)) return patch;
    const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
    for (const [key, v] of Object.entries(patch)) {
      if (v === null) delete out[key];
      else out[key] = mergePatch(out[key], v);
    }
    return out;
  };
  const check = () => {
    if (failing) throw failing;
  };
  const client: KubeClient = {
    async get(t, ns, name) {
      check();
      calls.push({ verb: "get", type: t.kind, name });
      const o = objects.get(k(t, ns, name));
      if (!o) throw new NotFoundError(404, "NotFound", `${t.plural} "${name}" not found`);
      return structuredClone(o);
    },
    async list(t) {
      check();
      return {
        items: [...objects.entries()]
          .filter(([key]) => key.startsWith(`${t.plural}.${t.group}|`))
          .map(([, o]) => o),
        resourceVersion: String(rv),
      };
    },
    async create(t, o) {
      check();
      calls.push({ verb: "create", type: t.kind, name: nameOf(o), body: o });
      if (objects.has(k(t, namespaceOf(o), nameOf(o))))
        throw new ConflictError(409, "AlreadyExists", `${t.plural} "${nameOf(o)}" already exists`);
      return store(t, o);
    },
    async update(t, o) {
      check();
      calls.push({ verb: "update", type: t.kind, name: nameOf(o), body: o });
      const live = objects.get(k(t, namespaceOf(o), nameOf(o)));
      if (!live) throw new NotFoundError(404, "NotFound", "not found");
      if (o.metadata?.resourceVersion !== live.metadata?.resourceVersion)
        throw new ConflictError(409, "Conflict", "the object has been modified");
      return store(t, o);
    },
    async updateStatus(t, o) {
      return client.update(t, o);
    },
    async patch(t, ns, name, patch) {
      check();
      calls.push({ verb: `patch:${patch.type}`, type: t.kind, name, body: patch.body });
      const live = objects.get(k(t, ns, name));
      if (!live) throw new NotFoundError(404, "NotFound", "not found");
      let next: KubeObject;
      if (patch.type === "json") {
        try {
          next = jsonpatch.applyPatch(structuredClone(live), [...patch.body], true, false).newDocument;
        } catch {
          // As kube-apiserver: a failed `test` is 422 Invalid without field causes.
          throw new InvalidError(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
          );
        }
      } else next = mergePatch(live, patch.body) as KubeObject;
      const wanted =
        isRecord(patch.body) && isRecord(patch.body.metadata)
          ? patch.body.metadata.resourceVersion
          : undefined;
      if (wanted !== undefined && wanted !== live.metadata?.resourceVersion)
        throw new ConflictError(409, "Conflict", "the object has been modified");
      return store(t, next);
    },
    async delete(t, ns, name) {
      check();
      calls.push({ verb: "delete", type: t.kind, name });
      objects.delete(k(t, ns, name));
      return {};
    },
  };
  return {
    client,
    calls,
    objects,
    /** Every call fails with `error` until called again with undefined. */
    fail(error: Error | undefined) {
      failing = error;
    },
    raw: (t: ResourceType, ns: string, name: string) => objects.get(k(t, ns, name)),
  };
}

/**
 * The product's event recorder writing to a fakeClient, on a manual clock that starts at `startMs`; `events`
 * lists the Events the API holds.
 */
export function fakeEventRecorder(
  options: Partial<Pick<EventRecorderOptions, "cacheSize" | "rateLimit" | "reportingInstance">> = {},
  startMs = Date.UTC(2026, 10, 30, 10, 0, 0),
) {
  const clock = createManualClock(startMs);
  const api = fakeClient();
  const recorder = createEventRecorder({
    client: api.client,
    component: "machine-api-migration",
    clock,
    logger: silentLogger(),
    ...options,
  });
  const events = () =>
    [...api.objects.entries()]
      .filter(([k]) => k.startsWith("events.|"))
      .map(([, v]) => v as Record<string, unknown>);
  return { clock, api, recorder, events };
}
