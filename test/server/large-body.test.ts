/**
 * SPEC §2.1 decisions in milliseconds, whatever the body (decision 89): a node-dense review near the 7 MiB
 * limit is counted from its bytes and never built — no turn of the event loop is held for anything like a
 * whole `JSON.parse` of that body (measured in the same run, as a ratio) — and a malformed big body still
 * gets a 400 naming the problem. Small bodies go straight to `JSON.parse`.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { BODY_LIMIT_BYTES, buildServer, CENSUS_ABOVE_BYTES, type WebhookApp } from "../../src/server/app.js";
import { MAX_OBJECT_VALUES } from "../../src/server/review-census.js";
import { fakeDeps, fixture, fixtureText, postValidate } from "./helpers.js";

/** A valid review whose object carries `[{},{},…]` up to `size` characters: the slowest shape to parse. */
const denseReview = (size: number): string => {
  const review = fixture("mapi-machine-update-instance-type");
  const head = JSON.stringify(review).replace('"spec":{', '"spec":{"dense":[');
  const units = Math.floor((size - head.length - 10) / 3);
  const [before, after] = [
    head.slice(0, head.indexOf('"dense":[') + 9),
    head.slice(head.indexOf('"dense":[') + 9),
  ];
  return `${before}${"{},".repeat(units)}{}]${after.startsWith("]") ? after.slice(1) : `,${after}`}`;
};

let app: WebhookApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const post = postValidate;

describe("large admission bodies", () => {
  it("a dense 7 MiB review is counted in steps and refused unbuilt: small reviews are answered meanwhile, the decision gets it with its object emptied, and no turn of the loop comes near one JSON.parse of it (decision 89)", async () => {
    const big = denseReview(BODY_LIMIT_BYTES - 4096);
    expect(big.length).toBeGreaterThan(BODY_LIMIT_BYTES - 8192);
    expect(big.length).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    // What one `JSON.parse` of this body holds the event loop for, in this run on this machine.
    const start = process.hrtime.bigint();
    const whole = JSON.parse(big);
    const parseNs = Number(process.hrtime.bigint() - start);

    const deps = fakeDeps();
    app = buildServer(deps);
    await app.ready();
    const small = fixtureText("mapi-machine-update-instance-type");
    const order: string[] = [];
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    let bigFinished = false;
    const bigDone = post(app, big).finally(() => {
      bigFinished = true;
      order.push("big");
    });
    // Small reviews one after another for as long as the big one is in flight: answered while it is counted.
    while (!bigFinished) {
      expect((await post(app, small)).statusCode).toBe(200);
      order.push("small");
    }
    const answer = await bigDone;
    delay.disable();
    expect(order[0]).toBe("small");
    expect(order.indexOf("big")).toBeGreaterThan(1);

    expect(answer.statusCode).toBe(200);
    const bigCalls = deps.calls.filter((c) => c.request.uid === whole.request.uid && c.request.oversize);
    expect(bigCalls).toHaveLength(1);
    const request = bigCalls[0]!.request;
    // The rest of the review is as sent; the object, which holds a million values, was never built.
    expect(request.uid).toBe(whole.request.uid);
    expect(request.object).toEqual({});
    expect(request.oversize).toEqual({ objectValues: expect.any(Number), limit: MAX_OBJECT_VALUES });
    expect(request.oversize?.objectValues).toBeGreaterThan(1_000_000);
    // GC pauses included, hence a half.
    expect(delay.max).toBeLessThan(parseNs / 2);
  });

  it.each([
    [
      "cut short",
      (text: string) => text.slice(0, -1),
      /^request body is not valid JSON: Unexpected end of JSON input/,
    ],
    [
      "a stray comma deep inside",
      (text: string) => text.replace("{},{},", "{},,{},"),
      /^request body is not valid JSON: Unexpected "," at byte \d+/,
    ],
    [
      "a raw control character",
      (text: string) => text.replace('"kind"', '"ki\u0001nd"'),
      /^request body is not valid JSON: .*control character/,
    ],
    [
      "trailing garbage",
      (text: string) => `${text} x`,
      /^request body is not valid JSON: Unexpected "x" at byte \d+ \(expected the end of the body\)/,
    ],
  ])("a malformed big body (%s) gets a 400 naming the problem", async (_name, damage, message) => {
    app = buildServer(fakeDeps());
    const text = damage(denseReview(CENSUS_ABOVE_BYTES * 4));
    const answer = await post(app, text);
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error).toMatch(message);
  });

  it.each([
    ["small", 0],
    ["large", CENSUS_ABOVE_BYTES * 4],
  ])(
    "SPEC §2.1 a %s review whose object's managedFields are not JSON gets a 400 and is not decided (decision 179)",
    async (_size, size) => {
      const deps = fakeDeps();
      app = buildServer(deps);
      const review = size === 0 ? fixtureText("mapi-machine-update-instance-type") : denseReview(size);
      const text = review.replace(/"metadata": ?\{/, '"metadata":{"managedFields":[{"manager":tru}],');
      expect(text).not.toBe(review);
      const answer = await post(app, text);
      expect(answer.statusCode).toBe(400);
      expect(answer.json().error).toMatch(/^request body is not valid JSON: /);
      expect(deps.calls).toHaveLength(0);
    },
  );

  it("a big body just above the threshold is decided like the same review parsed by JSON.parse", async () => {
    const deps = fakeDeps();
    app = buildServer(deps);
    const text = denseReview(CENSUS_ABOVE_BYTES + 100);
    const answer = await post(app, text);
    expect(answer.statusCode).toBe(200);
    expect(deps.calls).toHaveLength(1);
    expect(deps.calls[0]?.request.object).toEqual(JSON.parse(text).request.object);
  });
});
