/**
 * Decision 74: a review decided in slices (src/policies/slices.ts) gets exactly the Decision it gets in one
 * go — same allowed, rule, message, warnings and patch — on generated reviews whose spec, status, labels,
 * annotations and finalizers change in bulk, so that their walks are cut into many slices.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide } from "../../src/policies/engine.js";
import { decideInSlices } from "../../src/policies/slices.js";
import type { WebhookName } from "../../src/policies/types.js";
import { capiMachine, context, edit, mapiMachine, updateRequest } from "./builders.js";

/** A JSON value with `bulk` extra keys (a level wide enough to take several steps to walk). */
const bulky = fc
  .tuple(fc.jsonValue({ maxDepth: 3 }), fc.integer({ min: 0, max: 4_000 }), fc.constantFrom(0, 1, 2))
  .map(([value, bulk, seed]) => {
    const wide: Record<string, unknown> = { value };
    for (let i = 0; i < bulk; i++) wide[`k${i}`] = i % 3 === seed ? [i] : i;
    return wide;
  });
const deepList = fc.nat({ max: 5_000 }).map((depth) => {
  let o: unknown = depth;
  for (let i = 0; i < depth; i++) o = [o];
  return o;
});
const side = fc.record({
  crafted: fc.oneof(bulky, deepList),
  labels: fc.dictionary(
    fc.constantFrom("a", "b", "machine.openshift.io/x", "team/y"),
    fc.constantFrom("1", "2"),
  ),
  annotations: fc.dictionary(
    fc.constantFrom("n", "machine.openshift.io/z", "kubectl.kubernetes.io/last-applied-configuration"),
    fc.constantFrom("1", "2"),
  ),
  finalizers: fc.subarray(["a", "b", "c"]),
  statusExtra: fc.option(bulky, { nil: undefined }),
});

const sliced = <T>(decideOnce: () => T, steps: number): { value: T; slices: number } => {
  const run = decideInSlices(decideOnce, steps);
  for (let slices = 1; ; slices++) {
    const value = run.next();
    if (value !== undefined) return { value, slices };
  }
};

describe("decided in slices or in one go: the same Decision (decision 74)", () => {
  it("on generated reviews of MAPI Machines in every authority, with bulk changes", () => {
    let cut = 0;
    fc.assert(
      fc.property(
        fc.constantFrom("MachineAPI", "ClusterAPI", "ClusterAPI", "Migrating", "Migrating"),
        fc.constantFrom<WebhookName>("validate", "validate", "validate", "validate-guard", "mutate"),
        side,
        side,
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        (status, webhook, before, after, sameCrafted, steps) => {
          const machine = mapiMachine({ status: status as "ClusterAPI", synchronizedAPI: "MachineAPI" });
          const apply = (s: typeof before, crafted: unknown) =>
            edit(machine, (m) => {
              m.spec.providerSpec.value.crafted = crafted;
              Object.assign(m.metadata.labels, s.labels);
              Object.assign(m.metadata.annotations, s.annotations);
              m.metadata.finalizers = s.finalizers;
              if (s.statusExtra !== undefined) m.status.extra = s.statusExtra;
            });
          const request = updateRequest(
            apply(before, before.crafted),
            apply(after, sameCrafted ? before.crafted : after.crafted),
          );
          const ctx = context([machine, capiMachine({ paused: "none" })]);
          const once = decide(webhook, request, ctx);
          const { value, slices } = sliced(() => decide(webhook, request, ctx), steps);
          if (slices > 1) cut++;
          expect(value).toEqual(once);
        },
      ),
      { numRuns: 400, seed: 74 },
    );
    // The property must often compare decisions that really were cut, or it proves nothing.
    expect(cut).toBeGreaterThan(40);
  }, 120_000);
});
