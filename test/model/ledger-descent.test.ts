/**
 * SPEC §3.2 I6 as the instance ledger checks it with recorded requests (`requireRecordedDeletes`): every
 * termination must descend from a user request made before it — a delete of the Machine or its twin, a
 * person's scale-down of its MachineSet (one member per replica removed, chosen by the set controller), a
 * cascading delete of its MachineSet, or, for the ClusterAPI side only, a delete of the CAPI Cluster.
 */
import { describe, expect, it } from "vitest";
import { createInstanceLedger, type InstanceLedger, type UserRequest } from "../../src/simulate/index.js";

type Side = "MachineAPI" | "ClusterAPI";

interface Row {
  rule: string;
  /** Steps in order: a request (optionally withdrawn), set controller events, and terminations. */
  steps: (
    | { request: UserRequest; withdraw?: boolean }
    | { member: [set: string, machine: string] }
    | { deleted: [set: string, machine: string, reason: "scaleDown" | "setDeleting"] }
    | { terminate: string; by?: Side }
  )[];
  /** Machines whose termination descends from no request. */
  undescended: string[];
}

const rows: Row[] = [
  {
    rule: "I6: a delete of the Machine covers its termination",
    steps: [{ request: { kind: "Machine", name: "m-0" } }, { terminate: "m-0" }, { terminate: "m-1" }],
    undescended: ["m-1"],
  },
  {
    rule: "I6: a request made after the termination does not cover it",
    steps: [{ terminate: "m-0" }, { request: { kind: "Machine", name: "m-0" } }],
    undescended: ["m-0"],
  },
  {
    rule: "I6: a request the server refused (withdrawn) covers nothing",
    steps: [{ request: { kind: "Machine", name: "m-0" }, withdraw: true }, { terminate: "m-0" }],
    undescended: ["m-0"],
  },
  {
    rule: "I6/§4.6: a cascading MachineSet delete covers the members the set created",
    steps: [
      { member: ["s", "s-a"] },
      { request: { kind: "MachineSet", name: "s", cascades: true } },
      { deleted: ["s", "s-a", "setDeleting"] },
      { terminate: "s-a" },
      { terminate: "other" },
    ],
    undescended: ["other"],
  },
  {
    rule: "I6/§4.6: --cascade=orphan covers no member (issue 19 defect 2)",
    steps: [
      { member: ["s", "s-a"] },
      { request: { kind: "MachineSet", name: "s", cascades: false, members: ["s-a"] } },
      { terminate: "s-a", by: "ClusterAPI" },
    ],
    undescended: ["s-a"],
  },
  {
    rule: "I6/§4.6: the members the test listed count as the set's",
    steps: [
      { request: { kind: "MachineSet", name: "s", cascades: true, members: ["s-x"] } },
      { terminate: "s-x" },
    ],
    undescended: [],
  },
  {
    rule: "I6: a person's scale-down by one covers one member the set controller chose",
    steps: [
      { member: ["s", "s-a"] },
      { member: ["s", "s-b"] },
      { request: { kind: "Scale", machineSet: "s", from: 2, to: 1 } },
      { deleted: ["s", "s-a", "scaleDown"] },
      { deleted: ["s", "s-a", "scaleDown"] },
      { deleted: ["s", "s-b", "scaleDown"] },
      { terminate: "s-a" },
      { terminate: "s-b" },
    ],
    undescended: ["s-b"],
  },
  {
    rule: "I6: a scale-down nobody asked for covers nothing (a set controller's stale member count)",
    steps: [{ member: ["s", "s-a"] }, { deleted: ["s", "s-a", "scaleDown"] }, { terminate: "s-a" }],
    undescended: ["s-a"],
  },
  {
    rule: "I6/§4.6: deleting the Cluster covers the ClusterAPI side, never a MachineAPI instance (defect 4)",
    steps: [
      { request: { kind: "Cluster", name: "c", members: ["m-capi", "m-mapi"] } },
      { terminate: "m-capi", by: "ClusterAPI" },
      { terminate: "m-mapi", by: "MachineAPI" },
      { terminate: "m-later", by: "ClusterAPI" },
    ],
    undescended: ["m-mapi", "m-later"],
  },
  {
    rule: "I6/§4.6: deleting the Cluster covers the ClusterAPI members its sets create while it goes (campaign seed 20261214, run 7)",
    steps: [
      { request: { kind: "Cluster", name: "c", members: [], sets: ["s"] } },
      { member: ["s", "s-new"] },
      { member: ["other", "o-new"] },
      { deleted: ["s", "s-new", "setDeleting"] },
      { terminate: "s-new", by: "ClusterAPI" },
      { terminate: "o-new", by: "ClusterAPI" },
      { member: ["s", "s-mapi"] },
      { terminate: "s-mapi", by: "MachineAPI" },
    ],
    undescended: ["o-new", "s-mapi"],
  },
];

const run = (row: Row): { ledger: InstanceLedger; undescended: string[] } => {
  const ledger = createInstanceLedger({ requireRecordedDeletes: true });
  const ids = new Map<string, string>();
  for (const step of row.steps) {
    if ("request" in step) {
      const id = ledger.userRequested(step.request, row.rule);
      if (step.withdraw) ledger.withdrawn(id);
    } else if ("member" in step) ledger.memberCreated(...step.member);
    else if ("deleted" in step) {
      const [machineSet, machineName, reason] = step.deleted;
      ledger.memberDeleted({ machineSet, machineName, reason });
    } else {
      const by = step.by ?? "MachineAPI";
      const r = ledger.created({ machineName: step.terminate, side: by, zone: "us-east-1a" });
      ids.set(step.terminate, r.instanceId);
      ledger.terminated({
        instanceId: r.instanceId,
        machineName: step.terminate,
        by,
        object: `Machine ns/${step.terminate}`,
        deleting: true,
      });
    }
  }
  const undescended = [...ids].filter(([, id]) => ledger.descentOf(id) === undefined).map(([n]) => n);
  return { ledger, undescended };
};

describe("the ledger's descent of every termination (SPEC §3.2 I6)", () => {
  it.each(rows)("$rule", (row) => {
    const { ledger, undescended } = run(row);
    expect(undescended).toEqual(row.undescended);
    const violations = ledger.violations({ mapi: [], capi: [] });
    expect(violations).toHaveLength(row.undescended.length);
    for (const n of row.undescended)
      expect(violations.some((v) => v.includes(`no user deleted Machine ${n} or its twin`))).toBe(true);
  });
});
