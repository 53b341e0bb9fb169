/**
 * A pure function of one short string, remembered for the strings it has met lately. Every write to the local
 * API server checks the same label and annotation keys, finalizers and label values against kube's rules, and
 * every request negotiates the same `Accept` header: a lookup instead of the regexes and the arrays each time
 * (issue 25). Bounded for text anybody can send: a string longer than `maxLength` is computed and not kept, and
 * the map is emptied when it holds `capacity` strings, so a client that sends a new string each time pays the
 * function's own price and never the server's memory. A result that is an object is frozen, so no caller can
 * change what the next one is given. A call that throws keeps nothing.
 */
export interface StringMemoOptions {
  /** Strings kept at most (default 4,096). */
  capacity?: number;
  /** Longer strings are computed every time (default 320: a qualified name's prefix and name, with room). */
  maxLength?: number;
}

export const memoByString = <V>(
  fn: (s: string) => V,
  options: StringMemoOptions = {},
): ((s: string) => V) => {
  const capacity = options.capacity ?? 4096;
  const maxLength = options.maxLength ?? 320;
  const kept = new Map<string, V>();
  return (s) => {
    const hit = kept.get(s);
    if (hit !== undefined) return hit;
    const value = fn(s);
    if (s.length > maxLength) return value;
    if (typeof value === "object" && value !== null) Object.freeze(value);
    if (kept.size >= capacity) kept.clear();
    kept.set(s, value);
    return value;
  };
};
