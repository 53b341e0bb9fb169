/**
 * SPEC §2.2 through the API server: the cluster autoscaler — a client authenticated as its service account,
 * `system:serviceaccount:openshift-machine-api:cluster-autoscaler` — scales MAPI MachineSets through their
 * `scale` subresource and marks the Machines it removes, on a migrated set (set and members ClusterAPI) and
 * a mixed set (set ClusterAPI, members still MachineAPI). The product carries its `replicas` to the
 * authoritative CAPI copy instead of undoing them, only once the marks are on the CAPI copies, so Cluster
 * API removes exactly the Machine the autoscaler chose. The whole product runs (harness.ts): the real
 * webhook, the sync and migration controllers and the simulated providers; I1–I4 and the instance ledger
 * are checked at the end. Waiting polls for a state; nothing asserts elapsed time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config.js";
import { NotFoundError } from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath, nameOf, ownerReferencesOf } from "../../src/kube/object.js";
import { mapiMachineSet } from "../../src/local/seed.js";
import { CAPI_NS, CONTROLLER_USERS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";

const AUTOSCALER = "system:serviceaccount:openshift-machine-api:cluster-autoscaler";
const MAPI_MARK = "machine.openshift.io/delete-machine";

// The webhook configurations and the engine skip the product's default controllerUsers (src/config.ts),
// which name the autoscaler since SPEC v5 §2.2; the harness's own list predates that, so this file extends
// it (its module is this file's alone) before the harness registers the webhooks.
for (const user of SETTINGS.controllerUsers.default)
  if (!CONTROLLER_USERS.includes(user)) CONTROLLER_USERS.push(user);

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "autoscaler" });
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

const autoscaler = () => h.cluster.clientAs("autoscaler");

/** What cluster-autoscaler does to scale a MachineSet: a write of its `scale` subresource. */
const scaleTo = (setName: string, replicas: number) =>
  autoscaler().patch(
    KINDS.mapiMachineSet,
    MAPI_NS,
    setName,
    { type: "merge", body: { spec: { replicas } } },
    { subresource: "scale" },
  );

/** What cluster-autoscaler does before a scale-down: it marks the Machine it chose (on the MAPI copy). */
const markForDeletion = (machine: string) =>
  autoscaler().patch(KINDS.mapiMachine, MAPI_NS, machine, {
    type: "merge",
    body: { metadata: { annotations: { [MAPI_MARK]: "autoscaler" } } },
  });

