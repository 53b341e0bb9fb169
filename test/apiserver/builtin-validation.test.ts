/**
 * SPEC §8: the local server validates built-in kinds and list options as kube-apiserver does — the
 * differences the differential conformance suite found (test/cluster/conformance.cluster.test.ts), each
 * checked here against kube's rule.
 */
import { describe, expect, it } from "vitest";
import {
  builtinCauses,
  builtinDecodeProblem,
  listOptionCauses,
  MAX_DATA_BYTES,
} from "../../src/apiserver/builtin-validation.js";
import type { KubeObject } from "../../src/kube/object.js";

const core = (kind: string) => ({ group: "", kind });
const lease = { group: "coordination.k8s.io", kind: "Lease" };
const vwc = { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration" };
const fields = (o: KubeObject, res: { group: string; kind: string }) =>
  builtinCauses(res, o).map((c) => c.field);

describe("ConfigMap and Secret size (kube: at most 1 MiB of keys and values)", () => {
  it.each([
    ["exactly 1 MiB of data is allowed", MAX_DATA_BYTES - 1, []],
    ["one byte over is refused", MAX_DATA_BYTES, ["[]"]],
  ] as const)("%s", (_, valueBytes, expected) => {
    const o = { metadata: { name: "c" }, data: { k: "x".repeat(valueBytes) } };
    expect(fields(o, core("ConfigMap"))).toEqual(expected);
    expect(fields(o, core("Secret"))).toEqual(expected);
  });
  it("binaryData counts too", () => {
    expect(fields({ binaryData: { a: "x".repeat(MAX_DATA_BYTES) } }, core("ConfigMap"))).toEqual(["[]"]);
  });
});

describe("Event: involvedObject.namespace must match the Event's namespace", () => {
  it.each([
    ["same namespace", "ns", []],
    ["no namespace (cluster-scoped object)", undefined, []],
    ["another namespace", "other", ["involvedObject.namespace"]],
  ] as const)("%s", (_, involvedNamespace, expected) => {
    const o = {
      metadata: { name: "e", namespace: "ns" },
      involvedObject: { kind: "Machine", namespace: involvedNamespace },
    };
    expect(fields(o as KubeObject, core("Event"))).toEqual(expected);
  });
});

describe("webhook configurations: sideEffects, admissionReviewVersions, one clientConfig", () => {
  const webhook = {
    name: "a.example.com",
    clientConfig: { url: "https://x/y" },
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
  };
  it.each([
    ["a complete webhook", webhook, []],
    ["no sideEffects", { ...webhook, sideEffects: undefined }, ["webhooks[0].sideEffects"]],
    ["sideEffects Some", { ...webhook, sideEffects: "Some" }, ["webhooks[0].sideEffects"]],
    [
      "no admissionReviewVersions",
      { ...webhook, admissionReviewVersions: [] },
      ["webhooks[0].admissionReviewVersions"],
    ],
    ["only v2", { ...webhook, admissionReviewVersions: ["v2"] }, ["webhooks[0].admissionReviewVersions"]],
    [
      "url and service",
      { ...webhook, clientConfig: { url: "https://x", service: { name: "s", namespace: "n" } } },
      ["webhooks[0].clientConfig"],
    ],
  ] as const)("%s", (_, w, expected) => {
    expect(fields({ webhooks: [w] } as unknown as KubeObject, vwc)).toEqual(expected);
  });
});

describe("Lease decoding: MicroTime strings and 32-bit integers", () => {
  it.each([
    ["a well-typed Lease", { renewTime: "2026-12-01T15:00:00.000000Z", leaseDurationSeconds: 137 }, false],
    ["renewTime not a time", { renewTime: "yesterday" }, true],
    ["leaseDurationSeconds as a string", { leaseDurationSeconds: "15" }, true],
    ["leaseDurationSeconds fractional", { leaseDurationSeconds: 1.5 }, true],
    ["no spec fields", {}, false],
  ] as const)("%s", (_, spec, refused) => {
    expect(builtinDecodeProblem(lease, { spec } as KubeObject) !== undefined).toBe(refused);
  });
  it("other kinds are not decoded here", () => {
    expect(
      builtinDecodeProblem(core("ConfigMap"), { spec: { renewTime: "yesterday" } } as KubeObject),
    ).toBeUndefined();
  });
});

describe("list options (kube's ValidateListOptions)", () => {
  it.each([
    ["no options", "", []],
    [
      "resourceVersionMatch without resourceVersion",
      "resourceVersionMatch=NotOlderThan",
      ["resourceVersionMatch"],
    ],
    ["NotOlderThan with a resourceVersion", "resourceVersionMatch=NotOlderThan&resourceVersion=5", []],
    ["Exact with a resourceVersion", "resourceVersionMatch=Exact&resourceVersion=5", []],
    ["Exact at 0", "resourceVersionMatch=Exact&resourceVersion=0", ["resourceVersionMatch"]],
    ["an unknown match", "resourceVersionMatch=Newest&resourceVersion=5", ["resourceVersionMatch"]],
  ] as const)("%s", (_, query, expected) => {
    expect(listOptionCauses(new URLSearchParams(query)).map((c) => c.field)).toEqual(expected);
  });
});
