/**
 * How deep JSON text nests, read from the text itself (no parse, no recursion): brackets inside strings are
 * text. kube-apiserver's JSON decoder refuses an object nested deeper than KUBE_MAX_DEPTH levels, and a
 * review it sends is at most two levels deeper — the webhook (src/server/json-body.ts) and the local API
 * server's decoder (src/apiserver/wire.ts) both read the bound from here. Pure.
 */

/** k8s.io/apimachinery's and sigs.k8s.io/json's decoders: an object (managedFields included) ≤ 10,000 levels. */
export const KUBE_MAX_DEPTH = 10_000;

/**
 * The index of the `{` or `[` that opens level `max + 1` of `text`, or -1 when it nests no deeper than `max`.
 * Only a text longer than 2 × max characters can, so shorter ones are not scanned.
 */
export const openingPast = (text: string, max: number): number => {
  if (text.length <= 2 * max) return -1;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Past the string: its closing quote is the first one not escaped.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return i;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return -1;
};
