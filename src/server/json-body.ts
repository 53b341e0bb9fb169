/**
 * Parsing of admission request bodies (SPEC §2.1). Keys named `__proto__`, `constructor` or `prototype` are
 * data — a free-form field of a Machine (providerSpec, a status field) may hold one — so a body holding them
 * is parsed like any other: a 400 would hand kube's decision to the webhook's failure policy, which whoever
 * writes the object could then choose. `JSON.parse` makes every key an own data property (never a
 * prototype); the policies read and copy fields as own properties (src/policies/diff.ts, draft.ts,
 * `getPath`), and test/server/prototype-keys.test.ts plants such keys in every position of real reviews.
 * Fastify's default parser refuses those keys, so the server installs this one instead.
 *
 * Large bodies (decision 89): a body over 64 KiB is first counted from its bytes (review-census.ts), which
 * checks the same grammar and depth; only then is it parsed, with `JSON.parse`, and never with more values
 * than a decision may build. Neither builds the objects' `metadata.managedFields`, which no decision reads.
 *
 * Depth (issue 20): kube-apiserver stores no object nested deeper than 10,000 levels (its JSON decoder's
 * limit, managedFields included), so no review it sends nests deeper than MAX_REVIEW_DEPTH — the object
 * plus the review and its `request`. A deeper body comes from someone else and is refused: by the census as
 * soon as it opens the level past the bound, so a 1.5 M-deep body costs 10,000 levels of work.
 */

import { KUBE_MAX_DEPTH, openingPast } from "../json-depth.js";
import { cutManagedFields } from "../kube/managed-fields-text.js";

export type JsonBodyResult = { ok: true; value: unknown } | { ok: false; error: string };

const EMPTY = "request body is empty; expected an admission.k8s.io/v1 AdmissionReview";
const INVALID = "request body is not valid JSON: ";

/** The deepest review kube-apiserver sends: an object at its limit inside `{"request":{"object":…}}`. */
export const MAX_REVIEW_DEPTH = KUBE_MAX_DEPTH + 2;
export const TOO_DEEP = `request body nests deeper than ${MAX_REVIEW_DEPTH} levels; kube-apiserver sends no review that deep (it stores no object nested deeper than ${KUBE_MAX_DEPTH} levels)`;

export function parseJsonBody(text: string): JsonBodyResult {
  if (text.length === 0) return { ok: false, error: EMPTY };
  if (openingPast(text, MAX_REVIEW_DEPTH) >= 0) return { ok: false, error: TOO_DEEP };
  // The objects' managedFields are not built, as for a large body: no decision reads them, and they are
  // most of the parse (src/kube/managed-fields-text.ts).
  const cut = cutManagedFields(text, "review");
  if (cut === text) return parseCountedJson(text);
  const parsed = parseCountedJson(cut);
  // A body that is not JSON is refused with the parser's words about the body as it came.
  return parsed.ok ? parsed : parseCountedJson(text);
}

/** `JSON.parse` of a text the census (review-census.ts) already found to be JSON within the depth bound. */
export function parseCountedJson(text: string): JsonBodyResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: `${INVALID}${(err as Error).message}` };
  }
}
