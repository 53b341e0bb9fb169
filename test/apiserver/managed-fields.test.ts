/**
 * managedFields bookkeeping of Update-type writes, pinned on the cases the write path's fast walk must keep:
 * leaves (empty maps and lists, atomic lists), server metadata left out, the set-like metadata lists,
 * kube's `.` marker in fieldsV1, untouched entries passed through as they are, and repeated writes over the
 * same stored entries giving the same answer — with the server's memo (parsed sets, fieldsV1 it built) and
 * without it alike.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareForUpdate,
  createFieldSetMemo,
  fieldPaths,
  fromFieldsV1,
  type ManagedFieldsEntry,
  recordUpdate,
  serverSideApply,
  toFieldsV1,
} from "../../src/apiserver/managed-fields.js";
import { isRecord, jsonEqual, type KubeObject } from "../../src/kube/object.js";

const S = "\u0001";
const path = (...segs: string[]) => segs.join(S);

describe("fieldPaths: the leaves an object's fields are owned by", () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ["an empty map is a leaf", { spec: { m: {} } }, [path("f:spec", "f:m")]],
    ["an empty list is a leaf", { spec: { l: [] } }, [path("f:spec", "f:l")]],
    ["a list is atomic", { spec: { l: [{ a: 1 }, { b: 2 }] } }, [path("f:spec", "f:l")]],
    ["null is a leaf", { spec: { n: null } }, [path("f:spec", "f:n")]],
    ["server metadata is nobody's", { metadata: { name: "n", uid: "u", resourceVersion: "1" } }, []],
    [
      "server metadata is skipped beside owned metadata",
      { metadata: { name: "n", labels: { a: "b" } } },
      [path("f:metadata", "f:labels", "f:a")],
    ],
    [
      "finalizers are a set",
      { metadata: { finalizers: ["x", "y"] } },
      [path("f:metadata", "f:finalizers", 'v:"x"'), path("f:metadata", "f:finalizers", 'v:"y"')],
    ],
    [
      "ownerReferences are keyed by uid",
      { metadata: { ownerReferences: [{ uid: "u1", name: "o" }] } },
      [path("f:metadata", "f:ownerReferences", 'k:{"uid":"u1"}')],
    ],
    [
      "apiVersion and kind are nobody's",
      { apiVersion: "v1", kind: "X", data: { k: "v" } },
      [path("f:data", "f:k")],
    ],
    [
      "a field named like a server field outside metadata is owned",
      { spec: { name: "x" } },
      [path("f:spec", "f:name")],
    ],
  ])("%s", (_name, object, expected) => {
    expect([...fieldPaths(object)].sort()).toEqual([...expected].sort());
  });
});

describe("compareForUpdate: structured-merge-diff's comparison of an Update", () => {
  const mapOf = (p: string) =>
    p === "spec.entries"
      ? ({ type: "map", keys: ["name"] } as const)
      : p === "spec.tags"
        ? ({ type: "set" } as const)
        : undefined;
  it.each<[string, Record<string, unknown>, Record<string, unknown>, Record<string, string[]>]>([
    [
      "a changed leaf is modified",
      { spec: { a: 1, b: 1 } },
      { spec: { a: 2, b: 1 } },
      { modified: [path("f:spec", "f:a")] },
    ],
    [
      "an added leaf is added",
      { spec: { a: 1 } },
      { spec: { a: 1, b: 1 } },
      { added: [path("f:spec", "f:b")] },
    ],
    [
      "an added map is added, and everything under it",
      { spec: {} },
      { spec: { m: { k: 1, n: { o: 2 } } } },
      {
        added: [
          path("f:spec", "f:m"),
          path("f:spec", "f:m", "f:k"),
          path("f:spec", "f:m", "f:n"),
          path("f:spec", "f:m", "f:n", "f:o"),
        ],
      },
    ],
    [
      "a removed map is removed, and everything under it",
      { spec: { m: { k: 1 } } },
      { spec: {} },
      { removed: [path("f:spec", "f:m"), path("f:spec", "f:m", "f:k")] },
    ],
    [
      "a map emptied is not itself changed",
      { spec: { m: { k: 1 } } },
      { spec: { m: {} } },
      { removed: [path("f:spec", "f:m", "f:k")] },
    ],
    ["an added empty map is added", { spec: {} }, { spec: { m: {} } }, { added: [path("f:spec", "f:m")] }],
    [
      "a changed atomic list is modified",
      { spec: { l: [1, 2] } },
      { spec: { l: [2, 1] } },
      { modified: [path("f:spec", "f:l")] },
    ],
    [
      "a scalar that became a map is modified, its fields added",
      { spec: { m: "x" } },
      { spec: { m: { k: 1 } } },
      { modified: [path("f:spec", "f:m")], added: [path("f:spec", "f:m", "f:k")] },
    ],
    [
      "an added finalizer is an added element; the list is added with its first",
      { metadata: { finalizers: ["x"] } },
      { metadata: { finalizers: ["x", "y"] }, spec: { tags: ["t"] } },
      {
        added: [
          path("f:metadata", "f:finalizers", 'v:"y"'),
          path("f:spec"),
          path("f:spec", "f:tags"),
          path("f:spec", "f:tags", 'v:"t"'),
        ],
      },
    ],
    [
      "an owner reference is an atomic element",
      { metadata: { ownerReferences: [{ uid: "u1", name: "a" }] } },
      {
        metadata: {
          ownerReferences: [
            { uid: "u1", name: "b" },
            { uid: "u2", name: "c" },
          ],
        },
      },
      {
        modified: [path("f:metadata", "f:ownerReferences", 'k:{"uid":"u1"}')],
        added: [path("f:metadata", "f:ownerReferences", 'k:{"uid":"u2"}')],
      },
    ],
    [
      "an associative list's element is a map: added with its fields, changed per field",
      { spec: { entries: [{ name: "a", v: 1 }] } },
      {
        spec: {
          entries: [
            { name: "a", v: 2 },
            { name: "b", v: 1 },
          ],
        },
      },
      {
        modified: [path("f:spec", "f:entries", 'k:{"name":"a"}', "f:v")],
        added: [
          path("f:spec", "f:entries", 'k:{"name":"b"}'),
          path("f:spec", "f:entries", 'k:{"name":"b"}', "f:name"),
          path("f:spec", "f:entries", 'k:{"name":"b"}', "f:v"),
        ],
      },
    ],
    [
      "apiVersion, kind, metadata itself and server metadata are nobody's",
      { apiVersion: "v1", kind: "X" },
      { apiVersion: "v2", kind: "Y", metadata: { name: "n", resourceVersion: "2", labels: { a: "b" } } },
      { added: [path("f:metadata", "f:labels"), path("f:metadata", "f:labels", "f:a")] },
    ],
    [
      "equal values are no change",
      { spec: { m: { a: [1, { b: 2 }] } } },
      { spec: { m: { a: [1, { b: 2 }] } } },
      {},
    ],
  ])("%s", (_name, before, after, expected) => {
    const cmp = compareForUpdate(before, after, mapOf);
    expect({
      removed: [...cmp.removed].sort(),
      modified: [...cmp.modified].sort(),
      added: [...cmp.added].sort(),
    }).toEqual({ removed: [], modified: [], added: [], ...expected });
  });
});

describe("fromFieldsV1", () => {
  it("reads kube's `.` marker as the node's own membership", () => {
    const fields = { "f:metadata": { "f:labels": { ".": {}, "f:a": {} } }, "f:spec": { ".": {} } };
    expect([...fromFieldsV1(fields)].sort()).toEqual([
      path("f:metadata", "f:labels"),
      path("f:metadata", "f:labels", "f:a"),
      "f:spec",
    ]);
  });

  it("toFieldsV1 writes a member with fields under it with `.` first, and fromFieldsV1 reads it back", () => {
    const paths = [path("f:data"), path("f:data", "f:a"), path("f:metadata", "f:labels", "f:x"), "f:spec"];
    const fields = toFieldsV1(paths);
    expect(JSON.stringify(fields)).toBe(
      '{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{"f:x":{}}},"f:spec":{}}',
    );
    expect([...fromFieldsV1(fields)].sort()).toEqual(paths);
  });
});

describe("recordUpdate over stored entries", () => {
  /** Created by "creator", then its status written by "status-writer" (which took status.s). */
  const stored = (): KubeObject => {
    const created: KubeObject = {
      metadata: { name: "n", labels: { a: "1" } },
      spec: { a: 1, b: 1 },
      status: { s: 1 },
    };
    const v1 = {
      ...created,
      metadata: {
        ...created.metadata,
        managedFields: recordUpdate(undefined, created, "creator", "v1", "t0"),
      },
    };
    const v2 = { ...v1, status: { s: 2 } };
    const fields = recordUpdate(v1, v2, "status-writer", "v1", "t1", "status");
    return { ...v2, metadata: { ...v2.metadata, managedFields: fields } };
  };

  it("an entry the write does not touch is passed through as it is", () => {
    const old = stored();
    const next = { ...old, spec: { a: 2, b: 1 } };
    const fields = recordUpdate(old, next, "editor", "v1", "t2");
    const untouched = (old.metadata!.managedFields as ManagedFieldsEntry[]).find(
      (e) => e.manager === "status-writer",
    );
    expect(fields.find((e) => e.manager === "status-writer")).toBe(untouched);
  });

  it("repeated writes over the same stored entries give the same answer", () => {
    const old = stored();
    const next = { ...old, spec: { a: 2, b: 1 }, metadata: { ...old.metadata, labels: {} } };
    const first = recordUpdate(old, next, "editor", "v1", "t2");
    const second = recordUpdate(old, next, "editor", "v1", "t2");
    expect(second).toEqual(first);
    expect(first.map((e) => [e.manager, e.fieldsV1])).toEqual([
      // The creator added labels, spec and status: it keeps them as members (a label map emptied by
      // another writer is still the creator's, as kube keeps it).
      ["creator", { "f:metadata": { "f:labels": {} }, "f:spec": { ".": {}, "f:b": {} }, "f:status": {} }],
      ["status-writer", { "f:status": { "f:s": {} } }],
      ["editor", { "f:spec": { "f:a": {} } }],
    ]);
  });

  it("the writer's own entry keeps what it held and adds what it changed", () => {
    const old = stored();
    const fields = recordUpdate(
      old,
      { ...old, status: { s: 3, t: 1 } },
      "status-writer",
      "v1",
      "t3",
      "status",
    );
    expect(fields.find((e) => e.manager === "status-writer")).toMatchObject({
      time: "t3",
      subresource: "status",
      fieldsV1: { "f:status": { "f:s": {}, "f:t": {} } },
    });
  });
});

