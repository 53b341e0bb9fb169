/**
 * Field ownership as kube-apiserver tracks it in `metadata.managedFields` (fieldsV1 sets), and server-side
 * apply on top of it. Pure functions over plain objects.
 *
 * What is modelled (recorded in docs/decisions.md): maps are granular per key; lists are atomic (the list
 * is one field) except `metadata.finalizers` (a set: `v:"name"` per element) and
 * `metadata.ownerReferences` (associative by uid: `k:{"uid":…}` per element). A manager that stops applying
 * a field loses it; the field is removed from the object only when no other manager owns it. An apply that
 * would change a field another manager owns is a conflict (409) unless `force`, which moves ownership.
 * Update/Patch requests make their manager the owner of every field they changed.
 */
import { isRecord, jsonEqual, type KubeObject } from "../kube/object.js";
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
/** Metadata kube never puts in a field set. */
const SERVER_METADATA = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink",
]);

const elementSegment = (listPath: string, item: unknown): string | undefined => {
  if (listPath === "f:metadata\u0001f:finalizers") return `v:${JSON.stringify(item)}`;
  if (listPath === "f:metadata\u0001f:ownerReferences" && isRecord(item))
    return `k:${JSON.stringify({ uid: item.uid })}`;
  return undefined;
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
): void => {
  if (isRecord(value)) {
    const beforeMap = changed && isRecord(before) ? before : undefined;
    const isMetadata = path === "f:metadata";
    let fields = 0;
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      fields++;
      if (isMetadata && SERVER_METADATA.has(k)) continue;
      collect(value[k], path ? `${path}${SEP}f:${k}` : `f:${k}`, out, beforeMap?.[k], changed);
    }
    if (fields > 0) return;
  } else if (Array.isArray(value) && value.length > 0 && elementSegment(path, value[0]) !== undefined) {
    const beforeList = changed && Array.isArray(before) ? before : [];
    for (const item of value) {
      const p = `${path}${SEP}${elementSegment(path, item)}`;
      out.add(p);
      if (!changed) continue;
      const was = isRecord(item)
        ? beforeList.find((i) => isRecord(i) && i.uid === item.uid)
        : beforeList.includes(item)
          ? item
          : undefined;
      if (!jsonEqual(was ?? null, item ?? null)) changed.add(p);
    }
    return;
  }
  if (!path) return;
  out.add(path);
  if (changed && !jsonEqual(before ?? null, value ?? null)) changed.add(path);
};

/**
 * The leaf field paths of an object (apiVersion/kind and server-set metadata excluded). With `diff`, also
 * the paths whose value differs from `diff.before`'s, added to `diff.changed`.
 */
