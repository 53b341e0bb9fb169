/**
 * Parsing of admission request bodies (SPEC §2.1). Keys named `__proto__`, `constructor` or `prototype` are
 * data — a free-form field of a Machine (providerSpec, a status field) may hold one — so a body holding them
 * is parsed like any other: a 400 would hand kube's decision to the webhook's failure policy, which whoever
 * writes the object could then choose. `JSON.parse` makes every key an own data property (never a
 * prototype); the policies read and copy fields as own properties (src/policies/diff.ts, draft.ts,
 * `getPath`), and test/server/prototype-keys.test.ts plants such keys in every position of real reviews.
 * Fastify's default parser refuses those keys, so the server installs this one instead.
 *
 * Large bodies (decision 59): `JSON.parse` of a node-dense 7 MiB body holds the event loop for up to a
 * second, and every other request waits. `steppedJsonParser` parses the same grammar to the same value in
 * steps of a bounded number of characters, with an explicit stack (no recursion, any depth), so the shell
 * (app.ts) can yield to the event loop between steps. Pure functions and a pure stepper: no I/O, no clock.
 *
 * Depth (issue 20): kube-apiserver stores no object nested deeper than 10,000 levels (its JSON decoder's
 * limit, managedFields included), so no review it sends nests deeper than MAX_REVIEW_DEPTH — the object
 * plus the review and its `request`. A deeper body comes from someone else: both parsers refuse it, the
 * stepped one as soon as it opens the level past the bound (a 1.5 M-deep body costs 10,000 levels of work).
 */

import { KUBE_MAX_DEPTH, openingPast } from "../json-depth.js";
import { recordingOf, startRecording, WIDE_KEYS } from "../json-keys.js";

export type JsonBodyResult = { ok: true; value: unknown } | { ok: false; error: string };

const EMPTY = "request body is empty; expected an admission.k8s.io/v1 AdmissionReview";
const INVALID = "request body is not valid JSON: ";

/** The deepest review kube-apiserver sends: an object at its limit inside `{"request":{"object":…}}`. */
export const MAX_REVIEW_DEPTH = KUBE_MAX_DEPTH + 2;
const TOO_DEEP = `request body nests deeper than ${MAX_REVIEW_DEPTH} levels; kube-apiserver sends no review that deep (it stores no object nested deeper than ${KUBE_MAX_DEPTH} levels)`;

export function parseJsonBody(text: string): JsonBodyResult {
  if (text.length === 0) return { ok: false, error: EMPTY };
  if (openingPast(text, MAX_REVIEW_DEPTH) >= 0) return { ok: false, error: TOO_DEEP };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: `${INVALID}${(err as Error).message}` };
  }
}

/** Parses `text` a step at a time: `step(n)` consumes about `n` characters and returns the result once done. */
export interface SteppedJsonParser {
  step(maxChars: number): JsonBodyResult | undefined;
}

/** What the parser expects next: a value (the root, an element after a comma, a member's value); a value or
 * `]` (just after `[`); a key or `}` (just after `{`); a key (after a comma in an object); `,` or the
 * container's closing bracket — at the root, the end of the text. */
const VALUE = 0;
const VALUE_OR_CLOSE = 1;
const KEY_OR_CLOSE = 2;
const KEY = 3;
const NEXT = 4;
type Expect = typeof VALUE | typeof VALUE_OR_CLOSE | typeof KEY_OR_CLOSE | typeof KEY | typeof NEXT;

type Container = unknown[] | Record<string, unknown>;

