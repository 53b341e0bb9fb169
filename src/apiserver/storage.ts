/**
 * In-memory object storage: one global resourceVersion counter, objects per type indexed by
 * namespace/name (O(1) get, list by namespace without scanning other namespaces), uid and ownerReference
 * indexes for the garbage collector, a bounded event history for watch resume, and the watcher fan-out.
 * Stored objects are never mutated after they are stored: every write stores a new object, so readers and
 * watchers can share them without copies. A type can be an alias of another's bucket (events.k8s.io Events
 * of core's): its objects are converted on the way in and out, once each (decision 157). Nothing here knows
 * about HTTP, admission or validation.
 */
import type { KubeObject } from "../kube/object.js";
import type { StoreEvent, WatchEventType } from "./types.js";

export interface ObjectRef {
  key: string;
  namespace: string;
  name: string;
}

/** A watch as storage sees it: a filter and a sink. The HTTP layer serialises. */
export interface StorageWatcher {
  key: string;
  namespace: string | undefined;
  /** Selector match; `undefined` means everything matches. */
  matches: ((o: KubeObject) => boolean) | undefined;
  send(type: WatchEventType, event: StoreEvent): void;
}

interface TypeStore {
  byNamespace: Map<string, Map<string, KubeObject>>;
  size: number;
}

/** A type kept in another type's bucket, in that type's shape: `read` gives the alias' shape, `write` the bucket's. */
export interface StorageAlias {
  bucket: string;
  read(o: KubeObject): KubeObject;
  write(o: KubeObject): KubeObject;
}

/** An alias and what it has converted: stored objects and events never change, so each is converted once. */
interface AliasView {
  key: string;
  alias: StorageAlias;
  objects: WeakMap<KubeObject, KubeObject>;
  events: WeakMap<StoreEvent, StoreEvent>;
}

const viewOf = (v: AliasView, o: KubeObject): KubeObject => {
  let seen = v.objects.get(o);
  if (!seen) {
    seen = v.alias.read(o);
    v.objects.set(o, seen);
  }
  return seen;
};

const viewEvent = (v: AliasView, e: StoreEvent): StoreEvent => {
  let seen = v.events.get(e);
  if (!seen) {
    seen = {
      type: e.type,
      rv: e.rv,
      key: v.key,
      object: viewOf(v, e.object),
      oldObject: e.oldObject && viewOf(v, e.oldObject),
    };
    v.events.set(e, seen);
  }
  return seen;
};

const refId = (r: ObjectRef): string => `${r.key}\u0000${r.namespace}\u0000${r.name}`;

export class Storage {
  private rv = 0;
  private readonly types = new Map<string, TypeStore>();
  private readonly history: StoreEvent[] = [];
  /** Highest resourceVersion no longer in the history: watches from below it get 410 Gone. */
  private compactedRv = 0;
  private readonly watchers = new Map<string, Set<StorageWatcher>>();
  private readonly byUid = new Map<string, ObjectRef>();
  private readonly dependents = new Map<string, Set<string>>();
  private readonly dependentRefs = new Map<string, ObjectRef>();
  private readonly listeners: Array<(e: StoreEvent) => void> = [];
  /** Reads waiting for a resourceVersion not yet reached (kube's watch cache blocks them up to 3 s). */
  private readonly rvWaiters = new Set<{ rv: number; reached: () => void }>();
  private readonly aliases = new Map<string, AliasView>();

  constructor(private readonly historySize = 10_000) {}

  currentRv(): number {
    return this.rv;
  }
  oldestResumableRv(): number {
    return this.compactedRv;
  }
  onEvent(listener: (e: StoreEvent) => void): void {
    this.listeners.push(listener);
  }

  /** Serves `key` from `alias.bucket`, converted (decision 157); the bucket's key is the one events carry. */
  alias(key: string, alias: StorageAlias): void {
    this.aliases.set(key, { key, alias, objects: new WeakMap(), events: new WeakMap() });
  }

