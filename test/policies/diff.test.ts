/**
 * The field-path diff and its notation, and the protected-key predicates of SPEC §2.3.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { annotationsOf, isRecord, type KubeObject, labelsOf } from "../../src/kube/object.js";
import { changedPaths, keyChanges, listPaths, pathJoin, pathOf, sameJson } from "../../src/policies/diff.js";
import {
  isProtectedAnnotation,
  isProtectedLabel,
  readAnnotations,
  readLabels,
} from "../../src/policies/keys.js";

describe("changedPaths", () => {
  it("names nested changes with dots, map keys in brackets and array items by index", () => {
    const before = {
      providerSpec: { value: { instanceType: "m6i.xlarge", tags: [{ name: "a" }, { name: "b" }] } },
      metadata: { labels: { team: "x" } },
    };
    const after = {
      providerSpec: { value: { instanceType: "m6i.2xlarge", tags: [{ name: "a" }, { name: "c" }] } },
      metadata: { labels: { team: "y", "node-role.kubernetes.io/infra": "" } },
    };
    expect(changedPaths(before, after, "spec")).toEqual([
      'spec.metadata.labels["node-role.kubernetes.io/infra"]',
      'spec.metadata.labels["team"]',
      "spec.providerSpec.value.instanceType",
      "spec.providerSpec.value.tags[1].name",
    ]);
  });

  it("names a subtree that appears or disappears once, and an array whose length changed as a whole", () => {
    expect(changedPaths({}, { taints: [{ key: "k" }] }, "spec")).toEqual(["spec.taints"]);
    expect(changedPaths({ a: [1, 2] }, { a: [1] }, "spec")).toEqual(["spec.a"]);
    expect(changedPaths({ a: { b: 1 } }, {}, "spec")).toEqual(["spec.a"]);
  });

  it("treats null like a missing key and ignores key order", () => {
    expect(changedPaths({ a: null, b: 1, c: 2 }, { c: 2, b: 1 }, "spec")).toEqual([]);
    expect(sameJson({ x: [1, { y: null }] }, { x: [1, {}] })).toBe(true);
    expect(changedPaths(1, "1", "spec.replicas")).toEqual(["spec.replicas"]);
  });

  it("never throws on odd shapes", () => {
    expect(changedPaths(null, [1, 2])).toEqual(["(root)"]);
    expect(changedPaths("x", { a: 1 }, "spec")).toEqual(["spec"]);
  });
});

/**
 * The diff as it was first written: a path string for every visited node and every level's keys sorted,
 * equal subtrees included. `changedPaths` skips equal subtrees; it must name exactly the same paths.
 */
function referenceChangedPaths(before: unknown, after: unknown, base = ""): string[] {
  const out: string[] = [];
  const absent = (v: unknown): boolean => v === undefined || v === null;
  const referenceSame = (a: unknown, b: unknown): boolean => {
    if (absent(a) && absent(b)) return true;
    if (isRecord(a) && isRecord(b)) {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const key of keys) if (!referenceSame(a[key], b[key])) return false;
      return true;
    }
    if (Array.isArray(a) && Array.isArray(b))
      return a.length === b.length && a.every((item, i) => referenceSame(item, b[i]));
    return a === b;
  };
  const walk = (b: unknown, a: unknown, path: string): void => {
    if (absent(b) && absent(a)) return;
    if (isRecord(b) && isRecord(a)) {
      const keys = new Set([...Object.keys(b), ...Object.keys(a)]);
      for (const key of [...keys].sort()) walk(b[key], a[key], pathJoin(path, key));
      return;
    }
    if (Array.isArray(b) && Array.isArray(a) && b.length === a.length) {
      for (let i = 0; i < b.length; i++) walk(b[i], a[i], pathJoin(path, i));
      return;
    }
    if (!referenceSame(b, a)) out.push(path || "(root)");
  };
  walk(before, after, base);
  return out;
}

