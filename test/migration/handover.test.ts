/**
 * Whole handovers driven by the planner and the stand-in controllers of ./world.ts: every direction for
 * both kinds, then a cancel (SPEC §3.3) and a deletion of each involved object (SPEC §3.5) injected at
 * every intermediate state of those handovers. I1–I4 are checked over every observed state.
 */
import { describe, expect, it } from "vitest";
import type { StableAuthority } from "../../src/kube/kinds.js";
import { ANNOTATIONS, CONDITIONS, FINALIZERS } from "../../src/kube/kinds.js";
import { conditionOf, finalizersOf, isDeleting } from "../../src/kube/object.js";
import { HANDOVER_KINDS, resolveFinalizers } from "../../src/migration/kinds.js";
import type { HandoverKind, HandoverSnapshot, Role } from "../../src/migration/snapshot.js";
import { objectOf } from "../../src/migration/snapshot.js";
import type { Step } from "../../src/migration/steps.js";
import {
  opposite,
  statusAuthorityReading,
  synchronizedAPI,
  synchronizedGeneration,
} from "../../src/protocol/authority.js";
import { hasPauseMarker, isPaused } from "../../src/protocol/pause.js";
import type { World } from "./world.js";
import {
  edit,
  markDeleting,
  runToRest,
  setSpecAuthority,
  stableSnapshot,
  violationsOf,
  worldOf,
} from "./world.js";

const CASES: { kind: HandoverKind; from: StableAuthority }[] = [
  { kind: "Machine", from: "MachineAPI" },
  { kind: "Machine", from: "ClusterAPI" },
  { kind: "MachineSet", from: "MachineAPI" },
  { kind: "MachineSet", from: "ClusterAPI" },
];

const holds = (
  s: HandoverSnapshot,
  authority: StableAuthority,
  table: "takeOverFinalizers" | "holdingFinalizers",
): { role: Role; finalizer: string; has: boolean }[] =>
  HANDOVER_KINDS[s.kind][table][authority].flatMap((holder) => {
    const object = objectOf(s, holder.role);
    return (resolveFinalizers(holder, object) ?? []).map((finalizer) => ({
      role: holder.role,
      finalizer,
      has: finalizersOf(object).includes(finalizer),
    }));
  });

/**
 * The side of `authority` holds all its controller finalizers, and the other side none of those by which it
 * would hold the instance (Cluster API's own stay on paused objects, SPEC §3.1 step 9).
 */
const expectFinalizersOf = (s: HandoverSnapshot, authority: StableAuthority): void => {
  for (const h of holds(s, authority, "takeOverFinalizers"))
    expect(h, `${h.role} ${h.finalizer}`).toMatchObject({ has: true });
  for (const h of holds(s, opposite(authority), "holdingFinalizers"))
    expect(h, `${h.role} ${h.finalizer}`).toMatchObject({ has: false });
};

const expectPauseStateOf = (s: HandoverSnapshot, authority: StableAuthority): void => {
  for (const role of HANDOVER_KINDS[s.kind].pauseTargets) {
    const object = objectOf(s, role);
    expect(isPaused(object), `${role} paused`).toBe(authority === "MachineAPI");
    expect(hasPauseMarker(object), `${role} marker`).toBe(authority === "MachineAPI");
  }
};

const writesOf = (steps: readonly Step[]): string[] =>
  steps.filter((s) => s.kind !== "wait" && s.kind !== "done" && s.kind !== "blocked").map((s) => s.kind);

const handover = (kind: HandoverKind, from: StableAuthority) => {
  const start = worldOf(setSpecAuthority(stableSnapshot(kind, from), opposite(from)));
  return { start, run: runToRest(start) };
};

