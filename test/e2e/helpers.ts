/**
 * Running the real kubectl (and the product's CLI) as a user would, for e2e tests: each caller gives its own
 * HOME and discovery cache dir so tests never share kubectl's cache.
 */
import { type ChildProcess, type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const KUBECTL = "/usr/bin/kubectl";

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

export const kubectlEnv = (home: string): NodeJS.ProcessEnv => ({
  PATH: "/usr/bin:/bin",
  HOME: home,
  KUBECACHEDIR: join(home, "cache"),
});

/** A long-running kubectl (e.g. `get -w`), for tests that read its output as it streams. */
export const spawnKubectl = (
  home: string,
  kubeconfig: string,
  args: readonly string[],
): ChildProcessWithoutNullStreams =>
  spawn(KUBECTL, ["--kubeconfig", kubeconfig, "--cache-dir", join(home, "cache"), ...args], {
    env: kubectlEnv(home),
  });

export function runKubectl(
  home: string,
  kubeconfig: string,
  args: readonly string[],
  extraEnv: Record<string, string> = {},
): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      ["--kubeconfig", kubeconfig, "--cache-dir", join(home, "cache"), ...args],
      { env: { ...kubectlEnv(home), ...extraEnv }, timeout: 20_000 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === "number"
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Product {
  dir: string;
  child: ChildProcess;
  kubeconfig: string;
  webhookUrl: string;
  output: string;
  /** The simulated cloud's ledger, where the test process holds it (the real control plane's stand-ins). */
  ledger?: () => Promise<unknown>;
  /** How to stop it, where more than the process runs (the real control plane). */
  stop?: () => Promise<void>;
}

/**
 * Starts the product as a person would with `npm start -- …` (as the `node --import tsx src/cli.ts serve` that
 * npm start runs, so signals reach it), in local mode on free ports with its own state and certificate dirs,
 * and resolves once it printed `ready:`.
 */
export async function startProduct(name: string, extra: readonly string[]): Promise<Product> {
  const dir = await mkdtemp(join(tmpdir(), `mam-${name}-`));
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/cli.ts",
      "serve",
      ...extra,
      "--api-port",
      "0",
      "--webhook-port",
      "0",
      "--webhook-host",
      "127.0.0.1",
      "--state-dir",
      join(dir, "state"),
      "--tls-cert-file",
      join(dir, "certs", "tls.crt"),
      "--tls-key-file",
      join(dir, "certs", "tls.key"),
      "--tls-ca-file",
      join(dir, "certs", "ca.crt"),
      "--shutdown-delay",
      "0",
    ],
    { env: { ...process.env, KUBERNETES_SERVICE_HOST: "", HOME: dir }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const product: Product = { dir, child, kubeconfig: "", webhookUrl: "", output: "" };
  const collect = (c: Buffer) => {
    product.output += c.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  for (let i = 0; i < 900 && !/^ready: /m.test(product.output); i++) {
    if (child.exitCode !== null) break;
    await pause(100);
  }
  const ready = /^ready: kubeconfig=(\S+)/m.exec(product.output);
  if (!ready) throw new Error(`npm start did not become ready:\n${product.output}`);
  product.kubeconfig = ready[1]!;
  product.webhookUrl = /webhook=(\S+)/.exec(product.output)![1]!;
  return product;
}
