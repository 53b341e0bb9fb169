/**
 * `OwnerReferencesPermissionEnforcement` (SPEC §8), decided as kube's plugin/pkg/admission/gc does: which
 * requests change ownerReferences, which references newly block their owner's deletion, and what the writer
 * must be allowed for each — with kube-apiserver 1.33's refusals word for word.
 */
import { describe, expect, it } from "vitest";
import {
  changesOwnerReferences,
  checkOwnerReferencePermissions,
  mappingsFrom,
  newlyBlockingReferences,
  type OwnerReferencePermissionDeps,
} from "../../../src/apiserver/admission/owner-references.js";
import type { AdmissionAttributes } from "../../../src/apiserver/admission/types.js";
import type { Attributes, ResourceAttributes } from "../../../src/apiserver/rbac.js";
import type { KubeObject, OwnerReference } from "../../../src/kube/object.js";

const OWNER = {
  apiVersion: "cluster.x-k8s.io/v1beta2",
  kind: "Machine",
  name: "owner",
  uid: "uid-owner",
  controller: true,
  blockOwnerDeletion: true,
};
const withRefs = (refs: unknown[] | undefined, name = "dependent"): KubeObject => ({
  apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
  kind: "AWSMachine",
  // Deliberately loose references (unknown fields, absent booleans): the plugin sees what clients send.
  metadata: {
    name,
    namespace: "openshift-cluster-api",
    ...(refs ? { ownerReferences: refs as OwnerReference[] } : {}),
  },
});

describe("which requests change ownerReferences (kube's isChangingOwnerReference)", () => {
  const cases: Array<[string, KubeObject, KubeObject | null, boolean]> = [
    ["a create with one", withRefs([OWNER]), null, true],
    ["a create without", withRefs(undefined), null, false],
    ["an update that keeps them", withRefs([OWNER]), withRefs([OWNER]), false],
    ["an update that adds one", withRefs([OWNER, { ...OWNER, uid: "u2" }]), withRefs([OWNER]), true],
    ["an update that removes one", withRefs([]), withRefs([OWNER]), true],
    [
      "an update that reorders them",
      withRefs([{ ...OWNER, uid: "u2" }, OWNER]),
      withRefs([OWNER, { ...OWNER, uid: "u2" }]),
      true,
    ],
    [
      "blockOwnerDeletion false → absent is a change (nil is not false)",
      withRefs([{ ...OWNER, blockOwnerDeletion: undefined }]),
      withRefs([{ ...OWNER, blockOwnerDeletion: false }]),
      true,
    ],
    [
      "an unknown field of a reference is not a change (kube decodes the typed fields)",
      withRefs([{ ...OWNER, extra: 1 }]),
      withRefs([OWNER]),
      false,
    ],
  ];
  it.each(cases)("%s", (_what, object, old, changes) => {
    expect(changesOwnerReferences(object, old)).toBe(changes);
  });
});

describe("which references newly block their owner (kube's newBlockingOwnerDeletionRefs)", () => {
  const cases: Array<[string, KubeObject, KubeObject | null, string[]]> = [
    [
      "a create: every blocking one",
      withRefs([OWNER, { ...OWNER, uid: "u2", blockOwnerDeletion: false }]),
      null,
      ["uid-owner"],
    ],
    ["an update keeping a blocking one: none", withRefs([OWNER]), withRefs([OWNER]), []],
    ["a new blocking one (by uid)", withRefs([OWNER]), withRefs([{ ...OWNER, uid: "other" }]), ["uid-owner"]],
    ["false → true", withRefs([OWNER]), withRefs([{ ...OWNER, blockOwnerDeletion: false }]), ["uid-owner"]],
    [
      "absent → true",
      withRefs([OWNER]),
      withRefs([{ ...OWNER, blockOwnerDeletion: undefined }]),
      ["uid-owner"],
    ],
    ["true → false", withRefs([{ ...OWNER, blockOwnerDeletion: false }]), withRefs([OWNER]), []],
    [
      "a renamed owner with the same uid that already blocked: none",
      withRefs([{ ...OWNER, name: "renamed" }]),
      withRefs([OWNER]),
      [],
    ],
  ];
  it.each(cases)("%s", (_what, object, old, uids) => {
    expect(newlyBlockingReferences(object, old).map((r) => r.uid)).toEqual(uids);
  });
});

