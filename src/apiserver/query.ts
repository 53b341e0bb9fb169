/**
 * Query parameters as kube-apiserver's parameter codec reads them into ListOptions and DeleteOptions: an
 * integer parameter that is not an integer is a 400 (never ignored: a watch with `timeoutSeconds=abc` would
 * otherwise never end), and a boolean is true for any value but `0` and `false`. Pure.
 */
import { badRequest } from "./status.js";

/**
 * The integer parameters each verb's ListOptions hold, read before anything else. A DELETE's own options
 * (`gracePeriodSeconds`) are read from the query only when it has no body (./delete-options.ts).
 */
const INTEGER_PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  list: ["limit", "timeoutSeconds"],
  watch: ["limit", "timeoutSeconds"],
  deletecollection: ["limit", "timeoutSeconds"],
};

/** An integer parameter's value, or undefined when absent or empty; a 400 when it is not an integer. */
export function integerParameter(q: URLSearchParams, name: string): number | undefined {
  const value = q.get(name);
  if (value === null || value === "") return undefined;
  if (!/^[+-]?\d{1,18}$/.test(value))
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  return Number(value);
}

/** Refuses, as kube does, the first integer parameter of the verb's options that is not an integer. */
export function checkIntegerParameters(verb: string, q: URLSearchParams): void {
  for (const name of INTEGER_PARAMETERS[verb] ?? []) integerParameter(q, name);
}

/** A boolean parameter: absent is false; present, anything but `0` and `false` (in any case) is true. */
export function booleanParameter(q: URLSearchParams, name: string): boolean {
  const value = q.get(name);
  return value !== null && value !== "0" && value.toLowerCase() !== "false";
}
