/**
 * Figures from a campaign run: each test appends one JSON line to reliability/results.jsonl (git-ignored by
 * being rewritten on every run is not needed: the file is the evidence RELIABILITY.md quotes) and prints it.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";

export function recordFigures(item: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ item, at: new Date().toISOString(), ...figures });
  appendFileSync(join(import.meta.dirname, "results.jsonl"), `${line}\n`);
  console.log(line);
}
