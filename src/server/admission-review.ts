/**
 * The admission.k8s.io/v1 AdmissionReview codec (SPEC §2.1): a zod schema that turns a parsed request body
 * into the engine's `AdmissionRequest` (or a one-line reason it is malformed), and the pure function that
 * turns an engine `Decision` into the response kube-apiserver expects for a given webhook. No I/O, no rules:
 * which rule allows or denies lives in src/policies.
 */
import { z } from "zod";
import { isRecord, type KubeObject } from "../kube/object.js";
import type { AdmissionRequest, Decision, WebhookName } from "../policies/types.js";

const ADMISSION_API_VERSION = "admission.k8s.io/v1";
const ADMISSION_KIND = "AdmissionReview";

/**
 * Unknown fields are tolerated and dropped (z.object strips): the engine's `AdmissionRequest` names every
 * field it reads, and stripping is cheaper than carrying them along.
 *
 * `object` and `oldObject` are only checked to be JSON objects (or null/absent): the rules read them with
 * defensive accessors, and validating or copying a multi-megabyte object here would cost every request.
 */
const kubeObject = z
  .custom<KubeObject>((v) => isRecord(v), { error: "must be a JSON object or null" })
  .nullable()
  .optional();

const groupVersionKind = z.object({
  group: z.string({ error: 'must be a string ("" for the core group)' }),
  version: z.string({ error: "must be a string" }),
  kind: z.string({ error: "must be a string" }),
});
const groupVersionResource = z.object({
  group: z.string({ error: 'must be a string ("" for the core group)' }),
  version: z.string({ error: "must be a string" }),
  resource: z.string({ error: "must be a string" }),
});

const requestSchema = z.object({
  uid: z.string({ error: "is required (a string)" }).min(1, { error: "must not be empty" }),
  kind: groupVersionKind,
  resource: groupVersionResource,
  subResource: z.string().optional(),
  requestKind: groupVersionKind.optional(),
  requestResource: groupVersionResource.optional(),
  requestSubResource: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  operation: z.enum(["CREATE", "UPDATE", "DELETE", "CONNECT"], {
    error: "must be one of CREATE, UPDATE, DELETE, CONNECT",
  }),
  // An empty username is allowed: it is still a user the engine must treat as "not a controller".
  userInfo: z.object({
    username: z.string({ error: "is required (a string)" }),
    uid: z.string().optional(),
    groups: z.array(z.string()).optional(),
    extra: z.record(z.string(), z.array(z.string())).optional(),
  }),
  object: kubeObject,
  oldObject: kubeObject,
  dryRun: z.boolean().optional(),
  options: z
    .custom<Record<string, unknown>>((v) => isRecord(v), { error: "must be a JSON object or null" })
    .nullable()
    .optional(),
});

/**
 * The sides kube-apiserver always sends for each operation: CREATE the new object, UPDATE both, DELETE the old
 * one (CONNECT sends its options as `object`, which no rule reads). A review without them is not kube's: a rule
 * that reads a missing side as "absent" would decide on nothing (an UPDATE without `oldObject` reads as no
 * authority at all).
 */
const REQUIRED_SIDES: Readonly<Record<string, readonly ("object" | "oldObject")[]>> = {
  CREATE: ["object"],
  UPDATE: ["object", "oldObject"],
  DELETE: ["oldObject"],
  CONNECT: [],
};
/** The sides `r`'s operation has that it does not carry as JSON objects. */
const missingSides = (r: { operation: string; object?: unknown; oldObject?: unknown }) =>
  (REQUIRED_SIDES[r.operation] ?? []).filter((side) => !isRecord(r[side]));

const reviewSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION, {
    error: (issue) =>
      `must be "${ADMISSION_API_VERSION}" (got ${JSON.stringify(issue.input) ?? "nothing"}); ` +
      "only admissionReviewVersions v1 is served",
  }),
  kind: z.literal(ADMISSION_KIND, {
    error: (issue) => `must be "${ADMISSION_KIND}" (got ${JSON.stringify(issue.input) ?? "nothing"})`,
  }),
  request: requestSchema.check((ctx) => {
    for (const side of missingSides(ctx.value))
      ctx.issues.push({
        code: "custom",
        input: ctx.value[side],
        path: [side],
        message: `is required for ${ctx.value.operation} (a JSON object)`,
      });
  }),
});

export type DecodeResult = { ok: true; request: AdmissionRequest } | { ok: false; error: string };

/** How many schema problems one 400 answer lists; the rest are counted, not printed. */
const MAX_LISTED_ISSUES = 3;

