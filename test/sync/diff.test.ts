import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { FINALIZERS } from "../../src/kube/kinds.js";
import { type Condition, type KubeObject, setCondition } from "../../src/kube/object.js";
import { applyBody, objectDiff, specPaths, statusPatch, subsetDiff } from "../../src/sync/diff.js";
import {
  addFinalizerWrite,
  removeFinalizersWrite,
  removeOwnerReferenceWrite,
} from "../../src/sync/writes.js";
import { capiMachine, condition, NOW } from "./builders.js";

describe("desired ⊆ live (SPEC §4.3)", () => {
  const cases: [string, unknown, unknown, string[]][] = [
    ["equal scalars", { a: 1 }, { a: 1 }, []],
    ["a key only in live never counts", { a: 1 }, { a: 1, b: 2 }, []],
    ["a differing scalar names its path", { a: { b: "x" } }, { a: { b: "y" } }, ["a.b"]],
    ["a missing key is a difference", { a: { b: "x" } }, { a: {} }, ["a.b"]],
    ["lists are atomic: a different length differs", { l: [1, 2] }, { l: [1] }, ["l"]],
    ["list elements compare as subsets", { l: [{ n: "a" }] }, { l: [{ n: "a", defaulted: true }] }, []],
    [
      "a list element that differs names its index",
      { l: [{ n: "a" }, { n: "b" }] },
      { l: [{ n: "a" }, { n: "c" }] },
      ["l[1].n"],
    ],
    ["an empty object the server dropped is no difference", { rootVolume: {} }, {}, []],
    [
      "an empty object vs a filled one is no difference",
      { rootVolume: {} },
      { rootVolume: { size: 120 } },
      [],
    ],
    ["0 and false are values, not absence", { n: 0, f: false }, {}, ["n", "f"]],
    ["null is satisfied by absence (servers never store it)", { gone: null }, {}, []],
    ["null is not satisfied by a value", { gone: null }, { gone: "x" }, ["gone"]],
  ];
  it.each(cases)("%s", (_n, desired, live, paths) => {
    expect(subsetDiff(desired, live)).toEqual(paths);
  });

  it("owner references compare by uid; other owners on live are fine", () => {
    const live = capiMachine("m", {
      meta: {
        ownerReferences: [
          { apiVersion: "v1", kind: "Other", name: "o", uid: "other" },
          {
            apiVersion: "cluster.x-k8s.io/v1beta2",
            kind: "MachineSet",
            name: "s",
            uid: "set",
            controller: true,
          },
        ],
      },
    });
    const desired: KubeObject = {
      metadata: {
        ownerReferences: [
          {
            apiVersion: "cluster.x-k8s.io/v1beta2",
            kind: "MachineSet",
            name: "s",
            uid: "set",
            controller: true,
          },
        ],
      },
      spec: {},
    };
    expect(objectDiff(desired, live)).toEqual([]);
    expect(
      objectDiff(
        { metadata: { ownerReferences: [{ apiVersion: "v1", kind: "X", name: "x", uid: "x" }] } },
        live,
      ),
    ).toEqual(["metadata.ownerReferences[0]"]);
  });

  it("the apply body is the whole desired object pinned to the resourceVersion read, without finalizers", () => {
    const live = capiMachine("m", { meta: { resourceVersion: "42" } });
    const desired: KubeObject = {
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "Machine",
      metadata: { name: "m", labels: { a: "b" }, finalizers: [FINALIZERS.sync] },
      spec: { providerID: "aws:///x/i-1" },
    };
    const result = applyBody(desired, live);
    expect(result?.changedPaths).toEqual(["metadata.labels.a", "spec.providerID"]);
    expect(result?.body.metadata).toEqual({
      name: "m",
      namespace: "openshift-cluster-api",
      labels: { a: "b" },
      resourceVersion: "42",
    });
    expect(specPaths(result?.changedPaths ?? [])).toEqual(["spec.providerID"]);
    expect(applyBody({ metadata: { labels: {} }, spec: {} }, live)).toBeUndefined();
  });
});

