/**
 * Property: drive the planner with the in-memory executor and the stand-in controllers in a random
 * order — with a planner that sometimes plans from a lagging cache (its writes then fail their
 * resourceVersion precondition or are corrected by the next plan), and a cancel or a deletion injected at
 * a random moment — and then let everything run fairly. From any stable state with spec flipped the
 * handover always comes to rest in a stable state, spec == status when nothing intervened, and I1–I4
 * hold over every observed state.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StableAuthority } from "../../src/kube/kinds.js";
import { isDeleting } from "../../src/kube/object.js";
import { planHandover } from "../../src/migration/planner.js";
import type { HandoverKind, HandoverSnapshot, Role } from "../../src/migration/snapshot.js";
import { objectOf } from "../../src/migration/snapshot.js";
import { isWrite } from "../../src/migration/steps.js";
import { opposite, statusAuthorityReading } from "../../src/protocol/authority.js";
import type { ActorName, World } from "./world.js";
import {
  ApiRefusal,
  act,
  applyStep,
  edit,
  markDeleting,
  runToRest,
  setSpecAuthority,
  setStatusField,
  stableSnapshot,
  violationsOf,
  worldOf,
} from "./world.js";

type Action = { type: "plan"; lag: number } | { type: "actor"; actor: ActorName };
/** A user flips spec.authoritativeAPI (a new request or a cancel), or deletes one involved object. */
type Intervention = { at: number } & ({ type: "flip" } | { type: "delete"; role: Role });

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ type: fc.constant("plan" as const), lag: fc.constantFrom(0, 0, 0, 1, 2, 3) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("actor" as const),
      actor: fc.constantFrom<ActorName>("mao", "capi", "capa", "sync"),
    }),
  },
);

const interventionArb = (kind: HandoverKind): fc.Arbitrary<Intervention> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ type: fc.constant("flip" as const), at: fc.nat(80) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        type: fc.constant("delete" as const),
        at: fc.nat(80),
        role: fc.constantFrom<Role>(
          ...(kind === "Machine" ? (["mapi", "capi", "infraMachine"] as const) : (["mapi", "capi"] as const)),
        ),
      }),
    },
  );

const scenarioArb = fc
  .record({
    kind: fc.constantFrom<HandoverKind>("Machine", "MachineSet"),
    from: fc.constantFrom<StableAuthority>("MachineAPI", "ClusterAPI"),
    // MAO copies spec → status without synchronizedAPI; the planner must repair it on the way.
    withoutSynchronizedAPI: fc.boolean(),
  })
  .chain(({ kind, from, withoutSynchronizedAPI }) =>
    fc.record({
      kind: fc.constant(kind),
      from: fc.constant(from),
      withoutSynchronizedAPI: fc.constant(withoutSynchronizedAPI),
      schedule: fc.array(actionArb, { maxLength: 80 }),
      interventions: fc.array(interventionArb(kind), { maxLength: 3 }),
    }),
  );

const specOf = (s: HandoverSnapshot): StableAuthority =>
  s.mapi?.spec?.authoritativeAPI === "ClusterAPI" ? "ClusterAPI" : "MachineAPI";

const intervene = (w: World, i: Intervention): World => {
  if (i.type === "flip") return { ...w, s: setSpecAuthority(w.s, opposite(specOf(w.s))), rv: w.rv + 1 };
  if (isDeleting(objectOf(w.s, i.role))) return w;
  return { ...w, rv: w.rv + 1, s: edit(w.s, i.role, (o) => markDeleting(o, w.now)) };
};

describe("model: random interleavings of planner, stand-ins, cancels and deletions", () => {
  it("always comes to rest in a stable state with I1–I4 holding after every observed change", () => {
    fc.assert(
      fc.property(scenarioArb, ({ kind, from, withoutSynchronizedAPI, schedule, interventions }) => {
        let initial = setSpecAuthority(stableSnapshot(kind, from), opposite(from));
        if (withoutSynchronizedAPI)
          initial = edit(initial, "mapi", (o) => setStatusField(o, "synchronizedAPI", undefined));
        let world = worldOf(initial);
        const history: HandoverSnapshot[] = [world.s];
        const observe = (next: World): void => {
          if (next !== world) {
            world = next;
            history.push(world.s);
          }
        };
        for (const [index, action] of schedule.entries()) {
          for (const i of interventions) if (i.at === index) observe(intervene(world, i));
          if (action.type === "actor") {
            observe(act(world, action.actor));
            continue;
          }
          // A lagging cache: plan from an older observed state; the write carries that state's
          // resourceVersion, so the API server refuses it if its target changed since.
          const seen = history[Math.max(0, history.length - 1 - action.lag)]!;
          const step = planHandover(seen, new Date(world.now));
          if (!isWrite(step)) continue;
          try {
            observe(applyStep(world, step));
          } catch (e) {
            if (!(e instanceof ApiRefusal) || action.lag === 0) throw e;
          }
        }
        const rest = runToRest(world);
        const end = rest.world.s.mapi!;
        const status = statusAuthorityReading(end);
        expect(status === "MachineAPI" || status === "ClusterAPI").toBe(true);
        expect(["done", "blocked"]).toContain(rest.last.kind);
        expect(violationsOf([...history, ...rest.history.slice(1)])).toEqual([]);
        const deleted = interventions.some((i) => i.type === "delete" && i.at < schedule.length);
        if (!deleted) {
          // Whatever the user flipped meanwhile, the last word wins.
          expect(status).toBe(specOf(rest.world.s));
          expect(rest.last).toEqual({ kind: "done", why: "steady" });
        }
      }),
      { numRuns: 300 },
    );
  });
});