  /** What a read of `object` returns once it is stored under `key`: itself, or its alias' round trip. */
  asStored(key: string, object: KubeObject): KubeObject {
    const v = this.aliases.get(key);
    return v ? v.alias.read(v.alias.write(object)) : object;
  }

  get(key: string, namespace: string, name: string): KubeObject | undefined {
    const v = this.aliases.get(key);
    if (v) {
      const o = this.get(v.alias.bucket, namespace, name);
      return o && viewOf(v, o);
    }
    return this.types.get(key)?.byNamespace.get(namespace)?.get(name);
  }

  /** Objects of a type, in one namespace or (namespace undefined) all of them. */
  list(key: string, namespace?: string): KubeObject[] {
    const v = this.aliases.get(key);
    if (v) return this.list(v.alias.bucket, namespace).map((o) => viewOf(v, o));
    const t = this.types.get(key);
    if (!t) return [];
    if (namespace !== undefined) return [...(t.byNamespace.get(namespace)?.values() ?? [])];
    const out: KubeObject[] = [];
    for (const m of t.byNamespace.values()) for (const o of m.values()) out.push(o);
    return out;
  }

  count(key: string, namespace?: string): number {
    const v = this.aliases.get(key);
    if (v) return this.count(v.alias.bucket, namespace);
    const t = this.types.get(key);
    if (!t) return 0;
    return namespace === undefined ? t.size : (t.byNamespace.get(namespace)?.size ?? 0);
  }

  /** Namespaces that hold at least one object of any type. */
  keysWithObjectsIn(namespace: string): string[] {
    const out: string[] = [];
    for (const [key, t] of this.types) if ((t.byNamespace.get(namespace)?.size ?? 0) > 0) out.push(key);
    return out;
  }

  byUidRef(uid: string): ObjectRef | undefined {
    return this.byUid.get(uid);
  }
  dependentsOf(uid: string): ObjectRef[] {
    return [...(this.dependents.get(uid) ?? [])].map((id) => this.dependentRefs.get(id)!).filter(Boolean);
  }

