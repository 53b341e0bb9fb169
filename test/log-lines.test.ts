/**
 * SPEC §7's log format, on the real composition (issue 21 item 7): `serve` in local mode in-process — embedded
 * API server, demo seed, simulated providers, the four controllers and admission — at debug level, its log
 * lines captured. Every line is one JSON object with no key repeated (JSON.parse keeps the last of a repeated
 * key, so the raw text is scanned), the level as a word, an RFC 3339 time and `logger` naming the component.
 */
import { EventEmitter } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Signals, serve } from "../src/main.js";

/** The keys repeated within one object anywhere in `text` (a JSON document), in order of repetition. */
function repeatedKeys(text: string): string[] {
  const repeated: string[] = [];
  // One frame per open object (its keys so far) or array (null); `key` says the next string is a key.
  const frames: { keys: Set<string> | null; key: boolean }[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') {
        if (j >= text.length) throw new Error(`unterminated string at ${i}`);
        j += text[j] === "\\" ? 2 : 1;
      }
      const top = frames.at(-1);
      if (top?.keys && top.key) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) repeated.push(key);
        top.keys.add(key);
        top.key = false;
      }
      i = j + 1;
      continue;
    }
    if (c === "{") frames.push({ keys: new Set(), key: true });
    else if (c === "[") frames.push({ keys: null, key: false });
    else if (c === "}" || c === "]") frames.pop();
    else if (c === ",") {
      const top = frames.at(-1);
      if (top?.keys) top.key = true;
    }
    i++;
  }
  return repeated;
}

describe("repeatedKeys", () => {
  it.each([
    ['{"a":1,"b":2}', []],
    ['{"a":1,"a":2}', ["a"]],
    ['{"a":{"a":1},"b":[{"a":1},{"a":2}]}', []],
    ['{"a":{"x":1,"x":2},"b":[{"y":1,"y":2}]}', ["x", "y"]],
    ['{"a":"\\",\\"a\\":","a":1}', ["a"]],
    ['{"s":"a,\\"b\\":1","b":2}', []],
  ])("%s → %j", (text, expected) => {
    expect(repeatedKeys(text)).toEqual(expected);
  });
});

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function localRun(tty: boolean, until: (lines: readonly string[]) => boolean): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "log-lines-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const chunks: string[] = [];
  const lines = (): string[] => chunks.join("").split("\n").filter(Boolean);
  const signals = new EventEmitter();
  const args = [
    "--api-port=0",
    "--webhook-port=0",
    "--metrics-port=0",
    `--state-dir=${join(dir, "state")}`,
    `--tls-cert-file=${join(dir, "certs", "tls.crt")}`,
    `--tls-key-file=${join(dir, "certs", "tls.key")}`,
    `--tls-ca-file=${join(dir, "certs", "ca.crt")}`,
    "--seed=demo",
    "--shutdown-delay=0",
    "--log-level=debug",
  ];
  const stream = { write: (s: string) => void chunks.push(s) };
  const exit = serve(args, {}, signals as unknown as Signals, { tty, stream });
  let settled = false;
  void exit.finally(() => {
    settled = true;
  });
  try {
    await vi.waitFor(
      async () => {
        if (settled) throw new Error(`serve returned ${await exit} early`);
        expect(until(lines())).toBe(true);
      },
      { timeout: 30_000, interval: 100 },
    );
  } finally {
    signals.emit("SIGINT");
    expect(await exit).toBe(0);
  }
  return lines();
}

/** Past the start: a controller reconciled, and admission decided on a write. */
const pastTheStart = (lines: readonly string[]): boolean =>
  lines.some((l) => l.includes("reconciled")) && lines.some((l) => l.includes("admission decision"));

describe("a local run's log lines (SPEC §7)", () => {
  it("are JSON objects with no repeated key, a level word, an RFC 3339 time and a logger", async () => {
    const parsed = (line: string) => JSON.parse(line) as Record<string, unknown>;
    const lines = await localRun(false, pastTheStart);
    expect(lines.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const line of lines) {
      const object = parsed(line);
      const repeated = repeatedKeys(line);
      if (repeated.length > 0) problems.push(`repeated ${repeated.join(", ")}: ${line}`);
      if (!LEVELS.includes(object.level as string)) problems.push(`level not a word: ${line}`);
      if (typeof object.time !== "string" || !RFC3339.test(object.time)) problems.push(`time: ${line}`);
      if (typeof object.logger !== "string" || object.logger === "") problems.push(`no logger: ${line}`);
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it("on a terminal are printed human-readable: time, level, logger, message, fields", async () => {
    const lines = await localRun(true, pastTheStart);
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) {
      expect(line).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) [\w.-]+: /);
      expect(line.startsWith("{")).toBe(false);
    }
    expect(lines.some((l) => l.includes(" machine-api-migration: starting mode=local"))).toBe(true);
  }, 60_000);
});
