/**
 * A census of a large admission review, read from its text before anything is built (decision 89, SPEC
 * §2.1). Building a node-dense 7 MiB review — a million tiny objects — costs the collector about a second
 * whatever parses it (`JSON.parse` included), so no decision that builds it is decided in 100 ms. One pass
 * over the text instead checks the whole body is JSON (the same grammar and depth bound as json-body.ts),
 * counts the JSON values of `request.object`, of `request.oldObject` and of the rest, and records where the
 * two objects lie. A review whose objects hold more values than a decision may build is then decided without
 * them (`buildableText`): the engine refuses it (`object-too-complex`), unless the request is exempt anyway.
 * No large review's `metadata.managedFields` is built at all: no decision reads them, and they hold two thirds
 * of the deepest object kube stores.
 *
 * Counting follows `JSON.parse`: of duplicate keys the last wins, so a later `request` or `object` member
 * starts its count afresh. Pure: no I/O, no clock, no value built; keys are compared as bytes, never decoded.
 */

import type { Oversize } from "../policies/types.js";
import { MAX_REVIEW_DEPTH, TOO_DEEP } from "./json-body.js";

/**
 * The most JSON values one object of a review may hold, its `metadata.managedFields` aside, and still be
 * decided by the rules. A Machine or MachineSet holds a few hundred; the deepest object kube-apiserver stores
 * and reads back (a providerSpec nested 9,996 levels) about 10,050 — and three times that with its
 * managedFields, which mirror that path. At this bound the slowest shape's parse and decision take a few tens
 * of milliseconds here (RELIABILITY.md §1a); a body shorter than 2 × this many bytes cannot pass it.
 */
export const MAX_OBJECT_VALUES = 16_384;
/**
 * The most JSON values the rest of a review may hold: kube's `request` besides the two objects is a few
 * dozen values (a user's groups and extra among them). More is not a review kube-apiserver sends: 400.
 */
export const MAX_OTHER_VALUES = MAX_OBJECT_VALUES;

/** Where a value lies in the text: `text.subarray(start, end)`; `opener` its first character. */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly opener: string;
}

export interface ReviewCensus {
  /**
   * JSON values (containers and scalars; keys are not values) in `request.object`, the value included, but
   * not those of its `metadata.managedFields`.
   */
  readonly objectValues: number;
  readonly oldObjectValues: number;
  /** The values of both objects' `metadata.managedFields`. */
  readonly managedFieldsValues: number;
  /** Every other value of the body. */
  readonly otherValues: number;
  readonly object?: Span;
  readonly oldObject?: Span;
  /** Where each object's `metadata.managedFields` lies. */
  readonly managedFields?: readonly Span[];
}

export type CensusResult = { ok: true; census: ReviewCensus } | { ok: false; error: string };

const INVALID = "request body is not valid JSON: ";

const DECODER = new TextDecoder();
const ENCODER = new TextEncoder();
/** The member names the census follows, as the bytes between their quotes. */
const REQUEST = ENCODER.encode("request");
const OBJECT_KEY = ENCODER.encode("object");
const OLD_OBJECT_KEY = ENCODER.encode("oldObject");
const METADATA = ENCODER.encode("metadata");
const MANAGED_FIELDS = ENCODER.encode("managedFields");
const TRUE = ENCODER.encode("true");
const FALSE = ENCODER.encode("false");
const NULL = ENCODER.encode("null");
/** 1 at the bytes that may follow a backslash on their own: `" \ / b f n r t`. */
const SIMPLE_ESCAPES = new Uint8Array(128);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPES[c.charCodeAt(0)] = 1;
/** The value of a hex digit the census has already checked. */
const hexValue = (c: number): number => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);
/** What a simple escape (`\n` …) stands for. */
const UNESCAPED = new Uint8Array(128);
for (const [e, u] of [
  ['"', '"'],
  ["\\", "\\"],
  ["/", "/"],
  ["b", "\b"],
  ["f", "\f"],
  ["n", "\n"],
  ["r", "\r"],
  ["t", "\t"],
]) {
  UNESCAPED[(e as string).charCodeAt(0)] = (u as string).charCodeAt(0);
}

