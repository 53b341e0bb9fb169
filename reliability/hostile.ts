/**
 * Hostile admission input (issue 11 item 1, SPEC §2.1): fast-check generators for AdmissionReview bodies a
 * broken or malicious client could send — missing and odd fields, null object/oldObject, DELETE/CONNECT,
 * huge strings, deep nesting, `__proto__`/`constructor` keys, wrong apiVersion/kind, v1beta1, non-JSON, wrong
 * content types — plus the fixed edge cases at and over the 7 MiB body limit, and the one check every answer
 * must pass. Shared by the heavy campaign (reliability/) and the quick subset in `npm test` (test/reliability/).
 */
import fc from "fast-check";
import type { KubeObject } from "../src/kube/object.js";
import { decide } from "../src/policies/engine.js";
import type { AdmissionRequest, Decision, WebhookName } from "../src/policies/types.js";
import { BODY_LIMIT_BYTES, UNEXPECTED_REQUEST_ERROR } from "../src/server/app.js";
import {
  ADMIN,
  awsMachine,
  capiMachine,
  capiMachineSet,
  context,
  MASTERS,
  mapiMachine,
  mapiMachineSet,
} from "../test/policies/builders.js";

/** The objects the engine's view holds: a handover pair in both directions, so rules really run. */
export const WORLD: KubeObject[] = [
  mapiMachine({ name: "worker-a", status: "ClusterAPI" }),
  capiMachine({ name: "worker-a" }),
  awsMachine({ name: "worker-a" }),
  mapiMachineSet({ name: "workers", status: "MachineAPI" }),
  capiMachineSet({ name: "workers" }),
];

/** The real engine over an in-memory view: the server under test decides as production does. */
export function realDecide(): (webhook: WebhookName, request: AdmissionRequest) => Decision {
  const ctx = context(WORLD);
  return (webhook, request) => decide(webhook, request, ctx);
}

const junk = fc.jsonValue({ maxDepth: 2 });
const sometimes = <T>(real: fc.Arbitrary<T>, weight = 80): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight, arbitrary: real },
    { weight: 1, arbitrary: junk },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(null) },
  );

/** Usually the valid value, sometimes one of the near misses. */
const mostly = <T>(valid: T, ...nearMisses: T[]): fc.Arbitrary<T> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constant(valid) },
    { weight: 1, arbitrary: fc.constantFrom(...nearMisses) },
  );

const prototypeKeys = fc.constantFrom("__proto__", "constructor", "prototype", "hasOwnProperty", "toString");

/** An object in one of the machine kinds, or a kind the product must ignore, sometimes vandalised. */
const object = fc
  .record({
    base: fc.constantFrom(
      ...WORLD,
      { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "kube-system" } },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "openshift-machine-api" } },
    ),
    spice: fc.oneof(
      { weight: 4, arbitrary: fc.constant("none" as const) },
      { weight: 1, arbitrary: fc.constant("hugeString" as const) },
      { weight: 1, arbitrary: fc.constant("deep" as const) },
      { weight: 1, arbitrary: fc.constant("protoKey" as const) },
      { weight: 1, arbitrary: fc.constant("oddLabels" as const) },
      { weight: 1, arbitrary: fc.constant("wrongTypes" as const) },
    ),
    key: prototypeKeys,
    depth: fc.integer({ min: 50, max: 3_000 }),
    size: fc.integer({ min: 10_000, max: 200_000 }),
    labels: fc.dictionary(fc.string({ maxLength: 20 }), junk, { maxKeys: 4 }),
    // Not a string: what a template literal turns into text, and what it cannot (an object with a
    // `toString` that is not a function throws).
    wrongName: fc.constantFrom<unknown>(42, { toString: 1 }, {}, ["a"], null, true),
  })
  .map(({ base, spice, key, depth, size, labels, wrongName }) => {
    const o = structuredClone(base) as Record<string, unknown> & { metadata: Record<string, unknown> };
    switch (spice) {
      case "hugeString":
        o.metadata.annotations = { "machine.openshift.io/huge": "x".repeat(size) };
        break;
      case "deep": {
        let nested: unknown = "bottom";
        for (let i = 0; i < depth; i++) nested = { n: nested };
        (o as Record<string, unknown>).spec = nested;
        break;
      }
      case "protoKey":
        // Placed by text, so it reaches the wire as a literal key (JSON.stringify would drop a __proto__).
        return JSON.stringify(o).replace('"metadata":{', `"metadata":{"${key}":{"polluted":true},`);
      case "oddLabels":
        o.metadata.labels = labels;
        break;
      case "wrongTypes":
        o.metadata.name = wrongName;
        (o as Record<string, unknown>).status = "Migrating";
        break;
    }
    return JSON.stringify(o);
  });

const userInfo = fc.constantFrom(
  ADMIN,
  MASTERS,
  { username: "system:serviceaccount:openshift-cluster-api:machine-api-migration", groups: [] },
  { username: "", groups: null },
);