describe("a whole handover (SPEC §3.1 steps 4–11)", () => {
  for (const { kind, from } of CASES) {
    const to = opposite(from);
    it(`${kind} ${from} → ${to}: reaches spec == status, moves finalizers and pauses, I1–I4 hold`, () => {
      const { run } = handover(kind, from);
      const mapi = run.world.s.mapi!;
      expect(run.last).toEqual({ kind: "done", why: "steady" });
      expect(statusAuthorityReading(mapi)).toBe(to);
      expect(synchronizedAPI(mapi)).toBe(to);
      expectFinalizersOf(run.world.s, to);
      expectPauseStateOf(run.world.s, to);
      expect(violationsOf(run.history)).toEqual([]);
      const writes = writesOf(run.steps);
      expect(writes.slice(0, 2)).toEqual(["recordPausedFalseAt", "startMigration"]);
      expect(writes).toContain("completeMigration");
      // The step-10 write resets synchronizedGeneration; the sync then records the new authority's.
      const complete = run.steps.find((s) => s.kind === "completeMigration");
      expect(
        complete && "statusPatch" in complete ? complete.statusPatch.synchronizedGeneration : undefined,
      ).toBe(0);
    });
  }

  it("Machine MachineAPI → ClusterAPI: the writes in SPEC order (4, 4, 8, 9, 10, 11, 11)", () => {
    const { run } = handover("Machine", "MachineAPI");
    const writes = run.steps.filter((s) => s.kind !== "wait" && s.kind !== "done");
    // Step 8 adds CAPA's finalizer only: Cluster API's own is already on the paused CAPI Machine.
    expect(writes.map((s) => ("target" in s ? `${s.kind} ${s.target.role}` : s.kind))).toEqual([
      "recordPausedFalseAt mapi",
      "startMigration mapi",
      "addFinalizers infraMachine",
      "removeFinalizers mapi",
      "completeMigration mapi",
      "unpause capi",
      "unpause infraMachine",
    ]);
  });

  it("Machine ClusterAPI → MachineAPI: pauses both CAPI objects (step 5) before waiting for acknowledgement; step 9 removes CAPA's finalizer only", () => {
    const { run } = handover("Machine", "ClusterAPI");
    const writes = run.steps.filter((s) => s.kind !== "wait" && s.kind !== "done");
    expect(writes.map((s) => ("target" in s ? `${s.kind} ${s.target.role}` : s.kind))).toEqual([
      "recordPausedFalseAt mapi",
      "startMigration mapi",
      "pause capi",
      "pause infraMachine",
      "addFinalizers mapi",
      "removeFinalizers infraMachine",
      "completeMigration mapi",
    ]);
  });
});

/** Every state of a handover while status is Migrating, as observed (after each single write). */
const migratingStates = (kind: HandoverKind, from: StableAuthority): World[] => {
  const { run } = handover(kind, from);
  return run.history
    .filter((s) => statusAuthorityReading(s.mapi!) === "Migrating")
    .map((s, i) => ({ s, rv: 10_000 + i * 100, now: Date.parse("2026-11-30T10:00:00Z") + i * 60_000 }));
};

describe("cancellation from every intermediate state (SPEC §3.3)", () => {
  for (const { kind, from } of CASES) {
    const states = migratingStates(kind, from);
    it(`${kind} ${from} → ${opposite(from)}: ${states.length} states all roll back to ${from}`, () => {
      // At least: just started, the old side acknowledged, the final sync (a MachineSet to ClusterAPI has no step 8–9 write).
      expect(states.length).toBeGreaterThanOrEqual(3);
      for (const [i, world] of states.entries()) {
        const generationBefore = synchronizedGeneration(world.s.mapi!);
        const cancelled = { ...world, s: setSpecAuthority(world.s, from) };
        const run = runToRest(cancelled);
        const mapi = run.world.s.mapi!;
        const where = `state ${i}`;
        expect(statusAuthorityReading(mapi), where).toBe(from);
        expect(run.last, where).toEqual({ kind: "done", why: "steady" });
        expectFinalizersOf(run.world.s, from);
        expectPauseStateOf(run.world.s, from);
        const cancel = run.steps.find((s) => s.kind === "cancelMigration");
        expect(cancel, where).toMatchObject({
          kind: "cancelMigration",
          to: from,
          event: { reason: "MigrationCancelled" },
        });
        // The cancel keeps synchronizedGeneration (SPEC §1).
        expect(
          cancel && "statusPatch" in cancel ? cancel.statusPatch.synchronizedGeneration : -1,
        ).toBeUndefined();
        expect(synchronizedGeneration(mapi)).toBeGreaterThanOrEqual(generationBefore);
        expect(violationsOf([world.s, ...run.history]), where).toEqual([]);
      }
    });
  }
});

