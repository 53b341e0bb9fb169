/**
 * The sync shell's plan executor (SPEC §4, §7): writes in order, each later write to one object chained to
 * the resourceVersion the previous write returned (also inside a JSON Patch `test` and delete
 * preconditions), stop at the first failure, 409 and a failed `test` thrown as ConflictError (requeue), an
 * API server refusal returned so the controller can report it, and nothing sent after the controller stops.
 * Against the in-memory client of test/kube/fakes.ts, which enforces resourceVersions like the API server.
 */
import { describe, expect, it } from "vitest";
import type { DeleteOptions, KubeClient } from "../../src/kube/client.js";
import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  KubeApiError,
  NotFoundError,
} from "../../src/kube/errors.js";
import { FINALIZERS, KINDS, type ResourceType } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { chainResourceVersion, classifyFailure, executeWrites } from "../../src/sync/execute.js";
import type { SyncWrite } from "../../src/sync/writes.js";
import { addFinalizerWrite, deleteWrite, SYNC_FIELD_MANAGER } from "../../src/sync/writes.js";
import { fakeClient } from "../kube/fakes.js";
import { awsMachine, CAPI_NS } from "./builders.js";

const TYPES: ResourceType[] = Object.values(KINDS);
const typeOf = async (apiVersion: string, kind: string): Promise<ResourceType> => {
  const t = TYPES.find((x) => `${x.group}/${x.version}` === apiVersion && x.kind === kind);
  if (!t) throw new NotFoundError(404, "NotFound", `no ${kind}`);
  return t;
};

/** The fake API plus delete preconditions enforced (the fake itself ignores them). */
const setup = async (seed: KubeObject) => {
  const fake = fakeClient();
  const stored = await fake.client.create(KINDS.awsMachine, seed);
  const deletes: DeleteOptions[] = [];
  const client: KubeClient = {
    ...fake.client,
    async delete(t, ns, name, options) {
      deletes.push(options ?? {});
      const live = fake.raw(t, ns, name);
      if (options?.preconditions?.resourceVersion !== live?.metadata?.resourceVersion)
        throw new ConflictError(409, "Conflict", "Precondition failed: ResourceVersion");
      return fake.client.delete(t, ns, name);
    },
  };
  return { fake, client, stored, deletes };
};

const applyOf = (o: KubeObject, annotations: Record<string, string>): SyncWrite => ({
  kind: "apply",
  target: {
    apiVersion: o.apiVersion ?? "",
    kind: o.kind ?? "",
    namespace: CAPI_NS,
    name: o.metadata?.name ?? "",
    uid: o.metadata?.uid ?? "",
  },
  resourceVersion: o.metadata?.resourceVersion ?? "",
  fieldManager: SYNC_FIELD_MANAGER,
  body: {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: {
      name: o.metadata?.name,
      namespace: CAPI_NS,
      resourceVersion: o.metadata?.resourceVersion,
      annotations,
    },
  },
  changedPaths: ["metadata.annotations"],
});

const statusOf = (o: KubeObject): SyncWrite => ({
  kind: "applyStatus",
  target: {
    apiVersion: o.apiVersion ?? "",
    kind: o.kind ?? "",
    namespace: CAPI_NS,
    name: o.metadata?.name ?? "",
    uid: o.metadata?.uid ?? "",
  },
  resourceVersion: o.metadata?.resourceVersion ?? "",
  status: { ready: true },
  changedPaths: ["status.ready"],
});

