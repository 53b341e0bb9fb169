/**
 * `requestOf`: the exact request each kind of step becomes (SPEC §7 write discipline). Every test in this
 * directory also executes its steps through these requests (./world.ts `applyStep`).
 */
import { describe, expect, it } from "vitest";
import { ANNOTATIONS, FINALIZERS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import { finalizersOf } from "../../src/kube/object.js";
import { planHandover } from "../../src/migration/planner.js";
import type { ObjectRef } from "../../src/migration/snapshot.js";
import type { Step } from "../../src/migration/steps.js";
import { isWrite } from "../../src/migration/steps.js";
import { requestOf } from "../../src/migration/write.js";
import type { World } from "./world.js";
import {
  ACTORS,
  ApiRefusal,
  act,
  applyStep,
  edit,
  setSpecAuthority,
  stableSnapshot,
  worldOf,
} from "./world.js";

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

  it("finalizers: a JSON Patch testing the uid, resourceVersion and list that were read (SPEC §3.5, §7), then the new list", () => {
    const withUid: ObjectRef = { ...target, uid: "uid-capi-worker-a" };
    expect(
      requestOf({
        kind: "addFinalizers",
        target: withUid,
        finalizers: [FINALIZERS.capiMachine],
        observed: [FINALIZERS.sync],
      }),
    ).toEqual({
      target: withUid,
      patchType: "application/json-patch+json",
      body: [
        { op: "test", path: "/metadata/uid", value: "uid-capi-worker-a" },
        { op: "test", path: "/metadata/resourceVersion", value: "812" },
        { op: "test", path: "/metadata/finalizers", value: [FINALIZERS.sync] },
        { op: "add", path: "/metadata/finalizers", value: [FINALIZERS.sync, FINALIZERS.capiMachine] },
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
      { op: "test", path: "/metadata/resourceVersion", value: "812" },
      { op: "test", path: "/metadata/finalizers", value: [FINALIZERS.capiMachine, FINALIZERS.sync] },
      { op: "add", path: "/metadata/finalizers", value: [FINALIZERS.sync] },
    ]);
  });

  it("finalizers on an object without any: the same guard, and `add` creates the list", () => {
    expect(
      requestOf({ kind: "addFinalizers", target, finalizers: [FINALIZERS.capiMachine], observed: [] })?.body,
    ).toEqual([
      { op: "test", path: "/metadata/resourceVersion", value: "812" },
      { op: "add", path: "/metadata/finalizers", value: [FINALIZERS.capiMachine] },
    ]);
  });

  describe("a late finalizer write (a lost reply, an old leader) never lands on a state it did not see (SPEC §3.5)", () => {
    // Step 9 of Machine MachineAPI → ClusterAPI, planned and then held up in flight.
    const planned = (): { world: World; step: Step } => {
      let world = worldOf(setSpecAuthority(stableSnapshot("Machine", "MachineAPI"), "ClusterAPI"));
      for (let i = 0; i < 50; i++) {
        const step = planHandover(world.s, new Date(world.now));
        if (step.kind === "removeFinalizers") return { world, step };
        if (isWrite(step)) world = applyStep(world, step);
        for (const actor of ACTORS) world = act(world, actor);
      }
      throw new Error("step 9 never planned");
    };
    const sameListAgain = (w: World): World => {
      // Someone removes MAO's finalizer and it is put back (a roll-back by the new leader): the list
      // reads exactly as the late write saw it, but it is not the state the write was planned from.
      const list = finalizersOf(w.s.mapi);
      const removed = {
        ...w,
        rv: w.rv + 1,
        s: edit(w.s, "mapi", (o) => {
          o.metadata = {
            ...o.metadata,
            finalizers: list.filter((f) => f !== FINALIZERS.mapiMachine),
            resourceVersion: String(w.rv + 1),
          };
        }),
      };
      return {
        ...removed,
        rv: removed.rv + 1,
        s: edit(removed.s, "mapi", (o) => {
          o.metadata = { ...o.metadata, finalizers: list, resourceVersion: String(removed.rv + 1) };
        }),
      };
    };

    it("the same finalizer list again (ABA): refused", () => {
      const { world, step } = planned();
      const later = sameListAgain(world);
      expect(finalizersOf(later.s.mapi)).toEqual(finalizersOf(world.s.mapi));
      expect(() => applyStep(later, step)).toThrow(ApiRefusal);
    });

    it("a new object under the same name with the same list: refused", () => {
      const { world, step } = planned();
      const recreated = {
        ...world,
        rv: world.rv + 1,
        s: edit(world.s, "mapi", (o) => {
          o.metadata = { ...o.metadata, uid: "uid-mapi-worker-a-2", resourceVersion: String(world.rv + 1) };
        }),
      };
      expect(() => applyStep(recreated, step)).toThrow(ApiRefusal);
    });

    it("on the state it was planned from: lands", () => {
      const { world, step } = planned();
      expect(finalizersOf(applyStep(world, step).s.mapi)).not.toContain(FINALIZERS.mapiMachine);
    });
  });

  it("steps that write nothing have no request", () => {
    expect(requestOf({ kind: "done", why: "steady" })).toBeUndefined();
    expect(
      requestOf({ kind: "blocked", event: { type: "Warning", reason: "MigrationBlocked", message: "x" } }),
    ).toBeUndefined();
  });
});
