/** Write discipline helpers: desired ⊆ live, finalizer JSON Patches with `test`, resourceVersion preconditions, and the HTTP each helper sends. */
import { describe, expect, it } from "vitest";
import { createKubeClient } from "../../src/kube/client.js";
import { ConflictError, InvalidError } from "../../src/kube/errors.js";
import { FINALIZERS, KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import type { KubeRequest, Transport } from "../../src/kube/transport.js";
import {
  createWriteHelpers,
  finalizerAddPatch,
  finalizerRemovePatch,
  finalizersPatch,
  isSubset,
  mergePatchAt,
  refOf,
  sendGuardedPatch,
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

describe("finalizer patches (SPEC §3.5, §7: JSON Patch guarded by tests of the uid, resourceVersion and list)", () => {
  const guard = [
    { op: "test", path: "/metadata/uid", value: "u" },
    { op: "test", path: "/metadata/resourceVersion", value: "5" },
  ];
  it.each([
    [
      "add tests the uid, version and exact list it read, then sets the list with the finalizer",
      finalizerAddPatch(obj(["x"]), FINALIZERS.sync),
      [
        ...guard,
        { op: "test", path: "/metadata/finalizers", value: ["x"] },
        { op: "add", path: "/metadata/finalizers", value: ["x", FINALIZERS.sync] },
      ],
    ],
    [
      "add to an object without a list: no list to test, and add creates it",
      finalizerAddPatch(obj(), FINALIZERS.sync),
      [...guard, { op: "add", path: "/metadata/finalizers", value: [FINALIZERS.sync] }],
    ],
    ["add is nothing when present", finalizerAddPatch(obj([FINALIZERS.sync]), FINALIZERS.sync), undefined],
    [
      "remove tests the uid, version and list, then sets the list without it",
      finalizerRemovePatch(obj(["x", FINALIZERS.sync]), FINALIZERS.sync),
      [
        ...guard,
        { op: "test", path: "/metadata/finalizers", value: ["x", FINALIZERS.sync] },
        { op: "add", path: "/metadata/finalizers", value: ["x"] },
      ],
    ],
    [
      "remove of several takes every one the object holds in one write",
      finalizerRemovePatch(obj(["x", "y", FINALIZERS.sync]), ["y", FINALIZERS.sync, "absent"]),
      [
        ...guard,
        { op: "test", path: "/metadata/finalizers", value: ["x", "y", FINALIZERS.sync] },
        { op: "add", path: "/metadata/finalizers", value: ["x"] },
      ],
    ],
    ["remove is nothing when absent", finalizerRemovePatch(obj(["x"]), FINALIZERS.sync), undefined],
    [
      "an object read without a uid: guarded by the resourceVersion and list",
      finalizersPatch({ resourceVersion: "7", finalizers: ["x"] }, []),
      [
        { op: "test", path: "/metadata/resourceVersion", value: "7" },
        { op: "test", path: "/metadata/finalizers", value: ["x"] },
        { op: "add", path: "/metadata/finalizers", value: [] },
      ],
    ],
  ] as const)("%s", (_t, patch, expected) => {
    expect(patch).toEqual(expected);
  });

  it("removing 100,000 finalizers the object holds checks each against a set (decision 142)", () => {
    // Anyone who can update a mirrored InfraMachine can leave ~50,000 finalizers on it; the sync removes the
    // Cluster API ones it holds, all at once. A search of the list per finalizer held the event loop minutes.
    const held = Array.from({ length: 100_000 }, (_, i) => `x${i}.cluster.x-k8s.io`);
    const patch = finalizerRemovePatch(obj(["keep", ...held]), held);
    expect(patch?.at(-1)).toEqual({ op: "add", path: "/metadata/finalizers", value: ["keep"] });
  });
});

describe("merge patches and refs (SPEC §7: every merge patch carries the resourceVersion it was computed from)", () => {
  it("mergePatchAt keeps the patch's metadata and adds the version", () => {
    expect(mergePatchAt("9", { metadata: { annotations: { a: null } }, spec: { x: 1 } })).toEqual({
      metadata: { annotations: { a: null }, resourceVersion: "9" },
      spec: { x: 1 },
    });
    expect(mergePatchAt("9", { status: { phase: "Running" } })).toEqual({
      metadata: { resourceVersion: "9" },
      status: { phase: "Running" },
    });
  });
  it("refOf names the incarnation; uid only when the object has one", () => {
    expect(
      refOf({ apiVersion: "v1", kind: "K", metadata: { name: "n", namespace: "ns", uid: "u" } }),
    ).toEqual({ apiVersion: "v1", kind: "K", namespace: "ns", name: "n", uid: "u" });
    expect(Object.hasOwn(refOf({ metadata: { name: "n" } }), "uid")).toBe(false);
  });
});

describe("write helpers against an API", () => {
  it("a stale merge patch is a ConflictError too; a failed test that carries field causes stays Invalid", async () => {
    const api = fakeClient();
    const live = await api.client.create(KINDS.mapiMachine, { metadata: { name: "m", namespace: "ns" } });
    await api.client.patch(KINDS.mapiMachine, "ns", "m", { type: "merge", body: { spec: { a: 1 } } });
    await expect(
      sendGuardedPatch(
        api.client,
        KINDS.mapiMachine,
        refOf(live),
        {
          type: "merge",
          body: mergePatchAt(live.metadata?.resourceVersion ?? "", { spec: { a: 2 } }),
        },
        "m",
      ),
    ).rejects.toBeInstanceOf(ConflictError);
    api.fail(
      new InvalidError(422, "Invalid", "forbidden: no new finalizers", [{ field: "metadata.finalizers" }]),
    );
    await expect(
      sendGuardedPatch(api.client, KINDS.mapiMachine, refOf(live), { type: "json", body: [] }, "m"),
    ).rejects.toBeInstanceOf(InvalidError);
  });

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

  it("a finalizer patch computed for uid X is refused once the name holds a new object with uid Y", async () => {
    const { api, live, write } = await seed();
    await api.client.delete(KINDS.mapiMachine, "ns", "m");
    // The same name and the same finalizer list again: only the uid tells the two objects apart.
    await api.client.create(KINDS.mapiMachine, {
      metadata: { name: "m", namespace: "ns", uid: "new", finalizers: ["x"] },
    });
    await expect(write.ensureFinalizer(KINDS.mapiMachine, live, FINALIZERS.sync)).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(write.removeFinalizer(KINDS.mapiMachine, live, "x")).rejects.toBeInstanceOf(ConflictError);
    expect(api.raw(KINDS.mapiMachine, "ns", "m")?.metadata).toMatchObject({ uid: "new", finalizers: ["x"] });
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

  it("sends the right HTTP for json and merge patches and preconditioned deletes", async () => {
    const { sent, write } = recordingWrites();
    const o: KubeObject = {
      metadata: { name: "w", namespace: "openshift-cluster-api", uid: "u9", resourceVersion: "42" },
    };
    await write.ensureFinalizer(KINDS.capiMachine, o, FINALIZERS.sync);
    await write.patchWithPrecondition(KINDS.capiMachine, o, { spec: { x: 1 } }, { subresource: "status" });
    await write.deleteWithPreconditions(KINDS.mapiMachine, {
      ...o,
      metadata: { ...o.metadata, namespace: "openshift-machine-api" },
    });
    expect(sent.map((r) => [r.method, r.path, r.contentType, r.query])).toEqual([
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
    expect(sent[2]?.body).toEqual({
      apiVersion: "v1",
      kind: "DeleteOptions",
      preconditions: { uid: "u9", resourceVersion: "42" },
    });
  });
});