  /**
   * Resolves true once an event at `rv` or later is stored, false after `timeoutMs` (or at once, true, when
   * it already was).
   */
  waitForRv(rv: number, timeoutMs: number): Promise<boolean> {
    if (rv <= this.rv) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        rv,
        reached: () => {
          clearTimeout(timer);
          this.rvWaiters.delete(waiter);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.rvWaiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.rvWaiters.add(waiter);
    });
  }

  /** Takes the next resourceVersion; the caller stamps it into the object it is about to store. */
  nextRv(): number {
    this.rv += 1;
    return this.rv;
  }

  /** Stores `object` (already stamped with `rv`) and notifies. */
  put(key: string, object: KubeObject, rv: number): StoreEvent {
    const v = this.aliases.get(key);
    if (v) return viewEvent(v, this.put(v.alias.bucket, v.alias.write(object), rv));
    const ns = object.metadata?.namespace ?? "";
    const name = object.metadata?.name ?? "";
    let t = this.types.get(key);
    if (!t) {
      t = { byNamespace: new Map(), size: 0 };
      this.types.set(key, t);
    }
    let m = t.byNamespace.get(ns);
    if (!m) {
      m = new Map();
      t.byNamespace.set(ns, m);
    }
    const old = m.get(name);
    m.set(name, object);
    if (!old) t.size += 1;
    this.index({ key, namespace: ns, name }, old, object);
    return this.emit({ type: old ? "MODIFIED" : "ADDED", rv, key, object, oldObject: old });
  }

  /** Removes an object; `last` is its final state, stamped with `rv`. */
  remove(key: string, last: KubeObject, rv: number): StoreEvent | undefined {
    const v = this.aliases.get(key);
    if (v) {
      const e = this.remove(v.alias.bucket, v.alias.write(last), rv);
      return e && viewEvent(v, e);
    }
    const ns = last.metadata?.namespace ?? "";
    const name = last.metadata?.name ?? "";
    const t = this.types.get(key);
    const m = t?.byNamespace.get(ns);
    const old = m?.get(name);
    if (!t || !m || !old) return undefined;
    m.delete(name);
    t.size -= 1;
    if (m.size === 0) t.byNamespace.delete(ns);
    this.index({ key, namespace: ns, name }, old, undefined);
    return this.emit({ type: "DELETED", rv, key, object: last, oldObject: old });
  }

  private index(ref: ObjectRef, old: KubeObject | undefined, next: KubeObject | undefined): void {
    const id = refId(ref);
    const oldUid = old?.metadata?.uid;
    if (oldUid && oldUid !== next?.metadata?.uid) this.byUid.delete(oldUid);
    if (next?.metadata?.uid) this.byUid.set(next.metadata.uid, ref);
    for (const o of old?.metadata?.ownerReferences ?? []) this.dependents.get(o.uid)?.delete(id);
    const owners = next?.metadata?.ownerReferences ?? [];
    for (const o of owners) {
      let s = this.dependents.get(o.uid);
      if (!s) {
        s = new Set();
        this.dependents.set(o.uid, s);
      }
      s.add(id);
    }
    if (owners.length > 0) this.dependentRefs.set(id, ref);
    else this.dependentRefs.delete(id);
  }

  private emit(event: StoreEvent): StoreEvent {
    this.history.push(event);
    if (this.history.length > this.historySize * 2) {
      const drop = this.history.length - this.historySize;
      this.compactedRv = this.history[drop - 1]!.rv;
      this.history.splice(0, drop);
    }
    for (const w of this.watchers.get(event.key) ?? []) deliver(w, event);
    for (const l of this.listeners) l(event);
    for (const w of this.rvWaiters) if (w.rv <= event.rv) w.reached();
    return event;
  }

  /** Events of `key` with rv > `since`, or undefined when `since` is older than the history window. */
  eventsSince(key: string, since: number): StoreEvent[] | undefined {
    const v = this.aliases.get(key);
    if (v) return this.eventsSince(v.alias.bucket, since)?.map((e) => viewEvent(v, e));
    if (since < this.compactedRv) return undefined;
    let lo = 0;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.history[mid]!.rv <= since) lo = mid + 1;
      else hi = mid;
    }
    const out: StoreEvent[] = [];
    for (let i = lo; i < this.history.length; i++)
      if (this.history[i]!.key === key) out.push(this.history[i]!);
    return out;
  }

  addWatcher(w: StorageWatcher): () => void {
    const v = this.aliases.get(w.key);
    if (v) {
      const { matches } = w;
      return this.addWatcher({
        key: v.alias.bucket,
        namespace: w.namespace,
        matches: matches && ((o) => matches(viewOf(v, o))),
        send: (type, e) => w.send(type, viewEvent(v, e)),
      });
    }
    let s = this.watchers.get(w.key);
    if (!s) {
      s = new Set();
      this.watchers.set(w.key, s);
    }
    s.add(w);
    return () => s.delete(w);
  }

  watcherCount(): number {
    let n = 0;
    for (const s of this.watchers.values()) n += s.size;
    return n;
  }
}

/**
 * Routes one event to one watcher, translating through its selector as kube does: an object that stops
 * matching is DELETED for that watcher, one that starts matching is ADDED.
 */
export const deliver = (w: StorageWatcher, e: StoreEvent): void => {
  if (w.namespace !== undefined && (e.object.metadata?.namespace ?? "") !== w.namespace) return;
  if (!w.matches) {
    w.send(e.type, e);
    return;
  }
  const now = w.matches(e.object);
  if (e.type === "DELETED") {
    if (now || (e.oldObject && w.matches(e.oldObject))) w.send("DELETED", e);
    return;
  }
  const before = e.oldObject ? w.matches(e.oldObject) : false;
  if (now && before) w.send("MODIFIED", e);
  else if (now) w.send("ADDED", e);
  else if (before) w.send("DELETED", e);
};
