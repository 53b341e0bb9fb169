/**
 * Server-side apply over lists a CRD declares `x-kubernetes-list-type: map|set` (issue 22): managers own
 * elements, not the whole list, so two managers' entries both survive — as on a real server, where the
 * sync's force-apply of a whole spec leaves other managers' `lifecycleHooks.preDrain` entries in place.
 * Atomic lists stay one field. Found by the conformance probes "a second manager's list-map entry…".
 */
import { describe, expect, it } from "vitest";
import {
  type ListTypes,
  type ManagedFieldsEntry,
  serverSideApply,
} from "../../src/apiserver/managed-fields.js";
import type { KubeObject } from "../../src/kube/object.js";

const listTypes: ListTypes = (p) =>
  p === "spec.entries" ? { type: "map", keys: ["name"] } : p === "spec.tags" ? { type: "set" } : undefined;

const probe = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "example.com/v1",
  kind: "Probe",
  metadata: { name: "p" },
  spec,
});

const apply = (
  live: KubeObject | undefined,
  manager: string,
  spec: Record<string, unknown>,
  force = false,
) => {
  const r = serverSideApply(live, probe(spec), manager, force, "example.com/v1", "t", undefined, listTypes);
  return { ...r.object, metadata: { ...r.object.metadata, managedFields: r.managedFields } } as KubeObject;
};

describe("server-side apply: list-type map and set merge per element across managers", () => {
  const alpha = apply(undefined, "alpha", {
    entries: [{ name: "a", value: "1" }],
    tags: ["x"],
    atomic: ["p"],
  });

  it("a second manager's map entry and set item are added, the first's kept, without a conflict", () => {
    const both = apply(alpha, "beta", { entries: [{ name: "b", value: "2" }], tags: ["y"] });
    expect(both.spec).toEqual({
      entries: [
        { name: "a", value: "1" },
        { name: "b", value: "2" },
      ],
      tags: ["x", "y"],
      atomic: ["p"],
    });
    const entries = (both.metadata?.managedFields ?? []) as ManagedFieldsEntry[];
    const fields = entries.map((e) => [
      e.manager,
      Object.keys((e.fieldsV1 as { "f:spec": object })["f:spec"]).sort(),
    ]);
    expect(fields).toEqual([
      ["alpha", ["f:atomic", "f:entries", "f:tags"]],
      ["beta", ["f:entries", "f:tags"]],
    ]);
  });

  it("an entry another manager owns with a different value conflicts, naming the element", () => {
    expect(() => apply(alpha, "beta", { entries: [{ name: "a", value: "changed" }] })).toThrowError(
      expect.objectContaining({
        code: 409,
        message: 'Apply failed with 1 conflict: conflict with "alpha": .spec.entries[name="a"]',
      }),
    );
  });

  it("a manager that stops applying its entry removes it, leaving the other manager's", () => {
    const both = apply(alpha, "beta", { entries: [{ name: "b", value: "2" }], tags: ["y"] });
    const alphaAgain = apply(both, "alpha", { atomic: ["p"] });
    expect(alphaAgain.spec).toEqual({ entries: [{ name: "b", value: "2" }], tags: ["y"], atomic: ["p"] });
  });

  it("an atomic list another manager owns conflicts as one field", () => {
    expect(() => apply(alpha, "beta", { atomic: ["q"] })).toThrowError(
      expect.objectContaining({
        code: 409,
        message: 'Apply failed with 1 conflict: conflict with "alpha": .spec.atomic',
      }),
    );
  });

  it("without list types (a built-in's lists) the list stays atomic", () => {
    const plain = serverSideApply(undefined, probe({ entries: [{ name: "a" }] }), "alpha", false, "v1", "t");
    const live = {
      ...plain.object,
      metadata: { ...plain.object.metadata, managedFields: plain.managedFields },
    } as KubeObject;
    expect(() =>
      serverSideApply(live, probe({ entries: [{ name: "b" }] }), "beta", false, "v1", "t"),
    ).toThrowError(expect.objectContaining({ code: 409 }));
  });
});
