/**
 * Found by the model campaign (seed 20261240, run 95; decision 149): the CAPI mirror of a MachineAPI set,
 * deleted with `--cascade=orphan` while the CAPI `Cluster` is gone, is the cascade's (SPEC §4.6): nothing is
 * propagated to the MAPI set, and the mirror is recreated once a Cluster exists again. Its member's mirror was
 * orphaned by that delete and stays so (the sync never re-adds owner references), so a handover of the set to
 * ClusterAPI cannot meet SPEC §3.1 step 4 — and said "waiting for the sync", for ever. It is blocked, saying
 * why and how to cancel; `migrate` reports it so (its Event read through the CLI's watch of MigrationBlocked
 * Events only, decision 151); the cancel ends it, and no instance is touched.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import { nameOf, ownerReferencesOf } from "../../src/kube/object.js";
import { capiCluster } from "../../src/local/seed.js";
import { runMigrate } from "../../src/ops/migrate-cli.js";
import { statusAuthorityReading } from "../../src/protocol/authority.js";
import { deleteClusterConfirmed, setWithRunningMember } from "./cluster-steps.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";

let h: Harness;

beforeAll(async () => {
  // Under leader election, as in a cluster: `migrate` refuses to flip or wait without a held Lease.
  h = await startHarness({ name: "orphaned-members", requireRecordedDeletes: true, standby: true });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const gone = (type: ResourceType, name?: string) => async () => {
  const items = (await h.admin.list(type, { namespace: CAPI_NS })).items;
  return items.some((o) => name === undefined || nameOf(o) === name) ? undefined : true;
};

describe("SPEC §3.1 step 4 / §4.6: a set whose member's mirror was orphaned during a Cluster cascade", () => {
  it("its handover is blocked with the reason and the cancel, not left waiting on the sync; `migrate` (§12) reports it failed", async () => {
    const { name, member } = await setWithRunningMember(h, "orphaned");
    await deleteClusterConfirmed(h, [name]);
    await h.waitFor("the Cluster gone", gone(KINDS.capiCluster), 30_000);
    // The person deletes the set's CAPI mirror, keeping its Machines, while no Cluster exists.
    await h.userDelete(
      KINDS.capiMachineSet,
      CAPI_NS,
      name,
      { kind: "MachineSet", name, cascades: false, members: [member] },
      { propagationPolicy: "Orphan" },
    );
    await h.waitFor("the CAPI set gone", gone(KINDS.capiMachineSet, name), 30_000);
    await h.admin.patch(KINDS.mapiMachineSet, MAPI_NS, name, {
      type: "merge",
      body: { spec: { authoritativeAPI: "ClusterAPI" } },
    });
    for (const o of capiCluster(ns)) if (o.kind === "Cluster") await h.admin.create(KINDS.capiCluster, o);

    // The mirror set comes back; the member's mirror stays unowned, and the handover says so.
    const blocked = await h.waitFor(
      "MigrationBlocked on the set",
      async () =>
        (await h.admin.list(KINDS.event, { namespace: MAPI_NS })).items.find(
          (e) =>
            e.reason === "MigrationBlocked" &&
            (e.involvedObject as { name?: string } | undefined)?.name === name,
        ),
      60_000,
    );
    expect(String(blocked.message)).toContain(
      `member CAPI Machine ${CAPI_NS}/${member} has no controller owner`,
    );
    expect(String(blocked.message)).toContain("set spec.authoritativeAPI back to MachineAPI");
    expect(ownerReferencesOf(await h.admin.get(KINDS.capiMachine, CAPI_NS, member))).toEqual([]);
    expect(statusAuthorityReading(await h.admin.get(KINDS.mapiMachineSet, MAPI_NS, name))).toBe("MachineAPI");

    // The admin's `migrate`, run a while after the Event (as a person would: the Event's whole-second time is
    // over a second old), finds the handover open and ends it as failed with the Event's words, exit 1 — among
    // other Events of the namespace, which its watch does not select (decision 151). It counts the Event
    // because it is newer than the flip, which it reads from the API server: its cache keeps no managedFields.
    const eventAt = Date.parse(String(blocked.lastTimestamp));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, eventAt + 2_500 - Date.now())));
    await h.admin.create(KINDS.event, {
      metadata: { name: `${name}.unrelated`, namespace: MAPI_NS },
      involvedObject: { kind: "MachineSet", name, namespace: MAPI_NS },
      reason: "SuccessfulUpdate",
      message: "an Event of another reason",
      type: "Normal",
    });
    const dir = await mkdtemp(join(tmpdir(), "orphaned-members-"));
    try {
      const kubeconfig = join(dir, "kubeconfig");
      await writeFile(kubeconfig, h.cluster.kubeconfigText);
      let stdout = "";
      const write = (t: string): boolean => {
        stdout += t;
        return true;
      };
      const io = { stdout: { write }, stderr: { write } };
      const code = await runMigrate(
        ["--kubeconfig", kubeconfig, "--context", "admin", "--to", "ClusterAPI", "--machinesets-only"].concat(
          ["--mapi-namespace", MAPI_NS, "--capi-namespace", CAPI_NS, "--timeout", "30s"],
        ),
        io,
        {},
        { onInterrupt: () => () => {}, isTTY: false },
      );
      expect(code, stdout).toBe(1);
      expect(stdout).toContain(`member CAPI Machine ${CAPI_NS}/${member} has no controller owner`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    // The cancel it names ends it; the member and its instance are untouched.
    await h.admin.patch(KINDS.mapiMachineSet, MAPI_NS, name, {
      type: "merge",
      body: { spec: { authoritativeAPI: "MachineAPI" } },
    });
    await h.steady({ kind: "MachineSet", name }, "MachineAPI", 60_000);
    expect(
      (await h.admin.get(KINDS.mapiMachine, MAPI_NS, member)).metadata?.deletionTimestamp,
    ).toBeUndefined();
    expect(await h.ledgerViolations()).toEqual([]);
  }, 240_000);
});
