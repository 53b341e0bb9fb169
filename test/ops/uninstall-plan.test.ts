/**
 * The pure parts of `uninstall-prepare` (SPEC §9): when the Lease counts as held, which sync finalizers go
 * and with which guarded request, how steps read, and the dry run's in-memory application of requests.
 */
import { describe, expect, it } from "vitest";
import { FINALIZERS } from "../../src/kube/kinds.js";
import { planHandover } from "../../src/migration/planner.js";
import { requestOf } from "../../src/migration/write.js";
import {
  applyMergePatch,
  applyRequest,
  describeStep,
  halfDeletedTwins,
  leaseState,
  openHandovers,
  syncFinalizerSteps,
} from "../../src/ops/uninstall-plan.js";
import { memoryStore } from "../../src/policies/memory-store.js";
import { CAPI_NS, edit, MAPI_NS, markDeleting, stableSnapshot, T0 } from "../migration/world.js";

const NS = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
const lease = (spec: Record<string, unknown>) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name: "machine-api-migration", namespace: CAPI_NS },
  spec,
});
const RENEWED = "2026-11-30T09:00:00.123456Z";
const renewedMs = Date.parse("2026-11-30T09:00:00.123Z");

describe("leaseState: SPEC §9 refuses while the product's controllers hold the Lease", () => {
  it.each([
    ["no Lease", undefined, renewedMs, false],
    [
      "released: empty holder",
      lease({ holderIdentity: "", leaseDurationSeconds: 15, renewTime: RENEWED }),
      renewedMs,
      false,
    ],
    [
      "renewed 5 s ago, 15 s lease",
      lease({ holderIdentity: "pod-a", leaseDurationSeconds: 15, renewTime: RENEWED }),
      renewedMs + 5_000,
      true,
    ],
    [
      "renewed 16 s ago, 15 s lease",
      lease({ holderIdentity: "pod-a", leaseDurationSeconds: 15, renewTime: RENEWED }),
      renewedMs + 16_000,
      false,
    ],
    [
      "acquired, never renewed",
      lease({ holderIdentity: "pod-a", leaseDurationSeconds: 15, acquireTime: RENEWED }),
      renewedMs + 1_000,
      true,
    ],
  ])("%s", (_name, object, now, held) => {
    expect(leaseState(object, now).held).toBe(held);
  });

  it("names the holder and the expiry", () => {
    expect(
      leaseState(lease({ holderIdentity: "pod-a", leaseDurationSeconds: 15, renewTime: RENEWED }), renewedMs),
    ).toEqual({
      held: true,
      holder: "pod-a",
      renewedAt: "2026-11-30T09:00:00.123Z",
      expiresAt: "2026-11-30T09:00:15.123Z",
    });
  });
});

describe("sync finalizers: every machine object and InfraMachine, InfraMachines first, MAPI last", () => {
  it("one guarded JSON Patch per object that carries it", () => {
    const s = stableSnapshot("Machine", "ClusterAPI");
    const store = memoryStore([s.mapi!, s.capi!, s.infraMachine!]);
    const steps = syncFinalizerSteps(store, NS);
    expect(
      steps.map((st) => (st.kind === "removeFinalizers" ? st.target.kind + "/" + st.target.role : st.kind)),
    ).toEqual(["AWSMachine/infraMachine", "Machine/capi", "Machine/mapi"]);
    expect(requestOf(steps[0]!)).toEqual({
      target: expect.objectContaining({ kind: "AWSMachine", name: "worker-a" }),
      patchType: "application/json-patch+json",
      // Guarded by the uid and resourceVersion read (SPEC §3.5), not only by the list (§7).
      body: [
        { op: "test", path: "/metadata/uid", value: s.infraMachine?.metadata?.uid },
        { op: "test", path: "/metadata/resourceVersion", value: s.infraMachine?.metadata?.resourceVersion },
        { op: "test", path: "/metadata/finalizers", value: s.infraMachine?.metadata?.finalizers },
        { op: "add", path: "/metadata/finalizers", value: [FINALIZERS.awsMachine] },
      ],
    });
  });

  it("nothing to remove when no object carries it", () => {
    const s = edit(stableSnapshot("Machine", "MachineAPI"), "mapi", (o) => {
      o.metadata = { ...o.metadata, finalizers: [FINALIZERS.mapiMachine] };
    });
    const store = memoryStore([s.mapi!]);
    expect(syncFinalizerSteps(store, NS)).toEqual([]);
  });
});