describe("recordUpdate with the server's field-set memo", () => {
  const created: KubeObject = {
    metadata: { name: "n", labels: { a: "1" } },
    spec: { a: 1 },
    status: { s: 1 },
  };
  /** Created, then a status write by "status-writer", each recorded with `memo`. */
  const stored = (memo: ReturnType<typeof createFieldSetMemo>): KubeObject => {
    const v1 = {
      ...created,
      metadata: {
        ...created.metadata,
        managedFields: recordUpdate(undefined, created, "creator", "v1", "t0", undefined, memo),
      },
    };
    const v2 = { ...v1, status: { s: 2 } };
    const fields = recordUpdate(v1, v2, "status-writer", "v1", "t1", "status", memo);
    return { ...v2, metadata: { ...v2.metadata, managedFields: fields } };
  };
  const writerEntry = (fields: ManagedFieldsEntry[], manager: string) =>
    fields.find((e) => e.manager === manager)!;

  it.each<[string, (o: KubeObject) => KubeObject, string, string | undefined]>([
    [
      "a status write changing the values it owns",
      (o) => ({ ...o, status: { s: 3 } }),
      "status-writer",
      "status",
    ],
    ["a spec write changing the fields it created", (o) => ({ ...o, spec: { a: 2 } }), "creator", undefined],
    ["a status write adding a field", (o) => ({ ...o, status: { s: 3, t: 1 } }), "status-writer", "status"],
    ["a new manager's first write", (o) => ({ ...o, spec: { a: 5 } }), "editor", undefined],
  ])("same answer with and without the memo: %s", (_name, change, manager, sub) => {
    const memo = createFieldSetMemo();
    const old = stored(memo);
    const next = change(old);
    const withMemo = recordUpdate(old, next, manager, "v1", "t9", sub, memo);
    expect(withMemo).toEqual(recordUpdate(old, next, manager, "v1", "t9", sub));
    expect(recordUpdate(old, next, manager, "v1", "t9", sub, memo)).toEqual(withMemo);
  });

  it("the writer's unchanged field set keeps the fieldsV1 the server built; only the time moves", () => {
    const memo = createFieldSetMemo();
    const old = stored(memo);
    const before = writerEntry(old.metadata!.managedFields as ManagedFieldsEntry[], "status-writer");
    const after = writerEntry(
      recordUpdate(old, { ...old, status: { s: 3 } }, "status-writer", "v1", "t9", "status", memo),
      "status-writer",
    );
    expect(after.fieldsV1).toBe(before.fieldsV1);
    expect(after).toEqual({ ...before, time: "t9" });
  });

  it("a fieldsV1 a client sent (kube's `.` markers) is rebuilt, not reused, when the set is unchanged", () => {
    const memo = createFieldSetMemo();
    const sent: ManagedFieldsEntry = {
      manager: "status-writer",
      operation: "Update",
      apiVersion: "v1",
      time: "t1",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:status": { "f:s": {}, ".": {} } },
      subresource: "status",
    };
    const old: KubeObject = { ...created, metadata: { ...created.metadata, managedFields: [sent] } };
    const fields = recordUpdate(
      old,
      { ...old, status: { s: 3 } },
      "status-writer",
      "v1",
      "t9",
      "status",
      memo,
    );
    expect(JSON.stringify(writerEntry(fields, "status-writer").fieldsV1)).toBe(
      '{"f:status":{".":{},"f:s":{}}}',
    );
  });
});

