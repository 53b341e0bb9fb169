/**
 * The invariant checks of SPEC §3.2 (I1–I4) on hand-made histories: each one reports the violation it is
 * for and stays quiet on the legal paths, including the exceptions §3.2 names.
 */
import { describe, expect, it } from "vitest";
import { ANNOTATIONS, CONDITIONS } from "../../src/kube/kinds.js";
import type { HandoverSnapshot } from "../../src/migration/snapshot.js";
import { checkInvariants, invariantViolations } from "./invariants.js";
import { edit, iso, putCondition, setStatusField, stableSnapshot, T0 } from "./world.js";

const withStatus = (s: HandoverSnapshot, fields: Record<string, unknown>): HandoverSnapshot =>
  edit(s, "mapi", (o) => {
    for (const [k, v] of Object.entries(fields)) setStatusField(o, k, v);
  });

const unpause = (s: HandoverSnapshot, role: "capi" | "infraMachine"): HandoverSnapshot =>
  edit(s, role, (o) => {
    o.metadata = { ...o.metadata, annotations: {} };
  });

const paused = (
  s: HandoverSnapshot,
  role: "mapi" | "capi" | "infraMachine",
  status: "True" | "False",
  at: number,
) => edit(s, role, (o) => putCondition(o, { type: CONDITIONS.paused, status, lastTransitionTime: iso(at) }));

const ids = (vs: { invariant: string }[]): string[] => vs.map((v) => v.invariant);

describe("I1 single writer", () => {
  const base = stableSnapshot("Machine", "MachineAPI");
  it("flags status MachineAPI with an unpaused CAPI Machine", () => {
    expect(ids(checkInvariants(undefined, unpause(base, "capi")))).toEqual(["I1"]);
  });
  it("flags status MachineAPI with only the InfraMachine unpaused (CAPA reads its own annotation)", () => {
    expect(ids(checkInvariants(undefined, unpause(base, "infraMachine")))).toEqual(["I1"]);
  });
  it("an admin's unmarked pause still counts as paused", () => {
    const s = edit(base, "capi", (o) => {
      o.metadata = { ...o.metadata, annotations: { [ANNOTATIONS.paused]: "true" } };
    });
    expect(checkInvariants(undefined, s)).toEqual([]);
  });
  it("allows an unpaused twin while Migrating or ClusterAPI", () => {
    expect(
      checkInvariants(undefined, withStatus(unpause(base, "capi"), { authoritativeAPI: "Migrating" })),
    ).toEqual([]);
    expect(checkInvariants(undefined, stableSnapshot("MachineSet", "ClusterAPI"))).toEqual([]);
  });
});

describe("I3 status never jumps and is never removed", () => {
  const mapiAuthority = stableSnapshot("MachineSet", "MachineAPI");
  it("flags MachineAPI → ClusterAPI without Migrating", () => {
    const after = withStatus(stableSnapshot("MachineSet", "MachineAPI"), { authoritativeAPI: "ClusterAPI" });
    expect(ids(checkInvariants(mapiAuthority, after))).toContain("I3");
  });
  it("flags a removed status", () => {
    expect(
      ids(checkInvariants(mapiAuthority, withStatus(mapiAuthority, { authoritativeAPI: undefined }))),
    ).toEqual(["I3"]);
  });
  it("allows MachineAPI → Migrating → ClusterAPI", () => {
    const migrating = withStatus(mapiAuthority, { authoritativeAPI: "Migrating" });
    expect(checkInvariants(mapiAuthority, migrating)).toEqual([]);
    expect(checkInvariants(migrating, withStatus(migrating, { authoritativeAPI: "ClusterAPI" }))).toEqual([]);
  });
});

describe("I4 synchronizedGeneration never decreases except to 0 in the step-10 write", () => {
  const before = withStatus(stableSnapshot("Machine", "MachineAPI"), {
    authoritativeAPI: "Migrating",
    synchronizedAPI: "MachineAPI",
    synchronizedGeneration: 7,
  });
  it("flags a decrease while Migrating", () => {
    expect(ids(checkInvariants(before, withStatus(before, { synchronizedGeneration: 6 })))).toEqual(["I4"]);
  });
  it("allows 0 in the completing write", () => {
    const after = withStatus(before, {
      authoritativeAPI: "ClusterAPI",
      synchronizedAPI: "ClusterAPI",
      synchronizedGeneration: 0,
    });
    expect(checkInvariants(before, after)).toEqual([]);
  });
  it("flags 0 in a cancel (a cancel keeps it)", () => {
    const after = withStatus(before, { authoritativeAPI: "MachineAPI", synchronizedGeneration: 0 });
    expect(ids(checkInvariants(before, after))).toEqual(["I4"]);
  });
});

describe("I2 acknowledged hand-off", () => {
  const stable = stableSnapshot("Machine", "MachineAPI");
  const migrating = withStatus(stable, { authoritativeAPI: "Migrating" });
  const completed = withStatus(migrating, { authoritativeAPI: "ClusterAPI", synchronizedAPI: "ClusterAPI" });

  it("flags the CAPI side becoming active before MAPI reported Paused=True", () => {
    const history = [stable, migrating, completed, unpause(unpause(completed, "capi"), "infraMachine")];
    expect(ids(invariantViolations(history))).toEqual(["I2"]);
  });

  it("allows it after Paused=False in MachineAPI, then Paused=True", () => {
    const acked = paused(migrating, "mapi", "True", T0);
    const done = paused(completed, "mapi", "True", T0);
    const history = [stable, migrating, acked, done, unpause(unpause(done, "capi"), "infraMachine")];
    expect(invariantViolations(history)).toEqual([]);
  });

  it("allows an object born ClusterAPI to have an unpaused twin from the start", () => {
    const born = withStatus(unpause(unpause(stable, "capi"), "infraMachine"), {
      authoritativeAPI: "ClusterAPI",
      synchronizedAPI: "ClusterAPI",
    });
    const created = edit(born, "capi", (o) => {
      o.metadata = { ...o.metadata, annotations: { [ANNOTATIONS.paused]: "" } };
    });
    expect(
      invariantViolations([withStatus(created, { authoritativeAPI: undefined }), created, born]),
    ).toEqual([]);
  });

  const capiStable = stableSnapshot("MachineSet", "ClusterAPI");
  const capiMigrating = edit(withStatus(capiStable, { authoritativeAPI: "Migrating" }), "capi", (o) => {
    o.metadata = { ...o.metadata, annotations: { [ANNOTATIONS.paused]: "" } };
  });
  it("flags status MachineAPI before the CAPI MachineSet reported Paused=True", () => {
    const history = [
      capiStable,
      capiMigrating,
      withStatus(capiMigrating, { authoritativeAPI: "MachineAPI" }),
    ];
    expect(ids(invariantViolations(history))).toEqual(["I2"]);
  });
  it("allows status MachineAPI after the CAPI MachineSet reported Paused=True", () => {
    const acked = paused(capiMigrating, "capi", "True", T0);
    const history = [capiStable, capiMigrating, acked, withStatus(acked, { authoritativeAPI: "MachineAPI" })];
    expect(invariantViolations(history)).toEqual([]);
  });
  it("allows a cancel back to MachineAPI without any CAPI acknowledgement", () => {
    const mapiStable = stableSnapshot("MachineSet", "MachineAPI");
    const m = withStatus(mapiStable, { authoritativeAPI: "Migrating" });
    expect(invariantViolations([mapiStable, m, withStatus(m, { authoritativeAPI: "MachineAPI" })])).toEqual(
      [],
    );
  });
});
