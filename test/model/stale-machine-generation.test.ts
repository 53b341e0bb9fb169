/**
 * Decision 163, the Machine-level twin of decision 160, with the model's own harness: Cluster API propagates a
 * ClusterAPI MachineSet's `minReadySeconds` to its Machines in place, so a member's CAPI copy moves to a new
 * generation, and the sync records that generation on the MAPI copy. A new leader whose view of CAPI Machines
 * lags behind it mirrored the older view: it asked for a lower `status.synchronizedGeneration`, which the MAPI
 * CRD's transition rule refuses (I4), and reported each refusal as a Warning Event (`FailedToUpdateMAPIMachine`,
 * nine of them on both API servers) on a Machine that was in sync all along — and it would have put back any
 * spec the older view lacked. A view older than the record is now confirmed live first, and nothing is
 * written from it.
 */
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/kube/kinds.js";
import { conditionOf, generationOf, getPath, type KubeObject, nameOf } from "../../src/kube/object.js";
import { CAPI_NS, MAPI_NS } from "../integration/harness.js";
import { scenarioCommands as c, type ModelStats, type Real } from "./model.js";
import { useModelHarness } from "./use-harness.js";

let run = 9_200;

const harness = useModelHarness("stale-machine-generation");

describe("§4.4 a ClusterAPI Machine's CAPI copy moves on while the standby's view of it lags, then a failover (decision 163)", () => {
  it("the MAPI copy stays Synchronized=True and keeps the generation it recorded; nothing is refused", async () => {
    const stats: ModelStats = { runs: 0, commands: {} };
    const r: Real = { h: harness(), run: run++, stats, trace: [] };
    const m = await c.setUp(r, 30_000);
    const h = r.h;
    // The ClusterAPI set's member (set 1 of the model is ClusterAPI).
    const member = (await h.admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items
      .map(nameOf)
      .find((n) => n.startsWith(`model-r${r.run}-s1-`));
    expect(member).toBeDefined();
    const name = member as string;
    h.watch("Machine", name);
    const mapiNow = () => h.admin.get(KINDS.mapiMachine, MAPI_NS, name);
    await c.holdWatch("standby", "capiMachines").run(m, r);
    // As Cluster API's MachineSet controller propagates minReadySeconds in place: a new generation.
    const moved = await h.admin.patch(KINDS.capiMachine, CAPI_NS, name, {
      type: "merge",
      body: { spec: { minReadySeconds: 30 } },
    });
    const generation = generationOf(moved);
    await h.waitFor(
      "the leader recorded the CAPI copy's new generation",
      async () => getPath(await mapiNow(), ["status", "synchronizedGeneration"]) === generation,
      30_000,
    );
    for (const step of [c.failover(), c.wait(1_500), c.releaseWatches(), c.wait(1_500)]) await step.run(m, r);
    await c.converge(r, m, 30_000);
    const after: KubeObject = await mapiNow();
    expect(getPath(after, ["status", "synchronizedGeneration"])).toBe(generation);
    expect(conditionOf(after, "Synchronized")?.status).toBe("True");
    expect((await h.eventReasons({ kind: "Machine", name })).filter((reason) => /Fail/.test(reason))).toEqual(
      [],
    );
  }, 120_000);
});