describe("changedPaths: skipping equal subtrees names the same paths as a full walk", () => {
  const shared = { value: { instanceType: "m6i.xlarge", tags: [{ name: "a", value: "1" }] } };
  it.each<[string, unknown, unknown, string, string[]]>([
    ["identical objects", shared, shared, "spec", []],
    ["equal copies", { providerSpec: shared }, structuredClone({ providerSpec: shared }), "spec", []],
    ["null vs missing key", { a: null, b: { c: null } }, { b: {} }, "spec", []],
    ["null vs value", { a: null }, { a: 0 }, "spec", ["spec.a"]],
    ["missing vs empty string", {}, { a: "" }, "spec", ["spec.a"]],
    ["missing vs empty object", {}, { a: {} }, "spec", ["spec.a"]],
    ["array grew", { a: [1, 2] }, { a: [1, 2, 3] }, "spec", ["spec.a"]],
    ["array shrank to empty", { a: [{ x: 1 }] }, { a: [] }, "spec", ["spec.a"]],
    [
      "array item field changed",
      { a: [{ x: 1 }, { x: 2 }] },
      { a: [{ x: 1 }, { x: 3 }] },
      "spec",
      ["spec.a[1].x"],
    ],
    ["array item null vs object", { a: [null] }, { a: [{}] }, "spec", ["spec.a[0]"]],
    ["array vs object", { a: [] }, { a: {} }, "spec", ["spec.a"]],
    ["number vs string", { replicas: 1 }, { replicas: "1" }, "spec", ["spec.replicas"]],
    [
      "labels keys with dots and slashes, bracketed and in key order",
      { metadata: { labels: { "b.example.com/x": "1", a: "1", "node-role.kubernetes.io/worker": "" } } },
      { metadata: { labels: { "b.example.com/x": "2", a: "2" } } },
      "spec",
      [
        'spec.metadata.labels["a"]',
        'spec.metadata.labels["b.example.com/x"]',
        'spec.metadata.labels["node-role.kubernetes.io/worker"]',
      ],
    ],
    [
      "keys of either side, sorted across both",
      { z: 1, b: 1, m: { y: 1 } },
      { a: 1, z: 2, m: { x: 1, y: 1 } },
      "",
      ["a", "b", "m.x", "z"],
    ],
    [
      "several paths under each key, keys out of order",
      { b: { y: 1, x: 1 }, a: [1, 1] },
      { b: { y: 2, x: 2 }, a: [2, 2] },
      "spec",
      ["spec.a[0]", "spec.a[1]", "spec.b.x", "spec.b.y"],
    ],
    ["scalar root", 1, 2, "spec.replicas", ["spec.replicas"]],
    ["odd shapes", null, [1, 2], "", ["(root)"]],
    [
      "key named like a prototype member",
      {},
      { toString: "x", constructor: null },
      "spec",
      ["spec.constructor", "spec.toString"],
    ],
  ])("%s", (_name, before, after, base, expected) => {
    expect(changedPaths(before, after, base)).toEqual(expected);
    expect(changedPaths(before, after, base)).toEqual(referenceChangedPaths(before, after, base));
  });

  it("matches the full walk on random JSON pairs, including edits of a shared tree", () => {
    const key = fc.constantFrom("a", "b", "labels", "annotations", "x.y", "k/v", "team", "0", "Z");
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.constantFrom(null, 0, 1, "", "s", true, false),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(key, tie("value"), { maxKeys: 4 }),
      ),
    })).value;
    const edit = (value: unknown, seed: number): unknown => {
      if (isRecord(value)) {
        const keys = Object.keys(value);
        const copy: Record<string, unknown> = { ...value };
        if (keys.length === 0 || seed % 5 === 0)
          copy[["a", "team", "x.y"][seed % 3]!] = seed % 2 ? null : seed;
        else copy[keys[seed % keys.length]!] = edit(value[keys[seed % keys.length]!], seed >> 1);
        return copy;
      }
      if (Array.isArray(value) && value.length > 0 && seed % 3 !== 0) {
        const copy = [...value];
        copy[seed % copy.length] = edit(copy[seed % copy.length], seed >> 1);
        return copy;
      }
      return seed % 2 ? [seed] : seed;
    };
    fc.assert(
      fc.property(json, json, fc.nat(), (a, b, seed) => {
        expect(changedPaths(a, b, "spec")).toEqual(referenceChangedPaths(a, b, "spec"));
        const edited = edit(a, seed);
        expect(changedPaths(a, edited, "spec")).toEqual(referenceChangedPaths(a, edited, "spec"));
        expect(sameJson(a, edited)).toBe(referenceChangedPaths(a, edited).length === 0);
      }),
      { numRuns: 500 },
    );
  });
});

