/**
 * The product's buffered log destination (src/logging.ts): a line shorter than the buffer still reaches the
 * file by the periodic flush, and the lines of a process that exits right after logging are not lost. And the
 * format (SPEC §7): the level as a word, an RFC 3339 time, one `logger` key naming the component (dotted from
 * its parent's name), and on a terminal one readable line per entry.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  childLogger,
  createLogger,
  formatLine,
  isoTimeBySecond,
  LOG_BUFFER_BYTES,
  type LogOutput,
  logDestination,
} from "../src/logging.js";

const require = createRequire(import.meta.url);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "mam-logging-"));
  dirs.push(d);
  return d;
};
const read = (file: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
};

describe("buffered log destination", () => {
  it("a single short line is written by the periodic flush, without waiting for the buffer to fill", async () => {
    const file = join(tempDir(), "log");
    const destination = logDestination(file);
    const log = pino({ level: "info" }, destination);
    log.info({ n: 1 }, "one short line");
    expect(JSON.stringify({ msg: "one short line" }).length).toBeLessThan(LOG_BUFFER_BYTES);
    await vi.waitFor(() => expect(read(file)).toContain('"msg":"one short line"'), { timeout: 5_000 });
    destination.end();
  });

  it("lines logged just before process.exit are flushed at exit", async () => {
    const dir = tempDir();
    const file = join(dir, "log");
    const script = join(dir, "exit.ts");
    writeFileSync(
      script,
      [
        `import pino from ${JSON.stringify(require.resolve("pino"))};`,
        `import { logDestination } from ${JSON.stringify(join(process.cwd(), "src/logging.ts"))};`,
        `import { openSync } from "node:fs";`,
        // A file descriptor, as in production (stdout, fd 1): a path would still be opening at exit.
        `const log = pino({ level: "info" }, logDestination(openSync(${JSON.stringify(file)}, "w")));`,
        `for (let i = 0; i < 3; i++) log.info({ i }, "before exit");`,
        `process.exit(3);`,
      ].join("\n"),
    );
    const run = promisify(execFile)(process.execPath, ["--import", "tsx", script], { cwd: process.cwd() });
    await expect(run).rejects.toMatchObject({ code: 3 });
    expect(read(file).trim().split("\n")).toHaveLength(3);
  });
});

describe("buffered log destination: batches", () => {
  it("lines past the buffer size are written in order, as whole lines, without waiting for the flush", async () => {
    const file = join(tempDir(), "log");
    const destination = logDestination(file);
    const log = pino({ level: "info" }, destination);
    const count = Math.ceil((3 * LOG_BUFFER_BYTES) / 60);
    for (let i = 0; i < count; i++) log.info({ i }, "a line of about sixty characters");
    // More than the buffer holds was handed to the file at once; the tail follows by the periodic flush.
    expect(read(file).length).toBeGreaterThanOrEqual(LOG_BUFFER_BYTES);
    await vi.waitFor(() => expect(read(file).trim().split("\n")).toHaveLength(count), { timeout: 5_000 });
    const lines = read(file)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { i: number });
    expect(lines.map((l) => l.i)).toEqual([...Array(count).keys()]);
    destination.end();
  });

  it("flushSync writes what is gathered at once", () => {
    const file = join(tempDir(), "log");
    const destination = logDestination(file);
    pino({ level: "info" }, destination).info("gathered");
    destination.flushSync();
    expect(read(file)).toContain('"msg":"gathered"');
    destination.end();
  });
});

describe("the time of a line", () => {
  it("is pino's isoTime, new Date().toISOString(), at second boundaries and anywhere else", () => {
    const instants = [0, 1, 9, 10, 99, 100, 999, 1_000, 1_001, -1, -1_000, -1_001, 1_764_626_399_999];
    for (let i = 0; i < 2_000; i++) instants.push(Math.floor(Math.random() * 4e12));
    for (const ms of instants) {
      expect(isoTimeBySecond(() => ms)(), String(ms)).toBe(`,"time":"${new Date(ms).toISOString()}"`);
    }
  });

  it("follows the clock from one call to the next, within a second and across one", () => {
    let now = 1_764_626_398_998;
    const time = isoTimeBySecond(() => now);
    const seen: string[] = [];
    for (let i = 0; i < 4; i++, now++) seen.push(time());
    expect(seen).toEqual(
      [1_764_626_398_998, 1_764_626_398_999, 1_764_626_399_000, 1_764_626_399_001].map(
        (ms) => `,"time":"${new Date(ms).toISOString()}"`,
      ),
    );
  });
});

/** A root logger whose output lines are kept. */
function capture(tty: boolean, level: pino.LevelWithSilent = "debug") {
  const lines: string[] = [];
  const output: LogOutput = { tty, stream: { write: (s: string) => void lines.push(s.replace(/\n$/, "")) } };
  return { log: createLogger(level, output), lines };
}

