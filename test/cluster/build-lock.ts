/**
 * The lock a control-plane build holds while it builds one version key (./control-plane.ts): a directory, as
 * `mkdir` either creates it or fails, so two runs sharing the cache never build the same key at once. It names
 * its owner (pid and host), so a run that finds the lock of a build that was killed — Ctrl-C, a cancelled CI
 * job — takes it over at once instead of waiting on it; and a run that waits on a live build says whose.
 */
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

export interface LockDeps {
  sleep(ms: number): Promise<void>;
  log(line: string): void;
}

interface Owner {
  pid: number;
  host: string;
  since: string;
}

const POLL_MS = 2_000;
/** The owner file is written right after the directory: a lock still without one after this was abandoned. */
const OWNERLESS_GRACE_MS = 60_000;
/** Another host's build cannot be checked for life: its lock is trusted for as long as a build could take. */
const FOREIGN_LOCK_MS = 3_600_000;

const DEFAULTS: LockDeps = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  log: () => {},
};

/** Whether a process of this host runs under `pid` (EPERM: it does, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const readOwner = async (lock: string): Promise<Partial<Owner> | undefined> => {
  try {
    const owner: unknown = JSON.parse(await readFile(join(lock, "owner"), "utf8"));
    return typeof owner === "object" && owner !== null ? (owner as Partial<Owner>) : undefined;
  } catch {
    return undefined;
  }
};

/** Why the lock at `lock` is a dead build's, or undefined while its build may still be running. */
async function abandoned(lock: string, owner: Partial<Owner> | undefined): Promise<string | undefined> {
  const age = await stat(lock).then(
    (s) => Date.now() - s.mtimeMs,
    () => 0,
  );
  if (owner === undefined || typeof owner.pid !== "number") {
    return age > OWNERLESS_GRACE_MS ? `it names no owner and is ${Math.round(age / 1000)} s old` : undefined;
  }
  if (owner.host !== hostname()) {
    return age > FOREIGN_LOCK_MS ? `its owner on ${owner.host} has held it for over an hour` : undefined;
  }
  return running(owner.pid) ? undefined : `its build (pid ${owner.pid}) is no longer running`;
}

/**
 * Takes the lock ("acquired"), or returns "done" once `complete()` says another run built the key meanwhile.
 * A dead build's lock is removed and taken; a live one's is polled every two seconds.
 */
export async function acquireBuildLock(
  lock: string,
  complete: () => boolean,
  deps: Partial<LockDeps> = {},
): Promise<"acquired" | "done"> {
  const { sleep, log } = { ...DEFAULTS, ...deps };
  let told = false;
  for (;;) {
    try {
      await mkdir(lock);
      const owner: Owner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
      await writeFile(join(lock, "owner"), JSON.stringify(owner));
      return "acquired";
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = await readOwner(lock);
    const why = await abandoned(lock, owner);
    if (why !== undefined) {
      log(`taking over the control-plane build lock ${lock}: ${why}`);
      await rm(lock, { recursive: true, force: true });
      continue;
    }
    if (!told) {
      told = true;
      const whose = typeof owner?.pid === "number" ? `pid ${owner.pid} on ${owner.host}` : "another run";
      log(`waiting for the build of ${whose} (lock ${lock})`);
    }
    await sleep(POLL_MS);
    if (complete()) return "done";
  }
}

export async function releaseBuildLock(lock: string): Promise<void> {
  await rm(lock, { recursive: true, force: true });
}
