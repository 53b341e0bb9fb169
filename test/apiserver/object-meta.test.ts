import { describe, expect, it } from "vitest";
import {
  generatedName,
  IDENTITY_AND_SERVER_METADATA,
  labelValueCauses,
  metadataCauses,
  nameProblems,
  OBJECT_META_FIELDS,
  UNMANAGED_METADATA,
} from "../../src/apiserver/object-meta.js";
import { Registry } from "../../src/apiserver/registry.js";
import { checkPrecondition, defaultBuiltIn, typedForm, validate } from "../../src/apiserver/rest/strategy.js";
import { ApiError } from "../../src/apiserver/status.js";
import type { ResourceInfo } from "../../src/apiserver/types.js";
import type { KubeObject } from "../../src/kube/object.js";

describe("ObjectMeta field lists: one list of what the server owns, read by pruning, managed fields and restore", () => {
  it("metav1.ObjectMeta has exactly kube's fields", () => {
    expect([...OBJECT_META_FIELDS].sort()).toEqual(
      [
        "annotations",
        "creationTimestamp",
        "deletionGracePeriodSeconds",
        "deletionTimestamp",
        "finalizers",
        "generateName",
        "generation",
        "labels",
        "managedFields",
        "name",
        "namespace",
        "ownerReferences",
        "resourceVersion",
        "selfLink",
        "uid",
      ].sort(),
    );
  });

  it.each<[string, boolean]>([
    ["name", true],
    ["namespace", true],
    ["uid", true],
    ["resourceVersion", true],
    ["generation", true],
    ["creationTimestamp", true],
    ["deletionTimestamp", true],
    ["deletionGracePeriodSeconds", true],
    ["managedFields", true],
    ["selfLink", true],
    ["labels", false],
    ["annotations", false],
    ["finalizers", false],
    ["ownerReferences", false],
    ["generateName", false],
  ])("managed fields: metadata.%s is never in a field set: %s", (field, unmanaged) => {
    expect(UNMANAGED_METADATA.has(field)).toBe(unmanaged);
  });

  it("mutating admission may not change identity or server-set metadata, and nothing else of metadata", () => {
    expect([...IDENTITY_AND_SERVER_METADATA].sort()).toEqual(
      [
        "creationTimestamp",
        "deletionGracePeriodSeconds",
        "deletionTimestamp",
        "generation",
        "name",
        "namespace",
        "uid",
      ].sort(),
    );
  });
});

describe("checkPrecondition: kube's 409 for a uid or resourceVersion precondition that does not hold", () => {
  const res = { group: "example.com", plural: "widgets" } as ResourceInfo;
  const stored: KubeObject = { metadata: { name: "w1", uid: "u-1", resourceVersion: "7" } };
  it.each<[string, "uid" | "resourceVersion", string | undefined, string | undefined]>([
    ["no precondition holds", "uid", undefined, undefined],
    ["a matching uid holds", "uid", "u-1", undefined],
    [
      "another uid fails",
      "uid",
      "u-2",
      'Operation cannot be fulfilled on widgets.example.com "w1": Precondition failed: UID in precondition: u-2, UID in object meta: u-1',
    ],
    ["a matching resourceVersion holds", "resourceVersion", "7", undefined],
    [
      "another resourceVersion fails",
      "resourceVersion",
      "6",
      'Operation cannot be fulfilled on widgets.example.com "w1": Precondition failed: ResourceVersion in precondition: 6, ResourceVersion in object meta: 7',
    ],
    [
      "an empty uid (the garbage collector's) fails against a stored uid",
      "uid",
      "",
      'Operation cannot be fulfilled on widgets.example.com "w1": Precondition failed: UID in precondition: , UID in object meta: u-1',
    ],
  ])("%s", (_name, field, want, message) => {
    let thrown: unknown;
    try {
      checkPrecondition(res, stored, field, want);
    } catch (e) {
      thrown = e;
    }
    if (message === undefined) expect(thrown).toBeUndefined();
    else {
      expect(thrown).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).code).toBe(409);
      expect((thrown as ApiError).message).toBe(message);
    }
  });
});

const registry = new Registry();
const resource = (key: string): ResourceInfo => registry.byKey(key)!;
const refusal = (f: () => void): ApiError | undefined => {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  return undefined;
};

describe("names: each kind's rule (kube's ValidateNameFunc), a generateName checked as a prefix", () => {
  it.each<[string, string, string, boolean, number]>([
    ["a ConfigMap named Upper.x", "/configmaps", "Upper.x", false, 1],
    // Core Events: the generic path-segment rule only (events.k8s.io/v1 Events are subdomains).
    ["a core Event named Upper.x", "/events", "Upper.x", false, 0],
    ["a core Event named a/b", "/events", "a/b", false, 1],
    ["an events.k8s.io Event named Upper.x", "events.k8s.io/events", "Upper.x", false, 1],
    ["a Service named 1abc (a DNS-1035 label)", "/services", "1abc", false, 1],
    // Too long and not a label: one cause each, as kube gives.
    ["a Namespace named with 64 characters and a dot", "/namespaces", `${"n".repeat(63)}.`, false, 2],
    ["a ConfigMap generateName gen.", "/configmaps", "gen.", true, 1],
    ["a ConfigMap generateName gen-", "/configmaps", "gen-", true, 0],
    // maskTrailingDash keeps all but the last two characters: "a.-" is checked as "aa".
    ["a ConfigMap generateName a.-", "/configmaps", "a.-", true, 0],
    ["a core Event generateName gen.", "/events", "gen.", true, 0],
    ["a core Event generateName .", "/events", ".", true, 0],
    [
      "a Role generateName . (ValidateRBACName ignores the prefix)",
      "rbac.authorization.k8s.io/roles",
      ".",
      true,
      1,
    ],
    ["a Namespace generateName of 100 characters", "/namespaces", "n".repeat(100), true, 1],
  ])("%s", (_, key, name, prefix, causes) => {
    expect(nameProblems(resource(key), name, prefix)).toHaveLength(causes);
  });
});

