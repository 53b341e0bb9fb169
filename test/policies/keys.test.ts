/**
 * SPEC §2.3 ownerReferences guarded, in time linear in the review (§2.1, decision 61): adding or changing an
 * owner reference is refused, removing and reordering are not, a null field equals a missing one — and the
 * check reads each reference a bounded number of times, however many there are (counted, not timed).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import { sameJson } from "../../src/policies/compare.js";
import {
  canonicalKey,
  guardedChanges,
  isProtectedLabel,
  labelPath,
  metadataGuardViolations,
  OWNER_REFERENCES_PATH,
  ownerReferenceViolations,
  SORTED_CHANGES,
  smallestFirst,
} from "../../src/policies/keys.js";

const ref = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "cluster.x-k8s.io/v1beta1",
  kind: "MachineSet",
  name,
  uid: `uid-${name}`,
  ...extra,
});
const withRefs = (refs: unknown[]): KubeObject =>
  ({ metadata: { name: "m", ownerReferences: refs } }) as KubeObject;

describe("ownerReferenceViolations", () => {
  it.each([
    ["unchanged", [ref("a"), ref("b")], [ref("a"), ref("b")], []],
    ["removed", [ref("a"), ref("b")], [ref("b")], []],
    ["reordered", [ref("a"), ref("b")], [ref("b"), ref("a")], []],
    [
      "keys reordered, a null field for a missing one",
      [ref("a")],
      [
        {
          uid: "uid-a",
          controller: null,
          name: "a",
          kind: "MachineSet",
          apiVersion: "cluster.x-k8s.io/v1beta1",
        },
      ],
      [],
    ],
    ["added", [ref("a")], [ref("a"), ref("b")], [OWNER_REFERENCES_PATH]],
    ["added to none", [], [ref("a")], [OWNER_REFERENCES_PATH]],
    ["a field changed", [ref("a")], [ref("a", { controller: true })], [OWNER_REFERENCES_PATH]],
    ["a uid changed", [ref("a")], [{ ...ref("a"), uid: "other" }], [OWNER_REFERENCES_PATH]],
    ["a string for a number", [ref("a", { x: 1 })], [ref("a", { x: "1" })], [OWNER_REFERENCES_PATH]],
    [
      "a nested list reordered",
      [ref("a", { x: [1, 2] })],
      [ref("a", { x: [2, 1] })],
      [OWNER_REFERENCES_PATH],
    ],
  ])("SPEC §2.3 ownerReferences guarded: %s", (_name, before, after, paths) => {
    expect(ownerReferenceViolations(withRefs(before), withRefs(after))).toEqual(paths);
  });

  it("SPEC §2.3 canonicalKey equal exactly when sameJson holds", () => {
    const value = fc.jsonValue({ maxDepth: 3 });
    // Pairs that are often equal: the same value with keys reordered and nulls dropped or added.
    const variant = (v: unknown, seed: number): unknown => {
      if (Array.isArray(v)) return v.map((x, i) => variant(x, seed + i));
      if (v === null || typeof v !== "object") return v;
      const entries = Object.entries(v as Record<string, unknown>).reverse();
      const out: Record<string, unknown> = {};
      for (const [k, x] of entries) if (!(x === null && seed % 2 === 0)) out[k] = variant(x, seed + 1);
      if (seed % 3 === 0) out.extraNull = null;
      return out;
    };
    fc.assert(
      fc.property(value, value, fc.nat(), fc.boolean(), (a, other, seed, related) => {
        const b = related ? variant(a, seed) : other;
        expect(canonicalKey(a) === canonicalKey(b)).toBe(sameJson(a, b));
      }),
      { numRuns: 500 },
    );
  });

  it("SPEC §2.1 linear-time decisions: each reference is read a bounded number of times, whatever their count", () => {
    const reads = { count: 0 };
    const counted = (o: Record<string, unknown>) =>
      new Proxy(o, {
        get: (t, k, r) => {
          reads.count++;
          return Reflect.get(t, k, r);
        },
        ownKeys: (t) => {
          reads.count++;
          return Reflect.ownKeys(t);
        },
        getOwnPropertyDescriptor: (t, k) => {
          reads.count++;
          return Reflect.getOwnPropertyDescriptor(t, k);
        },
        has: (t, k) => {
          reads.count++;
          return Reflect.has(t, k);
        },
      });
    for (const n of [100, 2_000]) {
      const refs = Array.from({ length: n }, (_, i) => ref(`owner-${i}`));
      reads.count = 0;
      // Reversed: the order that made the old check compare every pair.
      const paths = ownerReferenceViolations(
        withRefs(refs.map(counted)),
        withRefs([...refs].reverse().map(counted)),
      );
      expect(paths).toEqual([]);
      // Four fields per reference: a few reads each to list and read them, on each side.
      expect(reads.count).toBeLessThanOrEqual(40 * n);
    }
  });
});

/** A deterministic shuffle (an LCG), so counts do not depend on the run. */
const shuffled = <T>(items: readonly T[]): T[] => {
  const out = [...items];
  let seed = 12345;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
};