/** An authorizer that allows exactly the listed `verb group/resource[/sub] namespace name` strings. */
const allowing = (...grants: string[]): OwnerReferencePermissionDeps["authorize"] & { asked: string[] } => {
  const asked: string[] = [];
  const f = (a: Attributes) => {
    const r = a as ResourceAttributes;
    const key = `${r.verb} ${r.apiGroup}/${r.resource}${r.subresource ? `/${r.subresource}` : ""} ${r.namespace} ${r.name}`;
    asked.push(key);
    return grants.includes(key) ? { allowed: true, reason: "" } : { allowed: false, reason: "" };
  };
  return Object.assign(f, { asked });
};

const served = mappingsFrom((group, kind) =>
  group === "cluster.x-k8s.io" && kind === "Machine"
    ? { group, plural: "machines", namespaced: true, versions: ["v1beta2"] }
    : group === "cluster.x-k8s.io" && kind === "ClusterClass"
      ? { group, plural: "clusterclasses", namespaced: false, versions: ["v1beta2"] }
      : undefined,
);

const review = (
  operation: "CREATE" | "UPDATE",
  object: KubeObject,
  oldObject: KubeObject | null,
  extra: Partial<AdmissionAttributes> = {},
): AdmissionAttributes => ({
  operation,
  kind: { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2", kind: "AWSMachine" },
  resource: { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2", resource: "awsmachines" },
  name: String(object.metadata?.name ?? ""),
  namespace: "openshift-cluster-api",
  object,
  oldObject,
  userInfo: { username: "system:serviceaccount:openshift-cluster-api:capa-controller-manager", groups: [] },
  dryRun: false,
  options: null,
  ...extra,
});

const FINALIZE_OWNER = "update cluster.x-k8s.io/machines/finalizers openshift-cluster-api owner";
const FINALIZE_ANYTHING = "update */*/finalizers  *";
const DELETE_DEPENDENT = "delete infrastructure.cluster.x-k8s.io/awsmachines openshift-cluster-api dependent";
const PREFIX = 'awsmachines.infrastructure.cluster.x-k8s.io "dependent" is forbidden: ';

describe("what the writer must be allowed", () => {
  const cases: Array<[string, AdmissionAttributes, string[], string | undefined]> = [
    [
      "a create with a blocking owner and update on its finalizers",
      review("CREATE", withRefs([OWNER]), null),
      [FINALIZE_OWNER],
      undefined,
    ],
    [
      "a create with a blocking owner, no update on its finalizers (real: the CAPA identity)",
      review("CREATE", withRefs([OWNER]), null),
      [],
      `${PREFIX}cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`,
    ],
    [
      "a writer who may update every finalizer anywhere is asked nothing more",
      review("CREATE", withRefs([OWNER]), null),
      [FINALIZE_ANYTHING],
      undefined,
    ],
    [
      "a create with a non-blocking owner needs nothing",
      review("CREATE", withRefs([{ ...OWNER, blockOwnerDeletion: false }]), null),
      [],
      undefined,
    ],
    [
      "an update that changes nothing of them needs nothing",
      review("UPDATE", withRefs([OWNER]), withRefs([OWNER])),
      [],
      undefined,
    ],
    [
      "an update that adds a non-blocking owner needs delete on the object",
      review("UPDATE", withRefs([{ ...OWNER, blockOwnerDeletion: false }]), withRefs(undefined)),
      [],
      `${PREFIX}cannot set an ownerRef on a resource you can't delete: , <nil>`,
    ],
    [
      "…and with it, passes",
      review("UPDATE", withRefs([{ ...OWNER, blockOwnerDeletion: false }]), withRefs(undefined)),
      [DELETE_DEPENDENT],
      undefined,
    ],
    [
      "removing an owner needs delete too",
      review("UPDATE", withRefs([]), withRefs([OWNER])),
      [DELETE_DEPENDENT],
      undefined,
    ],
    [
      "an update that turns blocking on needs both",
      review("UPDATE", withRefs([OWNER]), withRefs([{ ...OWNER, blockOwnerDeletion: false }])),
      [DELETE_DEPENDENT],
      `${PREFIX}cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>`,
    ],
    [
      "…and passes with both",
      review("UPDATE", withRefs([OWNER]), withRefs([{ ...OWNER, blockOwnerDeletion: false }])),
      [DELETE_DEPENDENT, FINALIZE_OWNER],
      undefined,
    ],
    [
      "an owner kind no server serves",
      review("CREATE", withRefs([{ ...OWNER, apiVersion: "nope.example.com/v1", kind: "Widget" }]), null),
      [],
      `${PREFIX}cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion nope.example.com/v1 Kind Widget: no matches for kind "Widget" in version "nope.example.com/v1"`,
    ],
    [
      "an owner version not served",
      review("CREATE", withRefs([{ ...OWNER, apiVersion: "cluster.x-k8s.io/v9" }]), null),
      [],
      `${PREFIX}cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion cluster.x-k8s.io/v9 Kind Machine: no matches for kind "Machine" in version "cluster.x-k8s.io/v9"`,
    ],
    [
      "a cluster-scoped owner is asked at the cluster scope",
      review("CREATE", withRefs([{ ...OWNER, kind: "ClusterClass", name: "cc" }]), null),
      ["update cluster.x-k8s.io/clusterclasses/finalizers  cc"],
      undefined,
    ],
    [
      "pods/status is exempt",
      review("UPDATE", withRefs([OWNER]), withRefs(undefined), {
        resource: { group: "", version: "v1", resource: "pods" },
        subResource: "status",
      }),
      [],
      undefined,
    ],
    [
      "a DELETE is none of its business",
      {
        ...review("UPDATE", withRefs([OWNER]), null),
        operation: "DELETE",
        object: null,
        oldObject: withRefs([OWNER]),
      },
      [],
      undefined,
    ],
  ];
  it.each(cases)("%s", (_what, attributes, grants, message) => {
    const refused = checkOwnerReferencePermissions(attributes, {
      authorize: allowing(...grants),
      mappingsFor: served,
    });
    expect(refused?.message).toBe(message);
    if (refused)
      expect(refused.toStatus()).toMatchObject({
        code: 403,
        reason: "Forbidden",
        details: { name: "dependent", group: "infrastructure.cluster.x-k8s.io", kind: "awsmachines" },
      });
  });

  it("the authorizer's reason is carried as kube carries it (`<reason>, <nil>`)", () => {
    const refused = checkOwnerReferencePermissions(review("UPDATE", withRefs([]), withRefs([OWNER])), {
      authorize: () => ({ allowed: false, reason: 'RBAC: role.rbac.authorization.k8s.io "x" not found' }),
      mappingsFor: served,
    });
    expect(refused?.message).toBe(
      `${PREFIX}cannot set an ownerRef on a resource you can't delete: RBAC: role.rbac.authorization.k8s.io "x" not found, <nil>`,
    );
  });

  it("asks exactly what kube asks, in order: delete on the object, finalize-anything, then each owner", () => {
    const authorize = allowing(DELETE_DEPENDENT, FINALIZE_OWNER);
    checkOwnerReferencePermissions(review("UPDATE", withRefs([OWNER]), withRefs(undefined)), {
      authorize,
      mappingsFor: served,
    });
    expect(authorize.asked).toEqual([DELETE_DEPENDENT, FINALIZE_ANYTHING, FINALIZE_OWNER]);
  });

  it("a create named by generateName is named so in the refusal", () => {
    const object = { ...withRefs([OWNER], ""), metadata: { generateName: "gen-", ownerReferences: [OWNER] } };
    const refused = checkOwnerReferencePermissions(review("CREATE", object, null), {
      authorize: allowing(),
      mappingsFor: served,
    });
    expect(refused?.message).toMatch(
      /^awsmachines\.infrastructure\.cluster\.x-k8s\.io "gen-" is forbidden: /,
    );
  });
});

describe("the kind → resource lookup (kube's RESTMapper)", () => {
  it("parses the apiVersion as kube does", () => {
    expect(served("cluster.x-k8s.io/v1beta2", "Machine")).toEqual({
      ok: true,
      resources: [{ group: "cluster.x-k8s.io", resource: "machines", namespaced: true }],
    });
    expect(served("a/b/c", "Machine")).toEqual({ ok: false, error: "unexpected GroupVersion string: a/b/c" });
    expect(served("v1", "Machine")).toEqual({
      ok: false,
      error: 'no matches for kind "Machine" in version "v1"',
    });
  });
});
