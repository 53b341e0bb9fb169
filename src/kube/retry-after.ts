/**
 * When an API server's answer asks for the request again (decision 162): kube-apiserver answers 429 with a
 * `Retry-After` header when API Priority and Fairness or the max-in-flight limit turns a request away before
 * it is handled, and a 5xx with one when it is shutting down or a request timed out. client-go waits what the
 * header says and sends the request again, up to ten times; so does the product's transport, with two limits
 * client-go does not have:
 * - a 5xx is retried only for a GET: a write that timed out "may still be processing", and sent again it could
 *   act twice (a `generateName` create makes a second object). A 429 was never handled: any verb is retried.
 * - the wait is capped, so a header of a day cannot park a controller's worker for a day.
 * A header that is not a whole number of seconds (an HTTP date included, which client-go does not read
 * either) is no request to retry. Pure: the transport does the waiting.
 */

/** Sends after the first, as client-go's default `maxRetries`. */
export const MAX_RETRIES = 10;
/** The longest one wait, whatever the header says. */
export const MAX_RETRY_WAIT_MS = 10_000;

const SECONDS = /^\d{1,9}$/;

/**
 * Milliseconds to wait before sending `method` again after an answer of `code` with a `Retry-After` header of
 * `retryAfter` (undefined: none), when `retries` were sent already; undefined: not again.
 */
export function retryWaitMs(
  method: string,
  code: number,
  retryAfter: string | undefined,
  retries: number,
): number | undefined {
  if (retries >= MAX_RETRIES || retryAfter === undefined) return undefined;
  if (code !== 429 && !(code >= 500 && code <= 599 && method === "GET")) return undefined;
  const text = retryAfter.trim();
  if (!SECONDS.test(text)) return undefined;
  return Math.min(Number(text) * 1000, MAX_RETRY_WAIT_MS);
}
