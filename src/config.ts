/**
 * Every setting of the product, in one table: flag, environment variable, zod schema, default and the
 * sentence the README shows. This is the only module that reads flags or the environment; everything else
 * receives a typed `Config`. Parsing is pure (argv and env are passed in) so tests can cover every error.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { DNS_LABEL } from "./kube/object.js";

const ENV_PREFIX = "MACHINE_API_MIGRATION_";

const boolFromText = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no"])])
  .transform((v) => v === true || v === "true" || v === "1" || v === "yes");
const port = z.coerce.number().int().min(0).max(65535); // 0: any free port (tests)
const seconds = z.coerce.number().positive().max(86_400);
const list = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter((s) => s.length > 0));
const k8sName = z
  .string()
  .max(63, "must be at most 63 characters")
  .regex(DNS_LABEL, "must be a DNS-1123 label");

/** Why `value` cannot be a namespace's (or another DNS-1123 label's) name, or undefined when it can. */
export const dnsLabelProblem = (value: string): string | undefined => {
  const parsed = k8sName.safeParse(value);
  return parsed.success ? undefined : parsed.error.issues[0]?.message;
};

interface Setting {
  /** Long flag, without the dashes. A boolean flag also accepts `--no-<flag>`. */
  flag: string;
  schema: z.ZodType;
  default: unknown;
  boolean?: boolean;
  description: string;
}

const DEFAULT_CONTROLLER_USERS = [
  "system:serviceaccount:openshift-cluster-api:machine-api-migration",
  "system:serviceaccount:openshift-machine-api:machine-api-controllers",
  "system:serviceaccount:openshift-cluster-api:capi-manager",
  "system:serviceaccount:openshift-cluster-api:capa-controller-manager",
  "system:serviceaccount:openshift-cluster-api:capo-manager",
  "system:serviceaccount:openshift-cluster-api:capi-ibmcloud-manager",
  "system:serviceaccount:openshift-cluster-api:capi-controllers",
  "system:serviceaccount:kube-system:generic-garbage-collector",
  "system:serviceaccount:kube-system:namespace-controller",
  // Its Machines are never migrated (§2.3 migration-unsupported-owner); a webhook outage must not block it.
  "system:serviceaccount:openshift-machine-api:control-plane-machine-set-operator",
  // Scales MAPI MachineSets through `scale` and marks the Machines it removes; on a ClusterAPI set the sync
  // carries its replicas to the CAPI copy (SPEC §2.2, plan-machine-set.ts).
  "system:serviceaccount:openshift-machine-api:cluster-autoscaler",
];

