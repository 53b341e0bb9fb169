/**
 * Field ownership as kube-apiserver tracks it in `metadata.managedFields` (fieldsV1 sets), and server-side
 * apply on top of it, by structured-merge-diff's rules (decisions 71, 84, 90). Pure functions over plain
 * objects.
 *
 * What is modelled: maps are granular per key unless atomic (`x-kubernetes-map-type: atomic`, a built-in's
 * atomic struct); lists are atomic (the list is one field) except `metadata.finalizers` (a set: `v:"name"`
 * per element), `metadata.ownerReferences` (associative by uid, each element an atomic struct) and the lists
 * a CRD's schema declares `x-kubernetes-list-type: set` or `map` (by their `x-kubernetes-list-map-keys`),
 * passed in as `ListTypes`. A field set holds leaves and members (`.`: a map or element owned as a node).
 * An Update owns what it held less what it removed, plus what it modified or added (an added map or element
 * as a member with its fields); others lose all three. An Apply owns its leaves, set elements and each
 * associative element with its fields; a manager that stops applying a field loses it, and the field is
 * removed from the object only when no other manager owns it (or anything under it). An apply that would
 * change a field another manager owns is a conflict (409) unless `force`, which moves ownership.
 */
import { canonicalJson, cloneJson } from "../json-text.js";
import { splitApiVersion } from "../kube/discovery.js";
import { identicalJson, isRecord, jsonEqual, type KubeObject } from "../kube/object.js";
import { emptyObjectOf } from "./builtin-shapes.js";
import { UNMANAGED_METADATA } from "./object-meta.js";
import { ApiError } from "./status.js";
import type { StatusCause } from "./types.js";

export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  fieldsType: "FieldsV1";
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

const SEP = "\u0001";

/**
 * How a field merges, where it is not the default (a map per key, a list whole): a list that is a set of
 * scalars, a list that is a map keyed by the named fields of its elements, or a map that is atomic (one
 * field: `x-kubernetes-map-type: atomic`, a built-in's `+structType=atomic`).
 */
export type ListType =
  | { readonly type: "set" }
  | { readonly type: "map"; readonly keys: readonly string[] }
  | { readonly type: "atomic" };

/** The type of the field at a dotted path (`spec.entries`; list elements are not in the path). */
export type ListTypes = (path: string) => ListType | undefined;

const NO_LIST_TYPES: ListTypes = () => undefined;

/** The dotted field path of a managed-fields path (element segments left out). */
const schemaPathOf = (path: string): string =>
  path
    .split(SEP)
    .filter((s) => s.startsWith("f:"))
    .map((s) => s.slice(2))
    .join(".");

const listTypeAt = (dotted: string, listTypes: ListTypes): ListType | undefined => {
  if (dotted === "metadata.finalizers") return { type: "set" };
  if (dotted === "metadata.ownerReferences") return { type: "map", keys: ["uid"] };
  return listTypes(dotted);
};

/** `JSON.stringify` of the element's key fields in the list's key order (absent ones left out), built directly. */
const keyText = (item: Record<string, unknown>, keys: readonly string[]): string => {
  let text = "";
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = item[k];
    if (v === undefined || keys.indexOf(k) !== i) continue;
    text += `${text ? "," : ""}${JSON.stringify(k)}:${JSON.stringify(v)}`;
  }
  return `{${text}}`;
};

/** The path segment of a list element, given the list's type (`v:…` in a set, `k:…` in an associative list). */
const segmentIn = (lt: ListType | undefined, item: unknown): string | undefined => {
  if (lt?.type === "set") return `v:${JSON.stringify(item)}`;
  if (lt?.type === "map" && isRecord(item)) return `k:${keyText(item, lt.keys)}`;
  return undefined;
};

const elementSegment = (listPath: string, item: unknown, listTypes: ListTypes): string | undefined =>
  segmentIn(listTypeAt(schemaPathOf(listPath), listTypes), item);

/** Whether a path ends at a list element (`k:…`, `v:…`) rather than a field. */
const isElementPath = (path: string): boolean => !path.slice(path.lastIndexOf(SEP) + 1).startsWith("f:");

/** Whether the map at `path` (a field, or an associative list's element) is one field, owned whole. */
const isAtomicMap = (path: string, listTypes: ListTypes): boolean =>
  isAtomicMapAt(path, schemaPathOf(path), listTypes);

/** `isAtomicMap` given the path's dotted schema path (`schemaPathOf(path)`) too. */
const isAtomicMapAt = (path: string, dotted: string, listTypes: ListTypes): boolean => {
  if (isElementPath(path)) return dotted === "metadata.ownerReferences"; // OwnerReference: an atomic struct
  return listTypeAt(dotted, listTypes)?.type === "atomic";
};

