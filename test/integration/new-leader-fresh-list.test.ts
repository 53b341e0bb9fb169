/**
 * Found by an audit of the controller runtime: a standby's view of MAPI Machines still held an old Machine
 * `reuse-0` while it was being deleted; the old Machine was released, the user re-created `reuse-0` and the
 * leader created its paused twin; the leader then failed over onto that standby, which started its
 * controllers on its cache as it was. It paired the old, deleting MAPI Machine with the new twin and deleted
 * the new CAPI Machine and AWSMachine; once its view caught up it saw the twin deleting and deleted the new
 * MAPI Machine: both instances terminated, one of them asked for by no one (I6). SPEC §3.5: "A leader that has
 * just acquired the Lease acts on nothing until its caches have caught up with a fresh list" — here the new
 * leader's list of MAPI Machines is held with the rest of that view, so it reconciles nothing until the view is
 * released, and then reconciles what the API server has.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeApiError } from "../../src/kube/errors.js";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import { getPath } from "../../src/kube/object.js";
import { mapiMachine } from "../../src/local/seed.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    name: "new-leader-fresh-list",
    watchEverything: true,
    standby: true,
    requireRecordedDeletes: true,
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const live = async (type: ResourceType, namespace: string, name: string) => {
  try {
    return await h.admin.get(type, namespace, name);
  } catch (e) {
    if (e instanceof KubeApiError && e.code === 404) return undefined;
    throw e;
  }
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The MachineSync reconciles counted so far, by every replica (the harness's replicas share one registry). */
const machineSyncReconciles = async (): Promise<number> =>
  (await h.metrics.reconcileTotal.get()).values
    .filter((v) => v.labels.controller === "machine-sync")
    .reduce((sum, v) => sum + v.value, 0);

describe("SPEC §3.5/I6: a new leader whose view of MAPI Machines lags", () => {
  it("acts on nothing until it has listed afresh, and never deletes a re-created Machine of the same name", async () => {
    const name = "reuse-0";
    await h.admin.create(KINDS.mapiMachine, mapiMachine(ns, name, "a"));
    h.watch("Machine", name);
    await h.steady({ kind: "Machine", name }, "MachineAPI", 30_000);
    await h.waitFor(
      "the first Machine running",
      async () => getPath(await live(KINDS.mapiMachine, MAPI_NS, name), ["status", "phase"]) === "Running",
      30_000,
    );
    const oldUid = (await live(KINDS.mapiMachine, MAPI_NS, name))?.metadata?.uid;

    // With MAO stopped the deleting Machine stays a while, so the standby's view shows it deleting; then that
    // view is held there while the old Machine and its twins are released.
    await h.stopStandIn("mao");
    await h.userDelete(KINDS.mapiMachine, MAPI_NS, name, { kind: "Machine", name });
    await h.waitFor(
      "the standby's view showing the Machine deleting",
      () => {
        const cached = h.productCache().get(KINDS.mapiMachine, MAPI_NS, name);
        return cached?.metadata?.deletionTimestamp !== undefined;
      },
      10_000,
    );
    await sleep(1_000);
    h.holdWatch("standby", KINDS.mapiMachine);
    await h.startStandIn("mao");
    await h.waitFor(
      "the first Machine and its twins gone",
      async () =>
        (await live(KINDS.mapiMachine, MAPI_NS, name)) === undefined &&
        (await live(KINDS.capiMachine, CAPI_NS, name)) === undefined &&
        (await live(KINDS.awsMachine, CAPI_NS, name)) === undefined,
      30_000,
    );

    // The user re-creates the Machine under the same name; the leader gives it a paused twin.
    await h.admin.create(KINDS.mapiMachine, mapiMachine(ns, name, "a"));
    const recreated = await h.waitFor(
      "the re-created Machine running, with its twin",
      async () => {
        const m = await live(KINDS.mapiMachine, MAPI_NS, name);
        const twin = await live(KINDS.capiMachine, CAPI_NS, name);
        return m?.metadata?.uid !== oldUid && getPath(m, ["status", "phase"]) === "Running" && twin
          ? m
          : undefined;
      },
      30_000,
    );
    const newUid = recreated?.metadata?.uid;
    expect(newUid).toBeDefined();

    // The leader dies; once its controllers are stopped and their last reconcile returned (the Lease has
    // well over a second to run out), the count is taken: from here on only the new leader reconciles.
    const oldControllers = h.controllers();
    const failedOver = h.failover();
    await h.waitFor("the old leader's controllers stopped", () =>
      oldControllers.every((c) => !c.isRunning()),
    );
    await sleep(300);
    const reconcilesBefore = await machineSyncReconciles();
    await failedOver;
    await sleep(3_000);
    expect(await machineSyncReconciles()).toBe(reconcilesBefore);
    expect((await live(KINDS.capiMachine, CAPI_NS, name))?.metadata?.deletionTimestamp).toBeUndefined();

    h.releaseWatches();
    await h.waitFor(
      "the new leader reconciling",
      async () => (await machineSyncReconciles()) > reconcilesBefore,
      10_000,
    );
    await h.quiesce(30_000);

    const after = await live(KINDS.mapiMachine, MAPI_NS, name);
    expect(after?.metadata?.uid).toBe(newUid);
    expect(after?.metadata?.deletionTimestamp).toBeUndefined();
    const twin = await live(KINDS.capiMachine, CAPI_NS, name);
    expect(twin?.metadata?.deletionTimestamp).toBeUndefined();
    expect(await h.ledgerViolations()).toEqual([]);
  }, 120_000);
});
