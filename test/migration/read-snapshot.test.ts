/**
 * `readHandoverSnapshot` over a plain in-memory store: twin by name, InfraMachine through
 * `spec.infrastructureRef`, candidate members for MachineSets, and unsynced or unwatched kinds reported
 * so the planner waits instead of reading "absent" as "deleted".
 */
import { describe, expect, it } from "vitest";
import { parseLabelSelector } from "../../src/apiserver/selectors.js";
import type { KubeClient } from "../../src/kube/client.js";
import { NotFoundError } from "../../src/kube/errors.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { nameOf, namespaceOf } from "../../src/kube/object.js";
import { planHandover } from "../../src/migration/planner.js";
import { ownedMemberNames } from "../../src/migration/preconditions.js";
import { readHandoverSnapshot, readLiveHandoverSnapshot } from "../../src/migration/read-snapshot.js";
import type { HandoverSnapshot } from "../../src/migration/snapshot.js";
import type { ObjectStore } from "../../src/policies/types.js";
import {
  CAPI_NS,
  edit,
  MAPI_NS,
  markDeleting,
  membersOf,
  setSpecAuthority,
  stableSnapshot,
  T0,
} from "./world.js";

const NAMESPACES = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };

/**
 * A live client over the snapshot's objects (and `extra` ones) that records each LIST (kind.group, and its
 * label selector) and each GET of a Machine; label selectors are read by the local API server's parser.
 */
