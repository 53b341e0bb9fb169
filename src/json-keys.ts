/**
 * The own keys of parsed JSON objects, listed without `Object.keys` for the wide ones. A level of 280,000
 * keys is a dictionary-mode object in V8, and listing its keys sorts them by insertion: ~60 ms in one turn of
 * the event loop, which no slicing can split (decision 82). The webhook's stepped parser records the keys of
 * each object once it is wider than WIDE_KEYS, as it adds them; the policy walks read keys through `keysOf`.
 * A leaf module: it imports nothing. The recorded list is never changed after parsing (reviews are read, not
 * written).
 */

/** From this many keys on, an object's keys are recorded as it is built. */
export const WIDE_KEYS = 1024;

const recorded = new WeakMap<object, string[]>();

/** Starts recording `o`'s keys from the ones it has. */
export const startRecording = (o: object): void => {
  recorded.set(o, Object.keys(o));
};

/** The list `startRecording` began for `o`, to add its later keys to. */
export const recordingOf = (o: object): string[] | undefined => recorded.get(o);

/** `Object.keys(o)`, from the parser's record when it made one. */
export const keysOf = (o: object): readonly string[] => recorded.get(o) ?? Object.keys(o);
