/**
 * Twin resolution of the ClusterView (SPEC §0, §2.3) over the in-memory store, and the store itself.
 */
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { memoryStore } from "../../src/policies/memory-store.js";
import { clusterView } from "../../src/policies/view.js";
import {
  awsMachine,
  awsMachineTemplate,
  CAPI_NS,
  capiMachine,
  capiMachineSet,
  edit,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
} from "./builders.js";

const view = (objects: KubeObject[]) =>
  clusterView(memoryStore(objects), { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS });
const nameAndKind = (o: KubeObject | undefined) =>
  o && `${o.apiVersion} ${o.kind} ${o.metadata?.namespace}/${o.metadata?.name}`;

describe("twinOf", () => {
  const objects = [
    mapiMachine(),
    mapiMachine({ name: "worker-b" }),
    capiMachine(),
    mapiMachineSet(),
    capiMachineSet(),
  ];
  const v = view(objects);

  it("pairs MAPI and CAPI Machines and MachineSets by name across the namespaces", () => {
    expect(nameAndKind(v.twinOf(mapiMachine()))).toBe(
      "cluster.x-k8s.io/v1beta2 Machine openshift-cluster-api/worker-a",
    );
    expect(nameAndKind(v.twinOf(capiMachine()))).toBe(
      "machine.openshift.io/v1beta1 Machine openshift-machine-api/worker-a",
    );
    expect(v.twinOf(mapiMachineSet())?.kind).toBe("MachineSet");
    expect(v.twinOf(capiMachineSet())?.metadata?.namespace).toBe(MAPI_NS);
    expect(v.twinOf(mapiMachine({ name: "worker-b" }))).toBeUndefined();
  });

  it("an InfraMachine's twin is the MAPI Machine named after its owner CAPI Machine", () => {
    expect(v.twinOf(awsMachine({ name: "worker-a-x7k2p", owner: "worker-b" }))?.metadata?.name).toBe(
      "worker-b",
    );
  });

  it("without an owner, the CAPI Machine whose infrastructureRef names it, then the same name", () => {
    const referencing = edit(capiMachine({ name: "worker-b" }), (c) => {
      c.spec.infrastructureRef.name = "worker-b-infra";
    });
    const w = view([...objects, referencing]);
    expect(w.twinOf(awsMachine({ name: "worker-b-infra", owner: null }))?.metadata?.name).toBe("worker-b");
    expect(w.twinOf(awsMachine({ name: "worker-a", owner: null }))?.metadata?.name).toBe("worker-a");
    expect(w.twinOf(awsMachine({ name: "nobody", owner: null }))).toBeUndefined();
  });

  it("works for infrastructure kinds other than AWS", () => {
    const gcp = edit(awsMachine({ owner: "worker-b" }), (a) => {
      a.kind = "GCPMachine";
    });
    expect(v.twinOf(gcp)?.metadata?.name).toBe("worker-b");
  });

  it("an AWSMachineTemplate's twin is the MAPI MachineSet of its template label; none without the label", () => {
    expect(v.twinOf(awsMachineTemplate())?.metadata?.name).toBe("ci-abc12-worker-us-east-1a");
    expect(v.twinOf(awsMachineTemplate({ machineSet: null }))).toBeUndefined();
  });

  it("odd objects have no twin and do not throw", () => {
    for (const odd of [
      {},
      { kind: "Machine" },
      { apiVersion: 7, kind: [] },
      { apiVersion: "cluster.x-k8s.io/v1beta2", kind: "Cluster", metadata: { name: "c" } },
    ])
      expect(v.twinOf(odd as KubeObject)).toBeUndefined();
  });
});

describe("memoryStore", () => {
  it("gets and lists by type (any version) and namespace; put copies, remove deletes", () => {
    const m = mapiMachine();
    const store = memoryStore([m]);
    m.metadata!.name = "changed-after-put";
    expect(store.get(KINDS.mapiMachine, MAPI_NS, "worker-a")?.metadata?.name).toBe("worker-a");
    store.put(mapiMachine({ name: "worker-b" }));
    expect(
      store
        .list(KINDS.mapiMachine)
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(["worker-a", "worker-b"]);
    expect(store.list(KINDS.mapiMachine, CAPI_NS)).toEqual([]);
    expect(store.list(KINDS.capiMachine)).toEqual([]);
    store.remove(mapiMachine());
    expect(store.get(KINDS.mapiMachine, MAPI_NS, "worker-a")).toBeUndefined();
    expect(store.freshness(KINDS.mapiMachine)).toEqual({ synced: true, disconnectedForMs: 0 });
  });
});
