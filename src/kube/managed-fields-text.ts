/**
 * `metadata.managedFields` cut out of an API server's JSON text before it is parsed, for the informer
 * cache, which keeps no managedFields (SPEC §7: the cache may drop them; store.ts drops what is left), the
 * controllers' client, and the webhook's reviews.
 * They are half the bytes of a machine object and ~80 % of the cost of parsing it: thousands of small
 * objects under keys (`f:…`, `k:{"uid":…}`) that V8 turns into new hidden-class transitions and interned
 * strings. Locating them costs a scan of the text up to their end, a fifth of what parsing them did
 * (PERFORMANCE.md, "Issue 25: managedFields cut before parsing").
 *
 * Only the managedFields of the objects the text carries are cut: the root object (a GET's answer), the
 * `object` of a watch event, each of a list's `items`, or the `object` and `oldObject` of an admission
 * review's `request` (no decision reads them either) — never a field of the same name elsewhere (a custom
 * resource's spec may have one). What is cut is a `"managedFields":[…]` member with one of its
 * commas; the text around it is left as it was, so `JSON.parse` still judges it, and what is cut is
 * checked here as `JSON.parse` would check it (decision 179), so the cut text is JSON exactly when the text
 * is. A key spelled with escapes, a value that is not an array, or a text this scan cannot follow (an
 * unterminated string, brackets that do not match, managedFields that are not JSON) is left in place: the
 * parse then sees what it would have seen, and store.ts drops any managedFields that reach the cache.
 */

/**
 * Where the objects sit in the text: the root, the root's `object` (a watch event), the root's `items` (a
 * list), or an AdmissionReview's `request.object` and `request.oldObject`.
 */
export type ObjectsAt = "root" | "event" | "list" | "review";

/** How many objects a text of each shape carries, at most (a list: any number). */
const CARRIED: Readonly<Record<ObjectsAt, number>> = { root: 1, event: 1, list: Infinity, review: 2 };

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;

/** What an open container is, as far as the cut cares. */
const Role = {
  /** A watch event or a list: its `object` / `items` hold the objects. */
  Envelope: 0,
  /** A list's `items`. */
  Items: 1,
  /** An AdmissionReview's `request`. */
  Request: 2,
  /** An object the text carries. */
  Carried: 3,
  /** A carried object's `metadata`: its `managedFields` member is cut. */
  Metadata: 4,
} as const;
type Role = (typeof Role)[keyof typeof Role];

const MANAGED_FIELDS = "managedFields";

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

/** The index of the quote that closes the string opened at `open`, or -1 if it never closes. */
function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let before = quote - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    // An even run of backslashes escapes itself, not the quote.
    if ((quote - 1 - before) % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * The index of the bracket that closes the container opened at `open`, or -1 if the text ends first or a
 * bracket closes the wrong kind of container. Strings are skipped whole.
 */
function containerEnd(text: string, open: number): number {
  const kinds: number[] = [text.charCodeAt(open)];
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i < 0) return -1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) kinds.push(c);
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (kinds.pop() !== (c === CLOSE_OBJECT ? OPEN_OBJECT : OPEN_ARRAY)) return -1;
      if (kinds.length === 0) return i;
    }
  }
  return -1;
}

/** A JSON string, as `JSON.parse` reads one: no control character, no escape it does not know. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters JSON refuses in a string
const STRING = /"[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"/y;
/** A JSON number: no leading zero, no bare point, no sign but a leading minus. */
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERALS = ["true", "false", "null"] as const;

/** The index just past the string, number or literal at `at`, or -1 if none starts there. */
function scalarEnd(text: string, at: number): number {
  const c = text.charCodeAt(at);
  const pattern = c === QUOTE ? STRING : c === 45 || (c >= 48 && c <= 57) ? NUMBER : undefined;
  if (pattern) {
    pattern.lastIndex = at;
    return pattern.test(text) ? pattern.lastIndex : -1;
  }
  const literal = LITERALS.find((word) => word.charCodeAt(0) === c);
  return literal && text.startsWith(literal, at) ? at + literal.length : -1;
}

/** The index of an object member's value, given where its key should start; -1 if no `"key":` is there. */
function memberValueAt(text: string, keyAt: number): number {
  if (text.charCodeAt(keyAt) !== QUOTE) return -1;
  const keyEnd = scalarEnd(text, keyAt);
  if (keyEnd < 0) return -1;
  const colon = skipSpace(text, keyEnd);
  return text.charCodeAt(colon) === COLON ? skipSpace(text, colon + 1) : -1;
}

/**
 * The index just past the JSON value that starts at `at`, or -1 if the text there is not one as
 * `JSON.parse` reads it (its grammar, strings and numbers). Iterative: a deep value costs no stack.
 */