/**
 * Adds the field set an Apply of `value` under `path` owns to `out`, as structured-merge-diff's toFieldSet:
 * leaves (scalars, atomic lists and maps, empty maps), the elements of sets, and the elements of
 * associative lists as members with their fields. Runs for every field of every apply: plain loops.
 */
const collect = (value: unknown, path: string, out: Set<string>, listTypes: ListTypes): void => {
  // An explicit stack, children pushed in reverse so they come off in order: a preserve-unknown field can
  // nest ~10,000 levels (kube's limit), deeper than the JavaScript stack.
  const pending: [unknown, string][] = [[value, path]];
  while (pending.length > 0) {
    const [value, path] = pending.pop() as [unknown, string];
    if (isRecord(value) && !isAtomicMap(path, listTypes)) {
      const isMetadata = path === "f:metadata";
      const children: [unknown, string][] = [];
      let fields = 0;
      for (const k in value) {
        if (!Object.hasOwn(value, k)) continue;
        fields++;
        if (isMetadata && UNMANAGED_METADATA.has(k)) continue;
        children.push([value[k], path ? `${path}${SEP}f:${k}` : `f:${k}`]);
      }
      for (let i = children.length - 1; i >= 0; i--) pending.push(children[i] as [unknown, string]);
      if (fields > 0 && !isElementPath(path)) continue;
    } else if (
      Array.isArray(value) &&
      value.length > 0 &&
      elementSegment(path, value[0], listTypes) !== undefined
    ) {
      const children: [unknown, string][] = [];
      for (const item of value) {
        const seg = elementSegment(path, item, listTypes);
        if (seg !== undefined) children.push([item, `${path}${SEP}${seg}`]);
      }
      for (let i = children.length - 1; i >= 0; i--) pending.push(children[i] as [unknown, string]);
      continue;
    }
    if (path) out.add(path);
  }
};