/** The settings table. Order is the order of the README's configuration reference. */
export const SETTINGS = {
  kubeconfig: {
    flag: "kubeconfig",
    schema: z.string().min(1).optional(),
    default: undefined,
    description:
      "Kubeconfig of the cluster `serve` and `installer` act on; without it (and outside a pod) the product runs in local mode. The admin commands do not read the variable: they take --kubeconfig, then KUBECONFIG, then ~/.kube/config, as kubectl does.",
  },
  mapiNamespace: {
    flag: "mapi-namespace",
    schema: k8sName,
    default: "openshift-machine-api",
    description: "Namespace of the Machine API objects.",
  },
  capiNamespace: {
    flag: "capi-namespace",
    schema: k8sName,
    default: "openshift-cluster-api",
    description: "Namespace of the Cluster API objects (the product runs here too).",
  },
  controllerUsers: {
    flag: "controller-users",
    schema: list,
    default: DEFAULT_CONTROLLER_USERS,
    description: "Comma-separated user names that admission never refuses (the controllers, SPEC §2.2).",
  },
  webhookHost: {
    flag: "webhook-host",
    schema: z.string().min(1).optional(),
    default: undefined,
    description:
      "Address the HTTPS admission server listens on. Unset: 127.0.0.1 in local mode; in a cluster every address, IPv6 too (`::`, or `0.0.0.0` on a host without IPv6).",
  },
  webhookPort: {
    flag: "webhook-port",
    schema: port,
    default: 9443,
    description: "Port of the HTTPS admission server.",
  },
  metricsHost: {
    flag: "metrics-host",
    schema: z.string().min(1).optional(),
    default: undefined,
    description:
      "Address the HTTPS metrics server listens on. Unset: 127.0.0.1 in local mode; in a cluster every address, IPv6 too (`::`, or `0.0.0.0` on a host without IPv6).",
  },
  metricsPort: {
    flag: "metrics-port",
    schema: port,
    default: 8443,
    description:
      "Port of the HTTPS metrics server (`/metrics`). In a cluster only callers whose token RBAC lets `get` `/metrics` may scrape (SPEC §2.1).",
  },
  tlsCertFile: {
    flag: "tls-cert-file",
    schema: z.string().min(1),
    default: "certs/tls.crt",
    description: "Serving certificate (PEM), reloaded when the file changes.",
  },
  tlsKeyFile: {
    flag: "tls-key-file",
    schema: z.string().min(1),
    default: "certs/tls.key",
    description: "Serving key (PEM), reloaded when the file changes.",
  },
  tlsCaFile: {
    flag: "tls-ca-file",
    schema: z.string().min(1),
    default: "certs/ca.crt",
    description: "CA of the serving certificate; local mode puts it in the webhook caBundle.",
  },
  cacheStaleAfter: {
    flag: "cache-stale-after",
    schema: seconds,
    default: 30,
    description: "Seconds without an open watch after which admission answers 'retry' (SPEC §2.1).",
  },
  requireDeleteConfirmation: {
    flag: "require-delete-confirmation",
    schema: boolFromText,
    default: true,
    boolean: true,
    description:
      "Refuse deleting a CAPI mirror of an authoritative MAPI object unless it is annotated confirm-delete.",
  },
  shutdownDelay: {
    flag: "shutdown-delay",
    schema: z.coerce.number().min(0).max(300),
    default: 5,
    description: "Seconds /readyz reports false before the server stops accepting on SIGTERM.",
  },
  leaseName: {
    flag: "lease-name",
    schema: k8sName,
    default: "machine-api-migration",
    description: "Name of the leader-election Lease (in the CAPI namespace).",
  },
  // OpenShift's timings (library-go, cluster-capi-operator; SPEC §7), so that a kube-apiserver rollout or a
  // single-node upgrade does not make the leader give up. Equal to LEADER_DEFAULTS of src/kube/leader.ts.
  leaseDuration: {
    flag: "lease-duration",
    schema: seconds,
    default: 137,
    description:
      "Leader election LeaseDuration, seconds: how long a standby waits before taking the Lease of a leader that stopped renewing.",
  },
  renewDeadline: {
    flag: "renew-deadline",
    schema: seconds,
    default: 107,
    description:
      "Leader election RenewDeadline, seconds: a leader that has not renewed for this long stops its controllers.",
  },
  retryPeriod: {
    flag: "retry-period",
    schema: seconds,
    default: 26,
    description:
      "Leader election RetryPeriod, seconds: how often the leader renews and a standby tries to take the Lease.",
  },
  watchSilenceTimeout: {
    flag: "watch-silence-timeout",
    schema: seconds,
    default: 90,
    description: "Seconds a watch may deliver nothing (no event, no bookmark) before it is restarted.",
  },
  supportCheckInterval: {
    flag: "support-check-interval",
    schema: seconds,
    default: 30,
    description:
      "Seconds between re-reads of the supported-cluster checks (SPEC §0.1): when the FeatureGate or the MAPI CRDs change the answer the process exits 0 so its pod restarts; running platform migration controllers stop the product's controllers.",
  },
  migrationStuckAfter: {
    flag: "migration-stuck-after",
    schema: seconds,
    default: 900,
    description: "Seconds at one handover step after which migration_stuck reports 1.",
  },
  workers: {
    flag: "workers",
    schema: z.coerce.number().int().min(1).max(64),
    default: 8,
    description:
      "Keys each controller reconciles at once (one key is never reconciled twice at the same time).",
  },
  controllers: {
    flag: "controllers",
    schema: boolFromText,
    default: true,
    boolean: true,
    description: "Run the sync and migration controllers (`--no-controllers`: admission only).",
  },
  simulateProviders: {
    flag: "simulate-providers",
    schema: boolFromText.optional(),
    default: undefined,
    boolean: true,
    description: "Run the MAO/CAPI/CAPA stand-ins. Default on in local mode; refused in a cluster.",
  },
  apiHost: {
    flag: "api-host",
    schema: z.string().min(1),
    default: "127.0.0.1",
    description: "Local mode: address of the embedded Kubernetes API server.",
  },
  apiPort: {
    flag: "api-port",
    schema: port,
    default: 6443,
    description: "Local mode: port of the embedded Kubernetes API server.",
  },
  stateDir: {
    flag: "state-dir",
    schema: z.string().min(1),
    default: ".local",
    description: "Local mode: where the kubeconfig and tokens are written.",
  },
  seed: {
    flag: "seed",
    schema: list.pipe(z.array(z.enum(["demo", "demo-openstack", "demo-powervs", "demo-providers"]))),
    default: [],
    description:
      "Local mode: objects to load at start (`demo`: on AWS, `demo-openstack`: on OpenStack, `demo-powervs`: on PowerVS, `demo-providers`; comma-separated).",
  },
  withInstaller: {
    flag: "with-installer",
    schema: boolFromText,
    default: false,
    boolean: true,
    description: "Local mode: also run the installer in-process.",
  },
  installerClusterOperator: {
    flag: "installer-cluster-operator",
    schema: k8sName,
    default: "machine-api-migration-installer",
    description: "Installer mode: the ClusterOperator it reports on (never the platform's `cluster-api`).",
  },
  installerImagesConfigMap: {
    flag: "installer-images-configmap",
    schema: k8sName,
    default: "machine-api-migration-images",
    description: "Installer mode: ConfigMap (CAPI namespace) mapping provider image placeholders to images.",
  },
  installerDegradedAfter: {
    flag: "installer-degraded-after",
    schema: seconds,
    default: 300,
    description:
      "Installer mode: seconds a failure must persist before the ClusterOperator reports Degraded.",
  },
  logLevel: {
    flag: "log-level",
    schema: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    default: "info",
    description: "pino log level.",
  },
} satisfies Record<string, Setting>;

