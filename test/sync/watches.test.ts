/**
 * SPEC §4.1: what wakes the sync controllers of a MachineSet-owned fleet. A Machine's plan never reads its
 * sets' status, so a status-only update of a set wakes none of its Machines (`beyondStatus`); a set's plan
 * reads only its Machines' owners, deletion and delete marks, so nothing else on a Machine wakes the set
 * (`memberFactsChanged`). The extra watch tables run on the real controller runtime with a reconcile that does
 * nothing, so the queue shows what each event wakes; property tests show that the plans really are the same
 * whatever the fields left unwatched hold.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { ResourceType } from "../../src/kube/kinds.js";
import { CAPI_API_VERSION, INFRA_API_VERSION, KINDS, MAPI_API_VERSION } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { syncExtraWatches } from "../../src/sync/controller.js";
import { planMachineSetSync, planMachineSync } from "../../src/sync/plan.js";
import { fakeCache, watchRig } from "../kube/fakes.js";
import {
  awsMachine,
  awsMachineTemplate,
  CAPI_NS,
  CLUSTER_NAME,
  capiCluster,
  capiMachine,
  capiMachineSet,
  DELETED_AT,
  deps,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  NOW,
  ownerRef,
  templateNameFor,
  World,
} from "./builders.js";

const SET = "workers";
/** The platform's InfraCluster: the conversion of control-plane Machines reads its spec. */
const awsCluster = (name: string): KubeObject => ({
  apiVersion: INFRA_API_VERSION,
  kind: "AWSCluster",
  metadata: { name, namespace: CAPI_NS, uid: `uid-aws-cluster-${name}` },
  spec: { region: "us-east-1", identityRef: { kind: "AWSClusterControllerIdentity", name: "default" } },
});
const MEMBERS = ["workers-a", "workers-b"];
const MAPI_MARK = "machine.openshift.io/delete-machine";
const CAPI_MARK = "cluster.x-k8s.io/delete-machine";

/** Any status a controller could have written, the fields the product knows among them. */
const anyStatus: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    authoritativeAPI: fc.constantFrom("MachineAPI", "ClusterAPI", "Migrating", ""),
    synchronizedAPI: fc.constantFrom("MachineAPI", "ClusterAPI"),
    synchronizedGeneration: fc.nat(5),
    phase: fc.constantFrom("Provisioning", "Provisioned", "Running", "Failed", "Deleting"),
    replicas: fc.nat(5),
    readyReplicas: fc.nat(5),
    conditions: fc.array(
      fc.record({
        type: fc.constantFrom("Synchronized", "Paused", "Ready", "InfrastructureReady"),
        status: fc.constantFrom("True", "False", "Unknown"),
        reason: fc.constantFrom("ResourceSynchronized", "FinalSyncComplete", "Any"),
      }),
      { maxLength: 3 },
    ),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);

/** `world` with the status of every object of `kind` (both APIs) replaced by one of `statuses`, in turn. */
const withStatuses = (world: World, kind: string, statuses: readonly Record<string, unknown>[]): World => {
  const copy = new World(world.all());
  copy.storageBeingRemoved = world.storageBeingRemoved;
  copy.clusterCascade = world.clusterCascade;
  let i = 0;
  for (const o of world.all()) {
    if (o.kind !== kind) continue;
    const status = statuses[i++ % Math.max(1, statuses.length)];
    copy.put({ ...o, ...(status ? { status } : { status: undefined }) });
  }
  return copy;
};

/** A set and its two Machines on both sides; MAPI members owned by the MAPI set, CAPI ones by the CAPI set. */
const fleet = (setAuthority: string, memberAuthority: string, edit: (w: World) => void = () => {}) => {
  const mapiSet = mapiMachineSet(SET, { authority: setAuthority });
  const capiSet = capiMachineSet(SET, setAuthority === "ClusterAPI" ? { meta: { annotations: {} } } : {});
  const world = new World([
    infrastructure(),
    capiCluster(),
    mapiSet,
    capiSet,
    awsMachineTemplate(templateNameFor(SET, "m6i.xlarge"), { setName: SET }),
    ...MEMBERS.flatMap((name) => [
      mapiMachine(name, { authority: memberAuthority, meta: { ownerReferences: [ownerRef(mapiSet)] } }),
      capiMachine(name, { meta: { ownerReferences: [ownerRef(capiSet)] } }),
      awsMachine(name),
    ]),
  ]);
  settle(world);
  edit(world);
  return world;
};

