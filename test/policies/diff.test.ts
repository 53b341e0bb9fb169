/**
 * The field-path diff and its notation, and the protected-key predicates of SPEC §2.3.
 */
import { describe, expect, it } from "vitest";
import { changedPaths, keyChanges, listPaths, pathOf, sameJson } from "../../src/policies/diff.js";
import { isProtectedAnnotation, isProtectedLabel } from "../../src/policies/keys.js";

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
