/**
 * Found by the extended model campaign (issue 19, test/model; seed 20261207, run 47): deleting the CAPI
 * `Cluster` (confirmed) and then the MachineAPI MachineSet with `--cascade=orphan` terminates the set's
 * MachineAPI member. SPEC §3.2 I6 / §4.6: neither request is one for a MachineAPI Machine — the Cluster's
 * delete "never terminates the instance of a MAPI-authoritative Machine", and an orphaning delete "deletes no
 * Machine of either API". The collector deletes the set's paused mirror with the Cluster, then the mirror's
 * members; once the MAPI set is deleting too, the member mirror's delete is no longer recognised as the
 * Cluster's cascade (src/sync/shell/cascade.ts counts a vanished CAPI set only while its MAPI twin is not
 * deleting) and is propagated to the MAPI Machine, whose instance MAO terminates. The ledger records every
 * request (requireRecordedDeletes), so the termination shows as descending from none.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KINDS } from "../../src/kube/kinds.js";
import { deleteClusterConfirmed, recreateClusterWhenGone, setWithRunningMember } from "./cluster-steps.js";
import { type Harness, MAPI_NS, startHarness } from "./harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "cluster-orphan", requireRecordedDeletes: true });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe("SPEC §4.6/I6: deleting the Cluster, then orphaning a MachineAPI MachineSet", () => {
  it("terminates no MachineAPI member", async () => {
    const { name, member } = await setWithRunningMember(h, "a");
    await deleteClusterConfirmed(h);
    await h.userDelete(
      KINDS.mapiMachineSet,
      MAPI_NS,
      name,
      { kind: "MachineSet", name, cascades: false, members: [member] },
      { propagationPolicy: "Orphan" },
    );
    // The platform brings its Cluster back once the old one is gone.
    await recreateClusterWhenGone(h);
    await h.quiesce(30_000);

    expect(await h.ledgerViolations()).toEqual([]);
    const mapi = await h.admin.get(KINDS.mapiMachine, MAPI_NS, member);
    expect(mapi.metadata?.deletionTimestamp).toBeUndefined();
  }, 120_000);
});
