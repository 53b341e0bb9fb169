/**
 * The CEL variables matchConditions see for one admitted request — kube's `object`, `oldObject` and
 * `request` — built lazily: a variable is converted from JSON only when an expression reads it, and each
 * value at most once per dispatch however many webhooks evaluate conditions. `request` is a map whose
 * fields convert on first read, so the usual `request.userInfo.username` never pays for `request.object`.
 * `authorizer` and `params` are not provided (this server has neither); an expression reading them fails
 * to evaluate and its webhook follows its failurePolicy. Compiling and evaluating conditions stays in
 * configuration.ts and index.ts.
 */
import { jsonToCel, LazyCelMap } from "../schema/cel.js";
import { admissionRequest } from "./matching.js";
import type { AdmissionAttributes } from "./types.js";

/** JSON → CEL conversion of a value; see `memoisedConverter`. */
export type CelConverter = (value: unknown) => unknown;

/**
 * One dispatch's conversions, memoised by value identity. Safe because admission never changes an object in
 * place: a mutating webhook's patch is applied to a copy, which is a new identity and converts afresh.
 */
export function memoisedConverter(convert: CelConverter = jsonToCel): CelConverter {
  const converted = new Map<object, unknown>();
  return (value) => {
    if (typeof value !== "object" || value === null) return convert(value);
    if (converted.has(value)) return converted.get(value);
    const out = convert(value);
    converted.set(value, out);
    return out;
  };
}

/** The variables of a matchCondition; getters, so an unreferenced variable is never converted. */
export function conditionVariables(a: AdmissionAttributes, convert: CelConverter): Record<string, unknown> {
  let request: LazyCelMap | undefined;
  return {
    get object() {
      return convert(a.object);
    },
    get oldObject() {
      return convert(a.oldObject);
    },
    get request() {
      request ??= new LazyCelMap(admissionRequest(a, ""), convert);
      return request;
    },
  };
}
