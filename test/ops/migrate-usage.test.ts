/**
 * `cli migrate`'s usage checks (SPEC §12: "2 bad usage"): every refusal exits 2 before the cluster is asked
 * anything and names the flag as the admin typed it. The kubeconfig names a port nothing listens on, so a
 * value the checks let through ends in "cannot read the cluster" instead — which these tests tell apart.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runMigrate } from "../../src/ops/migrate-cli.js";

const dir = mkdtempSync(join(tmpdir(), "migrate-usage-"));
const kubeconfig = join(dir, "kubeconfig");
writeFileSync(
  kubeconfig,
  [
    "apiVersion: v1",
    "kind: Config",
    "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]",
    "users: [{name: u, user: {token: x}}]",
    "contexts: [{name: x, context: {cluster: c, user: u}}]",
    "current-context: x",
  ].join("\n"),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runIn = async (env: Record<string, string>, ...args: string[]) => {
  let stderr = "";
  const io = {
    stdout: { write: () => true },
    stderr: {
      write: (t: string) => {
        stderr += t;
        return true;
      },
    },
  };
  const code = await runMigrate(args, io, env, {
    onInterrupt: () => () => {},
    isTTY: false,
  });
  return { code, stderr };
};

const run = (...args: string[]) => runIn({}, "--kubeconfig", kubeconfig, ...args);

const UNREACHABLE = "cannot read the cluster at https://127.0.0.1:1";

describe("migrate usage (SPEC §12: bad usage exits 2 naming the flag)", () => {
  it.each([
    ["0x10", "hexadecimal"],
    ["1e1", "an exponent"],
    ["2.0", "a decimal point"],
    [" 3 ", "spaces"],
  ])("--max-in-flight %j (%s) is not a whole number from 1 to 100", async (value) => {
    const r = await run("--to", "ClusterAPI", "--max-in-flight", value);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `--max-in-flight must be a whole number from 1 to 100, not ${JSON.stringify(value)}`,
    );
  });

  it.each(["25h", "1000h", "90000"])(
    "--timeout %s is longer than the migrationStuckAfter setting allows (24h)",
    async (value) => {
      const r = await run("--to", "ClusterAPI", "--timeout", value);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--timeout must be at most 24h, not ${JSON.stringify(value)}`);
    },
  );

  it.each([
    ["role:worker", 'Invalid value: "role:worker": name part must consist of alphanumeric characters'],
    ["role=a b", "unable to parse requirement"],
    [
      "role=-x",
      'Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters',
    ],
  ])("--selector %j is refused as kubectl refuses it", async (selector, why) => {
    const r = await run("--to", "ClusterAPI", "--selector", selector);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--selector ${JSON.stringify(selector)}:`);
    expect(r.stderr).toContain(why);
  });

  // Found by an audit (2026-12-08): an empty selector parsed as "everything", so `-l "$POOL"` with POOL unset
  // moved the whole fleet.
  it.each([
    [["-l", ""], "-l"],
    [["--selector", ""], "--selector"],
    [["--selector="], "--selector"],
    [["-l="], "-l"],
    [["-l", "  "], "-l"],
  ])(
    "SPEC §12 bad usage exits 2: an empty selector %j is refused, never read as the whole fleet",
    async (flags, raw) => {
      const r = await run("--to", "ClusterAPI", ...flags);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`flag ${raw} needs a value`);
      expect(r.stderr).not.toContain(UNREACHABLE);
    },
  );

  it.each([
    ["--max-in-flight", "100"],
    ["--timeout", "24h"],
    ["--timeout", "86400"],
    ["--selector", "machine.openshift.io/cluster-api-machine-role=worker,!example.com/skip"],
  ])("%s %s is accepted (the run goes on to read the cluster)", async (flag, value) => {
    const r = await run("--to", "ClusterAPI", flag, value);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(UNREACHABLE);
  });
});

describe("SPEC §9 cluster commands read the kubeconfig as kubectl does", () => {
  it.each([
    ["--kubeconfig", {}, ["--kubeconfig", kubeconfig], `(--kubeconfig ${kubeconfig})`],
    ["KUBECONFIG", { KUBECONFIG: kubeconfig }, [], `(KUBECONFIG (${kubeconfig}))`],
    [
      "KUBECONFIG, with --context",
      { KUBECONFIG: kubeconfig, MACHINE_API_MIGRATION_KUBECONFIG: join(dir, "serve.kubeconfig") },
      ["--context", "x"],
      `(KUBECONFIG (${kubeconfig}), --context x)`,
    ],
  ] as const)(
    "an unreachable cluster is named with where its kubeconfig came from: %s",
    async (_name, env, flags, source) => {
      const r = await runIn({ ...env }, ...flags, "--to", "ClusterAPI");
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${UNREACHABLE} ${source}:`);
    },
  );
});
