/**
 * A small pure diff of two JSON values that names what changed as field paths, in one notation used by
 * every message: dots for plain field names (`spec.providerSpec.value.instanceType`), brackets with a JSON
 * string for label/annotation keys and any key with dots or slashes (`metadata.labels["machine.openshift.io/foo"]`),
 * `[i]` for array items. `null` and a missing key read the same, as they do for the API server's pruning.
 *
 * Every function here costs time linear in the size of its input, whatever the shape — thousands of levels
 * deep or of keys wide — and none recurses more than 64 levels, so depth cannot overflow the stack (SPEC
 * §2.1: a crafted review must not stall the webhook). The long walk is a generator, so a large review can be
 * decided in slices (./slices.ts, decision 74). Keys are read as own properties only: `__proto__`,
 * `constructor` and `prototype` are field names like any other.
 *
 * Over 500 lines on purpose: the path notation, the one walk and its stepped form must change together.
 */

import { isRecord } from "../kube/object.js";
import { appendAll } from "../lists.js";
import { runToEnd, STEP_NODES, slicing, stepped } from "./slices.js";

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;
/** Maps whose keys are data, not field names: always bracketed, so `metadata.labels["team"]` reads as a key. */
const KEYED_MAP = /(^|\.)(labels|annotations|matchLabels)$/;
const KEYED_MAP_NAMES: ReadonlySet<string> = new Set(["labels", "annotations", "matchLabels"]);

/**
 * `changedPaths` names this many changes exactly; each further change is named by the path of the object or
 * array that holds it (a prefix of its exact path), so the list keeps one entry per change — `listPaths`
 * still counts them — without building a string per change of a crafted review with a million.
 */
export const MAX_NAMED_PATHS = 100;
/**
 * A path longer than this is cut, ending with "…"; the changes below it share that name. A real path is a
 * few hundred characters at most (a 317-character label key under `spec.template.metadata.labels`), while a
 * crafted one thousands of levels deep would be megabytes, in every message that lists it.
 */
export const MAX_PATH_LENGTH = 1024;
const CUT = "…";

/** The text `key` adds to a path; `inKeyedMap`: the path names a labels/annotations map; `atRoot`: it is "". */
function segmentText(key: string | number, inKeyedMap: boolean, atRoot: boolean): string {
  if (typeof key === "number") return `[${key}]`;
  if (!inKeyedMap && PLAIN_KEY.test(key)) return atRoot ? key : `.${key}`;
  return `[${JSON.stringify(key)}]`;
}

/** Whether the path that `key` ends names a labels/annotations map (its keys are then bracketed). */
const endsInKeyedMap = (key: string | number, inKeyedMap: boolean): boolean =>
  typeof key === "string" && !inKeyedMap && KEYED_MAP_NAMES.has(key);

/** Appends one segment to a path in the notation above. */
export const pathJoin = (base: string, key: string | number): string =>
  base + segmentText(key, KEYED_MAP.test(base), base === "");

/** Joins segments from the root: `pathOf(["metadata", "labels", "a/b"])` → `metadata.labels["a/b"]`. */
export function pathOf(segments: readonly (string | number)[]): string {
  let path = "";
  let inKeyedMap = false;
  for (const key of segments) {
    path += segmentText(key, inKeyedMap, path === "");
    inKeyedMap = endsInKeyedMap(key, inKeyedMap);
  }
  return path;
}

export const absent = (v: unknown): boolean => v === undefined || v === null;

/** `o[key]` if `o` has it as its own property: an absent `constructor` is not Object. */
export const own = (o: Record<string, unknown>, key: string): unknown =>
  Object.hasOwn(o, key) ? o[key] : undefined;

type Container = Record<string, unknown> | unknown[];

/** Both sides are walked key by key: two objects, or two arrays of one length (items have no identity). */
const walkable = (before: unknown, after: unknown): boolean =>
  (isRecord(before) && isRecord(after)) ||
  (Array.isArray(before) && Array.isArray(after) && before.length === after.length);