/** The field set an Apply of an object owns (apiVersion/kind and server metadata excluded). */
export const fieldPaths = (obj: unknown, listTypes: ListTypes = NO_LIST_TYPES): Set<string> => {
  const out = new Set<string>();
  if (!isRecord(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (k === "apiVersion" || k === "kind") continue;
    collect(v, `f:${k}`, out, listTypes);
  }
  return out;
};

/**
 * The elements of the lists one apply reads and edits, found by the `k:`/`v:` segment that names them: each
 * list is indexed once per kind of segment on its first search (a search of the list per element took minutes
 * over 20,000 items, decision 141). A `v:` segment names the first element equal to its value; a `k:` segment
 * the first map element whose named fields equal its own. Removing an element marks it, so later searches and
 * sizes skip it, and `compact` takes the marked ones out of their lists at the end, once per list.
 */
interface Elements {
  /** The position of the element `seg` names in `list`, or -1. */
  find(list: readonly unknown[], seg: string): number;
  remove(list: readonly unknown[], at: number): void;
  /** How many elements `list` holds, less those removed. */
  size(list: readonly unknown[]): number;
  compact(): void;
}

/** One key of an index: the element's value (`v:`), or the values of the named fields (`k:`), as one text. */
const elementKey = (item: unknown, fields: readonly string[] | undefined): string | undefined => {
  if (!fields) return canonicalJson(item);
  if (!isRecord(item)) return undefined;
  const values: unknown[] = [];
  for (const f of fields) {
    const v = item[f];
    if (v === undefined) return undefined;
    values.push(v);
  }
  return canonicalJson(values);
};

/** What a segment looks up: the index it uses (by its named fields) and the key in it. */
const segmentKey = (seg: string): { index: string; fields?: string[]; key: string } | undefined => {
  const want = JSON.parse(seg.slice(2)) as unknown;
  if (seg.startsWith("v:")) return { index: "v", key: canonicalJson(want) };
  if (!isRecord(want)) return undefined;
  const fields = Object.keys(want).sort();
  return { index: JSON.stringify(fields), fields, key: canonicalJson(fields.map((f) => want[f])) };
};

interface ListIndex {
  /** Per index: each key's positions in ascending order, and how many of them were found removed. */
  readonly byIndex: Map<string, Map<string, { positions: number[]; head: number }>>;
  readonly removed: Set<number>;
}

const createElements = (): Elements => {
  const lists = new Map<readonly unknown[], ListIndex>();
  const indexOf = (list: readonly unknown[]): ListIndex => {
    let index = lists.get(list);
    if (!index) {
      index = { byIndex: new Map(), removed: new Set() };
      lists.set(list, index);
    }
    return index;
  };
  return {
    find(list, seg) {
      if (list.length === 0) return -1;
      const wanted = segmentKey(seg);
      if (!wanted) return -1;
      const index = indexOf(list);
      let keys = index.byIndex.get(wanted.index);
      if (!keys) {
        keys = new Map();
        for (let i = 0; i < list.length; i++) {
          if (index.removed.has(i)) continue;
          const key = elementKey(list[i], wanted.fields);
          if (key === undefined) continue;
          const bucket = keys.get(key);
          if (bucket) bucket.positions.push(i);
          else keys.set(key, { positions: [i], head: 0 });
        }
        index.byIndex.set(wanted.index, keys);
      }
      const bucket = keys.get(wanted.key);
      if (!bucket) return -1;
      while (bucket.head < bucket.positions.length && index.removed.has(bucket.positions[bucket.head]!))
        bucket.head++;
      return bucket.head < bucket.positions.length ? bucket.positions[bucket.head]! : -1;
    },
    remove(list, at) {
      indexOf(list).removed.add(at);
    },
    size(list) {
      return list.length - (lists.get(list)?.removed.size ?? 0);
    },
    compact() {
      for (const [list, { removed }] of lists) {
        if (removed.size === 0) continue;
        const items = list as unknown[];
        let kept = 0;
        for (let i = 0; i < items.length; i++) if (!removed.has(i)) items[kept++] = items[i];
        items.length = kept;
      }
      lists.clear();
    },
  };
};

/** The value under `seg` (a field of a map, an element of a list). */
const childAt = (holder: unknown, seg: string, elements: Elements): unknown => {
  if (seg.startsWith("f:")) return isRecord(holder) ? holder[seg.slice(2)] : undefined;
  if (!Array.isArray(holder)) return undefined;
  const at = elements.find(holder, seg);
  return at >= 0 ? holder[at] : undefined;
};

/** The node at a field-set path, or undefined. */
const valueAt = (obj: unknown, path: string, elements: Elements): unknown => {
  let node = obj;
  for (const seg of path.split(SEP)) {
    node = childAt(node, seg, elements);
    if (node === undefined) return undefined;
  }
  return node;
};

/**
 * Removes the field or element at `path` from `obj` (in place: the caller's copy), and what the removal
 * empties: a list, and the maps above it up to (not including) the top-level fields, unless `kept` (a map
 * another manager holds as a member, which structured-merge-diff's prune adds back). List elements emptied
 * stay. Elements are marked removed in `elements`, whose `compact` takes them out; `fieldCounts` keeps how
 * many fields each map it has seen still holds, so a map of 20,000 fields emptied one by one is not counted
 * again each time.
 */
const removeAt = (
  obj: Record<string, unknown>,
  path: string,
  kept: (path: string) => boolean,
  elements: Elements,
  fieldCounts: Map<object, number>,
): void => {
  const segs = path.split(SEP);
  // chain[i] holds segs[i]: chain[0] is the object, chain[i + 1] the value under segs[i].
  const chain: unknown[] = [obj];
  for (let i = 0; i < segs.length - 1; i++) {
    const next = childAt(chain[i], segs[i]!, elements);
    if (next === undefined) return;
    chain.push(next);
  }
  const fieldsIn = (map: Record<string, unknown>): number => {
    let n = fieldCounts.get(map);
    if (n === undefined) {
      n = Object.keys(map).length;
      fieldCounts.set(map, n);
    }
    return n;
  };
  const deleteField = (map: Record<string, unknown>, field: string): void => {
    if (!Object.hasOwn(map, field)) return;
    const n = fieldsIn(map);
    delete map[field];
    fieldCounts.set(map, n - 1);
  };
  const n = segs.length;
  const last = segs[n - 1]!;
  const holder = chain[n - 1];
  if (last.startsWith("f:")) {
    if (isRecord(holder)) deleteField(holder, last.slice(2));
  } else if (Array.isArray(holder)) {
    const at = elements.find(holder, last);
    if (at >= 0) elements.remove(holder, at);
  }
  // Emptied containers above, as kube's apply leaves no empty parents behind.
  for (let i = n - 1; i >= 1; i--) {
    const node = chain[i];
    const seg = segs[i - 1]!;
    const parent = chain[i - 1];
    if (!seg.startsWith("f:") || !isRecord(parent)) break; // an element: it stays
    if (Array.isArray(node) && elements.size(node) === 0) {
      deleteField(parent, seg.slice(2));
      continue;
    }
    if (!isRecord(node) || fieldsIn(node) > 0 || i === 1 || kept(segs.slice(0, i).join(SEP))) break;
    deleteField(parent, seg.slice(2));
  }
};

/**
 * fieldsV1 nested form of a path set, in the order given. A path that is a member and has children under it
 * (a map or list element the set holds as a whole node) is marked with kube's `.` key, written first.
 */
export const toFieldsV1 = (paths: Iterable<string>): Record<string, unknown> => {
  const root: Record<string, unknown> = {};
  const members = new Set<object>();
  for (const path of paths) {
    let node = root;
    for (const seg of path.split(SEP)) {
      if (!Object.hasOwn(node, seg)) {
        if (members.has(node) && !Object.hasOwn(node, ".")) node["."] = {};
        node[seg] = {};
      }
      node = node[seg] as Record<string, unknown>;
    }
    members.add(node);
  }
  return root;
};

/**
 * The paths of a fieldsV1 tree, in order: every node marked `.` and every node with nothing under it. An
 * explicit stack (it mirrors an object ~10,000 levels deep).
 */
const addPaths = (node: unknown, path: string, out: Set<string>): void => {
  const pending: [unknown, string][] = [[node, path]];
  while (pending.length > 0) {
    const [n, p] = pending.pop() as [unknown, string];
    if (!isRecord(n)) continue;
    const children: [unknown, string][] = [];
    let member = false;
    for (const k in n) {
      if (!Object.hasOwn(n, k)) continue;
      if (k === ".") member = true;
      else children.push([n[k], p ? `${p}${SEP}${k}` : k]);
    }
    if (p && (member || children.length === 0)) out.add(p);
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i] as [unknown, string]);
  }
};

