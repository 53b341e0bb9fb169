/**
 * The informer store keeps the parts an update left as they were (kube/store.ts `shareUnchanged`, decision
 * 165): an update whose spec, status, labels or annotations are identical JSON to the stored version's keeps
 * that version's object for the part, so whoever remembers work per part by identity sees it is the same. What
 * is stored is identical JSON to what arrived, the object handed in is never changed, and a recreated object
 * (another uid) shares nothing.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import { IndexedStore, shareUnchanged } from "../../src/kube/store.js";

const machine = (
  o: {
    uid?: string;
    rv?: string;
    spec?: unknown;
    status?: unknown;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  } = {},
): KubeObject => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: {
    name: "worker-a",
    namespace: "openshift-machine-api",
    uid: o.uid ?? "u1",
    resourceVersion: o.rv ?? "1",
    labels: o.labels ?? { role: "worker" },
    annotations: o.annotations ?? { note: "a" },
  },
  spec: (o.spec ?? {
    providerSpec: { value: { instanceType: "m6i.xlarge", tags: [{ k: "a" }] } },
  }) as KubeObject["spec"],
  status: (o.status ?? { phase: "Running" }) as KubeObject["status"],
});

type Part = "spec" | "status" | "labels" | "annotations";
const partOf = (o: KubeObject, part: Part): unknown =>
  part === "labels" || part === "annotations" ? o.metadata?.[part] : o[part];

describe("IndexedStore: an update keeps the parts it left as they were (decision 165)", () => {
  const cases: [string, KubeObject, Part[]][] = [
    [
      "a status write: spec, labels and annotations kept",
      machine({ rv: "2", status: { phase: "Deleting" } }),
      ["spec", "labels", "annotations"],
    ],
    [
      "a spec change: status, labels and annotations kept",
      machine({ rv: "2", spec: { providerSpec: { value: { instanceType: "c6i.large" } } } }),
      ["status", "labels", "annotations"],
    ],
    [
      "an annotation added: spec, status and labels kept",
      machine({ rv: "2", annotations: { note: "a", paused: "" } }),
      ["spec", "status", "labels"],
    ],
    [
      "a finalizer or resourceVersion alone: every part kept",
      machine({ rv: "2" }),
      ["spec", "status", "labels", "annotations"],
    ],
    [
      "the same values in another key order: not identical, not kept",
      machine({
        rv: "2",
        spec: { providerSpec: { value: { tags: [{ k: "a" }], instanceType: "m6i.xlarge" } } },
        labels: { role: "worker" },
      }),
      ["status", "labels", "annotations"],
    ],
    ["a recreated object (another uid): nothing kept", machine({ uid: "u2" }), []],
  ];
  it.each(cases)("%s", (_name, update, kept) => {
    const store = new IndexedStore();
    const { current: first } = store.upsert(machine());
    const arrived = structuredClone(update);
    const { previous, current } = store.upsert(update);
    expect(previous).toBe(first);
    for (const part of ["spec", "status", "labels", "annotations"] as Part[]) {
      if (kept.includes(part)) expect(partOf(current, part), part).toBe(partOf(first, part));
      else expect(partOf(current, part), part).toBe(partOf(update, part));
    }
    // What is stored is what arrived, to the byte; what was handed in is as it was.
    expect(JSON.stringify(current)).toBe(JSON.stringify(arrived));
    expect(update).toEqual(arrived);
    expect(store.get("openshift-machine-api/worker-a")).toBe(current);
  });

  it("stores identical JSON to what arrived, for any sequence of updates (property)", () => {
    const value = fc.oneof(
      fc.constant(undefined),
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }),
    );
    const strings = fc.dictionary(fc.constantFrom("a", "b"), fc.constantFrom("x", "y"), { maxKeys: 2 });
    const update = fc.record({
      uid: fc.constantFrom("u1", "u2"),
      spec: value,
      status: value,
      labels: fc.option(strings, { nil: undefined }),
      annotations: fc.option(strings, { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(update, { minLength: 1, maxLength: 8 }), (updates) => {
        const store = new IndexedStore();
        for (const u of updates) {
          const object = {
            metadata: {
              name: "m",
              namespace: "ns",
              uid: u.uid,
              ...(u.labels === undefined ? {} : { labels: u.labels }),
              ...(u.annotations === undefined ? {} : { annotations: u.annotations }),
            },
            ...(u.spec === undefined ? {} : { spec: u.spec }),
            ...(u.status === undefined ? {} : { status: u.status }),
          } as KubeObject;
          const arrived = JSON.stringify(object);
          const { current } = store.upsert(object);
          expect(JSON.stringify(current)).toBe(arrived);
          expect(JSON.stringify(object)).toBe(arrived);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("shareUnchanged without a previous version, or with the same object, hands back what it got", () => {
    const m = machine();
    expect(shareUnchanged(undefined, m)).toBe(m);
    expect(shareUnchanged(m, m)).toBe(m);
    const odd: KubeObject = { metadata: "not a map" as unknown as KubeObject["metadata"], spec: { a: 1 } };
    expect(shareUnchanged(machine(), odd)).toBe(odd);
  });
});
