/** Write discipline helpers: desired ⊆ live, finalizer JSON Patches with `test`, resourceVersion preconditions, and the HTTP each helper sends. */
import { describe, expect, it } from "vitest";
import { createKubeClient } from "../../src/kube/client.js";
import { ConflictError } from "../../src/kube/errors.js";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import type { KubeRequest, Transport } from "../../src/kube/transport.js";
import {
  createWriteHelpers,
  finalizerAddPatch,
  finalizerRemovePatch,
  isSubset,
} from "../../src/kube/write.js";
import { fakeClient } from "./fakes.js";

/** Write helpers over a transport that records each request and answers `{}`. */
const recordingWrites = () => {
  const sent: KubeRequest[] = [];
  const transport: Transport = {
    request: async (r) => {
      sent.push(r);
      return {};
    },
    stream: async () => {
      throw new Error("unused");
    },
  };
  return { sent, write: createWriteHelpers(createKubeClient(transport), "machine-api-migration") };
};
describe("isSubset (desired ⊆ live: write only when it differs)", () => {
  it.each([
    ["equal scalars", 1, 1, true],
    ["different scalars", "a", "b", false],
    ["number vs string", 1, "1", false],
    ["object keys present in live", { a: 1 }, { a: 1, b: 2 }, true],
    ["object key missing in live", { a: 1, c: 3 }, { a: 1 }, false],
    ["nested difference", { spec: { x: { y: 1 } } }, { spec: { x: { y: 2 } } }, false],
    ["arrays element-wise subset", [{ a: 1 }], [{ a: 1, b: 2 }], true],
    ["arrays of different length", [1], [1, 2], false],
    ["arrays in another order", [1, 2], [2, 1], false],
    ["null means absent", { a: null }, { b: 1 }, true],
    ["null does not match a value", { a: null }, { a: 1 }, false],
    ["object vs scalar", { a: {} }, { a: 1 }, false],
    ["empty desired", {}, { a: 1 }, true],
  ] as const)("%s", (_t, desired, live, expected) => {
    expect(isSubset(desired, live)).toBe(expected);
  });
});

const obj = (finalizers?: string[]): KubeObject => ({
  metadata: {
    name: "m",
    namespace: "ns",
    uid: "u",
    resourceVersion: "5",
    ...(finalizers ? { finalizers } : {}),
  },
});

describe("finalizer patches (SPEC §7: JSON Patch add/remove with a test on the list)", () => {
  it("add tests the exact list it read, then appends", () => {
    expect(finalizerAddPatch(obj(["x"]), FINALIZERS.sync)).toEqual([
      { op: "test", path: "/metadata/finalizers", value: ["x"] },
      { op: "add", path: "/metadata/finalizers/-", value: FINALIZERS.sync },
    ]);
  });
  it("add to an object without a list guards with the resourceVersion", () => {
    expect(finalizerAddPatch(obj(), FINALIZERS.sync)).toEqual([
      { op: "test", path: "/metadata/resourceVersion", value: "5" },
      { op: "add", path: "/metadata/finalizers", value: [FINALIZERS.sync] },
    ]);
  });
  it("add is nothing when present", () => {
    expect(finalizerAddPatch(obj([FINALIZERS.sync]), FINALIZERS.sync)).toBeUndefined();
  });
  it("remove tests the list and removes by index", () => {
    expect(finalizerRemovePatch(obj(["x", FINALIZERS.sync]), FINALIZERS.sync)).toEqual([
      { op: "test", path: "/metadata/finalizers", value: ["x", FINALIZERS.sync] },
      { op: "remove", path: "/metadata/finalizers/1" },
    ]);
  });
  it("remove is nothing when absent", () => {
    expect(finalizerRemovePatch(obj(["x"]), FINALIZERS.sync)).toBeUndefined();
  });
});