describe("generatedName: kube's SimpleNameGenerator", () => {
  it("cuts the prefix to 58 characters: a 63-character name", () => {
    const name = generatedName("g".repeat(100), () => 0);
    expect(name).toBe(`${"g".repeat(58)}bbbbb`);
  });
  it("keeps a short prefix whole and adds five characters of kube's alphabet", () => {
    expect(generatedName("web-")).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
});

describe("ObjectMeta keys and values", () => {
  const causes = (metadata: Record<string, unknown>) =>
    [...labelValueCauses({ metadata }), ...metadataCauses({ metadata })].map((c) => c.message);
  it("an annotation key's case does not matter (kube lower-cases it first); a label key's does", () => {
    expect(causes({ annotations: { "A.B/c": "v" } })).toEqual([]);
    expect(causes({ labels: { "A.B/c": "v" } })).toEqual([
      `Invalid value: "A.B/c": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
  });
  it("a key with an empty prefix and a too-long name part gives a cause per problem", () => {
    expect(causes({ labels: { [`/${"x".repeat(64)}`]: "v" } })).toEqual([
      `Invalid value: "/${"x".repeat(64)}": prefix part must be non-empty`,
      `Invalid value: "/${"x".repeat(64)}": name part must be no more than 63 characters`,
    ]);
  });
});

describe("typed form and defaulting: what kube's decoding and strategies leave of a write", () => {
  it("a null in labels, annotations or a ConfigMap's data is stored as \"\" (Go's zero string)", () => {
    const o = typedForm(resource("/configmaps"), {
      metadata: { name: "c", labels: { l: null }, annotations: { a: null } },
      data: { d: null },
    } as unknown as KubeObject);
    expect(o.metadata).toEqual({ name: "c", labels: { l: "" }, annotations: { a: "" } });
    expect(o.data).toEqual({ d: "" });
  });
  it("a custom resource's metadata is typed too", () => {
    const crd = { ...resource("/configmaps"), group: "example.com", plural: "widgets", builtIn: false };
    const o = typedForm(crd, {
      metadata: { labels: { l: null } },
      spec: { v: null },
    } as unknown as KubeObject);
    expect(o).toEqual({ metadata: { labels: { l: "" } }, spec: { v: null } });
  });
  it("a Lease's strategy and preferredHolder are dropped (CoordinatedLeaderElection is off in 1.33)", () => {
    const leases = resource("coordination.k8s.io/leases");
    const spec = { holderIdentity: "a", preferredHolder: "b", strategy: "OldestEmulationVersion" };
    expect(defaultBuiltIn(leases, { spec }, undefined).spec).toEqual({ holderIdentity: "a" });
    expect(defaultBuiltIn(leases, { spec }, { spec: { holderIdentity: "a" } }).spec).toEqual({
      holderIdentity: "a",
    });
    // Kept on update when the stored Lease has them (written while the gate was on).
    expect(defaultBuiltIn(leases, { spec }, { spec }).spec).toEqual(spec);
  });
  it("a Namespace created with its own spec.finalizers keeps them, kubernetes added", () => {
    const ns = defaultBuiltIn(
      resource("/namespaces"),
      { metadata: { name: "n" }, spec: { finalizers: ["example.com/x"] } },
      undefined,
    );
    expect(ns.spec).toEqual({ finalizers: ["example.com/x", "kubernetes"] });
  });
});

describe("validate: names, generateName, and the group kube's 422 names", () => {
  it("a generateName that cannot start a valid name is refused, whatever the generated name", () => {
    const e = refusal(() =>
      validate(
        resource("/configmaps"),
        "v1",
        { metadata: { name: "gen.abcde", generateName: "gen." } },
        undefined,
      ),
    );
    expect(e?.code).toBe(422);
    expect(e?.details?.causes?.map((c) => c.field)).toEqual(["metadata.generateName"]);
  });
  it("a core Event named Upper.x is valid", () => {
    const event = { metadata: { name: "Upper.x", namespace: "default" }, involvedObject: {} };
    expect(refusal(() => validate(resource("/events"), "v1", event, undefined))).toBeUndefined();
  });
  it("an events.k8s.io Event's refusal names the core Event (kube validates the internal type)", () => {
    const e = refusal(() =>
      validate(
        resource("events.k8s.io/events"),
        "v1",
        { metadata: { name: "x", namespace: "default" } },
        undefined,
      ),
    );
    expect(e?.message).toMatch(/^Event "x" is invalid: /);
    expect(e?.details?.group).toBe("");
  });
});

describe("kube's ValidateFinalizers: not both of the garbage collector's finalizers", () => {
  it.each([
    [["orphan"], 0],
    [["foregroundDeletion", "example.com/hold"], 0],
    [["orphan", "foregroundDeletion"], 1],
  ])("%j → %i cause(s)", (finalizers, n) => {
    const causes = metadataCauses({ metadata: { name: "a", finalizers } });
    expect(causes.length).toBe(n);
    if (n > 0)
      expect(causes[0]?.message).toBe(
        'Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
      );
  });
});