export const fieldPaths = (
  obj: unknown,
  diff?: { before: Record<string, unknown>; changed: Set<string> },
): Set<string> => {
  const out = new Set<string>();
  if (!isRecord(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (k === "apiVersion" || k === "kind") continue;
    collect(v, `f:${k}`, out, diff?.before[k], diff?.changed);
  }
  return out;
};

const valueAt = (obj: unknown, path: string): unknown => {
  let cur: unknown = obj;
  for (const seg of path.split(SEP)) {
    if (seg.startsWith("f:")) {
      if (!isRecord(cur)) return undefined;
      cur = cur[seg.slice(2)];
    } else if (seg.startsWith("v:")) {
      const want = JSON.parse(seg.slice(2)) as unknown;
      cur = Array.isArray(cur) && cur.includes(want) ? want : undefined;
    } else if (seg.startsWith("k:")) {
      const key = JSON.parse(seg.slice(2)) as Record<string, unknown>;
      cur = Array.isArray(cur) ? cur.find((i) => isRecord(i) && i.uid === key.uid) : undefined;
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
    const want = last.startsWith("v:") ? JSON.parse(last.slice(2)) : JSON.parse(last.slice(2)).uid;
    parent[key] = cur.filter((i) => (last.startsWith("v:") ? i !== want : !(isRecord(i) && i.uid === want)));
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

const addLeaves = (node: unknown, path: string, out: Set<string>): void => {
  if (!isRecord(node)) return;
  let children = 0;
  for (const k in node) {
    if (k === "." || !Object.hasOwn(node, k)) continue;
    children++;
    addLeaves(node[k], path ? `${path}${SEP}${k}` : k, out);
  }
  if (children === 0 && path) out.add(path);
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

/** `.spec.replicas` / `.metadata.finalizers[="x"]`: how kube prints a field path in conflicts. */
export const displayPath = (path: string): string =>
  path
    .split(SEP)
    .map((s) =>
      s.startsWith("f:") ? `.${s.slice(2)}` : s.startsWith("v:") ? `[=${s.slice(2)}]` : `[${s.slice(2)}]`,
    )
    .join("");

const entriesOf = (obj: KubeObject | undefined): ManagedFieldsEntry[] =>
  Array.isArray(obj?.metadata?.managedFields) ? (obj.metadata.managedFields as ManagedFieldsEntry[]) : [];

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

const entry = (
  manager: string,
  operation: "Apply" | "Update",
  apiVersion: string,
  now: string,
  fieldsV1: Record<string, unknown>,
  subresource: string | undefined,
): ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion,
  time: now,
  fieldsType: "FieldsV1",
  fieldsV1,
  ...(subresource ? { subresource } : {}),
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
): ManagedFieldsEntry[] => {
  const differing = new Set<string>();
  const newPaths = fieldPaths(newObj, oldObj && { before: oldObj, changed: differing });
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
    out.push(entry(manager, "Update", apiVersion, now, fields, subresource));
  }
  return out;
};

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => {
  if (a.size !== b.size) return false;
  for (const p of a) if (!b.has(p)) return false;
  return true;
};

/** Apply merge: maps merge per key, lists replace, except the associative metadata lists. */
const applyMerge = (live: unknown, applied: unknown, path: string): unknown => {
  if (isRecord(applied)) {
    const base: Record<string, unknown> = isRecord(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(applied)) base[k] = applyMerge(base[k], v, path ? `${path}.${k}` : k);
    return base;
  }
  if (Array.isArray(applied) && Array.isArray(live)) {
    if (path === "metadata.finalizers") return [...live, ...applied.filter((f) => !live.includes(f))];
    if (path === "metadata.ownerReferences") {
      const out = [...live];
      for (const ref of applied) {
        const i = out.findIndex((o) => isRecord(o) && isRecord(ref) && o.uid === ref.uid);
        if (i >= 0) out[i] = ref;
        else out.push(ref);
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
): ApplyResult => {
  const appliedPaths = fieldPaths(applied);
  const entries = entriesOf(live).map((e) => ({ e, paths: fromFieldsV1(e.fieldsV1) }));
  const conflicts: Array<{ manager: string; apiVersion: string; path: string }> = [];
  for (const { e, paths } of entries) {
    if (e.manager === manager) continue;
    for (const p of appliedPaths)
      if (paths.has(p) && !sameJson(valueAt(live, p), valueAt(applied, p)))
        conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, path: p });
  }
  if (conflicts.length > 0 && !force) {
    const lines = conflicts.map(
      (c) => `conflict with "${c.manager}" using ${c.apiVersion}: ${displayPath(c.path)}`,
    );
    const n = conflicts.length;
    const message =
      n === 1
        ? `Apply failed with 1 conflict: ${lines[0]}`
        : `Apply failed with ${n} conflicts: ${lines.join("\n")}`;
    throw new ApiError(409, "Conflict", message, {
      causes: conflicts.map((c) => ({
        reason: "FieldManagerConflict",
        message: `conflict with "${c.manager}" using ${c.apiVersion}`,
        field: displayPath(c.path),
      })),
    });
  }
  if (force) for (const c of conflicts) entries.find((x) => x.e.manager === c.manager)?.paths.delete(c.path);

  const previous =
    entries.find((x) => isEntry(x.e, manager, "Apply", subresource))?.paths ?? new Set<string>();
  const base = structuredClone(live ?? {}) as Record<string, unknown>;
  for (const p of previous) {
    if (appliedPaths.has(p)) continue;
    const ownedElsewhere = entries.some(
      (x) => !isEntry(x.e, manager, "Apply", subresource) && x.paths.has(p),
    );
    if (!ownedElsewhere) removeAt(base, p);
  }
  const object = applyMerge(base, applied, "") as KubeObject;

  const managedFields: ManagedFieldsEntry[] = [];
  for (const { e, paths } of entries) {
    if (isEntry(e, manager, "Apply", subresource)) continue;
    if (paths.size > 0) managedFields.push({ ...e, fieldsV1: toFieldsV1([...paths].sort()) });
  }
  if (appliedPaths.size > 0)
    managedFields.push(
      entry(manager, "Apply", apiVersion, now, toFieldsV1([...appliedPaths].sort()), subresource),
    );
  return { object, managedFields };
};

/** The manager name kube derives from a User-Agent when no `fieldManager` is given. */
export const managerFromUserAgent = (userAgent: string | undefined): string => {
  const ua = userAgent ?? "";
  const name = ua.split("/")[0]?.trim();
  return name ? name.slice(0, 128) : "unknown";
};
