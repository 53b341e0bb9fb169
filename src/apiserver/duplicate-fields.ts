/**
 * The keys a JSON text gives twice in one object, named as kube-apiserver's strict decoder names them
 * (`data.a`, `metadata.ownerReferences[1].name`, `[0].op` under a top-level array): `JSON.parse` keeps the
 * last and says nothing, kube reports each repetition under `fieldValidation` (a warning by default, a 400
 * or a patch's 422 under Strict; decision 133). Pure; one pass over a text `JSON.parse` accepted, with an
 * explicit stack (kube's objects nest up to 10,000 levels).
 */

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;

/** Above this many keys an object's keys are looked up in a Set instead of scanned. */
const SCAN_LIMIT = 8;

interface Frame {
  /** How the container is reached from its parent: a key, an element index, or nothing (the root). */
  readonly via: string | number | undefined;
  /** An object's keys so far (undefined for an array). */
  keys: string[] | Set<string> | undefined;
  /** An array's current element index. */
  index: number;
  /** In an object: whether the next string is a key. */
  expectKey: boolean;
  /** The key whose value comes next (an object's). */
  key: string;
}

/** The index of the quote closing the string opened at `open` (the text is valid JSON). */
const stringEnd = (text: string, open: number): number => {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let before = quote - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
    from = quote + 1;
  }
};

const pathOf = (stack: readonly Frame[], key: string): string => {
  let out = "";
  for (let i = 1; i < stack.length; i++) {
    const via = stack[i]!.via;
    out += typeof via === "number" ? `[${via}]` : out === "" ? via : `.${via}`;
  }
  return out === "" ? key : `${out}.${key}`;
};

/** Records `key` in the object `frame`; whether it was there already. */
const seenBefore = (frame: Frame, key: string): boolean => {
  const keys = frame.keys!;
  if (keys instanceof Set) {
    if (keys.has(key)) return true;
    keys.add(key);
    return false;
  }
  if (keys.includes(key)) return true;
  keys.push(key);
  if (keys.length > SCAN_LIMIT) frame.keys = new Set(keys);
  return false;
};

/**
 * Each repeated key of `text` (valid JSON), in the order the repetitions appear, up to `limit` (kube's strict
 * decoder reports 100).
 */
export const duplicateFields = (text: string, limit = Number.POSITIVE_INFINITY): string[] => {
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = (isObject: boolean): void => {
    const top = stack[stack.length - 1];
    const via = top === undefined ? undefined : top.keys !== undefined ? top.key : top.index;
    stack.push({ via, keys: isObject ? [] : undefined, index: 0, expectKey: isObject, key: "" });
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top?.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (seenBefore(top, key) && out.push(pathOf(stack, key)) >= limit) return out;
        top.key = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT) open(true);
    else if (c === OPEN_ARRAY) open(false);
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) stack.pop();
    else if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top === undefined) continue;
      if (top.keys === undefined) top.index++;
      else top.expectKey = true;
    }
  }
  return out;
};
