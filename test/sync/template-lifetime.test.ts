/**
 * SPEC §4.6 templates (issue 23): a labelled AWSMachineTemplate — one the sync made for a MachineSet — goes
 * with the CAPI MachineSet it was made for, whichever API is authoritative, but never while another CAPI
 * MachineSet still references it (that set's controller would be left unable to create Machines); it goes
 * once no set references it, and the last reference going away brings its set's key back to delete it.
 */
import { describe, expect, it } from "vitest";
import { FINALIZERS, INFRA_API_VERSION } from "../../src/kube/kinds.js";
import { planMachineSetSync } from "../../src/sync/plan.js";
import { machineSetKeysFor } from "../../src/sync/snapshot.js";
import {
  awsMachineTemplate,
  CAPI_NS,
  capiCluster,
  capiMachineSet,
  deleting,
  deps,
  infrastructure,
  MAPI_NS,
  NOW,
  templateNameFor,
  World,
} from "./builders.js";

const template = templateNameFor("workers", "m6i.xlarge");
const setStep = (world: World, name = "workers") => {
  const plan = planMachineSetSync(world.machineSetSnapshot(name), deps(), NOW);
  world.execute(plan.writes);
  return plan.writes.map((w) => `${w.kind} ${"target" in w ? w.target.kind : w.object.kind}`);
};
const templateOf = (world: World) => world.find(INFRA_API_VERSION, "AWSMachineTemplate", CAPI_NS, template);

describe("§4.6 a labelled template goes with its set, once no other set references it", () => {
  const worldWithCopy = () =>
    new World([
      infrastructure(),
      capiCluster(),
      deleting(capiMachineSet("workers", { meta: { annotations: {}, finalizers: [FINALIZERS.sync] } })),
      // A CAPI-only set an admin made from the same template (e.g. `oc get -o yaml`, renamed).
      capiMachineSet("workers-copy", { meta: { annotations: {}, finalizers: [] }, template }),
      awsMachineTemplate(template, { setName: "workers" }),
    ]);

  it("its set deleted while another CAPI MachineSet references it: the template stays", () => {
    const world = worldWithCopy();
    expect(setStep(world)).not.toContain("delete AWSMachineTemplate");
    expect(templateOf(world)).toBeDefined();
    expect(setStep(world)).toEqual([]);
    expect(templateOf(world)).toBeDefined();
  });

  it("the last referencing set goes: its event maps back to the template's set, which deletes it", () => {
    const world = worldWithCopy();
    setStep(world);
    setStep(world);
    const copy = world.find(capiMachineSet("x").apiVersion ?? "", "MachineSet", CAPI_NS, "workers-copy");
    expect(copy).toBeDefined();
    world.remove(copy?.apiVersion ?? "", "MachineSet", CAPI_NS, "workers-copy");
    expect(
      machineSetKeysFor(copy as NonNullable<typeof copy>, world, {
        mapiNamespace: MAPI_NS,
        capiNamespace: CAPI_NS,
      }).sort(),
    ).toEqual(["workers", "workers-copy"]);
    expect(setStep(world)).toEqual(["delete AWSMachineTemplate"]);
    expect(templateOf(world)).toBeUndefined();
  });
});
