/**
 * The admission.k8s.io/v1 AdmissionReview codec (SPEC §2.1): a zod schema that turns a parsed request body
 * into the engine's `AdmissionRequest` (or a one-line reason it is malformed), and the pure function that
 * turns an engine `Decision` into the response kube-apiserver expects for a given webhook. No I/O, no rules:
 * which rule allows or denies lives in src/policies.
 */
import { z } from "zod";
import { isRecord, type KubeObject } from "../kube/object.js";
import type { AdmissionRequest, Decision, WebhookName } from "../policies/types.js";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";
export const ADMISSION_KIND = "AdmissionReview";

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

const reviewSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION, {
    error: (issue) =>
      `must be "${ADMISSION_API_VERSION}" (got ${JSON.stringify(issue.input) ?? "nothing"}); ` +
      "only admissionReviewVersions v1 is served",
  }),
  kind: z.literal(ADMISSION_KIND, {
    error: (issue) => `must be "${ADMISSION_KIND}" (got ${JSON.stringify(issue.input) ?? "nothing"})`,
  }),
  request: requestSchema,
});

export type DecodeResult = { ok: true; request: AdmissionRequest } | { ok: false; error: string };

/** How many schema problems one 400 answer lists; the rest are counted, not printed. */
const MAX_LISTED_ISSUES = 3;

const describePath = (path: readonly PropertyKey[]): string =>
  path.length === 0 ? "body" : path.map((p) => (typeof p === "number" ? `[${p}]` : String(p))).join(".");

/** Validates a parsed JSON body as an AdmissionReview request. */
export function decodeAdmissionReview(body: unknown): DecodeResult {
  if (!isRecord(body)) {
    return { ok: false, error: "body must be a JSON object (an admission.k8s.io/v1 AdmissionReview)" };
  }
  const parsed = reviewSchema.safeParse(body);
  if (parsed.success) {
    const request = parsed.data.request;
    // kube sends null for the absent side (object on DELETE, oldObject on CREATE); normalise "absent" to it.
    if (request.object === undefined) request.object = null;
    if (request.oldObject === undefined) request.oldObject = null;
    return { ok: true, request: request as AdmissionRequest };
  }
  const issues = parsed.error.issues;
  const listed = issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((i) => `${describePath(i.path)}: ${i.message}`)
    .join("; ");
  const more = issues.length > MAX_LISTED_ISSUES ? ` (and ${issues.length - MAX_LISTED_ISSUES} more)` : "";
  return { ok: false, error: `invalid AdmissionReview: ${listed}${more}` };
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
