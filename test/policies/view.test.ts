/**
 * Twin resolution of the ClusterView (SPEC §0, §2.3) over the in-memory store — including every MAPI object
 * an infrastructure object may mirror — and the store itself.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import { type KubeObject, namespaceOf } from "../../src/kube/object.js";
import { IndexedStore, keyOf, type ObjectStore } from "../../src/kube/store.js";
import { decide } from "../../src/policies/engine.js";
import { memoryStore } from "../../src/policies/memory-store.js";
import { groupOfApiVersion } from "../../src/policies/subject.js";
import { clusterView, mapiTwinsOf, strictestTwin } from "../../src/policies/view.js";
import {
  ADMIN,
  awsMachine,
  awsMachineTemplate,
  CAPI_NS,
  capiMachine,
  capiMachineSet,
  edit,
  FRESH,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  SETTINGS,
  updateRequest,
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

  it("an AWSMachineTemplate's twin is the MAPI MachineSet of its template label, or of the CAPI MachineSet referencing it", () => {
    expect(v.twinOf(awsMachineTemplate())?.metadata?.name).toBe("ci-abc12-worker-us-east-1a");
    // capiMachineSet() references the builder's template name: the sync reads that template as the set's.
    expect(v.twinOf(awsMachineTemplate({ machineSet: null }))?.metadata?.name).toBe(
      "ci-abc12-worker-us-east-1a",
    );
    expect(v.twinOf(awsMachineTemplate({ name: "unreferenced", machineSet: null }))).toBeUndefined();
    expect(v.twinOf(awsMachineTemplate({ name: "unreferenced", machineSet: "no-such-set" }))).toBeUndefined();
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

describe("mapiTwinsOf and strictestTwin (SPEC §2.3: frozen if any twin is)", () => {
  const clusterAPI = mapiMachine({ name: "worker-b", status: "ClusterAPI" });
  const migrating = mapiMachine({ name: "worker-c", status: "Migrating", synchronizedAPI: "MachineAPI" });
  const referencing = edit(capiMachine({ name: "worker-d" }), (c) => {
    c.spec.infrastructureRef.name = "worker-a";
  });
  const objects = [
    mapiMachine(),
    clusterAPI,
    migrating,
    mapiMachine({ name: "worker-d" }),
    capiMachine(),
    referencing,
  ];
  const store = memoryStore(objects);
  const names = (o: KubeObject) =>
    mapiTwinsOf(store, { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS }, o).map((m) => m.metadata?.name);

  it("an InfraMachine may mirror its owners' twins, its referrers' twins and the MAPI Machine of its name", () => {
    const infra = edit(awsMachine({ owner: "worker-b" }), (a) => {
      a.metadata.ownerReferences.push({ ...a.metadata.ownerReferences[0], name: "worker-c" });
    });
    expect(names(infra)).toEqual(["worker-b", "worker-c", "worker-a", "worker-d"]);
  });

  it("owners of other groups or kinds are not CAPI Machines; referrers naming another kind do not count", () => {
    const infra = edit(awsMachine({ name: "worker-x", owner: null }), (a) => {
      a.metadata.ownerReferences = [
        { apiVersion: "machine.openshift.io/v1beta1", kind: "Machine", name: "worker-b", uid: "u1" },
        { apiVersion: "cluster.x-k8s.io/v1beta2", kind: "MachineSet", name: "worker-b", uid: "u2" },
        { apiVersion: "cluster.x-k8s.io/v1beta1", kind: "Machine", name: "worker-c", uid: "u3" },
      ];
    });
    expect(names(infra)).toEqual(["worker-c"]);
    const gcp = edit(awsMachine({ owner: null }), (a) => {
      a.kind = "GCPMachine";
    });
    expect(names(gcp)).toEqual(["worker-a"]);
  });

  it("CAPI Machines and MachineSets mirror by name only; MAPI objects have no MAPI twins", () => {
    expect(names(capiMachine({ name: "worker-b" }))).toEqual(["worker-b"]);
    expect(names(capiMachine({ name: "nobody" }))).toEqual([]);
    expect(names(mapiMachine())).toEqual([]);
  });

  it("strictestTwin: Migrating first, then MachineAPI or no status, then ClusterAPI", () => {
    const noStatus = mapiMachine({ name: "worker-e", status: "absent" });
    expect(strictestTwin([clusterAPI, mapiMachine(), migrating])).toBe(migrating);
    expect(strictestTwin([clusterAPI, noStatus, mapiMachine()])).toBe(noStatus);
    expect(strictestTwin([clusterAPI])).toBe(clusterAPI);
    expect(strictestTwin([])).toBeUndefined();
  });

  it("twinOf an InfraMachine is the strictest of them, whichever owner comes first", () => {
    const v = view(objects);
    expect(v.twinOf(awsMachine({ name: "worker-x", owner: "worker-b" }))?.metadata?.name).toBe("worker-b");
    const twoOwners = edit(awsMachine({ name: "worker-x", owner: "worker-b" }), (a) => {
      a.metadata.ownerReferences.push({ ...a.metadata.ownerReferences[0], name: "worker-d" });
    });
    expect(v.twinOf(twoOwners)?.metadata?.name).toBe("worker-d");
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

/**
 * The store admission reads in production: the informers' IndexedStore, one per kind (src/kube/cache.ts),
 * recording which kinds were listed whole.
 */
