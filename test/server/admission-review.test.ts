/**
 * SPEC §2.1 AdmissionReview codec: which bodies decode (real-shaped fixtures, unknown fields, null sides),
 * which are refused with what reason, and the wire rules of the answer (deny Status, warnings, patches only
 * on the mutating webhook, never on DELETE).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Decision } from "../../src/policies/types.js";
import {
  decodeAdmissionReview,
  decodeWithSchema,
  encodeAdmissionResponse,
} from "../../src/server/admission-review.js";
import { allow, deny, FIXTURE_NAMES, fixture } from "./helpers.js";

const valid = () => fixture("capi-machine-create");

describe("decodeAdmissionReview", () => {
  it.each(FIXTURE_NAMES)("§2.1 decodes the %s fixture", (name) => {
    const review = fixture(name);
    const decoded = decodeAdmissionReview(review);
    expect(decoded).toMatchObject({ ok: true, request: { uid: review.request.uid } });
  });

  it("§2.1 keeps object and oldObject as sent (no copy of large objects) and tolerates unknown fields", () => {
    const review = fixture("mapi-machine-update-instance-type") as unknown as Record<string, unknown>;
    const request = review.request as Record<string, unknown>;
    review.somethingNew = { x: 1 };
    request.futureField = "y";
    const decoded = decodeAdmissionReview(review);
    if (!decoded.ok) throw new Error(decoded.error);
    expect(decoded.request.object).toBe(request.object);
    expect(decoded.request.oldObject).toBe(request.oldObject);
  });

  it("§2.1 DELETE: object null, oldObject present", () => {
    const decoded = decodeAdmissionReview(fixture("capi-machineset-delete"));
    if (!decoded.ok) throw new Error(decoded.error);
    expect(decoded.request.object).toBeNull();
    expect(decoded.request.oldObject?.kind).toBe("MachineSet");
  });

  it("§2.1 absent object/oldObject read as null; an empty username is a user too", () => {
    const review = valid();
    delete (review.request as Partial<typeof review.request>).oldObject;
    review.request.userInfo = { username: "" };
    const decoded = decodeAdmissionReview(review);
    if (!decoded.ok) throw new Error(decoded.error);
    expect(decoded.request.oldObject).toBeNull();
    expect(decoded.request.userInfo.username).toBe("");
  });

  /** A review as loose JSON, so cases can put any junk anywhere. */
  interface LooseReview {
    [key: string]: unknown;
    request: Record<string, unknown>;
  }
  const malformed: Array<[string, (r: LooseReview) => unknown, RegExp]> = [
    ["not an object", () => [1, 2], /body must be a JSON object/],
    ["null", () => null, /body must be a JSON object/],
    [
      "apiVersion v1beta1",
      (r) => ({ ...r, apiVersion: "admission.k8s.io/v1beta1" }),
      /apiVersion: must be "admission\.k8s\.io\/v1" \(got "admission\.k8s\.io\/v1beta1"\)/,
    ],
    ["apiVersion missing", (r) => ({ ...r, apiVersion: undefined }), /apiVersion: must be .*got nothing/],
    [
      "wrong kind",
      (r) => ({ ...r, kind: "AdmissionRequest" }),
      /kind: must be "AdmissionReview" \(got "AdmissionRequest"\)/,
    ],
    ["request missing", (r) => ({ ...r, request: undefined }), /request: /],
    [
      "uid missing",
      (r) => ({ ...r, request: { ...r.request, uid: undefined } }),
      /request\.uid: is required/,
    ],
    ["uid empty", (r) => ({ ...r, request: { ...r.request, uid: "" } }), /request\.uid: must not be empty/],
    [
      "uid a number",
      (r) => ({ ...r, request: { ...r.request, uid: 7 } }),
      /request\.uid: is required \(a string\)/,
    ],
    [
      "operation unknown",
      (r) => ({ ...r, request: { ...r.request, operation: "PATCH" } }),
      /request\.operation: must be one of CREATE, UPDATE, DELETE, CONNECT/,
    ],
    [
      "kind.kind missing",
      (r) => ({ ...r, request: { ...r.request, kind: { group: "", version: "v1" } } }),
      /request\.kind\.kind: must be a string/,
    ],
    [
      "resource missing",
      (r) => ({ ...r, request: { ...r.request, resource: undefined } }),
      /request\.resource: /,
    ],
    [
      "userInfo.username missing",
      (r) => ({ ...r, request: { ...r.request, userInfo: { groups: [] } } }),
      /request\.userInfo\.username: is required/,
    ],
    [
      "object an array",
      (r) => ({ ...r, request: { ...r.request, object: [] } }),
      /request\.object: must be a JSON object or null/,
    ],
    [
      "oldObject a string",
      (r) => ({ ...r, request: { ...r.request, oldObject: "x" } }),
      /request\.oldObject: must be a JSON object or null/,
    ],
    // Found by an audit (2026-12-07): an UPDATE without oldObject read as "no authority" and was allowed by
    // mapi-frozen; kube always sends the sides an operation has (decision 172).
    [
      "UPDATE has no oldObject",
      (r) => ({ ...r, request: { ...r.request, operation: "UPDATE", object: {}, oldObject: undefined } }),
      /request\.oldObject: is required for UPDATE \(a JSON object\)/,
    ],
    [
      "UPDATE has a null oldObject",
      (r) => ({ ...r, request: { ...r.request, operation: "UPDATE", object: {}, oldObject: null } }),
      /request\.oldObject: is required for UPDATE/,
    ],
    [
      "UPDATE has no object",
      (r) => ({ ...r, request: { ...r.request, operation: "UPDATE", object: null, oldObject: {} } }),
      /request\.object: is required for UPDATE/,
    ],
    [
      "DELETE has no oldObject",
      (r) => ({ ...r, request: { ...r.request, operation: "DELETE", object: null, oldObject: null } }),
      /request\.oldObject: is required for DELETE/,
    ],
    [
      "CREATE has no object",
      (r) => ({ ...r, request: { ...r.request, operation: "CREATE", object: undefined, oldObject: null } }),
      /request\.object: is required for CREATE/,
    ],
    [
      "groups not strings",
      (r) => ({ ...r, request: { ...r.request, userInfo: { username: "u", groups: [1] } } }),
      /request\.userInfo\.groups\.\[0\]|request\.userInfo\.groups/,
    ],
  ];
  it.each(malformed)("§2.1 refuses a review whose %s, naming the problem", (_what, mutate, expected) => {
    const decoded = decodeAdmissionReview(mutate(valid() as unknown as LooseReview));
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.error).toMatch(expected);
  });

  it("lists at most three problems and counts the rest", () => {
    const decoded = decodeAdmissionReview({ apiVersion: 1, kind: 2, request: { operation: "X" } });
    if (decoded.ok) throw new Error("decoded");
    expect(decoded.error).toMatch(/\(and \d+ more\)$/);
  });
});

