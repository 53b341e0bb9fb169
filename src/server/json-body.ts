/**
 * Parsing of admission request bodies (SPEC §2.1). Keys named `__proto__`, `constructor` or `prototype` are
 * data — a free-form field of a Machine (providerSpec, a status field) may hold one — so a body holding them
 * is parsed like any other: a 400 would hand kube's decision to the webhook's failure policy, which whoever
 * writes the object could then choose. `JSON.parse` makes every key an own data property (never a
 * prototype); the policies read and copy fields as own properties (src/policies/diff.ts, draft.ts,
 * `getPath`), and test/server/prototype-keys.test.ts plants such keys in every position of real reviews.
 * Fastify's default parser refuses those keys, so the server installs this one instead. Pure functions.
 */

export type JsonBodyResult = { ok: true; value: unknown } | { ok: false; error: string };

export function parseJsonBody(text: string): JsonBodyResult {
  if (text.length === 0) {
    return { ok: false, error: "request body is empty; expected an admission.k8s.io/v1 AdmissionReview" };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: `request body is not valid JSON: ${(err as Error).message}` };
  }
}
