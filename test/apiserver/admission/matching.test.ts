import { describe, expect, it } from "vitest";
import type { AdmissionAttributes } from "../../../src/apiserver/admission/index.js";
import {
  matchesResource,
  namespaceSelectorMatches,
  objectSelectorMatches,
  ruleMatches,
} from "../../../src/apiserver/admission/matching.js";

const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: "UPDATE",
  kind: { group: "machine.openshift.io", version: "v1beta1", kind: "Machine" },
  resource: { group: "machine.openshift.io", version: "v1beta1", resource: "machines" },
  name: "worker-a",
  namespace: "openshift-machine-api",
  namespaceLabels: { "kubernetes.io/metadata.name": "openshift-machine-api" },
  object: { metadata: { name: "worker-a", labels: { role: "worker" } } },
  oldObject: { metadata: { name: "worker-a", labels: { role: "old" } } },
  userInfo: { username: "alice", groups: ["system:authenticated"] },
  dryRun: false,
  options: null,
  ...over,
});

const rule = (over: Record<string, unknown> = {}) => ({
  operations: ["CREATE", "UPDATE"],
  apiGroups: ["machine.openshift.io"],
  apiVersions: ["v1beta1"],
  resources: ["machines"],
  ...over,
});

describe("webhook rules (SPEC §8 admission: operations, groups, versions, resources, scope)", () => {
  it.each<[string, Record<string, unknown>, Partial<AdmissionAttributes>, boolean]>([
    ["exact match", {}, {}, true],
    ["operation not listed", {}, { operation: "DELETE" }, false],
    ["operation *", { operations: ["*"] }, { operation: "DELETE" }, true],
    ["other group", { apiGroups: ["cluster.x-k8s.io"] }, {}, false],
    ["group *", { apiGroups: ["*"] }, {}, true],
    ["other version", { apiVersions: ["v1"] }, {}, false],
    ["resource * matches the main resource", { resources: ["*"] }, {}, true],
    ["resource * does not match a subresource", { resources: ["*"] }, { subResource: "status" }, false],
    ["machines does not match machines/status", {}, { subResource: "status" }, false],
    [
      "machines/status matches the status subresource",
      { resources: ["machines/status"] },
      { subResource: "status" },
      true,
    ],
    ["machines/status does not match the main resource", { resources: ["machines/status"] }, {}, false],
    ["*/scale matches any scale subresource", { resources: ["*/scale"] }, { subResource: "scale" }, true],
    ["*/scale does not match status", { resources: ["*/scale"] }, { subResource: "status" }, false],
    [
      "machines/* matches any machines subresource",
      { resources: ["machines/*"] },
      { subResource: "status" },
      true,
    ],
    ["machines/* does not match the main resource", { resources: ["machines/*"] }, {}, false],
    ["*/* matches everything", { resources: ["*/*"] }, { subResource: "scale" }, true],
    ["scope Namespaced matches a namespaced object", { scope: "Namespaced" }, {}, true],
    ["scope Cluster refuses a namespaced object", { scope: "Cluster" }, {}, false],
    ["scope Cluster matches a cluster-scoped object", { scope: "Cluster" }, { namespace: undefined }, true],
    ["scope * matches anything", { scope: "*" }, { namespace: undefined }, true],
  ])("%s", (_name, r, a, expected) => {
    expect(ruleMatches(rule(r) as Parameters<typeof ruleMatches>[0], attrs(a))).toBe(expected);
  });

  it("a Namespace object is cluster-scoped even though its request carries its own name as namespace", () => {
    const ns = attrs({
      kind: { group: "", version: "v1", kind: "Namespace" },
      resource: { group: "", version: "v1", resource: "namespaces" },
      namespace: "team-a",
    });
    const r = { operations: ["*"], apiGroups: [""], apiVersions: ["v1"], resources: ["namespaces"] };
    expect(ruleMatches({ ...r, scope: "Cluster" }, ns)).toBe(true);
    expect(ruleMatches({ ...r, scope: "Namespaced" }, ns)).toBe(false);
  });

  it("matchesResource handles the full/sub split", () => {
    expect(matchesResource(["machinesets/scale"], "machinesets", "scale")).toBe(true);
    expect(matchesResource(["machinesets/scale"], "machines", "scale")).toBe(false);
  });
});

describe("namespaceSelector (SPEC §2.2: only the two namespaces)", () => {
  const inNamespaces = {
    matchExpressions: [
      {
        key: "kubernetes.io/metadata.name",
        operator: "In",
        values: ["openshift-machine-api", "openshift-cluster-api"],
      },
    ],
  };
  it.each<[string, Record<string, unknown> | undefined, Partial<AdmissionAttributes>, boolean]>([
    ["absent selector matches", undefined, {}, true],
    ["empty selector matches", {}, {}, true],
    ["In matches a listed namespace", inNamespaces, {}, true],
    [
      "In refuses another namespace",
      inNamespaces,
      { namespaceLabels: { "kubernetes.io/metadata.name": "kube-system" } },
      false,
    ],
    ["matchLabels", { matchLabels: { team: "a" } }, { namespaceLabels: { team: "a" } }, true],
    ["matchLabels mismatch", { matchLabels: { team: "a" } }, { namespaceLabels: { team: "b" } }, false],
    [
      "NotIn",
      { matchExpressions: [{ key: "team", operator: "NotIn", values: ["a"] }] },
      { namespaceLabels: { team: "b" } },
      true,
    ],
    [
      "NotIn on an absent key matches",
      { matchExpressions: [{ key: "team", operator: "NotIn", values: ["a"] }] },
      { namespaceLabels: {} },
      true,
    ],
    ["Exists", { matchExpressions: [{ key: "team", operator: "Exists" }] }, { namespaceLabels: {} }, false],
    [
      "DoesNotExist",
      { matchExpressions: [{ key: "team", operator: "DoesNotExist" }] },
      { namespaceLabels: {} },
      true,
    ],
    [
      "cluster-scoped objects always match",
      inNamespaces,
      { namespace: undefined, namespaceLabels: undefined },
      true,
    ],
  ])("%s", (_name, selector, a, expected) => {
    expect(namespaceSelectorMatches(selector, attrs(a))).toBe(expected);
  });

  it("a Namespace object is matched against its own labels", () => {
    const ns = (labels: Record<string, string>) =>
      attrs({
        kind: { group: "", version: "v1", kind: "Namespace" },
        resource: { group: "", version: "v1", resource: "namespaces" },
        namespace: "team-a",
        namespaceLabels: undefined,
        object: { metadata: { name: "team-a", labels } },
        oldObject: null,
      });
    expect(namespaceSelectorMatches({ matchLabels: { env: "prod" } }, ns({ env: "prod" }))).toBe(true);
    expect(namespaceSelectorMatches({ matchLabels: { env: "prod" } }, ns({ env: "dev" }))).toBe(false);
  });
});

describe("objectSelector", () => {
  it.each<[string, Record<string, unknown>, Partial<AdmissionAttributes>, boolean]>([
    ["new object's labels match", { matchLabels: { role: "worker" } }, {}, true],
    ["old object's labels match", { matchLabels: { role: "old" } }, {}, true],
    ["neither matches", { matchLabels: { role: "master" } }, {}, false],
    [
      "DELETE: old object only",
      { matchLabels: { role: "old" } },
      { object: null, operation: "DELETE" },
      true,
    ],
  ])("%s", (_name, selector, a, expected) => {
    expect(objectSelectorMatches(selector, attrs(a))).toBe(expected);
  });
});
