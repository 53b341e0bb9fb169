/**
 * Field ownership as kube-apiserver tracks it in `metadata.managedFields` (fieldsV1 sets), and server-side
 * apply on top of it. Pure functions over plain objects.
 *
 * What is modelled (recorded in docs/decisions.md): maps are granular per key; lists are atomic (the list
 * is one field) except `metadata.finalizers` (a set: `v:"name"` per element),
 * `metadata.ownerReferences` (associative by uid: `k:{"uid":…}` per element) and the lists a CRD's schema
 * declares `x-kubernetes-list-type: set` or `map` (by their `x-kubernetes-list-map-keys`), passed in as
 * `ListTypes`. An element of an associative list is owned whole (kube tracks its fields one by one). A manager that stops applying
 * a field loses it; the field is removed from the object only when no other manager owns it. An apply that
 * would change a field another manager owns is a conflict (409) unless `force`, which moves ownership.
 * Update/Patch requests make their manager the owner of every field they changed.
 */

import { cloneJson } from "../json-text.js";
import { isRecord, jsonEqual, type KubeObject } from "../kube/object.js";
import { UNMANAGED_METADATA } from "./object-meta.js";
import { ApiError } from "./status.js";

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

/** How a list merges: a set of scalars, or a map keyed by the named fields of its elements. */
export type ListType = { readonly type: "set" } | { readonly type: "map"; readonly keys: readonly string[] };

/** The list type of the list at a dotted field path (`spec.entries`; list elements are not in the path). */
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

