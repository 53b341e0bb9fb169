/**
 * The in-memory store behind one informer: objects of one type by `namespace/name`, with secondary
 * indexes (owner uid, label `key=value`, namespace, the infrastructure a CAPI Machine or MachineSet
 * references, plus any custom index function) so controllers' mappers and admission find related objects
 * without scanning. Objects are kept as received minus `metadata.managedFields` and
 * the last-applied annotation (memory; nothing in the product reads them). Pure data structure: no I/O.
 * Also the read contract every consumer of a cache depends on (`ObjectStore`, `Freshness`).
 */
import { INFRASTRUCTURE_REF_PATHS, type ResourceType } from "./kinds.js";
import type { KubeObject } from "./object.js";
import {
  getPath,
  identicalJson,
  isRecord,
  labelsOf,
  nameOf,
  namespaceOf,
  ownerReferencesOf,
} from "./object.js";

/** How fresh the view of one kind is (SPEC §2.1 `cacheStaleAfter`). */
export interface Freshness {
  synced: boolean;
  /** Milliseconds since the kind's watch last had an open stream; 0 while one is open. */
  disconnectedForMs: number;
}

/**
 * The raw read side of a cache: objects by type, namespace and name. Implemented by the informer cache
 * (cache.ts) in production and by a plain map (policies/memory-store.ts) in tests and tools; admission, the
 * sync and the migration controller all read through it.
 */
export interface ObjectStore {
  get(type: ResourceType, namespace: string, name: string): KubeObject | undefined;
  list(type: ResourceType, namespace?: string): readonly KubeObject[];
  freshness(type: ResourceType): Freshness;
  /**
   * The objects of `type` in `namespace` that `DEFAULT_INDEXES[index]` files under `value`, from a store that
   * keeps that index (the informer cache). A store without indexes leaves it out; read through `filedUnder`,
   * which then lists and filters with the same index function, so both answer alike.
   */
  byIndex?(type: ResourceType, namespace: string, index: IndexName, value: string): readonly KubeObject[];
}

/** Values an object is filed under in one index. */
export type IndexFunction = (object: KubeObject) => readonly string[];

export const INDEX = Object.freeze({
  owner: "owner",
  label: "label",
  namespace: "namespace",
  infrastructureRef: "infrastructureRef",
});
export type IndexName = (typeof INDEX)[keyof typeof INDEX];

export const keyOf = (namespace: string, name: string): string => (namespace ? `${namespace}/${name}` : name);

const INFRASTRUCTURE_REF_NAMES: readonly (readonly string[])[] = [
  [...INFRASTRUCTURE_REF_PATHS.machine, "name"],
  [...INFRASTRUCTURE_REF_PATHS.machineSet, "name"],
];

export const DEFAULT_INDEXES: Readonly<Record<IndexName, IndexFunction>> = Object.freeze({
  [INDEX.owner]: (o) => ownerReferencesOf(o).map((r) => r.uid),
  [INDEX.label]: (o) => Object.entries(labelsOf(o)).map(([k, v]) => `${k}=${v}`),
  [INDEX.namespace]: (o) => [namespaceOf(o)],
  // `namespace/name` of the infrastructure object a CAPI Machine (`spec.infrastructureRef`) or MachineSet
  // (`spec.template.spec.infrastructureRef`) references, so that admission finds the referrers of an
  // InfraMachine or template (policies/view.ts) without reading every Machine of the namespace.
  [INDEX.infrastructureRef]: (o) => {
    const values: string[] = [];
    for (const path of INFRASTRUCTURE_REF_NAMES) {
      const name = getPath(o, path);
      if (typeof name === "string" && name !== "") values.push(keyOf(namespaceOf(o), name));
    }
    return values;
  },
});

