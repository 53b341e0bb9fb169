/**
 * The whole product on each platform beside AWS (issue 23; SPEC §0: every rule that names an AWS kind means
 * the same role on each platform): the Infrastructure names the platform, so the product watches, mirrors
 * and hands over that platform's InfraMachines and templates (OpenStack: CAPO's v1beta1 kinds; PowerVS:
 * CAPIBM's), and the stand-ins are MAO, Cluster API and the platform's provider. A user flips
 * `spec.authoritativeAPI`; the real webhook, the sync and both migration controllers do the rest. On both
 * backends: the local API server and the real control plane.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiVersionOf, FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, finalizersOf, getPath, nameOf } from "../../src/kube/object.js";
import {
  type DemoPlatformType,
  mapiMachine,
  mapiMachineSet,
  platformConverterOf,
} from "../../src/local/seed.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";

/** Each platform, and a template field the MAPI providerSpec's value of the same name must reach. */
const PLATFORM_CASES: readonly { platform: DemoPlatformType; templateField: string }[] = [
  { platform: "OpenStack", templateField: "flavor" },
  { platform: "PowerVS", templateField: "systemType" },
];

describe.each(PLATFORM_CASES)(
  "handover on $platform, with its provider's kinds (issue 23)",
  ({ platform, templateField }) => {
    const p = platformConverterOf(platform);
    const prefix = platform.toLowerCase();
    const MACHINE = `${prefix}-handover-m1`;
    let h: Harness;

    beforeAll(async () => {
      h = await startHarness({ name: `handover-${prefix}`, platform });
    }, 120_000);

    afterAll(async () => {
      await h?.stop();
    });

    const instancesOf = (name: string) =>
      h.ledger.snapshot().instances.filter((i) => i.machineName.startsWith(name));

    it("Machine MachineAPI → ClusterAPI → MachineAPI: its InfraMachine changes hands, one instance throughout", async () => {
      const w = h.watch("Machine", MACHINE);
      await h.admin.create(KINDS.mapiMachine, mapiMachine(ns, MACHINE, "a", undefined, platform));
      await h.waitFor("MAO's Machine Running", async () => {
        const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, MACHINE);
        return getPath(o, ["status", "phase"]) === "Running" || undefined;
      });
      const mirrored = await h.steady(w, "MachineAPI");
      await h.quiesce();
      // The mirror is the provider's kind at its version, paused, and the CAPI Machine references it.
      expect(mirrored.infraMachine?.kind).toBe(p.infraMachine.kind);
      expect(mirrored.infraMachine?.apiVersion).toBe(apiVersionOf(p.infraMachine));
      expect(getPath(mirrored.capi, ["spec", "infrastructureRef", "kind"])).toBe(p.infraMachine.kind);
      expect(finalizersOf(mirrored.infraMachine)).not.toContain(p.infraMachineFinalizer);
      expect(instancesOf(MACHINE)).toMatchObject([{ side: "MachineAPI" }]);

      await h.setSpecAuthority("Machine", MACHINE, "ClusterAPI");
      const there = await h.steady(w, "ClusterAPI");
      await h.quiesce();
      expect(finalizersOf(there.infraMachine)).toContain(p.infraMachineFinalizer);
      expect(finalizersOf(there.capi)).toContain(FINALIZERS.capiMachine);
      expect(finalizersOf(there.mapi)).not.toContain(FINALIZERS.mapiMachine);
      expect(getPath(there.infraMachine, ["status", "ready"])).toBe(true);
      // The provider found the instance MAO made: it created none.
      expect(instancesOf(MACHINE)).toHaveLength(1);
      expect(instancesOf(MACHINE)[0]?.terminatedSeq).toBeUndefined();

      await h.setSpecAuthority("Machine", MACHINE, "MachineAPI");
      const back = await h.steady(w, "MachineAPI");
      await h.quiesce();
      expect(finalizersOf(back.mapi)).toContain(FINALIZERS.mapiMachine);
      expect(finalizersOf(back.infraMachine)).not.toContain(p.infraMachineFinalizer);
      expect(instancesOf(MACHINE)).toHaveLength(1);
      expect(instancesOf(MACHINE)[0]?.terminatedSeq).toBeUndefined();

      expect(w.violations).toEqual([]);
      const reasons = await h.eventReasons(w);
      expect(reasons.filter((r) => r === "MigrationCompleted")).toHaveLength(2);
      expect(await h.ledgerViolations()).toEqual([]);
    });

    it("MachineSet to ClusterAPI: the provider's template; scaled up, the provider makes exactly one new instance", async () => {
      const set = mapiMachineSet(ns, "b", 1, platform);
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
      expect(ref.kind).toBe(p.infraMachineTemplate.kind);
      const template = await h.admin.get(p.infraMachineTemplate, CAPI_NS, ref.name);
      expect(getPath(template, ["spec", "template", "spec", templateField])).toBe(
        getPath(set, ["spec", "template", "spec", "providerSpec", "value", templateField]),
      );
      expect(instancesOf(`${name}-`)).toHaveLength(1);

      // Scaling the authoritative CAPI copy: Cluster API creates the Machine, the provider the instance.
      await h.admin.patch(KINDS.capiMachineSet, CAPI_NS, name, {
        type: "merge",
        body: { spec: { replicas: 2 } },
      });
      const members = await h.waitFor("two members, each with its InfraMachine ready", async () => {
        const infra = (await h.admin.list(p.infraMachine, { namespace: CAPI_NS })).items.filter((o) =>
          nameOf(o).startsWith(`${name}-`),
        );
        return infra.length === 2 && infra.every((o) => getPath(o, ["status", "ready"]) === true)
          ? infra
          : undefined;
      });
      await h.quiesce();
      // A MachineSet handover leaves its Machines where they were (SPEC §1): the first member's InfraMachine is
      // still the paused mirror; the new member is Cluster API's, and the provider holds its finalizer.
      const providerHeld = members.filter((o) => finalizersOf(o).includes(p.infraMachineFinalizer));
      expect(providerHeld).toHaveLength(1);
      const instances = instancesOf(`${name}-`);
      expect(instances).toHaveLength(2);
      expect(instances.filter((i) => i.side === "ClusterAPI")).toHaveLength(1);
      expect(instances.every((i) => i.terminatedSeq === undefined)).toBe(true);
      expect(w.violations).toEqual([]);
      expect(await h.ledgerViolations()).toEqual([]);
    });
  },
);