const keyOf = (item: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(keys.filter((k) => item[k] !== undefined).map((k) => [k, item[k]]));

const elementSegment = (listPath: string, item: unknown, listTypes: ListTypes): string | undefined => {
  const lt = listTypeAt(schemaPathOf(listPath), listTypes);
  if (lt?.type === "set") return `v:${JSON.stringify(item)}`;
  if (lt?.type === "map" && isRecord(item)) return `k:${JSON.stringify(keyOf(item, lt.keys))}`;
  return undefined;
};

/** Whether a list element is the one a `k:`/`v:` segment names. */
const isElement = (item: unknown, seg: string): boolean => {
  const want = JSON.parse(seg.slice(2)) as unknown;
  if (seg.startsWith("v:")) return jsonEqual(item, want);
  return isRecord(item) && isRecord(want) && Object.entries(want).every(([k, v]) => jsonEqual(item[k], v));
};

/**
 * Adds the leaf field paths of `value` under `path` to `out`. With `changed`, also walks `before` (the value
 * at the same path in the old object) alongside and adds to `changed` every leaf whose value differs.
 * (Runs for every field of every write: plain loops, no per-node allocations.)
 */
const collect = (
  value: unknown,
  path: string,
  out: Set<string>,
  before: unknown,
  changed: Set<string> | undefined,
  listTypes: ListTypes,
): void => {
  // An explicit stack, children pushed in reverse so they come off in order: a preserve-unknown field can
  // nest ~10,000 levels (kube's limit), deeper than the JavaScript stack.
  const pending: [unknown, string, unknown][] = [[value, path, before]];
  while (pending.length > 0) {
    const [value, path, before] = pending.pop() as [unknown, string, unknown];
    if (isRecord(value)) {
      const beforeMap = changed && isRecord(before) ? before : undefined;
      const isMetadata = path === "f:metadata";
      const children: [unknown, string, unknown][] = [];
      let fields = 0;
      for (const k in value) {
        if (!Object.hasOwn(value, k)) continue;
        fields++;
        if (isMetadata && UNMANAGED_METADATA.has(k)) continue;
        children.push([value[k], path ? `${path}${SEP}f:${k}` : `f:${k}`, beforeMap?.[k]]);
      }
      for (let i = children.length - 1; i >= 0; i--) pending.push(children[i] as [unknown, string, unknown]);
      if (fields > 0) continue;
    } else if (
      Array.isArray(value) &&
      value.length > 0 &&
      elementSegment(path, value[0], listTypes) !== undefined
    ) {
      const beforeList = changed && Array.isArray(before) ? before : [];
      for (const item of value) {
        const seg = elementSegment(path, item, listTypes);
        if (seg === undefined) continue;
        const p = `${path}${SEP}${seg}`;
        out.add(p);
        if (!changed) continue;
        const was = beforeList.find((i) => isElement(i, seg));
        if (!jsonEqual(was ?? null, item ?? null)) changed.add(p);
      }
      continue;
    }
    if (!path) continue;
    out.add(path);
    if (changed && !jsonEqual(before ?? null, value ?? null)) changed.add(path);
  }
};

/**
 * The leaf field paths of an object (apiVersion/kind and server-set metadata excluded). With `diff`, also
 * the paths whose value differs from `diff.before`'s, added to `diff.changed`.
 */
export const fieldPaths = (
  obj: unknown,
  diff?: { before: Record<string, unknown>; changed: Set<string> },
  listTypes: ListTypes = NO_LIST_TYPES,
): Set<string> => {
  const out = new Set<string>();
  if (!isRecord(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (k === "apiVersion" || k === "kind") continue;
    collect(v, `f:${k}`, out, diff?.before[k], diff?.changed, listTypes);
  }
  return out;
};

const valueAt = (obj: unknown, path: string): unknown => {
  let cur: unknown = obj;
  for (const seg of path.split(SEP)) {
    if (seg.startsWith("f:")) {
      if (!isRecord(cur)) return undefined;
      cur = cur[seg.slice(2)];
    } else if (seg.startsWith("v:") || seg.startsWith("k:")) {
      cur = Array.isArray(cur) ? cur.find((i) => isElement(i, seg)) : undefined;
    } else return undefined;
  }
  return cur;
};

const removeAt = (obj: Record<string, unknown>, path: string): void => {
  const segs = path.split(SEP);
  const parents: Array<[Record<string, unknown>, string]> = [];
  let cur: unknown = obj;
  for (let i = 0; i < segs.length - 1; i++) {
    const seg = segs[i]!;
    if (!isRecord(cur) || !seg.startsWith("f:")) return;
    parents.push([cur, seg.slice(2)]);
    cur = cur[seg.slice(2)];
  }
  const last = segs[segs.length - 1]!;
  if (last.startsWith("f:") && isRecord(cur)) delete cur[last.slice(2)];
  else if (Array.isArray(cur)) {
    const [parent, key] = parents[parents.length - 1]!;
    parent[key] = cur.filter((i) => !isElement(i, last));
    if ((parent[key] as unknown[]).length === 0) delete parent[key];
  }
  // Maps emptied by the removal disappear, as kube's apply leaves no empty parents behind.
  for (let i = parents.length - 1; i >= 0; i--) {
    const [parent, key] = parents[i]!;
    const child = parent[key];
    if (isRecord(child) && Object.keys(child).length === 0 && i > 0) delete parent[key];
  }
};

/** fieldsV1 nested form of a path set. */
export const toFieldsV1 = (paths: Iterable<string>): Record<string, unknown> => {
  const root: Record<string, unknown> = {};
  for (const path of paths) {
    let node = root;
    for (const seg of path.split(SEP)) {
      node[seg] ??= {};
      node = node[seg] as Record<string, unknown>;
    }
  }
  return root;
};

/** The leaf paths of a fieldsV1 tree, in order; an explicit stack (it mirrors an object ~10,000 levels deep). */
const addLeaves = (node: unknown, path: string, out: Set<string>): void => {
  const pending: [unknown, string][] = [[node, path]];
  while (pending.length > 0) {
    const [n, p] = pending.pop() as [unknown, string];
    if (!isRecord(n)) continue;
    const children: [unknown, string][] = [];
    for (const k in n) {
      if (k === "." || !Object.hasOwn(n, k)) continue;
      children.push([n[k], p ? `${p}${SEP}${k}` : k]);
    }
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i] as [unknown, string]);
    if (children.length === 0 && p) out.add(p);
  }
};

