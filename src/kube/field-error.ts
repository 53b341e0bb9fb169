/**
 * A field error, printed the way Kubernetes prints `field.Invalid(...)`: `<path>: Invalid value: <json>:
 * <message>` — the one printing the Synchronized condition, the webhook's refusals, `preflight` and `convert`
 * share (decision 81).
 *
 * The value is whatever a user wrote into a free-form field (a providerSpec, a status): kube-apiserver stores
 * one nested nearly 10,000 levels deep, where `JSON.stringify` overflows the stack, or megabytes long. So
 * the value is printed by `boundedJson`: the same text `JSON.stringify` gives, cut after `maxChars`
 * characters with `…`, built without recursion and without reading past the cut. Pure.
 */

export interface FieldError {
  path: string;
  value: unknown;
  message: string;
}

/** How much of a value a message shows: enough to recognise it, never the whole of a hostile one. */
export const FIELD_VALUE_MAX_CHARS = 200;

export const formatFieldError = (e: FieldError): string =>
  `${e.path}: Invalid value: ${boundedJson(e.value === undefined ? null : e.value, FIELD_VALUE_MAX_CHARS)}: ${e.message}`;

const CUT = "…";

/** An open array or object, and where its walk has got to. */
type Frame =
  | { array: readonly unknown[]; at: number }
  | { object: Record<string, unknown>; keys: string[]; at: number; wrote: boolean };

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A scalar's JSON, as JSON.stringify writes it inside an array (where a non-JSON value becomes `null`). */
const scalarJson = (v: unknown, room: number): string => {
  if (typeof v === "string") return JSON.stringify(v.length > room ? v.slice(0, room) : v);
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "boolean") return String(v);
  return "null";
};

/**
 * JSON text of `value` — what `JSON.stringify` writes for parsed JSON — cut to at most `maxChars` characters
 * plus `…` when longer. Walks with an explicit stack, and stops at the cut: a value of any depth or size
 * costs about `maxChars` of work (plus listing the keys of the objects it opens).
 */
export function boundedJson(value: unknown, maxChars: number): string {
  let out = "";
  const full = (): boolean => out.length > maxChars;
  const stack: Frame[] = [];
  const open = (v: unknown): void => {
    if (Array.isArray(v)) {
      out += "[";
      stack.push({ array: v, at: 0 });
    } else if (isPlainObject(v)) {
      out += "{";
      stack.push({ object: v, keys: Object.keys(v), at: 0, wrote: false });
    } else {
      out += scalarJson(v, maxChars - out.length + 1);
    }
  };
  open(value);
  while (stack.length > 0 && !full()) {
    const top = stack[stack.length - 1] as Frame;
    if ("array" in top) {
      if (top.at >= top.array.length) {
        out += "]";
        stack.pop();
        continue;
      }
      if (top.at > 0) out += ",";
      open(top.array[top.at++]);
      continue;
    }
    if (top.at >= top.keys.length) {
      out += "}";
      stack.pop();
      continue;
    }
    const key = top.keys[top.at++] as string;
    const member = top.object[key];
    // JSON.stringify leaves out members whose value has no JSON (undefined, functions, symbols).
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    if (top.wrote) out += ",";
    top.wrote = true;
    out += `${JSON.stringify(key.length > maxChars ? key.slice(0, maxChars) : key)}:`;
    open(member);
  }
  return out.length > maxChars || stack.length > 0 ? `${out.slice(0, maxChars)}${CUT}` : out;
}