export const fromFieldsV1 = (fields: unknown): Set<string> => {
  const out = new Set<string>();
  addPaths(fields, "", out);
  return out;
};

/** What an Update changed, as structured-merge-diff's comparison of the stored and the written object. */
export interface Comparison {
  /** Nodes only the stored object has (a removed map: it and everything under it). */
  readonly removed: Set<string>;
  /** Leaves both have, with different values. */
  readonly modified: Set<string>;
  /** Nodes only the written object has (an added map or list element: it and everything under it). */
  readonly added: Set<string>;
}

/** A list's elements by their path segment (the first of duplicates, as the rest cannot be told apart). */
const elementsBySegment = (list: unknown, lt: ListType): Map<string, unknown> => {
  const out = new Map<string, unknown>();
  if (!Array.isArray(list)) return out;
  for (const item of list) {
    const seg = segmentIn(lt, item);
    if (seg !== undefined && !out.has(seg)) out.set(seg, item);
  }
  return out;
};

/**
 * structured-merge-diff's comparison (typed/compare.go) of `before` and `after`: maps are compared per key,
 * set and associative lists per element, everything else is a leaf (atomic lists, scalars, null, and the
 * elements of sets and of `metadata.ownerReferences`, an atomic struct). apiVersion, kind, `metadata` itself
 * and the server's metadata are nobody's (kube's stripmeta). A node both sides share by identity is equal, and
 * so is one near the top whose JSON is identical.
 */