const countingClient = (s: HandoverSnapshot, extra: KubeObject[] = []) => {
  const lists: string[] = [];
  const gets: string[] = [];
  const objects = [s.mapi, s.capi, ...(s.members?.mapi ?? []), ...(s.members?.capi ?? []), ...extra].filter(
    (o): o is KubeObject => o !== undefined,
  );
  const matches = (type: ResourceType, o: KubeObject) =>
    o.kind === type.kind && (o.apiVersion ?? "").startsWith(`${type.group}/`);
  const client: Pick<KubeClient, "get" | "list"> = {
    get: async (type, namespace, name) => {
      if (type.kind === "Machine") gets.push(`${type.kind}.${type.group}/${name}`);
      const o = objects.find((x) => matches(type, x) && namespaceOf(x) === namespace && nameOf(x) === name);
      if (!o) throw new NotFoundError(404, "NotFound", `${type.kind} ${name} not found`);
      return o;
    },
    list: async (type, options) => {
      const selector = options?.labelSelector;
      lists.push(`${type.kind}.${type.group}${selector === undefined ? "" : `?${selector}`}`);
      const selects = parseLabelSelector(selector);
      if (typeof selects === "string") throw new Error(selects);
      return {
        items: objects
          .filter((o) => matches(type, o) && namespaceOf(o) === options?.namespace && selects(o))
          .sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : 1)),
        resourceVersion: "1",
      };
    },
  };
  return { client, lists, gets };
};

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

  describe("MachineSet: every Machine of both namespaces as candidate members, read only while the handover is open", () => {
    const storeWith = (s: HandoverSnapshot) =>
      storeOf([
        [KINDS.mapiMachineSet, s.mapi!],
        [KINDS.capiMachineSet, s.capi!],
        ...s.members!.mapi.map((m): [ResourceType, KubeObject] => [KINDS.mapiMachine, m]),
        ...s.members!.capi.map((m): [ResourceType, KubeObject] => [KINDS.capiMachine, m]),
      ]);
    const open = setSpecAuthority(stableSnapshot("MachineSet", "MachineAPI"), "ClusterAPI");

    it("open (spec ClusterAPI, status MachineAPI): the members, from the cache and live", async () => {
      const snapshot = readHandoverSnapshot(storeWith(open), "MachineSet", "worker-a", NAMESPACES);
      expect(snapshot).toEqual({
        kind: "MachineSet",
        mapi: open.mapi,
        capi: open.capi,
        members: open.members,
      });
      const live = countingClient(open);
      expect(await readLiveHandoverSnapshot(live.client, "MachineSet", "worker-a", NAMESPACES)).toEqual(
        snapshot,
      );
      expect(live.lists).toEqual([
        "Machine.machine.openshift.io?machine.openshift.io/cluster-api-machineset=worker-a",
        "Machine.cluster.x-k8s.io?cluster.x-k8s.io/set-name=worker-a",
      ]);
      expect(live.gets).toEqual([]);
    });

    it("steady, for the controller: no Machine is read, from the cache or live (the plan would not look at them)", async () => {
      const s = stableSnapshot("MachineSet", "ClusterAPI");
      const store = storeWith(s);
      const listed: string[] = [];
      const snapshot = readHandoverSnapshot(
        {
          ...store,
          list: (type, ns) => {
            listed.push(type.kind);
            return store.list(type, ns);
          },
        },
        "MachineSet",
        "worker-a",
        NAMESPACES,
        [KINDS.awsMachine],
        { members: "whenPlanned" },
      );
      expect(snapshot).toEqual({ kind: "MachineSet", mapi: s.mapi, capi: s.capi });
      expect(listed).toEqual([]);
      expect(planHandover(snapshot, new Date())).toEqual({ kind: "done", why: "steady" });
      const live = countingClient(s);
      expect(await readLiveHandoverSnapshot(live.client, "MachineSet", "worker-a", NAMESPACES)).toEqual(
        snapshot,
      );
      expect(live.lists).toEqual([]);
    });

    it("steady, by default: the members too (preflight asks what a handover starting now would find)", () => {
      const s = stableSnapshot("MachineSet", "ClusterAPI");
      const snapshot = readHandoverSnapshot(storeWith(s), "MachineSet", "worker-a", NAMESPACES);
      expect(snapshot).toEqual({ kind: "MachineSet", mapi: s.mapi, capi: s.capi, members: s.members });
    });
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

describe("SPEC §3.5 live reads, §3.1 step 4: a MachineSet's members read by its selector plan as the whole namespaces do (decision 143)", () => {
  type Members = { mapi: KubeObject[]; capi: KubeObject[] };
  const ROLES = ["mapi", "capi"] as const;
  /** Another set's Machines in both namespaces: listed whole they are read, by selector they are not. */
  const strangers = membersOf("other", 3);
  const scenarios: [string, (m: Members, s: HandoverSnapshot) => void][] = [
    ["all members twinned and selected", () => {}],
    ["a member with no twin", (m) => void m.capi.splice(1, 1)],
    ["a member with no MAPI twin", (m) => void m.mapi.splice(1, 1)],
    [
      "a member owned but no longer selected (MAPI)",
      (m) => {
        m.mapi[0]!.metadata!.labels = {};
      },
    ],
    [
      "a member owned but no longer selected (CAPI)",
      (m) => {
        m.capi[0]!.metadata!.labels = {};
      },
    ],
    [
      "a member owned, no longer selected, with no twin",
      (m) => {
        m.mapi[0]!.metadata!.labels = {};
        m.capi.splice(0, 1);
      },
    ],
    [
      "a twin not selected, not owned",
      (m) => {
        m.capi[1]!.metadata!.labels = {};
        m.capi[1]!.metadata!.ownerReferences = [];
      },
    ],
    ["a twin being deleted", (m) => markDeleting(m.capi[0]!, T0)],
    [
      "a member's MAPI copy not Synchronized",
      (m) => {
        m.mapi[1]!.status = {};
      },
    ],
    [
      "a selector the API cannot be asked for (a value with a comma): listed whole",
      (_m, s) => {
        (s.mapi!.spec!.selector as Record<string, unknown>).matchExpressions = [
          { key: "x", operator: "NotIn", values: ["a,b"] },
        ];
      },
    ],
  ];
  for (const from of ["MachineAPI", "ClusterAPI"] as const)
    it.each(scenarios)(`leaving ${from}: %s`, async (_what, change) => {
      const s = structuredClone(
        setSpecAuthority(
          stableSnapshot("MachineSet", from),
          from === "MachineAPI" ? "ClusterAPI" : "MachineAPI",
        ),
      );
      const members = membersOf("worker-a", 4);
      change(members, s);
      s.members = members;
      // What the cache shows (before the change, as a lagging cache would) names the owned members.
      const cached = { ...s, members: membersOf("worker-a", 4) };
      const live = countingClient(s, [...strangers.mapi, ...strangers.capi]);
      const read = await readLiveHandoverSnapshot(
        live.client,
        "MachineSet",
        "worker-a",
        NAMESPACES,
        [KINDS.awsMachine],
        ownedMemberNames(cached),
      );
      const whole: HandoverSnapshot = {
        ...s,
        members: {
          mapi: [...members.mapi, ...strangers.mapi].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : 1)),
          capi: [...members.capi, ...strangers.capi].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : 1)),
        },
      };
      const now = new Date(T0);
      expect(planHandover(read, now)).toEqual(planHandover(whole, now));
      // By selector, another set's Machines are not read; and at most a few Machines one by one.
      if (live.lists.every((l) => l.includes("?"))) {
        for (const role of ROLES)
          for (const m of read.members![role]) expect(nameOf(m).startsWith("other")).toBe(false);
        expect(live.gets.length).toBeLessThanOrEqual(2);
      }
    });

  it("more Machines to fetch one by one than the bound: that side is listed whole", async () => {
    const s = setSpecAuthority(stableSnapshot("MachineSet", "MachineAPI"), "ClusterAPI");
    const members = membersOf("worker-a", 60);
    for (const m of members.capi) m.metadata!.labels = {};
    s.members = members;
    const live = countingClient(s);
    const read = await readLiveHandoverSnapshot(live.client, "MachineSet", "worker-a", NAMESPACES, [
      KINDS.awsMachine,
    ]);
    expect(live.lists.at(-1)).toBe("Machine.cluster.x-k8s.io");
    expect(live.gets).toEqual([]);
    expect(read.members?.capi).toHaveLength(60);
  });
});