/**
 * A growable table of int32 rows, off the collector's heap: a million rows cost one buffer instead of a
 * million objects for the collector to trace while the walk runs.
 */
class Rows {
  data: Int32Array;
  count = 0;
  constructor(readonly width: number) {
    this.data = new Int32Array(width * 256);
  }
  add(): number {
    if ((this.count + 1) * this.width > this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    return this.count++;
  }
}

/** One column of a `Rows` table. */
class Column {
  constructor(
    private readonly rows: Rows,
    private readonly offset: number,
  ) {}
  get(row: number): number {
    return this.rows.data[row * this.rows.width + this.offset]!;
  }
  set(row: number, value: number): void {
    this.rows.data[row * this.rows.width + this.offset] = value;
  }
}

const IS_ARRAY = 1;
const LINKED = 2;
/** Naming flags: the frame's path was cut; the path names a labels/annotations map. */
const CUT_NAME = 4;
const KEYED = 8;

/**
 * What the walk learnt, in columns indexed by frame (an object or array pair it entered; 0 is the root) and
 * by entry (a key of a frame that changed). Typed columns rather than an object per frame: a crafted review
 * has a million frames, and a million objects alive until the walk ends cost the collector more than the
 * walk. A frame is linked — gets an entry in its parent — once something below it changed, so an equal
 * subtree leaves nothing but its frames' rows.
 */
class Walk {
  readonly frames = new Rows(6);
  readonly parent = new Column(this.frames, 0);
  readonly flags = new Column(this.frames, 1);
  /** Changes in the frame's subtree: its own during the walk, its children's added after. */
  readonly total = new Column(this.frames, 2);
  /** The frame's entries, a list in the order met: first and last (-1: none). */
  readonly head = new Column(this.frames, 3);
  readonly tail = new Column(this.frames, 4);
  /** The frame's path once first needed (-1 before), as an index into `names`: cut frames share one. */
  readonly nameOf = new Column(this.frames, 5);
  readonly key: (string | number)[] = [];
  readonly names: string[] = [];
  readonly entryRows = new Rows(2);
  /** The frame the entry's key was walked into, or -1 for a value that changed as a whole. */
  readonly entryChild = new Column(this.entryRows, 0);
  readonly entryNext = new Column(this.entryRows, 1);
  readonly entryKey: (string | number)[] = [];

  newFrame(parent: number, key: string | number, isArray: boolean): number {
    const f = this.frames.add();
    this.key.push(key);
    this.parent.set(f, parent);
    this.flags.set(f, isArray ? IS_ARRAY : 0);
    this.total.set(f, 0);
    this.head.set(f, -1);
    this.tail.set(f, -1);
    this.nameOf.set(f, -1);
    return f;
  }

  isArray(frame: number): boolean {
    return (this.flags.get(frame) & IS_ARRAY) !== 0;
  }

  addEntry(frame: number, key: string | number, child: number): void {
    const e = this.entryRows.add();
    this.entryKey.push(key);
    this.entryChild.set(e, child);
    this.entryNext.set(e, -1);
    if (this.head.get(frame) === -1) this.head.set(frame, e);
    else this.entryNext.set(this.tail.get(frame), e);
    this.tail.set(frame, e);
  }

  /**
   * Records that `key` of `frame` changed as a whole, and links `frame`'s ancestors up to a linked one — at
   * most STEP_NODES of them: returns `linkUp`'s answer, so a walk can yield between links a million deep.
   */
  recordChange(frame: number, key: string | number): number {
    this.addEntry(frame, key, -1);
    this.total.set(frame, this.total.get(frame) + 1);
    return this.linkUp(frame);
  }