describe("recordUpdate of a create: compared with the kind's empty object, as kube's field manager", () => {
  const fieldsOf = (obj: KubeObject) =>
    JSON.stringify(recordUpdate(undefined, obj, "m", "v1", "t0").map((e) => e.fieldsV1));
  it.each<[string, KubeObject, string]>([
    [
      // The conformance probe's ConfigMap, as kube-apiserver 1.33 answered it.
      "a ConfigMap: data and labels are added maps",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", labels: { x: "y" } }, data: { a: "b" } },
      '[{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:x":{}}}}]',
    ],
    [
      "a custom resource: its spec is added (Unstructured is empty)",
      {
        apiVersion: "machine.openshift.io/v1beta1",
        kind: "Machine",
        metadata: { name: "m" },
        spec: { a: 1 },
      },
      '[{"f:spec":{".":{},"f:a":{}}}]',
    ],
    [
      "a Deployment: spec and its template's metadata are there before",
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "d" },
        spec: { replicas: 1, template: { metadata: { labels: { app: "a" } } } },
      },
      '[{"f:spec":{"f:replicas":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}}]',
    ],
    [
      "a PriorityClass's zero value is not a change",
      {
        apiVersion: "scheduling.k8s.io/v1",
        kind: "PriorityClass",
        metadata: { name: "p" },
        value: 0,
        description: "d",
      },
      '[{"f:description":{}}]',
    ],
  ])("%s", (_name, obj, expected) => {
    expect(fieldsOf(obj)).toBe(expected);
  });
});

