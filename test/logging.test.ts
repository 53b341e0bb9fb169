/**
 * The product's buffered log destination (src/logging.ts): a line shorter than the buffer still reaches the
 * file by the periodic flush, and the lines of a process that exits right after logging are not lost.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LOG_BUFFER_BYTES, logDestination } from "../src/logging.js";

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
