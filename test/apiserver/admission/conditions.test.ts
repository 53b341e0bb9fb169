import { describe, expect, it } from "vitest";
import { conditionVariables, memoisedConverter } from "../../../src/apiserver/admission/conditions.js";
import type { AdmissionAttributes } from "../../../src/apiserver/admission/index.js";
import { admissionRequest } from "../../../src/apiserver/admission/matching.js";
import { celFailed, compileExpression, jsonToCel } from "../../../src/apiserver/schema/cel.js";

const VARIABLES = ["object", "oldObject", "request", "authorizer", "params"];

const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: "UPDATE",
  kind: { group: "machine.openshift.io", version: "v1beta1", kind: "Machine" },
  resource: { group: "machine.openshift.io", version: "v1beta1", resource: "machines" },
  name: "worker-a",
  namespace: "openshift-machine-api",
  object: { metadata: { name: "worker-a", labels: { role: "worker" } }, spec: { replicas: 3 } },
  oldObject: { metadata: { name: "worker-a", labels: { role: "old" } }, spec: { replicas: 2 } },
  userInfo: { username: "alice", groups: ["system:authenticated"] },
  dryRun: false,
  options: null,
  ...over,
});

/** The conversion the dispatcher did before variables were lazy: every variable, eagerly, every webhook. */
const eagerVariables = (a: AdmissionAttributes) => ({
  object: jsonToCel(a.object),
  oldObject: jsonToCel(a.oldObject),
  request: jsonToCel(admissionRequest(a, "")),
});

/** A converter that records what it was asked to convert. */
const counting = () => {
  const seen: unknown[] = [];
  const convert = (v: unknown) => {
    seen.push(v);
    return jsonToCel(v);
  };
  return { seen, convert };
};

const evaluate = (expression: string, vars: Record<string, unknown>) => {
  const result = compileExpression(expression, VARIABLES).program(vars);
  return celFailed(result) ? "error" : result;
};

describe("matchCondition variables (kube's object, oldObject, request)", () => {
  it.each<[string, string, Partial<AdmissionAttributes>, unknown]>([
    ["object is seen", "object.metadata.labels.role == 'worker'", {}, true],
    ["object integers are int", "object.spec.replicas == 3", {}, true],
    ["oldObject is seen", "oldObject.metadata.labels.role == 'old'", {}, true],
    ["oldObject is null on CREATE", "oldObject == null", { operation: "CREATE", oldObject: null }, true],
    ["object is null on DELETE", "object == null", { operation: "DELETE", object: null }, true],
    ["request.userInfo.username", "request.userInfo.username == 'alice'", {}, true],
    ["request.object is the object", "request.object.metadata.labels.role", {}, "worker"],
    ["request.oldObject is the old object", "request.oldObject.spec.replicas == 2", {}, true],
    ["request.operation", "request.operation", {}, "UPDATE"],
    ["request.namespace", "request.namespace", {}, "openshift-machine-api"],
    ["has() on a present request field", "has(request.userInfo)", {}, true],
    ["has() on an absent request field", "has(request.subResource)", {}, false],
    ["has() on a null request field", "has(request.options)", {}, false],
    ["subResource when there is one", "request.subResource", { subResource: "status" }, "status"],
    ["size of request", "size(request)", {}, 13n],
    ["iteration over request keys", "request.exists(k, k == 'userInfo')", {}, true],
    ["'in' on request", "'dryRun' in request && !('subResource' in request)", {}, true],
    [
      "request.kind equals a map literal",
      "request.kind == {'group': 'machine.openshift.io', 'version': 'v1beta1', 'kind': 'Machine'}",
      {},
      true,
    ],
    [
      "the product's controller exclusion",
      "!(request.userInfo.username in ['system:serviceaccount:openshift-cluster-api:machine-api-migration'])",
      {},
      true,
    ],
    ["a missing field is an error", "object.spec.nope == 1", {}, "error"],
    ["authorizer is not provided", "authorizer == null", {}, "error"],
  ])("%s: as the eager conversion did", (_name, expression, over, expected) => {
    const a = attrs(over);
    expect(evaluate(expression, conditionVariables(a, memoisedConverter()))).toEqual(expected);
    expect(evaluate(expression, eagerVariables(a))).toEqual(expected);
  });

  it.each<[string, string, string[]]>([
    [
      "request.userInfo.username converts only userInfo",
      "request.userInfo.username == 'alice'",
      ["userInfo"],
    ],
    ["object converts only the object", "has(object.metadata)", ["object"]],
    ["request.object converts the object, not oldObject", "has(request.object.metadata)", ["object"]],
    ["oldObject converts only the old object", "oldObject != null", ["oldObject"]],
  ])("an unreferenced variable is not converted: %s", (_name, expression, wanted) => {
    const a = attrs();
    const byName: Record<string, unknown> = {
      object: a.object,
      oldObject: a.oldObject,
      userInfo: a.userInfo,
    };
    const { seen, convert } = counting();
    evaluate(expression, conditionVariables(a, memoisedConverter(convert)));
    const converted = Object.keys(byName).filter((k) => seen.includes(byName[k]));
    expect(converted).toEqual(wanted);
  });

  it("each value is converted at most once per dispatch, however many webhooks read it", () => {
    const a = attrs();
    const { seen, convert } = counting();
    const shared = memoisedConverter(convert);
    // Three webhooks' conditions; a mutating chain gives each webhook a new attributes record, same objects.
    for (const expression of [
      "object.spec.replicas > 0",
      "request.object.spec.replicas > 0",
      "has(object.spec)",
    ])
      expect(evaluate(expression, conditionVariables({ ...a }, shared))).toBe(true);
    expect(seen.filter((v) => v === a.object)).toHaveLength(1);
  });

  it("a patched object (a new value) is converted afresh", () => {
    const a = attrs();
    const shared = memoisedConverter();
    expect(evaluate("object.spec.replicas", conditionVariables(a, shared))).toBe(3n);
    const patched = { ...a, object: { ...a.object, spec: { replicas: 5 } } };
    expect(evaluate("object.spec.replicas", conditionVariables(patched, shared))).toBe(5n);
  });
});
