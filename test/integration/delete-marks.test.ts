/**
 * SPEC §4.4 delete marks through the API server (issue 19 #5): the whole product — the real webhook, the sync
 * and migration controllers on their shared cache — with the simulated providers. A user marks or un-marks
 * either copy of a Machine as `admin` with a plain merge patch, the way `oc annotate` does; the mark reaches
 * the other copy, and a withdrawn mark is withdrawn from the other copy instead of being copied back. The
 * same holds when the edit happens while the product is down and a fresh process (new cache, nothing in
 * memory) picks it up from the objects alone, and it decides which Machine the next scale-down removes.
 * Waiting polls for a state; nothing asserts elapsed time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError } from "../../src/kube/errors.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { annotationsOf, conditionOf, getPath, nameOf, ownerReferencesOf } from "../../src/kube/object.js";
import { mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { SYNCED_DELETE_MARKS } from "../../src/sync/desired.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";

const MAPI_MARK = "machine.openshift.io/delete-machine";
const CAPI_MARK = "cluster.x-k8s.io/delete-machine";
const ALL_MARKS = [MAPI_MARK, "machine.openshift.io/cluster-api-delete-machine", CAPI_MARK];

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "delete-marks" });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

type Side = "MAPI" | "CAPI";
const typeOf = (side: Side): ResourceType => (side === "MAPI" ? KINDS.mapiMachine : KINDS.capiMachine);
const nsOf = (side: Side): string => (side === "MAPI" ? MAPI_NS : CAPI_NS);
const other = (side: Side): Side => (side === "MAPI" ? "CAPI" : "MAPI");
const markOf = (side: Side): string => (side === "MAPI" ? MAPI_MARK : CAPI_MARK);

const read = (side: Side, name: string): Promise<KubeObject> => h.admin.get(typeOf(side), nsOf(side), name);
const marksOf = (o: KubeObject): Record<string, string> =>
  Object.fromEntries(Object.entries(annotationsOf(o)).filter(([k]) => ALL_MARKS.includes(k)));

/** `oc annotate` as a user: a merge patch of one annotation (`null` removes it). */
const annotate = (side: Side, name: string, value: string | null): Promise<KubeObject> =>
  h.admin.patch(typeOf(side), nsOf(side), name, {
    type: "merge",
    body: { metadata: { annotations: { [markOf(side)]: value } } },
  });

const waitForMark = (side: Side, name: string, value: string | undefined) =>
  h.waitFor(`${side} Machine ${name} ${value === undefined ? "unmarked" : `marked ${value}`}`, async () => {
    const o = await read(side, name);
    return annotationsOf(o)[markOf(side)] === value && o;
  });

/** Both copies carry `value` (or no mark at all), the record agrees, and it stays so once everyone is idle. */
const expectSettled = async (name: string, value: string | undefined): Promise<void> => {
  await h.quiesce(20_000);
  const [mapi, capi] = [await read("MAPI", name), await read("CAPI", name)];
  expect(marksOf(mapi)).toEqual(value === undefined ? {} : { [MAPI_MARK]: value });
  expect(marksOf(capi)).toEqual(value === undefined ? {} : { [CAPI_MARK]: value });
  if (value === undefined) expect(annotationsOf(mapi)[SYNCED_DELETE_MARKS]).toBeUndefined();
  else expect(JSON.parse(annotationsOf(mapi)[SYNCED_DELETE_MARKS] ?? "[]")).toEqual([CAPI_MARK, MAPI_MARK]);
};

const userMachine = (name: string, authority: "MachineAPI" | "ClusterAPI"): KubeObject => {
  const m = mapiMachine(ns, name, "a");
  return { ...m, spec: { ...m.spec, authoritativeAPI: authority } };
};

/** A Machine of `authority` whose twins exist and are synchronized (the authoritative side Running). */
const synchronizedMachine = async (name: string, authority: "MachineAPI" | "ClusterAPI") => {
  await h.admin.create(KINDS.mapiMachine, userMachine(name, authority));
  await h.waitFor(`Machine ${name} Running on both copies and synchronized`, async () => {
    const mapi = await read("MAPI", name);
    const capi = await read("CAPI", name).catch(() => undefined);
    return (
      capi !== undefined &&
      getPath(mapi, ["status", "phase"]) === "Running" &&
      typeof mapi.spec?.providerID === "string" &&
      conditionOf(mapi, "Synchronized")?.status === "True" &&
      mapi
    );
  });
  await h.quiesce(20_000);
};

/** The product's controllers stop (a crash: nothing released); the next `restartProduct` starts fresh ones. */
const stopProductControllers = async (): Promise<void> => {
  await Promise.all(h.controllers().map((c) => c.stop()));
};