describe("status mirroring (SPEC §5.4)", () => {
  const live: KubeObject = {
    metadata: { resourceVersion: "7" },
    status: {
      phase: "Provisioning",
      extra: "kept",
      conditions: [
        condition("Paused", "True"),
        condition("Ready", "False", "2026-11-30T08:00:00Z", "Provisioning"),
      ],
    },
  };

  it("merges conditions per type, keeps lastTransitionTime when the status holds, never writes Paused", () => {
    const patch = statusPatch(
      live,
      {
        phase: "Running",
        conditions: [
          { type: "Ready", status: "False", reason: "Running" },
          { type: "Paused", status: "False" },
        ],
      },
      { untouched: ["Paused", "NodeHealthy", "UpToDate"], now: NOW },
    );
    expect(patch?.status).toEqual({
      phase: "Running",
      conditions: [
        condition("Paused", "True"),
        { type: "Ready", status: "False", reason: "Running", lastTransitionTime: "2026-11-30T08:00:00Z" },
      ],
    });
    expect(patch?.changedPaths).toEqual(["status.phase", "status.conditions[Ready]"]);
  });

  it("a condition whose status changes gets a new lastTransitionTime from `now`", () => {
    const patch = statusPatch(
      live,
      { conditions: [{ type: "Ready", status: "True", reason: "Running" }] },
      { untouched: [], now: NOW },
    );
    expect(patch?.status.conditions).toContainEqual({
      type: "Ready",
      status: "True",
      reason: "Running",
      lastTransitionTime: "2026-11-30T10:00:00Z",
    });
  });

  it("a status with 300,000 conditions: merged by type in one pass (decision 137; a search per condition did not finish)", () => {
    // Anyone who can write machines/status can leave such a list (~50,000 fit in etcd's 1.5 MB); the mirror
    // runs on the event loop that answers the webhook, so it must not cost a search of the list per condition.
    const many = Array.from({ length: 300_000 }, (_, i) => condition(`T${i}`, "True"));
    const liveMany = { ...live, status: { conditions: many } };
    const mirrored = Array.from({ length: 300_000 }, (_, i) => ({
      type: `T${i}`,
      status: i === 7 ? "False" : "True",
      ...(i === 7 ? { reason: "Broken" } : {}),
    }));
    const patch = statusPatch(
      liveMany,
      { conditions: mirrored },
      { untouched: [], now: NOW, own: [{ type: "Synchronized", status: "True" }] },
    );
    const out = patch?.status.conditions as Record<string, unknown>[];
    expect(out).toHaveLength(300_001);
    expect(out[7]).toEqual({
      type: "T7",
      status: "False",
      reason: "Broken",
      lastTransitionTime: "2026-11-30T10:00:00Z",
    });
    expect(out[8]).toBe(many[8]);
    expect(out.at(-1)).toMatchObject({ type: "Synchronized", status: "True" });
    expect(patch?.changedPaths).toEqual(["status.conditions[T7]", "status.conditions[Synchronized]"]);
  });

  it("a type set twice, and a type live holds twice: as setCondition one after the other", () => {
    const twice = {
      ...live,
      status: { conditions: [condition("A", "True"), condition("B", "True"), condition("A", "False")] },
    };
    const patch = statusPatch(
      twice,
      {
        conditions: [
          { type: "C", status: "True" },
          { type: "A", status: "False", reason: "x" },
        ],
      },
      { untouched: [], now: NOW, own: [{ type: "C", status: "False" }] },
    );
    let expected: readonly Condition[] = twice.status.conditions;
    for (const next of [
      { type: "C", status: "True" },
      { type: "A", status: "False", reason: "x" },
      { type: "C", status: "False" },
    ])
      expected = setCondition(expected, next, NOW);
    expect(patch?.status.conditions).toEqual(expected);
    expect(patch?.changedPaths).toEqual([
      "status.conditions[A]",
      "status.conditions[A]",
      "status.conditions[C]",
    ]);
  });

  it("nothing to change → no patch", () => {
    expect(
      statusPatch(
        live,
        { phase: "Provisioning", conditions: [{ type: "Ready", status: "False", reason: "Provisioning" }] },
        { untouched: [], now: NOW },
      ),
    ).toBeUndefined();
  });
});

describe("guarded writes (SPEC §7)", () => {
  const apply = (o: KubeObject, patch: jsonpatch.Operation[]) =>
    jsonpatch.applyPatch(structuredClone(o), patch, true, false).newDocument;

  it("finalizer patches test the uid and the list read, and fail on anything else", () => {
    const o = capiMachine("m", { meta: { finalizers: [FINALIZERS.sync, FINALIZERS.capiMachine] } });
    const remove = removeFinalizersWrite(o, [FINALIZERS.sync]);
    expect(remove?.kind === "removeFinalizer" && apply(o, remove.patch).metadata?.finalizers).toEqual([
      FINALIZERS.capiMachine,
    ]);
    const changed = { ...o, metadata: { ...o.metadata, finalizers: [FINALIZERS.sync] } };
    expect(() => remove?.kind === "removeFinalizer" && apply(changed, remove.patch)).toThrow();
    const replaced = { ...o, metadata: { ...o.metadata, uid: "another-incarnation" } };
    expect(() => remove?.kind === "removeFinalizer" && apply(replaced, remove.patch)).toThrow();
    expect(removeFinalizersWrite(o, ["not-there"])).toBeUndefined();
  });

  it("adding to an absent finalizer list is guarded by the resourceVersion", () => {
    const o = capiMachine("m", { meta: { finalizers: undefined, resourceVersion: "9" } });
    delete o.metadata?.finalizers;
    const add = addFinalizerWrite(o, FINALIZERS.sync);
    expect(add?.kind === "addFinalizer" && add.patch).toContainEqual({
      op: "test",
      path: "/metadata/resourceVersion",
      value: "9",
    });
    expect(add?.kind === "addFinalizer" && apply(o, add.patch).metadata?.finalizers).toEqual([
      FINALIZERS.sync,
    ]);
  });

  it("removing an owner reference removes only that owner's", () => {
    const o = capiMachine("m", {
      meta: {
        ownerReferences: [
          { apiVersion: "v1", kind: "A", name: "a", uid: "a" },
          { apiVersion: "v1", kind: "B", name: "b", uid: "b" },
        ],
      },
    });
    const w = removeOwnerReferenceWrite(o, "a");
    expect(w?.kind === "removeOwnerReference" && apply(o, w.patch).metadata?.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "B", name: "b", uid: "b" },
    ]);
    expect(removeOwnerReferenceWrite(o, "zzz")).toBeUndefined();
  });
});
