/**
 * SPEC §2.1, issue 20: kube-apiserver decodes no object nested deeper than 10,000 levels (its JSON decoder's
 * limit; managedFields included), so no AdmissionReview it sends is deeper than 10,002 — the object plus
 * the review and its `request`. A deeper body can only come from someone else, and is refused with a 400
 * naming the bound before it is parsed further or decided, whichever parser reads it. Brackets inside
 * strings are text, not depth.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BODY_LIMIT_BYTES, buildServer, CENSUS_ABOVE_BYTES, type WebhookApp } from "../../src/server/app.js";
import { type JsonBodyResult, MAX_REVIEW_DEPTH, parseJsonBody } from "../../src/server/json-body.js";
import { reviewCensus } from "../../src/server/review-census.js";
import { fakeDeps, fixture, postValidate } from "./helpers.js";

const objects = (levels: number): string => `${'{"n":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
const arrays = (levels: number): string => `${"[".repeat(levels)}${"]".repeat(levels)}`;

/** What the webhook does with a large body: the census first, then JSON.parse. */
const counted = (text: string): JsonBodyResult => {
  const census = reviewCensus(Buffer.from(text));
  return census.ok ? { ok: true, value: JSON.parse(text) } : census;
};

describe("SPEC §2.1 the review depth bound", () => {
  it("is kube-apiserver's object limit plus the review's two levels", () => {
    expect(MAX_REVIEW_DEPTH).toBe(10_002);
  });

  it.each([
    ["objects", objects],
    ["arrays", arrays],
  ])(
    "%s: the bound's levels parse, one more is refused naming the bound, by the parser and the census",
    (_shape, build) => {
      for (const parse of [parseJsonBody, counted]) {
        expect(parse(build(MAX_REVIEW_DEPTH)).ok).toBe(true);
        const refused = parse(build(MAX_REVIEW_DEPTH + 1));
        expect(refused).toEqual({
          ok: false,
          error: `request body nests deeper than ${MAX_REVIEW_DEPTH} levels; kube-apiserver sends no review that deep (it stores no object nested deeper than 10000 levels)`,
        });
      }
    },
  );

  it("brackets inside strings are not depth", () => {
    const text = JSON.stringify({ s: "[{".repeat(30_000), t: ['\\"[', "{"] });
    for (const parse of [parseJsonBody, counted])
      expect(parse(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it("a 1.5 M-deep body is refused once the census passes the bound, without reading the rest", () => {
    // The rest is not JSON at all: a census that read on would name that instead.
    const body = `${"[".repeat(1_500_000)}garbage`;
    expect(reviewCensus(Buffer.from(body))).toEqual({
      ok: false,
      error: `request body nests deeper than ${MAX_REVIEW_DEPTH} levels; kube-apiserver sends no review that deep (it stores no object nested deeper than 10000 levels)`,
    });
  });
});

describe("SPEC §2.1 the review depth bound, through the webhook (app.inject)", () => {
  let app: WebhookApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** The fixture review with `spec.crafted` nested so the object is `depth` levels deep, padded to `size`. */
  const review = (depth: number, size = 0): string => {
    const r = fixture("mapi-machine-update-instance-type");
    (r.request.object as { spec: Record<string, unknown> }).spec.crafted = "@deep";
    (r.request.object as { spec: Record<string, unknown> }).spec.padding = "x".repeat(size);
    // object(1) spec(2) crafted(3…): the crafted value holds depth - 2 levels.
    return JSON.stringify(r).replace('"@deep"', objects(depth - 2));
  };

  it.each([
    ["a small body", 0],
    ["a body counted before it is parsed", CENSUS_ABOVE_BYTES * 2],
  ])(
    "%s: an object at kube's limit is decided; one level deeper is a 400 naming the bound",
    async (_what, size) => {
      const deps = fakeDeps();
      app = buildServer(deps);
      await app.ready();
      const post = (payload: string) => postValidate(app!, payload);

      const atLimit = review(10_000, size);
      expect(atLimit.length).toBeLessThan(BODY_LIMIT_BYTES);
      expect((await post(atLimit)).statusCode).toBe(200);
      expect(deps.calls).toHaveLength(1);

      const deeper = await post(review(10_001, size));
      expect(deeper.statusCode).toBe(400);
      expect(deeper.json().error).toContain(`nests deeper than ${MAX_REVIEW_DEPTH} levels`);
      expect(deps.calls).toHaveLength(1);
    },
  );
});