describe("serverSideApply over members an Update recorded", () => {
  it("a map another manager holds as a member stays when the applier's last field under it goes", () => {
    const kind = { apiVersion: "example.com/v1", kind: "Thing" };
    const created: KubeObject = { ...kind, metadata: { name: "c" }, spec: { m: { a: "1" } } };
    const stored = {
      ...created,
      metadata: { name: "c", managedFields: recordUpdate(undefined, created, "creator", "v1", "t0") },
    };
    // The applier takes spec.m.a by force and adds spec.m.b, then stops applying both.
    const first = serverSideApply(
      stored,
      { ...kind, spec: { m: { a: "2", b: "x" } } },
      "applier",
      true,
      "v1",
      "t1",
    );
    const live = {
      ...first.object,
      metadata: { ...first.object.metadata, managedFields: first.managedFields },
    };
    const second = serverSideApply(live, { ...kind, metadata: { name: "c" } }, "applier", false, "v1", "t2");
    expect(second.object.spec).toEqual({ m: {} });
    expect(second.managedFields.map((e) => [e.manager, e.fieldsV1])).toEqual([
      ["creator", { "f:spec": { ".": {}, "f:m": {} } }],
    ]);
  });

  it("applying an empty map over a map another manager added is no conflict (maps merge)", () => {
    const created: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c" },
      data: { a: "1" },
    };
    const stored = {
      ...created,
      metadata: { name: "c", managedFields: recordUpdate(undefined, created, "creator", "v1", "t0") },
    };
    const result = serverSideApply(stored, { ...created, data: {} }, "applier", false, "v1", "t1");
    expect(result.object.data).toEqual({ a: "1" });
  });
});

