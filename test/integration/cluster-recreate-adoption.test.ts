/**
 * Found by the extended model campaign (issue 19; seed 20261227, run 106 — and, undiagnosed then, seed
 * 20261223 run 23): a MachineAPI member of a set handed over to ClusterAPI lost its instance after the CAPI
 * `Cluster` was deleted (confirmed) and recreated. SPEC §3.2 I6: "Deleting the CAPI Cluster … never terminates
 * the instance of a MAPI-authoritative Machine."
 *
 * The path: the Cluster's cascade deletes the ClusterAPI CAPI MachineSet, whose controller deletes every
 * Machine it selects — the member's paused mirror too, which the sync rightly releases (a cascade). The MAPI
 * copy of the set follows with `Orphan`, so the member is left standalone. Once a Cluster exists again the sync
 * recreates the member's mirror — while the old CAPI MachineSet is still being deleted (its finalizer waits
 * for its Machines). That set selects the new mirror, which no controller owns: Cluster API's MachineSet
 * controller adopts it and deletes it. The mirror's owner chain now names only the new, live Cluster, so the
 * sync takes the delete for a person's and propagates it to the MAPI Machine; MAO terminates the instance.
 *
 * Here the old set is held deleting by a finalizer of the test's own, so the window is wide open; the ledger
 * records every request (requireRecordedDeletes), so the termination shows as descending from none.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KINDS } from "../../src/kube/kinds.js";
import { conditionOf, isDeleting, ownerReferencesOf } from "../../src/kube/object.js";
import { deleteClusterConfirmed, recreateClusterWhenGone, setWithRunningMember } from "./cluster-steps.js";
import { CAPI_NS, type Harness, MAPI_NS, startHarness } from "./harness.js";

const HOLD = "conformance.example.com/hold";
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "cluster-recreate", requireRecordedDeletes: true });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe("SPEC §4.6/I6: a Cluster deleted and recreated while its ClusterAPI MachineSet is still going", () => {
  it("no mirror is created for the old set to adopt; the MachineAPI member keeps its instance", async () => {
    const { name, member } = await setWithRunningMember(h, "adopt");
    // The set goes to ClusterAPI; its member stays MachineAPI (members follow their own flips).
    await h.admin.patch(KINDS.mapiMachineSet, MAPI_NS, name, {
      type: "merge",
      body: { spec: { authoritativeAPI: "ClusterAPI" } },
    });
    await h.steady({ kind: "MachineSet", name }, "ClusterAPI", 60_000);
    await h.admin.patch(KINDS.capiMachineSet, CAPI_NS, name, {
      type: "json",
      body: [{ op: "add", path: "/metadata/finalizers/-", value: HOLD }],
    });

    await deleteClusterConfirmed(h, [name]);
    await h.waitFor(
      "the old CAPI set deleting, the member's mirror released and the member orphaned",
      async () => {
        const capiSet = await h.admin.get(KINDS.capiMachineSet, CAPI_NS, name).catch(() => undefined);
        const mirror = await h.admin.get(KINDS.capiMachine, CAPI_NS, member).catch(() => undefined);
        const mapi = await h.admin.get(KINDS.mapiMachine, MAPI_NS, member);
        const orphaned = !ownerReferencesOf(mapi).some((r) => r.kind === "MachineSet");
        return capiSet && isDeleting(capiSet) && !mirror && orphaned ? true : undefined;
      },
      60_000,
    );
    // The platform brings its Cluster back; the old set is still going.
    await recreateClusterWhenGone(h);
    await h.quiesce(30_000);
    // No mirror while the old set would take it, and the user is told why on the MAPI Machine.
    expect(await h.admin.get(KINDS.capiMachine, CAPI_NS, member).catch(() => undefined)).toBeUndefined();
    const waiting = conditionOf(await h.admin.get(KINDS.mapiMachine, MAPI_NS, member), "Synchronized");
    expect(waiting).toMatchObject({ status: "False", reason: "MirrorWouldBeAdopted" });
    expect(waiting?.message).toContain(
      `CAPI MachineSet ${CAPI_NS}/${name}, being deleted, selects its labels`,
    );
    expect(await h.ledgerViolations()).toEqual([]);
    expect(
      (await h.admin.get(KINDS.mapiMachine, MAPI_NS, member)).metadata?.deletionTimestamp,
    ).toBeUndefined();

    // Once the old set is gone, the mirror comes back under the new Cluster and stays.
    await h.admin.patch(KINDS.capiMachineSet, CAPI_NS, name, {
      type: "merge",
      body: { metadata: { finalizers: null } },
    });
    const mirror = await h.waitFor(
      "the member's mirror recreated",
      () => h.admin.get(KINDS.capiMachine, CAPI_NS, member).catch(() => undefined),
      60_000,
    );
    expect(isDeleting(mirror)).toBe(false);
    await h.quiesce(30_000);
    expect(await h.ledgerViolations()).toEqual([]);
    expect(
      (await h.admin.get(KINDS.mapiMachine, MAPI_NS, member)).metadata?.deletionTimestamp,
    ).toBeUndefined();
  }, 240_000);
});
