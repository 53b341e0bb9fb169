/**
 * Quick subset of issue 11 item 1 (the full 100,000-review campaign is reliability/hostile-input.test.ts):
 * hostile AdmissionReviews through `inject` against the real policy engine, and the body-size edges at and
 * over 7 MiB. No 5xx; every answer a valid AdmissionReview or a 400/413 naming the problem.
 */
import fc from "fast-check";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import {
  hostileBody,
  hostileContentType,
  hostilePath,
  limitBodies,
  problemWith,
  realDecide,
} from "../../reliability/hostile.js";
import { buildServer } from "../../src/server/app.js";
import { fixtureText } from "../server/helpers.js";

const app = buildServer({
  decide: realDecide(),
  // Every decision's line is built (and dropped): a line that cannot be built is a hostile input's way in.
  logger: pino({ level: "debug" }, { write: () => {} }),
  registry: new Registry(),
  readiness: () => ({ ready: true }),
});
afterAll(() => app.close());

describe("hostile input through inject (issue 11 item 1, SPEC §2.1)", () => {
  it("2,000 generated reviews: no 5xx, every answer a valid AdmissionReview or a named 400/413", async () => {
    const problems: string[] = [];
    let admitted = 0;
    await fc.assert(
      fc.asyncProperty(hostilePath, hostileBody, hostileContentType, async (path, body, type) => {
        const res = await app.inject({
          method: "POST",
          url: path,
          payload: body,
          headers: { "content-type": type },
        });
        if (res.statusCode === 200) admitted++;
        const problem = problemWith({ status: res.statusCode, body: res.body }, body);
        if (problem) problems.push(problem);
      }),
      { numRuns: 2_000, seed: 11 },
    );
    expect(problems.slice(0, 5)).toEqual([]);
    // The generator must reach the engine often, or the 200 checks prove nothing.
    expect(admitted).toBeGreaterThan(100);
  }, 60_000);

  it("a review of exactly 7 MiB is decided; one byte more is a 413 naming the limit", async () => {
    const { atLimit, overLimit } = limitBodies(fixtureText("mapi-machine-update-instance-type"));
    const send = (payload: string) =>
      app.inject({
        method: "POST",
        url: "/validate",
        payload,
        headers: { "content-type": "application/json" },
      });
    const at = await send(atLimit);
    expect(problemWith({ status: at.statusCode, body: at.body }, atLimit)).toBeUndefined();
    expect(at.statusCode).toBe(200);
    const over = await send(overLimit);
    expect(over.statusCode).toBe(413);
    expect(over.json()).toEqual({ error: expect.stringContaining("7 MiB") });
  }, 30_000);
});