export const fromFieldsV1 = (fields: unknown): Set<string> => {
  const out = new Set<string>();
  addLeaves(fields, "", out);
  return out;
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
 * toFieldsV1 of the sorted paths, remembered as built and as parsing to `paths` (the leaf paths of one
 * object never contain one another, so that is exactly what fromFieldsV1 would give).
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

const entriesOf = (obj: KubeObject | undefined): ManagedFieldsEntry[] =>
  Array.isArray(obj?.metadata?.managedFields) ? (obj.metadata.managedFields as ManagedFieldsEntry[]) : [];

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

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

const isEntry = (e: ManagedFieldsEntry, manager: string, op: string, sub: string | undefined): boolean =>
  e.manager === manager && e.operation === op && (e.subresource ?? "") === (sub ?? "");

/**
 * managedFields after an Update-type write (create, PUT, merge/JSON/strategic patch) by `manager`: it owns
 * what it changed; others lose what it changed; fields that disappeared belong to nobody.
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
  const differing = new Set<string>();
  const newPaths = fieldPaths(newObj, oldObj && { before: oldObj, changed: differing }, listTypes);
  // Creating: every field is the manager's.
  const changed = oldObj ? differing : newPaths;
  const out: ManagedFieldsEntry[] = [];
  let mine: Set<string> | undefined;
  let mineBefore: { fields: unknown; held: ReadonlySet<string> } | undefined;
  for (const e of entriesOf(oldObj)) {
    const held = heldPaths(e.fieldsV1, memo);
    const paths = new Set<string>();
    for (const p of held) if (!changed.has(p) && newPaths.has(p)) paths.add(p);
    if (isEntry(e, manager, "Update", subresource)) {
      mine = paths;
      mineBefore = { fields: e.fieldsV1, held };
      continue;
    }
    if (paths.size > 0)
      out.push(paths.size === held.size ? e : { ...e, fieldsV1: buildFieldsV1(paths, memo) });
  }
  const owned = mine ?? new Set<string>();
  for (const p of changed) owned.add(p);
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
  return out;
};

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => {
  if (a.size !== b.size) return false;
  for (const p of a) if (!b.has(p)) return false;
  return true;
};

/**
 * Apply merge: maps merge per key; atomic lists replace; sets and associative lists merge per element
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
    if (isRecord(a)) {
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
    if (lt?.type === "set") return [...live, ...applied.filter((f) => !live.some((l) => jsonEqual(l, f)))];
    if (lt?.type === "map") {
      const out = [...live];
      for (const item of applied) {
        const key = isRecord(item) ? keyOf(item, lt.keys) : undefined;
        const i = key
          ? out.findIndex((o) => isRecord(o) && lt.keys.every((k) => jsonEqual(o[k], key[k])))
          : -1;
        if (i >= 0)
          out[i] = path === "metadata.ownerReferences" ? item : applyMerge(out[i], item, path, listTypes);
        else out.push(item);
      }
      return out;
    }
  }
  return applied;
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
  const appliedPaths = fieldPaths(applied, undefined, listTypes);
  const entries = entriesOf(live).map((e) => ({ e, paths: fromFieldsV1(e.fieldsV1) }));
  const conflicts: Array<{ manager: string; apiVersion: string; path: string }> = [];
  for (const { e, paths } of entries) {
    if (e.manager === manager) continue;
    for (const p of appliedPaths)
      if (paths.has(p) && !sameJson(valueAt(live, p), valueAt(applied, p)))
        conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, path: p });
  }
  if (conflicts.length > 0 && !force) {
    // kube names the manager's apiVersion only when it is not the one of this request.
    const who = (c: { manager: string; apiVersion: string }): string =>
      `conflict with "${c.manager}"${c.apiVersion === apiVersion ? "" : ` using ${c.apiVersion}`}`;
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
  if (force) for (const c of conflicts) entries.find((x) => x.e.manager === c.manager)?.paths.delete(c.path);

  const previous =
    entries.find((x) => isEntry(x.e, manager, "Apply", subresource))?.paths ?? new Set<string>();
  const base = cloneJson(live ?? {}) as Record<string, unknown>;
  for (const p of previous) {
    if (appliedPaths.has(p)) continue;
    const ownedElsewhere = entries.some(
      (x) => !isEntry(x.e, manager, "Apply", subresource) && x.paths.has(p),
    );
    if (!ownedElsewhere) removeAt(base, p);
  }
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
  return { object, managedFields };
};

/** The manager name kube derives from a User-Agent when no `fieldManager` is given. */
export const managerFromUserAgent = (userAgent: string | undefined): string => {
  const ua = userAgent ?? "";
  const name = ua.split("/")[0]?.trim();
  return name ? name.slice(0, 128) : "unknown";
};
