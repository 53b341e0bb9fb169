/**
 * The live read behind SPEC §4.6 "Deleting the CAPI Cluster is not a request for MAPI machines"
 * (src/sync/shell/cascade.ts): a deleting CAPI object goes with its Cluster when the Cluster its owner chain
 * names *by uid* is gone, recreated or being deleted. A vanished CAPI MachineSet whose MAPI twin is still
 * there and not deleting was released by the sync in a cascade, so its Machines go with the Cluster too.
 * The live reads are played by the in-memory World.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import { readClusterCascade } from "../../src/sync/shell/cascade.js";
import {
  CAPI_NS,
  capiCluster,
  capiMachine,
  capiMachineSet,
  MAPI_NS,
  mapiMachineSet,
  ownerRef,
  World,
} from "./builders.js";

const settings = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
const deleting = (o: KubeObject): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, deletionTimestamp: "2026-11-30T09:59:00Z", finalizers: ["x"] },
});
const cluster = capiCluster();
const olderCluster = {
  ...cluster,
  metadata: { ...cluster.metadata, creationTimestamp: "2026-10-01T00:00:00Z" },
};
const recreated = { ...cluster, metadata: { ...cluster.metadata, uid: "cluster-uid-2" } };
const set = capiMachineSet("workers", { meta: { ownerReferences: [ownerRef(cluster, false)] } });
const setRecreated = { ...set, metadata: { ...set.metadata, uid: "set-uid-2" } };
const standalone = deleting(capiMachine("m", { meta: { ownerReferences: [ownerRef(cluster, false)] } }));
const member = deleting(capiMachine("workers-a", { meta: { ownerReferences: [ownerRef(set)] } }));

const cases: [string, KubeObject, KubeObject[], boolean][] = [
  ["standalone, its Cluster there: not a cascade", standalone, [cluster], false],
  ["standalone, its Cluster gone: a cascade", standalone, [], true],
  ["standalone, its Cluster being deleted: a cascade", standalone, [deleting(cluster)], true],
  [
    "standalone, a Cluster of the same name but another uid (recreated): a cascade",
    standalone,
    [recreated],
    true,
  ],
  ["no owner reference: not a cascade (a user's delete)", deleting(capiMachine("m")), [], false],
  ["a set's member, set and Cluster there: not a cascade", member, [cluster, set], false],
  ["a set's member, the set there, its Cluster gone: a cascade", member, [set], true],
  [
    "a set's member, the set gone, its MAPI twin there and not deleting: a cascade (released, not propagated)",
    member,
    [cluster, mapiMachineSet("workers")],
    true,
  ],
  [
    "a set's member, the set recreated (another uid), its MAPI twin there: a cascade",
    member,
    [recreated, setRecreated, mapiMachineSet("workers")],
    true,
  ],
  [
    "a set's member, the set gone, its MAPI twin being deleted, its Cluster older than the member: not a cascade (the set's delete was propagated)",
    member,
    [olderCluster, deleting(mapiMachineSet("workers"))],
    false,
  ],
  [
    "a set's member, the set gone, its MAPI twin being deleted, its Cluster created in the member's second: a cascade (the safe reading)",
    member,
    [cluster, deleting(mapiMachineSet("workers"))],
    true,
  ],
  [
    "a set's member, the set and its MAPI twin gone, its Cluster older than the member: not a cascade",
    member,
    [olderCluster],
    false,
  ],
  // Issue 19, found by the extended campaign: the Cluster deleted, then the MAPI set deleted with
  // --cascade=orphan. The set's own Cluster reference went with it; the member's Cluster is read by name.
  [
    "a set's member, the set gone, its MAPI twin being deleted, its Cluster gone: a cascade",
    member,
    [deleting(mapiMachineSet("workers"))],
    true,
  ],
  [
    "a set's member, the set gone, its MAPI twin being deleted, its Cluster being deleted: a cascade",
    member,
    [deleting(cluster), deleting(mapiMachineSet("workers"))],
    true,
  ],
  [
    "a set's member, the set gone, its MAPI twin being deleted, its Cluster recreated after the member: a cascade",
    member,
    [
      { ...recreated, metadata: { ...recreated.metadata, creationTimestamp: "2026-11-30T10:00:00Z" } },
      deleting(mapiMachineSet("workers")),
    ],
    true,
  ],
];

describe("§4.6 readClusterCascade: the Cluster of the owner chain, by uid, read live", () => {
  it.each(cases)("%s", async (_, object, liveObjects, expected) => {
    const world = new World(liveObjects);
    const read = async (...[type, namespace, name]: Parameters<World["get"]>) =>
      world.get(type, namespace, name);
    expect(await readClusterCascade(read, object, settings)).toBe(expected);
  });
});
