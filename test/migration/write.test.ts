/**
 * `requestOf`: the exact request each kind of step becomes (SPEC §7 write discipline). Every test in this
 * directory also executes its steps through these requests (./world.ts `applyStep`).
 */
import { describe, expect, it } from "vitest";
import { ANNOTATIONS, FINALIZERS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import type { ObjectRef } from "../../src/migration/snapshot.js";
import { requestOf } from "../../src/migration/write.js";

const target: ObjectRef = {
  role: "capi",
  apiVersion: "cluster.x-k8s.io/v1beta2",
  kind: "Machine",
  namespace: "openshift-cluster-api",
  name: "worker-a",
  resourceVersion: "812",
};

describe("requestOf", () => {
  it("status steps: a merge patch on /status carrying the resourceVersion", () => {
    expect(
      requestOf({
        kind: "initStatus",
        target: { ...target, role: "mapi" },
        statusPatch: { authoritativeAPI: "MachineAPI", synchronizedAPI: "MachineAPI" },
      }),
    ).toEqual({
      target: { ...target, role: "mapi" },
      subresource: "status",
      patchType: "application/merge-patch+json",
      body: {
        metadata: { resourceVersion: "812" },
        status: { authoritativeAPI: "MachineAPI", synchronizedAPI: "MachineAPI" },
      },
    });
  });

  it("pause: a merge patch adding the annotations", () => {
    expect(
      requestOf({ kind: "pause", target, addAnnotations: { [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE } }),
    ).toEqual({
      target,
      patchType: "application/merge-patch+json",
      body: {
        metadata: { resourceVersion: "812", annotations: { [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE } },
      },
    });
  });

  it("unpause: a merge patch nulling the pause and the marker", () => {
    expect(
      requestOf({ kind: "unpause", target, removeAnnotations: [ANNOTATIONS.paused, ANNOTATIONS.pausedBy] })
        ?.body,
    ).toEqual({
      metadata: {
        resourceVersion: "812",
        annotations: { [ANNOTATIONS.paused]: null, [ANNOTATIONS.pausedBy]: null },
      },
    });
  });

  it("finalizers: a JSON Patch testing the list that was read", () => {
    expect(
      requestOf({
        kind: "addFinalizers",
        target,
        finalizers: [FINALIZERS.capiMachine],
        observed: [FINALIZERS.sync],
      }),
    ).toEqual({
      target,
      patchType: "application/json-patch+json",
      body: [
        { op: "test", path: "/metadata/finalizers", value: [FINALIZERS.sync] },
        { op: "replace", path: "/metadata/finalizers", value: [FINALIZERS.sync, FINALIZERS.capiMachine] },
      ],
    });
    expect(
      requestOf({
        kind: "removeFinalizers",
        target,
        finalizers: [FINALIZERS.capiMachine],
        observed: [FINALIZERS.capiMachine, FINALIZERS.sync],
      })?.body,
    ).toEqual([
      { op: "test", path: "/metadata/finalizers", value: [FINALIZERS.capiMachine, FINALIZERS.sync] },
      { op: "replace", path: "/metadata/finalizers", value: [FINALIZERS.sync] },
    ]);
  });

  it("finalizers on an object without any: tests the resourceVersion instead (a missing path cannot be tested)", () => {
    expect(
      requestOf({ kind: "addFinalizers", target, finalizers: [FINALIZERS.capiMachine], observed: [] })?.body,
    ).toEqual([
      { op: "test", path: "/metadata/resourceVersion", value: "812" },
      { op: "add", path: "/metadata/finalizers", value: [FINALIZERS.capiMachine] },
    ]);
  });

  it("steps that write nothing have no request", () => {
    expect(requestOf({ kind: "done", why: "steady" })).toBeUndefined();
    expect(
      requestOf({ kind: "blocked", event: { type: "Warning", reason: "MigrationBlocked", message: "x" } }),
    ).toBeUndefined();
  });
});
