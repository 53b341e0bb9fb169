import { describe, expect, it } from "vitest";
import { unknownFields } from "../../src/apiserver/rest/strategy.js";

describe("unknownFields: what pruning dropped, reported as kube's field warnings", () => {
  const shared = { kept: { deep: [1, { x: 1 }] } };
  it.each<[string, unknown, unknown, string[]]>([
    ["nothing dropped", { spec: { a: 1 } }, { spec: { a: 1 } }, []],
    ["a dropped top-level field", { spec: {}, bogus: 1 }, { spec: {} }, ["bogus"]],
    ["a dropped nested field", { spec: { a: 1, b: { c: 2 } } }, { spec: { a: 1, b: {} } }, ["spec.b.c"]],
    ["a dropped object is one path", { spec: { gone: { x: { y: 1 } } } }, { spec: {} }, ["spec.gone"]],
    [
      "fields dropped inside list items",
      { spec: { l: [{ a: 1, z: 1 }, { a: 2 }, { z: 3 }] } },
      { spec: { l: [{ a: 1 }, { a: 2 }, {}] } },
      ["spec.l[0].z", "spec.l[2].z"],
    ],
    ["a field kept as null is not dropped", { spec: { n: null } }, { spec: { n: null } }, []],
    ["a subtree kept as the same object", { spec: shared, extra: 1 }, { spec: shared }, ["extra"]],
    ["in document order", { b: 1, a: 1, c: { y: 1, x: 1 } }, { c: {} }, ["b", "a", "c.y", "c.x"]],
    ["not objects", "x", "x", []],
  ])("%s", (_name, before, after, expected) => {
    expect(unknownFields(before, after)).toEqual(expected);
  });
});
