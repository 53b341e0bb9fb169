/**
 * Values nested as deep as kube-apiserver stores them (10,000 levels), for the tests that show the product
 * and the local server handle them: built and measured with loops, since JSON.stringify, structuredClone and
 * recursion overflow the stack near 5,000 levels.
 */

/** `{"n":{"n":…{}}}`: `levels` objects, one inside the other. */
export const nestedObjects = (levels: number): Record<string, unknown> => {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) v = { n: v };
  return v;
};

/** How many levels of objects and arrays `v` nests, counted without recursion. */
export const depthOf = (v: unknown): number => {
  let max = 0;
  const pending: [unknown, number][] = [[v, 1]];
  while (pending.length > 0) {
    const [x, d] = pending.pop() as [unknown, number];
    if (typeof x !== "object" || x === null) continue;
    max = Math.max(max, d);
    for (const child of Object.values(x)) pending.push([child, d + 1]);
  }
  return max;
};

/** Every object and array reachable from `roots`, walked without recursion. */
const objectsIn = (roots: readonly unknown[]): Set<object> => {
  const seen = new Set<object>();
  const pending = [...roots];
  while (pending.length > 0) {
    const v = pending.pop();
    if (typeof v !== "object" || v === null || seen.has(v)) continue;
    seen.add(v);
    for (const child of Object.values(v)) pending.push(child);
  }
  return seen;
};

/** The objects and arrays `result` holds that are also in `inputs` (the same objects, not equal copies). */
export const sharedWith = (result: unknown, inputs: readonly unknown[]): object[] => {
  const theirs = objectsIn(inputs);
  return [...objectsIn([result])].filter((o) => theirs.has(o));
};