/** SPEC §3.5: step 9 has begun once one of the old side's holding finalizers is gone. */
const stepNineBegun = (s: HandoverSnapshot, from: StableAuthority): boolean =>
  holds(s, from, "holdingFinalizers").some((h) => !h.has);

describe("deletion at every intermediate state (SPEC §3.5)", () => {
  for (const { kind, from } of CASES) {
    const roles: Role[] = kind === "Machine" ? ["mapi", "capi", "infraMachine"] : ["mapi", "capi"];
    for (const role of roles) {
      it(`${kind} ${from} → ${opposite(from)}, ${role} deleted: completes once step 9 began, else rolls back`, () => {
        const states = migratingStates(kind, from);
        for (const [i, world] of states.entries()) {
          for (const spec of [opposite(from), from]) {
            const where = `state ${i}, spec ${spec}`;
            const begun = stepNineBegun(world.s, from);
            const deleting = edit(setSpecAuthority(world.s, spec), role, (o) => markDeleting(o, world.now));
            // applyStep throws if the planner ever adds a finalizer to a deleting object.
            const run = runToRest({ ...world, s: deleting });
            const end = run.world.s;
            const expected = begun ? opposite(from) : from;
            expect(statusAuthorityReading(end.mapi!), where).toBe(expected);
            expect(isDeleting(objectOf(end, role)), where).toBe(true);
            // Nothing further happens: a new handover cannot start while something is deleting.
            expect(["done", "blocked"], where).toContain(run.last.kind);
            expect(violationsOf([world.s, ...run.history]), where).toEqual([]);
            // The authority that performs the deletion holds its finalizers on every object not deleting.
            for (const h of holds(end, expected, "takeOverFinalizers")) {
              if (!isDeleting(objectOf(end, h.role))) expect(h, where).toMatchObject({ has: true });
            }
            for (const h of holds(end, opposite(expected), "holdingFinalizers")) {
              if (!isDeleting(objectOf(end, h.role))) expect(h, where).toMatchObject({ has: false });
            }
          }
        }
      });
    }
  }

  it("a CAPI twin deleted right after step 4: rolls back to MachineAPI, keeps the pause, adds nothing", () => {
    const states = migratingStates("Machine", "MachineAPI");
    const world = states[0]!;
    const run = runToRest({ ...world, s: edit(world.s, "capi", (o) => markDeleting(o, world.now)) });
    const end = run.world.s;
    expect(conditionOf(end.mapi, CONDITIONS.synchronized)).toMatchObject({
      status: "Unknown",
      reason: "MigrationCancelled",
    });
    expect(run.steps.find((x) => x.kind === "cancelMigration")).toMatchObject({
      event: { reason: "MigrationCancelled", message: expect.stringContaining("is being deleted") },
    });
    expect(end.capi?.metadata?.annotations?.[ANNOTATIONS.paused]).toBe("");
    expect(finalizersOf(end.capi)).toEqual(finalizersOf(world.s.capi));
    expect(finalizersOf(end.infraMachine)).not.toContain(FINALIZERS.awsMachine);
  });
});

describe("uninstall-prepare --resolve-migrations (SPEC §9): the same planner ends every open handover", () => {
  for (const { kind, from } of CASES)
    it(`${kind} ${from} → ${opposite(from)}: completes once step 9 began, else cancels; never starts one`, () => {
      for (const [i, world] of migratingStates(kind, from).entries()) {
        const where = `state ${i}`;
        const expected = stepNineBegun(world.s, from) ? opposite(from) : from;
        const run = runToRest(world, { resolveOpenHandovers: true });
        expect(statusAuthorityReading(run.world.s.mapi!), where).toBe(expected);
        expect(run.last, where).toEqual({ kind: "done", why: "steady" });
        expectFinalizersOf(run.world.s, expected);
        expectPauseStateOf(run.world.s, expected);
        expect(violationsOf([world.s, ...run.history]), where).toEqual([]);
      }
      // A stable object whose spec asks for a handover is left as it is.
      const pending = runToRest(worldOf(setSpecAuthority(stableSnapshot(kind, from), opposite(from))), {
        resolveOpenHandovers: true,
      });
      expect(statusAuthorityReading(pending.world.s.mapi!)).toBe(from);
      expect(pending.steps.filter((s) => s.kind !== "done")).toEqual([]);
    });
});
