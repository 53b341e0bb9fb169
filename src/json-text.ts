/**
 * JSON text of parsed JSON values at any depth (no recursion), whole or cut short. kube-apiserver stores
 * objects nested up to 10,000 levels (src/json-depth.ts); V8's `JSON.stringify` overflows the stack near
 * 5,000. `jsonText` is `JSON.stringify` and falls back to the explicit-stack writer only for such values;
 * `boundedJson` writes at most `maxChars` characters (messages that show a user's value); `canonicalJson`
 * sorts every object's keys (a key for values equal as JSON); `valueText` spells values in another syntax
 * (Go's `%#v`, src/apiserver/go-json.ts). Pure.
 */

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

/** How a value's text is spelt: JSON's, or another language's literal syntax for the same value. */
export interface ValueSyntax {
  openObject: string;
  closeObject: string;
  openArray: string;
  closeArray: string;
  /** Between the items of an array and the members of an object. */
  separator: string;
  /** An object's members in sorted key order instead of the object's own. */
  sortKeys: boolean;
  /** `null`, as an item or a member's value. */
  nil: string;
}

const JSON_SYNTAX: ValueSyntax = {
  openObject: "{",
  closeObject: "}",
  openArray: "[",
  closeArray: "]",
  separator: ",",
  sortKeys: false,
  nil: "null",
};
/** JSON with every object's keys sorted: one text for values equal as JSON whatever their key order. */
const CANONICAL_SYNTAX: ValueSyntax = { ...JSON_SYNTAX, sortKeys: true };

/**
 * The text of `value` in `syntax`, cut to at most `maxChars` characters plus `…` when longer. Walks with an
 * explicit stack and stops at the cut: a value of any depth or size costs about `maxChars` of work (plus
 * listing — and, sorted, ordering — the keys of the objects it opens).
 */
export function valueText(value: unknown, maxChars: number, syntax: ValueSyntax): string {
  let out = "";
  const full = (): boolean => out.length > maxChars;
  const stack: Frame[] = [];
  const open = (v: unknown): void => {
    if (Array.isArray(v)) {
      out += syntax.openArray;
      stack.push({ array: v, at: 0 });
    } else if (isPlainObject(v)) {
      out += syntax.openObject;
      const keys = Object.keys(v);
      stack.push({ object: v, keys: syntax.sortKeys ? keys.sort() : keys, at: 0, wrote: false });
    } else {
      out += v === null || v === undefined ? syntax.nil : scalarJson(v, maxChars - out.length + 1);
    }
  };
  open(value);
  while (stack.length > 0 && !full()) {
    const top = stack[stack.length - 1] as Frame;
    if ("array" in top) {
      if (top.at >= top.array.length) {
        out += syntax.closeArray;
        stack.pop();
        continue;
      }
      if (top.at > 0) out += syntax.separator;
      open(top.array[top.at++]);
      continue;
    }
    if (top.at >= top.keys.length) {
      out += syntax.closeObject;
      stack.pop();
      continue;
    }
    const key = top.keys[top.at++] as string;
    const member = top.object[key];
    // JSON.stringify leaves out members whose value has no JSON (undefined, functions, symbols).
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    if (top.wrote) out += syntax.separator;
    top.wrote = true;
    out += `${JSON.stringify(key.length > maxChars ? key.slice(0, maxChars) : key)}:`;
    open(member);
  }
  return out.length > maxChars || stack.length > 0 ? `${out.slice(0, maxChars)}${CUT}` : out;
}

/**
 * JSON text of `value` — what `JSON.stringify` writes for parsed JSON — cut to at most `maxChars` characters
 * plus `…` when longer, at any depth (see `valueText`).
 */
export const boundedJson = (value: unknown, maxChars: number): string =>
  valueText(value, maxChars, JSON_SYNTAX);

/**
 * One text for every parsed JSON value equal to `value` whatever its objects' key order (keys sorted), at any
 * depth: for hashing, and a key for a Map or Set where `jsonEqual` would compare pairs.
 */
export const canonicalJson = (value: unknown): string =>
  valueText(value, Number.POSITIVE_INFINITY, CANONICAL_SYNTAX);

/** `JSON.stringify(value)` for any parsed JSON value, however deep: the native writer, or the stack-free one
 * when the native one runs out of stack. */
export const jsonText = (value: unknown): string => {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return boundedJson(value, Number.POSITIVE_INFINITY);
  }
};

/**
 * A deep copy of a parsed JSON value, however deep: `structuredClone`, or — when that runs out of stack —
 * a copy made with an explicit stack (key order and every own key, `__proto__` included, kept).
 */
export const cloneJson = <T>(value: T): T => {
  try {
    return structuredClone(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return copyDeep(value) as T;
  }
};

const copyDeep = (value: unknown): unknown => {
  const shell = (v: unknown): unknown =>
    Array.isArray(v) ? new Array(v.length) : typeof v === "object" && v !== null ? {} : v;
  const root = shell(value);
  if (root === value) return value;
  const pending: [Record<string, unknown>, Record<string, unknown>][] = [
    [value as Record<string, unknown>, root as Record<string, unknown>],
  ];
  while (pending.length > 0) {
    const [from, to] = pending.pop() as [Record<string, unknown>, Record<string, unknown>];
    for (const key of Object.keys(from)) {
      const child = shell(from[key]);
      Object.defineProperty(to, key, { value: child, writable: true, enumerable: true, configurable: true });
      if (child !== from[key])
        pending.push([from[key] as Record<string, unknown>, child as Record<string, unknown>]);
    }
  }
  return root;
};
