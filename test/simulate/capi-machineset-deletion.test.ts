/**
 * The CAPI MachineSet stand-in's deletion, pinned to real Cluster API (SPEC §1.1, §2.3
 * `orphan-ignored-by-capi`): a deleted, unpaused MachineSet deletes every Machine it selects whatever the
 * propagation policy of its own delete — Machines the garbage collector already orphaned included, since
 * Cluster API adopts selector-matching orphans — and whether or not its finalizer is still there. A paused one
 * does nothing. Pure planner, plus the selector predicate the shell uses to find those orphans.
 */
import { describe, expect, it } from "vitest";
import { FINALIZERS, LABELS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { machineSetSelects } from "../../src/kube/selector.js";
import { planCapiMachineSet } from "../../src/simulate/capi.js";
import {
  awsMachineTemplateOf,
  capiMachineOf,
  capiMachineSetOf,
  EARLIER,
  NOW_MS,
  paused,
} from "./builders.js";

const notPaused = {
  type: "Paused",
  status: "False",
  reason: "NotPaused",
  message: "",
  lastTransitionTime: EARLIER,
  observedGeneration: 1,
};
const isPaused = { ...notPaused, status: "True", reason: "Paused", message: "Object is paused" };

const deletingSet = (meta: KubeObject["metadata"] = {}) =>
  capiMachineSetOf("workers", 2, {
    meta: {
      uid: "set-uid",
      generation: 1,
      deletionTimestamp: EARLIER,
      finalizers: [FINALIZERS.capiMachineSet],
      ...meta,
    },
    status: { conditions: [meta.annotations ? isPaused : notPaused] },
  });
/** A Machine the set stamped, its owner reference removed by the garbage collector (an orphaning delete). */
const orphan = (name: string, meta: KubeObject["metadata"] = {}) =>
  capiMachineOf(name, {
    meta: { uid: `${name}-uid`, labels: { [LABELS.capiSetName]: "workers" }, ownerReferences: [], ...meta },
  });
const plan = (set: KubeObject, machines: KubeObject[], orphans: KubeObject[]) =>
  planCapiMachineSet({
    machineSet: set,
    infraTemplate: awsMachineTemplateOf("workers"),
    machines,
    orphans,
    pendingCreates: [],
    pendingDeletes: [],
    newName: "workers-x7k2p",
    nowMs: NOW_MS,
  });

describe("CAPI MachineSet stand-in: a deleted, unpaused set deletes every Machine it selects (SPEC §2.3 orphan-ignored-by-capi)", () => {
  it("Machines the collector orphaned (a --cascade=orphan delete) are deleted all the same", () => {
    expect(plan(deletingSet(), [], [orphan("workers-a")])).toMatchObject({
      kind: "deleteMachine",
      machine: { metadata: { name: "workers-a" } },
    });
  });

  it("without its own finalizer (only another controller's holds the set) it still deletes them", () => {
    const set = deletingSet({ finalizers: [FINALIZERS.sync] });
    expect(plan(set, [], [orphan("workers-a")]).kind).toBe("deleteMachine");
    expect(plan(set, [], []).kind).toBe("none");
  });

  it("waits for deleting orphans, then drops its finalizer", () => {
    expect(plan(deletingSet(), [], [orphan("workers-a", { deletionTimestamp: EARLIER })]).kind).toBe(
      "removeFinalizer",
    );
    expect(plan(deletingSet(), [], []).kind).toBe("removeFinalizer");
  });

  it("paused: deletes nothing, orphans or not", () => {
    expect(plan(deletingSet({ annotations: paused }), [], [orphan("workers-a")]).kind).toBe("none");
  });
});

describe("machineSetSelects (the Machines a MachineSet selects: Cluster API's stand-in and the sync's adoption check)", () => {
  const labelled = (labels: Record<string, string>) => capiMachineOf("m", { meta: { labels } });
  it.each([
    ["matchLabels", { matchLabels: { a: "1" } }, { a: "1", b: "2" }, true],
    ["matchLabels, other value", { matchLabels: { a: "1" } }, { a: "2" }, false],
    ["In", { matchExpressions: [{ key: "a", operator: "In", values: ["1", "3"] }] }, { a: "3" }, true],
    ["NotIn", { matchExpressions: [{ key: "a", operator: "NotIn", values: ["1"] }] }, { a: "1" }, false],
    ["Exists", { matchExpressions: [{ key: "a", operator: "Exists" }] }, { b: "1" }, false],
    ["DoesNotExist", { matchExpressions: [{ key: "a", operator: "DoesNotExist" }] }, { b: "1" }, true],
    ["empty selector selects nothing", {}, { a: "1" }, false],
    ["absent selector selects nothing", undefined, { a: "1" }, false],
  ] as const)("%s", (_, selector, labels, expected) => {
    expect(machineSetSelects({ spec: { selector } }, labelled({ ...labels }))).toBe(expected);
  });
});
