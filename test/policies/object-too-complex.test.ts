/**
 * SPEC §2.1 decided in milliseconds (decision 89): a review whose objects held more JSON values than a
 * decision may build reaches the engine with them emptied and `oversize` set by the server. The engine
 * refuses it — 422, naming the object, each too-large side's count and the bound — on every webhook, after
 * the exemptions that read only the request: not enforcing, the controller identities, other namespaces.
 */
import { describe, expect, it } from "vitest";
import { decide, NON_RULE_DECISIONS } from "../../src/policies/engine.js";
import type { AdmissionRequest, Oversize, WebhookName } from "../../src/policies/types.js";
import { context, deleteRequest, mapiMachine, PRODUCT_USER, updateRequest } from "./builders.js";

const machine = mapiMachine({ status: "MachineAPI" });
const ctx = context([machine]);
const emptied = (request: AdmissionRequest, oversize: Oversize): AdmissionRequest => ({
  ...request,
  object: request.object === null ? null : {},
  oldObject: request.oldObject === null ? null : {},
  oversize,
});
const update = emptied(updateRequest(machine, machine), {
  objectValues: 1_100_087,
  oldObjectValues: 40_000,
  limit: 25_000,
});
const stored = emptied(deleteRequest(machine), { oldObjectValues: 30_001, limit: 25_000 });

describe("object-too-complex (decision 89)", () => {
  it.each<WebhookName>(["validate", "validate-guard", "mutate"])(
    "%s: an UPDATE whose object is too large is refused, 422, naming both sides' counts and the bound",
    (webhook) => {
      const d = decide(webhook, update, ctx);
      expect(d).toMatchObject({
        allowed: false,
        rule: NON_RULE_DECISIONS.objectTooComplex,
        status: { code: 422, reason: "Invalid" },
      });
      expect(d.status?.message).toBe(
        "Machine openshift-machine-api/worker-a is too large to decide: it holds 1,100,087 JSON values and its stored version holds 40,000, more than the 25,000 machine-api-migration decides (managedFields aside; a Machine holds a few hundred). Remove the bulk from the object and retry. (rule object-too-complex)",
      );
    },
  );

  it("a DELETE of a stored object that large is refused too, saying it was stored without this webhook", () => {
    const d = decide("validate-guard", stored, ctx);
    expect(d.rule).toBe(NON_RULE_DECISIONS.objectTooComplex);
    expect(d.status?.message).toContain("its stored version holds 30,001, more than the 25,000");
    expect(d.status?.message).toContain("stored without this webhook's decision");
  });

  it.each<[string, AdmissionRequest, Parameters<typeof context>[1], string]>([
    ["not enforcing", update, { enforcing: false }, NON_RULE_DECISIONS.notEnforcing],
    [
      "a controller identity",
      { ...update, userInfo: { username: PRODUCT_USER } },
      {},
      NON_RULE_DECISIONS.controllerUser,
    ],
    ["another namespace", { ...update, namespace: "default" }, {}, NON_RULE_DECISIONS.otherNamespace],
  ])("exempt before the bound: %s", (_what, request, options, rule) => {
    expect(decide("validate", request, context([machine], options))).toMatchObject({ allowed: true, rule });
  });

  it("without `oversize` the same emptied request is decided by the rules, not refused", () => {
    const { oversize: _, ...plain } = update;
    expect(decide("validate", plain, ctx).rule).not.toBe(NON_RULE_DECISIONS.objectTooComplex);
  });
});
