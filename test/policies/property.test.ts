/**
 * Property: `decide` is total. For arbitrary JSON objects and oldObjects — real-shaped objects with junk
 * spliced in at the places rules read, and plain random JSON — on every webhook, operation and machine
 * kind, it never throws, never mutates its input, and returns a well-formed Decision.
 */
import fc from "fast-check";
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { FieldError } from "../../src/kube/field-error.js";
import type { KubeObject } from "../../src/kube/object.js";
import { decide } from "../../src/policies/engine.js";
import { memoryStore } from "../../src/policies/memory-store.js";
import type { AdmissionRequest, Decision, PolicyContext, WebhookName } from "../../src/policies/types.js";
import { clusterView } from "../../src/policies/view.js";
import {
  ADMIN,
  awsMachine,
  awsMachineTemplate,
  CAPI_NS,
  capiMachine,
  capiMachineSet,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  PRODUCT_USER,
  SETTINGS,
} from "./builders.js";

const BASES: (() => KubeObject)[] = [
  () => mapiMachine(),
  () => mapiMachine({ status: "ClusterAPI" }),
  () => mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" }),
  () => mapiMachineSet({ status: "absent" }),
  () => capiMachine(),
  () => capiMachineSet({ paused: "none" }),
  () => awsMachine(),
  () => awsMachineTemplate(),
];

/** Places the rules read, where junk does the most damage. */
const PATHS: string[][] = [
  ["metadata"],
  ["metadata", "name"],
  ["metadata", "labels"],
  ["metadata", "annotations"],
  ["metadata", "annotations", "cluster.x-k8s.io/paused"],
  ["metadata", "annotations", "machine-api-migration.openshift.io/paused-by"],
  ["metadata", "ownerReferences"],
  ["metadata", "finalizers"],
  ["metadata", "deletionTimestamp"],
  ["spec"],
  ["spec", "authoritativeAPI"],
  ["spec", "template"],
  ["spec", "template", "spec"],
  ["spec", "infrastructureRef"],
  ["spec", "replicas"],
  ["status"],
  ["status", "authoritativeAPI"],
  ["status", "synchronizedAPI"],
  ["status", "conditions"],
  ["status", "initialization"],
  ["kind"],
  ["apiVersion"],
];

const junk = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom("MachineAPI", "ClusterAPI", "Migrating", "", "__proto__", "constructor"),
);

