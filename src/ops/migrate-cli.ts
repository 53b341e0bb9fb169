/**
 * `cli migrate`'s command line (SPEC §12, §9): its usage and flags, the kubeconfig and supported-cluster checks
 * before anything runs, the signals (Ctrl-C once: no new flips; twice: leave the open handovers to the
 * controllers), and the exit code — around the run of ./migrate.ts and the reporters of ./migrate-report.ts.
 */
import { existsSync } from "node:fs";
import pino from "pino";
import { parseLabelSelector } from "../apiserver/selectors.js";
import { asksForHelp, type CommandFlags } from "../config.js";
import { createCache } from "../kube/cache.js";
import { getOrAbsent } from "../kube/client.js";
import { type Clock, systemClock } from "../kube/clock.js";
import { ForbiddenError, UnauthorizedError } from "../kube/errors.js";
import type { StableAuthority } from "../kube/kinds.js";
import { KINDS } from "../kube/kinds.js";
import { readServedPlatform, readSupport, type Support } from "../supported.js";
import type { PlatformConverter } from "../sync/conversion/platform.js";
import { BLOCKED_EVENTS, MIGRATE_FIELD_MANAGER, mapiType, migrate } from "./migrate.js";
import { jsonReporter, textReporter } from "./migrate-report.js";
import { type CommandIo, connectFromSettings, errorText, type Namespaces, readKinds } from "./shell.js";
import { leaseState } from "./uninstall-plan.js";

const MIGRATE_USAGE =
  "usage: migrate --to ClusterAPI|MachineAPI [--selector SEL] [--machinesets-only] [--max-in-flight N] [--dry-run] [--timeout DURATION] [-o text|json] [--kubeconfig FILE] [--context NAME]";

const MIGRATE_HELP = `${MIGRATE_USAGE}

Moves MAPI MachineSets and Machines to the other API in waves (SPEC §12): MachineSets first, then their
Machines, then standalone Machines, at most N open handovers at a time. It plans from the same checks as
preflight, prints the plan, then flips each object by writing only spec.authoritativeAPI (a merge patch, as
a person would: admission judges every flip) and waits on watches for each handover to complete. It stops at
the first flip admission refuses, the first handover that reports MigrationBlocked, keeps Synchronized=False
or is not complete within --timeout, and says how to resolve what is left open. Ctrl-C starts no more flips
and waits for the open ones; a second Ctrl-C leaves them to the controllers. Running it again continues.
Exit status: 0 everything selected is at the target, 1 something is blocked, failed or was interrupted,
2 bad usage or a cluster that cannot be reached.

  --to ClusterAPI|MachineAPI  the authority to move to (required)
  -l, --selector SEL          only MAPI objects whose labels match (kubectl syntax: a=b,c!=d,e in (x,y));
                              an empty SEL is refused (leave -l out to move everything)
  --machinesets-only          move the MachineSets only, not their Machines nor standalone Machines
  --max-in-flight N           open handovers at a time, 1-100 (default 5)
  --dry-run                   print the plan and change nothing (exit 1 if something is blocked)
  --timeout DURATION          per handover, e.g. 90s, 15m, at most 24h (default: the migrationStuckAfter setting)
  -o, --output text|json      text (a live line on a terminal) or JSON lines (default text)
  --kubeconfig FILE           kubeconfig (else KUBECONFIG, else ~/.kube/config, else the pod's service account)
  --context NAME              kubeconfig context (default: its current-context)
  -h, --help                  this help
Every setting of \`config-reference\` is accepted too (e.g. --mapi-namespace, --lease-name), as a flag or
its MACHINE_API_MIGRATION_ variable — except MACHINE_API_MIGRATION_KUBECONFIG, which is serve's alone.`;

const MIGRATE_FLAGS: CommandFlags = {
  to: { type: "string" },
  selector: { type: "string", short: "l" },
  "machinesets-only": { type: "boolean" },
  "max-in-flight": { type: "string" },
  "dry-run": { type: "boolean" },
  timeout: { type: "string" },
  output: { type: "string", short: "o" },
};

