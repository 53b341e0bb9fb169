/**
 * A field error, printed the way Kubernetes prints `field.Invalid(...)`: `<path>: Invalid value: <json>:
 * <message>` — the one printing the Synchronized condition, the webhook's refusals, `preflight` and `convert`
 * share (decision 81).
 *
 * The value is whatever a user wrote into a free-form field (a providerSpec, a status): kube-apiserver stores
 * one nested nearly 10,000 levels deep, where `JSON.stringify` overflows the stack, or megabytes long. So
 * the value is printed by `boundedJson` (src/json-text.ts): the same text `JSON.stringify` gives, cut after
 * FIELD_VALUE_MAX_CHARS characters with `…`, built without recursion and without reading past the cut. Pure.
 */

import { boundedJson } from "../json-text.js";

export interface FieldError {
  path: string;
  value: unknown;
  message: string;
}

/** How much of a value a message shows: enough to recognise it, never the whole of a hostile one. */
export const FIELD_VALUE_MAX_CHARS = 200;

export const formatFieldError = (e: FieldError): string =>
  `${e.path}: Invalid value: ${boundedJson(e.value === undefined ? null : e.value, FIELD_VALUE_MAX_CHARS)}: ${e.message}`;
