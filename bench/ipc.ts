/**
 * The bench's process plumbing: starting a TypeScript child (`node --import tsx`) with an IPC channel, asking
 * it things by request id, and the child's side of that protocol. Every bench server runs as its own process
 * so that load generator, baseline and product never share an event loop.
 */
import { type ChildProcess, fork } from "node:child_process";

export interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

export interface Child {
  process: ChildProcess;
  /** The first message the child sends when it is ready (its URL and the like). */
  ready: unknown;
  ask<T = unknown>(cmd: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

/** Starts `script` under tsx with `args` and waits for its ready message (or its death). */
export async function startChild(
  script: string,
  args: readonly string[],
  opts: { execArgv?: readonly string[]; timeoutMs?: number } = {},
): Promise<Child> {
  const child = fork(script, [...args], {
    execArgv: ["--import", "tsx", ...(opts.execArgv ?? [])],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const ready = await new Promise<unknown>((resolve, reject) => {
    const timeoutMs = opts.timeoutMs ?? 120_000;
    let givenUp = false;
    // A child given up on is stopped before the refusal: nothing the bench started outlives it.
    const timer = setTimeout(() => {
      givenUp = true;
      void stop().then(() => reject(new Error(`${script} not ready in ${timeoutMs} ms`)));
    }, timeoutMs);
    child.once("message", (m) => {
      clearTimeout(timer);
      resolve((m as { ready: unknown }).ready);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      if (!givenUp) reject(new Error(`${script} exited (${code}) before it was ready`));
    });
  });
  child.on("message", (m) => {
    const r = m as Reply;
    const p = pending.get(r.id);
    if (!p) return;
    pending.delete(r.id);
    if (r.ok) p.resolve(r.value);
    else p.reject(new Error(r.error));
  });
  void exited.then((code) => {
    for (const p of pending.values()) p.reject(new Error(`${script} exited (${code})`));
    pending.clear();
  });
  return {
    process: child,
    ready,
    ask<T>(cmd: string, a: Record<string, unknown> = {}, timeoutMs = 600_000): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${script}: ${cmd} timed out`)), timeoutMs);
        pending.set(id, {
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v as T);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        // The arguments travel apart from the message's own id and command, which they could otherwise replace.
        child.send({ id, cmd, args: a });
      });
    },
    stop,
  };
}

/** User + system CPU time this process has used, in ms. */
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export type Handler = (args: Record<string, unknown>) => Promise<unknown> | unknown;

/** The child's side: announce `ready`, then answer commands with `handlers`; SIGTERM runs `stop` and exits. */
export function serveParent(
  ready: unknown,
  handlers: Record<string, Handler>,
  stop: () => Promise<void>,
): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error("bench child started without an IPC channel");
  // Every child reports its own CPU time, so a section can say which process a phase kept busy.
  const all: Record<string, Handler> = { cpuMs: () => cpuMs(), ...handlers };
  process.on("message", (m) => {
    const { id, cmd, args } = m as { id: number; cmd: string; args: Record<string, unknown> };
    const handler = all[cmd];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${cmd}`);
        return handler(args);
      })
      .then(
        (value) => send({ id, ok: true, value }),
        (e: unknown) => send({ id, ok: false, error: e instanceof Error ? e.stack : String(e) }),
      );
  });
  const end = (): void => {
    void stop().finally(() => process.exit(0));
  };
  process.once("SIGTERM", end);
  process.once("disconnect", end);
  send({ ready });
}