describe("write helpers against an API", () => {
  const seed = async () => {
    const api = fakeClient();
    const live = await api.client.create(KINDS.mapiMachine, {
      metadata: { name: "m", namespace: "ns", finalizers: ["x"], labels: { a: "1" } },
      spec: { a: 1 },
    });
    return { api, live, write: createWriteHelpers(api.client, "machine-api-migration") };
  };

  it("ensureFinalizer fails with a conflict when the list changed since it was read", async () => {
    const { api, live, write } = await seed();
    await write.ensureFinalizer(KINDS.mapiMachine, live, "other");
    await expect(write.ensureFinalizer(KINDS.mapiMachine, live, FINALIZERS.sync)).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect(api.raw(KINDS.mapiMachine, "ns", "m")?.metadata?.finalizers).toEqual(["x", "other"]);
  });

  it("removeFinalizer removes exactly the one finalizer", async () => {
    const { api, live, write } = await seed();
    const after = await write.ensureFinalizer(KINDS.mapiMachine, live, FINALIZERS.sync);
    await write.removeFinalizer(KINDS.mapiMachine, after, "x");
    expect(api.raw(KINDS.mapiMachine, "ns", "m")?.metadata?.finalizers).toEqual([FINALIZERS.sync]);
  });

  it("patchWithPrecondition skips a write already live and sends the read resourceVersion otherwise", async () => {
    const { api, live, write } = await seed();
    const before = api.calls.length;
    expect(await write.patchWithPrecondition(KINDS.mapiMachine, live, { spec: { a: 1 } })).toBe(live);
    expect(api.calls.length).toBe(before);
    await write.patchWithPrecondition(KINDS.mapiMachine, live, { spec: { a: 2 } });
    expect(api.calls.at(-1)?.body).toEqual({
      spec: { a: 2 },
      metadata: { resourceVersion: live.metadata?.resourceVersion },
    });
    await expect(
      write.patchWithPrecondition(KINDS.mapiMachine, live, { spec: { a: 3 } }),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it("patchStatus: a preconditioned merge patch of status through the status subresource, skipped when live", async () => {
    const { sent, write } = recordingWrites();
    const o: KubeObject = {
      metadata: { name: "w", namespace: "openshift-cluster-api", resourceVersion: "42" },
      status: { phase: "Running" },
    };
    expect(await write.patchStatus(KINDS.capiMachine, o, { phase: "Running" })).toBe(o);
    await write.patchStatus(KINDS.capiMachine, o, { phase: "Deleting" });
    expect(sent.map((r) => [r.method, r.path, r.contentType, r.body])).toEqual([
      [
        "PATCH",
        "/apis/cluster.x-k8s.io/v1beta2/namespaces/openshift-cluster-api/machines/w/status",
        "application/merge-patch+json",
        { status: { phase: "Deleting" }, metadata: { resourceVersion: "42" } },
      ],
    ]);
  });

  it("sends the right HTTP for apply, json and merge patches and preconditioned deletes", async () => {
    const { sent, write } = recordingWrites();
    const o: KubeObject = {
      metadata: { name: "w", namespace: "openshift-cluster-api", uid: "u9", resourceVersion: "42" },
    };
    await write.applyObject(KINDS.awsMachine, o, "machine-api-migration");
    await write.ensureFinalizer(KINDS.capiMachine, o, FINALIZERS.sync);
    await write.patchWithPrecondition(KINDS.capiMachine, o, { spec: { x: 1 } }, { subresource: "status" });
    await write.deleteWithPreconditions(KINDS.mapiMachine, {
      ...o,
      metadata: { ...o.metadata, namespace: "openshift-machine-api" },
    });
    expect(sent.map((r) => [r.method, r.path, r.contentType, r.query])).toEqual([
      [
        "PATCH",
        "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/openshift-cluster-api/awsmachines/w",
        "application/apply-patch+yaml",
        { fieldManager: "machine-api-migration", force: true },
      ],
      [
        "PATCH",
        "/apis/cluster.x-k8s.io/v1beta2/namespaces/openshift-cluster-api/machines/w",
        "application/json-patch+json",
        { fieldManager: "machine-api-migration" },
      ],
      [
        "PATCH",
        "/apis/cluster.x-k8s.io/v1beta2/namespaces/openshift-cluster-api/machines/w/status",
        "application/merge-patch+json",
        { fieldManager: "machine-api-migration" },
      ],
      [
        "DELETE",
        "/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machines/w",
        undefined,
        undefined,
      ],
    ]);
    expect(sent[0]?.body).toMatchObject({
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSMachine",
    });
    expect(sent[3]?.body).toEqual({
      apiVersion: "v1",
      kind: "DeleteOptions",
      preconditions: { uid: "u9", resourceVersion: "42" },
    });
  });
});
