/**
 * Test doubles for the runtime: a silent logger, an in-memory informer whose events the test drives, and
 * a tiny in-memory Kubernetes REST client (get/create/update/patch/delete with resourceVersion
 * conflicts) for the lease and event tests.
 */
import jsonpatch from "fast-json-patch";
import { pino } from "pino";
import type { KubeClient } from "../../src/kube/client.js";
import { createManualClock } from "../../src/kube/clock.js";
import { ConflictError, InvalidError, NotFoundError } from "../../src/kube/errors.js";
import { createEventRecorder, type EventRecorderOptions } from "../../src/kube/events.js";
import type { Informer, InformerHandlers } from "../../src/kube/informer.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { isRecord, nameOf, namespaceOf } from "../../src/kube/object.js";
import { IndexedStore, keyOf, objectKey } from "../../src/kube/store.js";

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
    start() {},
    async stop() {},
    hasSynced: () => isSynced,
    synced: syncedPromise,
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
