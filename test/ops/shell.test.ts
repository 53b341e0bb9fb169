/**
 * How the admin commands find their cluster (SPEC §9: as kubectl does) and judge their command line; no
 * request is sent, the connection is only built.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { connectFromSettings } from "../../src/ops/shell.js";

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "${server}" } }, { name: other, cluster: { server: "https://other:6443" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: ctx, context: { cluster: c, user: u } }, { name: other, context: { cluster: other, user: u } }]
current-context: ctx
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ops-shell-"));
  await writeFile(join(dir, "flag"), kubeconfig("https://flag:6443"));
  await writeFile(join(dir, "env"), kubeconfig("https://env:6443"));
  await mkdir(join(dir, "home", ".kube"), { recursive: true });
  await writeFile(join(dir, "home", ".kube", "config"), kubeconfig("https://home:6443"));
});

const inPod = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
const serverOf = (args: string[], env: Record<string, string>) => {
  const r = connectFromSettings("preflight", args, env, { output: { type: "string", short: "o" } });
  if (!r.ok) return `error: ${r.error}`;
  return r.connection.kubeConfig.getCurrentCluster()?.server;
};

describe("connectFromSettings: the cluster a command acts on", () => {
  it.each([
    [
      "--kubeconfig wins over KUBECONFIG",
      () => [["--kubeconfig", join(dir, "flag")], { KUBECONFIG: join(dir, "env") }],
      "https://flag:6443",
    ],
    [
      "SPEC §9 cluster commands read the kubeconfig as kubectl does: KUBECONFIG wins over MACHINE_API_MIGRATION_KUBECONFIG (serve's setting)",
      () => [[], { MACHINE_API_MIGRATION_KUBECONFIG: join(dir, "flag"), KUBECONFIG: join(dir, "env") }],
      "https://env:6443",
    ],
    [
      "SPEC §9 cluster commands read the kubeconfig as kubectl does: ~/.kube/config wins over MACHINE_API_MIGRATION_KUBECONFIG",
      () => [[], { MACHINE_API_MIGRATION_KUBECONFIG: join(dir, "flag"), HOME: join(dir, "home") }],
      "https://home:6443",
    ],
    [
      "SPEC §9 cluster commands read the kubeconfig as kubectl does: MACHINE_API_MIGRATION_KUBECONFIG alone is not read, and the error says so",
      () => [[], { MACHINE_API_MIGRATION_KUBECONFIG: join(dir, "flag") }],
      "error: preflight acts on a cluster: set kubeconfig (--kubeconfig FILE, KUBECONFIG or ~/.kube/config) or run it in a pod (no kubeconfig found (--kubeconfig, KUBECONFIG, ~/.kube/config) and not in a pod; MACHINE_API_MIGRATION_KUBECONFIG is serve's setting, which the admin commands do not read)",
    ],
    ["KUBECONFIG", () => [[], { KUBECONFIG: join(dir, "env") }], "https://env:6443"],
    [
      "--context picks another context",
      () => [["--context", "other"], { KUBECONFIG: join(dir, "env") }],
      "https://other:6443",
    ],
    [
      "own flags beside the settings",
      () => [["-o", "json", "--context=other"], { KUBECONFIG: join(dir, "env") }],
      "https://other:6443",
    ],
    [
      "nothing: a usage error that says where it looked",
      () => [[], {}],
      "error: preflight acts on a cluster: set kubeconfig (--kubeconfig FILE, KUBECONFIG or ~/.kube/config) or run it in a pod (no kubeconfig found (--kubeconfig, KUBECONFIG, ~/.kube/config) and not in a pod)",
    ],
    [
      "--context in a pod without a kubeconfig",
      () => [["--context", "x"], { ...inPod, HOME: join(dir, "nohome") }],
      "error: --context needs a kubeconfig (--kubeconfig, KUBECONFIG or ~/.kube/config)",
    ],
    [
      "a positional argument",
      () => [["extra"], { KUBECONFIG: join(dir, "env") }],
      'error: unexpected argument "extra"',
    ],
    ["an unknown flag", () => [["--bogus"], { KUBECONFIG: join(dir, "env") }], "error: unknown flag --bogus"],
  ] as const)("%s", (_name, input, expected) => {
    const [args, env] = input() as [readonly string[], Record<string, string>];
    expect(serverOf([...args], env)).toBe(expected);
  });
});

describe("SPEC §9: every message names where the kubeconfig came from, truly", () => {
  const sourceOf = (args: string[], env: Record<string, string>) => {
    const r = connectFromSettings("preflight", args, env);
    return r.ok ? r.source : `error: ${r.error}`;
  };
  it.each([
    [
      "--kubeconfig",
      () => [["--kubeconfig", join(dir, "flag")], { KUBECONFIG: join(dir, "env") }],
      () => `--kubeconfig ${join(dir, "flag")}`,
    ],
    [
      "KUBECONFIG",
      () => [[], { KUBECONFIG: join(dir, "env"), MACHINE_API_MIGRATION_KUBECONFIG: join(dir, "flag") }],
      () => `KUBECONFIG (${join(dir, "env")})`,
    ],
    ["~/.kube/config", () => [[], { HOME: join(dir, "home") }], () => join(dir, "home", ".kube", "config")],
    [
      "with --context",
      () => [["--context", "other"], { KUBECONFIG: join(dir, "env") }],
      () => `KUBECONFIG (${join(dir, "env")}), --context other`,
    ],
  ] as const)("%s", (_name, input, expected) => {
    const [args, env] = input() as unknown as [readonly string[], Record<string, string>];
    expect(sourceOf([...args], env)).toBe(expected());
  });

  it("a file that is not a kubeconfig is named with the flag that gave it, never as a setting of another source", async () => {
    const bad = join(dir, "bad");
    await writeFile(bad, "- just a list\n");
    const viaEnv = connectFromSettings("preflight", [], { KUBECONFIG: bad });
    expect(viaEnv.ok ? "connected" : viaEnv.error).toContain(`KUBECONFIG (${bad})`);
    const viaFlag = connectFromSettings("preflight", ["--kubeconfig", bad], {});
    expect(viaFlag.ok ? "connected" : viaFlag.error).toContain(`cannot load --kubeconfig ${bad}: `);
  });
});
