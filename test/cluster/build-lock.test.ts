/**
 * The control-plane build's lock (test/cluster/build-lock.ts): a run that finds the lock of a build that was
 * killed takes it over at once; one that finds a live build's waits for it, and says so. Before, a killed
 * build's lock held every later `npm run test:cluster` silently for an hour.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireBuildLock, type LockDeps, releaseBuildLock } from "./build-lock.js";

/** The pid of a process that has exited: nothing runs under it any more (pids are not reused that soon). */
const deadPid = (): number => {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
};

let dir: string;
let lock: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "build-lock-"));
  lock = join(dir, "key.lock");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Deps whose sleep runs `onSleep` (the test's stand-in for time passing) and counts the waits. */
function deps(onSleep: (n: number) => Promise<void> | void = () => {}) {
  const lines: string[] = [];
  let sleeps = 0;
  const d: Partial<LockDeps> & { lines: string[]; sleeps: () => number } = {
    log: (line) => lines.push(line),
    sleep: async () => {
      sleeps++;
      if (sleeps > 50) throw new Error("still waiting after 50 polls");
      await onSleep(sleeps);
    },
    lines,
    sleeps: () => sleeps,
  };
  return d;
}

const plantLock = async (owner?: object): Promise<void> => {
  await mkdir(lock);
  if (owner) await writeFile(join(lock, "owner"), JSON.stringify(owner));
};

describe("the control-plane build lock", () => {
  it("a free lock is taken, names its owner, and is released", async () => {
    const d = deps();
    expect(await acquireBuildLock(lock, () => false, d)).toBe("acquired");
    expect(JSON.parse(await readFile(join(lock, "owner"), "utf8"))).toMatchObject({
      pid: process.pid,
      host: hostname(),
    });
    expect(d.sleeps()).toBe(0);
    await releaseBuildLock(lock);
    expect(await acquireBuildLock(lock, () => false, d)).toBe("acquired");
  });

  it("the lock of a killed build on this host is taken over at once, and the run says so", async () => {
    const pid = deadPid();
    await plantLock({ pid, host: hostname(), since: new Date().toISOString() });
    const d = deps();
    expect(await acquireBuildLock(lock, () => false, d)).toBe("acquired");
    expect(d.sleeps()).toBe(0);
    expect(d.lines.join("\n")).toContain(`pid ${pid}`);
    expect(JSON.parse(await readFile(join(lock, "owner"), "utf8")).pid).toBe(process.pid);
  });

  it("a live build's lock is waited on, with a line naming it, until it is released", async () => {
    // A live owner: this test's own process (not the lock's acquirer as far as the lock can tell).
    await plantLock({ pid: process.pid, host: hostname(), since: new Date().toISOString() });
    const d = deps(async (n) => {
      if (n === 3) await releaseBuildLock(lock);
    });
    expect(await acquireBuildLock(lock, () => false, d)).toBe("acquired");
    expect(d.sleeps()).toBe(3);
    expect(d.lines.filter((l) => l.includes(`waiting for the build of pid ${process.pid}`))).toHaveLength(1);
  });

  it("a wait ends without the lock when the other build completed the binaries", async () => {
    await plantLock({ pid: process.pid, host: hostname(), since: new Date().toISOString() });
    let complete = false;
    const d = deps((n) => {
      if (n === 2) complete = true;
    });
    expect(await acquireBuildLock(lock, () => complete, d)).toBe("done");
  });

  it("a lock without an owner is a dead acquirer's once it is a minute old; younger, it is waited on", async () => {
    await plantLock();
    const old = new Date(Date.now() - 120_000);
    await utimes(lock, old, old);
    const d = deps();
    expect(await acquireBuildLock(lock, () => false, d)).toBe("acquired");
    expect(d.sleeps()).toBe(0);

    await releaseBuildLock(lock);
    await plantLock();
    const waiting = deps(async (n) => {
      if (n === 2) await releaseBuildLock(lock);
    });
    expect(await acquireBuildLock(lock, () => false, waiting)).toBe("acquired");
    expect(waiting.sleeps()).toBe(2);
  });

  it("another host's lock is trusted for an hour, then taken over", async () => {
    await plantLock({ pid: 1, host: `not-${hostname()}`, since: new Date().toISOString() });
    const waiting = deps(async (n) => {
      if (n === 2) {
        const old = new Date(Date.now() - 2 * 3_600_000);
        await utimes(lock, old, old);
      }
    });
    expect(await acquireBuildLock(lock, () => false, waiting)).toBe("acquired");
    expect(waiting.sleeps()).toBe(2);
  });
});
