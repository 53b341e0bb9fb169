/**
 * Running the real kubectl (and the product's CLI) as a user would, for e2e tests: each caller gives its own
 * HOME and discovery cache dir so tests never share kubectl's cache.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
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
