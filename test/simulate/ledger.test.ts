/**
 * The instance ledger's three invariants (SPEC's first duty, §1.1): no instance created twice for one
 * Machine, none left running without a Machine (either twin), none terminated that was not deleted; plus
 * the actuator lookup that makes a retried create idempotent per side, and adoption of seeded instances.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { awsProviderID, createInstanceLedger, instanceIdOfProviderID } from "../../src/simulate/ledger.js";

const none = { mapi: [], capi: [] };

describe("instance ledger", () => {
  it("a created instance has an AWS providerID in its zone", () => {
    const ledger = createInstanceLedger({ random: () => 0.5 });
    const r = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1b" });
    expect(r.providerID).toBe(awsProviderID("us-east-1b", r.instanceId));
    expect(r.instanceId).toMatch(/^i-[0-9a-f]{17}$/);
    expect(instanceIdOfProviderID(r.providerID)).toBe(r.instanceId);
    expect(ledger.isLive(r.instanceId)).toBe(true);
  });

  it("findLive finds only the instance the same side created (MAO does not see CAPA's tags)", () => {
    const ledger = createInstanceLedger();
    const r = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    expect(ledger.findLive("m-0", "MachineAPI")).toEqual(r);
    expect(ledger.findLive("m-0", "ClusterAPI")).toBeUndefined();
    ledger.terminated({
      instanceId: r.instanceId,
      machineName: "m-0",
      by: "MachineAPI",
      object: "Machine m-0",
      deleting: true,
    });
    expect(ledger.findLive("m-0", "MachineAPI")).toBeUndefined();
  });

  it("clean run: created, Machine exists → no violation; deleted and terminated → no violation", () => {
    const ledger = createInstanceLedger();
    const r = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    expect(ledger.violations({ mapi: ["m-0"], capi: [] })).toEqual([]);
    ledger.terminated({
      instanceId: r.instanceId,
      machineName: "m-0",
      by: "MachineAPI",
      object: "Machine m-0",
      deleting: true,
    });
    expect(ledger.violations(none)).toEqual([]);
  });

  it("created twice: two instances of one Machine alive at once (MAO and CAPA both active)", () => {
    const ledger = createInstanceLedger();
    const a = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    const b = ledger.created({ machineName: "m-0", side: "ClusterAPI", zone: "us-east-1a" });
    expect(ledger.violations({ mapi: ["m-0"], capi: ["m-0"] })).toEqual([
      `Machine m-0: instance ${b.instanceId} (ClusterAPI) was created while ${a.instanceId} (MachineAPI) was still running: created twice`,
    ]);
  });

  it("a Machine recreated under the same name after its instance was terminated is not a double create", () => {
    const ledger = createInstanceLedger();
    const a = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    ledger.terminated({
      instanceId: a.instanceId,
      machineName: "m-0",
      by: "MachineAPI",
      object: "Machine m-0",
      deleting: true,
    });
    ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    expect(ledger.violations({ mapi: ["m-0"], capi: [] })).toEqual([]);
  });

  it("leaked: running while neither twin exists; either twin keeps it", () => {
    const ledger = createInstanceLedger();
    const r = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    expect(ledger.violations({ mapi: [], capi: ["m-0"] })).toEqual([]);
    expect(ledger.violations(none)).toEqual([
      `instance ${r.instanceId} (MachineAPI) is running but neither Machine m-0 nor its twin exists: leaked`,
    ]);
  });

  it("leaked is judged only of instances created before the Machines were listed: a set's new member may be missed", () => {
    // Found by the model campaign on the real control plane (seed 20261252, run 25): MAO created a member and
    // its instance between the lists of MAPI Machines and of CAPI Machines, and the new instance looked leaked.
    const ledger = createInstanceLedger();
    const before = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    const listedFrom = ledger.currentSeq();
    ledger.memberCreated("s-0", "s-0-new");
    ledger.created({ machineName: "s-0-new", side: "MachineAPI", zone: "us-east-1a" });
    expect(ledger.violations({ mapi: [], capi: [], listedFrom })).toEqual([
      `instance ${before.instanceId} (MachineAPI) is running but neither Machine m-0 nor its twin exists: leaked`,
    ]);
  });

  it("terminated for an object that was not being deleted", () => {
    const ledger = createInstanceLedger();
    const r = ledger.created({ machineName: "m-0", side: "ClusterAPI", zone: "us-east-1a" });
    ledger.terminated({
      instanceId: r.instanceId,
      machineName: "m-0",
      by: "ClusterAPI",
      object: "AWSMachine ns/m-0",
      deleting: false,
    });
    expect(ledger.violations({ mapi: ["m-0"], capi: ["m-0"] })).toEqual([
      `instance ${r.instanceId} was terminated by ClusterAPI for AWSMachine ns/m-0, which was not being deleted`,
    ]);
  });

  it("requireRecordedDeletes: a terminate needs a recorded user delete of that Machine or its twin", () => {
    const ledger = createInstanceLedger({ requireRecordedDeletes: true });
    const a = ledger.created({ machineName: "m-0", side: "ClusterAPI", zone: "us-east-1a" });
    const b = ledger.created({ machineName: "m-1", side: "ClusterAPI", zone: "us-east-1a" });
    ledger.deletionRequested("m-0", "user deleted the MAPI Machine");
    for (const r of [a, b])
      ledger.terminated({
        instanceId: r.instanceId,
        machineName: r.machineName,
        by: "ClusterAPI",
        object: `AWSMachine ns/${r.machineName}`,
        deleting: true,
      });
    expect(ledger.violations(none)).toEqual([
      `instance ${b.instanceId} was terminated by ClusterAPI for AWSMachine ns/m-1, but no user deleted Machine m-1 or its twin`,
    ]);
  });

  it("terminate is idempotent, like TerminateInstances", () => {
    const ledger = createInstanceLedger();
    const r = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    const t = {
      instanceId: r.instanceId,
      machineName: "m-0",
      by: "MachineAPI" as const,
      object: "Machine m-0",
      deleting: true,
    };
    ledger.terminated(t);
    ledger.terminated(t);
    expect(ledger.snapshot().events.filter((e) => e.type === "terminated")).toHaveLength(1);
  });

  it("recordExisting adopts a seeded instance once and never resurrects a terminated one", () => {
    const ledger = createInstanceLedger();
    const providerID = "aws:///us-east-1a/i-05a3c9e1b7d2f5";
    ledger.recordExisting({ machineName: "seeded", providerID });
    ledger.recordExisting({ machineName: "seeded", providerID });
    expect(ledger.snapshot().instances).toMatchObject([{ instanceId: "i-05a3c9e1b7d2f5", side: "existing" }]);
    ledger.terminated({
      instanceId: "i-05a3c9e1b7d2f5",
      machineName: "seeded",
      by: "MachineAPI",
      object: "Machine seeded",
      deleting: true,
    });
    ledger.recordExisting({ machineName: "seeded", providerID });
    expect(ledger.isLive("i-05a3c9e1b7d2f5")).toBe(false);
    expect(ledger.violations(none)).toEqual([]);
  });

  it("a seeded instance still running after its Machine is gone is a leak", () => {
    const ledger = createInstanceLedger();
    ledger.recordExisting({ machineName: "seeded", providerID: "aws:///us-east-1a/i-05a3c9e1b7d2f5" });
    expect(ledger.violations(none)).toHaveLength(1);
  });

  it("logs one line per instance event (local mode shows the ledger in its log)", () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const ledger = createInstanceLedger({ logger: pino({ level: "info" }, sink) });
    const r = ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    ledger.terminated({
      instanceId: r.instanceId,
      machineName: "m-0",
      by: "MachineAPI",
      object: "Machine ns/m-0",
      deleting: true,
    });
    expect(lines.map((l) => [l.msg, l.instanceId, l.machineName])).toEqual([
      ["instance created", r.instanceId, "m-0"],
      ["instance terminated", r.instanceId, "m-0"],
    ]);
    expect(lines[0]?.providerID).toBe(r.providerID);
  });

  it("snapshot is a copy: changing it does not change the ledger", () => {
    const ledger = createInstanceLedger();
    ledger.created({ machineName: "m-0", side: "MachineAPI", zone: "us-east-1a" });
    const snap = ledger.snapshot();
    snap.instances[0]!.machineName = "other";
    expect(ledger.snapshot().instances[0]!.machineName).toBe("m-0");
  });
});