export const compareForUpdate = (
  before: unknown,
  after: unknown,
  listTypes: ListTypes = NO_LIST_TYPES,
): Comparison => {
  const cmp: Comparison = { removed: new Set(), modified: new Set(), added: new Set() };
  const b = isRecord(before) ? before : {};
  const a = isRecord(after) ? after : {};
  // An explicit stack: a preserve-unknown field can nest ~10,000 levels, deeper than the JavaScript stack.
  // Each entry carries its managed-fields path and its dotted schema path (`schemaPathOf` of it, built as the
  // walk goes down instead of from the path at every node).
  const pending: [unknown, unknown, string, string][] = [];
  const pushChildren = (
    l: Record<string, unknown>,
    r: Record<string, unknown>,
    path: string,
    dotted: string,
  ): void => {
    const isRoot = path === "";
    const isMetadata = path === "f:metadata";
    const skip = (k: string): boolean =>
      (isRoot && (k === "apiVersion" || k === "kind")) || (isMetadata && UNMANAGED_METADATA.has(k));
    const prefix = isRoot ? "f:" : `${path}${SEP}f:`;
    const dottedPrefix = dotted ? `${dotted}.` : "";
    // A write changes few of an object's fields (decision 166): down to the second level (metadata's,
    // spec's and status' own fields) a field found identical is passed over whole instead of walked — an
    // identical subtree has no added, removed or modified field. Deeper, the walk goes on; so a changed value is
    // read a bounded number of times (at most four, with the list elements below), and the comparison stays
    // linear in the objects.
    const shallow = !path.includes(SEP);
    for (const k in r) {
      if (!Object.hasOwn(r, k) || skip(k)) continue;
      if (shallow && identicalJson(l[k], r[k])) continue;
      pending.push([l[k], r[k], prefix + k, dottedPrefix + k]);
    }
    for (const k in l)
      if (Object.hasOwn(l, k) && !Object.hasOwn(r, k) && !skip(k))
        pending.push([l[k], undefined, prefix + k, dottedPrefix + k]);
  };
  const node = (l: unknown, r: unknown, path: string): void => {
    if (l === undefined) cmp.added.add(path);
    else if (r === undefined) cmp.removed.add(path);
  };
  const leaf = (l: unknown, r: unknown, path: string): void => {
    if (l === undefined) cmp.added.add(path);
    else if (r === undefined) cmp.removed.add(path);
    else if (!jsonEqual(l, r)) cmp.modified.add(path);
  };
  pushChildren(b, a, "", "");
  while (pending.length > 0) {
    const [l, r, path, dotted] = pending.pop() as [unknown, unknown, string, string];
    if (l === r) continue;
    if ((isRecord(l) || isRecord(r)) && !isAtomicMapAt(path, dotted, listTypes)) {
      if (path === "f:metadata") {
        pushChildren(isRecord(l) ? l : {}, isRecord(r) ? r : {}, path, dotted);
        continue;
      }
      node(l, r, path);
      // A map that was a scalar (or became one) is a changed leaf as well as the map's fields.
      if (l !== undefined && r !== undefined && !(isRecord(l) && isRecord(r))) cmp.modified.add(path);
      pushChildren(isRecord(l) ? l : {}, isRecord(r) ? r : {}, path, dotted);
      continue;
    }
    const lt = Array.isArray(l) || Array.isArray(r) ? listTypeAt(dotted, listTypes) : undefined;
    if (!lt || lt.type === "atomic") {
      leaf(l, r, path);
      continue;
    }
    node(l, r, path);
    if (l !== undefined && r !== undefined && !(Array.isArray(l) && Array.isArray(r))) cmp.modified.add(path);
    const ls = elementsBySegment(l, lt);
    const rs = elementsBySegment(r, lt);
    // The elements of a list near the top (status.conditions, at most one level down) are passed over when
    // identical, as fields are.
    const shallow = path.indexOf(SEP) === path.lastIndexOf(SEP);
    const visit = (seg: string, li: unknown, ri: unknown): void => {
      if (shallow && identicalJson(li, ri)) return;
      const p = `${path}${SEP}${seg}`;
      if (lt.type === "set") leaf(li, ri, p);
      else pending.push([li, ri, p, dotted]);
    };
    for (const [seg, ri] of rs) visit(seg, ls.get(seg), ri);
    for (const [seg, li] of ls) if (!rs.has(seg)) visit(seg, li, undefined);
  }
  return cmp;
};

/**
 * What a server remembers about the fieldsV1 values it handles, keyed by their identity (a memo, not state:
 * fieldsV1 values are built once — by this module, or parsed from a request — and never changed in place,
 * and the sets handed out are read-only). Owned by whoever owns the stored objects (the Rest); recordUpdate
 * without one parses every entry afresh and gives the same answer.
 */
export interface FieldSetMemo {
  /** fromFieldsV1 of a fieldsV1 value: an entry a write did not touch keeps its value, so it is parsed once. */
  readonly parsed: WeakMap<object, ReadonlySet<string>>;
  /**
   * The fieldsV1 values this module built from a path set (toFieldsV1 of the sorted paths, nothing else):
   * only those can stand in for a rebuild of the same set — one from a request may carry kube's `.` markers
   * or another key order, which a rebuild would drop.
   */
  readonly built: WeakSet<object>;
}

export const createFieldSetMemo = (): FieldSetMemo => ({ parsed: new WeakMap(), built: new WeakSet() });

const heldPaths = (fields: unknown, memo: FieldSetMemo | undefined): ReadonlySet<string> => {
  if (!memo || !isRecord(fields)) return fromFieldsV1(fields);
  let paths = memo.parsed.get(fields);
  if (!paths) {
    paths = fromFieldsV1(fields);
    memo.parsed.set(fields, paths);
  }
  return paths;
};

/**
 * toFieldsV1 of the sorted paths, remembered as built and as parsing to `paths` (a path with others under it
 * is marked `.`, so that is exactly what fromFieldsV1 would give).
 */
const buildFieldsV1 = (
  paths: ReadonlySet<string>,
  memo: FieldSetMemo | undefined,
): Record<string, unknown> => {
  const fields = toFieldsV1([...paths].sort());
  if (memo) {
    memo.built.add(fields);
    memo.parsed.set(fields, paths);
  }
  return fields;
};