/** `store.byIndex` where the store keeps indexes; otherwise its `list`, filtered by the same index function. */
export function filedUnder(
  store: ObjectStore,
  type: ResourceType,
  namespace: string,
  index: IndexName,
  value: string,
): readonly KubeObject[] {
  if (store.byIndex) return store.byIndex(type, namespace, index, value);
  const fn = DEFAULT_INDEXES[index];
  return store.list(type, namespace).filter((o) => fn(o).includes(value));
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
export const objectKey = (o: KubeObject): string => keyOf(namespaceOf(o), nameOf(o));

/** A shallow copy without the fields the cache does not keep; the input is never mutated. */
export function trimForCache(o: KubeObject): KubeObject {
  const meta = o.metadata;
  if (!meta) return o;
  const hasLastApplied = meta.annotations !== undefined && Object.hasOwn(meta.annotations, LAST_APPLIED);
  if (!("managedFields" in meta) && !hasLastApplied) return o;
  const { managedFields: _dropped, ...rest } = meta;
  if (hasLastApplied) {
    const { [LAST_APPLIED]: _last, ...annotations } = meta.annotations ?? {};
    rest.annotations = annotations;
  }
  return { ...o, metadata: rest };
}

/**
 * `current` with the parts an update left as they were (`spec`, `status`, `metadata.labels`,
 * `metadata.annotations`: identical JSON, key order included) taken from `previous`, the same object's version
 * the store held (same uid). Most updates change one part: a status write leaves the spec as it was, a
 * finalizer or pause annotation leaves spec and status. Sharing them lets whoever remembers work per part by
 * identity (the sync's conversions, sync/converter.ts) see that it is the same, and the previous version's
 * parts stay in memory instead of new copies. The value stored is identical JSON to `current`, so no reader can
 * tell; `current` itself is never changed (a shallow copy takes the shared parts).
 */
export function shareUnchanged(previous: KubeObject | undefined, current: KubeObject): KubeObject {
  if (previous === undefined || previous === current) return current;
  const before = previous.metadata;
  const after = current.metadata;
  if (!isRecord(before) || !isRecord(after) || before.uid !== after.uid) return current;
  const out = withIdenticalFrom(previous, current, SHARED_PARTS);
  const metadata = withIdenticalFrom(before, after, SHARED_METADATA);
  return metadata === after ? out : { ...out, metadata };
}

const SHARED_PARTS = ["spec", "status"] as const;
const SHARED_METADATA = ["labels", "annotations"] as const;

/** `current` with each of `keys` whose value is identical JSON to `previous`'s taken from `previous` (a copy). */
function withIdenticalFrom<T extends Record<string, unknown>>(
  previous: T,
  current: T,
  keys: readonly string[],
): T {
  let out = current;
  for (const key of keys) {
    const was = previous[key];
    if (was === undefined || was === current[key] || !identicalJson(was, current[key])) continue;
    if (out === current) out = { ...current };
    (out as Record<string, unknown>)[key] = was;
  }
  return out;
}

export class IndexedStore {
  private readonly objects = new Map<string, KubeObject>();
  private readonly indexes = new Map<string, Index>();

  constructor(indexers: Readonly<Record<string, IndexFunction>> = DEFAULT_INDEXES) {
    for (const [name, fn] of Object.entries(indexers)) this.addIndex(name, fn);
  }

  /** Adds an index; existing objects are filed at once. Adding the same name twice keeps the first. */
  addIndex(name: string, fn: IndexFunction): void {
    if (this.indexes.has(name)) return;
    const index = { fn, values: new Map<string, Set<string>>() };
    this.indexes.set(name, index);
    for (const [key, o] of this.objects) this.file(index, key, o);
  }

  get(key: string): KubeObject | undefined {
    return this.objects.get(key);
  }

  list(namespace?: string): KubeObject[] {
    if (namespace === undefined) return [...this.objects.values()];
    return this.byIndex(INDEX.namespace, namespace);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  get size(): number {
    return this.objects.size;
  }

  byIndex(indexName: string, value: string): KubeObject[] {
    const keys = this.indexes.get(indexName)?.values.get(value);
    if (!keys) return [];
    const out: KubeObject[] = [];
    for (const k of keys) {
      const o = this.objects.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  /**
   * Stores `object` (trimmed, its unchanged parts shared with the version it replaces) and returns what it
   * replaced. An index whose values for the object did not change
   * (most updates: a status write leaves its owners, labels and namespace alone) is not touched.
   */
  upsert(object: KubeObject): { previous: KubeObject | undefined; current: KubeObject } {
    const trimmed = trimForCache(object);
    const key = objectKey(trimmed);
    const previous = this.objects.get(key);
    const current = shareUnchanged(previous, trimmed);
    this.objects.set(key, current);
    for (const index of this.indexes.values()) {
      const now = index.fn(current);
      if (previous) {
        const before = index.fn(previous);
        if (sameValues(before, now)) continue;
        this.unfileValues(index, key, before);
      }
      this.fileValues(index, key, now);
    }
    return { previous, current };
  }

  remove(key: string): KubeObject | undefined {
    const previous = this.objects.get(key);
    if (!previous) return undefined;
    this.unfile(key, previous);
    this.objects.delete(key);
    return previous;
  }

  private file(index: Index, key: string, o: KubeObject) {
    this.fileValues(index, key, index.fn(o));
  }

  private fileValues(index: Index, key: string, values: readonly string[]): void {
    for (const v of values) {
      let set = index.values.get(v);
      if (!set) {
        set = new Set();
        index.values.set(v, set);
      }
      set.add(key);
    }
  }

  private unfile(key: string, o: KubeObject): void {
    for (const index of this.indexes.values()) this.unfileValues(index, key, index.fn(o));
  }

  private unfileValues(index: Index, key: string, values: readonly string[]): void {
    for (const v of values) {
      const set = index.values.get(v);
      set?.delete(key);
      if (set?.size === 0) index.values.delete(v);
    }
  }
}

interface Index {
  fn: IndexFunction;
  values: Map<string, Set<string>>;
}

/** The same values in the same order (index functions list them in the object's own order). */
const sameValues = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((v, i) => v === b[i]);
