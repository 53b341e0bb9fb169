import { describe, expect, it } from "vitest";
import { envNameOf, listenHosts, parseConfig, settingsReference } from "../src/config.js";

const ok = (argv: string[], env: Record<string, string> = {}) => {
  const r = parseConfig(argv, env);
  if (!r.ok) throw new Error(r.error);
  return r;
};

describe("config", () => {
  it("uses SPEC §0/§2/§7 defaults when nothing is set", () => {
    const { config } = ok([]);
    expect(config.mapiNamespace).toBe("openshift-machine-api");
    expect(config.capiNamespace).toBe("openshift-cluster-api");
    expect(config.webhookPort).toBe(9443);
    expect(config.apiPort).toBe(6443);
    expect(config.cacheStaleAfter).toBe(30);
    // OpenShift's leader-election timings (SPEC §7, issue 21): a leader rides out a kube-apiserver rollout.
    expect([config.leaseDuration, config.renewDeadline, config.retryPeriod]).toEqual([137, 107, 26]);
    expect(config.requireDeleteConfirmation).toBe(true);
    expect(config.controllers).toBe(true);
    expect(config.simulateProviders).toBeUndefined();
    expect(config.controllerUsers).toContain(
      "system:serviceaccount:openshift-cluster-api:machine-api-migration",
    );
    expect(config.controllerUsers).toHaveLength(7);
  });

  it("flags win over environment, which wins over defaults", () => {
    const env = { [envNameOf("webhook-port")]: "9000", [envNameOf("api-port")]: "7000" };
    const { config } = ok(["--webhook-port", "9100"], env);
    expect(config.webhookPort).toBe(9100);
    expect(config.apiPort).toBe(7000);
  });

  it("accepts --flag=value, boolean flags and their --no- forms, and returns positionals", () => {
    const { config, rest } = ok(["--seed=demo", "--no-controllers", "--simulate-providers", "extra"]);
    expect(config.seed).toEqual(["demo"]);
    expect(config.controllers).toBe(false);
    expect(config.simulateProviders).toBe(true);
    expect(rest).toEqual(["extra"]);
  });

  it("accepts shorter leader-election timings when set explicitly (tests, reliability runs)", () => {
    const { config } = ok(["--lease-duration", "15", "--renew-deadline", "10", "--retry-period", "2"]);
    expect([config.leaseDuration, config.renewDeadline, config.retryPeriod]).toEqual([15, 10, 2]);
  });

  it("splits comma-separated lists", () => {
    const { config } = ok(["--controller-users", "a, b,,c"]);
    expect(config.controllerUsers).toEqual(["a", "b", "c"]);
  });

  it.each([
    [["--webhook-port", "70000"], "flag --webhook-port (setting webhookPort)"],
    [["--api-port", "-1"], "flag --api-port (setting apiPort)"],
    [["--webhook-port", "abc"], "flag --webhook-port (setting webhookPort)"],
    [["--mapi-namespace", "Bad_Name"], "setting mapiNamespace"],
    [["--seed", "nonsense"], "setting seed"],
    [["--bogus"], "unknown flag --bogus"],
    [["--webhook-port"], "flag --webhook-port needs a value"],
    [["--renew-deadline", "137"], "renewDeadline must be less than leaseDuration"],
    [["--retry-period", "107"], "retryPeriod must be less than renewDeadline"],
    [["--capi-namespace", "openshift-machine-api"], "must differ"],
  ])("bad input %j exits with a message naming the setting", (argv, text) => {
    const r = parseConfig(argv, {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(text);
  });

  it("names the environment variable when the bad value came from there", () => {
    const r = parseConfig([], { [envNameOf("log-level")]: "loud" });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error).toContain("environment variable MACHINE_API_MIGRATION_LOG_LEVEL (setting logLevel)");
  });

  it("the reference lists every flag with its environment variable", () => {
    const ref = settingsReference();
    expect(ref).toContain("| `--webhook-port` | `MACHINE_API_MIGRATION_WEBHOOK_PORT` | `9443` |");
    expect(ref.split("\n").length).toBeGreaterThan(20);
  });
});

describe("listen addresses (SPEC §2.1: loopback in local mode)", () => {
  const parsed = (args: string[]) => {
    const r = parseConfig(args, {});
    if (!r.ok) throw new Error(r.error);
    return r.config;
  };
  it.each([
    ["local mode, nothing set: loopback only", [], "local", "127.0.0.1", "127.0.0.1"],
    ["a cluster through a kubeconfig, nothing set: every address", [], "kubeconfig", "0.0.0.0", "0.0.0.0"],
    ["in a pod, nothing set: every address", [], "in-cluster", "0.0.0.0", "0.0.0.0"],
    [
      "local mode, --webhook-host set: as set",
      ["--webhook-host", "0.0.0.0"],
      "local",
      "0.0.0.0",
      "127.0.0.1",
    ],
    [
      "a cluster, --metrics-host set: as set",
      ["--metrics-host", "10.0.0.5"],
      "in-cluster",
      "0.0.0.0",
      "10.0.0.5",
    ],
  ] as const)("%s", (_, args, mode, webhook, metrics) => {
    expect(listenHosts(parsed([...args]), mode)).toEqual({ webhook, metrics });
  });
});
