/** Small pure statistics and formatting helpers shared by the bench sections. */

export const median = (xs: readonly number[]): number => percentile(xs, 50);

/** Nearest-rank percentile; NaN for an empty list. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** a / b rounded to 3 decimals, NaN when b is 0. */
export const ratio = (a: number, b: number): number =>
  b === 0 ? Number.NaN : Math.round((a / b) * 1000) / 1000;

export const round = (x: number, digits = 1): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};