describe("guarded label and annotation changes", () => {
  const map = fc.dictionary(
    fc.oneof(
      fc.constantFrom("machine.openshift.io/a", "kubernetes.io/b", "x.cluster.x-k8s.io/c"),
      fc.string(),
    ),
    fc.constantFrom("1", "2"),
  );

  it("SPEC §2.3 protected labels: the guarded changes, in key order, as sorting every change gave", () => {
    fc.assert(
      fc.property(map, map, (before, after) => {
        // Every changed key, sorted, then filtered: what the guards replaced (decision 61).
        const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
          (k) => !Object.hasOwn(before, k) || !Object.hasOwn(after, k) || before[k] !== after[k],
        );
        const sortedThenFiltered = changed.sort().filter(isProtectedLabel);
        expect(guardedChanges(before, after, isProtectedLabel)).toEqual(sortedThenFiltered);
      }),
    );
  });

  it("SPEC §2.3 protected labels: thousands of changed labels name the smallest keys first", () => {
    const n = 5_000;
    const labels = (value: string) =>
      Object.fromEntries(
        shuffled(Array.from({ length: n }, (_, i) => [`machine.openshift.io/k${i}`, value])),
      );
    const paths = metadataGuardViolations(
      { metadata: { labels: labels("a") } } as KubeObject,
      { metadata: { labels: labels("b") } } as KubeObject,
      undefined,
    );
    expect(paths).toHaveLength(n);
    const sorted = Array.from({ length: n }, (_, i) => `machine.openshift.io/k${i}`).sort();
    expect(paths.slice(0, SORTED_CHANGES)).toEqual(sorted.slice(0, SORTED_CHANGES).map(labelPath));
  });

  it("smallestFirst: a permutation with the smallest `first` sorted in front", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string(), { maxLength: 60 }),
        fc.integer({ min: 1, max: 10 }),
        (keys, first) => {
          const out = smallestFirst(keys, first);
          expect([...out].sort()).toEqual([...keys].sort());
          expect(out.slice(0, first)).toEqual([...keys].sort().slice(0, first));
          if (keys.length <= 2 * first) expect(out).toEqual([...keys].sort());
        },
      ),
    );
  });

  it("SPEC §2.1 linear-time decisions: ordering 20,000 changed keys costs ~1 comparison each, not log n", () => {
    const n = 20_000;
    const keys = shuffled(Array.from({ length: n }, (_, i) => `example.com/label-${i}`));
    let comparisons = 0;
    const counting = (a: string, b: string): boolean => {
      comparisons++;
      return a < b;
    };
    smallestFirst(keys, SORTED_CHANGES, counting);
    const selecting = comparisons;
    comparisons = 0;
    [...keys].sort((a, b) => (counting(a, b) ? -1 : counting(b, a) ? 1 : 0));
    // What sorting every change (the old keyChanges path) costs on the same keys, counted the same way.
    expect(comparisons).toBeGreaterThan(10 * n);
    expect(selecting).toBeLessThanOrEqual(2 * n);
  });
});