function indexedStore(
  objects: readonly KubeObject[],
  freshness: (t: ResourceType) => typeof FRESH = () => FRESH,
) {
  const kinds = new Map<string, IndexedStore>();
  const kindOf = (group: string, kind: unknown) => `${group}/${String(kind)}`;
  for (const o of objects) {
    const key = kindOf(groupOfApiVersion(o.apiVersion), o.kind);
    if (!kinds.has(key)) kinds.set(key, new IndexedStore());
    kinds.get(key)?.upsert(o);
  }
  const listed: string[] = [];
  const store: ObjectStore = {
    get: (t, namespace, name) => kinds.get(kindOf(t.group, t.kind))?.get(keyOf(namespace, name)),
    list(t, namespace) {
      listed.push(t.kind);
      return kinds.get(kindOf(t.group, t.kind))?.list(namespace) ?? [];
    },
    byIndex: (t, namespace, index, value) =>
      (kinds.get(kindOf(t.group, t.kind))?.byIndex(index, value) ?? []).filter(
        (o) => namespaceOf(o) === namespace,
      ),
    freshness,
  };
  return { store, listed };
}

describe("SPEC §2.3 an infrastructure object's MAPI twins, found through the cache's index", () => {
  const fleet = (n: number): KubeObject[] =>
    Array.from({ length: n }, (_, i) => [
      mapiMachine({ name: `worker-${i}` }),
      capiMachine({ name: `worker-${i}` }),
    ]).flat();
  const namespaces = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };

  it("an InfraMachine's referrers are read from the index, not by listing every CAPI Machine of the namespace", () => {
    const referencing = edit(capiMachine({ name: "worker-7" }), (c) => {
      c.spec.infrastructureRef.name = "orphan-infra";
    });
    const { store, listed } = indexedStore([...fleet(50), referencing]);
    const infra = awsMachine({ name: "orphan-infra", owner: null });
    expect(mapiTwinsOf(store, namespaces, infra).map((m) => m.metadata?.name)).toEqual(["worker-7"]);
    const template = awsMachineTemplate({ name: "unlabelled", machineSet: null });
    expect(mapiTwinsOf(store, namespaces, template)).toEqual([]);
    expect(listed).toEqual([]);
  });

  it("a user's update of an InfraMachine is decided without listing a Machine kind, and still answers retry when the CAPI Machines are stale", () => {
    const objects = [...fleet(50), awsMachine({ name: "worker-3", owner: "worker-3" })];
    const old = awsMachine({ name: "worker-3", owner: "worker-3" });
    const request = updateRequest(
      old,
      edit(old, (a) => {
        a.metadata.labels = { ...a.metadata.labels, team: "storage" };
      }),
      ADMIN,
    );
    const decideOver = (store: ObjectStore) =>
      decide("validate", request, {
        view: clusterView(store, SETTINGS),
        settings: SETTINGS,
        checkConvertible: () => [],
        enforcing: true,
      });
    const { store, listed } = indexedStore(objects);
    const decision = decideOver(store);
    expect(listed.filter((k) => k === "Machine")).toEqual([]);
    expect(decision).toEqual(decideOver(memoryStore(objects)));
    const stale = indexedStore(objects, (t) =>
      t.group === KINDS.capiMachine.group && t.kind === "Machine"
        ? { synced: true, disconnectedForMs: 3_600_000 }
        : FRESH,
    ).store;
    const retry = decideOver(stale);
    expect(retry.allowed).toBe(false);
    expect(retry.status?.message).toMatch(/cluster view is stale/);
  });

  it("the index and a scan of the namespace find the same twins, whatever the references hold (property)", () => {
    const refName = fc.constantFrom("infra-a", "infra-a", "infra-a", "infra-b", "", 7, null, undefined, [
      "infra-a",
    ]);
    const refKind = fc.constantFrom("AWSMachine", "GCPMachine", "", undefined, null, "AWSMachineTemplate");
    const referrer = fc.record({
      name: fc.constantFrom("worker-0", "worker-1", "worker-2", "worker-3"),
      namespace: fc.constantFrom(CAPI_NS, MAPI_NS, "elsewhere"),
      set: fc.boolean(),
      refName,
      refKind,
    });
    fc.assert(
      fc.property(
        fc.array(referrer, { maxLength: 12 }),
        fc.constantFrom("infra-a", "infra-b"),
        (refs, infraName) => {
          const objects: KubeObject[] = [
            ...fleet(4),
            mapiMachineSet({ name: "worker-1" }),
            mapiMachineSet({ name: "worker-2" }),
          ];
          for (const r of refs) {
            const ref = { kind: r.refKind, name: r.refName };
            const o = r.set
              ? edit(capiMachineSet({ name: r.name }), (c) => {
                  c.metadata.namespace = r.namespace;
                  c.spec.template.spec.infrastructureRef = ref;
                })
              : edit(capiMachine({ name: r.name }), (c) => {
                  c.metadata.namespace = r.namespace;
                  c.spec.infrastructureRef = ref;
                });
            objects.push(o);
          }
          const indexed = indexedStore(objects).store;
          const scanned = memoryStore(objects);
          for (const subject of [
            awsMachine({ name: infraName, owner: null }),
            awsMachineTemplate({ name: infraName, machineSet: null }),
          ]) {
            expect(mapiTwinsOf(indexed, namespaces, subject)).toEqual(
              mapiTwinsOf(scanned, namespaces, subject),
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
