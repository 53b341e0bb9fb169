import { describe, expect, it } from "vitest";
import {
  IDENTITY_AND_SERVER_METADATA,
  OBJECT_META_FIELDS,
  UNMANAGED_METADATA,
} from "../../src/apiserver/object-meta.js";
import { checkPrecondition } from "../../src/apiserver/rest/strategy.js";
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