type Settings = typeof SETTINGS;
export type Config = { [K in keyof Settings]: z.output<Settings[K]["schema"]> };

export const envNameOf = (flag: string): string => ENV_PREFIX + flag.toUpperCase().replaceAll("-", "_");

export type ConfigResult = { ok: true; config: Config; rest: string[] } | { ok: false; error: string };

/** A subcommand's own flag (`preflight -o`, `uninstall-prepare --yes`), keyed by its long name. */
export interface CommandFlag {
  type: "string" | "boolean";
  short?: string;
  /** A boolean that also takes `--flag=true|false` (the settings' booleans, like their variables). */
  text?: boolean;
}
export type CommandFlags = Readonly<Record<string, CommandFlag>>;

/** One flag as given: its long name, how it was typed (`-o`, `--no-controllers`) and its value. */
export interface FlagOccurrence {
  name: string;
  rawName: string;
  value: string;
}

export type FlagsResult =
  /** `values`: the last value of each flag; `occurrences`: every one, in order (repeatable flags). */
  | { ok: true; values: Record<string, string>; occurrences: FlagOccurrence[]; rest: string[] }
  | { ok: false; error: string };

/**
 * Parses flags alone: `--name value`, `--name=value`, `-o value`, `-ovalue`, `--flag`, `--no-flag`; `--`
 * ends the flags. Node's `util.parseArgs` splits the words; this function only judges them, so that every
 * refusal names the flag as the admin typed it (parseArgs' strict mode names neither the `--no-` form nor
 * a flag taken as the previous one's value). A boolean's value is "true" or "false" (or its text).
 */
export function parseFlags(argv: readonly string[], flags: CommandFlags): FlagsResult {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [name, f] of Object.entries(flags))
    options[name] = { type: f.type, ...(f.short ? { short: f.short } : {}) };
  const { tokens } = parseArgs({
    args: [...argv],
    options,
    strict: false,
    allowPositionals: true,
    allowNegative: true,
    tokens: true,
  });
  const occurrences: FlagOccurrence[] = [];
  const rest: string[] = [];
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      rest.push(token.value);
      continue;
    }
    const flag = flags[token.name];
    const negated = token.rawName.startsWith("--no-") && !token.rawName.startsWith(`--${token.name}`);
    if (!flag || (negated && flag.type !== "boolean"))
      return { ok: false, error: `unknown flag ${token.rawName}` };
    if (flag.type === "string") {
      // A missing value, or the next flag taken as one (`--kubeconfig --yes`): parseArgs accepts both.
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith("--")))
        return { ok: false, error: `flag ${token.rawName} needs a value` };
      // A short flag's value after `=` (`-o=json`), as kubectl's flag parser reads it: parseArgs keeps the `=`.
      const shortWithEquals =
        token.inlineValue && !token.rawName.startsWith("--") && token.value.startsWith("=");
      const value = shortWithEquals ? token.value.slice(1) : token.value;
      occurrences.push({ name: token.name, rawName: token.rawName, value });
    } else if (token.value !== undefined && (negated || !flag.text))
      return { ok: false, error: `flag ${token.rawName} takes no value` };
    else
      occurrences.push({
        name: token.name,
        rawName: token.rawName,
        value: negated ? "false" : (token.value ?? "true"),
      });
  }
  const values = Object.fromEntries(occurrences.map((o) => [o.name, o.value]));
  return { ok: true, values, occurrences, rest };
}