/**
 * Whether the string literal `text[start, end)` (its quotes included, its escapes already checked) names
 * `name`, an ASCII key: decoded as it is compared, without building the key. Only a few members are
 * followed, and a body may hold a million keys: decoding each into a string cost 3–5× the rest of the pass.
 */
export function literalIs(
  text: Uint8Array,
  start: number,
  end: number,
  escaped: boolean,
  name: Uint8Array,
): boolean {
  const last = end - 1;
  if (!escaped) {
    if (last - start - 1 !== name.length) return false;
    for (let k = 0; k < name.length; k++) if (text[start + 1 + k] !== name[k]) return false;
    return true;
  }
  let k = 0;
  for (let i = start + 1; i < last; k++) {
    if (k >= name.length) return false;
    let c = text[i] as number;
    if (c === 0x5c) {
      const e = text[i + 1] as number;
      if (e === 0x75) {
        c =
          (hexValue(text[i + 2] as number) << 12) |
          (hexValue(text[i + 3] as number) << 8) |
          (hexValue(text[i + 4] as number) << 4) |
          hexValue(text[i + 5] as number);
        i += 6;
      } else {
        c = UNESCAPED[e] as number;
        i += 2;
      }
    } else i++;
    if (c !== name[k]) return false;
  }
  return k === name.length;
}

/** A byte as an error names it: printable ASCII quoted, anything else in hex. */
const shown = (c: number): string =>
  c >= 0x20 && c < 0x7f
    ? JSON.stringify(String.fromCharCode(c))
    : `byte 0x${c.toString(16).padStart(2, "0")}`;
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;
const isNonZeroDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x31 && c <= 0x39;
const isHexDigit = (c: number | undefined): boolean =>
  c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));

/** What comes next, as in json-body.ts's stepped parser. */
const VALUE = 0;
const VALUE_OR_CLOSE = 1;
const KEY_OR_CLOSE = 2;
const KEY = 3;
const NEXT = 4;

/**
 * Where a value is counted: the rest of the review, `request.object`, `request.oldObject`, or the
 * `metadata.managedFields` of either object (`side + 2`), which no decision reads and none builds.
 */
const OTHER = 0;
const OBJECT = 1;
const OLD_OBJECT = 2;
const MANAGED = 2;

class CensusError extends Error {}
/** Thrown on opening the level past MAX_REVIEW_DEPTH. */
const TOO_DEEP_SIGNAL = new CensusError("too deep");

/**
 * Counts `text`'s values by where they lie; refuses what `JSON.parse` or the depth bound would refuse. One
 * loop over local variables, without a call per character: it reads 7 MiB of the densest JSON in tens of
 * milliseconds (RELIABILITY.md §1a), where a scanner of small closures took over a hundred.
 *
 * Depth counts open containers: the root is the first, `request` the second, an object the third, its
 * `metadata` the fourth. The loop keeps whether the member at each of those is the one it follows
 * (`key1`…`key4`), and reads no other key but to check it.
 */
