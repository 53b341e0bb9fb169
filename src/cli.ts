#!/usr/bin/env node
/**
 * The command line: one table of subcommands, each loaded only when it runs (so `convert` starts without
 * loading the server). `serve` is the default and runs until SIGTERM/SIGINT. Every subcommand returns its exit code; bad usage is 2.
 * Every subcommand answers `--help`/`-h` with its usage on stdout and exit 0 (SPEC §9): those whose runner
 * does not answer it itself carry their `help` here. Flags are parsed by config.ts on `util.parseArgs`.
 */
import { argv, env, exit, stderr as processStderr, stdout } from "node:process";
import { asksForHelp, parseFlags, settingsUsage } from "./config.js";
import { terminalWriter } from "./ops/terminal.js";

/**
 * Every subcommand's stderr is text for a person, and carries what others wrote (the API server's and the
 * webhooks' messages, argv echoed back): control characters reach the terminal escaped (decision 155).
 */
const stderr = terminalWriter(processStderr);

interface Subcommand {
  summary: string;
  /** The usage `--help` prints, when the runner does not print its own. */
  help?: () => string;
  run: (args: string[]) => Promise<number>;
}

const SERVE_HELP = (): string =>
  [
    "usage: machine-api-migration serve [settings…]",
    "",
    "The admission webhook and the sync and migration controllers, until SIGTERM/SIGINT. It acts on a cluster",
    "only when told to: the kubeconfig setting (--kubeconfig or MACHINE_API_MIGRATION_KUBECONFIG), or the",
    "service account of the pod it runs in. Otherwise it runs in local mode with an embedded API server",
    "(SPEC §8); KUBECONFIG and ~/.kube/config are deliberately not read, so a laptop's kubeconfig never turns",
    "a local run into one against a real cluster.",
    "",
    "settings (flag, else environment variable, else default):",
    settingsUsage(),
  ].join("\n");

const CERTS_USAGE = "usage: machine-api-migration certs [--dir D] [--service S] [--namespace N]";
const CERTS_HELP = (): string =>
  [
    CERTS_USAGE,
    "",
    "Writes a development CA and a serving certificate for the webhook Service into D (default certs/),",
    "for S.N.svc (default machine-api-migration.openshift-cluster-api.svc). Never for production: a cluster",
    "gets its certificate from service-ca or cert-manager (manifests/).",
  ].join("\n");

const CONFIG_REFERENCE_HELP = (): string =>
  [
    "usage: machine-api-migration config-reference",
    "",
    "Prints every setting (flag, environment variable, default, meaning) as the README's Markdown table.",
  ].join("\n");

const SUBCOMMANDS: Record<string, Subcommand> = {
  serve: {
    summary: "admission webhook + controllers (local mode when no cluster is configured)",
    help: SERVE_HELP,
    run: async (args) => (await import("./main.js")).serve(args, env),
  },
  convert: {
    summary: "convert MAPI <-> CAPI YAML offline (--to capi|mapi --infrastructure F -f F)",
    run: async (args) => {
      const { runConvert } = await import("./sync/conversion/cli.js");
      const { readFile } = await import("node:fs/promises");
      // The inputs are parsed within the shared YAML bounds (src/yaml.ts): beyond one is exit 2.
      return runConvert(args, { stdin: process.stdin, stdout, stderr, readFile: (p) => readFile(p, "utf8") });
    },
  },
  certs: {
    summary: "write a development CA and serving certificate into certs/ (or --dir D)",
    help: CERTS_HELP,
    run: async (args) => {
      const parsed = parseFlags(args, {
        dir: { type: "string" },
        service: { type: "string" },
        namespace: { type: "string" },
      });
      const empty = parsed.ok ? parsed.occurrences.find((o) => o.value === "") : undefined;
      const error = !parsed.ok
        ? parsed.error
        : parsed.rest.length > 0
          ? `unexpected argument ${JSON.stringify(parsed.rest[0])}`
          : empty
            ? `flag ${empty.rawName} needs a value`
            : undefined;
      if (!parsed.ok || error) {
        stderr.write(`machine-api-migration certs: ${error}\n${CERTS_USAGE}\n`);
        return 2;
      }
      const flags = Object.entries(parsed.values).flatMap(([name, value]) => [`--${name}`, value]);
      return (await import("./server/certs.js")).runCertsCommand(flags);
    },
  },
  preflight: {
    summary:
      "would each MAPI Machine/MachineSet migrate now, and why not (-o table|json; exit 1 if any is blocked)",
    run: async (args) => (await import("./ops/preflight.js")).runPreflight(args, { stdout, stderr }, env),
  },
  migrate: {
    summary:
      "move MAPI MachineSets and Machines to --to ClusterAPI|MachineAPI in waves (--dry-run: the plan)",
    run: async (args) => (await import("./ops/migrate-cli.js")).runMigrate(args, { stdout, stderr }, env),
  },
  "uninstall-prepare": {
    summary: "make the cluster safe to remove the product (dry run unless --yes; --resolve-migrations)",
    run: async (args) =>
      (await import("./ops/uninstall.js")).runUninstallPrepare(args, { stdout, stderr }, env),
  },
  installer: {
    summary: "install Cluster API provider components from transport ConfigMaps (SPEC §6)",
    run: async (args) =>
      (await import("./installer/cli.js")).runInstallerCommand(args, env, { stdout, stderr }),
  },
  "pack-provider": {
    summary: "turn a provider's components YAML into a transport ConfigMap (--name --type --version -f)",
    run: async (args) => {
      const { runPackProvider } = await import("./installer/cli.js");
      const { readFile } = await import("node:fs/promises");
      return runPackProvider(args, { stdout, stderr, readFile: (p) => readFile(p, "utf8") });
    },
  },
  "config-reference": {
    summary: "print the configuration reference (every flag and environment variable) as Markdown",
    help: CONFIG_REFERENCE_HELP,
    run: async (args) => {
      if (args.length > 0) {
        stderr.write(
          `machine-api-migration config-reference: unexpected argument ${JSON.stringify(args[0])}\n`,
        );
        return 2;
      }
      const { settingsReference } = await import("./config.js");
      stdout.write(`${settingsReference()}\n`);
      return 0;
    },
  },
};

const usage = (): string =>
  [
    "usage: machine-api-migration [subcommand] [flags]",
    "",
    "subcommands:",
    ...Object.entries(SUBCOMMANDS).map(([name, s]) => `  ${name.padEnd(18)} ${s.summary}`),
    "",
    "`serve` is the default and runs until SIGTERM/SIGINT. `machine-api-migration SUBCOMMAND --help` shows a",
    "subcommand's flags; `machine-api-migration config-reference` lists every setting.",
  ].join("\n");

async function main(args: string[]): Promise<number> {
  const first = args[0];
  if (first === "--help" || first === "-h" || first === "help") {
    stdout.write(`${usage()}\n`);
    return 0;
  }
  const name = first === undefined || first.startsWith("-") ? "serve" : first;
  const rest = name === first ? args.slice(1) : args;
  const sub = SUBCOMMANDS[name];
  if (!sub) {
    stderr.write(`unknown subcommand "${name}"\n\n${usage()}\n`);
    return 2;
  }
  if (sub.help && asksForHelp(rest)) {
    stdout.write(`${sub.help()}\n`);
    return 0;
  }
  return sub.run(rest);
}

main(argv.slice(2)).then(
  (code) => exit(code),
  (error: unknown) => {
    stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    exit(1);
  },
);
