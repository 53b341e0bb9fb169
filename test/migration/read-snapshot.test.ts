/**
 * `readHandoverSnapshot` over a plain in-memory store: twin by name, InfraMachine through
 * `spec.infrastructureRef`, candidate members for MachineSets, and unsynced or unwatched kinds reported
 * so the planner waits instead of reading "absent" as "deleted".
 */
import { describe, expect, it } from "vitest";
import type { ResourceType } from "../../src/kube/kinds.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { nameOf, namespaceOf } from "../../src/kube/object.js";
import { planHandover } from "../../src/migration/planner.js";
import { readHandoverSnapshot } from "../../src/migration/read-snapshot.js";
import type { ObjectStore } from "../../src/policies/types.js";
import { CAPI_NS, edit, MAPI_NS, stableSnapshot } from "./world.js";

const NAMESPACES = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };

const storeOf = (entries: [ResourceType, KubeObject][], unsynced: ResourceType[] = []): ObjectStore => ({
  get: (type, namespace, name) =>
    entries.find(([t, o]) => t === type && namespaceOf(o) === namespace && nameOf(o) === name)?.[1],
  list: (type, namespace) =>
    entries
      .filter(([t, o]) => t === type && (namespace === undefined || namespaceOf(o) === namespace))
      .map(([, o]) => o),
  freshness: (type) => ({ synced: !unsynced.includes(type), disconnectedForMs: 0 }),
});

describe("readHandoverSnapshot", () => {
  it("Machine: MAPI object, twin by name and the AWSMachine named by spec.infrastructureRef", () => {
    const s = stableSnapshot("Machine", "MachineAPI");
    const store = storeOf([
      [KINDS.mapiMachine, s.mapi!],
      [KINDS.capiMachine, s.capi!],
      [KINDS.awsMachine, s.infraMachine!],
    ]);
    expect(readHandoverSnapshot(store, "Machine", "worker-a", NAMESPACES)).toEqual({
      kind: "Machine",
      mapi: s.mapi,
      capi: s.capi,
      infraMachine: s.infraMachine,
    });
  });

  it("Machine: an InfraMachine of a kind the cache does not watch is reported, and the planner waits", () => {
    const s = edit(stableSnapshot("Machine", "MachineAPI"), "capi", (o) => {
      o.spec = {
        ...o.spec,
        infrastructureRef: {
          apiGroup: "infrastructure.cluster.x-k8s.io",
          kind: "GCPMachine",
          name: "worker-a",
        },
      };
    });
    const store = storeOf([
      [KINDS.mapiMachine, s.mapi!],
      [KINDS.capiMachine, s.capi!],
    ]);
    const snapshot = readHandoverSnapshot(store, "Machine", "worker-a", NAMESPACES);
    expect(snapshot.unsyncedKinds).toEqual(["GCPMachine (not watched)"]);
    expect(planHandover(snapshot, new Date())).toMatchObject({ kind: "wait", for: "cache" });
  });

  it("MachineSet: every Machine of both namespaces as candidate members", () => {
    const s = stableSnapshot("MachineSet", "ClusterAPI");
    const store = storeOf([
      [KINDS.mapiMachineSet, s.mapi!],
      [KINDS.capiMachineSet, s.capi!],
      ...s.members!.mapi.map((m): [ResourceType, KubeObject] => [KINDS.mapiMachine, m]),
      ...s.members!.capi.map((m): [ResourceType, KubeObject] => [KINDS.capiMachine, m]),
    ]);
    const snapshot = readHandoverSnapshot(store, "MachineSet", "worker-a", NAMESPACES);
    expect(snapshot).toEqual({ kind: "MachineSet", mapi: s.mapi, capi: s.capi, members: s.members });
    expect(planHandover(snapshot, new Date())).toEqual({ kind: "done", why: "steady" });
  });

  it("reports kinds whose informer has not synced", () => {
    const s = stableSnapshot("Machine", "MachineAPI");
    const store = storeOf([[KINDS.mapiMachine, s.mapi!]], [KINDS.capiMachine, KINDS.awsMachine]);
    expect(readHandoverSnapshot(store, "Machine", "worker-a", NAMESPACES).unsyncedKinds).toEqual([
      "AWSMachine.infrastructure.cluster.x-k8s.io",
      "Machine.cluster.x-k8s.io",
    ]);
  });
});
