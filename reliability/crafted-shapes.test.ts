/**
 * Issue 20 #1, RELIABILITY.md §1a: crafted reviews of every shape up to the 7 MiB limit — deep, wide,
 * deep-and-wide, long keys, past kube's depth — through `app.inject` and the real policy engine, each sent
 * while plain reviews keep arriving. Asserts behaviour only (every answer as expected, every plain review
 * decided); the figures — the big review's own time and how long a plain review waited meanwhile, as ratios to
 * a plain review measured in the same run — go to results.jsonl for RELIABILITY.md.
 */
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { decide } from "../src/policies/engine.js";
import type { AdmissionRequest, WebhookName } from "../src/policies/types.js";
import { BODY_LIMIT_BYTES, buildServer, type WebhookApp } from "../src/server/app.js";
import { capiMachine, context, craftedFrozenUpdate, mapiMachine } from "../test/policies/builders.js";
import { recordFigures } from "./report.js";

const frozen = mapiMachine({ status: "ClusterAPI" });
const ctx = context([frozen, capiMachine({ paused: "none" })]);

const review = craftedFrozenUpdate;

// Shapes as JSON text (JSON.stringify of the deep ones would recurse). The crafted value sits 7 levels down.
const nestedObjects = (levels: number, leaf: string): string =>
  `${'{"n":'.repeat(levels)}${leaf}${"}".repeat(levels)}`;
const nestedLists = (levels: number, leaf: string): string =>
  `${"[".repeat(levels)}${leaf}${"]".repeat(levels)}`;
const wide = (width: number, value: number): string =>
  `{${Array.from({ length: width }, (_, i) => `"k${i}":${value}`).join(",")}}`;
const deepChanges = (levels: number, changes: number, value: number): string =>
  nestedObjects(levels, wide(changes, value));
const side = (count: number, item: string): string =>
  `[${Array.from({ length: count }, () => item).join(",")}]`;
const longKeys = (count: number, length: number, value: number): string =>
  `{${Array.from({ length: count }, (_, i) => `"${String(i).padEnd(length, "k")}":${value}`).join(",")}}`;

interface Shape {
  name: string;
  build: () => string;
  /** 200 (decided: the frozen Machine's edit is denied) or 400 (refused before any decision). */
  status: 200 | 400;
  /** The rule that denies it: the rules' own, or object-too-complex for objects over the bound (decision 89). */
  rule?: string;
  /** What a 400 says; the depth bound's refusal unless named. */
  error?: string;
}

/** The (small) review with `managedFields` in both objects' metadata. */
const inManagedFields = (text: string, managedFields: string): string => {
  const r = JSON.parse(text);
  r.request.object.metadata.managedFields = "@managed";
  r.request.oldObject.metadata.managedFields = "@managed";
  return JSON.stringify(r).replaceAll('"@managed"', managedFields);
};

/** The (small) review with `members` spliced into a container of its `object`: `request`, `object` or `metadata`. */
const membersIn = (text: string, where: "request" | "object" | "metadata", members: string): string => {
  const r = JSON.parse(text);
  const at = { request: r.request, object: r.request.object, metadata: r.request.object.metadata }[where];
  at["@members"] = 0;
  return JSON.stringify(r).replace('"@members":0', members);
};
/** `count` short members, `"0":0` … `"99":0` over and over: what a key costs, with the least text. */
const shortMembers = (count: number): string =>
  Array.from({ length: count }, (_, i) => `"${i % 100}":0`).join(",");