export function reviewCensus(text: Uint8Array): CensusResult {
  const steps = censusInSteps(text);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Bytes read between two steps of `censusInSteps`: a few milliseconds of the densest JSON here. */
export const CENSUS_STEP_BYTES = 1 << 20;

/**
 * `reviewCensus` a step at a time: it yields after every CENSUS_STEP_BYTES or so, so that the server can let
 * other requests run between steps, and returns the census.
 */
export function* censusInSteps(text: Uint8Array): Generator<void, CensusResult, void> {
  const length = text.length;
  let pos = 0;
  let expect = VALUE;
  /** 1 for an open object, 0 for an open array, outermost first; `depth` of them are open. */
  const isObject = new Uint8Array(MAX_REVIEW_DEPTH + 1);
  let depth = 0;
  /** Whether the root is an object, and whether the container open second is its `request`. */
  let rootIsObject = false;
  let inRequest = false;
  /**
   * Whether the member being read at each followed depth is one the census follows: `request` (1), `object`
   * or `oldObject` in the request (2: OBJECT or OLD_OBJECT, else OTHER), `metadata` in either (3),
   * `managedFields` in its metadata (4).
   */
  let key1 = false;
  let key2 = OTHER;
  let key3 = false;
  let key4 = false;
  /** Values counted by where they lie (see OTHER…MANAGED); the one being counted now. */
  const counts = [0, 0, 0, 0, 0];
  let bucket = OTHER;
  const spans: (Span | undefined)[] = [undefined, undefined, undefined, undefined, undefined];
  /** The object being read (OTHER outside both), and where its value starts. */
  let side = OTHER;
  let sideStart = 0;
  /** Whether its `metadata.managedFields` is being read, and where that starts. */
  let managed = false;
  let managedStart = 0;

  const failure = (what: string): CensusError =>
    new CensusError(
      pos >= length
        ? `Unexpected end of JSON input (${what})`
        : `Unexpected ${shown(text[pos] as number)} at byte ${pos} (${what})`,
    );

  /** Moves `pos` past the string literal at it; returns whether the literal held an escape. */
  const skipString = (): boolean => {
    let escaped = false;
    for (let i = pos + 1; i < length; i++) {
      const c = text[i] as number;
      if (c === 0x22) {
        pos = i + 1;
        return escaped;
      }
      if (c === 0x5c) {
        pos = i;
        const e = text[i + 1];
        if (e === 0x75) {
          for (let h = i + 2; h < i + 6; h++) if (!isHexDigit(text[h])) throw failure("bad escape in string");
          i += 5;
        } else if (e !== undefined && SIMPLE_ESCAPES[e] === 1) i++;
        else throw failure("bad escape in string");
        escaped = true;
      } else if (c < 0x20) {
        pos = i;
        throw failure("bad control character in string");
      }
    }
    pos = length;
    throw failure("unterminated string");
  };

  /** Moves `pos` past the number at it (JSON's grammar: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`). */
  const skipNumber = (): void => {
    let i = pos;
    if (text[i] === 0x2d) i++;
    if (text[i] === 0x30) i++;
    else if (isNonZeroDigit(text[i])) while (isDigit(text[++i]));
    else throw failure("expected a value");
    if (text[i] === 0x2e) {
      if (!isDigit(text[++i])) throw failure("expected a digit");
      while (isDigit(text[++i]));
    }
    if (text[i] === 0x65 || text[i] === 0x45) {
      i++;
      if (text[i] === 0x2b || text[i] === 0x2d) i++;
      if (!isDigit(text[i])) throw failure("expected a digit");
      while (isDigit(text[++i]));
    }
    pos = i;
  };

  const skipWord = (word: Uint8Array): void => {
    for (let k = 0; k < word.length; k++) if (text[pos + k] !== word[k]) throw failure("expected a value");
    pos += word.length;
  };

  /** A value ended at `pos`, leaving `depth` open: the object or managedFields it was ends with it. */
  const ended = (): void => {
    if (depth === 4 && managed) {
      spans[side + MANAGED] = { start: managedStart, end: pos, opener: opener(managedStart) };
      managed = false;
      bucket = side;
    } else if (depth === 2 && side !== OTHER) {
      spans[side] = { start: sideStart, end: pos, opener: opener(sideStart) };
      side = OTHER;
      bucket = OTHER;
    }
  };
  const opener = (at: number): string => String.fromCharCode(text[at] as number);

  /**
   * A value starts at `pos`. Of duplicate keys the last wins, as in JSON.parse: a later `request` (or
   * `object`, `oldObject`, `managedFields`) is counted afresh, and what the earlier one held counts as the
   * rest's — kube sends no duplicate keys, and the rest's bound keeps a discarded value from being built.
   */
  const started = (): void => {
    if (depth === 1) {
      if (rootIsObject && key1) {
        for (const b of [OBJECT, OLD_OBJECT, OBJECT + MANAGED, OLD_OBJECT + MANAGED]) {
          counts[OTHER]! += counts[b]!;
          counts[b] = 0;
          spans[b] = undefined;
        }
      }
    } else if (depth === 2) {
      if (inRequest && key2 !== OTHER) {
        side = key2;
        for (const b of [side, side + MANAGED]) {
          counts[OTHER]! += counts[b]!;
          counts[b] = 0;
          spans[b] = undefined;
        }
        sideStart = pos;
        bucket = side;
      }
    } else if (depth === 4 && side !== OTHER && key4 && key3 && isObject[2] === 1 && isObject[3] === 1) {
      counts[OTHER]! += counts[side + MANAGED]!;
      counts[side + MANAGED] = 0;
      managed = true;
      managedStart = pos;
      bucket = side + MANAGED;
    }
  };

  let nextStep = CENSUS_STEP_BYTES;
  try {
    for (;;) {
      if (pos >= nextStep) {
        yield;
        nextStep = pos + CENSUS_STEP_BYTES;
      }
      let c = text[pos];
      while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text[++pos];

      if (expect === NEXT) {
        if (depth === 0) {
          if (pos < length) throw failure("expected the end of the body");
          break;
        }
        const inObject = isObject[depth - 1] === 1;
        if (c === 0x2c) {
          pos++;
          expect = inObject ? KEY : VALUE;
          if (!inObject && depth > 4) {
            // A list's run of empty containers and numbers, deep in an object, in one turn of the loop.
            for (;;) {
              if (pos >= nextStep) break; // a step ends here, at a value
              c = text[pos];
              const empty = (c === 0x7b && text[pos + 1] === 0x7d) || (c === 0x5b && text[pos + 1] === 0x5d);
              if (empty) pos += 2;
              else if (c === 0x2d || isDigit(c)) skipNumber();
              else break;
              counts[bucket]!++;
              if (text[pos] !== 0x2c) {
                expect = NEXT;
                break;
              }
              pos++;
            }
          }
          continue;
        }
        if (c !== (inObject ? 0x7d : 0x5d)) {
          throw failure(inObject ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        // Closes the innermost container: the value it is ends here. Deep in an object, where no count
        // changes hands, a run of closing brackets is read in one turn of the loop.
        depth--;
        pos++;
        while (depth > 5) {
          c = text[pos];
          while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text[++pos];
          if (c !== (isObject[depth - 1] === 1 ? 0x7d : 0x5d)) break;
          depth--;
          pos++;
        }
        if (depth === 1) inRequest = false;
        if (depth <= 4) ended();
        continue;
      }

      if (expect === KEY_OR_CLOSE || expect === KEY) {
        if (expect === KEY_OR_CLOSE && c === 0x7d) {
          expect = NEXT; // an empty object: closed on the next turn of the loop
          continue;
        }
        if (c !== 0x22) throw failure("expected a string key");
        const start = pos;
        const escaped = skipString();
        if (depth === 1) key1 = literalIs(text, start, pos, escaped, REQUEST);
        else if (depth === 2) {
          key2 = !inRequest
            ? OTHER
            : literalIs(text, start, pos, escaped, OBJECT_KEY)
              ? OBJECT
              : literalIs(text, start, pos, escaped, OLD_OBJECT_KEY)
                ? OLD_OBJECT
                : OTHER;
        } else if (depth === 3) key3 = side !== OTHER && literalIs(text, start, pos, escaped, METADATA);
        else if (depth === 4) key4 = key3 && literalIs(text, start, pos, escaped, MANAGED_FIELDS);
        c = text[pos];
        while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text[++pos];
        if (c !== 0x3a) throw failure("expected ':' after a key");
        pos++;
        expect = VALUE;
        continue;
      }

      if (expect === VALUE_OR_CLOSE && c === 0x5d) {
        expect = NEXT; // an empty list: closed on the next turn of the loop
        continue;
      }

      if (depth <= 4) started();
      counts[bucket]!++;

      if (c === 0x7b || c === 0x5b) {
        if (depth >= MAX_REVIEW_DEPTH) throw TOO_DEEP_SIGNAL;
        const object = c === 0x7b;
        if (depth === 0) rootIsObject = object;
        else if (depth === 1) inRequest = object && rootIsObject && key1;
        isObject[depth++] = object ? 1 : 0;
        pos++;
        expect = object ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
        if (depth > 5) {
          // Deep in an object nothing but the count is kept: runs of `[` and empty containers are read
          // here rather than a character per turn of the loop (a crafted body is made of little else).
          c = text[pos];
          while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text[++pos];
          while (!object && c === 0x5b) {
            if (depth >= MAX_REVIEW_DEPTH) throw TOO_DEEP_SIGNAL;
            counts[bucket]!++;
            isObject[depth++] = 0;
            c = text[++pos];
            while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text[++pos];
          }
          if (c === (object ? 0x7d : 0x5d)) {
            depth--;
            pos++;
            expect = NEXT;
          }
        }
        continue;
      }
      if (c === 0x22) skipString();
      else if (c === 0x74) skipWord(TRUE);
      else if (c === 0x66) skipWord(FALSE);
      else if (c === 0x6e) skipWord(NULL);
      else skipNumber();
      if (depth <= 4) ended();
      expect = NEXT;
    }
  } catch (err) {
    if (err === TOO_DEEP_SIGNAL) return { ok: false, error: TOO_DEEP };
    if (err instanceof CensusError) return { ok: false, error: `${INVALID}${err.message}` };
    throw err;
  }
  const census: Mutable<ReviewCensus> = {
    objectValues: counts[OBJECT]!,
    oldObjectValues: counts[OLD_OBJECT]!,
    managedFieldsValues: counts[OBJECT + MANAGED]! + counts[OLD_OBJECT + MANAGED]!,
    otherValues: counts[OTHER]!,
  };
  if (spans[OBJECT]) census.object = spans[OBJECT];
  if (spans[OLD_OBJECT]) census.oldObject = spans[OLD_OBJECT];
  const managedFields = [spans[OBJECT + MANAGED], spans[OLD_OBJECT + MANAGED]].filter((x) => x !== undefined);
  if (managedFields.length > 0) census.managedFields = managedFields;
  return { ok: true, census };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Each of `request.object`/`oldObject` holding more values than a decision may build (else undefined). */
export function oversizeOf(census: ReviewCensus): Oversize | undefined {
  const object = census.objectValues > MAX_OBJECT_VALUES;
  const oldObject = census.oldObjectValues > MAX_OBJECT_VALUES;
  if (!object && !oldObject) return undefined;
  return {
    ...(object ? { objectValues: census.objectValues } : {}),
    ...(oldObject ? { oldObjectValues: census.oldObjectValues } : {}),
    limit: MAX_OBJECT_VALUES,
  };
}

/**
 * The review's text as the webhook builds it: each oversize object emptied — `{}` for an object, `[]` for a
 * list, so the codec still refuses a list where an object belongs — and the other object's
 * `metadata.managedFields` too (no decision reads them); the rest as it was.
 */
export function buildableText(text: Uint8Array, census: ReviewCensus, oversize?: Oversize): string {
  const objects = [
    oversize?.objectValues !== undefined ? census.object : undefined,
    oversize?.oldObjectValues !== undefined ? census.oldObject : undefined,
  ].filter((span) => span !== undefined);
  const inCut = (span: Span): boolean => objects.some((o) => o.start <= span.start && span.end <= o.end);
  const container = (span: Span): boolean => span.opener === "{" || span.opener === "[";
  const cut = [...objects, ...(census.managedFields ?? []).filter((m) => container(m) && !inCut(m))];
  cut.sort((a, b) => a.start - b.start);
  let out = "";
  let from = 0;
  for (const span of cut) {
    out += DECODER.decode(text.subarray(from, span.start)) + (span.opener === "[" ? "[]" : "{}");
    from = span.end;
  }
  return out + DECODER.decode(text.subarray(from));
}
