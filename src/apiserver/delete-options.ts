/**
 * A DELETE's options as kube-apiserver's delete handlers read them: from the body when there is one — the query
 * is then not read at all, so `?dryRun=All` beside a body deletes for real — else from the query; then checked
 * together (ValidateDeleteOptions). A body kube's decoder cannot read is its plain error, a 500 without a
 * reason; an option of the wrong JSON type is encoding/json's message. Pure.
 */
import { isRecord } from "../kube/object.js";
import { goJsonValue, unmarshalError } from "./go-json.js";
import { booleanParameter, integerParameter } from "./query.js";
import type { DeleteOptions } from "./rest/request.js";
import { ApiError, invalid } from "./status.js";
import type { StatusCause } from "./types.js";

/** kube answers a decoder's error through its handler's plain error path: 500, no reason. */
const undecodable = (message: string): ApiError => new ApiError(500, "", message);

const typeError = (v: unknown, field: string, goType: string, intoNumber = false): ApiError =>
  undecodable(unmarshalError(v, field, goType, intoNumber));

const INT64_LIMIT = 2 ** 63;

/** The fields of metav1.DeleteOptions, in Go's types; JSON `null` is a field left unset, as in Go. */
const FIELD_CHECKS: Readonly<Record<string, (v: unknown) => ApiError | undefined>> = {
  gracePeriodSeconds: (v) =>
    typeof v !== "number"
      ? typeError(v, "DeleteOptions.gracePeriodSeconds", "int64")
      : Number.isInteger(v) && Math.abs(v) < INT64_LIMIT
        ? undefined
        : typeError(v, "DeleteOptions.gracePeriodSeconds", "int64", true),
  orphanDependents: (v) =>
    typeof v === "boolean" ? undefined : typeError(v, "DeleteOptions.orphanDependents", "bool"),
  ignoreStoreReadErrorWithClusterBreakingPotential: (v) =>
    typeof v === "boolean"
      ? undefined
      : typeError(v, "DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential", "bool"),
  propagationPolicy: (v) =>
    typeof v === "string"
      ? undefined
      : typeError(v, "DeleteOptions.propagationPolicy", "v1.DeletionPropagation"),
  dryRun: (v) => {
    if (!Array.isArray(v)) return typeError(v, "DeleteOptions.dryRun", "[]string");
    const bad = v.find((item) => item !== null && typeof item !== "string");
    return bad === undefined ? undefined : typeError(bad, "DeleteOptions.dryRun", "string");
  },
  preconditions: (v) => {
    if (!isRecord(v)) return typeError(v, "DeleteOptions.preconditions", "v1.Preconditions");
    for (const [field, goType] of [
      ["uid", "types.UID"],
      ["resourceVersion", "string"],
    ] as const) {
      const value = v[field];
      if (value !== null && value !== undefined && typeof value !== "string")
        return typeError(value, `Preconditions.preconditions.${field}`, goType);
    }
    return undefined;
  },
};

/** The options a JSON body holds; a 500, as kube's decoder answers, for one it cannot read. */
export function deleteOptionsFromBody(text: string): DeleteOptions {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw undecodable(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
  if (body === null) return {};
  if (!isRecord(body))
    throw undecodable(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonValue(body)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  for (const field of ["apiVersion", "kind"] as const) {
    const v = body[field];
    if (v !== undefined && v !== null && typeof v !== "string")
      throw undecodable(
        `couldn't get version/kind; json parse error: ${unmarshalError(v, `.${field}`, "string")}`,
      );
  }
  // Every group version registers DeleteOptions; a body naming another kind is not one (not even a dry run).
  const kind = typeof body.kind === "string" ? body.kind : "";
  if (kind !== "" && kind !== "DeleteOptions") {
    const version =
      typeof body.apiVersion === "string" && body.apiVersion ? body.apiVersion : "meta.k8s.io/v1";
    throw undecodable(
      `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(version)} in scheme "pkg/runtime/scheme.go:110"`,
    );
  }
  const options: Record<string, unknown> = {};
  // Field names are matched exactly (kube's decoder is case-sensitive); unknown fields are dropped.
  for (const [field, value] of Object.entries(body)) {
    const check = FIELD_CHECKS[field];
    if (!check || value === null) continue;
    const problem = check(value);
    if (problem) throw problem;
    options[field] = value;
  }
  return options as DeleteOptions;
}

/** The options the query names (kube's parameter codec): a 400 for an integer that is not one. */
export function deleteOptionsFromQuery(q: URLSearchParams): DeleteOptions {
  const options: DeleteOptions = {};
  const policy = q.get("propagationPolicy");
  if (policy) options.propagationPolicy = policy;
  if (q.has("orphanDependents")) options.orphanDependents = booleanParameter(q, "orphanDependents");
  const gracePeriodSeconds = integerParameter(q, "gracePeriodSeconds");
  if (gracePeriodSeconds !== undefined) options.gracePeriodSeconds = gracePeriodSeconds;
  const dryRun = q.getAll("dryRun");
  if (dryRun.length > 0) options.dryRun = dryRun;
  return options;
}

export const PROPAGATION_POLICIES = ["Foreground", "Background", "Orphan"] as const;

/** kube's ValidateDeleteOptions: a 422 on DeleteOptions naming every problem. */
export function validateDeleteOptions(options: DeleteOptions): void {
  const causes: StatusCause[] = [];
  const policy = options.propagationPolicy;
  if (options.orphanDependents !== undefined && policy !== undefined)
    causes.push({
      reason: "FieldValueInvalid",
      field: "propagationPolicy",
      message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both set`,
    });
  if (policy !== undefined && !(PROPAGATION_POLICIES as readonly string[]).includes(policy))
    causes.push({
      reason: "FieldValueNotSupported",
      field: "propagationPolicy",
      message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`,
    });
  const dryRun = options.dryRun ?? [];
  if (dryRun.some((v) => v !== "All"))
    causes.push({
      reason: "FieldValueNotSupported",
      field: "dryRun",
      message: `Unsupported value: []string{${dryRun.map((v) => JSON.stringify(v)).join(", ")}}: supported values: "All"`,
    });
  if (causes.length > 0) throw invalid("meta.k8s.io", "DeleteOptions", "", causes);
}

/** A DELETE's options: the body's when it has one (any byte at all, as kube reads it), else the query's. */
export function deleteOptionsOf(bodyText: string, q: URLSearchParams): DeleteOptions {
  const options = bodyText.length > 0 ? deleteOptionsFromBody(bodyText) : deleteOptionsFromQuery(q);
  validateDeleteOptions(options);
  return options;
}
