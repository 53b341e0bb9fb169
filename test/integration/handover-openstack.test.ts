/**
 * The whole product on an OpenStack cluster (issue 23; SPEC §0: every rule that names an AWS kind means the
 * same role on each platform): the Infrastructure names OpenStack, so the product watches, mirrors and hands
 * over CAPO's OpenStackMachines and OpenStackMachineTemplates (v1beta1), and the stand-ins are MAO, Cluster
 * API and CAPO. A user flips `spec.authoritativeAPI`; the real webhook, the sync and both migration
 * controllers do the rest. On both backends: the local API server and the real control plane.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiVersionOf, FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, finalizersOf, getPath, nameOf } from "../../src/kube/object.js";
import { mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";

const MACHINE = "os-handover-m1";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "handover-openstack", platform: "OpenStack" });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const instancesOf = (prefix: string) =>
  h.ledger.snapshot().instances.filter((i) => i.machineName.startsWith(prefix));

describe("handover on OpenStack, with CAPO's kinds (issue 23)", () => {
  it("Machine MachineAPI → ClusterAPI → MachineAPI: its OpenStackMachine changes hands, one server throughout", async () => {
    const w = h.watch("Machine", MACHINE);
    await h.admin.create(KINDS.mapiMachine, mapiMachine(ns, MACHINE, "a", undefined, "OpenStack"));
    await h.waitFor("MAO's Machine Running", async () => {
      const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, MACHINE);
      return getPath(o, ["status", "phase"]) === "Running" || undefined;
    });
    const mirrored = await h.steady(w, "MachineAPI");
    await h.quiesce();
    // The mirror is CAPO's kind at CAPO's version, paused, and the CAPI Machine references it.
    expect(mirrored.infraMachine?.kind).toBe("OpenStackMachine");
    expect(mirrored.infraMachine?.apiVersion).toBe(apiVersionOf(KINDS.openStackMachine));
    expect(getPath(mirrored.capi, ["spec", "infrastructureRef", "kind"])).toBe("OpenStackMachine");
    expect(finalizersOf(mirrored.infraMachine)).not.toContain(FINALIZERS.openStackMachine);
    expect(instancesOf(MACHINE)).toMatchObject([{ side: "MachineAPI" }]);

    await h.setSpecAuthority("Machine", MACHINE, "ClusterAPI");
    const there = await h.steady(w, "ClusterAPI");
    await h.quiesce();
    expect(finalizersOf(there.infraMachine)).toContain(FINALIZERS.openStackMachine);
    expect(finalizersOf(there.capi)).toContain(FINALIZERS.capiMachine);
    expect(finalizersOf(there.mapi)).not.toContain(FINALIZERS.mapiMachine);
    expect(getPath(there.infraMachine, ["status", "ready"])).toBe(true);
    // CAPO found the server MAO made: it created none.
    expect(instancesOf(MACHINE)).toHaveLength(1);
    expect(instancesOf(MACHINE)[0]?.terminatedSeq).toBeUndefined();

    await h.setSpecAuthority("Machine", MACHINE, "MachineAPI");
    const back = await h.steady(w, "MachineAPI");
    await h.quiesce();
    expect(finalizersOf(back.mapi)).toContain(FINALIZERS.mapiMachine);
    expect(finalizersOf(back.infraMachine)).not.toContain(FINALIZERS.openStackMachine);
    expect(instancesOf(MACHINE)).toHaveLength(1);
    expect(instancesOf(MACHINE)[0]?.terminatedSeq).toBeUndefined();

    expect(w.violations).toEqual([]);
    const reasons = await h.eventReasons(w);
    expect(reasons.filter((r) => r === "MigrationCompleted")).toHaveLength(2);
    expect(await h.ledgerViolations()).toEqual([]);
  });

  it("MachineSet to ClusterAPI: an OpenStackMachineTemplate; scaled up, CAPO provisions exactly one new server", async () => {
    const set = mapiMachineSet(ns, "b", 1, "OpenStack");
    const name = nameOf(set);
    const w = h.watch("MachineSet", name);
    await h.admin.create(KINDS.mapiMachineSet, set);
    await h.waitFor("the member Running and synchronized", async () => {
      const items = (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((o) =>
        nameOf(o).startsWith(`${name}-`),
      );
      return items.length === 1 &&
        getPath(items[0], ["status", "phase"]) === "Running" &&
        conditionOf(items[0], "Synchronized")?.status === "True"
        ? items[0]
        : undefined;
    });
    await h.steady(w, "MachineAPI");
    await h.setSpecAuthority("MachineSet", name, "ClusterAPI");
    const there = await h.steady(w, "ClusterAPI");
    await h.quiesce();
    const ref = getPath(there.capi, ["spec", "template", "spec", "infrastructureRef"]) as {
      kind: string;
      name: string;
    };
    expect(ref.kind).toBe("OpenStackMachineTemplate");
    const template = await h.admin.get(KINDS.openStackMachineTemplate, CAPI_NS, ref.name);
    expect(getPath(template, ["spec", "template", "spec", "flavor"])).toBe(
      getPath(set, ["spec", "template", "spec", "providerSpec", "value", "flavor"]),
    );
    expect(instancesOf(`${name}-`)).toHaveLength(1);

    // Scaling the authoritative CAPI copy: Cluster API creates the Machine, CAPO the server.
    await h.admin.patch(KINDS.capiMachineSet, CAPI_NS, name, {
      type: "merge",
      body: { spec: { replicas: 2 } },
    });
    const members = await h.waitFor("two members, each with its OpenStackMachine ready", async () => {
      const infra = (await h.admin.list(KINDS.openStackMachine, { namespace: CAPI_NS })).items.filter((o) =>
        nameOf(o).startsWith(`${name}-`),
      );
      return infra.length === 2 && infra.every((o) => getPath(o, ["status", "ready"]) === true)
        ? infra
        : undefined;
    });
    await h.quiesce();
    // A MachineSet handover leaves its Machines where they were (SPEC §1): the first member's OpenStackMachine
    // is still the paused mirror; the new member is Cluster API's, and CAPO holds its finalizer.
    const capoHeld = members.filter((o) => finalizersOf(o).includes(FINALIZERS.openStackMachine));
    expect(capoHeld).toHaveLength(1);
    const servers = instancesOf(`${name}-`);
    expect(servers).toHaveLength(2);
    expect(servers.filter((i) => i.side === "ClusterAPI")).toHaveLength(1);
    expect(servers.every((i) => i.terminatedSeq === undefined)).toBe(true);
    expect(w.violations).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});