const DEFAULT_MAX_IN_FLIGHT = 5;
/** The migrationStuckAfter setting's own bound (src/config.ts `seconds`): a handover's wait, one day at most. */
const MAX_TIMEOUT_MS = 86_400_000;

/** `90`, `90s`, `15m`, `1h` → milliseconds; undefined when malformed or zero. */
export const parseDuration = (text: string): number | undefined => {
  const m = /^(\d+)(s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "s" | "m" | "h"];
  return ms > 0 ? ms : undefined;
};

/** How the last selector flag was typed (`-l` or `--selector`), for its refusal; flags end at `--`. */
const selectorFlagAsTyped = (args: readonly string[]): string => {
  let typed = "--selector";
  for (const a of args) {
    if (a === "--") break;
    if (a === "--selector" || a.startsWith("--selector=")) typed = "--selector";
    else if (a.startsWith("-l")) typed = "-l";
  }
  return typed;
};

const AUTHORITIES: Record<string, StableAuthority> = { clusterapi: "ClusterAPI", machineapi: "MachineAPI" };

/** How long the watches may take to list everything before the cluster counts as unreachable. */
const SYNC_TIMEOUT_MS = 60_000;
const refusesAccess = (e: unknown): boolean => e instanceof ForbiddenError || e instanceof UnauthorizedError;

export interface MigrateProcess {
  onInterrupt(handler: () => void): () => void;
  isTTY: boolean;
}

const processSignals: MigrateProcess = {
  onInterrupt(handler) {
    process.on("SIGINT", handler);
    return () => process.off("SIGINT", handler);
  },
  get isTTY() {
    return process.stdout.isTTY === true;
  },
};

