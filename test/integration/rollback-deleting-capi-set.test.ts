/**
 * SPEC §4.6 "a roll-back never unpauses a deleting CAPI MachineSet", on the whole product (found by an audit):
 * a ClusterAPI MachineSet is being handed over to MachineAPI, step 5 paused its CAPI set, and a person deletes
 * that paused set with `--cascade=orphan` (admission lets it through: `orphan-ignored-by-capi` allows a paused
 * set). §3.5 rolls the handover back to ClusterAPI. Lifting the pause from the deleting set would let Cluster
 * API delete every Machine it selects, whatever the policy, and terminate instances no one deleted; the
 * roll-back keeps the pause and releases Cluster API's own finalizer instead, so the orphaning delete completes
 * (both copies of the set go) and every member Machine and instance stays. I1–I4 are checked after every watch
 * event, the ledger (I6, every termination descending from a recorded user request) at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResourceType } from "../../src/kube/kinds.js";
import { KINDS } from "../../src/kube/kinds.js";
import { nameOf, ownerReferencesOf } from "../../src/kube/object.js";
import { mapiMachineSet } from "../../src/local/seed.js";
import { statusAuthority } from "../../src/protocol/authority.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";
import {
  asClusterAPI,
  liveObject,
  membersKept,
  runningMembers,
  setHandoverAwaitingClusterAPI,
} from "./support.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "rollback-deleting-capi-set", requireRecordedDeletes: true });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const live = (type: ResourceType, namespace: string, name: string) => liveObject(h, type, namespace, name);

const gone = (type: ResourceType, namespace: string, name: string) =>
  h.waitFor(
    `${type.kind} ${namespace}/${name} gone`,
    async () => (await live(type, namespace, name)) === undefined,
    60_000,
  );

const instancesOf = (machines: readonly string[]) =>
  h.ledger.snapshot().instances.filter((i) => machines.includes(i.machineName));

describe("SPEC §4.6: a roll-back never unpauses a deleting CAPI MachineSet", () => {
  it("the paused CAPI set deleted with --cascade=orphan during ClusterAPI → MachineAPI: the handover rolls back, both copies of the set go, every member and instance stays", async () => {
    const set = asClusterAPI(mapiMachineSet(ns, "a", 2));
    const name = nameOf(set);
    const w = h.watch("MachineSet", name);
    await h.admin.create(KINDS.mapiMachineSet, set);
    const members = await runningMembers(h, name, 2);
    await h.steady(w, "ClusterAPI", 60_000);
    await h.quiesce();
    const instances = instancesOf(members);
    expect(instances).toHaveLength(2);

    const firstWrite = h.migrationWrites().length;
    await setHandoverAwaitingClusterAPI(h, name);

    await h.userDelete(
      KINDS.capiMachineSet,
      CAPI_NS,
      name,
      { kind: "MachineSet", name, cascades: false, members },
      { propagationPolicy: "Orphan" },
    );
    await h.startStandIn("capi");

    // The orphaning delete completes: the CAPI set goes, and with it the MAPI copy (§4.6 under ClusterAPI).
    await gone(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.mapiMachineSet, MAPI_NS, name);
    await h.quiesce();

    // I6 first: no member's instance terminated, and no termination that descends from no user request.
    expect(instancesOf(members).filter((i) => i.terminatedSeq !== undefined)).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
    expect(
      instancesOf(members)
        .map((i) => i.instanceId)
        .sort(),
    ).toEqual(instances.map((i) => i.instanceId).sort());
    for (const { mapi, capi } of await membersKept(h, members)) {
      expect(ownerReferencesOf(capi)).toEqual([]);
      expect(ownerReferencesOf(mapi).filter((r) => r.kind === "MachineSet")).toEqual([]);
      expect(statusAuthority(mapi)).toBe("ClusterAPI");
    }
    // §3.5's roll-back ran, releasing Cluster API's finalizer from the paused set instead of lifting its pause.
    const steps = h
      .migrationWrites()
      .slice(firstWrite)
      .filter((x) => x.kind === "MachineSet" && x.name === name)
      .map((x) => x.step);
    expect(steps).toEqual(expect.arrayContaining(["removeFinalizers", "cancelMigration"]));
    expect(steps).not.toContain("unpause");
    expect(h.violations()).toEqual([]);
  }, 240_000);
});
