/**
 * managedFields bookkeeping of Update-type writes, pinned on the cases the write path's fast walk must keep:
 * leaves (empty maps and lists, atomic lists), server metadata left out, the set-like metadata lists,
 * kube's `.` marker in fieldsV1, untouched entries passed through as they are, and repeated writes over the
 * same stored entries giving the same answer — with the server's memo (parsed sets, fieldsV1 it built) and
 * without it alike.
 */
import { describe, expect, it } from "vitest";
import {
  createFieldSetMemo,
  fieldPaths,
  fromFieldsV1,
  type ManagedFieldsEntry,
  recordUpdate,
} from "../../src/apiserver/managed-fields.js";
import type { KubeObject } from "../../src/kube/object.js";

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

  it.each<[string, Record<string, unknown>, Record<string, unknown>, string[]]>([
    ["a changed leaf", { spec: { a: 1, b: 1 } }, { spec: { a: 2, b: 1 } }, [path("f:spec", "f:a")]],
    ["an added leaf", { spec: { a: 1 } }, { spec: { a: 1, b: 1 } }, [path("f:spec", "f:b")]],
    ["a map that became a leaf", { spec: { m: { k: 1 } } }, { spec: { m: {} } }, [path("f:spec", "f:m")]],
    ["a changed atomic list", { spec: { l: [1, 2] } }, { spec: { l: [2, 1] } }, [path("f:spec", "f:l")]],
    [
      "an added finalizer",
      { metadata: { finalizers: ["x"] } },
      { metadata: { finalizers: ["x", "y"] } },
      [path("f:metadata", "f:finalizers", 'v:"y"')],
    ],
    [
      "a changed owner reference",
      { metadata: { ownerReferences: [{ uid: "u1", name: "a" }] } },
      { metadata: { ownerReferences: [{ uid: "u1", name: "b" }] } },
      [path("f:metadata", "f:ownerReferences", 'k:{"uid":"u1"}')],
    ],
    [
      "server metadata changes are nobody's",
      { metadata: { resourceVersion: "1" } },
      { metadata: { resourceVersion: "2" } },
      [],
    ],
    [
      "equal values are no change",
      { spec: { m: { a: [1, { b: 2 }] } } },
      { spec: { m: { a: [1, { b: 2 }] } } },
      [],
    ],
  ])("changed: %s", (_name, before, after, expected) => {
    const changed = new Set<string>();
    fieldPaths(after, { before, changed });
    expect([...changed].sort()).toEqual(expected);
  });
});

describe("fromFieldsV1", () => {
  it("reads kube's `.` marker as no field of its own", () => {
    const fields = { "f:metadata": { ".": {}, "f:labels": { ".": {}, "f:a": {} } }, "f:spec": { ".": {} } };
    expect([...fromFieldsV1(fields)].sort()).toEqual([path("f:metadata", "f:labels", "f:a"), "f:spec"]);
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
      ["creator", { "f:spec": { "f:b": {} } }],
      ["status-writer", { "f:status": { "f:s": {} } }],
      ["editor", { "f:metadata": { "f:labels": {} }, "f:spec": { "f:a": {} } }],
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
      fieldsV1: { "f:status": { ".": {}, "f:s": {} } },
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
    expect(writerEntry(fields, "status-writer").fieldsV1).toEqual({ "f:status": { "f:s": {} } });
  });
});