function jsonValueEnd(text: string, at: number): number {
  /** The closing bracket of each open container, innermost last. */
  const closes: number[] = [];
  let i = at;
  for (;;) {
    // A value starts at i.
    const c = text.charCodeAt(i);
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const close = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      i = skipSpace(text, i + 1);
      if (text.charCodeAt(i) !== close) {
        closes.push(close);
        if (close === CLOSE_OBJECT) i = memberValueAt(text, i);
        if (i < 0) return -1;
        continue;
      }
      i++;
    } else {
      i = scalarEnd(text, i);
      if (i < 0) return -1;
    }
    // A value ended at i: its containers close, or a comma brings the next value.
    for (;;) {
      if (closes.length === 0) return i;
      i = skipSpace(text, i);
      const close = closes[closes.length - 1];
      if (text.charCodeAt(i) === close) {
        closes.pop();
        i++;
        continue;
      }
      if (text.charCodeAt(i) !== COMMA) return -1;
      i = skipSpace(text, i + 1);
      if (close === CLOSE_OBJECT) i = memberValueAt(text, i);
      if (i < 0) return -1;
      break;
    }
  }
}

const skipSpace = (text: string, from: number): number => {
  let i = from;
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
};

const skipSpaceBack = (text: string, from: number): number => {
  let i = from;
  while (i >= 0 && isSpace(text.charCodeAt(i))) i--;
  return i;
};

/** The role of a container opened under `parent` (undefined: the root) as the value of `key`. */
function roleOf(
  parent: Role | undefined,
  key: string | undefined,
  isObject: boolean,
  at: ObjectsAt,
): Role | undefined {
  if (parent === undefined) {
    if (!isObject) return undefined;
    return at === "root" ? Role.Carried : Role.Envelope;
  }
  switch (parent) {
    case Role.Envelope:
      if (at === "event" && key === "object" && isObject) return Role.Carried;
      if (at === "list" && key === "items" && !isObject) return Role.Items;
      if (at === "review" && key === "request" && isObject) return Role.Request;
      return undefined;
    case Role.Items:
      return isObject ? Role.Carried : undefined;
    case Role.Request:
      return (key === "object" || key === "oldObject") && isObject ? Role.Carried : undefined;
    case Role.Carried:
      return key === "metadata" && isObject ? Role.Metadata : undefined;
    default:
      return undefined;
  }
}

/**
 * `text` without the `metadata.managedFields` of the objects it carries (where they sit: `at`); `text`
 * itself when it has none to cut or cannot be followed. Pure; linear in the text up to the (last) cut.
 */
export function cutManagedFields(text: string, at: ObjectsAt): string {
  if (!text.includes(`"${MANAGED_FIELDS}"`)) return text;
  const roles: Role[] = [];
  /** Cuts as [start, end) pairs, in order. */
  const cuts: number[] = [];
  let key: string | undefined;
  let i = skipSpace(text, 0);
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return text;
      const afterString = skipSpace(text, end + 1);
      if (text.charCodeAt(afterString) !== COLON) {
        i = afterString;
        continue;
      }
      const role = roles[roles.length - 1];
      const valueAt = skipSpace(text, afterString + 1);
      if (
        role === Role.Metadata &&
        end - i - 1 === MANAGED_FIELDS.length &&
        text.startsWith(MANAGED_FIELDS, i + 1) &&
        text.charCodeAt(valueAt) === OPEN_ARRAY
      ) {
        // What is cut is never parsed, so it is checked here: a text whose managedFields are not JSON is
        // left whole, for the parse to refuse.
        const valueEnd = jsonValueEnd(text, valueAt);
        if (valueEnd < 0) return text;
        addCut(text, cuts, i, valueEnd);
        // Every object the shape carries is cut: the rest of the text is left to the parse as it is.
        if (cuts.length / 2 === CARRIED[at]) break;
        i = valueEnd;
        continue;
      }
      key =
        role === Role.Envelope || role === Role.Request || role === Role.Carried
          ? text.slice(i + 1, end)
          : undefined;
      i = valueAt;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const role = roleOf(roles[roles.length - 1], key, c === OPEN_OBJECT, at);
      key = undefined;
      if (role === undefined) {
        // Nothing under it is cut: skip it whole (which also keeps deep nesting off any stack).
        const close = containerEnd(text, i);
        if (close < 0) return text;
        i = close + 1;
        continue;
      }
      roles.push(role);
      i++;
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      roles.pop();
      key = undefined;
      if (roles.length === 0) break;
    }
    i++;
  }
  if (cuts.length === 0) return text;
  let out = text.slice(0, cuts[0]);
  for (let k = 0; k < cuts.length; k += 2) out += text.slice(cuts[k + 1], cuts[k + 2] ?? text.length);
  return out;
}

/**
 * Records the member at [start, end) as a cut, with the comma before it or, for a first member, the one after
 * it — never a comma an earlier cut took.
 */
function addCut(text: string, cuts: number[], start: number, end: number): void {
  const previousEnd = cuts.length > 0 ? cuts[cuts.length - 1]! : 0;
  const before = skipSpaceBack(text, start - 1);
  if (text.charCodeAt(before) === COMMA && before >= previousEnd) {
    cuts.push(before, end);
    return;
  }
  const after = skipSpace(text, end);
  cuts.push(start, text.charCodeAt(after) === COMMA ? after + 1 : end);
}

/** `JSON.parse` of `text` without the managedFields of the objects it carries. */
export const parseWithoutManagedFields =
  (at: ObjectsAt) =>
  (text: string): unknown =>
    JSON.parse(cutManagedFields(text, at));