/** `Object.prototype`'s own names: a key among them is defined, never assigned (no setter, no frozen throw). */
const PROTOTYPE_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** The characters that end a plain run inside a string: the quote, an escape, or a forbidden control. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids raw control characters in strings.
const STRING_SPECIAL = /["\\\u0000-\u001f]/g;

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

class ParseError extends Error {}
/** The body is JSON so far, but deeper than any review kube-apiserver sends. */
class TooDeepError extends Error {}

/**
 * A JSON parser that yields the same value `JSON.parse` does — every key an own data property, the last of
 * duplicate keys winning in the first one's place, numbers by `Number` of the same text, strings decoded by
 * `JSON.parse` of the literal — but runs in bounded steps. A token (a string or number) is never split.
 */
export function steppedJsonParser(text: string): SteppedJsonParser {
  let pos = 0;
  let expect: Expect = VALUE;
  /** Open containers, innermost last; `keys[i]` is the key of `stack[i]`'s pending member. */
  const stack: Container[] = [];
  const keys: (string | undefined)[] = [];
  /** How many distinct keys each open object has so far (unused for arrays). */
  const widths: number[] = [];
  let root: unknown;
  let result: JsonBodyResult | undefined;
  if (text.length === 0) result = { ok: false, error: EMPTY };

  const failure = (what: string): ParseError =>
    new ParseError(
      pos >= text.length
        ? `Unexpected end of JSON input (${what})`
        : `Unexpected ${JSON.stringify(text[pos])} at position ${pos} (${what})`,
    );

  const skipSpace = (): void => {
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return;
      pos++;
    }
  };

  /** Reads the string literal at `pos` (which is at its quote) and moves past it. */
  const readString = (): string => {
    const start = pos;
    // Up to the first quote, escape or control character by regexp (native speed): most strings end there.
    STRING_SPECIAL.lastIndex = start + 1;
    const found = STRING_SPECIAL.exec(text);
    if (found === null) {
      pos = text.length;
      throw failure("unterminated string");
    }
    let i = found.index;
    let c = text.charCodeAt(i);
    if (c === 0x22) {
      pos = i + 1;
      return text.slice(start + 1, i);
    }
    // Escapes: find the closing quote character by character, and let JSON.parse decode the literal.
    for (; i < text.length; i++) {
      c = text.charCodeAt(i);
      if (c === 0x5c) i++;
      else if (c === 0x22) break;
      else if (c < 0x20) {
        pos = i;
        throw failure("bad control character in string");
      }
    }
    if (i >= text.length) {
      pos = text.length;
      throw failure("unterminated string");
    }
    pos = i + 1;
    try {
      return JSON.parse(text.slice(start, pos)) as string;
    } catch {
      pos = start;
      throw failure("bad escape in string");
    }
  };

  const put = (value: unknown): void => {
    const depth = stack.length;
    if (depth === 0) {
      root = value;
      return;
    }
    const top = stack[depth - 1] as Container;
    if (Array.isArray(top)) {
      top.push(value);
      return;
    }
    const key = keys[depth - 1] as string;
    const added = !Object.hasOwn(top, key);
    if (PROTOTYPE_NAMES.has(key)) {
      Object.defineProperty(top, key, { value, writable: true, enumerable: true, configurable: true });
    } else {
      top[key] = value;
    }
    if (!added) return;
    // A wide object's keys are recorded as they come (src/json-keys.ts): listing them later would take one
    // long turn.
    const width = ++widths[depth - 1]!;
    if (width === WIDE_KEYS) startRecording(top);
    else if (width > WIDE_KEYS) recordingOf(top)?.push(key);
  };

  /** A container joins its parent when it closes (see `close`), not when it opens. */
  const open = (container: Container, next: Expect): void => {
    if (stack.length >= MAX_REVIEW_DEPTH) throw new TooDeepError();
    stack.push(container);
    keys.push(undefined);
    widths.push(0);
    pos++;
    expect = next;
  };

  /** Reads one value at `pos`; a container is opened, not read to its end. */
  const readValue = (): void => {
    const c = text.charCodeAt(pos);
    switch (c) {
      case 0x7b: // {
        open({}, KEY_OR_CLOSE);
        return;
      case 0x5b: // [
        open([], VALUE_OR_CLOSE);
        return;
      case 0x22: // "
        put(readString());
        expect = NEXT;
        return;
      case 0x74: // t
        literal("true", true);
        return;
      case 0x66: // f
        literal("false", false);
        return;
      case 0x6e: // n
        literal("null", null);
        return;
    }
    NUMBER.lastIndex = pos;
    const found = NUMBER.exec(text);
    if (found === null) throw failure("expected a value");
    pos += found[0].length;
    put(Number(found[0]));
    expect = NEXT;
  };

  const literal = (word: string, value: boolean | null): void => {
    if (!text.startsWith(word, pos)) throw failure("expected a value");
    pos += word.length;
    put(value);
    expect = NEXT;
  };

  const readKey = (): void => {
    if (text.charCodeAt(pos) !== 0x22) throw failure("expected a string key");
    keys[stack.length - 1] = readString();
    skipSpace();
    if (text.charCodeAt(pos) !== 0x3a) throw failure("expected ':' after a key");
    pos++;
    expect = VALUE;
  };

  /**
   * Closes the innermost container and puts it into its parent. An array built by `push` keeps the spare
   * capacity it grew (16 slots for one element); the parent gets an exact copy instead, as `JSON.parse` builds
   * them — a body of a million one-element lists held 3× the memory otherwise.
   */
  const close = (): void => {
    const done = stack.pop() as Container;
    keys.pop();
    widths.pop();
    put(Array.isArray(done) && done.length > 0 ? done.slice() : done);
    pos++;
    expect = NEXT;
  };

  const run = (maxChars: number): void => {
    const until = pos + maxChars;
    while (pos < until) {
      skipSpace();
      switch (expect) {
        case VALUE:
          readValue();
          break;
        case VALUE_OR_CLOSE:
          if (text.charCodeAt(pos) === 0x5d) close();
          else readValue();
          break;
        case KEY_OR_CLOSE:
          if (text.charCodeAt(pos) === 0x7d) close();
          else readKey();
          break;
        case KEY:
          readKey();
          break;
        case NEXT: {
          const depth = stack.length;
          if (depth === 0) {
            if (pos < text.length) throw failure("expected the end of the body");
            result = { ok: true, value: root };
            return;
          }
          const c = text.charCodeAt(pos);
          const isArray = Array.isArray(stack[depth - 1]);
          if (c === 0x2c) {
            pos++;
            expect = isArray ? VALUE : KEY;
          } else if (c === (isArray ? 0x5d : 0x7d)) {
            close();
          } else {
            throw failure(isArray ? "expected ',' or ']'" : "expected ',' or '}'");
          }
          break;
        }
      }
    }
  };

  return {
    step(maxChars: number): JsonBodyResult | undefined {
      if (result !== undefined) return result;
      try {
        run(Math.max(1, maxChars));
      } catch (err) {
        if (err instanceof TooDeepError) result = { ok: false, error: TOO_DEEP };
        else if (err instanceof ParseError) result = { ok: false, error: `${INVALID}${err.message}` };
        else throw err;
      }
      return result;
    },
  };
}