/** `.spec.replicas` / `.metadata.finalizers[="x"]` / `.spec.entries[name="a"]`: kube's field paths in conflicts. */
const displayPath = (path: string): string =>
  path
    .split(SEP)
    .map((s) =>
      s.startsWith("f:")
        ? `.${s.slice(2)}`
        : s.startsWith("v:")
          ? `[=${s.slice(2)}]`
          : `[${Object.entries(JSON.parse(s.slice(2)) as Record<string, unknown>)
              .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
              .join(",")}]`,
    )
    .join("");

const groupOf = (apiVersion: unknown): string =>
  typeof apiVersion === "string" ? splitApiVersion(apiVersion).group : "";

/**
 * The entries a write through `apiVersion` keeps: structured-merge-diff compares each manager's fields in
 * its own version and drops a manager whose version the field manager cannot convert to — for kube, one of
 * another API group (a core write of an Event drops its events.k8s.io managers, and back; decision 157).
 */
const entriesOf = (obj: KubeObject | undefined, apiVersion: string): ManagedFieldsEntry[] => {
  const all = obj?.metadata?.managedFields;
  if (!Array.isArray(all)) return [];
  const group = groupOf(apiVersion);
  const entries = all as ManagedFieldsEntry[];
  return entries.every((e) => groupOf(e.apiVersion) === group)
    ? entries
    : entries.filter((e) => groupOf(e.apiVersion) === group);
};

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Whether applying the node at `path` leaves it as it was: equal, or a map over a map (maps and associative
 * lists' elements merge field by field, their fields checked on their own), unless the map is atomic.
 */
const sameValue = (path: string, live: unknown, applied: unknown, listTypes: ListTypes): boolean =>
  (isRecord(live) && isRecord(applied) && !isAtomicMap(path, listTypes)) || sameJson(live, applied);

/** An entry as kube writes it (in kube's field order): the subresource only when there is one. */
const entry = (e: Omit<ManagedFieldsEntry, "fieldsType">): ManagedFieldsEntry => ({
  manager: e.manager,
  operation: e.operation,
  apiVersion: e.apiVersion,
  time: e.time,
  fieldsType: "FieldsV1",
  fieldsV1: e.fieldsV1,
  ...(e.subresource ? { subresource: e.subresource } : {}),
});

/**
 * Entries in kube's order (its sortEncodedManagedFields): Apply before Update, then older before newer (to
 * the second), then by manager, apiVersion and subresource.
 */
const inKubeOrder = (entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] => {
  const seconds = (e: ManagedFieldsEntry): string => (e.time ?? "").slice(0, 19);
  const by = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return entries.sort(
    (p, q) =>
      by(p.operation, q.operation) ||
      by(seconds(p), seconds(q)) ||
      by(p.manager, q.manager) ||
      by(p.apiVersion, q.apiVersion) ||
      by(p.subresource ?? "", q.subresource ?? ""),
  );
};

const isEntry = (e: ManagedFieldsEntry, manager: string, op: string, sub: string | undefined): boolean =>
  e.manager === manager && e.operation === op && (e.subresource ?? "") === (sub ?? "");

/**
 * managedFields after an Update-type write (create, PUT, merge/JSON/strategic patch) by `manager`, as
 * structured-merge-diff's Updater: the writer owns what it held, less what the write removed, and every
 * node the write modified or added (an added map or list element as a member, `.`, with its fields); the
 * others lose what the write modified, added or removed. A create is compared with the kind's empty object
 * (builtin-shapes.ts).
 */
export const recordUpdate = (
  oldObj: KubeObject | undefined,
  newObj: KubeObject,
  manager: string,
  apiVersion: string,
  now: string,
  subresource?: string,
  memo?: FieldSetMemo,
  listTypes: ListTypes = NO_LIST_TYPES,
): ManagedFieldsEntry[] => {
  const { removed, modified, added } = compareForUpdate(oldObj ?? emptyObjectOf(newObj), newObj, listTypes);
  const taken = (p: string): boolean => removed.has(p) || modified.has(p) || added.has(p);
  const out: ManagedFieldsEntry[] = [];
  let mine: Set<string> | undefined;
  let mineBefore: { fields: unknown; held: ReadonlySet<string> } | undefined;
  for (const e of entriesOf(oldObj, apiVersion)) {
    const held = heldPaths(e.fieldsV1, memo);
    if (isEntry(e, manager, "Update", subresource)) {
      mine = new Set<string>();
      for (const p of held) if (!removed.has(p)) mine.add(p);
      mineBefore = { fields: e.fieldsV1, held };
      continue;
    }
    const paths = new Set<string>();
    for (const p of held) if (!taken(p)) paths.add(p);
    if (paths.size > 0)
      out.push(paths.size === held.size ? e : { ...e, fieldsV1: buildFieldsV1(paths, memo) });
  }
  const owned = mine ?? new Set<string>();
  for (const p of modified) owned.add(p);
  for (const p of added) owned.add(p);
  if (owned.size > 0) {
    // The writer's own field set unchanged (the usual controller write): its fieldsV1 is reused when this
    // module built it, as a rebuild would give an equal value; only the entry's time moves.
    const same =
      mineBefore !== undefined &&
      memo?.built.has(mineBefore.fields as object) === true &&
      sameSet(owned, mineBefore.held);
    const fields = same ? (mineBefore!.fields as Record<string, unknown>) : buildFieldsV1(owned, memo);
    out.push(entry({ manager, operation: "Update", apiVersion, time: now, fieldsV1: fields, subresource }));
  }
  return inKubeOrder(out);
};

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => {
  if (a.size !== b.size) return false;
  for (const p of a) if (!b.has(p)) return false;
  return true;
};

/**
 * Apply merge: maps merge per key; atomic lists and maps replace; sets and associative lists merge per element
 * (live order first, new elements after; an element present in both is merged field by field).
 */
const applyMerge = (live: unknown, applied: unknown, path: string, listTypes: ListTypes): unknown => {
  // Maps are merged with an explicit stack (a preserve-unknown field can nest ~10,000 levels, kube's limit,
  // deeper than the JavaScript stack): each entry merges one value into its holder's key.
  const root: Record<string, unknown> = {};
  const pending: [unknown, unknown, string, Record<string, unknown>, string][] = [
    [live, applied, path, root, "value"],
  ];
  while (pending.length > 0) {
    const [l, a, p, holder, key] = pending.pop() as [
      unknown,
      unknown,
      string,
      Record<string, unknown>,
      string,
    ];
    if (isRecord(a) && listTypeAt(p, listTypes)?.type !== "atomic") {
      const base: Record<string, unknown> = isRecord(l) ? { ...l } : {};
      holder[key] = base;
      // Reversed onto the stack, so new keys land in the applied order.
      const entries = Object.entries(a);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i] as [string, unknown];
        pending.push([base[k], v, p ? `${p}.${k}` : k, base, k]);
      }
    } else {
      holder[key] = applyMergeList(l, a, p, listTypes);
    }
  }
  return root.value;
};