function splice(base: KubeObject, edits: [number, unknown][]): KubeObject {
  const o = structuredClone(base) as Record<string, unknown>;
  for (const [index, value] of edits) {
    const path = PATHS[index % PATHS.length]!;
    let cur: Record<string, unknown> = o;
    for (const seg of path.slice(0, -1)) {
      const next = cur[seg];
      if (typeof next !== "object" || next === null || Array.isArray(next)) cur[seg] = {};
      cur = cur[seg] as Record<string, unknown>;
    }
    Object.defineProperty(cur, path[path.length - 1]!, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return o as KubeObject;
}

const realShaped = fc
  .tuple(fc.nat(BASES.length - 1), fc.array(fc.tuple(fc.nat(), junk), { maxLength: 4 }))
  .map(([i, edits]) => splice(BASES[i]!(), edits));
const anyObject: fc.Arbitrary<KubeObject | null> = fc.oneof(
  { weight: 4, arbitrary: realShaped },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<KubeObject | null> },
  { weight: 1, arbitrary: fc.constant(null) },
);

const RESOURCES: [string, string, string][] = [
  ["machine.openshift.io", "machines", "Machine"],
  ["machine.openshift.io", "machinesets", "MachineSet"],
  ["cluster.x-k8s.io", "machines", "Machine"],
  ["cluster.x-k8s.io", "machinesets", "MachineSet"],
  ["infrastructure.cluster.x-k8s.io", "awsmachines", "AWSMachine"],
  ["infrastructure.cluster.x-k8s.io", "awsmachinetemplates", "AWSMachineTemplate"],
  ["infrastructure.cluster.x-k8s.io", "gcpmachines", "GCPMachine"],
  ["", "configmaps", "ConfigMap"],
];

const request: fc.Arbitrary<AdmissionRequest> = fc
  .record({
    resource: fc.constantFrom(...RESOURCES),
    operation: fc.constantFrom("CREATE", "UPDATE", "DELETE", "CONNECT") as fc.Arbitrary<
      AdmissionRequest["operation"]
    >,
    subResource: fc.constantFrom(undefined, "", "scale", "status", "eviction"),
    namespace: fc.constantFrom(MAPI_NS, CAPI_NS, "default", undefined),
    name: fc.constantFrom("worker-a", "ci-abc12-worker-us-east-1a", "", undefined),
    user: fc.constantFrom(
      ADMIN,
      { username: PRODUCT_USER },
      { username: "system:admin", groups: ["system:masters"] },
    ),
    object: anyObject,
    oldObject: anyObject,
    options: fc.oneof(
      fc.constant(null),
      fc.constant({ propagationPolicy: "Foreground" }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
  })
  .map((r) => ({
    uid: "uid",
    kind: { group: r.resource[0], version: "v1", kind: r.resource[2] },
    resource: { group: r.resource[0], version: "v1", resource: r.resource[1] },
    ...(r.subResource === undefined ? {} : { subResource: r.subResource }),
    ...(r.namespace === undefined ? {} : { namespace: r.namespace }),
    ...(r.name === undefined ? {} : { name: r.name }),
    operation: r.operation,
    userInfo: r.user,
    object: r.object,
    oldObject: r.oldObject,
    options: r.options as Record<string, unknown> | null,
  }));

const converterAnswer: fc.Arbitrary<FieldError[]> = fc.array(
  fc.record({ path: junk, value: junk, message: junk }) as fc.Arbitrary<FieldError>,
  { maxLength: 3 },
);

function wellFormed(d: Decision, webhook: WebhookName, r: AdmissionRequest): void {
  expect(typeof d.allowed).toBe("boolean");
  expect(typeof d.rule).toBe("string");
  expect(d.rule.length).toBeGreaterThan(0);
  expect(Array.isArray(d.warnings)).toBe(true);
  for (const w of d.warnings) {
    expect(typeof w).toBe("string");
    expect(w.length).toBeLessThanOrEqual(120);
    expect(w).not.toMatch(/[\r\n]/);
  }
  if (d.allowed) expect(d.status).toBeUndefined();
  else {
    expect([403, 422]).toContain(d.status?.code);
    expect(["Forbidden", "Invalid"]).toContain(d.status?.reason);
    expect(typeof d.status?.message).toBe("string");
  }
  if (d.patch !== undefined) {
    expect(webhook).toBe("mutate");
    expect(r.operation).not.toBe("DELETE");
    expect(jsonpatch.validate(d.patch, structuredClone(r.object))).toBeUndefined();
  }
}

/** Runs the property; returns the rule ids the decisions named. `seed` pins the run (undefined: random). */
function checkDecideProperty(seed: number | undefined): Set<string> {
  const seen = new Set<string>();
  fc.assert(
    fc.property(
      fc.constantFrom<WebhookName>("validate", "validate-guard", "mutate"),
      request,
      fc.array(realShaped, { maxLength: 4 }),
      converterAnswer,
      fc.boolean(),
      (webhook, r, cached, answer, synced) => {
        const store = memoryStore(cached, () => ({ synced, disconnectedForMs: 0 }));
        const ctx: PolicyContext = {
          view: clusterView(store, SETTINGS),
          settings: SETTINGS,
          checkConvertible: () => answer,
          enforcing: true,
        };
        const before = JSON.stringify(r);
        const d = decide(webhook, r, ctx);
        seen.add(d.rule);
        wellFormed(d, webhook, r);
        expect(JSON.stringify(r)).toBe(before);
        expect(decide(webhook, r, ctx)).toEqual(d);
      },
    ),
    { numRuns: 1000, ...(seed === undefined ? {} : { seed }) },
  );
  return seen;
}

describe("decide (property)", () => {
  it("never throws, never mutates its input and always returns a well-formed Decision", () => {
    checkDecideProperty(undefined);
  });

  it("the generator reaches deep into the rules, not only the early exits (pinned seed)", () => {
    const seen = checkDecideProperty(20261130);
    expect(
      [...seen].filter((rule) => !["none", "controller-user", "other-namespace"].includes(rule)).length,
    ).toBeGreaterThan(8);
  });
});