/** `cli migrate`: exit 0 when everything selected is at the target, 1 otherwise, 2 on bad usage or no cluster. */
export async function runMigrate(
  args: readonly string[],
  io: CommandIo,
  env: Readonly<Record<string, string | undefined>>,
  proc: MigrateProcess = processSignals,
  clock: Clock = systemClock,
): Promise<number> {
  if (asksForHelp(args)) {
    io.stdout.write(`${MIGRATE_HELP}\n`);
    return 0;
  }
  const usage = (message: string) => {
    io.stderr.write(`machine-api-migration migrate: ${message}\n${MIGRATE_USAGE}\n`);
    return 2;
  };
  const connected = connectFromSettings("migrate", args, env, MIGRATE_FLAGS, existsSync, clock);
  if (!connected.ok) return usage(connected.error);
  const { config, connection, flags } = connected;
  const str = (name: string) => (typeof flags[name] === "string" ? (flags[name] as string) : undefined);
  const toText = str("to");
  if (toText === undefined) return usage("--to is required (ClusterAPI or MachineAPI)");
  const target = AUTHORITIES[toText.toLowerCase()];
  if (!target) return usage(`--to must be ClusterAPI or MachineAPI, not ${JSON.stringify(toText)}`);
  const output = str("output") ?? "text";
  if (output !== "text" && output !== "json")
    return usage(`-o must be text or json, not ${JSON.stringify(output)}`);
  const maxText = str("max-in-flight");
  // Digits only: `Number` would also read 0x10, 1e1, 2.0 and " 3 " as whole numbers.
  const maxInFlight =
    maxText === undefined ? DEFAULT_MAX_IN_FLIGHT : /^\d+$/.test(maxText) ? Number(maxText) : Number.NaN;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > 100)
    return usage(`--max-in-flight must be a whole number from 1 to 100, not ${JSON.stringify(maxText)}`);
  const timeoutText = str("timeout");
  const timeoutMs =
    timeoutText === undefined ? config.migrationStuckAfter * 1000 : parseDuration(timeoutText);
  if (timeoutMs === undefined)
    return usage(`--timeout must be a duration such as 90s, 15m or 1h, not ${JSON.stringify(timeoutText)}`);
  if (timeoutMs > MAX_TIMEOUT_MS)
    return usage(`--timeout must be at most 24h, not ${JSON.stringify(timeoutText)}`);
  const selector = str("selector");
  // kubectl reads an empty selector as "everything"; for a command that moves machines, `-l "$POOL"` with POOL
  // unset must not move the whole fleet (decision 186): an empty value is a missing one.
  if (selector !== undefined && selector.trim() === "")
    return usage(`flag ${selectorFlagAsTyped(args)} needs a value`);
  if (selector !== undefined) {
    const parsed = parseLabelSelector(selector);
    if (typeof parsed === "string") return usage(`--selector ${JSON.stringify(selector)}: ${parsed}`);
  }

  const { client, transport } = connection;
  // The Lease's renewTime, the flips' and the Events' times are the cluster's: the run judges them on its clock.
  const cluster = connected.clusterClock;
  const { server } = connected;
  let support: Support;
  let platform: PlatformConverter;
  let controllers: { running: boolean; detail: string };
  try {
    const [s, lease, served] = await Promise.all([
      readSupport(client),
      getOrAbsent(client, KINDS.lease, config.capiNamespace, config.leaseName),
      readServedPlatform(client),
    ]);
    support = s;
    platform = served.platform;
    const state = leaseState(lease, cluster.now());
    controllers = state.held
      ? { running: true, detail: `Lease held by ${state.holder}` }
      : {
          running: false,
          detail: `Lease ${config.capiNamespace}/${config.leaseName} (setting leaseName) is not held: ${state.why}`,
        };
  } catch (e) {
    io.stderr.write(
      `machine-api-migration migrate: cannot read the cluster at ${server} (${connected.source}): ${errorText(e)}\n`,
    );
    return 2;
  }

  const namespaces: Namespaces = { mapiNamespace: config.mapiNamespace, capiNamespace: config.capiNamespace };
  const cache = createCache({ transport, clock, logger: pino({ level: "silent" }) });
  const informers = [
    ...readKinds(namespaces, platform).map(([type, namespace]) => cache.informerFor(type, namespace)),
    // Only what `migrate` reads: every other Event of the namespace would be cached, and wake the run, for nothing.
    cache.informerFor(KINDS.event, namespaces.mapiNamespace, { fieldSelector: BLOCKED_EVENTS }),
  ];
  try {
    try {
      // A 401 or 403 will not mend itself: say so at once rather than after the whole wait.
      await cache.waitForSync(SYNC_TIMEOUT_MS, refusesAccess);
    } catch (e) {
      io.stderr.write(
        `machine-api-migration migrate: cannot watch the cluster at ${server} (${connected.source}): ${errorText(e)}\n`,
      );
      return 2;
    }
    const write = (text: string) => io.stdout.write(text);
    const reporter =
      output === "json"
        ? jsonReporter(write)
        : textReporter(write, { tty: proc.isTTY, namespace: namespaces.mapiNamespace, target });
    const result = await migrate(
      {
        ...namespaces,
        target,
        ...(selector !== undefined ? { selector } : {}),
        machineSetsOnly: flags["machinesets-only"] === true,
        maxInFlight,
        dryRun: flags["dry-run"] === true,
        timeoutMs,
      },
      {
        store: cache,
        subscribe(onChange) {
          const offs = informers.map((i) =>
            i.addHandlers({ onAdd: onChange, onUpdate: onChange, onDelete: onChange }),
          );
          return () => {
            for (const off of offs) off();
          };
        },
        flip(kind, name, to) {
          return client.patch(
            mapiType(kind),
            namespaces.mapiNamespace,
            name,
            { type: "merge", body: { spec: { authoritativeAPI: to } } },
            { fieldManager: MIGRATE_FIELD_MANAGER },
          );
        },
        read: (kind, name) => getOrAbsent(client, mapiType(kind), namespaces.mapiNamespace, name),
        events: async (kind, name) =>
          (
            await client.list(KINDS.event, {
              namespace: namespaces.mapiNamespace,
              fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}`,
            })
          ).items,
        support,
        controllers,
        clock: cluster,
        reporter,
        onInterrupt: (handler) => proc.onInterrupt(handler),
      },
    );
    return result.code;
  } finally {
    await cache.stop();
  }
}