const describePath = (path: readonly PropertyKey[]): string =>
  path.length === 0 ? "body" : path.map((p) => (typeof p === "number" ? `[${p}]` : String(p))).join(".");

/** Validates a parsed JSON body as an AdmissionReview request. */
export function decodeAdmissionReview(body: unknown): DecodeResult {
  // kube-apiserver's reviews are well-formed: a hand check of the same schema answers them (zod costs more
  // than the policy decision itself on /validate). Anything it does not vouch for goes through the schema,
  // which alone words the 400 answers, so their text is the schema's whatever the fast path accepts.
  const request = isRecord(body) ? wellFormedRequest(body) : undefined;
  return request ? { ok: true, request: withNullSides(request) } : decodeWithSchema(body);
}

/** The schema's verdict on a body; what `decodeAdmissionReview` answers whenever the fast path declines. */
export function decodeWithSchema(body: unknown): DecodeResult {
  if (!isRecord(body)) {
    return { ok: false, error: "body must be a JSON object (an admission.k8s.io/v1 AdmissionReview)" };
  }
  const parsed = reviewSchema.safeParse(body);
  if (parsed.success) return { ok: true, request: withNullSides(parsed.data.request as AdmissionRequest) };
  const issues = parsed.error.issues;
  const listed = issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((i) => `${describePath(i.path)}: ${i.message}`)
    .join("; ");
  const more = issues.length > MAX_LISTED_ISSUES ? ` (and ${issues.length - MAX_LISTED_ISSUES} more)` : "";
  return { ok: false, error: `invalid AdmissionReview: ${listed}${more}` };
}

/** kube sends null for the absent side (object on DELETE, oldObject on CREATE); "absent" reads the same. */
function withNullSides(request: AdmissionRequest): AdmissionRequest {
  if (request.object === undefined) request.object = null;
  if (request.oldObject === undefined) request.oldObject = null;
  return request;
}

// --- the fast path: the schema above, by hand ---------------------------------------------------------------
// Each check answers undefined ("ask the schema") for anything the schema might refuse, and otherwise builds
// what the schema would output: known keys only, in the schema's order, an optional key only when present,
// nested objects and arrays copied, `object`/`oldObject`/`options` passed through as they are.
// test/server/admission-review.test.ts compares the two on fixtures and random damage to them.

const OPERATIONS: ReadonlySet<unknown> = new Set(["CREATE", "UPDATE", "DELETE", "CONNECT"]);

type Fields = Record<string, unknown>;

/**
 * An optional key the schema will look at. A present key holding `undefined` (which JSON cannot send) fails
 * every check below, so the schema decides it.
 */
const present = (o: Fields, key: string): boolean => Object.hasOwn(o, key);

function wellFormedRequest(body: Fields): AdmissionRequest | undefined {
  if (body.apiVersion !== ADMISSION_API_VERSION || body.kind !== ADMISSION_KIND) return undefined;
  const r = body.request;
  if (!isRecord(r)) return undefined;
  if (typeof r.uid !== "string" || r.uid.length === 0) return undefined;
  const kind = groupVersionKindOf(r.kind);
  const resource = groupVersionResourceOf(r.resource);
  if (!kind || !resource || !OPERATIONS.has(r.operation)) return undefined;
  const userInfo = userInfoOf(r.userInfo);
  if (!userInfo) return undefined;
  const out: Fields = { uid: r.uid, kind, resource };
  if (!optionalString(r, "subResource", out)) return undefined;
  if (present(r, "requestKind")) {
    const requestKind = groupVersionKindOf(r.requestKind);
    if (!requestKind) return undefined;
    out.requestKind = requestKind;
  }
  if (present(r, "requestResource")) {
    const requestResource = groupVersionResourceOf(r.requestResource);
    if (!requestResource) return undefined;
    out.requestResource = requestResource;
  }
  if (!optionalString(r, "requestSubResource", out)) return undefined;
  if (!optionalString(r, "name", out)) return undefined;
  if (!optionalString(r, "namespace", out)) return undefined;
  out.operation = r.operation;
  out.userInfo = userInfo;
  if (!optionalObject(r, "object", out)) return undefined;
  if (!optionalObject(r, "oldObject", out)) return undefined;
  if (present(r, "dryRun")) {
    if (typeof r.dryRun !== "boolean") return undefined;
    out.dryRun = r.dryRun;
  }
  if (!optionalObject(r, "options", out)) return undefined;
  if (missingSides(out as { operation: string }).length > 0) return undefined;
  return out as unknown as AdmissionRequest;
}

function optionalString(from: Fields, key: string, to: Fields): boolean {
  if (!present(from, key)) return true;
  const v = from[key];
  if (typeof v !== "string") return false;
  to[key] = v;
  return true;
}

