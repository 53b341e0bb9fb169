/**
 * A census of a large admission review, read from its text before anything is built (decision 89, SPEC
 * §2.1). Building a node-dense 7 MiB review — a million tiny objects — costs the collector about a second
 * whatever parses it (`JSON.parse` included), so no decision that builds it is decided in 100 ms. One pass
 * over the text instead checks the whole body is JSON (the same grammar and depth bound as json-body.ts),
 * counts the JSON values of `request.object`, of `request.oldObject` and of the rest, and records where the
 * two objects lie. A review whose objects hold more values than a decision may build is then decided without
 * them (`withoutObjects`): the engine refuses it (`object-too-complex`), unless the request is exempt anyway.
 *
 * Counting follows `JSON.parse`: of duplicate keys the last wins, so a later `request` or `object` member
 * starts its count afresh. Pure: no I/O, no clock, no value built but a few short keys.
 */

import type { Oversize } from "../policies/types.js";
import { MAX_REVIEW_DEPTH, TOO_DEEP } from "./json-body.js";

/**
 * The most JSON values one object of a review may hold and still be decided by the rules. A Machine or
 * MachineSet holds a few hundred, managedFields included; the deepest object kube-apiserver stores and reads
 * back (a providerSpec nested 9,996 levels) about 30,100, two thirds of them its managedFields' mirror of
 * that path. At this bound the worst shape's parse and decision take tens of milliseconds here (RELIABILITY.md
 * §1a); a body shorter than 2 × this many bytes cannot pass it.
 */
export const MAX_OBJECT_VALUES = 32_768;
/**
 * The most JSON values the rest of a review may hold: kube's `request` besides the two objects is a few
 * dozen values (a user's groups and extra among them). More is not a review kube-apiserver sends: 400.
 */
export const MAX_OTHER_VALUES = MAX_OBJECT_VALUES;

/** Where a value lies in the text: `text.slice(start, end)`; `opener` its first character. */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly opener: string;
}

export interface ReviewCensus {
  /** JSON values (containers and scalars; keys are not values) in `request.object`, the value included. */
  readonly objectValues: number;
  readonly oldObjectValues: number;
  /** Every other value of the body. */
  readonly otherValues: number;
  readonly object?: Span;
  readonly oldObject?: Span;
}

export type CensusResult = { ok: true; census: ReviewCensus } | { ok: false; error: string };

const INVALID = "request body is not valid JSON: ";

const DECODER = new TextDecoder();
const TRUE = new TextEncoder().encode("true");
const FALSE = new TextEncoder().encode("false");
const NULL = new TextEncoder().encode("null");
/** 1 at the bytes that may follow a backslash on their own: `" \ / b f n r t`. */
const SIMPLE_ESCAPES = new Uint8Array(128);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPES[c.charCodeAt(0)] = 1;
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

/** Which value is being counted: the rest, `request.object` or `request.oldObject`. */
const OTHER = 0;
const OBJECT = 1;
const OLD_OBJECT = 2;

class CensusError extends Error {}
/** Thrown on opening the level past MAX_REVIEW_DEPTH. */
const TOO_DEEP_SIGNAL = new CensusError("too deep");

/**
 * Counts `text`'s values by where they lie; refuses what `JSON.parse` or the depth bound would refuse. One
 * loop over local variables, without a call per character: it reads 7 MiB of the densest JSON in tens of
 * milliseconds (`npm run bench`), where a scanner of small closures took over a hundred.
 */
