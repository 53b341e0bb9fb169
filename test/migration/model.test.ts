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
import { planHandover } from "../../src/migration/planner.js";
import type { HandoverKind, HandoverSnapshot, Role } from "../../src/migration/snapshot.js";
import { opposite, statusAuthorityOf } from "../../src/migration/snapshot.js";
import { isWrite } from "../../src/migration/steps.js";
import type { ActorName, World } from "./world.js";
import {
  ApiRefusal,
  act,
  applyStep,
  edit,
  markDeleting,
  runToRest,
  setSpecAuthority,
  stableSnapshot,
  violationsOf,
  worldOf,
} from "./world.js";

type Action = { type: "plan"; lag: number } | { type: "actor"; actor: ActorName };
type Intervention =
  | { type: "none" }
  | { type: "cancel"; at: number }
  | { type: "delete"; at: number; role: Role };

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
    fc.constant<Intervention>({ type: "none" }),
    fc.record({ type: fc.constant("cancel" as const), at: fc.nat(80) }),
    fc.record({
      type: fc.constant("delete" as const),
      at: fc.nat(80),
      role: fc.constantFrom<Role>(
        ...(kind === "Machine" ? (["mapi", "capi", "infraMachine"] as const) : (["mapi", "capi"] as const)),
      ),
    }),
  );

const scenarioArb = fc
  .record({
    kind: fc.constantFrom<HandoverKind>("Machine", "MachineSet"),
    from: fc.constantFrom<StableAuthority>("MachineAPI", "ClusterAPI"),
  })
  .chain(({ kind, from }) =>
    fc.record({
      kind: fc.constant(kind),
      from: fc.constant(from),
      schedule: fc.array(actionArb, { maxLength: 80 }),
      intervention: interventionArb(kind),
    }),
  );

const intervene = (w: World, i: Intervention, from: StableAuthority): World => {
  if (i.type === "cancel") return { ...w, s: setSpecAuthority(w.s, from), rv: w.rv + 1 };
  if (i.type === "delete") return { ...w, rv: w.rv + 1, s: edit(w.s, i.role, (o) => markDeleting(o, w.now)) };
  return w;
};

describe("model: random interleavings of planner, stand-ins, cancels and deletions", () => {
  it("always comes to rest in a stable state with I1–I4 holding after every observed change", () => {
    fc.assert(
      fc.property(scenarioArb, ({ kind, from, schedule, intervention }) => {
        let world = worldOf(setSpecAuthority(stableSnapshot(kind, from), opposite(from)));
        const history: HandoverSnapshot[] = [world.s];
        const observe = (next: World): void => {
          if (next !== world) {
            world = next;
            history.push(world.s);
          }
        };
        for (const [index, action] of schedule.entries()) {
          if (intervention.type !== "none" && intervention.at === index)
            observe(intervene(world, intervention, from));
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
        const status = statusAuthorityOf(end);
        expect(status === "MachineAPI" || status === "ClusterAPI").toBe(true);
        expect(["done", "blocked"]).toContain(rest.last.kind);
        expect(violationsOf([...history, ...rest.history.slice(1)])).toEqual([]);
        const intervened = intervention.type !== "none" && intervention.at < schedule.length;
        if (!intervened) {
          expect(status).toBe(opposite(from));
          expect(rest.last).toEqual({ kind: "done", why: "steady" });
        } else if (intervention.type === "cancel") {
          // A cancel after completion starts a handover back, which then also completes.
          expect(status).toBe(from);
          expect(rest.last).toEqual({ kind: "done", why: "steady" });
        }
      }),
      { numRuns: 300 },
    );
  });
});