const kindOf = fc.constantFrom(
  { group: "machine.openshift.io", version: "v1beta1", kind: "Machine" },
  { group: "cluster.x-k8s.io", version: "v1beta1", kind: "MachineSet" },
  { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2", kind: "AWSMachine" },
  { group: "autoscaling", version: "v1", kind: "Scale" },
  { group: "", version: "v1", kind: "Pod" },
);

const resourceOf = (kind: unknown): unknown => {
  if (typeof kind !== "object" || kind === null || !("kind" in kind)) return kind;
  const k = kind as { group: string; version: string; kind: string };
  return { group: k.group, version: k.version, resource: `${k.kind.toLowerCase()}s` };
};

/** A review as text: fields are built as text so objects keep their planted keys. */
const review = fc
  .record({
    apiVersion: sometimes(
      mostly("admission.k8s.io/v1", "admission.k8s.io/v1beta1", "admission.k8s.io/v2", "v1"),
    ),
    kind: sometimes(mostly("AdmissionReview", "AdmissionRequest", "admissionreview")),
    uid: sometimes(fc.oneof(fc.uuid(), fc.string({ maxLength: 40 }))),
    kindField: sometimes(kindOf),
    operation: sometimes(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom("CREATE", "UPDATE", "DELETE", "CONNECT") },
        { weight: 1, arbitrary: fc.constantFrom("PATCH", "", "update") },
      ),
    ),
    subResource: sometimes(fc.constantFrom("", "status", "scale", "proxy"), 3),
    namespace: sometimes(
      fc.constantFrom("openshift-machine-api", "openshift-cluster-api", "kube-system", "kube-node-lease", ""),
    ),
    name: sometimes(fc.constantFrom("worker-a", "workers", "", "x".repeat(300))),
    userInfo: sometimes(userInfo),
    dryRun: sometimes(fc.boolean(), 2),
    // Mostly present: since decision 172 a review without the sides its operation has is a 400 before the
    // engine, and the engine must still be reached often.
    object: fc.oneof(
      { weight: 5, arbitrary: object },
      { weight: 1, arbitrary: fc.constant("null") },
      { weight: 1, arbitrary: junk.map((j) => JSON.stringify(j)) },
    ),
    oldObject: fc.oneof(
      { weight: 5, arbitrary: object },
      { weight: 1, arbitrary: fc.constant("null") },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
    drop: fc.boolean(),
  })
  .map((r) => {
    const field = (name: string, value: unknown): string =>
      value === undefined ? "" : `${JSON.stringify(name)}:${JSON.stringify(value)},`;
    const raw = (name: string, text: string | undefined): string =>
      text === undefined ? "" : `${JSON.stringify(name)}:${text},`;
    const request =
      `{${field("uid", r.uid)}${field("kind", r.kindField)}${field("resource", resourceOf(r.kindField))}` +
      `${field("operation", r.operation)}${field("subResource", r.subResource)}` +
      `${field("namespace", r.namespace)}${field("name", r.name)}${field("userInfo", r.userInfo)}` +
      `${field("dryRun", r.dryRun)}${raw("object", r.object)}${raw("oldObject", r.oldObject)}"x":0}`;
    const top = `${field("apiVersion", r.apiVersion)}${field("kind", r.kind)}`;
    return r.drop ? `{${top}"request":${request}}` : `{${top}"request":${request},"response":null}`;
  });

/** Any body: mostly reviews, some junk JSON, some not JSON at all, some cut short. */
export const hostileBody = fc.oneof(
  { weight: 8, arbitrary: review },
  { weight: 1, arbitrary: junk.map((j) => JSON.stringify(j)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: review.chain((t) => fc.nat(t.length).map((n) => t.slice(0, n))) },
  { weight: 1, arbitrary: fc.constant('{"__proto__":{"admin":true},"request":{}}') },
  { weight: 1, arbitrary: fc.constant('{"constructor":{"prototype":{"x":1}},"request":{}}') },
);

export const hostileContentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "text/plain",
      "application/yaml",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/vnd.kubernetes.protobuf",
      "",
    ),
  },
);

export const hostilePath = fc.constantFrom("/validate", "/validate-guard", "/mutate");

/** The body-size edge cases, built once: a valid review padded to exactly the limit, and one byte over. */
export function limitBodies(validReviewText: string): { atLimit: string; overLimit: string } {
  const marker = '"metadata":{';
  const compact = JSON.stringify(JSON.parse(validReviewText));
  const withPad = (n: number): string =>
    compact.replace(marker, `${marker}"annotations":{"pad":"${"p".repeat(n)}"},`);
  const empty = Buffer.byteLength(withPad(0));
  return {
    atLimit: withPad(BODY_LIMIT_BYTES - empty),
    overLimit: withPad(BODY_LIMIT_BYTES - empty + 1),
  };
}

export interface Answer {
  status: number;
  body: string;
}

/**
 * What every answer must be (issue 11 item 1): a 200 carrying a valid AdmissionReview for the uid sent, or a
 * 400/413 whose JSON names the problem. Returns why it is not, or undefined.
 */
export function problemWith(answer: Answer, sentBody: string): string | undefined {
  if (answer.status >= 500) return `5xx: ${answer.status} ${answer.body.slice(0, 200)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return `answer ${answer.status} is not JSON: ${answer.body.slice(0, 200)}`;
  }
  const p = parsed as Record<string, unknown>;
  if (answer.status === 400 || answer.status === 413) {
    if (p.error === UNEXPECTED_REQUEST_ERROR) return `an error no check named: ${answer.body.slice(0, 200)}`;
    return typeof p.error === "string" && p.error.length > 10
      ? undefined
      : `${answer.status} without a named problem: ${answer.body.slice(0, 200)}`;
  }
  if (answer.status !== 200) return `unexpected status ${answer.status}`;
  const response = p.response as Record<string, unknown> | undefined;
  if (p.apiVersion !== "admission.k8s.io/v1" || p.kind !== "AdmissionReview" || !response)
    return `200 is not an admission.k8s.io/v1 AdmissionReview: ${answer.body.slice(0, 200)}`;
  const sentUid = (JSON.parse(sentBody) as { request: { uid: unknown } }).request.uid;
  if (response.uid !== sentUid) return `uid ${String(response.uid)} answered for ${String(sentUid)}`;
  if (typeof response.allowed !== "boolean") return "response.allowed is not a boolean";
  if ("patch" in response !== "patchType" in response) return "patch without patchType (or the reverse)";
  return undefined;
}
