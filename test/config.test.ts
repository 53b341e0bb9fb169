import { describe, expect, it } from "vitest";
import {
  asksForHelp,
  demoPlatformOf,
  envNameOf,
  listenHosts,
  parseCommandLine,
  parseConfig,
  runMode,
  settingsReference,
} from "../src/config.js";

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
    // Each platform's infrastructure provider is a controller (CAPA on AWS, CAPO on OpenStack, CAPIBM on
    // PowerVS).
    expect(config.controllerUsers).toEqual(
      expect.arrayContaining([
        "system:serviceaccount:openshift-cluster-api:capa-controller-manager",
        "system:serviceaccount:openshift-cluster-api:capo-manager",
        "system:serviceaccount:openshift-cluster-api:capi-ibmcloud-manager",
      ]),
    );
    expect(config.controllerUsers).toHaveLength(11);
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
    [["--kubeconfig="], "flag --kubeconfig needs a value (setting kubeconfig)"],
    [["--tls-cert-file="], "flag --tls-cert-file needs a value (setting tlsCertFile)"],
    [["--renew-deadline", "137"], "renewDeadline must be less than leaseDuration"],
    [["--retry-period", "107"], "retryPeriod must be less than renewDeadline"],
    [["--capi-namespace", "openshift-machine-api"], "must differ"],
    [
      ["--seed", "demo,demo-openstack"],
      "setting seed may hold only one of demo, demo-openstack and demo-powervs",
    ],
    [
      ["--seed", "demo-powervs,demo"],
      "setting seed may hold only one of demo, demo-openstack and demo-powervs",
    ],
  ])("bad input %j exits with a message naming the setting", (argv, text) => {
    const r = parseConfig(argv, {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(text);
  });

  it("seed: demo (AWS), demo-openstack (OpenStack) or demo-powervs (PowerVS), each beside demo-providers; the demo names the platform", () => {
    expect(ok(["--seed", "demo-openstack,demo-providers"]).config.seed).toEqual([
      "demo-openstack",
      "demo-providers",
    ]);
    expect(ok([], { [envNameOf("seed")]: "demo-openstack" }).config.seed).toEqual(["demo-openstack"]);
    expect(demoPlatformOf(["demo"])).toBe("AWS");
    expect(demoPlatformOf(["demo-providers", "demo-openstack"])).toBe("OpenStack");
    expect(ok(["--seed", "demo-powervs,demo-providers"]).config.seed).toEqual([
      "demo-powervs",
      "demo-providers",
    ]);
    expect(demoPlatformOf(["demo-powervs", "demo-providers"])).toBe("PowerVS");
    expect(demoPlatformOf(["demo-powervs", "demo-powervs"])).toBe("PowerVS");
    expect(demoPlatformOf(["demo", "demo"])).toBe("AWS");
    expect(demoPlatformOf(["demo-providers"])).toBeUndefined();
    expect(demoPlatformOf([])).toBeUndefined();
  });

  it.each([
    ["demo-openstack,demo"],
    ["demo,demo-powervs"],
    ["demo-powervs,demo-openstack"],
    ["demo,demo-openstack,demo-powervs,demo-providers"],
  ])("seed: %s (more than one demo) is refused whole (a cluster has one platform)", (seed) => {
    expect(parseConfig(["--seed", seed], {})).toEqual({
      ok: false,
      error:
        "setting seed may hold only one of demo, demo-openstack and demo-powervs (a cluster has one platform)",
    });
  });

  it("seed: the same demo twice is one demo", () => {
    expect(parseConfig(["--seed", "demo,demo"], {}).ok).toBe(true);
    expect(parseConfig(["--seed", "demo-powervs,demo-powervs"], {}).ok).toBe(true);
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

describe("listen addresses (SPEC §2.1: loopback in local mode; every address, IPv6 too, in a cluster)", () => {
  const parsed = (args: string[]) => {
    const r = parseConfig(args, {});
    if (!r.ok) throw new Error(r.error);
    return r.config;
  };
  it.each([
    ["local mode, nothing set: loopback only", [], "local", "127.0.0.1", "127.0.0.1"],
    // Unset: the unspecified address, as Node picks it with no host (`::` where the host has IPv6, so an
    // IPv6-primary cluster's probes and Service reach the pod; `0.0.0.0` where it has none): serve.ts.
    [
      "a cluster through a kubeconfig, nothing set: every address, as Node listens with no host",
      [],
      "kubeconfig",
      undefined,
      undefined,
    ],
    [
      "in a pod, nothing set: every address, as Node listens with no host",
      [],
      "in-cluster",
      undefined,
      undefined,
    ],
    ["in a pod, --webhook-host :: set: as set", ["--webhook-host", "::"], "in-cluster", "::", undefined],
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
      undefined,
      "10.0.0.5",
    ],
  ] as const)("%s", (_, args, mode, webhook, metrics) => {
    expect(listenHosts(parsed([...args]), mode)).toEqual({ webhook, metrics });
  });
});

describe("command lines (util.parseArgs over the settings table plus a subcommand's own flags)", () => {
  const own = {
    output: { type: "string", short: "o" },
    yes: { type: "boolean", short: "y" },
    context: { type: "string" },
  } as const;
  const parse = (argv: string[]) => parseCommandLine(argv, {}, own);
  it.each([
    ["long own flag", ["--output", "json"], { output: "json" }],
    ["short own flag", ["-o", "json"], { output: "json" }],
    ["short flag with its value attached", ["-ojson"], { output: "json" }],
    ["--flag=value", ["--context=admin"], { context: "admin" }],
    ["boolean own flag, short", ["-y"], { yes: true }],
    [
      "settings and own flags mixed",
      ["--kubeconfig", "/k", "-y", "--context", "c"],
      { yes: true, context: "c" },
    ],
  ] as const)("%s", (_name, argv, expected) => {
    const r = parse([...argv]);
    if (!r.ok) throw new Error(r.error);
    expect(r.flags).toEqual(expected);
  });

  it("a boolean setting takes --flag, --no-flag and --flag=false", () => {
    const on = parseCommandLine(["--no-controllers", "--with-installer"], {}, {});
    const off = parseCommandLine(["--controllers=false"], {}, {});
    if (!on.ok || !off.ok) throw new Error("refused");
    expect([on.config.controllers, on.config.withInstaller, off.config.controllers]).toEqual([
      false,
      true,
      false,
    ]);
  });

  it("-- ends the flags; what follows is positional", () => {
    const r = parse(["--", "--output"]);
    if (!r.ok) throw new Error(r.error);
    expect(r.rest).toEqual(["--output"]);
  });

  it.each([
    ["an unknown short flag", ["-x"], "unknown flag -x"],
    ["an unknown long flag", ["--bogus"], "unknown flag --bogus"],
    ["a --no- form of a flag that takes a value", ["--no-output"], "unknown flag --no-output"],
    ["a missing value at the end", ["--output"], "flag --output needs a value"],
    ["a flag where its value should be", ["--kubeconfig", "--yes"], "flag --kubeconfig needs a value"],
    ["a value on a boolean own flag", ["--yes=no"], "flag --yes takes no value"],
  ] as const)("bad usage: %s", (_name, argv, message) => {
    const r = parse([...argv]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toBe(message);
  });

  it.each([
    [["--help"], true],
    [["-h"], true],
    [["--kubeconfig", "/k", "-h"], true],
    [["--", "-h"], false],
    [["--kubeconfig", "/k"], false],
  ] as const)("asks for help: %j → %s", (argv, expected) => {
    expect(asksForHelp([...argv])).toBe(expected);
  });
});

describe("serve's run mode (SPEC §8: local mode unless a cluster is configured)", () => {
  const mode = (argv: string[], env: Record<string, string>) => {
    const r = parseConfig(argv, env);
    if (!r.ok) throw new Error(r.error);
    return runMode(r.config, env);
  };
  it.each([
    ["nothing set: local", [], {}, "local"],
    // A contributor's `export KUBECONFIG=$PWD/.local/kubeconfig` (README) or a laptop's ~/.kube/config must
    // not turn `npm start` into a run against that cluster: only the product's own setting does.
    ["KUBECONFIG and HOME alone: still local", [], { KUBECONFIG: "/k", HOME: "/home/u" }, "local"],
    ["--kubeconfig: that cluster", ["--kubeconfig", "/k"], {}, "kubeconfig"],
    ["the setting's variable: that cluster", [], { MACHINE_API_MIGRATION_KUBECONFIG: "/k" }, "kubeconfig"],
    [
      "in a pod: its service account",
      [],
      { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" },
      "in-cluster",
    ],
  ] as const)("%s", (_name, argv, env, expected) => {
    expect(mode([...argv], env)).toBe(expected);
  });
});