const SHAPES: Shape[] = [
  {
    name: "issue 20's review: 3,000 deep × 4,000 changes",
    build: () => review("big", deepChanges(3_000, 4_000, 1), deepChanges(3_000, 4_000, 2)),
    status: 200,
  },
  {
    name: "9,990 deep × 6,000 changes (as deep as kube sends, within the bound)",
    build: () => review("big", deepChanges(9_990, 6_000, 1), deepChanges(9_990, 6_000, 2)),
    status: 200,
  },
  {
    name: "at the bound: 2 × 16 lists of 1,000 levels (the slowest shape decided by the rules)",
    build: () => review("big", side(16, nestedLists(1_000, "1")), side(16, nestedLists(1_000, "2"))),
    status: 200,
  },
  {
    name: "dense managedFields: 2 × 1.1 M empty objects (never built)",
    build: () => inManagedFields(review("big", "1", "2"), side(1_100_000, "{}")),
    status: 200,
  },
  {
    name: "long keys: 3 × 1 MiB per side",
    build: () => review("big", longKeys(3, 1 << 20, 1), longKeys(3, 1 << 20, 2)),
    status: 200,
  },
  {
    name: "wide: 2 × 280,000 changed keys",
    build: () => review("big", wide(280_000, 1), wide(280_000, 2)),
    status: 200,
    rule: "object-too-complex",
  },
  {
    name: "deep and wide: 2 × 150 lists of 9,990 levels",
    build: () => review("big", side(150, nestedLists(9_990, "1")), side(150, nestedLists(9_990, "2"))),
    status: 200,
    rule: "object-too-complex",
  },
  {
    name: "dense: 2 × 1.1 M empty objects",
    build: () => review("big", side(1_100_000, "{}"), side(1_100_000, "{}").replace("{}]", "{},1]")),
    status: 200,
    rule: "object-too-complex",
  },
  {
    name: "spaced: 2 × 150 lists of 5,000 levels, a space between brackets",
    build: () =>
      review(
        "big",
        side(150, `${"[ ".repeat(5_000)}1${" ]".repeat(5_000)}`),
        side(150, `${"[ ".repeat(5_000)}2${" ]".repeat(5_000)}`),
      ),
    status: 200,
    rule: "object-too-complex",
  },
  {
    name: "short keys in request.object.metadata: 1 M members",
    build: () => membersIn(review("big", "1", "2"), "metadata", shortMembers(1_000_000)),
    status: 200,
    rule: "object-too-complex",
  },
  {
    name: "short keys in request.object: 1 M members",
    build: () => membersIn(review("big", "1", "2"), "object", shortMembers(1_000_000)),
    status: 200,
    rule: "object-too-complex",
  },
  {
    name: "short keys in request: 1 M members",
    build: () => membersIn(review("big", "1", "2"), "request", shortMembers(1_000_000)),
    status: 400,
    error: "JSON values outside request.object and request.oldObject",
  },
  {
    name: "dense outside the objects: 1.1 M values in userInfo.extra",
    build: () =>
      review("big", "1", "2").replace('"userInfo":{', `"userInfo":{"extra":{"x":${side(1_100_000, '""')}},`),
    status: 400,
    error: "JSON values outside request.object and request.oldObject",
  },
  {
    name: "deeper than kube sends: 2 × 600,000 levels of objects",
    build: () => review("big", nestedObjects(600_000, "1"), nestedObjects(600_000, "2")),
    status: 400,
  },
  {
    name: "deeper than kube sends: 2 × 1.5 M levels of lists",
    build: () => review("big", nestedLists(1_500_000, "1"), nestedLists(1_500_000, "2")),
    status: 400,
  },
];

let app: WebhookApp;
afterAll(async () => {
  await app?.close();
});

/** Bodies as a client sends them: bytes, encoded once before any clock starts. */
const post = (payload: Buffer) =>
  app.inject({ method: "POST", url: "/validate", headers: { "content-type": "application/json" }, payload });
const ms = (from: bigint): number => Number(process.hrtime.bigint() - from) / 1e6;
const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

describe("crafted review shapes up to 7 MiB (issue 20 #1)", () => {
  it("each is answered as expected, and plain reviews are decided while it is", async () => {
    app = buildServer({
      decide: (webhook: WebhookName, request: AdmissionRequest) => decide(webhook, request, ctx),
      logger: pino({ level: "silent" }),
      registry: new Registry(),
      readiness: () => ({ ready: true }),
    });
    await app.ready();
    const plain = Buffer.from(review("plain", "1", "2"));
    for (let i = 0; i < 200; i++) await post(plain); // warm-up
    const plainTimes: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = process.hrtime.bigint();
      expect((await post(plain)).statusCode).toBe(200);
      plainTimes.push(ms(t));
    }
    const plainMs = median(plainTimes);
    const rows: Record<string, unknown>[] = [];
    for (const shape of SHAPES) {
      const big = Buffer.from(shape.build());
      expect(big.length).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
      const own: number[] = [];
      const waits: number[] = [];
      for (let run = 0; run < 3; run++) {
        let done = false;
        const started = process.hrtime.bigint();
        const answer = post(big).then((r) => {
          own.push(ms(started));
          done = true;
          return r;
        });
        while (!done) {
          const t = process.hrtime.bigint();
          expect((await post(plain)).statusCode).toBe(200);
          waits.push(ms(t));
        }
        const r = await answer;
        expect(r.statusCode, shape.name).toBe(shape.status);
        if (shape.status === 200) {
          expect(r.json().response.allowed).toBe(false);
          expect(r.json().response.status.message).toContain(`(rule ${shape.rule ?? "mapi-frozen"})`);
        } else expect(r.json().error).toContain(shape.error ?? "nests deeper than 10002 levels");
      }
      rows.push({
        shape: shape.name,
        size: big.length,
        status: shape.status,
        ownMs: round(median(own)),
        ownRatio: round(median(own) / plainMs, 0),
        plainDuringMedianMs: round(median(waits)),
        plainDuringWorstMs: round(Math.max(...waits)),
        worstRatio: round(Math.max(...waits) / plainMs, 0),
        plainReviewsDuring: waits.length,
      });
    }
    recordFigures("crafted shapes (issue 20 #1)", { plainMs: round(plainMs, 3), shapes: rows });
  });
});
