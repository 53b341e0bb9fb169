/**
 * SPEC §2.1 "decided in milliseconds", for the decision itself (decision 74): while a crafted review near the
 * 7 MiB limit is being *decided* by the real engine — after its body was parsed — small reviews and
 * `/healthz` are still answered, because a large review is decided in slices with a turn of the event loop
 * between them. Ordering is asserted, never time: a concurrent answer must land between the big review's
 * first decision call and the one that returns its Decision.
 */
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decide } from "../../src/policies/engine.js";
import type { AdmissionRequest, Decision, WebhookName } from "../../src/policies/types.js";
import { BODY_LIMIT_BYTES, buildServer, CENSUS_ABOVE_BYTES, type WebhookApp } from "../../src/server/app.js";
import { capiMachine, context, craftedFrozenUpdate, mapiMachine } from "../policies/builders.js";
import { postValidate } from "./helpers.js";

const wide = (width: number, value: number): Record<string, number> => {
  const o: Record<string, number> = {};
  for (let i = 0; i < width; i++) o[`k${i}`] = value;
  return o;
};
/** `[[…[leaf]…]]`, `depth` levels, as JSON text (JSON.stringify would recurse). */
const deepList = (depth: number, leaf: number): string => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
/** `count` such lists side by side: node-dense, and no deeper than kube-apiserver sends (MAX_REVIEW_DEPTH). */
const deepLists = (count: number, depth: number, leaf: number): string =>
  `[${Array.from({ length: count }, () => deepList(depth, leaf)).join(",")}]`;

const frozen = mapiMachine({ status: "ClusterAPI" });
const reviewText = craftedFrozenUpdate;

/**
 * A server deciding with the real engine that records, in `events`, each call of the big review's decision
 * (`big:call`) and each decision made (`big:decided`, `small:decided`).
 */
const recordingServer = (ctx: ReturnType<typeof context>, events: string[]): WebhookApp =>
  buildServer({
    decide: (webhook: WebhookName, request: AdmissionRequest): Decision => {
      const who = request.uid === "big" ? "big" : "small";
      if (who === "big") events.push("big:call");
      const decision = decide(webhook, request, ctx);
      events.push(`${who}:decided`);
      return decision;
    },
    logger: pino({ level: "silent" }),
    registry: new Registry(),
    readiness: () => ({ ready: true }),
  });

let app: WebhookApp | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await app?.close();
  app = undefined;
});

describe("a large review is decided in slices (decision 74)", () => {
  it.each([
    // As large as a decision may build (MAX_OBJECT_VALUES per object, decision 89).
    ["wide: 2 × 16,000 changed keys", () => reviewText("big", wide(16_000, 1), wide(16_000, 2))],
    [
      "deep lists: 2 × 3 lists of 5,000 levels",
      () => reviewText("big", deepLists(3, 5_000, 1), deepLists(3, 5_000, 2)),
    ],
  ])(
    "%s: small reviews and /healthz are answered while it is decided, and it is denied as before",
    async (_shape, build) => {
      const big = build();
      expect(big.length).toBeGreaterThan(CENSUS_ABOVE_BYTES);
      const ctx = context([frozen, capiMachine({ paused: "none" })]);
      const events: string[] = [];
      app = recordingServer(ctx, events);
      await app.ready();
      const small = reviewText("small", 1, 2);
      const post = (payload: string) => postValidate(app!, payload);

      let bigFinished = false;
      const bigDone = post(big).finally(() => {
        bigFinished = true;
      });
      const smallAnswers: number[] = [];
      while (!bigFinished) {
        const [review, health] = await Promise.all([
          post(small),
          app.inject({ method: "GET", url: "/healthz" }),
        ]);
        smallAnswers.push(review.statusCode, health.statusCode);
        events.push("healthz:answered");
      }
      const answer = await bigDone;

      // The decision is the engine's, whatever the slicing: mapi-frozen names the changed values.
      expect(answer.statusCode).toBe(200);
      expect(answer.json().response).toMatchObject({ uid: "big", allowed: false });
      expect(answer.json().response.status.message).toContain("spec.providerSpec.value.crafted");
      expect(answer.json().response.status.message).toBe(
        decide("validate", JSON.parse(big).request, ctx).status?.message,
      );
      expect(smallAnswers.every((c) => c === 200)).toBe(true);
      // Between the big review's first decision call and its Decision, other requests were answered.
      const first = events.indexOf("big:call");
      const last = events.indexOf("big:decided");
      expect(first).toBeGreaterThanOrEqual(0);
      expect(last).toBeGreaterThan(first);
      const during = events.slice(first, last);
      expect(during).toContain("small:decided");
      expect(during).toContain("healthz:answered");
    },
    120_000,
  );

  it("the parse of a large review and its first slice are not one turn of the loop: a small review is decided between them", async () => {
    const big = reviewText("big", wide(16_000, 1), wide(16_000, 2));
    const ctx = context([frozen, capiMachine({ paused: "none" })]);
    const events: string[] = [];
    const parse = JSON.parse;
    vi.spyOn(JSON, "parse").mockImplementation((text: string, reviver) => {
      const value = parse(text, reviver);
      if (text.length > CENSUS_ABOVE_BYTES) events.push("big:parsed");
      return value;
    });
    app = recordingServer(ctx, events);
    await app.ready();
    const small = reviewText("small", 1, 2);
    let bigFinished = false;
    const bigDone = postValidate(app, big).finally(() => {
      bigFinished = true;
    });
    // Small reviews two at a time, so one is always waiting for the loop when the big one yields it.
    while (!bigFinished) await Promise.all([postValidate(app, small), postValidate(app, small)]);
    expect((await bigDone).statusCode).toBe(200);
    const parsed = events.indexOf("big:parsed");
    const call = events.indexOf("big:call");
    expect(parsed).toBeGreaterThanOrEqual(0);
    expect(call).toBeGreaterThan(parsed);
    expect(events.slice(parsed, call)).toContain("small:decided");
  }, 120_000);
});

describe("a review over the bound is refused, not built (decision 89)", () => {
  it.each([
    ["wide: 2 × 280,000 changed keys", () => reviewText("big", wide(280_000, 1), wide(280_000, 2))],
    [
      "deep lists: 2 × 150 lists of 9,990 levels",
      () => reviewText("big", deepLists(150, 9_990, 1), deepLists(150, 9_990, 2)),
    ],
  ])(
    "%s: object-too-complex, naming both sides' counts and the bound",
    async (_shape, build) => {
      const big = build();
      expect(big.length).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
      const ctx = context([frozen, capiMachine({ paused: "none" })]);
      const seen: AdmissionRequest[] = [];
      app = buildServer({
        decide: (webhook: WebhookName, request: AdmissionRequest): Decision => {
          seen.push(request);
          return decide(webhook, request, ctx);
        },
        logger: pino({ level: "silent" }),
        registry: new Registry(),
        readiness: () => ({ ready: true }),
      });
      await app.ready();
      const answer = await postValidate(app, big);
      expect(answer.statusCode).toBe(200);
      const response = answer.json().response;
      expect(response).toMatchObject({
        uid: "big",
        allowed: false,
        status: { code: 422, reason: "Invalid" },
      });
      expect(response.status.message).toMatch(
        /^Machine openshift-machine-api\/worker-a is too large to decide: it holds [\d,]+ JSON values and its stored version holds [\d,]+, more than the [\d,]+ machine-api-migration decides .*\(rule object-too-complex\)$/,
      );
      expect(seen[0]?.object).toEqual({});
      expect(seen[0]?.oldObject).toEqual({});
    },
    120_000,
  );
});
