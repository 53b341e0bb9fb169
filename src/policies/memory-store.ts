/**
 * A plain in-memory ObjectStore: objects keyed by group + kind (any version), namespace and name. Unit
 * tests and tools use it where production uses the informer cache; freshness is injected so tests can
 * make a kind stale. Objects are copied on the way in, so a caller's later edits never leak into it.
 */
import type { ResourceType } from "../kube/kinds.js";
import { isRecord, type KubeObject, nameOf, namespaceOf } from "../kube/object.js";
import type { Freshness, ObjectStore } from "../kube/store.js";
import { groupOfApiVersion } from "./subject.js";

const typeKey = (group: string, kind: string): string => `${group}/${kind}`;
const objectKey = (namespace: string, name: string): string => `${namespace}/${name}`;
const FRESH: Freshness = Object.freeze({ synced: true, disconnectedForMs: 0 });

export type MemoryStore = ObjectStore & { put(o: KubeObject): void; remove(o: KubeObject): void };

export function memoryStore(
  objects: readonly KubeObject[] = [],
  freshness: (t: ResourceType) => Freshness = () => FRESH,
): MemoryStore {
  const byType = new Map<string, Map<string, KubeObject>>();
  const keyOf = (o: KubeObject): [string, string] => [
    typeKey(groupOfApiVersion(o.apiVersion), typeof o.kind === "string" ? o.kind : ""),
    objectKey(namespaceOf(o), nameOf(o)),
  ];
  const put = (o: KubeObject): void => {
    if (!isRecord(o)) return;
    const [type, key] = keyOf(o);
    let bucket = byType.get(type);
    if (!bucket) {
      bucket = new Map();
      byType.set(type, bucket);
    }
    bucket.set(key, structuredClone(o));
  };
  const remove = (o: KubeObject): void => {
    const [type, key] = keyOf(o);
    byType.get(type)?.delete(key);
  };
  for (const o of objects) put(o);
  return {
    put,
    remove,
    get: (t, namespace, name) => byType.get(typeKey(t.group, t.kind))?.get(objectKey(namespace, name)),
    list: (t, namespace) => {
      const all = [...(byType.get(typeKey(t.group, t.kind))?.values() ?? [])];
      return namespace === undefined ? all : all.filter((o) => namespaceOf(o) === namespace);
    },
    freshness,
  };
}
