/**
 * The whole product in one place (SPEC §10): the local API server with the product's real admission
 * webhook, the sync controllers and both migration controllers on one shared informer cache as the product's
 * service account (as src/main.ts composes them), and the simulated providers of SPEC §1.1 (MAO, CAPI and
 * CAPA stand-ins with the instance ledger) — all from test/integration/harness.ts. A user flips
 * `spec.authoritativeAPI` with `admin`; nobody plays a controller by hand. An observer cache checks I1–I4
 * (`observeInvariants`) after every watch event it sees; the ledger proves the first duty at the end (no
 * instance created twice, none leaked or terminated).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, finalizersOf, getPath, nameOf } from "../../src/kube/object.js";
import { mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { statusAuthorityReading } from "../../src/protocol/authority.js";
import { type Harness, MAPI_NS, newReasons, ns, startHarness } from "./harness.js";

const MACHINE = "e2e-handover-m1";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "handover-e2e" });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const instancesOf = (machineName: string) =>
  h.ledger.snapshot().instances.filter((i) => i.machineName === machineName);

describe("handover with the real webhook, the sync controllers and the simulated providers (SPEC §10)", () => {
  it("Machine MachineAPI → ClusterAPI → MachineAPI: one instance throughout, I1–I4 after every event", async () => {
    const w = h.watch("Machine", MACHINE);
    const m = mapiMachine(ns, MACHINE, "a");
    await h.admin.create(KINDS.mapiMachine, m);
    await h.waitFor("MAO's Machine Running", async () => {
      const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, MACHINE);
      return getPath(o, ["status", "phase"]) === "Running" || undefined;
    });
    await h.steady(w, "MachineAPI");
    await h.quiesce();
    expect(instancesOf(MACHINE)).toMatchObject([{ side: "MachineAPI" }]);

    await h.setSpecAuthority("Machine", MACHINE, "ClusterAPI");
    const there = await h.steady(w, "ClusterAPI");
    await h.quiesce();
    expect(finalizersOf(there.capi)).toContain(FINALIZERS.capiMachine);
    expect(finalizersOf(there.infraMachine)).toContain(FINALIZERS.awsMachine);
    expect(finalizersOf(there.mapi)).not.toContain(FINALIZERS.mapiMachine);
    // CAPA adopted the instance through the AWSMachine's instanceID: it created none.
    expect(instancesOf(MACHINE)).toMatchObject([{ side: "MachineAPI" }]);
    expect(instancesOf(MACHINE)[0]?.terminatedSeq).toBeUndefined();

    await h.setSpecAuthority("Machine", MACHINE, "MachineAPI");
    const back = await h.steady(w, "MachineAPI");
    await h.quiesce();
    expect(finalizersOf(back.mapi)).toContain(FINALIZERS.mapiMachine);
    expect(instancesOf(MACHINE)).toHaveLength(1);
    expect(instancesOf(MACHINE)[0]?.terminatedSeq).toBeUndefined();

    expect(w.observed).toBeGreaterThan(10);
    expect(w.violations).toEqual([]);
    const reasons = await h.eventReasons(w);
    expect(reasons.filter((r) => r === "MigrationStarted")).toHaveLength(2);
    expect(reasons.filter((r) => r === "MigrationCompleted")).toHaveLength(2);
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it("a cancel (SPEC §3.3) while MAO is down: the stop is never acknowledged, spec goes back, nothing moved", async () => {
    const w = h.watched().find((x) => x.kind === "Machine" && x.name === MACHINE)!;
    await h.steady(w, "MachineAPI");
    await h.quiesce();
    const before = await h.eventReasons(w);
    await h.stopStandIn("mao");
    await h.setSpecAuthority("Machine", MACHINE, "ClusterAPI");
    await h.waitFor("status Migrating", () => statusAuthorityReading(h.snapshotOf(w).mapi!) === "Migrating");
    // Step 6 waits for MAO's Paused=True, which cannot come.
    await h.waitFor("WaitingForPause", async () =>
      newReasons(before, await h.eventReasons(w)).includes("WaitingForPause"),
    );
    await h.setSpecAuthority("Machine", MACHINE, "MachineAPI");
    await h.waitFor(
      "status MachineAPI",
      () => statusAuthorityReading(h.snapshotOf(w).mapi!) === "MachineAPI",
    );
    await h.startStandIn("mao");
    const s = await h.steady(w, "MachineAPI");
    await h.quiesce();
    expect(finalizersOf(s.mapi)).toContain(FINALIZERS.mapiMachine);
    // Nothing moved: CAPA's finalizer never went on. Cluster API's own is on the paused CAPI Machine all along
    // (its controller adds it before it checks the pause; SPEC v5 §3.1 step 9).
    expect(finalizersOf(s.infraMachine)).not.toContain(FINALIZERS.awsMachine);
    expect(finalizersOf(s.capi)).toContain(FINALIZERS.capiMachine);
    expect(instancesOf(MACHINE)).toHaveLength(1);
    expect(w.violations).toEqual([]);
    const after = newReasons(before, await h.eventReasons(w));
    expect(after.filter((r) => r === "MigrationCancelled")).toHaveLength(1);
    expect(after).not.toContain("MigrationCompleted");
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it("MachineSet MachineAPI → ClusterAPI → MachineAPI: its Machine's twin is the new set's, no new instance, I1–I4 hold", async () => {
    const set = mapiMachineSet(ns, "b", 1);
    const name = nameOf(set);
    const w = h.watch("MachineSet", name);
    await h.admin.create(KINDS.mapiMachineSet, set);
    const member = await h.waitFor("MAO's Machine Running and synchronized", async () => {
      const items = (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((o) =>
        nameOf(o).startsWith(`${name}-`),
      );
      return items.length === 1 &&
        getPath(items[0], ["status", "phase"]) === "Running" &&
        conditionOf(items[0], "Synchronized")?.status === "True"
        ? items[0]
        : undefined;
    });
    await h.steady(w, "MachineAPI");
    await h.quiesce();

    await h.setSpecAuthority("MachineSet", name, "ClusterAPI");
    const there = await h.steady(w, "ClusterAPI");
    await h.quiesce();
    expect(finalizersOf(there.capi)).toContain(FINALIZERS.capiMachineSet);
    // A MachineSet handover does not migrate its Machines (SPEC §1): the member stays MAPI-authoritative.
    const memberNow = await h.admin.get(KINDS.mapiMachine, MAPI_NS, nameOf(member));
    expect(getPath(memberNow, ["status", "authoritativeAPI"])).toBe("MachineAPI");
    // The unpaused CAPI MachineSet found its replica in the member's twin: nobody created another.
    const machinesOfSet = (await h.existing()).capi.filter((n) => n.startsWith(`${name}-`));
    expect(machinesOfSet).toEqual([nameOf(member)]);
    expect(h.ledger.snapshot().instances.filter((i) => i.machineName.startsWith(`${name}-`))).toHaveLength(1);

    await h.setSpecAuthority("MachineSet", name, "MachineAPI");
    const back = await h.steady(w, "MachineAPI");
    await h.quiesce();
    // Cluster API's own finalizer stays on the paused CAPI MachineSet (SPEC v5 §3.1 step 9).
    expect(finalizersOf(back.capi)).toContain(FINALIZERS.capiMachineSet);
    expect((await h.existing()).mapi.filter((n) => n.startsWith(`${name}-`))).toEqual([nameOf(member)]);
    expect(h.ledger.snapshot().instances.filter((i) => i.machineName.startsWith(`${name}-`))).toHaveLength(1);
    expect(w.observed).toBeGreaterThan(5);
    expect(w.violations).toEqual([]);
    const reasons = await h.eventReasons(w);
    expect(reasons.filter((r) => r === "MigrationCompleted")).toHaveLength(2);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});