type DemoSeedPlatform = "AWS" | "OpenStack" | "PowerVS";

/** The demo seeds, each with the platform it puts in the Infrastructure object. */
const DEMO_SEED_PLATFORMS: ReadonlyMap<string, DemoSeedPlatform> = new Map([
  ["demo", "AWS"],
  ["demo-openstack", "OpenStack"],
  ["demo-powervs", "PowerVS"],
]);

/** The distinct platforms the `seed` setting's demos ask for (more than one is a config error). */
const demoPlatformsOf = (seed: readonly string[]): DemoSeedPlatform[] => [
  ...new Set(seed.flatMap((s) => DEMO_SEED_PLATFORMS.get(s) ?? [])),
];

/**
 * The platform of the demo the `seed` setting asks for (`demo`: AWS, `demo-openstack`: OpenStack,
 * `demo-powervs`: PowerVS), if any.
 */
export const demoPlatformOf = (seed: readonly string[]): DemoSeedPlatform | undefined =>
  demoPlatformsOf(seed)[0];

export type CommandLineResult =
  | { ok: true; config: Config; flags: Record<string, string | true>; rest: string[] }
  | { ok: false; error: string };

/**
 * Parses a command line (see `parseFlags`) over environment variables over defaults. `own` are the
 * subcommand's flags beyond the settings table; unknown flags are an error; positional arguments are
 * returned in `rest`. A boolean own flag is present (`true`) or absent.
 */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  own: CommandFlags = {},
): CommandLineResult {
  const settingOf = new Map<string, keyof Settings>(
    (Object.entries(SETTINGS) as [keyof Settings, Setting][]).map(([k, s]) => [s.flag, k]),
  );
  const all: Record<string, CommandFlag> = {};
  for (const [, s] of Object.entries(SETTINGS) as [keyof Settings, Setting][])
    all[s.flag] = s.boolean ? { type: "boolean", text: true } : { type: "string" };
  Object.assign(all, own);
  const parsed = parseFlags(argv, all);
  if (!parsed.ok) return parsed;

  const raw: Record<string, unknown> = {};
  const from: Record<string, string> = {};
  for (const [key, s] of Object.entries(SETTINGS) as [keyof Settings, Setting][]) {
    const v = env[envNameOf(s.flag)];
    if (v !== undefined && v !== "") {
      raw[key] = v;
      from[key] = `environment variable ${envNameOf(s.flag)}`;
    }
  }
  const flags: Record<string, string | true> = {};
  for (const [name, value] of Object.entries(parsed.values)) {
    const key = settingOf.get(name);
    if (key !== undefined && !(name in own)) {
      raw[key] = value;
      from[key] = `flag --${name}`;
    } else if (all[name]!.type === "string") flags[name] = value;
    else if (value === "true") flags[name] = true;
  }
  const rest = parsed.rest;
  const config: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as [keyof Settings, Setting][]) {
    const input = key in raw ? raw[key] : s.default;
    const parsed = s.schema.safeParse(input);
    if (!parsed.success) {
      const why = parsed.error.issues.map((i) => i.message).join("; ");
      const source = from[key] ?? "default";
      // `--kubeconfig=`: the flag was given no value, which the setting cannot take (zod words it as a length).
      if (input === "" && source.startsWith("flag "))
        return { ok: false, error: `${source} needs a value (setting ${key})` };
      return { ok: false, error: `invalid ${source} (setting ${key}): ${JSON.stringify(input)}: ${why}` };
    }
    config[key] = parsed.data;
  }
  const c = config as Config;
  if (c.renewDeadline >= c.leaseDuration)
    return { ok: false, error: "setting renewDeadline must be less than leaseDuration" };
  if (c.retryPeriod >= c.renewDeadline)
    return { ok: false, error: "setting retryPeriod must be less than renewDeadline" };
  if (c.installerClusterOperator === "cluster-api")
    return { ok: false, error: "setting installerClusterOperator may not be the platform's own cluster-api" };
  if (c.mapiNamespace === c.capiNamespace)
    return { ok: false, error: "settings mapiNamespace and capiNamespace must differ" };
  if (demoPlatformsOf(c.seed).length > 1)
    return {
      ok: false,
      error:
        "setting seed may hold only one of demo, demo-openstack and demo-powervs (a cluster has one platform)",
    };
  if (c.metricsPort !== 0 && c.metricsPort === c.webhookPort)
    return {
      ok: false,
      error: "settings webhookPort and metricsPort must differ (metrics have their own listener)",
    };
  return { ok: true, config: c, flags, rest };
}