describe("SPEC §7 write discipline: executing a sync plan", () => {
  it("chains resourceVersions: each later write to one object carries what the previous write returned", async () => {
    // No finalizer list: the add is guarded by a `test` of the resourceVersion, which must chain too.
    const { fake, client, stored, deletes } = await setup(
      awsMachine("m-1", { meta: { finalizers: undefined } }),
    );
    const writes = [
      addFinalizerWrite(stored, FINALIZERS.sync) as SyncWrite,
      applyOf(stored, { note: "x" }),
      statusOf(stored),
      deleteWrite(stored),
    ];
    const outcome = await executeWrites({ client, typeOf }, writes);
    expect(outcome.kind).toBe("done");
    const sent = fake.calls.filter((c) => c.verb.startsWith("patch"));
    expect(sent.map((c) => c.verb)).toEqual(["patch:json", "patch:apply", "patch:merge"]);
    // rv 1 was read; the finalizer patch made 2, the apply 3, the status 4.
    expect(JSON.stringify(sent[1]?.body)).toContain('"resourceVersion":"2"');
    expect(JSON.stringify(sent[2]?.body)).toContain('"resourceVersion":"3"');
    expect(deletes[0]?.preconditions).toEqual({ uid: stored.metadata?.uid, resourceVersion: "4" });
  });

  it("a JSON Patch resourceVersion test is rewritten only when the object was written before in this plan", () => {
    const o = awsMachine("m-2", { meta: { finalizers: undefined, resourceVersion: "7" } });
    const w = addFinalizerWrite(o, FINALIZERS.sync) as Extract<SyncWrite, { kind: "addFinalizer" }>;
    expect(chainResourceVersion(w, undefined)).toBe(w);
    const chained = chainResourceVersion(w, "9") as typeof w;
    expect(chained.patch).toContainEqual({ op: "test", path: "/metadata/resourceVersion", value: "9" });
    expect(chained.patch).toContainEqual({ op: "test", path: "/metadata/uid", value: o.metadata?.uid });
  });

  it("409: stops at the first failure and throws ConflictError (the runtime requeues)", async () => {
    const { fake, client, stored } = await setup(awsMachine("m-3"));
    const stale = { ...stored, metadata: { ...stored.metadata, resourceVersion: "0" } };
    const writes = [applyOf(stale, { a: "1" }), statusOf(stored)];
    await expect(executeWrites({ client, typeOf }, writes)).rejects.toBeInstanceOf(ConflictError);
    expect(fake.calls.filter((c) => c.verb === "patch:merge")).toHaveLength(0);
  });

  it("a failed JSON Patch test (422 without causes) is a stale read: ConflictError", async () => {
    const { client, stored } = await setup(awsMachine("m-4"));
    const read = { ...stored, metadata: { ...stored.metadata, finalizers: ["someone-else"] } };
    await expect(
      executeWrites({ client, typeOf }, [addFinalizerWrite(read, "x") as SyncWrite]),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it("an admission refusal is returned with the server's message and nothing after it is sent", async () => {
    const { fake, stored } = await setup(awsMachine("m-5"));
    const message = 'admission webhook "capi.example" denied the request: no';
    const client: KubeClient = {
      ...fake.client,
      async patch(t, ns, name, patch, options) {
        if (patch.type === "apply") throw new KubeApiError(400, "BadRequest", message);
        return fake.client.patch(t, ns, name, patch, options);
      },
    };
    const writes = [applyOf(stored, { a: "1" }), statusOf(stored)];
    const outcome = await executeWrites({ client, typeOf }, writes);
    expect(outcome).toMatchObject({ kind: "refused", index: 0, message });
    expect(fake.calls.filter((c) => c.verb === "patch:merge")).toHaveLength(0);
  });

  it("nothing is sent once the controller stopped (leadership lost)", async () => {
    const { fake, client, stored } = await setup(awsMachine("m-6"));
    const abort = new AbortController();
    abort.abort();
    const outcome = await executeWrites({ client, typeOf, signal: abort.signal }, [statusOf(stored)]);
    expect(outcome).toMatchObject({ kind: "aborted", index: 0 });
    expect(fake.calls.filter((c) => c.verb.startsWith("patch"))).toHaveLength(0);
  });

  it("SPEC §7 losing the Lease stops the controllers immediately: every write carries the controller's signal, so a stop ends its waits", async () => {
    const { fake, client, stored } = await setup(awsMachine("m-8", { meta: { finalizers: undefined } }));
    const seen: { verb: string; signal: AbortSignal | undefined }[] = [];
    const recording: KubeClient = {
      ...client,
      create: (t, object, options) => {
        seen.push({ verb: "create", signal: options?.signal });
        return client.create(t, object, options);
      },
      patch: (t, ns, name, patch, options) => {
        seen.push({ verb: `patch:${patch.type}`, signal: options?.signal });
        return client.patch(t, ns, name, patch, options);
      },
      delete: (t, ns, name, options) => {
        seen.push({ verb: "delete", signal: options?.signal });
        return client.delete(t, ns, name, options);
      },
    };
    const abort = new AbortController();
    const twin = { ...awsMachine("m-9"), metadata: { name: "m-9", namespace: CAPI_NS } };
    const outcome = await executeWrites({ client: recording, typeOf, signal: abort.signal }, [
      { kind: "create", object: twin } as SyncWrite,
      addFinalizerWrite(stored, FINALIZERS.sync) as SyncWrite,
      applyOf(stored, { note: "x" }),
      statusOf(stored),
      deleteWrite(stored),
    ]);
    expect(outcome.kind).toBe("done");
    expect(seen.map((c) => c.verb)).toEqual(["create", "patch:json", "patch:apply", "patch:merge", "delete"]);
    for (const call of seen) expect(call.signal, call.verb).toBe(abort.signal);
    expect(fake.calls.length).toBeGreaterThan(0);
  });

  const o = awsMachine("m-7");
  const jsonWrite = addFinalizerWrite(
    { ...o, metadata: { ...o.metadata, finalizers: [] } },
    "x",
  ) as SyncWrite;
  const applyWrite = applyOf(o, {});
  it.each([
    ["409 Conflict", applyWrite, new ConflictError(409, "Conflict", "modified"), "conflict"],
    ["422 failed test on a JSON Patch", jsonWrite, new InvalidError(422, "Invalid", "rejected"), "conflict"],
    [
      "422 with causes on a JSON Patch (e.g. finalizer on a deleting object)",
      jsonWrite,
      new InvalidError(422, "Invalid", "forbidden", [{ field: "metadata.finalizers" }]),
      "refused",
    ],
    ["400 admission webhook denial", applyWrite, new KubeApiError(400, "BadRequest", "denied"), "refused"],
    ["403 admission webhook denial", applyWrite, new ForbiddenError(403, "Forbidden", "denied"), "refused"],
    ["422 schema validation of an apply", applyWrite, new InvalidError(422, "Invalid", "bad"), "refused"],
    ["404", applyWrite, new NotFoundError(404, "NotFound", "gone"), "other"],
    ["500", applyWrite, new KubeApiError(500, "InternalError", "boom"), "other"],
  ] as const)("classifies %s", (_name, write, error, expected) => {
    expect(classifyFailure(write, error)).toBe(expected);
  });
});
