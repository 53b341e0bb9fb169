/**
 * SPEC §2.1 "no input may crash the process or produce a 5xx", as a property: thousands of generated bodies
 * (arbitrary JSON, broken text, near-valid reviews with fields swapped for junk, odd content-types and
 * timeouts) go through `app.inject`; none gets a 5xx, and every 200 is a valid AdmissionReview answer
 * for the uid that was sent.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { buildServer } from "../../src/server/app.js";
import { allow, deny, fakeDeps, fixture } from "./helpers.js";

const decisions = [
  allow(),
  deny("no"),
  allow({ warnings: ["w"], patch: [{ op: "add", path: "/metadata/labels", value: {} }] }),
];
let round = 0;
// The engine's answer varies too, including failure, so every response path is exercised.
const deps = fakeDeps(() => {
  round++;
  if (round % 7 === 0) throw new Error("engine failure");
  return decisions[round % decisions.length]!;
});
const app = buildServer(deps);
afterAll(() => app.close());

/** Any JSON, kept shallow so a run stays fast; depth is not what breaks a parser that JSON.parse already ran. */
const jsonJunk = fc.jsonValue({ maxDepth: 3 });

const base = fixture("mapi-machine-update-instance-type");
const baseRequest = base.request as unknown as Record<string, unknown>;

/**
 * A value for one field: usually the real one, sometimes junk of any JSON type or absent. Junk is rare per
 * field so that a good share of reviews stays well-formed and reaches the decision path.
 */
const maybeJunk = <T>(real: T): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 30, arbitrary: fc.constant(real) },
    { weight: 1, arbitrary: jsonJunk },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

const nearValidReview = fc
  .record({
    apiVersion: fc.oneof(
      { weight: 20, arbitrary: fc.constant("admission.k8s.io/v1") },
      { weight: 1, arbitrary: fc.constant("admission.k8s.io/v1beta1") },
      { weight: 1, arbitrary: jsonJunk },
    ),
    kind: maybeJunk("AdmissionReview"),
    request: fc.record({
      uid: fc.oneof(
        { weight: 10, arbitrary: fc.uuid() },
        { weight: 2, arbitrary: fc.string() },
        { weight: 1, arbitrary: jsonJunk },
      ),
      kind: maybeJunk(baseRequest.kind),
      resource: maybeJunk(baseRequest.resource),
      subResource: maybeJunk("scale"),
      name: maybeJunk("worker-a"),
      namespace: maybeJunk("openshift-machine-api"),
      operation: fc.oneof(
        { weight: 20, arbitrary: fc.constantFrom("CREATE", "UPDATE", "DELETE", "CONNECT") },
        { weight: 1, arbitrary: jsonJunk },
      ),
      userInfo: maybeJunk(baseRequest.userInfo),
      object: fc.oneof(
        { weight: 3, arbitrary: maybeJunk(baseRequest.object) },
        { weight: 1, arbitrary: fc.dictionary(fc.string(), jsonJunk) },
      ),
      oldObject: maybeJunk(baseRequest.oldObject),
      dryRun: maybeJunk(true),
      options: maybeJunk(baseRequest.options),
    }),
  })
  .map((review) => JSON.stringify(review));

const body = fc.oneof(
  { weight: 4, arbitrary: nearValidReview },
  { weight: 1, arbitrary: jsonJunk.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: nearValidReview.chain((text) => fc.nat(text.length).map((n) => text.slice(0, n))) },
  {
    weight: 1,
    arbitrary: nearValidReview.map((text) =>
      text.replace('"metadata":{', '"metadata":{"__proto__":{"x":1},'),
    ),
  },
);

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "text/plain",
      "",
      "application/x-www-form-urlencoded",
    ),
  },
  { weight: 1, arbitrary: fc.string() },
);
const path = fc.constantFrom("/validate", "/validate-guard", "/mutate");
const query = fc.oneof(
  fc.constant(""),
  fc.constantFrom("?timeout=10s", "?timeout=1ms", "?timeout=-1s"),
  fc.string().map((s) => `?timeout=${encodeURIComponent(s)}`),
);

describe("fuzz: no input produces a 5xx (SPEC §2.1)", () => {
  it("every generated request gets < 500, and every 200 is a valid AdmissionReview for the sent uid", async () => {
    let answered200 = 0;
    await fc.assert(
      fc.asyncProperty(path, query, body, contentType, async (p, q, payload, type) => {
        const headers: Record<string, string> = {};
        // A header value with control characters cannot be sent at all; such a client never reaches us.
        if (/^[\t\x20-\x7e]*$/.test(type)) headers["content-type"] = type;
        const res = await app.inject({ method: "POST", url: `${p}${q}`, payload, headers });
        expect(res.statusCode).toBeLessThan(500);
        if (res.statusCode !== 200) {
          expect(res.json()).toEqual({ error: expect.any(String) });
          return;
        }
        answered200++;
        const sent = JSON.parse(payload);
        const answer = res.json();
        expect(answer.apiVersion).toBe("admission.k8s.io/v1");
        expect(answer.kind).toBe("AdmissionReview");
        expect(answer.response.uid).toBe(sent.request.uid);
        expect(typeof answer.response.allowed).toBe("boolean");
        if (p !== "/mutate" || sent.request.operation === "DELETE")
          expect(answer.response.patch).toBeUndefined();
        expect("patch" in answer.response).toBe("patchType" in answer.response);
        if (!answer.response.allowed)
          expect(answer.response.status).toMatchObject({ status: "Failure", code: 403 });
      }),
      { numRuns: 2000 },
    );
    // The generator must reach the decision path often enough for the 200 checks to mean something.
    expect(answered200).toBeGreaterThan(200);
  }, 60_000);
});