/** The settings alone (`serve`, `installer`): `parseCommandLine` without subcommand flags. */
export function parseConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ConfigResult {
  const parsed = parseCommandLine(argv, env);
  return parsed.ok ? { ok: true, config: parsed.config, rest: parsed.rest } : parsed;
}

/**
 * Whether a command line asks for help (`--help` or `-h` before any `--`), whatever else it holds: help is
 * answered before a bad flag or a missing cluster is reported, as kubectl and cobra do.
 */
export function asksForHelp(argv: readonly string[]): boolean {
  const { tokens } = parseArgs({
    args: [...argv],
    options: { help: { type: "boolean", short: "h" } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  return tokens.some((t) => t.kind === "option" && t.name === "help");
}

/** One line per setting (`  --webhook-port N   Port of …`), for a subcommand's `--help`. */
export function settingsUsage(
  keys: readonly (keyof Settings)[] = Object.keys(SETTINGS) as (keyof Settings)[],
): string {
  return keys
    .map((key) => {
      const s: Setting = SETTINGS[key];
      const flag = s.boolean ? `--[no-]${s.flag}` : `--${s.flag} V`;
      return `  ${flag.padEnd(36)} ${s.description} (env ${envNameOf(s.flag)})`;
    })
    .join("\n");
}

/** Markdown table of every setting, for the README (kept from drifting by a test). */
export function settingsReference(): string {
  const rows = (Object.entries(SETTINGS) as [string, Setting][]).map(([, s]) => {
    const def = Array.isArray(s.default)
      ? s.default.join(",") || "(none)"
      : s.default === undefined
        ? "(unset)"
        : String(s.default);
    return `| \`--${s.flag}\` | \`${envNameOf(s.flag)}\` | \`${def}\` | ${s.description} |`;
  });
  return ["| flag | environment | default | meaning |", "|---|---|---|---|", ...rows].join("\n");
}

export type RunMode = "local" | "kubeconfig" | "in-cluster";

/**
 * Where the listeners bind (SPEC §2.1): as configured, else loopback in local mode — its webhook serves the
 * simulated instance ledger and a person's laptop is no cluster network — and every address in a cluster,
 * where the API server, the kubelet's probes and Prometheus reach the pod on its IP. Undefined means every
 * address as Node listens with no host: `::` (IPv4 too) where the host has IPv6, so an IPv6-primary cluster
 * reaches the pod, else `0.0.0.0` (server/serve.ts `unspecifiedAddress`, decision 188).
 */
export function listenHosts(
  config: Pick<Config, "webhookHost" | "metricsHost">,
  mode: RunMode,
): { webhook: string | undefined; metrics: string | undefined } {
  const fallback = mode === "local" ? "127.0.0.1" : undefined;
  return { webhook: config.webhookHost ?? fallback, metrics: config.metricsHost ?? fallback };
}

/**
 * Where the product runs: an explicit kubeconfig wins; inside a pod (the service env Kubernetes injects)
 * it uses its service account; otherwise local mode with the embedded API server (SPEC §8).
 */
export function runMode(
  config: Pick<Config, "kubeconfig">,
  env: Readonly<Record<string, string | undefined>>,
): RunMode {
  if (config.kubeconfig) return "kubeconfig";
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) return "in-cluster";
  return "local";
}
