/**
 * SPEC §2.1 decisions in milliseconds, whatever the body (decision 59): a node-dense review near the 7 MiB
 * limit is parsed in steps, so a concurrent request is answered while it is parsed, and no turn of the event
 * loop is held for anything like a whole `JSON.parse` of that body (measured in the same run, as a ratio);
 * a malformed big body still gets a 400 naming the problem. Small bodies keep `JSON.parse`.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import {
  BODY_LIMIT_BYTES,
  buildServer,
  STEPPED_PARSE_ABOVE_CHARS,
  type WebhookApp,
} from "../../src/server/app.js";
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
  it("a dense 7 MiB review does not hold the event loop: a concurrent /validate is answered during its parse", async () => {
    const big = denseReview(BODY_LIMIT_BYTES - 4096);
    expect(big.length).toBeGreaterThan(BODY_LIMIT_BYTES - 8192);
    expect(big.length).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    // What one `JSON.parse` of this body holds the event loop for, in this run on this machine.
    let start = process.hrtime.bigint();
    JSON.parse(big);
    const parseNs = Number(process.hrtime.bigint() - start);

    const deps = fakeDeps();
    app = buildServer(deps);
    await app.ready();
    const small = fixtureText("mapi-machine-update-instance-type");
    const order: string[] = [];
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    start = process.hrtime.bigint();
    const bigDone = post(app, big).then((r) => {
      order.push("big");
      return r;
    });
    let bigFinished = false;
    void bigDone.then(() => {
      bigFinished = true;
    });
    // Small reviews one after another for as long as the big one is in flight.
    const smallAnswers: number[] = [];
    while (!bigFinished) {
      const r = await post(app, small);
      smallAnswers.push(r.statusCode);
      order.push("small");
    }
    const bigAnswer = await bigDone;
    delay.disable();

    expect(bigAnswer.statusCode).toBe(200);
    expect(bigAnswer.json().response.allowed).toBe(true);
    expect(smallAnswers.every((c) => c === 200)).toBe(true);
    // Order of completion: small reviews were answered before the big one finished.
    expect(order[0]).toBe("small");
    expect(order.indexOf("big")).toBeGreaterThan(1);
    // No turn of the loop came near one whole JSON.parse of the body (GC pauses included, hence a half).
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
      /^request body is not valid JSON: Unexpected "," at position \d+/,
    ],
    [
      "a raw control character",
      (text: string) => text.replace('"kind"', '"ki\u0001nd"'),
      /^request body is not valid JSON: .*control character/,
    ],
    [
      "trailing garbage",
      (text: string) => `${text} x`,
      /^request body is not valid JSON: Unexpected "x" at position \d+ \(expected the end of the body\)/,
    ],
  ])("a malformed big body (%s) gets a 400 naming the problem", async (_name, damage, message) => {
    app = buildServer(fakeDeps());
    const text = damage(denseReview(STEPPED_PARSE_ABOVE_CHARS * 4));
    const answer = await post(app, text);
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error).toMatch(message);
  });

  it("a big body just above the threshold is decided like the same review parsed by JSON.parse", async () => {
    const deps = fakeDeps();
    app = buildServer(deps);
    const text = denseReview(STEPPED_PARSE_ABOVE_CHARS + 100);
    const answer = await post(app, text);
    expect(answer.statusCode).toBe(200);
    expect(deps.calls).toHaveLength(1);
    expect(deps.calls[0]?.request.object).toEqual(JSON.parse(text).request.object);
  });
});
