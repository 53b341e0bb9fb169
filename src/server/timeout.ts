/**
 * The `?timeout=` query parameter kube-apiserver adds to every webhook call (SPEC §2.1), and the time budget
 * the server gives a decision from it. kube formats it as a Go `time.Duration` (`10s`, `1m0s`, `1.5s`,
 * `500ms`). Pure functions only; the server applies the budget.
 */

/** kube-apiserver's default webhook timeout, used when the parameter is absent or unreadable. */
const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
/** kube-apiserver caps timeoutSeconds at 30 s; a larger value is someone else's parameter, not kube's. */
const MAX_WEBHOOK_TIMEOUT_MS = 30_000;

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const DURATION =
  /^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h)(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))*$/;
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/**
 * Parses a Go duration (`10s`, `1m30s`, `1.5s`, `250ms`) into milliseconds. Returns undefined for anything
 * else, including negative, zero or unit-less values: the caller then falls back to the default.
 */
export function parseGoDuration(text: string): number | undefined {
  if (text.length === 0 || text.length > 64 || !DURATION.test(text)) return undefined;
  let total = 0;
  for (const match of text.matchAll(PART)) total += Number(match[1]) * UNIT_MS[match[2]!]!;
  return Number.isFinite(total) && total > 0 ? total : undefined;
}

/**
 * How long a decision may take before the server answers with the webhook's fallback instead: the timeout
 * kube gave (or its default) minus a margin for serialisation and the network, so the answer arrives
 * before kube gives up. The margin is a fifth of the timeout, at most 500 ms.
 */
export function decisionBudgetMs(timeoutParameter: unknown): number {
  const parsed = typeof timeoutParameter === "string" ? parseGoDuration(timeoutParameter) : undefined;
  const timeout = Math.min(parsed ?? DEFAULT_WEBHOOK_TIMEOUT_MS, MAX_WEBHOOK_TIMEOUT_MS);
  return timeout - Math.min(timeout / 5, 500);
}