describe("createLogger and childLogger", () => {
  it("write the level as a word, an RFC 3339 time and the root's name as logger", () => {
    const { log, lines } = capture(false);
    log.info({ mode: "local" }, "starting");
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: "info",
      logger: "machine-api-migration",
      mode: "local",
      msg: "starting",
    });
    expect(String(line.time)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Object.keys(line).sort()).toEqual(["level", "logger", "mode", "msg", "time"]);
  });

  it("name a component after its parent, once per line; plain children keep their parent's name", () => {
    const { log, lines } = capture(false);
    const controllers = childLogger(log, "controllers");
    const sync = childLogger(controllers, "machine-sync", { worker: 1 });
    sync.child({ key: "ns/m" }).debug("reconciled");
    controllers.info("leading");
    childLogger(log, "cache").child({ informer: "machines" }).info("synced");
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.map((p) => p.logger)).toEqual(["controllers.machine-sync", "controllers", "cache"]);
    expect(parsed[0]).toMatchObject({ worker: 1, key: "ns/m", level: "debug" });
    for (const line of lines) expect(line.match(/"logger":/g)).toHaveLength(1);
  });

  it("childLogger passes child options (a quieter component)", () => {
    const { log, lines } = capture(false);
    const quiet = childLogger(log, "local-apiserver", {}, { level: "warn" });
    quiet.info("hidden");
    quiet.warn("shown");
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(["shown"]);
  });

  it("outside the product's root logger (no mixin), a named child adds no logger key", () => {
    const lines: string[] = [];
    const child = childLogger(pino({ base: null }, { write: (s: string) => void lines.push(s) }), "events");
    child.info("x");
    expect(JSON.parse(lines[0]!)).not.toHaveProperty("logger");
  });

  it("on a terminal, prints one readable line per entry", () => {
    const { log, lines } = capture(true);
    childLogger(log, "admission").info({ allowed: false, rule: "R1" }, "admission decision");
    expect(lines[0]).toMatch(
      /^\d{2}:\d{2}:\d{2}\.\d{3} INFO {2}admission: admission decision allowed=false rule=R1$/,
    );
  });
});

describe("formatLine (a terminal's line)", () => {
  const T = "2026-12-01T17:06:02.123Z";
  it.each([
    [
      { level: "info", time: T, logger: "machine-api-migration", msg: "starting", mode: "local" },
      "17:06:02.123 INFO  machine-api-migration: starting mode=local",
    ],
    [
      { level: "debug", time: T, logger: "controllers.machine-sync", key: "ns/m", msg: "reconciled" },
      "17:06:02.123 DEBUG controllers.machine-sync: reconciled key=ns/m",
    ],
    [
      { level: "warn", time: T, logger: "cache", msg: "watch silent", silentMs: 30000, ok: true },
      "17:06:02.123 WARN  cache: watch silent silentMs=30000 ok=true",
    ],
    [
      { level: "error", time: T, logger: "x", msg: "failed", err: "a b", why: "" },
      '17:06:02.123 ERROR x: failed err="a b" why=""',
    ],
    [
      { level: "info", time: T, logger: "x", msg: "m", v: 'q"x', eq: "a=b" },
      '17:06:02.123 INFO  x: m v="q\\"x" eq="a=b"',
    ],
    [
      { level: "info", time: T, logger: "x", msg: "m", o: { a: [1, "b"] }, n: null },
      '17:06:02.123 INFO  x: m o={"a":[1,"b"]} n=null',
    ],
    [{ level: "fatal", time: T, logger: "x", code: 3 }, "17:06:02.123 FATAL x: code=3"],
  ])("%j", (entry, expected) => {
    expect(formatLine(`${JSON.stringify(entry)}\n`)).toBe(expected);
  });

  it("passes a line that is not JSON through", () => {
    expect(formatLine("not json\n")).toBe("not json");
  });
});