/** A JSON object or null, passed through uncopied (the schema's `kubeObject` and `options`). */
function optionalObject(from: Fields, key: string, to: Fields): boolean {
  if (!present(from, key)) return true;
  const v = from[key];
  if (v !== null && !isRecord(v)) return false;
  to[key] = v;
  return true;
}

function groupVersionKindOf(v: unknown): AdmissionRequest["kind"] | undefined {
  if (!isRecord(v)) return undefined;
  const { group, version, kind } = v;
  if (typeof group !== "string" || typeof version !== "string" || typeof kind !== "string") return undefined;
  return { group, version, kind };
}

function groupVersionResourceOf(v: unknown): AdmissionRequest["resource"] | undefined {
  if (!isRecord(v)) return undefined;
  const { group, version, resource } = v;
  if (typeof group !== "string" || typeof version !== "string" || typeof resource !== "string")
    return undefined;
  return { group, version, resource };
}

const stringArray = (v: unknown): string[] | undefined => {
  if (!Array.isArray(v)) return undefined;
  for (const item of v) if (typeof item !== "string") return undefined;
  return [...(v as string[])];
};

function userInfoOf(v: unknown): AdmissionRequest["userInfo"] | undefined {
  if (!isRecord(v) || typeof v.username !== "string") return undefined;
  const out: AdmissionRequest["userInfo"] = { username: v.username };
  if (!optionalString(v, "uid", out as unknown as Fields)) return undefined;
  if (present(v, "groups")) {
    const groups = stringArray(v.groups);
    if (!groups) return undefined;
    out.groups = groups;
  }
  if (present(v, "extra")) {
    const extra = v.extra;
    // The schema's record copies own keys of a plain object; anything else (or a `__proto__` key, which it
    // skips) is left to it.
    if (!isRecord(extra) || Object.getPrototypeOf(extra) !== Object.prototype) return undefined;
    const copy: Record<string, string[]> = {};
    for (const key of Object.keys(extra)) {
      const values = key === "__proto__" ? undefined : stringArray(extra[key]);
      if (!values) return undefined;
      copy[key] = values;
    }
    out.extra = copy;
  }
  return out;
}

/** The Status of a denial, as kube-apiserver expects it (metav1.Status). */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status: "Failure";
  code: number;
  reason: string;
  message: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: ResponseStatus;
  warnings?: string[];
  patchType?: "JSONPatch";
  patch?: string;
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: AdmissionResponse;
}

/**
 * Builds the answer for `decision` on `webhook`. Enforces the wire rules whatever the engine returned:
 * validating webhooks never carry a patch; a mutating answer carries patchType and patch together or
 * neither; DELETE is never patched; an allowed answer carries no Status.
 */
export function encodeAdmissionResponse(
  webhook: WebhookName,
  request: Pick<AdmissionRequest, "uid" | "operation">,
  decision: Decision,
): AdmissionReviewResponse {
  const response: AdmissionResponse = { uid: request.uid, allowed: decision.allowed };
  if (!decision.allowed) {
    const status = decision.status;
    response.status = {
      metadata: {},
      status: "Failure",
      code: status?.code ?? 403,
      reason: status?.reason ?? "Forbidden",
      message: status?.message ?? `denied by rule ${decision.rule}`,
    };
  }
  if (decision.warnings.length > 0) response.warnings = decision.warnings;
  if (
    webhook === "mutate" &&
    decision.allowed &&
    request.operation !== "DELETE" &&
    decision.patch !== undefined &&
    decision.patch.length > 0
  ) {
    response.patchType = "JSONPatch";
    response.patch = Buffer.from(JSON.stringify(decision.patch)).toString("base64");
  }
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}

/**
 * fast-json-stringify schema of a 200 answer. Every field the encoder can emit is listed, so the serializer
 * never drops one; a test compares its output with JSON.stringify.
 */
export const admissionReviewResponseJsonSchema = {
  type: "object",
  required: ["apiVersion", "kind", "response"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    response: {
      type: "object",
      required: ["uid", "allowed"],
      properties: {
        uid: { type: "string" },
        allowed: { type: "boolean" },
        status: {
          type: "object",
          properties: {
            metadata: { type: "object", additionalProperties: false, properties: {} },
            status: { type: "string" },
            code: { type: "integer" },
            reason: { type: "string" },
            message: { type: "string" },
          },
        },
        warnings: { type: "array", items: { type: "string" } },
        patchType: { type: "string" },
        patch: { type: "string" },
      },
    },
  },
} as const;
