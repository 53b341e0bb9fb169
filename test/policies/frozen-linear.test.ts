/**
 * frozen-while-migrating costs time linear in the labels, annotations and finalizers of a review (SPEC §2.1,
 * decisions 61 and 74), counted, not timed: how many keys the rule hands to a sort, and how many finalizers
 * it reads. The message is unchanged.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { decide } from "../../src/policies/engine.js";
import { addsFinalizer } from "../../src/policies/rules/frozen.js";
import { context, edit, mapiMachine, mapiMachineSet, updateRequest } from "./builders.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The lengths of the arrays handed to `Array.prototype.sort` from now on. */
const countSorted = (): number[] => {
  const sorted: number[] = [];
  const sort = Array.prototype.sort;
  vi.spyOn(Array.prototype, "sort").mockImplementation(function (this: unknown[], compare) {
    sorted.push(this.length);
    return sort.call(this, compare);
  });
  return sorted;
};

/** `n` distinct keys in no order (a fixed shuffle), so a sort has work to do. */
const shuffledKeys = (n: number, prefix: string): string[] => {
  const keys = Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(6, "0")}`);
  for (let i = n - 1, seed = 7; i > 0; i--) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = seed % (i + 1);
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return keys;
};

describe("product-annotations: linear in the annotations of a review", () => {
  // A MachineSet Machine API owns: no frozen rule applies, and only product-annotations looks at every
  // annotation. 20,000 changed ones, each with a long common prefix (every comparison of a sort reads it).
  const authoritative = mapiMachineSet({ status: "MachineAPI" });
  const prefix = `team.example.com/${"p".repeat(200)}`;

  it("20,000 changed user annotations, none the product's: allowed, and none of them sorted", () => {
    const keys = shuffledKeys(20_000, prefix);
    const [before, after] = ["a", "b"].map((value) =>
      edit(authoritative, (m) => {
        m.metadata.annotations ??= {};
        for (const key of keys) m.metadata.annotations[key] = value;
      }),
    );
    const sorted = countSorted();
    const d = decide("validate", updateRequest(before!, after!), context([authoritative]));
    expect(d).toMatchObject({ allowed: true });
    expect(sorted.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(200);
  });

  it("20,000 of the product's annotations added: refused, naming the smallest first, a few hundred keys sorted", () => {
    const keys = shuffledKeys(20_000, "machine-api-migration.openshift.io/x");
    const after = edit(authoritative, (m) => {
      m.metadata.annotations ??= {};
      for (const key of keys) m.metadata.annotations[key] = "x";
    });
    const smallest = [...keys].sort().slice(0, 8);
    const sorted = countSorted();
    const d = decide("validate", updateRequest(authoritative, after), context([authoritative]));
    expect(d).toMatchObject({ allowed: false, rule: "product-annotations" });
    expect(d.status?.message).toContain(
      `: ${smallest.map((k) => `metadata.annotations[${JSON.stringify(k)}] added`).join(", ")} and 19992 more:`,
    );
    expect(sorted.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(200);
  });
});

describe("frozen-while-migrating: linear in the metadata it judges", () => {
  const migrating = mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" });

  // Labels: the other rules that run first (mapi-frozen's guards, decision 61) sort none of these keys, so
  // every key sorted here is frozen-while-migrating's.
  it("20,000 changed user labels: at most a few hundred keys are ever sorted", () => {
    const labels = shuffledKeys(20_000, "team.example.com/l");
    const after = edit(migrating, (m) => {
      for (const key of labels) m.metadata.labels[key] = "x";
      m.metadata.annotations["team.example.com/note"] = "y";
    });
    const smallest = [...labels].sort().slice(0, 8);
    const sorted = countSorted();
    const d = decide("validate", updateRequest(migrating, after), context([migrating]));
    expect(d).toMatchObject({ allowed: false, rule: "frozen-while-migrating" });
    expect(d.status?.message).toContain(
      `: ${smallest.map((k) => `metadata.labels[${JSON.stringify(k)}]`).join(", ")} and 19993 more changed;`,
    );
    // Sorting every change (the old keyChanges) hands all 20,000 keys to a sort; a heap of the 100 smallest
    // hands it 100.
    expect(sorted.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(200);
  });

  it("finalizers: each is read a bounded number of times, not once per other finalizer", () => {
    const n = 2_000;
    const names = shuffledKeys(n, "example.com/f");
    let reads = 0;
    const counted = (list: string[]): string[] =>
      new Proxy(list, {
        get(target, key, receiver) {
          if (typeof key === "string" && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver);
        },
      });
    // Same finalizers in reverse order: nothing added, and a search from the front finds each late.
    expect(addsFinalizer(counted(names), counted([...names].reverse()))).toBe(false);
    expect(reads).toBeLessThanOrEqual(3 * n);
    reads = 0;
    expect(addsFinalizer(counted(names), counted([...names, "example.com/new"]))).toBe(true);
    expect(reads).toBeLessThanOrEqual(3 * (n + 1));
    expect(addsFinalizer([], ["a"])).toBe(true);
    expect(addsFinalizer(["a", "b"], ["b"])).toBe(false);
  });

  it("an added finalizer is still refused, a removed one allowed", () => {
    const added = edit(migrating, (m) => {
      m.metadata.finalizers.push("example.com/mine");
    });
    expect(decide("validate", updateRequest(migrating, added), context([migrating]))).toMatchObject({
      allowed: false,
      rule: "frozen-while-migrating",
    });
    const removed = edit(migrating, (m) => {
      m.metadata.finalizers.pop();
    });
    expect(decide("validate", updateRequest(migrating, removed), context([migrating])).allowed).toBe(true);
  });
});
