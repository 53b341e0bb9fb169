/**
 * SPEC §3.2 I6 as the instance ledger checks it with recorded requests (`requireRecordedDeletes`): every
 * termination must descend from a user request made before it — a delete of the Machine or its twin, a
 * person's scale-down of its MachineSet (one member per replica removed, chosen by the set controller), a
 * cascading delete of its MachineSet, or, for the ClusterAPI side only, a delete of the CAPI Cluster — and
 * a request by name reaches only the Machine it was made for, never one created later under that name.
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
    /** An instance launched for `launch` now, known as `as` (default: the Machine's name). */
    | { launch: string; as?: string; by?: Side }
    /** The instance known as `as` (or the Machine's name), launched now if it was not. */
    | { terminate: string; as?: string; by?: Side }
  )[];
  /** Instances (by `as`, or Machine name) whose termination descends from no request. */
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
  {
    rule: "I6: a delete of the old Machine does not cover the instance of the one re-created under its name",
    steps: [
      { launch: "m-0", as: "old" },
      { request: { kind: "Machine", name: "m-0" } },
      { terminate: "m-0", as: "old" },
      { request: { kind: "Create", name: "m-0" } },
      { launch: "m-0", as: "new" },
      { terminate: "m-0", as: "new" },
    ],
    undescended: ["new"],
  },
  {
    rule: "I6: a delete of the re-created Machine covers its instance; the old delete still covers the old one's",
    steps: [
      { launch: "m-0", as: "old" },
      { request: { kind: "Machine", name: "m-0" } },
      { request: { kind: "Create", name: "m-0" } },
      { terminate: "m-0", as: "old" },
      { launch: "m-0", as: "new", by: "ClusterAPI" },
      { request: { kind: "Machine", name: "m-0" } },
      { terminate: "m-0", as: "new", by: "ClusterAPI" },
    ],
    undescended: [],
  },
  {
    rule: "I6: a re-create the server refused (409, the old Machine still deleting) is no new Machine",
    steps: [
      { request: { kind: "Machine", name: "m-0" } },
      { request: { kind: "Create", name: "m-0" }, withdraw: true },
      { terminate: "m-0" },
    ],
    undescended: [],
  },
  {
    rule: "I6/§4.6: a Cluster delete's members are the Machines of then, not one re-created under a name",
    steps: [
      { request: { kind: "Cluster", name: "c", members: ["m-0", "m-1"] } },
      { request: { kind: "Create", name: "m-0" } },
      { terminate: "m-0", by: "ClusterAPI" },
      { terminate: "m-1", by: "ClusterAPI" },
    ],
    undescended: ["m-0"],
  },
];

const run = (
  row: Row,
): { ledger: InstanceLedger; undescended: string[]; machineOf: (key: string) => string } => {
  const ledger = createInstanceLedger({ requireRecordedDeletes: true });
  const ids = new Map<string, { id: string; machine: string }>();
  for (const step of row.steps) {
    if ("request" in step) {
      const id = ledger.userRequested(step.request, row.rule);
      if (step.withdraw) ledger.withdrawn(id);
    } else if ("member" in step) ledger.memberCreated(...step.member);
    else if ("deleted" in step) {
      const [machineSet, machineName, reason] = step.deleted;
      ledger.memberDeleted({ machineSet, machineName, reason });
    } else if ("launch" in step) {
      const r = ledger.created({
        machineName: step.launch,
        side: step.by ?? "MachineAPI",
        zone: "us-east-1a",
      });
      ids.set(step.as ?? step.launch, { id: r.instanceId, machine: step.launch });
    } else {
      const by = step.by ?? "MachineAPI";
      const key = step.as ?? step.terminate;
      const id =
        ids.get(key)?.id ??
        ledger.created({ machineName: step.terminate, side: by, zone: "us-east-1a" }).instanceId;
      ids.set(key, { id, machine: step.terminate });
      ledger.terminated({
        instanceId: id,
        machineName: step.terminate,
        by,
        object: `Machine ns/${step.terminate}`,
        deleting: true,
      });
    }
  }
  const undescended = [...ids].filter(([, { id }]) => ledger.descentOf(id) === undefined).map(([n]) => n);
  return { ledger, undescended, machineOf: (key: string) => ids.get(key)?.machine ?? key };
};

describe("the ledger's descent of every termination (SPEC §3.2 I6)", () => {
  it.each(rows)("$rule", (row) => {
    const { ledger, undescended, machineOf } = run(row);
    expect(undescended).toEqual(row.undescended);
    const violations = ledger.violations({ mapi: [], capi: [] });
    expect(violations).toHaveLength(row.undescended.length);
    for (const n of row.undescended)
      expect(violations.some((v) => v.includes(`no user deleted Machine ${machineOf(n)} or its twin`))).toBe(
        true,
      );
  });
});
