/**
 * The mutating webhook's draft (STYLE: mutations are made on a copy and turned into a JSON Patch by diffing):
 * `cloneJson` copies the request's object for a rule to edit, and `jsonPatch` diffs the edited copy against
 * the original into RFC 6902 operations — the same operations, in the same order, as fast-json-patch's
 * `compare`. Both walk with an explicit stack: a kube object may be nested 10,000 levels deep (the API
 * server's JSON limit), where `JSON.stringify` and the recursive `compare` overflow the stack at about 5,000.
 * `__proto__`, `constructor` and `prototype` keys are copied as the data they are. Pure functions.
 */
import type { Operation } from "fast-json-patch";

type Json = Record<string, unknown> | unknown[];

const isContainer = (v: unknown): v is Json => typeof v === "object" && v !== null;

/** Sets `key` as an own data property: `target.__proto__ = v` would replace the prototype instead. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** The JSON copy `JSON.parse(JSON.stringify(value))` makes (undefined fields dropped, undefined items null). */
export function cloneJson<T>(value: T): T {
  if (!isContainer(value)) return value;
  const empty = (v: Json): Json => (Array.isArray(v) ? new Array<unknown>(v.length) : {});
  const root = empty(value);
  const stack: [Json, Json][] = [[value, root]];
  const copy = (v: unknown): unknown => {
    if (!isContainer(v)) return v;
    const target = empty(v);
    stack.push([v, target]);
    return target;
  };
  for (let pair = stack.pop(); pair !== undefined; pair = stack.pop()) {
    const [source, target] = pair;
    if (Array.isArray(source)) {
      const items = target as unknown[];
      for (let i = 0; i < source.length; i++) items[i] = source[i] === undefined ? null : copy(source[i]);
      continue;
    }
    const fields = target as Record<string, unknown>;
    for (const key of Object.keys(source)) {
      const v = source[key];
      if (v !== undefined) setOwn(fields, key, copy(v));
    }
  }
  return root as T;
}

const pointerSegment = (key: string): string =>
  key.indexOf("/") === -1 && key.indexOf("~") === -1 ? key : key.replace(/~/g, "~0").replace(/\//g, "~1");

const keysOf = (v: Json): string[] => (Array.isArray(v) ? v.map((_, i) => `${i}`) : Object.keys(v));

/** One level of the walk: the old keys are visited from the last, as fast-json-patch does. */
interface Level {
  readonly before: Json;
  readonly after: Json;
  readonly path: string;
  readonly oldKeys: string[];
  next: number;
  deleted: boolean;
}

/**
 * RFC 6902 operations that turn `before` into `after`: `jsonpatch.compare(before, after)` without recursion
 * (test/policies/draft.test.ts compares the two).
 */
export function jsonPatch(before: Json, after: Json): Operation[] {
  const patches: Operation[] = [];
  const stack: Level[] = [];
  const enter = (b: Json, a: Json, path: string): void => {
    if (b === a) return;
    const oldKeys = keysOf(b);
    stack.push({ before: b, after: a, path, oldKeys, next: oldKeys.length - 1, deleted: false });
  };
  enter(before, after, "");
  while (stack.length > 0) {
    const level = stack[stack.length - 1]!;
    const { before: b, after: a, path } = level;
    const mirror = b as Record<string, unknown>;
    const obj = a as Record<string, unknown>;
    if (level.next >= 0) {
      const key = level.oldKeys[level.next--]!;
      const oldVal = mirror[key];
      const at = `${path}/${pointerSegment(key)}`;
      if (
        Object.hasOwn(obj, key) &&
        !(obj[key] === undefined && oldVal !== undefined && !Array.isArray(obj))
      ) {
        const newVal = obj[key];
        if (isContainer(oldVal) && isContainer(newVal) && Array.isArray(oldVal) === Array.isArray(newVal))
          enter(oldVal, newVal, at);
        else if (oldVal !== newVal)
          patches.push({ op: "replace", path: at, value: newVal === undefined ? null : cloneJson(newVal) });
      } else if (Array.isArray(b) === Array.isArray(a)) {
        patches.push({ op: "remove", path: at });
        level.deleted = true;
      } else {
        patches.push({ op: "replace", path, value: a });
      }
      continue;
    }
    stack.pop();
    const newKeys = keysOf(a);
    if (!level.deleted && newKeys.length === level.oldKeys.length) continue;
    for (const key of newKeys)
      if (!Object.hasOwn(mirror, key) && obj[key] !== undefined)
        patches.push({ op: "add", path: `${path}/${pointerSegment(key)}`, value: cloneJson(obj[key]) });
  }
  return patches;
}