/**
 * compareForUpdate as its definition reads, recursively and without shortcuts, for objects of plain maps,
 * atomic lists and the lists `types` names (no metadata, no atomic maps): a node only one side has is added or
 * removed with everything under it, a leaf both have is modified when its JSON differs, a map or list on one
 * side and something else on the other is modified with what is under it added or removed; a set's elements
 * are leaves by value, an associative list's elements maps by their keys (the first of duplicates).
 */
const referenceCompare = (
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  types: (dotted: string) => { type: "set" } | { type: "map"; keys: string[] } | undefined = () => undefined,
) => {
  const out = { removed: new Set<string>(), modified: new Set<string>(), added: new Set<string>() };
  const leaf = (l: unknown, r: unknown, at: string): void => {
    if (l === undefined) out.added.add(at);
    else if (r === undefined) out.removed.add(at);
    else if (!jsonEqual(l, r)) out.modified.add(at);
  };
  const node = (l: unknown, r: unknown, at: string, both: boolean): void => {
    if (l === undefined) out.added.add(at);
    else if (r === undefined) out.removed.add(at);
    else if (!both) out.modified.add(at);
  };
  const bySegment = (list: unknown, t: { type: "set" } | { type: "map"; keys: string[] }) => {
    const m = new Map<string, unknown>();
    for (const item of Array.isArray(list) ? list : []) {
      const seg =
        t.type === "set"
          ? `v:${JSON.stringify(item)}`
          : isRecord(item)
            ? `k:${JSON.stringify(Object.fromEntries(t.keys.filter((k) => item[k] !== undefined).map((k) => [k, item[k]])))}`
            : undefined;
      if (seg !== undefined && !m.has(seg)) m.set(seg, item);
    }
    return m;
  };
  const visit = (l: unknown, r: unknown, at: string, dotted: string): void => {
    if (l === undefined && r === undefined) return;
    if (isRecord(l) || isRecord(r)) {
      node(l, r, at, isRecord(l) && isRecord(r));
      const lm = isRecord(l) ? l : {};
      const rm = isRecord(r) ? r : {};
      for (const k of new Set([...Object.keys(lm), ...Object.keys(rm)]))
        visit(lm[k], rm[k], path(at, `f:${k}`), `${dotted}.${k}`);
      return;
    }
    const t = Array.isArray(l) || Array.isArray(r) ? types(dotted.slice(1)) : undefined;
    if (!t) {
      leaf(l, r, at);
      return;
    }
    node(l, r, at, Array.isArray(l) && Array.isArray(r));
    const ls = bySegment(l, t);
    const rs = bySegment(r, t);
    for (const seg of new Set([...rs.keys(), ...ls.keys()])) {
      if (t.type === "set") leaf(ls.get(seg), rs.get(seg), path(at, seg));
      else visit(ls.get(seg), rs.get(seg), path(at, seg), dotted);
    }
  };
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)]))
    if (k !== "apiVersion" && k !== "kind") visit(before[k], after[k], `f:${k}`, `.${k}`);
  return out;
};

