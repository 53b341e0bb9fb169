/**
 * `readHandoverSnapshot` over a plain in-memory store: twin by name, InfraMachine through
 * `spec.infrastructureRef`, candidate members for MachineSets, and unsynced or unwatched kinds reported
 * so the planner waits instead of reading "absent" as "deleted".
 */
import { describe, expect, it } from "vitest";
import type { KubeClient } from "../../src/kube/client.js";
import { NotFoundError } from "../../src/kube/errors.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { nameOf, namespaceOf } from "../../src/kube/object.js";
import { planHandover } from "../../src/migration/planner.js";
import { readHandoverSnapshot, readLiveHandoverSnapshot } from "../../src/migration/read-snapshot.js";
import type { HandoverSnapshot } from "../../src/migration/snapshot.js";
import type { ObjectStore } from "../../src/policies/types.js";
import { CAPI_NS, edit, MAPI_NS, setSpecAuthority, stableSnapshot } from "./world.js";

const NAMESPACES = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };

/** A live client over the snapshot's objects that records each LIST (kind.group). */
const countingClient = (s: HandoverSnapshot) => {
  const lists: string[] = [];
  const objects = [s.mapi, s.capi, ...(s.members?.mapi ?? []), ...(s.members?.capi ?? [])].filter(
    (o): o is KubeObject => o !== undefined,
  );
  const matches = (type: ResourceType, o: KubeObject) =>
    o.kind === type.kind && (o.apiVersion ?? "").startsWith(`${type.group}/`);
  const client: Pick<KubeClient, "get" | "list"> = {
    get: async (type, namespace, name) => {
      const o = objects.find((x) => matches(type, x) && namespaceOf(x) === namespace && nameOf(x) === name);
      if (!o) throw new NotFoundError(404, "NotFound", `${type.kind} ${name} not found`);
      return o;
    },
    list: async (type, options) => {
      lists.push(`${type.kind}.${type.group}`);
      return {
        items: objects.filter((o) => matches(type, o) && namespaceOf(o) === options?.namespace),
        resourceVersion: "1",
      };
    },
  };
  return { client, lists };
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
      expect(live.lists).toEqual(["Machine.machine.openshift.io", "Machine.cluster.x-k8s.io"]);
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
