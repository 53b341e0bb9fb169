/**
 * When the transport sends a request again (src/kube/retry-after.ts, decision 162): a 429 with `Retry-After`
 * for any verb, a 5xx with it for a GET only, up to ten times, each wait capped.
 */
import { describe, expect, it } from "vitest";
import { MAX_RETRIES, MAX_RETRY_WAIT_MS, retryWaitMs } from "../../src/kube/retry-after.js";

describe("retryWaitMs: a server's Retry-After (decision 162)", () => {
  it.each([
    // method, code, Retry-After, retries so far, wait (undefined: not again)
    ["GET", 429, "1", 0, 1_000],
    ["POST", 429, "1", 0, 1_000],
    ["PUT", 429, "2", 3, 2_000],
    ["PATCH", 429, "0", 0, 0],
    ["DELETE", 429, " 1 ", 0, 1_000],
    ["GET", 503, "1", 0, 1_000],
    ["GET", 504, "3", 0, 3_000],
    ["GET", 500, "1", 0, 1_000],
    // A write that timed out may still be processing: sent again, it could act twice.
    ["POST", 504, "1", 0, undefined],
    ["PATCH", 503, "1", 0, undefined],
    ["DELETE", 500, "1", 0, undefined],
    // No header: not a request to retry (the eviction API's 429 for a disruption budget has none).
    ["POST", 429, undefined, 0, undefined],
    ["GET", 503, undefined, 0, undefined],
    // Other answers are never retried here.
    ["GET", 409, "1", 0, undefined],
    ["GET", 404, "1", 0, undefined],
    ["GET", 200, "1", 0, undefined],
    // Not whole seconds: an HTTP date, a fraction, a negative, text, too many digits.
    ["GET", 429, "Wed, 21 Oct 2026 07:28:00 GMT", 0, undefined],
    ["GET", 429, "1.5", 0, undefined],
    ["GET", 429, "-1", 0, undefined],
    ["GET", 429, "soon", 0, undefined],
    ["GET", 429, "", 0, undefined],
    ["GET", 429, "1".repeat(400), 0, undefined],
    // Capped.
    ["GET", 429, "86400", 0, MAX_RETRY_WAIT_MS],
    ["GET", 429, "999999999", 0, MAX_RETRY_WAIT_MS],
    // Ten sends after the first, then the answer stands.
    ["GET", 429, "1", MAX_RETRIES - 1, 1_000],
    ["GET", 429, "1", MAX_RETRIES, undefined],
  ] as const)(
    "%s answered %i with Retry-After %j after %i retries: %j ms",
    (method, code, header, retries, wait) => {
      expect(retryWaitMs(method, code, header, retries)).toBe(wait);
    },
  );
});
