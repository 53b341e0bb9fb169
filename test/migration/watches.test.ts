/**
 * SPEC §3: a MachineSet's member Machines wake its handover controller only while the handover is open,
 * which is when `planHandover` reads them (`readsMembers`). The controller's watch table runs on the real
 * controller runtime with a reconcile that does nothing, so the queue shows what each event wakes; a property
 * test shows that a set whose handover is not open plans the same whatever its members are.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { CONDITIONS, KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { planHandover, readsMembers } from "../../src/migration/planner.js";
import type { HandoverSnapshot } from "../../src/migration/snapshot.js";
import { migrationWatches } from "../../src/migration/watches.js";
import { fakeCache, watchRig } from "../kube/fakes.js";
import { CAPI_NS, clone, MAPI_NS, membersOf, stableSnapshot, T0 } from "./world.js";

const NAMESPACES = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
const SET = "worker-a";

const withAuthority = (set: KubeObject, spec: unknown, status: unknown): KubeObject => {
  const o = clone(set);
  const specOf = (o.spec ?? {}) as Record<string, unknown>;
  const statusOf = (o.status ?? {}) as Record<string, unknown>;
  if (spec === undefined) delete specOf.authoritativeAPI;
  else specOf.authoritativeAPI = spec;
  if (status === undefined) delete statusOf.authoritativeAPI;
  else statusOf.authoritativeAPI = status;
  return { ...o, spec: specOf, status: statusOf };
};

describe("SPEC §3 (MachineSets): the plan reads the members only while the handover is open", () => {
  const set = stableSnapshot("MachineSet", "MachineAPI").mapi as KubeObject;
  it.each([
    ["steady under MachineAPI", "MachineAPI", "MachineAPI", false],
    ["steady under ClusterAPI", "ClusterAPI", "ClusterAPI", false],
    ["status not yet set (step 2)", "ClusterAPI", undefined, false],
    ["spec invalid (blocked)", "Sideways", "MachineAPI", false],
    ["status invalid (blocked)", "MachineAPI", "Sideways", false],
    ["flipped, not yet started (step 4)", "ClusterAPI", "MachineAPI", true],
    ["flipped back from ClusterAPI (step 4)", "MachineAPI", "ClusterAPI", true],
    ["Migrating (steps 5–11)", "ClusterAPI", "Migrating", true],
    ["Migrating, cancelled (§3.3)", "MachineAPI", "Migrating", true],
  ])("%s: spec %s, status %s → reads members: %s", (_what, spec, status, expected) => {
    expect(readsMembers(withAuthority(set, spec, status))).toBe(expected);
  });
  it("a set that is not in the cache reads nothing", () => {
    expect(readsMembers(undefined)).toBe(false);
  });

  // What a member can look like to the planner: twinned or not, owned or not, synchronised or not, deleting.
  const memberEdit = fc.record({
    dropMapi: fc.boolean(),
    dropCapi: fc.boolean(),
    unowned: fc.boolean(),
    unlabelled: fc.boolean(),
    synchronized: fc.constantFrom("True", "False", "Unknown", undefined),
    deleting: fc.boolean(),
  });
  type MemberEdit = typeof memberEdit extends fc.Arbitrary<infer T> ? T : never;
  const withMembers = (s: HandoverSnapshot, edits: readonly MemberEdit[]) => {
    const out = clone(s);
    const members = membersOf(SET, edits.length);
    const mapi: KubeObject[] = [];
    const capi: KubeObject[] = [];
    edits.forEach((e, i) => {
      for (const [side, list, drop] of [
        ["mapi", members.mapi, e.dropMapi],
        ["capi", members.capi, e.dropCapi],
      ] as const) {
        const m = list[i] as KubeObject;
        if (drop) continue;
        const meta = m.metadata ?? {};
        if (e.unowned) meta.ownerReferences = [];
        if (e.unlabelled) meta.labels = {};
        if (e.deleting) meta.deletionTimestamp = new Date(T0).toISOString();
        if (side === "mapi")
          m.status = e.synchronized
            ? { conditions: [{ type: CONDITIONS.synchronized, status: e.synchronized, reason: "Any" }] }
            : {};
        (side === "mapi" ? mapi : capi).push(m);
      }
    });
    out.members = { mapi, capi };
    return out;
  };
  const closed: [string, HandoverSnapshot][] = [
    ["steady under MachineAPI", stableSnapshot("MachineSet", "MachineAPI", SET)],
    ["steady under ClusterAPI", stableSnapshot("MachineSet", "ClusterAPI", SET)],
    [
      "steady, its CAPI twin unpaused (step 3 repairs it)",
      (() => {
        const s = stableSnapshot("MachineSet", "MachineAPI", SET);
        if (s.capi?.metadata) s.capi.metadata.annotations = {};
        return s;
      })(),
    ],
    [
      "status not yet set",
      (() => {
        const s = stableSnapshot("MachineSet", "MachineAPI", SET);
        return { ...s, mapi: withAuthority(s.mapi as KubeObject, "MachineAPI", undefined) };
      })(),
    ],
  ];
  it.each(closed)("%s: the plan is the same whatever the members are (property)", (_what, base) => {
    expect(readsMembers(base.mapi)).toBe(false);
    const now = new Date(T0);
    const expected = planHandover(base, now);
    fc.assert(
      fc.property(fc.array(memberEdit, { maxLength: 4 }), (edits) => {
        expect(planHandover(withMembers(base, edits), now)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
  it("the control: an open set's plan does depend on its members", () => {
    const base = stableSnapshot("MachineSet", "MachineAPI", SET);
    const open = { ...base, mapi: withAuthority(base.mapi as KubeObject, "ClusterAPI", "MachineAPI") };
    const missingTwin = withMembers(open, [
      {
        dropMapi: false,
        dropCapi: true,
        unowned: false,
        unlabelled: false,
        synchronized: "True",
        deleting: false,
      },
    ]);
    expect(planHandover(missingTwin, new Date(T0))).not.toEqual(planHandover(open, new Date(T0)));
  });
});

describe("SPEC §3 (MachineSets): what wakes the handover controller of a set", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  const rig = async (spec: string, status: string) => {
    const cache = fakeCache();
    const s = stableSnapshot("MachineSet", "MachineAPI", SET);
    const set = withAuthority(s.mapi as KubeObject, spec, status);
    cache.informer(KINDS.mapiMachineSet, MAPI_NS).add(set);
    cache.informer(KINDS.capiMachineSet, CAPI_NS).add(s.capi as KubeObject);
    const members = membersOf(SET, 2);
    for (const m of members.mapi) cache.informer(KINDS.mapiMachine, MAPI_NS).add(m);
    for (const m of members.capi) cache.informer(KINDS.capiMachine, CAPI_NS).add(m);
    const r = await watchRig(cache, migrationWatches("MachineSet", NAMESPACES, [KINDS.awsMachine], cache));
    stops.push(r.stop);
    const touched = (m: KubeObject): KubeObject => ({
      ...m,
      metadata: { ...m.metadata, resourceVersion: `${Number(m.metadata?.resourceVersion ?? 1) + 1}` },
      status: { ...(m.status ?? {}), phase: "Running" },
    });
    return {
      ...r,
      set,
      cache,
      mapiMember: () =>
        cache.informer(KINDS.mapiMachine, MAPI_NS).update(touched(members.mapi[0] as KubeObject)),
      capiMember: () =>
        cache.informer(KINDS.capiMachine, CAPI_NS).update(touched(members.capi[0] as KubeObject)),
    };
  };

  it.each([
    ["MachineAPI", "MachineAPI"],
    ["ClusterAPI", "ClusterAPI"],
  ])("steady (spec %s, status %s): a member's change on either side wakes nothing", async (spec, status) => {
    const r = await rig(spec, status);
    expect(await r.woken(r.mapiMember)).toBe(0);
    expect(await r.woken(r.capiMember)).toBe(0);
  });

  it.each([
    ["ClusterAPI", "MachineAPI"],
    ["ClusterAPI", "Migrating"],
    ["MachineAPI", "Migrating"],
  ])("open (spec %s, status %s): a member's change on either side wakes the set", async (spec, status) => {
    const r = await rig(spec, status);
    expect(await r.woken(r.mapiMember)).toBe(1);
    expect(await r.woken(r.capiMember)).toBe(1);
  });

  it("a set flipped after a member changed: its own event wakes it, and members wake it from then on", async () => {
    const r = await rig("MachineAPI", "MachineAPI");
    expect(await r.woken(r.mapiMember)).toBe(0);
    const flipped = withAuthority(r.set, "ClusterAPI", "MachineAPI");
    expect(await r.woken(() => r.cache.informer(KINDS.mapiMachineSet, MAPI_NS).update(flipped))).toBe(1);
    expect(await r.woken(r.capiMember)).toBe(1);
  });
});