describe("compareForUpdate: what its definition gives, with identical subtrees passed over (decision 166)", () => {
  // A small domain, so that the two sides share identical subtrees at every depth, as a write's do.
  const leaf = fc.constantFrom<unknown>(1, 2, "x", null, true, [1], [1, { a: 1 }], {});
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("map")),
    map: fc.dictionary(fc.constantFrom("a", "b", "c"), tie("node"), { maxKeys: 3 }),
  }));
  // `spec.set` a set; `spec.list` and `status.conditions` associative lists keyed by name (and type).
  const types = (dotted: string) =>
    dotted === "spec.set"
      ? ({ type: "set" } as const)
      : dotted === "spec.list" || dotted === "status.conditions"
        ? { type: "map" as const, keys: ["name", "type"] }
        : undefined;
  const element = fc.record(
    { name: fc.constantFrom("a", "b"), type: fc.constantFrom("x", "y"), v: value.node },
    { requiredKeys: ["name"] },
  );
  const listed = fc.oneof(value.node, fc.array(fc.oneof(element, leaf), { maxLength: 4 }));
  const spec = fc.dictionary(fc.constantFrom("set", "list", "a"), listed, { maxKeys: 3 });
  const status = fc.dictionary(fc.constantFrom("conditions", "b"), listed, { maxKeys: 2 });
  const object = fc.record({ spec, status, data: value.node, kind: value.node }, { requiredKeys: [] });
  it("agrees with the recursive definition on random pairs, sharing no object (property)", () => {
    fc.assert(
      fc.property(object, object, fc.boolean(), (a, b, sameStart) => {
        // Half the pairs start from the same object, one field then replaced: most subtrees identical.
        const after = sameStart ? { ...structuredClone(a), ...b } : b;
        const got = compareForUpdate(structuredClone(a), structuredClone(after), types);
        const want = referenceCompare(a, after, types);
        expect([...got.added].sort()).toEqual([...want.added].sort());
        expect([...got.removed].sort()).toEqual([...want.removed].sort());
        expect([...got.modified].sort()).toEqual([...want.modified].sort());
      }),
      { numRuns: 1500 },
    );
  });

  it("a write of one field finds that field alone, in a Machine with metadata, spec and status", () => {
    const machine = (phase: string, note: string) => ({
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "Machine",
      metadata: {
        name: "m",
        resourceVersion: phase === "Running" ? "2" : "1",
        labels: { role: "worker" },
        annotations: { note },
        finalizers: ["a/b"],
        ownerReferences: [{ uid: "s1", name: "set", kind: "MachineSet", apiVersion: "v1" }],
      },
      spec: { providerSpec: { value: { instanceType: "m6i.xlarge", tags: [{ name: "a", value: "b" }] } } },
      status: { phase, conditions: [{ type: "Ready", status: "True" }] },
    });
    const status = compareForUpdate(machine("Provisioned", "a"), machine("Running", "a"));
    expect(status).toEqual({
      removed: new Set(),
      modified: new Set([path("f:status", "f:phase")]),
      added: new Set(),
    });
    const note = compareForUpdate(machine("Running", "a"), machine("Running", "b"));
    expect(note.modified).toEqual(new Set([path("f:metadata", "f:annotations", "f:note")]));
    expect([...note.added, ...note.removed]).toEqual([]);
  });
});

describe("compareForUpdate: an atomic map is one leaf", () => {
  const types = (p: string) => (p === "roleRef" ? ({ type: "atomic" } as const) : undefined);
  it.each<[string, Record<string, unknown>, Record<string, unknown>, Record<string, string[]>]>([
    ["added", {}, { roleRef: { kind: "Role", name: "r" } }, { added: ["f:roleRef"] }],
    [
      "changed",
      { roleRef: { kind: "Role", name: "r" } },
      { roleRef: { kind: "Role", name: "s" } },
      { modified: ["f:roleRef"] },
    ],
    ["removed", { roleRef: { kind: "Role" } }, {}, { removed: ["f:roleRef"] }],
  ])("%s", (_name, before, after, expected) => {
    const cmp = compareForUpdate(before, after, types);
    expect({ removed: [...cmp.removed], modified: [...cmp.modified], added: [...cmp.added] }).toEqual({
      removed: [],
      modified: [],
      added: [],
      ...expected,
    });
  });
});

describe("managedFields order, as kube's sortEncodedManagedFields", () => {
  it("Apply before Update, older before newer to the second, then by manager", () => {
    const created: KubeObject = { metadata: { name: "n" }, spec: { a: 1 } };
    const t = "2026-12-03T00:00:00Z";
    const later = "2026-12-03T00:00:05Z";
    const byZeta = {
      ...created,
      metadata: { name: "n", managedFields: recordUpdate(undefined, created, "zeta", "v1", t) },
    };
    const applied = serverSideApply(byZeta, { ...created, spec: { b: 1 } }, "applier", false, "v1", later);
    const live = {
      ...applied.object,
      metadata: { ...applied.object.metadata, managedFields: applied.managedFields },
    };
    const fields = recordUpdate(live, { ...live, spec: { a: 1, b: 1, c: 1 } }, "alpha", "v1", t);
    expect(fields.map((e) => `${e.operation} ${e.manager}`)).toEqual([
      "Apply applier",
      "Update alpha",
      "Update zeta",
    ]);
  });
});