/** Apply merge of a value that is not a map: lists by their list type, anything else replaced. */
const applyMergeList = (live: unknown, applied: unknown, path: string, listTypes: ListTypes): unknown => {
  if (Array.isArray(applied) && Array.isArray(live)) {
    const lt = listTypeAt(path, listTypes);
    if (lt?.type === "set") {
      // A set of the live items' texts, not a search of them per applied item (decision 141).
      const held = new Set(live.map(canonicalJson));
      const out = [...live];
      for (const item of applied) if (!held.has(canonicalJson(item))) out.push(item);
      return out;
    }
    if (lt?.type === "map") {
      // The first item with each key, by its key fields' values (a field left out is part of the key).
      const keyText = (o: Record<string, unknown>): string =>
        JSON.stringify(lt.keys.map((k) => (o[k] === undefined ? 0 : canonicalJson(o[k]))));
      const out = [...live];
      const firstAt = new Map<string, number>();
      const remember = (o: unknown, at: number): void => {
        if (!isRecord(o)) return;
        const key = keyText(o);
        if (!firstAt.has(key)) firstAt.set(key, at);
      };
      out.forEach(remember);
      for (const item of applied) {
        const i = isRecord(item) ? (firstAt.get(keyText(item)) ?? -1) : -1;
        if (i >= 0)
          out[i] = path === "metadata.ownerReferences" ? item : applyMerge(out[i], item, path, listTypes);
        else {
          out.push(item);
          remember(item, out.length - 1);
        }
      }
      return out;
    }
  }
  return applied;
};

/** Whether any of the `sorted` strings starts with `prefix` (the first not below it is the only candidate). */
const startsAny = (sorted: readonly string[], prefix: string): boolean => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo]!.startsWith(prefix);
};

export interface ApplyResult {
  object: KubeObject;
  managedFields: ManagedFieldsEntry[];
}

/**
 * Server-side apply of `applied` by `manager` onto `live` (undefined when creating). Throws a 409 Conflict
 * listing every conflicting manager and field unless `force`.
 */