describe("SPEC §4.4 delete marks are carried both ways, and withdrawn both ways", () => {
  it.each([
    ["MachineAPI", "marks-mapi"],
    ["ClusterAPI", "marks-capi"],
  ] as const)(
    "%s Machine: a mark added to either copy reaches the other; removed from either copy it is removed from the other",
    async (authority, name) => {
      await synchronizedMachine(name, authority);

      for (const [marked, unmarked] of [
        ["MAPI", "CAPI"],
        ["CAPI", "MAPI"],
        ["MAPI", "MAPI"],
        ["CAPI", "CAPI"],
      ] as const) {
        await annotate(marked, name, "true");
        await waitForMark(other(marked), name, "true");
        await expectSettled(name, "true");

        await annotate(unmarked, name, null);
        await waitForMark(other(unmarked), name, undefined);
        await expectSettled(name, undefined);
      }
      expect(h.violations()).toEqual([]);
      expect(await h.ledgerViolations()).toEqual([]);
    },
    180_000,
  );

  it("across a product restart: marks added or removed while the product is down are carried, not undone", async () => {
    const machines = [
      ["marks-restart-mapi", "MachineAPI"],
      ["marks-restart-capi", "ClusterAPI"],
    ] as const;
    for (const [name, authority] of machines) await synchronizedMachine(name, authority);

    // Added while the product is down, on the copy that is not authoritative.
    await stopProductControllers();
    await annotate("CAPI", "marks-restart-mapi", "true");
    await annotate("MAPI", "marks-restart-capi", "true");
    await h.restartProduct();
    await waitForMark("MAPI", "marks-restart-mapi", "true");
    await waitForMark("CAPI", "marks-restart-capi", "true");
    for (const [name] of machines) await expectSettled(name, "true");

    // Removed while the product is down, from the copy the mark was added to: a fresh process must tell the
    // removal from an addition on the other copy (the record on the MAPI Machine), and never copy it back.
    await stopProductControllers();
    await annotate("CAPI", "marks-restart-mapi", null);
    await annotate("MAPI", "marks-restart-capi", null);
    await h.restartProduct();
    await waitForMark("MAPI", "marks-restart-mapi", undefined);
    await waitForMark("CAPI", "marks-restart-capi", undefined);
    for (const [name] of machines) await expectSettled(name, undefined);

    // And from the authoritative copy, across another restart.
    for (const [name] of machines) {
      await annotate("MAPI", name, "again");
      await waitForMark("CAPI", name, "again");
      await expectSettled(name, "again");
    }
    await stopProductControllers();
    await annotate("MAPI", "marks-restart-mapi", null);
    await annotate("CAPI", "marks-restart-capi", null);
    await h.restartProduct();
    await waitForMark("CAPI", "marks-restart-mapi", undefined);
    await waitForMark("MAPI", "marks-restart-capi", undefined);
    for (const [name] of machines) await expectSettled(name, undefined);
    expect(h.violations()).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
  }, 180_000);

  it("a scale-down after an un-mark removes the Machine still marked, not the one the user un-marked", async () => {
    const set = mapiMachineSet(ns, "c", 2);
    const setName = nameOf(set);
    await h.admin.create(KINDS.mapiMachineSet, set);
    const members = async () =>
      (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((m) =>
        ownerReferencesOf(m).some((r) => r.kind === "MachineSet" && r.name === setName),
      );
    const [kept, victim] = await h.waitFor("two Running, synchronized members with CAPI twins", async () => {
      const items = await members();
      if (items.length !== 2) return false;
      for (const m of items) {
        if (getPath(m, ["status", "phase"]) !== "Running") return false;
        if (conditionOf(m, "Synchronized")?.status !== "True") return false;
        if (!(await read("CAPI", nameOf(m)).catch(() => undefined))) return false;
      }
      return items.map(nameOf).sort();
    });
    if (!kept || !victim) throw new Error("the MachineSet has no two members");
    await h.quiesce(20_000);

    // The user marks one Machine on its CAPI copy, changes their mind, and marks the other instead.
    await annotate("CAPI", kept, "true");
    await waitForMark("MAPI", kept, "true");
    await annotate("CAPI", kept, null);
    await annotate("CAPI", victim, "true");
    await waitForMark("MAPI", victim, "true");
    await waitForMark("MAPI", kept, undefined);
    await expectSettled(kept, undefined);
    await expectSettled(victim, "true");

    await h.admin.patch(KINDS.mapiMachineSet, MAPI_NS, setName, {
      type: "merge",
      body: { spec: { replicas: 1 } },
    });
    await h.waitFor(`${victim} gone from both APIs`, async () => {
      const gone = async (side: Side) =>
        read(side, victim).then(
          () => false,
          (e: unknown) => e instanceof NotFoundError,
        );
      return (await gone("MAPI")) && (await gone("CAPI"));
    });
    await h.quiesce(20_000);
    expect((await members()).map(nameOf)).toEqual([kept]);
    expect(marksOf(await read("MAPI", kept))).toEqual({});
    expect(h.violations()).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
  }, 180_000);
});
