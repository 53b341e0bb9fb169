/**
 * Lists appended without spreading them into a call. `target.push(...items)` passes every item as an
 * argument, and V8 throws RangeError ("Maximum call stack size exceeded") past ~125,000 of them — a length a
 * hostile object reaches with a few hundred kilobytes (decision 135: 150,000 wrong items in a custom
 * resource answered 500 instead of 422). test/lists.test.ts keeps such spreads out of src.
 */

/** Appends the items of each list to `target`, in order, one by one; returns `target`. */
export function appendAll<T>(target: T[], ...lists: readonly (readonly T[])[]): T[] {
  for (const list of lists) for (const item of list) target.push(item);
  return target;
}
