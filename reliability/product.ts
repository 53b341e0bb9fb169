/**
 * The product as a child process, the way it runs in a pod or in local mode: `node --import tsx src/cli.ts
 * serve …` (node itself is the child, so signals reach the product's own handlers). Waits for its `ready:`
 * line and exposes the URLs it printed, its output, and its exit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

export interface Product {
  child: ChildProcess;
  webhookUrl: string;
  /** Local mode only: the kubeconfig it wrote. */
  kubeconfig?: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

const ROOT = join(import.meta.dirname, "..");

/** Local-mode TLS files under `dir` (the product generates them when missing). */
export const tlsArgs = (dir: string): string[] => [
  "--tls-cert-file",
  join(dir, "certs", "tls.crt"),
  "--tls-key-file",
  join(dir, "certs", "tls.key"),
  "--tls-ca-file",
  join(dir, "certs", "ca.crt"),
];

export async function startProduct(
  args: readonly string[],
  home: string,
  timeoutMs = 90_000,
): Promise<Product> {
  // The metrics listener on a free port unless ARGS name one: a test may run several products at once.
  const serveArgs = ["--metrics-port", "0", ...args];
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "serve", ...serveArgs], {
    cwd: ROOT,
    env: { ...process.env, KUBERNETES_SERVICE_HOST: "", HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  const deadline = Date.now() + timeoutMs;
  while (!/^ready: .*webhook=\S+/m.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the product did not become ready:\n${output.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const webhookUrl = /^ready: .*webhook=(\S+)/m.exec(output)![1]!;
  const kubeconfig = /^ready: kubeconfig=(\S+)/m.exec(output)?.[1];
  return { child, webhookUrl, ...(kubeconfig ? { kubeconfig } : {}), output: () => output, exited };
}
