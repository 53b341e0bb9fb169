/**
 * SPEC §4.6 storage being removed, as an admin meets it, on the whole product (test/integration/harness.ts:
 * the real webhook, the sync and migration controllers, the MAO/CAPI/CAPA stand-ins sharing one instance
 * ledger), on the local API server and on the real control plane:
 *
 * `kubectl delete crd awsmachines.infrastructure.cluster.x-k8s.io` while a Machine runs under the Machine API.
 * The API server's CRD cleanup deletes every AWSMachine, so the paused mirror is the first (and only) twin
 * seen deleting — its CAPI Machine is not. The product must hold the mirror's finalizers (releasing them would
 * let a provider or a recreate act on storage that is going) and say why on the MAPI Machine:
 * `Synchronized=False`, reason `StorageBeingRemoved`. The Machine keeps running and its one instance is not
 * touched.
 *
 * The CRD's deletion cannot be undone, so this file is one scenario on its own control plane. Waiting polls for
 * a state, never asserts elapsed time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, getPath, isDeleting } from "../../src/kube/object.js";
import { isPausedWithMarker } from "../../src/protocol/pause.js";
import { CAPI_NS, type Harness, MAPI_NS, startHarness } from "./harness.js";
import { type AdminKubectl, adminKubectl, createRunningMachine } from "./support.js";

const CRD = "awsmachines.infrastructure.cluster.x-k8s.io";

let h: Harness;
let kubectl: AdminKubectl;

beforeAll(async () => {
  h = await startHarness({ name: "storage-removed" });
  kubectl = await adminKubectl(h, "storage-removed");
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await kubectl?.remove();
});

describe("SPEC §4.6 storage being removed: a deleting CRD of the InfraMachines", () => {
  it("kubectl delete crd of the InfraMachines: the deleting mirror keeps its finalizers, the MAPI Machine says StorageBeingRemoved and keeps running", async () => {
    const name = "storage-crd1";
    const w = await createRunningMachine(h, name);
    const mirror = await h.admin.get(KINDS.awsMachine, CAPI_NS, name);
    expect(isPausedWithMarker(mirror)).toBe(true);
    expect(mirror.metadata?.finalizers).toContain(FINALIZERS.sync);

    const r = await kubectl.run(["delete", "crd", CRD, "--wait=false"]);
    expect(r.code, r.stderr).toBe(0);

    const mapi = await h.waitFor(
      "Synchronized=False StorageBeingRemoved on the MAPI Machine",
      async () => {
        const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, name);
        return conditionOf(o, "Synchronized")?.reason === "StorageBeingRemoved" ? o : undefined;
      },
      30_000,
    );
    expect(conditionOf(mapi, "Synchronized")?.status).toBe("False");
    await h.quiesce();

    // Nothing released, nothing propagated: the mirror is deleting and held by the sync finalizer (the CRD
    // with it), its CAPI Machine and the MAPI Machine are not deleting, and the Machine still runs.
    const held = await h.admin.get(KINDS.awsMachine, CAPI_NS, name);
    expect(isDeleting(held)).toBe(true);
    expect(held.metadata?.uid).toBe(mirror.metadata?.uid);
    expect(held.metadata?.finalizers).toContain(FINALIZERS.sync);
    expect(isDeleting(await h.admin.get(KINDS.capiMachine, CAPI_NS, name))).toBe(false);
    const after = await h.admin.get(KINDS.mapiMachine, MAPI_NS, name);
    expect(isDeleting(after)).toBe(false);
    expect(getPath(after, ["status", "phase"])).toBe("Running");
    expect(conditionOf(after, "Synchronized")?.reason).toBe("StorageBeingRemoved");
    expect(isDeleting(await h.admin.get(KINDS.customResourceDefinition, "", CRD))).toBe(true);

    // One instance, never terminated; I1–I4 held throughout.
    const instances = h.ledger.snapshot().instances.filter((i) => i.machineName === name);
    expect(instances).toHaveLength(1);
    expect(instances[0]?.terminatedSeq).toBeUndefined();
    expect(w.violations).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});
