/**
 * Issue 23's sync differences from upstream, on the whole product (test/integration/harness.ts: the real
 * webhook, the sync and migration controllers, the MAO/CAPI/CAPA stand-ins sharing one instance ledger):
 * - SPEC §4.5 a ClusterAPI Machine whose CAPI Machine names an InfraMachine that does not exist says so on
 *   the MAPI Machine (`Synchronized=False`, reason `FailedToGetCAPIInfraResources`) instead of nothing;
 * - SPEC §4.6 a labelled AWSMachineTemplate goes with the ClusterAPI-authoritative MachineSet it was made
 *   for.
 * Waiting polls for a state, never asserts elapsed time. Every scenario uses its own names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResourceType } from "../../src/kube/kinds.js";
import { INFRA_GROUP, KINDS, LABELS } from "../../src/kube/kinds.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import { DEMO_INFRASTRUCTURE_NAME, mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";
import { asClusterAPI, liveObject } from "./support.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ name: "sync-parity" });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const live = (type: ResourceType, namespace: string, name: string) => liveObject(h, type, namespace, name);

describe("SPEC §4.5 a CAPI Machine whose InfraMachine does not exist", () => {
  it("the ClusterAPI MAPI Machine shows Synchronized=False, reason FailedToGetCAPIInfraResources, naming it", async () => {
    const name = "parity-no-infra";
    // A CAPI Machine made by hand, naming an AWSMachine nobody created; then its MAPI copy, ClusterAPI.
    await h.admin.create(KINDS.capiMachine, {
      apiVersion: `${KINDS.capiMachine.group}/${KINDS.capiMachine.version}`,
      kind: "Machine",
      metadata: {
        name,
        namespace: CAPI_NS,
        labels: { [LABELS.capiClusterName]: DEMO_INFRASTRUCTURE_NAME },
      },
      spec: {
        clusterName: DEMO_INFRASTRUCTURE_NAME,
        bootstrap: { dataSecretName: "worker-user-data" },
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: "AWSMachine", name: `${name}-absent` },
      },
    });
    await h.admin.create(KINDS.mapiMachine, asClusterAPI(mapiMachine(ns, name, "a")));
    const synchronized = await h.waitFor(
      `MAPI Machine ${name} Synchronized=False FailedToGetCAPIInfraResources`,
      async () => {
        const c = conditionOf(await live(KINDS.mapiMachine, MAPI_NS, name), "Synchronized");
        return c?.reason === "FailedToGetCAPIInfraResources" ? c : undefined;
      },
      60_000,
    );
    expect(synchronized).toMatchObject({
      status: "False",
      message: `CAPI Machine ${CAPI_NS}/${name} references AWSMachine ${CAPI_NS}/${name}-absent, which does not exist; the Machine cannot be synchronized until it does`,
    });
    expect(await live(KINDS.awsMachine, CAPI_NS, `${name}-absent`)).toBeUndefined();
    expect(h.ledger.snapshot().instances.filter((i) => i.machineName === name)).toEqual([]);
  });
});

describe("SPEC §4.6 labelled templates go with the CAPI MachineSet they were made for", () => {
  it("a born-ClusterAPI MachineSet deleted on the CAPI side takes its labelled AWSMachineTemplate with it", async () => {
    const set = asClusterAPI(mapiMachineSet(ns, "f", 0));
    const name = nameOf(set);
    const w = h.watch("MachineSet", name);
    await h.admin.create(KINDS.mapiMachineSet, set);
    await h.steady(w, "ClusterAPI", 60_000);
    await h.quiesce();
    const capiSet = await h.admin.get(KINDS.capiMachineSet, CAPI_NS, name);
    const template = String(getPath(capiSet, ["spec", "template", "spec", "infrastructureRef", "name"]));
    const labelled = await live(KINDS.awsMachineTemplate, CAPI_NS, template);
    expect(labelled?.metadata?.labels?.[LABELS.templateMachineSet]).toBe(name);

    await h.admin.delete(KINDS.capiMachineSet, CAPI_NS, name);
    await h.waitFor(
      `both copies of ${name} and its template gone`,
      async () =>
        (await live(KINDS.capiMachineSet, CAPI_NS, name)) === undefined &&
        (await live(KINDS.mapiMachineSet, MAPI_NS, name)) === undefined &&
        (await live(KINDS.awsMachineTemplate, CAPI_NS, template)) === undefined,
      60_000,
    );
    expect(h.violations()).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});

describe("SPEC §4.6 a labelled template is deleted once no set references it", () => {
  it("kept while a CAPI MachineSet made from it lives on after its own set is deleted, deleted when that one goes", {
    timeout: 120_000,
  }, async () => {
    const set = mapiMachineSet(ns, "e", 0);
    const name = nameOf(set);
    const w = h.watch("MachineSet", name);
    await h.admin.create(KINDS.mapiMachineSet, set);
    await h.steady(w, "MachineAPI", 60_000);
    await h.quiesce();
    const capiSet = await h.admin.get(KINDS.capiMachineSet, CAPI_NS, name);
    const template = String(getPath(capiSet, ["spec", "template", "spec", "infrastructureRef", "name"]));

    // An admin's CAPI-only set made from the same template (as `oc get -o yaml` and a rename would).
    const copyName = `${name}-copy`;
    await h.admin.create(KINDS.capiMachineSet, {
      apiVersion: capiSet.apiVersion,
      kind: "MachineSet",
      metadata: { name: copyName, namespace: CAPI_NS, labels: capiSet.metadata?.labels ?? {} },
      spec: { ...(capiSet.spec as Record<string, unknown>), replicas: 0 },
    });

    await h.admin.delete(KINDS.mapiMachineSet, MAPI_NS, name);
    await h.waitFor(
      `both copies of ${name} gone`,
      async () =>
        (await live(KINDS.capiMachineSet, CAPI_NS, name)) === undefined &&
        (await live(KINDS.mapiMachineSet, MAPI_NS, name)) === undefined,
      60_000,
    );
    await h.quiesce();
    expect(await live(KINDS.awsMachineTemplate, CAPI_NS, template), "the copy still uses it").toBeDefined();

    await h.admin.delete(KINDS.capiMachineSet, CAPI_NS, copyName);
    await h.waitFor(
      `${copyName} and the template gone`,
      async () =>
        (await live(KINDS.capiMachineSet, CAPI_NS, copyName)) === undefined &&
        (await live(KINDS.awsMachineTemplate, CAPI_NS, template)) === undefined,
      60_000,
    );
    expect(h.violations()).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});