describe("keyChanges", () => {
  it("names each added, changed and removed key once, in key order whatever the maps' order", () => {
    const before = { "z.example.com/a": "1", b: "1", "machine.openshift.io/x": "1", same: "s" };
    const after = { same: "s", "machine.openshift.io/x": "2", a: "", "z.example.com/a": "1", "0": "n" };
    expect(keyChanges(before, after)).toEqual([
      { key: "0", change: "added" },
      { key: "a", change: "added" },
      { key: "b", change: "removed" },
      { key: "machine.openshift.io/x", change: "changed" },
    ]);
    expect(keyChanges({ a: "1" }, { a: "1" })).toEqual([]);
    expect(keyChanges({}, {})).toEqual([]);
  });
});

describe("notation helpers", () => {
  it("pathOf and keyChanges", () => {
    expect(pathOf(["metadata", "annotations", "cluster.x-k8s.io/paused"])).toBe(
      'metadata.annotations["cluster.x-k8s.io/paused"]',
    );
    expect(pathOf(["status", "conditions", 0, "type"])).toBe("status.conditions[0].type");
    expect(keyChanges({ a: "1", b: "2" }, { b: "3", c: "4" })).toEqual([
      { key: "a", change: "removed" },
      { key: "b", change: "changed" },
      { key: "c", change: "added" },
    ]);
    expect(listPaths(["a", "b", "c"], 2)).toBe("a, b and 1 more");
  });
});

describe("readLabels and readAnnotations read what labelsOf and annotationsOf copy", () => {
  const withMaps = (labels: unknown, annotations: unknown): KubeObject =>
    JSON.parse(JSON.stringify({ metadata: { labels, annotations } })) as KubeObject;
  it.each<[string, KubeObject | undefined]>([
    ["strings only", withMaps({ "machine.openshift.io/a": "x", b: "" }, { "cluster.x-k8s.io/paused": "" })],
    ["a non-string value is left out", withMaps({ a: "x", n: 1, o: { p: "q" }, z: null }, { t: true })],
    ["no maps", withMaps(undefined, undefined)],
    ["maps of the wrong type", withMaps("a=b", ["x"])],
    ["no metadata", {}],
    ["no object", undefined],
    ["a __proto__ key, which a copy drops", JSON.parse('{"metadata":{"labels":{"__proto__":"x","a":"b"}}}')],
  ])("%s", (_name, o) => {
    const same = (read: Readonly<Record<string, string>>, copied: Record<string, string>): void => {
      expect(Object.entries(read)).toEqual(Object.entries(copied));
      for (const key of ["__proto__", "a", "n", "toString"])
        expect([Object.hasOwn(read, key), read[key]]).toEqual([Object.hasOwn(copied, key), copied[key]]);
    };
    same(readLabels(o), labelsOf(o));
    same(readAnnotations(o), annotationsOf(o));
  });

  it("returns the object's own map when it holds only strings (no copy)", () => {
    const o = withMaps({ a: "x" }, { b: "y" });
    expect(readLabels(o)).toBe(o.metadata?.labels);
    expect(readAnnotations(o)).toBe(o.metadata?.annotations);
  });
});

describe("protected keys (SPEC §2.3)", () => {
  it.each([
    ["machine.openshift.io/cluster-api-machineset", true],
    ["machine.openshift.io", true],
    ["kubernetes.io/hostname", true],
    ["cluster.x-k8s.io/cluster-name", true],
    ["topology.cluster.x-k8s.io/deployment-name", true],
    ["node-role.kubernetes.io/worker", false],
    ["team.example.com/owner", false],
    ["machine-template-hash", false],
  ])("label %s protected: %s", (key, expected) => {
    expect(isProtectedLabel(key)).toBe(expected);
  });

  it.each([
    ["machine.openshift.io/instance-state", true],
    ["cluster.x-k8s.io/paused", true],
    ["pre-drain.delete.hook.machine.cluster.x-k8s.io/drain", true],
    ["example.clusters.x-k8s.io", true],
    ["machine-api-migration.openshift.io/paused-by", true],
    ["machine-api-migration.openshift.io/confirm-delete", false],
    ["machine.openshift.io/delete-machine", false],
    ["machine.openshift.io/cluster-api-delete-machine", false],
    ["cluster.x-k8s.io/delete-machine", false],
    ["kubectl.kubernetes.io/last-applied-configuration", false],
  ])("annotation %s protected: %s", (key, expected) => {
    expect(isProtectedAnnotation(key)).toBe(expected);
  });
});
