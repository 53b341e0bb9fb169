/** Typed API errors, resource paths, and the informer store's indexes and trimming. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ConflictError,
  errorFromStatus,
  ForbiddenError,
  GoneError,
  InvalidError,
  KubeApiError,
  NotFoundError,
  ServerError,
  TooManyRequestsError,
} from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { DEFAULT_INDEXES, INDEX, IndexedStore, trimForCache } from "../../src/kube/store.js";
import { resourcePath } from "../../src/kube/transport.js";

const status = (code: number, reason: string, message: string, causes?: unknown[]) =>
  JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    code,
    reason,
    message,
    details: { causes },
  });

describe("typed API errors carry the server's message", () => {
  it.each([
    [404, "NotFound", NotFoundError],
    [409, "Conflict", ConflictError],
    [409, "AlreadyExists", ConflictError],
    [422, "Invalid", InvalidError],
    [403, "Forbidden", ForbiddenError],
    [410, "Expired", GoneError],
    [429, "TooManyRequests", TooManyRequestsError],
    [500, "InternalError", ServerError],
    [503, "ServiceUnavailable", ServerError],
  ] as const)("%i %s", (code, reason, cls) => {
    const e = errorFromStatus(code, status(code, reason, `server says ${reason}`));
    expect(e).toBeInstanceOf(cls);
    expect(e).toBeInstanceOf(KubeApiError);
    expect([e.code, e.reason, e.message]).toEqual([code, reason, `server says ${reason}`]);
  });

  it("keeps field causes of an Invalid answer", () => {
    const e = errorFromStatus(
      422,
      status(422, "Invalid", "bad", [{ reason: "FieldValueInvalid", field: "spec.x", message: "no" }]),
    );
    expect(e.causes).toEqual([{ reason: "FieldValueInvalid", field: "spec.x", message: "no" }]);
  });

  it("AlreadyExists is a conflict that says so", () => {
    expect((errorFromStatus(409, status(409, "AlreadyExists", "x")) as ConflictError).alreadyExists).toBe(
      true,
    );
    expect((errorFromStatus(409, status(409, "Conflict", "x")) as ConflictError).alreadyExists).toBe(false);
  });

  it("a non-JSON body becomes the message", () => {
    expect(errorFromStatus(502, "Bad Gateway").message).toBe("Bad Gateway");
  });
});

describe("resource paths", () => {
  it.each([
    [resourcePath(KINDS.configMap, "ns", "a"), "/api/v1/namespaces/ns/configmaps/a"],
    [resourcePath(KINDS.configMap), "/api/v1/configmaps"],
    [
      resourcePath(KINDS.mapiMachine, "openshift-machine-api"),
      "/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machines",
    ],
    [
      resourcePath(KINDS.infrastructure, "ignored", "cluster"),
      "/apis/config.openshift.io/v1/infrastructures/cluster",
    ],
    [
      resourcePath(KINDS.capiMachine, "ns", "m", "status"),
      "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machines/m/status",
    ],
  ])("%s", (actual, expected) => expect(actual).toBe(expected));
});

const byName = (x: KubeObject, y: KubeObject): number =>
  String(x.metadata?.name).localeCompare(String(y.metadata?.name));

describe("indexed store", () => {
  const o = (name: string, labels: Record<string, string>, owner?: string): KubeObject => ({
    metadata: {
      name,
      namespace: "ns",
      labels,
      ...(owner ? { ownerReferences: [{ apiVersion: "v1", kind: "X", name: "o", uid: owner }] } : {}),
    },
  });

  it("indexes by owner uid, label and namespace, and re-files on update and delete", () => {
    const store = new IndexedStore();
    store.upsert(o("a", { set: "one" }, "owner-1"));
    store.upsert(o("b", { set: "one" }));
    expect(
      store
        .byIndex(INDEX.label, "set=one")
        .map((x) => x.metadata?.name)
        .sort(),
    ).toEqual(["a", "b"]);
    expect(store.byIndex(INDEX.owner, "owner-1").map((x) => x.metadata?.name)).toEqual(["a"]);
    store.upsert(o("a", { set: "two" }));
    expect(store.byIndex(INDEX.label, "set=one").map((x) => x.metadata?.name)).toEqual(["b"]);
    expect(store.byIndex(INDEX.owner, "owner-1")).toEqual([]);
    store.remove("ns/b");
    expect(store.byIndex(INDEX.label, "set=one")).toEqual([]);
    expect(store.list("ns").map((x) => x.metadata?.name)).toEqual(["a"]);
    expect(store.list("other")).toEqual([]);
  });

  it("every index answers what a scan of the stored objects answers, after any updates and deletes", () => {
    const name = fc.constantFrom("a", "b", "c");
    const op = fc.oneof(
      fc.record({
        upsert: name,
        labels: fc.dictionary(fc.constantFrom("set", "zone", "role"), fc.constantFrom("x", "y")),
        owners: fc.array(fc.constantFrom("u1", "u2"), { maxLength: 2 }),
      }),
      fc.record({ remove: name }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const store = new IndexedStore();
        const held = new Map<string, KubeObject>();
        for (const step of ops) {
          if ("remove" in step) {
            store.remove(`ns/${step.remove}`);
            held.delete(step.remove);
          } else {
            const object: KubeObject = {
              metadata: {
                name: step.upsert,
                namespace: "ns",
                labels: step.labels,
                ownerReferences: step.owners.map((uid) => ({ apiVersion: "v1", kind: "X", name: uid, uid })),
              },
            };
            store.upsert(object);
            held.set(step.upsert, object);
          }
          for (const [index, fn] of Object.entries(DEFAULT_INDEXES)) {
            const values = new Set([...held.values()].flatMap((x) => fn(x)));
            for (const value of [...values, "set=x", "u1", "ns"]) {
              const scanned = [...held.values()].filter((x) => fn(x).includes(value));
              expect(store.byIndex(index, value).sort(byName)).toEqual(scanned.sort(byName));
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("custom index functions, also added after objects are stored", () => {
    const store = new IndexedStore();
    store.upsert({ metadata: { name: "a", namespace: "ns" }, spec: { infrastructureRef: { name: "t1" } } });
    store.addIndex("infraRef", (x) => {
      const ref = (x.spec as { infrastructureRef?: { name?: string } } | undefined)?.infrastructureRef?.name;
      return ref ? [ref] : [];
    });
    expect(store.byIndex("infraRef", "t1").map((x) => x.metadata?.name)).toEqual(["a"]);
  });

  it("files a CAPI Machine under its infrastructureRef and a MachineSet under its template's, as namespace/name", () => {
    const store = new IndexedStore();
    const machine = (name: string, ref: unknown, namespace = "ns"): KubeObject => ({
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "Machine",
      metadata: { name, namespace },
      spec: { infrastructureRef: ref },
    });
    store.upsert(machine("m1", { kind: "AWSMachine", name: "infra-1" }));
    store.upsert(machine("m2", { kind: "AWSMachine", name: "infra-1" }));
    store.upsert(machine("elsewhere", { kind: "AWSMachine", name: "infra-1" }, "other"));
    store.upsert({
      kind: "MachineSet",
      metadata: { name: "set", namespace: "ns" },
      spec: { template: { spec: { infrastructureRef: { name: "template-1" } } } },
    });
    const filed = (value: string) =>
      store
        .byIndex(INDEX.infrastructureRef, value)
        .map((x) => x.metadata?.name)
        .sort();
    expect(filed("ns/infra-1")).toEqual(["m1", "m2"]);
    expect(filed("other/infra-1")).toEqual(["elsewhere"]);
    expect(filed("ns/template-1")).toEqual(["set"]);
    expect(filed("infra-1")).toEqual([]);
    // Re-filed when the reference changes, unfiled on delete; names that are not strings are not filed.
    store.upsert(machine("m1", { kind: "AWSMachine", name: "infra-2" }));
    expect(filed("ns/infra-1")).toEqual(["m2"]);
    expect(filed("ns/infra-2")).toEqual(["m1"]);
    store.remove("ns/m2");
    expect(filed("ns/infra-1")).toEqual([]);
    for (const odd of [{ name: 7 }, { name: "" }, "infra-1", null, [{ name: "infra-1" }]]) {
      store.upsert(machine("odd", odd));
      expect(store.byIndex(INDEX.infrastructureRef, "ns/infra-1").map((x) => x.metadata?.name)).toEqual([]);
    }
  });

  it("drops managedFields and the last-applied annotation without touching the input", () => {
    const input: KubeObject = {
      metadata: {
        name: "a",
        managedFields: [{ manager: "kubectl" }],
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}", keep: "yes" },
      },
    };
    const trimmed = trimForCache(input);
    expect(trimmed.metadata).toEqual({ name: "a", annotations: { keep: "yes" } });
    expect(input.metadata?.managedFields).toHaveLength(1);
  });
});