  /** Links `frame` and its ancestors up to a linked one, at most STEP_NODES: the next to link, or -1. */
  linkUp(frame: number): number {
    let left = STEP_NODES;
    for (let f = frame; (this.flags.get(f) & LINKED) === 0; f = this.parent.get(f)) {
      if (left-- === 0) return f;
      this.flags.set(f, this.flags.get(f) | LINKED);
      this.addEntry(this.parent.get(f), this.key[f]!, f);
    }
    return -1;
  }
}

/**
 * Paths under `base` where `before` and `after` differ, in key order at every level (arrays by index). A
 * subtree that appears or disappears as a whole is named once, at its root; arrays whose length changed are
 * named as a whole. The first MAX_NAMED_PATHS are exact (cut at MAX_PATH_LENGTH); see there for the rest.
 * `ignoredKey`, when both are objects, is left out of the comparison at the top level only (as if neither
 * had it), without copying either object.
 *
 * One pass over both trees builds nothing for equal nodes but a frame index per object/array pair; a second
 * pass over the changed part alone names the changes, sorting a level's keys only as far as names are
 * needed. test/policies/diff.test.ts compares the result with naming every node and sorting every level's keys.
 */
export function changedPaths(before: unknown, after: unknown, base = "", ignoredKey?: string): string[] {
  if (before === after || (absent(before) && absent(after))) return [];
  if (!walkable(before, after)) return [base || "(root)"];
  if (!slicing())
    return (
      shallowChangedPaths(before, after, base, ignoredKey) ??
      runToEnd(walkChangedPaths(before, after, base, ignoredKey))
    );
  // In slices (a large review) no fast path: listing the keys of a level a million wide costs more than a
  // slice, and the walk would list them again.
  return stepped("changedPaths", [before, after, base, ignoredKey], () =>
    walkChangedPaths(before, after, base, ignoredKey),
  );
}

/** The walk for any shape, yielding every STEP_NODES nodes (./slices.ts). */
function* walkChangedPaths(
  before: unknown,
  after: unknown,
  base: string,
  ignoredKey: string | undefined,
): Generator<void, string[]> {
  const w = new Walk();
  yield* walkTrees(w, before as Container, after as Container, ignoredKey);
  // A frame's index is above its parent's, so going down the indexes adds every subtree before its parent.
  for (let f = w.frames.count - 1; f > 0; f--) {
    if ((w.flags.get(f) & LINKED) !== 0) {
      const p = w.parent.get(f);
      w.total.set(p, w.total.get(p) + w.total.get(f));
    }
    if (f % STEP_NODES === 0) yield;
  }
  w.nameOf.set(0, w.names.push(base) - 1);
  if (KEYED_MAP.test(base)) w.flags.set(0, w.flags.get(0) | KEYED);
  return yield* nameChanges(w);
}

// --- the usual case -----------------------------------------------------------------------------------
// Kube objects are a few levels deep with a handful of changes, where building the walk's tables costs more
// than the diff. A plain recursive diff answers them; it gives up (undefined) on anything deeper than
// SHALLOW_DEPTH, with more than MAX_NAMED_PATHS changes or a path to cut, and the walk above answers instead
// — so together they stay linear, and never deep on the call stack.

export const SHALLOW_DEPTH = 64;

interface Shallow {
  readonly base: string;
  readonly baseKeyed: boolean;
  readonly segments: (string | number)[];
  readonly out: string[];
  readonly ignoredKey: string | undefined;
  gaveUp: boolean;
}

function shallowChangedPaths(
  before: unknown,
  after: unknown,
  base: string,
  ignoredKey: string | undefined,
): string[] | undefined {
  const walk: Shallow = {
    base,
    baseKeyed: KEYED_MAP.test(base),
    segments: [],
    out: [],
    ignoredKey,
    gaveUp: false,
  };
  shallowWalk(before, after, walk);
  return walk.gaveUp ? undefined : walk.out;
}

function shallowWalk(before: unknown, after: unknown, walk: Shallow): void {
  if (before === after || (absent(before) && absent(after))) return;
  if (isRecord(before) && isRecord(after)) {
    if (walk.segments.length >= SHALLOW_DEPTH) {
      walk.gaveUp = true;
      return;
    }
    const start = walk.out.length;
    // Keys that produced paths, and where their paths end in `out`; only built once a key produced some.
    let changedKeys: string[] | undefined;
    let ends: number[] | undefined;
    let inOrder = true;
    const keysOfBefore = Object.keys(before);
    const keysOfAfter = Object.keys(after);
    const ignored = walk.segments.length === 0 ? walk.ignoredKey : undefined;
    // `after`'s keys that `before` has too; when that is all of them, none is left to add.
    let shared = 0;
    for (let i = 0; i < keysOfBefore.length + keysOfAfter.length; i++) {
      const fromBefore = i < keysOfBefore.length;
      if (!fromBefore && shared === keysOfAfter.length) break;
      const key = fromBefore ? keysOfBefore[i]! : keysOfAfter[i - keysOfBefore.length]!;
      if (!fromBefore && Object.hasOwn(before, key)) continue;
      const inAfter = !fromBefore || Object.hasOwn(after, key);
      if (fromBefore && inAfter) shared++;
      if (key === ignored) continue;
      const mark = walk.out.length;
      walk.segments.push(key);
      shallowWalk(fromBefore ? before[key] : undefined, inAfter ? after[key] : undefined, walk);
      walk.segments.pop();
      if (walk.gaveUp) return;
      if (walk.out.length === mark) continue;
      changedKeys ??= [];
      ends ??= [];
      if (changedKeys.length > 0 && key < changedKeys[changedKeys.length - 1]!) inOrder = false;
      changedKeys.push(key);
      ends.push(walk.out.length);
    }
    if (!inOrder && changedKeys && ends) putInKeyOrder(walk.out, start, changedKeys, ends);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    if (walk.segments.length >= SHALLOW_DEPTH) {
      walk.gaveUp = true;
      return;
    }
    for (let i = 0; i < before.length && !walk.gaveUp; i++) {
      walk.segments.push(i);
      shallowWalk(before[i], after[i], walk);
      walk.segments.pop();
    }
    return;
  }
  // Changed as a whole: different types, lengths or scalars.
  let path = walk.base;
  let inKeyedMap = walk.baseKeyed;
  for (const key of walk.segments) {
    path += segmentText(key, inKeyedMap, path === "");
    inKeyedMap = endsInKeyedMap(key, inKeyedMap);
  }
  if (walk.out.length === MAX_NAMED_PATHS || path.length > MAX_PATH_LENGTH) walk.gaveUp = true;
  else walk.out.push(path || "(root)");
}

/** Reorders `out` from `start` so each key's run of paths (ending at `ends[i]`) comes in key order. */
function putInKeyOrder(out: string[], start: number, keys: readonly string[], ends: readonly number[]): void {
  const runs = keys.map((key, i) => ({ key, paths: out.slice(i === 0 ? start : ends[i - 1], ends[i]) }));
  runs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  out.length = start;
  for (const run of runs) appendAll(out, run.paths);
}

// --- any shape -----------------------------------------------------------------------------------------

/**
 * The first pass, with an explicit stack: depth costs heap, never the call stack. Yields every STEP_NODES
 * values compared, wherever they are: a level a million keys wide is cut into steps too.
 */
function* walkTrees(
  w: Walk,
  before: Container,
  after: Container,
  ignoredKey: string | undefined,
): Generator<void, void> {
  w.newFrame(-1, "", Array.isArray(before));
  w.flags.set(0, w.flags.get(0) | LINKED);
  const frames: number[] = [0];
  const befores: Container[] = [before];
  const afters: Container[] = [after];
  /** Compares one pair: -1, or (a change linked part of the way up) the next frame `linkUp` must link. */
  const visit = (frame: number, key: string | number, b: unknown, a: unknown): number => {
    if (b === a || (absent(b) && absent(a))) return -1;
    // Different types, lengths or scalars: changed as a whole.
    if (!walkable(b, a)) return w.recordChange(frame, key);
    frames.push(w.newFrame(frame, key, Array.isArray(b)));
    befores.push(b as Container);
    afters.push(a as Container);
    return -1;
  };
  let sinceYield = 0;
  while (frames.length > 0) {
    const frame = frames.pop()!;
    const b = befores.pop()!;
    const a = afters.pop()!;
    const pushed = frames.length;
    if (++sinceYield >= STEP_NODES) {
      sinceYield = 0;
      yield;
    }
    if (Array.isArray(b)) {
      const items = a as unknown[];
      for (let i = 0; i < b.length; i++) {
        for (let next = visit(frame, i, b[i], items[i]); next !== -1; next = w.linkUp(next)) yield;
        if (++sinceYield >= STEP_NODES) {
          sinceYield = 0;
          yield;
        }
      }
    } else {
      const fields = a as Record<string, unknown>;
      const ignored = frame === 0 ? ignoredKey : undefined;
      for (const key of Object.keys(b)) {
        if (key !== ignored)
          for (let next = visit(frame, key, b[key], own(fields, key)); next !== -1; next = w.linkUp(next))
            yield;
        if (++sinceYield >= STEP_NODES) {
          sinceYield = 0;
          yield;
        }
      }
      for (const key of Object.keys(fields)) {
        if (key !== ignored && !Object.hasOwn(b, key))
          for (let next = visit(frame, key, undefined, fields[key]); next !== -1; next = w.linkUp(next))
            yield;
        if (++sinceYield >= STEP_NODES) {
          sinceYield = 0;
          yield;
        }
      }
    }
    // Enter the children in the order met, so their changes are usually listed in key order already.
    for (let i = pushed, j = frames.length - 1; i < j; i++, j--) {
      [frames[i], frames[j]] = [frames[j]!, frames[i]!];
      [befores[i], befores[j]] = [befores[j]!, befores[i]!];
      [afters[i], afters[j]] = [afters[j]!, afters[i]!];
    }
  }
}

const cutText = (full: string): string => {
  let end = MAX_PATH_LENGTH;
  const last = full.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // never split a surrogate pair
  return full.slice(0, end) + CUT;
};

/** The path of `frame`, computed once per frame from its parent's: linear over a chain of any depth. */
function* nameOf(w: Walk, frame: number): Generator<void, string> {
  const known = w.nameOf.get(frame);
  if (known !== -1) return w.names[known]!;
  const chain: number[] = [];
  for (let f = frame; w.nameOf.get(f) === -1; f = w.parent.get(f)) {
    chain.push(f);
    if (chain.length % STEP_NODES === 0) yield;
  }
  for (let i = chain.length - 1; i >= 0; i--) {
    if (i % STEP_NODES === 0) yield;
    const f = chain[i]!;
    const p = w.parent.get(f);
    const parentFlags = w.flags.get(p);
    if ((parentFlags & CUT_NAME) !== 0) {
      w.nameOf.set(f, w.nameOf.get(p));
      w.flags.set(f, w.flags.get(f) | CUT_NAME);
      continue;
    }
    const base = w.names[w.nameOf.get(p)]!;
    const key = w.key[f]!;
    const full = base + segmentText(key, (parentFlags & KEYED) !== 0, base === "");
    const cut = full.length > MAX_PATH_LENGTH;
    w.nameOf.set(f, w.names.push(cut ? cutText(full) : full) - 1);
    const flag = cut ? CUT_NAME : endsInKeyedMap(key, (parentFlags & KEYED) !== 0) ? KEYED : 0;
    w.flags.set(f, w.flags.get(f) | flag);
  }
  return w.names[w.nameOf.get(frame)]!;
}

/** The path of `key` of `frame`, a value that changed as a whole. */
function* leafName(w: Walk, frame: number, key: string | number): Generator<void, string> {
  const base = yield* nameOf(w, frame);
  const flags = w.flags.get(frame);
  if ((flags & CUT_NAME) !== 0) return base;
  const full = base + segmentText(key, (flags & KEYED) !== 0, base === "");
  return full.length > MAX_PATH_LENGTH ? cutText(full) : full;
}

/** The second pass: names in key order, exact for the first MAX_NAMED_PATHS, by their holder after that. */
function* nameChanges(w: Walk): Generator<void, string[]> {
  const out: string[] = [];
  if (w.total.get(0) === 0) return out;
  // One level per entered frame: its entries in naming order (undefined: the list as met), and a position.
  const frames: number[] = [];
  const orders: (number[] | undefined)[] = [];
  const positions: number[] = [];
  function* enter(frame: number): Generator<void, void> {
    const order = yield* keyOrder(w, frame, MAX_NAMED_PATHS - out.length);
    frames.push(frame);
    orders.push(order);
    positions.push(order === undefined ? w.head.get(frame) : 0);
  }
  yield* enter(0);
  let sinceYield = 0;
  while (frames.length > 0) {
    if (++sinceYield >= STEP_NODES) {
      sinceYield = 0;
      yield;
    }
    const top = frames.length - 1;
    const frame = frames[top]!;
    const order = orders[top];
    let e: number;
    if (order === undefined) {
      e = positions[top]!;
      if (e !== -1) positions[top] = w.entryNext.get(e);
    } else e = positions[top]! < order.length ? order[positions[top]!++]! : -1;
    if (e === -1) {
      frames.pop();
      orders.pop();
      positions.pop();
      continue;
    }
    const child = w.entryChild.get(e);
    if (out.length < MAX_NAMED_PATHS) {
      if (child === -1) out.push(yield* leafName(w, frame, w.entryKey[e]!));
      else yield* enter(child);
      continue;
    }
    const holder = yield* nameOf(w, frame);
    for (let n = child === -1 ? 1 : w.total.get(child); n > 0; n--) {
      out.push(holder);
      if (++sinceYield >= STEP_NODES) {
        sinceYield = 0;
        yield;
      }
    }
  }
  return out;
}

/**
 * The order to name `frame`'s entries in: undefined when the list as met is in key order already (the
 * usual case), else entry indexes with the `first` smallest keys sorted, then the rest as met (they are
 * named by their holder, in no particular order). Sorting every key of a million-key level would cost more
 * than the walk; picking `first` (≤ MAX_NAMED_PATHS) costs a heap of that size.
 */
function* keyOrder(w: Walk, frame: number, first: number): Generator<void, number[] | undefined> {
  if (w.head.get(frame) === w.tail.get(frame)) return undefined; // one entry
  const keys = w.entryKey;
  const numeric = w.isArray(frame);
  const less = (x: number, y: number): boolean =>
    numeric ? (keys[x] as number) < (keys[y] as number) : (keys[x] as string) < (keys[y] as string);
  let sorted = true;
  let sinceYield = 0;
  const step = (): boolean => {
    if (++sinceYield < STEP_NODES) return false;
    sinceYield = 0;
    return true;
  };
  for (let e = w.head.get(frame); sorted && w.entryNext.get(e) !== -1; e = w.entryNext.get(e)) {
    if (less(w.entryNext.get(e), e)) sorted = false;
    if (step()) yield;
  }
  if (sorted) return undefined;
  const order: number[] = [];
  for (let e = w.head.get(frame); e !== -1; e = w.entryNext.get(e)) {
    order.push(e);
    if (step()) yield;
  }
  const compare = (x: number, y: number): number => (less(x, y) ? -1 : less(y, x) ? 1 : 0);
  if (order.length <= 2 * first) return order.sort(compare);
  // A max-heap of the `first` smallest met so far.
  const heap: number[] = [];
  const swap = (i: number, j: number): void => {
    [heap[i], heap[j]] = [heap[j]!, heap[i]!];
  };
  for (const e of order) {
    if (step()) yield;
    if (heap.length < first) {
      heap.push(e);
      for (let j = heap.length - 1; j > 0 && less(heap[(j - 1) >> 1]!, heap[j]!); j = (j - 1) >> 1)
        swap(j, (j - 1) >> 1);
    } else if (less(e, heap[0]!)) {
      heap[0] = e;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        let top = i;
        if (l < heap.length && less(heap[top]!, heap[l]!)) top = l;
        if (l + 1 < heap.length && less(heap[top]!, heap[l + 1]!)) top = l + 1;
        if (top === i) break;
        swap(i, top);
        i = top;
      }
    }
  }
  const chosen = new Set(heap);
  const out = heap.sort(compare);
  for (const e of order) {
    if (!chosen.has(e)) out.push(e);
    if (step()) yield;
  }
  return out;
}