/** Plans and executes the set's and every Machine's sync until no plan writes: the fleet at rest. */
const settle = (world: World): void => {
  for (let round = 0; round < 10; round++) {
    const plans = [
      planMachineSetSync(world.machineSetSnapshot(SET), deps(), NOW),
      ...MEMBERS.map((name) => planMachineSync(world.machineSnapshot(name), deps(), NOW)),
    ];
    if (plans.every((p) => p.writes.length === 0)) return;
    for (const p of plans) world.execute(p.writes);
  }
  throw new Error("the fleet never came to rest");
};

describe("SPEC §4.1 the MachineSet sync's plan reads only its Machines' owners, deletion and delete marks", () => {
  /** Anything else a Machine carries: finalizers, labels, other annotations, spec, status. */
  const otherFacts = fc.record({
    finalizers: fc.array(fc.constantFrom("machine.machine.openshift.io", "sync", "other"), { maxLength: 2 }),
    labels: fc.dictionary(
      fc.constantFrom("a", "b", "machine.openshift.io/cluster-api-machineset"),
      fc.string({ maxLength: 3 }),
    ),
    annotations: fc.dictionary(
      fc.constantFrom(
        "machine-api-migration.openshift.io/paused-false-at",
        "other",
        "machine.openshift.io/instance-state",
      ),
      fc.string({ maxLength: 3 }),
    ),
    spec: fc.dictionary(
      fc.constantFrom("providerID", "authoritativeAPI", "other"),
      fc.string({ maxLength: 3 }),
    ),
    status: anyStatus,
  });
  const worlds: [string, World][] = [
    ["a MachineAPI set at rest", fleet("MachineAPI", "MachineAPI")],
    [
      "a ClusterAPI set whose MAPI copy the autoscaler scaled, a member marked (the carry waits, §2.2)",
      fleet("ClusterAPI", "MachineAPI", (w) => {
        w.mutate(MAPI_API_VERSION, "MachineSet", MAPI_NS, SET, (o) => {
          o.spec = { ...o.spec, replicas: 1 };
        });
        w.mutate(MAPI_API_VERSION, "Machine", MAPI_NS, "workers-a", (o) => {
          o.metadata = { ...o.metadata, annotations: { [MAPI_MARK]: "" } };
        });
      }),
    ],
    [
      "the deleting MAPI copy of a ClusterAPI set (its MAPI Machines are orphaned, §4.6)",
      fleet("ClusterAPI", "MachineAPI", (w) => {
        w.mutate(MAPI_API_VERSION, "MachineSet", MAPI_NS, SET, (o) => {
          o.metadata = { ...o.metadata, deletionTimestamp: DELETED_AT };
        });
      }),
    ],
    [
      "a deleting MAPI set (§4.6)",
      fleet("MachineAPI", "MachineAPI", (w) => {
        w.mutate(MAPI_API_VERSION, "MachineSet", MAPI_NS, SET, (o) => {
          o.metadata = { ...o.metadata, deletionTimestamp: DELETED_AT };
        });
      }),
    ],
  ];
  it.each(worlds)("%s: the same plan whatever else the members carry (property)", (_what, world) => {
    const expected = planMachineSetSync(world.machineSetSnapshot(SET), deps(), NOW);
    fc.assert(
      fc.property(fc.array(otherFacts, { minLength: 1, maxLength: 4 }), (facts) => {
        const varied = new World(world.all());
        let i = 0;
        for (const o of world.all()) {
          if (o.kind !== "Machine" || o.apiVersion !== MAPI_API_VERSION) continue;
          const f = facts[i++ % facts.length] as (typeof facts)[number];
          const marks = Object.fromEntries(
            Object.entries(o.metadata?.annotations ?? {}).filter(([k]) => k === MAPI_MARK),
          );
          varied.put({
            ...o,
            metadata: {
              ...o.metadata,
              finalizers: f.finalizers,
              labels: f.labels,
              annotations: { ...f.annotations, ...marks },
            },
            spec: f.spec,
            status: f.status,
          });
        }
        expect(planMachineSetSync(varied.machineSetSnapshot(SET), deps(), NOW)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });
});

describe("SPEC §4.1 the Machine sync's plan never reads its MachineSets' status", () => {
  const worlds: [string, World, string][] = [
    [
      "a MAPI member whose twins are not created yet (owner references, §4.3)",
      fleet("MachineAPI", "MachineAPI", (w) => {
        w.remove(CAPI_API_VERSION, "Machine", CAPI_NS, "workers-a");
        w.remove(INFRA_API_VERSION, "AWSMachine", CAPI_NS, "workers-a");
      }),
      "workers-a",
    ],
    ["a MAPI member at rest", fleet("MachineAPI", "MachineAPI"), "workers-b"],
    [
      "a CAPI-only Machine of a mirrored set (its MAPI mirror, §4.2)",
      fleet("ClusterAPI", "ClusterAPI", (w) => {
        w.remove(MAPI_API_VERSION, "Machine", MAPI_NS, "workers-a");
      }),
      "workers-a",
    ],
    [
      "a member whose set's CAPI twin is deleting",
      fleet("MachineAPI", "MachineAPI", (w) => {
        w.remove(CAPI_API_VERSION, "Machine", CAPI_NS, "workers-a");
        w.mutate(CAPI_API_VERSION, "MachineSet", CAPI_NS, SET, (o) => {
          o.metadata = { ...o.metadata, deletionTimestamp: DELETED_AT };
        });
      }),
      "workers-a",
    ],
  ];
  /** Everything of a set but its identity, deletion and selector: what an autoscaler or an admin writes. */
  const anyOtherFacts = fc.record({
    replicas: fc.nat(9),
    labels: fc.dictionary(fc.constantFrom("a", "team", "machine.openshift.io/x"), fc.constantFrom("1", "x")),
    annotations: fc.dictionary(
      fc.constantFrom("autoscaling.openshift.io/machineautoscaler", "machine.openshift.io/vCPU", "note"),
      fc.constantFrom("", "2", "openshift-machine-api/workers"),
    ),
    finalizers: fc.subarray(["example.com/f"]),
    templateLabel: fc.constantFrom(undefined, "x"),
  });
  it.each(worlds)(
    "%s: the same plan whatever the sets' replicas, labels, annotations, finalizers and template (property, decision 144)",
    (_what, world, machine) => {
      const expected = planMachineSync(world.machineSnapshot(machine), deps(), NOW);
      fc.assert(
        fc.property(anyOtherFacts, (facts) => {
          const varied = new World(world.all());
          varied.storageBeingRemoved = world.storageBeingRemoved;
          varied.clusterCascade = world.clusterCascade;
          for (const o of world.all()) {
            if (o.kind !== "MachineSet") continue;
            const spec = (o.spec ?? {}) as Record<string, unknown>;
            const template = (spec.template ?? {}) as { metadata?: { labels?: Record<string, string> } };
            varied.put({
              ...o,
              metadata: {
                ...o.metadata,
                labels: facts.labels,
                annotations: { ...o.metadata?.annotations, ...facts.annotations },
                finalizers: facts.finalizers,
              },
              spec: {
                ...spec,
                replicas: facts.replicas,
                template: {
                  ...template,
                  metadata: {
                    ...template.metadata,
                    labels: {
                      ...template.metadata?.labels,
                      ...(facts.templateLabel ? { extra: facts.templateLabel } : {}),
                    },
                  },
                },
              },
            });
          }
          expect(planMachineSync(varied.machineSnapshot(machine), deps(), NOW)).toEqual(expected);
        }),
        { numRuns: 200 },
      );
    },
  );
  it.each(worlds)("%s: the same plan whatever the sets' status (property)", (_what, world, machine) => {
    const expected = planMachineSync(world.machineSnapshot(machine), deps(), NOW);
    fc.assert(
      fc.property(fc.array(anyStatus, { minLength: 1, maxLength: 2 }), (statuses) => {
        const varied = withStatuses(world, "MachineSet", statuses);
        expect(planMachineSync(varied.machineSnapshot(machine), deps(), NOW)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });
});

describe("SPEC §4.1 what wakes the sync controllers of a MachineSet-owned fleet", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  /** The fleet in a fake cache, and a rig of one sync controller's extra watches over it. */
  const rig = async (kind: "Machine" | "MachineSet") => {
    const cache = fakeCache();
    const typeOf = (o: KubeObject) =>
      o.kind === "MachineSet"
        ? o.apiVersion === MAPI_API_VERSION
          ? KINDS.mapiMachineSet
          : KINDS.capiMachineSet
        : o.kind === "Machine"
          ? o.apiVersion === MAPI_API_VERSION
            ? KINDS.mapiMachine
            : KINDS.capiMachine
          : o.kind === "Infrastructure"
            ? KINDS.infrastructure
            : o.kind === "Cluster"
              ? KINDS.capiCluster
              : o.kind === "AWSCluster"
                ? KINDS.awsCluster
                : undefined;
    const world = fleet("MachineAPI", "MachineAPI");
    world.put(awsCluster(CLUSTER_NAME));
    world.put(awsCluster("another-cluster"));
    world.put({ ...capiCluster(), metadata: { name: "another-cluster", namespace: CAPI_NS, uid: "other" } });
    for (const o of world.all()) {
      const type = typeOf(o);
      if (type) cache.informer(type, o.metadata?.namespace ?? "").add(o);
    }
    const r = await watchRig(cache, syncExtraWatches(kind, cache, deps().settings));
    stops.push(r.stop);
    /** Fires an update of the cached `type` object `name`, changed by `change` and with a new resourceVersion. */
    const update =
      (type: ResourceType, namespace: string, name: string, change: (o: KubeObject) => KubeObject) => () => {
        const informer = cache.informer(type, namespace);
        const o = informer.get(namespace, name) as KubeObject;
        const next = change(structuredClone(o));
        next.metadata = { ...next.metadata, resourceVersion: `${Number(o.metadata?.resourceVersion) + 1}` };
        informer.update(next);
      };
    return { ...r, update, cache };
  };
  const status = (o: KubeObject): KubeObject => ({
    ...o,
    status: { ...(o.status ?? {}), phase: "Deleting", readyReplicas: 7 },
  });
  const mark = (o: KubeObject): KubeObject => ({
    ...o,
    metadata: { ...o.metadata, annotations: { ...o.metadata?.annotations, [MAPI_MARK]: "" } },
  });
  const deleting = (o: KubeObject): KubeObject => ({
    ...o,
    metadata: { ...o.metadata, deletionTimestamp: DELETED_AT },
  });

  it("MachineSetSync: a member's finalizers, labels, other annotations and spec wake nothing either", async () => {
    const r = await rig("MachineSet");
    const member = (change: (o: KubeObject) => KubeObject) =>
      r.update(KINDS.mapiMachine, MAPI_NS, "workers-a", change);
    expect(await r.woken(member((o) => ({ ...o, metadata: { ...o.metadata, finalizers: [] } })))).toBe(0);
    expect(await r.woken(member((o) => ({ ...o, metadata: { ...o.metadata, labels: { l: "v" } } })))).toBe(0);
    const annotated = (o: KubeObject): KubeObject => ({
      ...o,
      metadata: {
        ...o.metadata,
        annotations: { "machine-api-migration.openshift.io/paused-false-at": "{}" },
      },
    });
    expect(await r.woken(member(annotated))).toBe(0);
    expect(await r.woken(member((o) => ({ ...o, spec: { ...o.spec, providerID: "aws:///x" } })))).toBe(0);
    // …while a change of owner does.
    expect(await r.woken(member((o) => ({ ...o, metadata: { ...o.metadata, ownerReferences: [] } })))).toBe(
      1,
    );
  });

  it("MachineSetSync: a member's status wakes nothing; its delete mark, its deletion or a new member wakes the set", async () => {
    const r = await rig("MachineSet");
    const member = (change: (o: KubeObject) => KubeObject) =>
      r.update(KINDS.mapiMachine, MAPI_NS, "workers-a", change);
    expect(await r.woken(member(status))).toBe(0);
    expect(await r.woken(member(mark))).toBe(1);
    expect(await r.woken(member(deleting))).toBe(1);
    const joining = mapiMachine("workers-c", {
      meta: {
        ownerReferences:
          r.cache.get(KINDS.mapiMachine, MAPI_NS, "workers-a")?.metadata?.ownerReferences ?? [],
      },
    });
    expect(await r.woken(() => r.cache.informer(KINDS.mapiMachine, MAPI_NS).add(joining))).toBe(1);
  });

  it("MachineSetSync: a member's CAPI copy wakes the set when its delete mark comes or goes (the carry waits on it, §2.2), not for its status", async () => {
    const r = await rig("MachineSet");
    const twin = (change: (o: KubeObject) => KubeObject) =>
      r.update(KINDS.capiMachine, CAPI_NS, "workers-a", change);
    const capiMark = (o: KubeObject): KubeObject => ({
      ...o,
      metadata: { ...o.metadata, annotations: { ...o.metadata?.annotations, [CAPI_MARK]: "" } },
    });
    expect(await r.woken(twin(status))).toBe(0);
    expect(await r.woken(twin(capiMark))).toBe(1);
  });

  it("MachineSync: a set's replicas, labels or annotations wake nothing; its selector wakes every Machine it controls (decision 144)", async () => {
    const r = await rig("Machine");
    const replicas = (o: KubeObject): KubeObject => ({ ...o, spec: { ...o.spec, replicas: 7 } });
    const annotated = (o: KubeObject): KubeObject => ({
      ...o,
      metadata: {
        ...o.metadata,
        annotations: { ...o.metadata?.annotations, "machine.openshift.io/vCPU": "2" },
      },
    });
    const selector = (o: KubeObject): KubeObject => ({
      ...o,
      spec: { ...o.spec, selector: { matchLabels: { other: "x" } } },
    });
    for (const [type, namespace] of [
      [KINDS.mapiMachineSet, MAPI_NS],
      [KINDS.capiMachineSet, CAPI_NS],
    ] as const) {
      expect(await r.woken(r.update(type, namespace, SET, replicas))).toBe(0);
      expect(await r.woken(r.update(type, namespace, SET, annotated))).toBe(0);
      expect(await r.woken(r.update(type, namespace, SET, selector))).toBe(2);
    }
  });

  it("MachineSync: a set's status wakes nothing; its deletion wakes every Machine it controls, on either side", async () => {
    const r = await rig("Machine");
    expect(await r.woken(r.update(KINDS.mapiMachineSet, MAPI_NS, SET, status))).toBe(0);
    expect(await r.woken(r.update(KINDS.capiMachineSet, CAPI_NS, SET, status))).toBe(0);
    expect(await r.woken(r.update(KINDS.mapiMachineSet, MAPI_NS, SET, deleting))).toBe(2);
    expect(await r.woken(r.update(KINDS.capiMachineSet, CAPI_NS, SET, deleting))).toBe(2);
  });

  // Cluster API's cluster controller rewrites the Cluster's status as Machines change (its summary
  // conditions); each such write woke every Machine and MachineSet of the fleet (decision 142).
  it.each(["Machine", "MachineSet"] as const)(
    "%sSync: the Cluster's status, or another Cluster, wakes nothing; the Cluster's deletion wakes every key",
    async (kind) => {
      const r = await rig(kind);
      const every = kind === "Machine" ? MEMBERS.length : 1;
      const cluster = (name: string, change: (o: KubeObject) => KubeObject) =>
        r.update(KINDS.capiCluster, CAPI_NS, name, change);
      expect(await r.woken(cluster(CLUSTER_NAME, status))).toBe(0);
      expect(await r.woken(cluster("another-cluster", deleting))).toBe(0);
      expect(await r.woken(cluster(CLUSTER_NAME, deleting))).toBe(every);
    },
  );

  it("MachineSync: the InfraCluster's status, or another one, wakes nothing; its spec wakes every Machine", async () => {
    const r = await rig("Machine");
    const infraCluster = (name: string, change: (o: KubeObject) => KubeObject) =>
      r.update(KINDS.awsCluster, CAPI_NS, name, change);
    const spec = (o: KubeObject): KubeObject => ({ ...o, spec: { ...o.spec, identityRef: { kind: "X" } } });
    expect(await r.woken(infraCluster(CLUSTER_NAME, status))).toBe(0);
    expect(await r.woken(infraCluster("another-cluster", spec))).toBe(0);
    expect(await r.woken(infraCluster(CLUSTER_NAME, spec))).toBe(MEMBERS.length);
  });
});

describe("SPEC §4.1 the sync's plans never read the Cluster's or the InfraCluster's status", () => {
  const world = fleet("MachineAPI", "MachineAPI", (w) => {
    w.remove(CAPI_API_VERSION, "Machine", CAPI_NS, "workers-a");
    w.put(awsCluster(CLUSTER_NAME));
  });
  it.each(["Cluster", "AWSCluster"])("%s: the same plans whatever its status (property)", (kind) => {
    const expected = [
      planMachineSetSync(world.machineSetSnapshot(SET), deps(), NOW),
      ...MEMBERS.map((name) => planMachineSync(world.machineSnapshot(name), deps(), NOW)),
    ];
    fc.assert(
      fc.property(anyStatus, (status) => {
        const varied = withStatuses(world, kind, [status]);
        expect([
          planMachineSetSync(varied.machineSetSnapshot(SET), deps(), NOW),
          ...MEMBERS.map((name) => planMachineSync(varied.machineSnapshot(name), deps(), NOW)),
        ]).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });
});