export function reviewCensus(text: Uint8Array): CensusResult {
  const length = text.length;
  let pos = 0;
  let expect = VALUE;
  /** 1 for an open object, 0 for an open array, innermost last; `depth` of them are open. */
  const isObject = new Uint8Array(MAX_REVIEW_DEPTH + 1);
  let depth = 0;
  /** Whether the root is an object, and whether the container open at depth 2 is its `request`. */
  let rootIsObject = false;
  let inRequest = false;
  /** The key whose value comes next, read only at depths 1 and 2 (the way to `request.object`). */
  let key1 = "";
  let key2 = "";
  let other = 0;
  let objectValues = 0;
  let oldObjectValues = 0;
  let objectSpan: Span | undefined;
  let oldObjectSpan: Span | undefined;
  /** The side being counted (OTHER, OBJECT, OLD_OBJECT), where its value starts, and its depth there. */
  let side = OTHER;
  let sideStart = 0;
  let sideDepth = 0;

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

  try {
    for (;;) {
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
          if (!inObject && depth > 3) {
            // A list's run of empty containers and numbers, below `request.object`, in one turn of the loop.
            for (;;) {
              c = text[pos];
              const empty = (c === 0x7b && text[pos + 1] === 0x7d) || (c === 0x5b && text[pos + 1] === 0x5d);
              if (empty) pos += 2;
              else if (c === 0x2d || isDigit(c)) skipNumber();
              else break;
              if (side === OBJECT) objectValues++;
              else if (side === OLD_OBJECT) oldObjectValues++;
              else other++;
              if (text[pos] !== 0x2c) {
                expect = NEXT;
                break;
              }
              pos++;
            }
          }
          continue;
        }
        if (c !== (inObject ? 0x7d : 0x5d))
          throw failure(inObject ? "expected ',' or '}'" : "expected ',' or ']'");
        // Closes the innermost container: the value it is ends here. Below `request.object`, a run of
        // closing brackets is read in one turn of the loop.
        depth--;
        pos++;
        while (depth > 3 && text[pos] === (isObject[depth - 1] === 1 ? 0x7d : 0x5d)) {
          depth--;
          pos++;
        }
        if (depth === 1) inRequest = false;
        if (side !== OTHER && depth === sideDepth) {
          const span = { start: sideStart, end: pos, opener: text[sideStart] === 0x5b ? "[" : "{" };
          if (side === OBJECT) objectSpan = span;
          else oldObjectSpan = span;
          side = OTHER;
        }
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
        if (depth === 1 || depth === 2) {
          const literal = DECODER.decode(text.subarray(start, pos));
          const key = escaped ? (JSON.parse(literal) as string) : literal.slice(1, -1);
          if (depth === 1) key1 = key;
          else key2 = key;
        }
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

      // A value starts at `pos`. Of duplicate keys the last wins, as in JSON.parse: a later `request` (or
      // `object`, `oldObject`) is counted afresh, and what the earlier one held counts as the rest's — kube
      // sends no duplicate keys, and the rest's bound keeps a discarded object from being built unbounded.
      if (depth === 1 && rootIsObject && key1 === "request") {
        other += objectValues + oldObjectValues;
        objectValues = 0;
        oldObjectValues = 0;
        objectSpan = undefined;
        oldObjectSpan = undefined;
      } else if (depth === 2 && inRequest && side === OTHER) {
        if (key2 === "object") {
          other += objectValues;
          objectValues = 0;
          objectSpan = undefined;
          side = OBJECT;
        } else if (key2 === "oldObject") {
          other += oldObjectValues;
          oldObjectValues = 0;
          oldObjectSpan = undefined;
          side = OLD_OBJECT;
        }
        if (side !== OTHER) {
          sideStart = pos;
          sideDepth = depth;
        }
      }
      if (side === OBJECT) objectValues++;
      else if (side === OLD_OBJECT) oldObjectValues++;
      else other++;

      if (c === 0x7b || c === 0x5b) {
        if (depth >= MAX_REVIEW_DEPTH) throw TOO_DEEP_SIGNAL;
        const object = c === 0x7b;
        if (depth === 0) rootIsObject = object;
        else if (depth === 1) inRequest = object && rootIsObject && key1 === "request";
        isObject[depth++] = object ? 1 : 0;
        pos++;
        expect = object ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
        if (depth > 3) {
          // Below `request.object` nothing but the count is kept: runs of `[` and empty containers are read
          // here rather than a character per turn of the loop (a crafted body is made of little else).
          c = text[pos];
          while (!object && c === 0x5b) {
            if (depth >= MAX_REVIEW_DEPTH) throw TOO_DEEP_SIGNAL;
            if (side === OBJECT) objectValues++;
            else if (side === OLD_OBJECT) oldObjectValues++;
            else other++;
            isObject[depth++] = 0;
            c = text[++pos];
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
      // A scalar ends where it starts: a side that is one ends with it.
      if (side !== OTHER && depth === sideDepth) {
        const span = { start: sideStart, end: pos, opener: text[sideStart] === 0x5b ? "[" : "{" };
        if (side === OBJECT) objectSpan = span;
        else oldObjectSpan = span;
        side = OTHER;
      }
      expect = NEXT;
    }
  } catch (err) {
    if (err === TOO_DEEP_SIGNAL) return { ok: false, error: TOO_DEEP };
    if (err instanceof CensusError) return { ok: false, error: `${INVALID}${err.message}` };
    throw err;
  }
  return {
    ok: true,
    census: {
      objectValues,
      oldObjectValues,
      otherValues: other,
      ...(objectSpan ? { object: objectSpan } : {}),
      ...(oldObjectSpan ? { oldObject: oldObjectSpan } : {}),
    },
  };
}

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
 * The review's text with each oversize object emptied — `{}` for an object, `[]` for a list, so the codec
 * still refuses a list where an object belongs — and the rest as it was.
 */
export function withoutObjects(text: Uint8Array, census: ReviewCensus, oversize: Oversize): string {
  const cut: Span[] = [];
  if (oversize.objectValues !== undefined && census.object) cut.push(census.object);
  if (oversize.oldObjectValues !== undefined && census.oldObject) cut.push(census.oldObject);
  cut.sort((a, b) => a.start - b.start);
  let out = "";
  let from = 0;
  for (const span of cut) {
    out += DECODER.decode(text.subarray(from, span.start)) + (span.opener === "[" ? "[]" : "{}");
    from = span.end;
  }
  return out + DECODER.decode(text.subarray(from));
}