describe("openHandovers", () => {
  it("lists the MAPI objects whose status is Migrating, MachineSets first", () => {
    const migrating = edit(stableSnapshot("Machine", "MachineAPI", "m-1"), "mapi", (o) => {
      o.status = { ...o.status, authoritativeAPI: "Migrating" };
    });
    const setMigrating = edit(stableSnapshot("MachineSet", "ClusterAPI", "s-1"), "mapi", (o) => {
      o.status = { ...o.status, authoritativeAPI: "Migrating" };
    });
    const store = memoryStore([
      migrating.mapi!,
      setMigrating.mapi!,
      stableSnapshot("Machine", "MachineAPI", "m-2").mapi!,
    ]);
    expect(openHandovers(store, NS)).toEqual([
      { kind: "MachineSet", name: "s-1" },
      { kind: "Machine", name: "m-1" },
    ]);
  });
});

describe("dry run: requests applied in memory", () => {
  it("applyMergePatch follows RFC 7386 (null removes, objects merge)", () => {
    expect(applyMergePatch({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: null, e: 3 }, d: [2] })).toEqual({
      a: { c: 2, e: 3 },
      d: [2],
    });
  });

  it("a planner step changes the copy as the server would, and a stale resourceVersion fails", () => {
    // An admin's pause without the product's marker: the planner adds the marker (decision 53).
    const s = edit(stableSnapshot("Machine", "MachineAPI"), "capi", (o) => {
      o.metadata = { ...o.metadata, annotations: { "cluster.x-k8s.io/paused": "" } };
    });
    const step = planHandover(s, new Date(T0));
    expect(step.kind).toBe("pause");
    const request = requestOf(step)!;
    const after = applyRequest(s.capi!, request);
    expect(after.metadata?.annotations).toEqual({
      "cluster.x-k8s.io/paused": "",
      "machine-api-migration.openshift.io/paused-by": "machine-api-migration",
    });
    expect(describeStep(step)).toBe(
      "CAPI Machine openshift-cluster-api/worker-a: paused (machine-api-migration.openshift.io/paused-by)",
    );
    const stale = { ...s.capi!, metadata: { ...s.capi!.metadata, resourceVersion: "99" } };
    expect(() => applyRequest(stale, request)).toThrow(/stale/);
  });

  it("a JSON Patch whose test fails is refused, as a 409 would be", () => {
    const s = stableSnapshot("Machine", "ClusterAPI");
    const [step] = syncFinalizerSteps(memoryStore([s.infraMachine!]), NS);
    // Someone else changed it since it was read: the API server gave it a new resourceVersion.
    const moved = {
      ...s.infraMachine!,
      metadata: { ...s.infraMachine!.metadata, finalizers: [FINALIZERS.sync], resourceVersion: "9999" },
    };
    expect(() => applyRequest(moved, requestOf(step!)!)).toThrow();
  });
});

describe("halfDeletedTwins: SPEC §4.6 deletion propagation the sync would have done", () => {
  it.each([
    [
      "MAPI deleting, CAPI twin not",
      "mapi",
      [
        "MAPI Machine openshift-machine-api/worker-a is being deleted but its twin CAPI Machine openshift-cluster-api/worker-a is not (the sync would have deleted it): oc delete machines.cluster.x-k8s.io/worker-a -n openshift-cluster-api",
      ],
    ],
    [
      "CAPI deleting, MAPI twin not",
      "capi",
      [
        "CAPI Machine openshift-cluster-api/worker-a is being deleted but its twin MAPI Machine openshift-machine-api/worker-a is not (the sync would have deleted it): oc delete machines.machine.openshift.io/worker-a -n openshift-machine-api",
      ],
    ],
  ] as const)("%s", (_name, role, expected) => {
    const s = edit(stableSnapshot("Machine", "ClusterAPI"), role, (o) => markDeleting(o, T0));
    expect(halfDeletedTwins(memoryStore([s.mapi!, s.capi!]), NS)).toEqual(expected);
  });

  it("both deleting, neither deleting, or no sync finalizer on the deleting side: nothing to say", () => {
    const both = edit(
      edit(stableSnapshot("Machine", "ClusterAPI"), "mapi", (o) => markDeleting(o, T0)),
      "capi",
      (o) => markDeleting(o, T0),
    );
    const neither = stableSnapshot("Machine", "ClusterAPI");
    const released = edit(stableSnapshot("Machine", "ClusterAPI"), "mapi", (o) => {
      markDeleting(o, T0);
      o.metadata = { ...o.metadata, finalizers: [] };
    });
    for (const s of [both, neither, released])
      expect(halfDeletedTwins(memoryStore([s.mapi!, s.capi!]), NS)).toEqual([]);
  });
});
