/**
 * Running the real kubectl (and the product's CLI) as a user would, for e2e tests: each caller gives its own
 * HOME and discovery cache dir so tests never share kubectl's cache. The product's own HTTPS listener is
 * called with supertest, trusting the CA the product wrote.
 */
import { type ChildProcess, type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import supertest from "supertest";

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

/**
 * kubectl to its end. `timeoutMs` kills it (its output then empty): 20 s by default, more for requests the
 * machine's load can stretch (an object 10,000 levels deep through the webhook).
 */
export function runKubectl(
  home: string,
  kubeconfig: string,
  args: readonly string[],
  extraEnv: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      ["--kubeconfig", kubeconfig, "--cache-dir", join(home, "cache"), ...args],
      { env: { ...kubectlEnv(home), ...extraEnv }, timeout: timeoutMs },
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

/**
 * The environment the product's CLI runs in as a child: no in-cluster service variables and no kubeconfig of
 * the person running the tests (the kubeconfig the test names is the only one); HOME is `home` when given.
 */
export const cliEnv = (home?: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  KUBERNETES_SERVICE_HOST: "",
  KUBERNETES_SERVICE_PORT: "",
  KUBECONFIG: "",
  ...(home === undefined ? {} : { HOME: home }),
  ...extra,
});

export interface CliOptions {
  /** HOME for the child (else the test runner's). */
  home?: string;
  /** Variables over cliEnv's. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Largest stdout or stderr kept (execFile's default, 1 MiB, when not given). */
  maxBuffer?: number;
}

/** The product's CLI as an admin runs it: `node --import tsx src/cli.ts ARGS` in cliEnv, to its exit. */
export const runCli = (
  args: readonly string[],
  { home, env = {}, timeoutMs = 60_000, maxBuffer }: CliOptions = {},
): Promise<Result> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      { env: cliEnv(home, env), timeout: timeoutMs, ...(maxBuffer === undefined ? {} : { maxBuffer }) },
      (error, stdout, stderr) => {
        const code = error && typeof error.code === "number" ? error.code : error ? -1 : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });

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

/** A `serve` process as `npm start` runs it: `node --import tsx src/cli.ts serve …` (so signals reach it). */
export interface ServeProcess {
  child: ChildProcess;
  output(): string;
  /** The `ready:` line, once printed. */
  ready: string;
}

/** Spawns `serve ARGS` with HOME at `home` and resolves once it printed `ready:` (or throws with its output). */
export async function spawnServe(args: readonly string[], home: string): Promise<ServeProcess> {
  // The metrics listener on a free port unless ARGS name one: tests run several products at once.
  const serveArgs = ["--metrics-port", "0", ...args];
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "serve", ...serveArgs], {
    env: { ...process.env, KUBERNETES_SERVICE_HOST: "", HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (c: Buffer) => {
    output += c.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  for (let i = 0; i < 900 && !/^ready: /m.test(output); i++) {
    if (child.exitCode !== null) break;
    await pause(100);
  }
  const ready = /^ready: .*$/m.exec(output)?.[0];
  if (!ready) {
    child.kill("SIGKILL");
    throw new Error(`serve did not become ready:\n${output}`);
  }
  return { child, output: () => output, ready };
}

/**
 * Starts the product as a person would with `npm start -- …`, in local mode on free ports with its own
 * state and certificate dirs, and resolves once it printed `ready:`.
 */
export async function startProduct(name: string, extra: readonly string[]): Promise<Product> {
  const dir = await mkdtemp(join(tmpdir(), `mam-${name}-`));
  const serve = await spawnServe(
    [
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
    dir,
  );
  const kubeconfig = /^ready: kubeconfig=(\S+)/.exec(serve.ready)?.[1];
  const webhookUrl = /webhook=(\S+)/.exec(serve.ready)?.[1];
  if (!kubeconfig || !webhookUrl) throw new Error(`unexpected ready line: ${serve.ready}`);
  return { dir, child: serve.child, kubeconfig, webhookUrl, output: serve.output() };
}

/**
 * GET `path` on the started product's webhook listener (local mode: `/debug/instances` too), over HTTPS
 * verified by the CA `startProduct` had the product write; answers 200 with JSON or throws saying what came.
 */
export async function getFromWebhook(product: Product, path: string): Promise<unknown> {
  const ca = await readFile(join(product.dir, "certs", "ca.crt"));
  const res = await supertest(product.webhookUrl).get(path).ca(ca);
  if (res.status !== 200 || !/^application\/json/.test(String(res.headers["content-type"])))
    throw new Error(
      `GET ${path} on the webhook answered ${res.status} ${res.headers["content-type"]}: ${res.text}`,
    );
  return res.body;
}
