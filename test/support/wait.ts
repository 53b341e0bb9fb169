/**
 * Polling for a state, as the tests that run real processes and controllers wait: never a sleep of a guessed
 * length, and never an assertion on elapsed time.
 */

export interface WaitOptions {
  /** How long to poll before giving up (default 15 s). */
  timeoutMs?: number;
  /** The pause between probes (default 25 ms). */
  intervalMs?: number;
}

/**
 * Polls `probe` until it answers something other than `undefined` or `false`, and returns that. A probe that
 * throws counts as "not yet"; on timeout the error names `what` and the last thing the probe threw.
 */
export const waitFor = async <T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 15_000, intervalMs = 25 }: WaitOptions = {},
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
};
