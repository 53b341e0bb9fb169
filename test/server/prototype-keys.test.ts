/**
 * SPEC §2.1 "keys named `__proto__`, `constructor` or `prototype` inside the review's objects are data", end
 * to end: a review is sent through the server to the real policy engine with such a key planted in every
 * object of it, one position at a time, and must be answered exactly as the same review without it — never
 * with a 400, which would hand kube's decision to the failure policy (issue 20: a CAPI status field holding
 * one let a delete slip past `confirm-delete`, and made every label edit fail). No prototype changes.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import { decide } from "../../src/policies/engine.js";
import type { AdmissionRequest, PolicyContext, WebhookName } from "../../src/policies/types.js";
import { buildServer, type WebhookApp } from "../../src/server/app.js";
import {
  capiMachine,
  context,
  createRequest,
  deleteRequest,
  edit,
  mapiMachine,
  updateRequest,
} from "../policies/builders.js";
import { fakeDeps } from "./helpers.js";

type Json = Record<string, unknown> | unknown[];

interface Scenario {
  name: string;
  webhook: WebhookName;
  request: AdmissionRequest;
  objects: KubeObject[];
  /** What the baseline review must get, so a scenario cannot silently stop exercising its rule. */
  expected: { allowed: boolean; rule: string };
}

const frozen = mapiMachine({ status: "ClusterAPI" });
const SCENARIOS: Scenario[] = [
  {
    name: "deleting the CAPI mirror of an authoritative MAPI Machine needs confirm-delete",
    webhook: "validate-guard",
    request: deleteRequest(capiMachine()),
    objects: [mapiMachine()],
    expected: { allowed: false, rule: "delete-authoritative-via-mirror" },
  },
  {
    name: "a protected label on a frozen MAPI Machine is refused",
    webhook: "validate",
    request: updateRequest(
      frozen,
      edit(frozen, (m) => {
        m.metadata.labels["machine.openshift.io/region"] = "elsewhere";
      }),
    ),
    objects: [capiMachine()],
    expected: { allowed: false, rule: "mapi-frozen" },
  },
  {
    name: "an unprotected label on a frozen MAPI Machine is allowed",
    webhook: "validate",
    request: updateRequest(
      frozen,
      edit(frozen, (m) => {
        m.metadata.labels.team = "blue";
      }),
    ),
    objects: [capiMachine()],
    expected: { allowed: true, rule: "none" },
  },
  {
    name: "a new CAPI Machine whose MAPI twin is authoritative is paused",
    webhook: "mutate",
    request: createRequest(capiMachine({ paused: "none" })),
    objects: [mapiMachine()],
    expected: { allowed: true, rule: "pause-new-capi" },
  },
];

const review = (request: AdmissionRequest): Json => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: JSON.parse(JSON.stringify(request)),
});

/** Paths of every object (not array) in `value`, the root included. */
function objectPaths(value: unknown): (string | number)[][] {
  const out: (string | number)[][] = [];
  const stack: { node: unknown; path: (string | number)[] }[] = [{ node: value, path: [] }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { node, path } = item;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) stack.push({ node: node[i], path: [...path, i] });
    } else if (typeof node === "object" && node !== null) {
      out.push(path);
      for (const [key, child] of Object.entries(node)) stack.push({ node: child, path: [...path, key] });
    }
  }
  return out;
}

const at = (root: unknown, path: readonly (string | number)[]): unknown =>
  path.reduce<unknown>(
    (node, key) =>
      typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined,
    root,
  );

/** The same place in the request's other object: a key planted in `object` goes into `oldObject` too. */
const twinPath = (path: readonly (string | number)[]): (string | number)[] | undefined =>
  path[0] === "request" && (path[1] === "object" || path[1] === "oldObject")
    ? ["request", path[1] === "object" ? "oldObject" : "object", ...path.slice(2)]
    : undefined;

const PLANTED: Record<string, unknown> = {
  __proto__: { polluted: true, allowed: true },
  constructor: { prototype: { polluted: true } },
  prototype: { polluted: true },
};

/** `body` with `key` planted as an own field of the object at `path` (and at its twin, if it has one). */
function planted(body: Json, path: (string | number)[], key: string): string {
  const copy = JSON.parse(JSON.stringify(body)) as Json;
  for (const p of [path, twinPath(path)]) {
    const target = p && at(copy, p);
    if (typeof target === "object" && target !== null && !Array.isArray(target))
      Object.defineProperty(target, key, {
        value: structuredClone(PLANTED[key]),
        writable: true,
        enumerable: true,
        configurable: true,
      });
  }
  const text = JSON.stringify(copy);
  expect(text).toContain(`"${key}":`);
  return text;
}

const apps: WebhookApp[] = [];
afterAll(() => Promise.all(apps.map((a) => a.close())));
const serve = (ctx: PolicyContext): WebhookApp => {
  const app = buildServer(fakeDeps((webhook, request) => decide(webhook, request, ctx)));
  apps.push(app);
  return app;
};

describe("prototype keys in every position of a review are data (SPEC §2.1, issue 20)", () => {
  it.each(SCENARIOS)("$name", async (scenario) => {
    const app = serve(context(scenario.objects));
    const send = async (payload: string) => {
      const res = await app.inject({
        method: "POST",
        url: `/${scenario.webhook}`,
        payload,
        headers: { "content-type": "application/json" },
      });
      return { status: res.statusCode, body: res.json() as Record<string, unknown> };
    };
    const body = review(scenario.request);
    const baseline = await send(JSON.stringify(body));
    expect(baseline.status).toBe(200);
    const response = baseline.body.response as { allowed: boolean };
    expect(response.allowed).toBe(scenario.expected.allowed);
    const positions = objectPaths(body);
    expect(positions.length).toBeGreaterThan(10);
    for (const path of positions) {
      for (const key of Object.keys(PLANTED)) {
        const answer = await send(planted(body, path, key));
        expect({ path, key, ...answer }).toEqual({ path, key, ...baseline });
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(({} as Record<string, unknown>).allowed).toBeUndefined();
      }
    }
  });

  it("a CAPI Machine's status holding prototype keys is decided like any other", async () => {
    const withKeys = JSON.parse(
      JSON.stringify(capiMachine()).replace(
        '"status":{',
        '"status":{"__proto__":{"x":1},"constructor":{"prototype":{"y":2}},"prototype":{},',
      ),
    ) as KubeObject;
    expect(Object.hasOwn(withKeys.status ?? {}, "__proto__")).toBe(true);
    const app = serve(context([mapiMachine()]));
    const res = await app.inject({
      method: "POST",
      url: "/validate-guard",
      payload: JSON.stringify(review(deleteRequest(withKeys))),
      headers: { "content-type": "application/json" },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(res.json().response.status.message).toContain("(rule delete-authoritative-via-mirror)");
  });
});
