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

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, probe: () => boolean, ceilingMs = 30_000): Promise<void> {
  const deadline = Date.now() + ceilingMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
    await expect(startChild(NEVER_READY, [pidFile], { timeoutMs: 3_000 })).rejects.toThrow(
      `${NEVER_READY} not ready in 3000 ms`,
    );
    await until("the child's pid file", () => existsSync(pidFile));
    pid = Number(await readFile(pidFile, "utf8"));
    await until(`child ${pid} to exit`, () => !alive(pid as number));
  });
});