export const serverSideApply = (
  live: KubeObject | undefined,
  applied: KubeObject,
  manager: string,
  force: boolean,
  apiVersion: string,
  now: string,
  subresource?: string,
  listTypes: ListTypes = NO_LIST_TYPES,
): ApplyResult => {
  const appliedPaths = fieldPaths(applied, listTypes);
  const entries = entriesOf(live, apiVersion).map((e) => ({ e, paths: fromFieldsV1(e.fieldsV1) }));
  const conflicts: Array<{ owner: (typeof entries)[number]; path: string }> = [];
  const elements = createElements();
  for (const owner of entries) {
    if (owner.e.manager === manager) continue;
    for (const p of appliedPaths)
      if (
        owner.paths.has(p) &&
        !sameValue(p, valueAt(live, p, elements), valueAt(applied, p, elements), listTypes)
      )
        conflicts.push({ owner, path: p });
  }
  if (conflicts.length > 0 && !force) {
    // kube's printManager: the name, its subresource, and an updater's apiVersion (an applier's is not part
    // of its identity).
    const who = ({ owner: { e } }: (typeof conflicts)[number]): string =>
      `conflict with "${e.manager}"${e.subresource ? ` with subresource "${e.subresource}"` : ""}${
        e.operation === "Update" ? ` using ${e.apiVersion}` : ""
      }`;
    const lines = conflicts.map((c) => `${who(c)}: ${displayPath(c.path)}`);
    const n = conflicts.length;
    const message =
      n === 1
        ? `Apply failed with 1 conflict: ${lines[0]}`
        : `Apply failed with ${n} conflicts: ${lines.join("\n")}`;
    throw new ApiError(409, "Conflict", message, {
      causes: conflicts.map((c) => ({
        reason: "FieldManagerConflict",
        message: who(c),
        field: displayPath(c.path),
      })),
    });
  }
  if (force) for (const c of conflicts) c.owner.paths.delete(c.path);

  const previous =
    entries.find((x) => isEntry(x.e, manager, "Apply", subresource))?.paths ?? new Set<string>();
  // Whether another manager owns the node (or, `under`, anything under it: an element whose field another
  // took stays, with that field): one set of their paths, and the same sorted, where the paths under a node
  // start right after its own (decision 141: the search per path was quadratic).
  const heldElsewhere = new Set<string>();
  for (const x of entries)
    if (!isEntry(x.e, manager, "Apply", subresource)) for (const p of x.paths) heldElsewhere.add(p);
  const sortedElsewhere = [...heldElsewhere].sort();
  const ownedElsewhere = (q: string, under: boolean): boolean =>
    heldElsewhere.has(q) || (under && startsAny(sortedElsewhere, `${q}${SEP}`));
  const base = cloneJson(live ?? {}) as Record<string, unknown>;
  const fieldCounts = new Map<object, number>();
  for (const p of previous) {
    if (appliedPaths.has(p)) continue;
    if (!ownedElsewhere(p, true)) removeAt(base, p, (q) => ownedElsewhere(q, false), elements, fieldCounts);
  }
  elements.compact();
  const object = applyMerge(base, applied, "", listTypes) as KubeObject;

  const managedFields: ManagedFieldsEntry[] = [];
  for (const { e, paths } of entries) {
    if (isEntry(e, manager, "Apply", subresource)) continue;
    if (paths.size > 0) managedFields.push({ ...e, fieldsV1: toFieldsV1([...paths].sort()) });
  }
  if (appliedPaths.size > 0)
    managedFields.push(
      entry({
        manager,
        operation: "Apply",
        apiVersion,
        time: now,
        fieldsV1: toFieldsV1([...appliedPaths].sort()),
        subresource,
      }),
    );
  return { object, managedFields: inKubeOrder(managedFields) };
};

/** The manager name kube derives from a User-Agent when no `fieldManager` is given. */
export const managerFromUserAgent = (userAgent: string | undefined): string => {
  const ua = userAgent ?? "";
  const name = ua.split("/")[0]?.trim();
  return name ? name.slice(0, 128) : "unknown";
};

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's strconv.Quote, as kube's messages quote a value: control and unprintable characters escaped. */
export const goQuote = (s: string): string => {
  const named: Record<string, string> = {
    "\x07": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
  };
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (named[ch]) out += named[ch];
    else if (PRINTABLE.test(ch)) out += ch;
    else if (code < 0x80) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return `"${out}"`;
};

/** kube's ValidateFieldManager for the `fieldManager` option: at most 128 bytes, every character printable. */
export const fieldManagerCauses = (manager: string): StatusCause[] => {
  const causes: StatusCause[] = [];
  if (Buffer.byteLength(manager) > 128)
    causes.push({
      reason: "FieldValueTooLong",
      field: "fieldManager",
      message: "Too long: may not be more than 128 bytes",
    });
  let at = 0;
  for (const ch of manager) {
    if (!PRINTABLE.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      causes.push({
        reason: "FieldValueInvalid",
        field: "fieldManager",
        message: `Invalid value: ${goQuote(manager)}: invalid character U+${code} (at position ${at})`,
      });
    }
    at += Buffer.byteLength(ch);
  }
  return causes;
};
