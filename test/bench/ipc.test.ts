/**
 * The bench's process plumbing (bench/ipc.ts): a child that never gets ready is refused by name and does not
 * outlive the refusal — before, it kept running (on a fresh machine, a real-control-plane bench left its API
 * server child building and then serving after the bench had given up on it).
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startChild } from "../../bench/ipc.js";

const NEVER_READY = join(import.meta.dirname, "fixtures", "never-ready.ts");
const ECHO = join(import.meta.dirname, "fixtures", "echo.ts");

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("bench children", () => {
  let dir: string | undefined;
  let pid: number | undefined;
  afterEach(async () => {
    if (pid !== undefined && alive(pid)) process.kill(pid, "SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
    pid = undefined;
  });

  it("a child that is not ready in time is refused by name and stopped", async () => {
    dir = await mkdtemp(join(tmpdir(), "mam-ipc-"));
    const pidFile = join(dir, "pid");
    // Long enough for the child to start under tsx on a busy machine and write its pid.
    await expect(startChild(NEVER_READY, [pidFile], { timeoutMs: 10_000 })).rejects.toThrow(
      `${NEVER_READY} not ready in 10000 ms`,
    );
    expect(existsSync(pidFile)).toBe(true);
    pid = Number(await readFile(pidFile, "utf8"));
    // Stopped before the refusal, not after it.
    expect(alive(pid)).toBe(false);
  });

  it("a command's arguments reach it whole, even ones named like the message's own id and command", async () => {
    const child = await startChild(ECHO, []);
    try {
      const args = { id: 7, cmd: "other", names: ["a", "b"] };
      await expect(child.ask("echo", args, 20_000)).resolves.toEqual(args);
    } finally {
      await child.stop();
    }
  });
});
