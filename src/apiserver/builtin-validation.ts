/**
 * Validation kube-apiserver applies to the built-in kinds the local server serves, and to list options —
 * the parts the differential conformance suite (test/cluster/conformance.cluster.test.ts) found missing
 * here. Pure: an object (or the query) in, kube's field causes or decode error out; rest.ts and http.ts turn
 * them into kube's 422 Invalid and 400 BadRequest answers. CRD-backed kinds are validated by their schemas
 * instead (src/apiserver/schema).
 */
import type { KubeObject } from "../kube/object.js";
import { isRecord } from "../kube/object.js";
import type { ResourceInfo, StatusCause } from "./types.js";

/** kube's limit on a ConfigMap's or Secret's data (core validation `MaxSecretSize`). */
export const MAX_DATA_BYTES = 1024 * 1024;

const required = (field: string, message: string): StatusCause => ({
  reason: "FieldValueRequired",
  field,
  message: `Required value: ${message}`,
});

/** Bytes of a ConfigMap's or Secret's data as kube counts them: every key plus every value. */
const dataBytes = (o: KubeObject): number => {
  let n = 0;
  for (const field of ["data", "binaryData", "stringData"]) {
    const m = o[field];
    if (!isRecord(m)) continue;
    for (const [k, v] of Object.entries(m)) n += Buffer.byteLength(k) + Buffer.byteLength(String(v ?? ""));
  }
  return n;
};

const webhookCauses = (o: KubeObject): StatusCause[] => {
  const causes: StatusCause[] = [];
  const webhooks = Array.isArray(o.webhooks) ? o.webhooks : [];
  webhooks.forEach((w, i) => {
    if (!isRecord(w)) return;
    const at = `webhooks[${i}]`;
    const sideEffects = ["None", "NoneOnDryRun"];
    if (w.sideEffects === undefined)
      causes.push(required(`${at}.sideEffects`, "must specify one of None, NoneOnDryRun"));
    else if (!sideEffects.includes(String(w.sideEffects)))
      causes.push({
        reason: "FieldValueNotSupported",
        field: `${at}.sideEffects`,
        message: `Unsupported value: ${JSON.stringify(w.sideEffects)}: supported values: "None", "NoneOnDryRun"`,
      });
    const versions = Array.isArray(w.admissionReviewVersions) ? w.admissionReviewVersions : [];
    if (versions.length === 0)
      causes.push(required(`${at}.admissionReviewVersions`, "must specify one of v1, v1beta1"));
    else if (!versions.some((v) => v === "v1" || v === "v1beta1"))
      causes.push({
        reason: "FieldValueInvalid",
        field: `${at}.admissionReviewVersions`,
        message: `Invalid value: ${JSON.stringify(versions)}: must include at least one of v1, v1beta1`,
      });
    const client = isRecord(w.clientConfig) ? w.clientConfig : {};
    const hasUrl = typeof client.url === "string";
    const hasService = isRecord(client.service);
    if (hasUrl === hasService)
      causes.push(required(`${at}.clientConfig`, "exactly one of url or service is required"));
  });
  return causes;
};

/** The 422 causes kube's validation of a built-in kind gives `o` (none for kinds it does not know here). */
export function builtinCauses(res: Pick<ResourceInfo, "group" | "kind">, o: KubeObject): StatusCause[] {
  if (res.group === "" && (res.kind === "ConfigMap" || res.kind === "Secret")) {
    const bytes = dataBytes(o);
    return bytes > MAX_DATA_BYTES
      ? [
          {
            reason: "FieldValueTooLong",
            field: "[]",
            message: `Too long: may not be more than ${MAX_DATA_BYTES} bytes`,
          },
        ]
      : [];
  }
  if (res.group === "" && res.kind === "Event") {
    const involved = isRecord(o.involvedObject) ? o.involvedObject : {};
    const namespace = o.metadata?.namespace ?? "";
    const theirs = typeof involved.namespace === "string" ? involved.namespace : "";
    return theirs !== "" && theirs !== namespace
      ? [
          {
            reason: "FieldValueInvalid",
            field: "involvedObject.namespace",
            message: `Invalid value: ${JSON.stringify(theirs)}: does not match event.namespace`,
          },
        ]
      : [];
  }
  if (
    res.group === "admissionregistration.k8s.io" &&
    (res.kind === "ValidatingWebhookConfiguration" || res.kind === "MutatingWebhookConfiguration")
  )
    return webhookCauses(o);
  return [];
}

const RFC3339_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * What kube's typed decoding refuses before any validation runs (answered 400, "cannot be handled as a
 * <Kind>"): a Lease's times must be RFC 3339 MicroTimes and its integers integers.
 */
export function builtinDecodeProblem(
  res: Pick<ResourceInfo, "group" | "kind">,
  o: KubeObject,
): string | undefined {
  if (res.group !== "coordination.k8s.io" || res.kind !== "Lease") return undefined;
  const spec = isRecord(o.spec) ? o.spec : {};
  for (const field of ["acquireTime", "renewTime"]) {
    const v = spec[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== "string" || !RFC3339_MICRO.test(v) || Number.isNaN(Date.parse(v)))
      return `Lease in version "v1" cannot be handled as a Lease: spec.${field}: ${JSON.stringify(v)} is not an RFC 3339 time`;
  }
  for (const field of ["leaseDurationSeconds", "leaseTransitions"]) {
    const v = spec[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v > 2 ** 31 - 1 || v < -(2 ** 31))
      return `Lease in version "v1" cannot be handled as a Lease: spec.${field}: ${JSON.stringify(v)} is not a 32-bit integer`;
  }
  return undefined;
}

/** kube's validation of list options (apimachinery `ValidateListOptions`): 422 causes on `ListOptions`. */
export function listOptionCauses(q: URLSearchParams): StatusCause[] {
  const match = q.get("resourceVersionMatch");
  if (!match) return [];
  const rv = q.get("resourceVersion") ?? "";
  if (rv === "")
    return [
      {
        reason: "FieldValueForbidden",
        field: "resourceVersionMatch",
        message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
      },
    ];
  if (match !== "Exact" && match !== "NotOlderThan")
    return [
      {
        reason: "FieldValueNotSupported",
        field: "resourceVersionMatch",
        message: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`,
      },
    ];
  if (match === "Exact" && rv === "0")
    return [
      {
        reason: "FieldValueForbidden",
        field: "resourceVersionMatch",
        message: 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      },
    ];
  return [];
}