const membersOf = async (setName: string): Promise<KubeObject[]> =>
  (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((m) =>
    ownerReferencesOf(m).some((r) => r.kind === "MachineSet" && r.name === setName),
  );

const capiMembersOf = async (setName: string): Promise<KubeObject[]> =>
  (await h.admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items.filter((m) =>
    ownerReferencesOf(m).some((r) => r.kind === "MachineSet" && r.name === setName),
  );

const replicasOf = async (setName: string) => ({
  mapi: getPath(await h.admin.get(KINDS.mapiMachineSet, MAPI_NS, setName), ["spec", "replicas"]),
  capi: getPath(await h.admin.get(KINDS.capiMachineSet, CAPI_NS, setName), ["spec", "replicas"]),
});

/** `n` members on both APIs, each Running with a providerID and Synchronized=True on its MAPI copy. */
const waitForMembers = (setName: string, n: number): Promise<string[]> =>
  h.waitFor(
    `${n} Running, synchronized members of ${setName} on both APIs`,
    async () => {
      const mapi = (await membersOf(setName)).filter((m) => !m.metadata?.deletionTimestamp);
      const capi = (await capiMembersOf(setName)).filter((m) => !m.metadata?.deletionTimestamp);
      if (mapi.length !== n || capi.length !== n) return false;
      for (const m of mapi) {
        if (getPath(m, ["status", "phase"]) !== "Running") return false;
        if (conditionOf(m, "Synchronized")?.status !== "True") return false;
      }
      const names = mapi.map(nameOf).sort();
      return JSON.stringify(names) === JSON.stringify(capi.map(nameOf).sort()) && names;
    },
    60_000,
  );

const goneFromBothApis = (machine: string) =>
  h.waitFor(
    `${machine} gone from both APIs`,
    async () => {
      const gone = async (type: typeof KINDS.mapiMachine, namespace: string) =>
        h.admin.get(type, namespace, machine).then(
          () => false,
          (e: unknown) => e instanceof NotFoundError,
        );
      return (await gone(KINDS.mapiMachine, MAPI_NS)) && (await gone(KINDS.capiMachine, CAPI_NS));
    },
    60_000,
  );

/** A MachineSet with two Running members, handed over to ClusterAPI; with `members`, its Machines too. */
const clusterApiSet = async (
  zone: string,
  members: boolean,
): Promise<{ setName: string; original: string[] }> => {
  const set = mapiMachineSet(ns, zone, 2);
  const setName = nameOf(set);
  await h.admin.create(KINDS.mapiMachineSet, set);
  const original = await waitForMembers(setName, 2);
  await h.quiesce(30_000);
  const watched = h.watch("MachineSet", setName);
  await h.setSpecAuthority("MachineSet", setName, "ClusterAPI");
  await h.steady(watched, "ClusterAPI", 60_000);
  if (members)
    for (const name of original) {
      const w = h.watch("Machine", name);
      await h.setSpecAuthority("Machine", name, "ClusterAPI");
      await h.steady(w, "ClusterAPI", 60_000);
    }
  await h.quiesce(30_000);
  return { setName, original };
};

describe("SPEC §2.2 the cluster autoscaler scales a ClusterAPI MachineSet through its MAPI copy", () => {
  it.each([
    ["migrated set (set and members ClusterAPI)", "a", true],
    ["mixed set (set ClusterAPI, members MachineAPI)", "b", false],
  ] as const)(
    "%s: scale up and down reach the CAPI copy; the marked Machine is the one removed",
    async (_what, zone, migrateMembers) => {
      const { setName, original } = await clusterApiSet(zone, migrateMembers);
      expect(await replicasOf(setName)).toEqual({ mapi: 2, capi: 2 });

      // Up: the scale is admitted (the autoscaler is exempt), carried to the CAPI copy, and not undone.
      await scaleTo(setName, 3);
      const three = await waitForMembers(setName, 3);
      await h.quiesce(30_000);
      expect(await replicasOf(setName)).toEqual({ mapi: 3, capi: 3 });
      const added = three.filter((n) => !original.includes(n));
      expect(added).toHaveLength(1);
      // Cluster API made it, so it is ClusterAPI whatever its set-mates are.
      const addedMapi = await h.admin.get(KINDS.mapiMachine, MAPI_NS, added[0] ?? "");
      expect(getPath(addedMapi, ["status", "authoritativeAPI"])).toBe("ClusterAPI");

      // Down: the autoscaler marks one of the original Machines (not the newest, which Cluster API would
      // pick by itself), then scales; only that one goes, from both APIs.
      const chosen = original[0] ?? "";
      await markForDeletion(chosen);
      await scaleTo(setName, 2);
      await goneFromBothApis(chosen);
      const two = await waitForMembers(setName, 2);
      await h.quiesce(30_000);
      expect(two).toEqual(three.filter((n) => n !== chosen));
      expect(await replicasOf(setName)).toEqual({ mapi: 2, capi: 2 });

      expect(h.violations()).toEqual([]);
      expect(await h.ledgerViolations()).toEqual([]);
    },
    240_000,
  );

  it("anyone else is still refused: an admin's scale of the ClusterAPI set's MAPI copy (rule mapi-frozen)", async () => {
    const set = (await h.admin.list(KINDS.mapiMachineSet, { namespace: MAPI_NS })).items.find(
      (s) => getPath(s, ["status", "authoritativeAPI"]) === "ClusterAPI",
    );
    expect(set).toBeDefined();
    await expect(
      h.admin.patch(
        KINDS.mapiMachineSet,
        MAPI_NS,
        nameOf(set ?? {}),
        { type: "merge", body: { spec: { replicas: 5 } } },
        { subresource: "scale" },
      ),
    ).rejects.toThrow(/mapi-frozen/);
    // The scales above were the autoscaler's own requests, as the API server counted them.
    const byAutoscaler = Object.keys(h.counters().byKey).filter((k) => k.split(" ")[2] === AUTOSCALER);
    expect(byAutoscaler.some((k) => k.includes("scale"))).toBe(true);
  });
});