describe("decodeAdmissionReview: the hand check answers exactly what the schema answers", () => {
  it.each(FIXTURE_NAMES)("the %s fixture decodes to the schema's output", (name) => {
    expect(decodeAdmissionReview(fixture(name))).toStrictEqual(decodeWithSchema(fixture(name)));
  });

  /** Places a damaged review can differ: every field the schema reads, and some it ignores. */
  const PLACES: readonly (readonly string[])[] = [
    [],
    ["apiVersion"],
    ["kind"],
    ["request"],
    ["extraTopLevel"],
    ...[
      "uid",
      "kind",
      "resource",
      "subResource",
      "requestKind",
      "requestResource",
      "requestSubResource",
      "name",
      "namespace",
      "operation",
      "userInfo",
      "object",
      "oldObject",
      "dryRun",
      "options",
      "futureField",
    ].map((f) => ["request", f]),
    ...["group", "version", "kind", "resource", "other"].flatMap((f) => [
      ["request", "kind", f],
      ["request", "resource", f],
      ["request", "requestKind", f],
      ["request", "requestResource", f],
    ]),
    ...["username", "uid", "groups", "extra", "other"].map((f) => ["request", "userInfo", f]),
    ["request", "userInfo", "groups", "0"],
    ["request", "userInfo", "extra", "scopes.authorization.openshift.io"],
    ["request", "userInfo", "extra", "scopes.authorization.openshift.io", "0"],
    ["request", "userInfo", "extra", "__proto__"],
    ["request", "userInfo", "extra", "another"],
  ];
  const junk = fc.oneof(
    fc.constantFrom(undefined, null, "", "x", 0, 7, true, false, [], {}, ["a"], [1], { a: "b" }),
    fc.constantFrom("CREATE", "UPDATE", "PATCH", "admission.k8s.io/v1", "AdmissionReview", "Machine"),
    fc.jsonValue({ maxDepth: 2 }),
  );
  /** Sets (or with `remove`, deletes) one place in a copy; a place under a non-object is created. */
  const damage = (review: unknown, path: readonly string[], value: unknown, remove: boolean): unknown => {
    if (path.length === 0) return remove ? undefined : value;
    const copy = (typeof review === "object" && review !== null ? structuredClone(review) : {}) as Record<
      string,
      unknown
    >;
    let node: Record<string, unknown> = copy;
    for (const seg of path.slice(0, -1)) {
      const next = node[seg];
      if (typeof next !== "object" || next === null) node[seg] = {};
      node = node[seg] as Record<string, unknown>;
    }
    const last = path[path.length - 1]!;
    if (remove) delete node[last];
    else if (last === "__proto__") Object.defineProperty(node, last, { value, enumerable: true });
    else node[last] = value;
    return copy;
  };

  it("on random damage to real reviews: the same request, or the same 400 text", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FIXTURE_NAMES),
        fc.array(fc.tuple(fc.constantFrom(...PLACES), junk, fc.boolean()), { minLength: 1, maxLength: 3 }),
        (name, edits) => {
          let review: unknown = fixture(name);
          for (const [path, value, remove] of edits) review = damage(review, path, value, remove);
          expect(decodeAdmissionReview(review)).toStrictEqual(decodeWithSchema(review));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("keeps the same outcome for JSON text with a __proto__ key in userInfo.extra", () => {
    const review = JSON.parse(
      JSON.stringify(fixture("capi-machine-create")).replace('"extra":{', '"extra":{"__proto__":["x"],'),
    ) as unknown;
    expect(decodeAdmissionReview(review)).toStrictEqual(decodeWithSchema(review));
  });
});

describe("encodeAdmissionResponse", () => {
  const update = { uid: "u-1", operation: "UPDATE" as const };
  const patch: Decision["patch"] = [{ op: "add", path: "/metadata/annotations/x", value: "y" }];

  it("§2.1 allow: same apiVersion/kind, uid echoed, no status, no warnings key when there are none", () => {
    expect(encodeAdmissionResponse("validate", update, allow())).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "u-1", allowed: true },
    });
  });

  it("§2.1 deny: allowed false and a metav1.Status with code, reason and message", () => {
    const answer = encodeAdmissionResponse("validate", update, deny("MAPI Machine x is not authoritative"));
    expect(answer.response).toEqual({
      uid: "u-1",
      allowed: false,
      status: {
        metadata: {},
        status: "Failure",
        code: 403,
        reason: "Forbidden",
        message: "MAPI Machine x is not authoritative",
      },
    });
  });

  it("§2.1 deny without a status from the engine still carries one naming the rule", () => {
    const answer = encodeAdmissionResponse("validate", update, {
      allowed: false,
      rule: "capi-frozen",
      warnings: [],
    });
    expect(answer.response.status).toMatchObject({
      code: 403,
      reason: "Forbidden",
      message: "denied by rule capi-frozen",
    });
  });

  it("§2.1 warnings are passed through", () => {
    const answer = encodeAdmissionResponse("validate-guard", update, allow({ warnings: ["a", "b"] }));
    expect(answer.response.warnings).toEqual(["a", "b"]);
  });

  it.each(["validate", "validate-guard"] as const)(
    "§2.1 %s never carries patch or patchType, even if the engine sent one",
    (webhook) => {
      const answer = encodeAdmissionResponse(webhook, update, allow({ patch }));
      expect(answer.response).not.toHaveProperty("patch");
      expect(answer.response).not.toHaveProperty("patchType");
    },
  );

  it("§2.4 mutate: JSONPatch type and base64 RFC 6902 patch together", () => {
    const answer = encodeAdmissionResponse("mutate", { uid: "u", operation: "CREATE" }, allow({ patch }));
    expect(answer.response.patchType).toBe("JSONPatch");
    expect(JSON.parse(Buffer.from(answer.response.patch!, "base64").toString("utf8"))).toEqual(patch);
  });

  it.each([
    ["an empty patch", { uid: "u", operation: "CREATE" as const }, allow({ patch: [] })],
    ["no patch", { uid: "u", operation: "CREATE" as const }, allow()],
    ["a DELETE", { uid: "u", operation: "DELETE" as const }, allow({ patch })],
    ["a denial", { uid: "u", operation: "CREATE" as const }, deny("no", { patch })],
  ])("§2.1 mutate with %s carries neither patch nor patchType", (_what, request, decision) => {
    const answer = encodeAdmissionResponse("mutate", request, decision);
    expect(answer.response).not.toHaveProperty("patch");
    expect(answer.response).not.toHaveProperty("patchType");
  });
});
