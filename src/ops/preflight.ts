/**
 * `cli preflight` (issue 9): for every MAPI Machine and MachineSet, would a migration be possible now, and
 * if not, why — the admission rules that would refuse the `spec.authoritativeAPI` edit (SPEC §2.3), every
 * field that does not convert (SPEC §5), and the handover preconditions the controller would wait on
 * (SPEC §3.1 step 4) — plus the supported-cluster checks of SPEC §0.1. `preflightReport` is pure (a view
 * and the support verdict in, a report out) and asks the very rules and checks admission and the planner
 * use, so preflight can never disagree with them; `runPreflight` is the shell that lists the cluster once.
 */

import { asksForHelp, type CommandFlags } from "../config.js";
import type { StableAuthority } from "../kube/kinds.js";
import { CONDITIONS, KINDS, MAPI_GROUP, MAPI_VERSION } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { conditionOf, nameOf, namespaceOf } from "../kube/object.js";
import type { Problem } from "../migration/preconditions.js";
import { migrationRefusals } from "../migration/preconditions.js";
import { readHandoverSnapshot } from "../migration/read-snapshot.js";
import type { HandoverKind } from "../migration/snapshot.js";
import { ruleContext } from "../policies/engine.js";
import {
  migrationMachineBusy,
  migrationTwinNotReady,
  migrationUnconvertible,
  migrationUnsupportedOwner,
} from "../policies/rules/migration.js";
import type { AdmissionRequest, ConvertibilityCheck, ObjectStore, PolicyContext } from "../policies/types.js";
import type { Rule } from "../policies/verdict.js";
import { clusterView } from "../policies/view.js";
import { opposite, specAuthority, statusAuthorityReading, synchronizedAPI } from "../protocol/authority.js";
import { readSupport, type Support } from "../supported.js";
import { checkConvertible, formatFieldError } from "../sync/conversion/index.js";
import { type CommandIo, connectFromSettings, errorText, type Namespaces, readCluster } from "./shell.js";
import { oneLine } from "./terminal.js";

/** The admission rules that judge an edit of `spec.authoritativeAPI` (SPEC §2.3), in the order they run. */
const MIGRATION_RULES: readonly Rule[] = Object.freeze([
  migrationUnsupportedOwner,
  migrationMachineBusy,
  migrationTwinNotReady,
  migrationUnconvertible,
]);

/** One reason a migration would not happen now. */
export type Blocker =
  | {
      /** An admission rule would refuse the edit of spec.authoritativeAPI. */
      source: "admission";
      rule: string;
      message: string;
      hint: string;
      /** `migration-unconvertible` only: each field error, formatted the way Kubernetes prints them. */
      fieldErrors?: string[];
    }
  /** The handover controller would not start (SPEC §3.1 step 4); `rule` is the Event reason it reports. */
  | { source: "handover"; rule: Problem["reason"]; message: string }
  /** A handover is already running. */
  | { source: "state"; rule: "Migrating"; message: string };

export type Verdict = "ready" | "blocked" | "migrating";

export interface PreflightRow {
  kind: HandoverKind;
  namespace: string;
  name: string;
  specAuthority: string;
  statusAuthority: string;
  synchronized: { status: string; reason?: string; message?: string };
  /** The authority a migration would hand over to; undefined when it cannot be told. */
  target?: StableAuthority;
  verdict: Verdict;
  blockers: Blocker[];
}

export interface PreflightReport {
  /** SPEC §0.1: without these the product enforces nothing and starts no controllers. */
  support: Support & { ok: boolean };
  rows: PreflightRow[];
  summary: { objects: number; ready: number; blocked: number; migrating: number };
  /** Everything could migrate now on a supported cluster (exit code 0). */
  ok: boolean;
}

export interface PreflightInput {
  store: ObjectStore;
  namespaces: Namespaces;
  support: Support;
  /** The converters' check (src/sync/conversion); a parameter so tests can pass a fake. */
  checkConvertible?: ConvertibilityCheck;
}

const UNSET = "(unset)";

const resourceOf = (kind: HandoverKind) => (kind === "Machine" ? "machines" : "machinesets");

/** The UPDATE an admin would send to start the migration: spec.authoritativeAPI from → to. */
const migrationRequest = (
  kind: HandoverKind,
  mapi: KubeObject,
  from: StableAuthority,
  to: StableAuthority,
): AdmissionRequest => {
  const withSpec = (authority: StableAuthority): KubeObject => ({
    ...mapi,
    spec: { ...mapi.spec, authoritativeAPI: authority },
  });
  return {
    uid: `preflight-${nameOf(mapi)}`,
    kind: { group: MAPI_GROUP, version: MAPI_VERSION, kind },
    resource: { group: MAPI_GROUP, version: MAPI_VERSION, resource: resourceOf(kind) },
    name: nameOf(mapi),
    namespace: namespaceOf(mapi),
    operation: "UPDATE",
    userInfo: { username: "machine-api-migration-preflight" },
    object: withSpec(to),
    oldObject: withSpec(from),
  };
};

const admissionBlockers = (
  request: AdmissionRequest,
  ctx: PolicyContext,
  target: StableAuthority,
): Blocker[] => {
  const out: Blocker[] = [];
  const ruleCtx = ruleContext(request, ctx);
  for (const rule of MIGRATION_RULES) {
    if (!rule.appliesTo(request, ruleCtx)) continue;
    const verdict = rule.check(request, ruleCtx);
    if (verdict.kind !== "deny") continue;
    const blocker: Blocker = {
      source: "admission",
      rule: rule.id,
      message: verdict.message,
      hint: verdict.hint,
    };
    if (rule.id === migrationUnconvertible.id && request.object)
      blocker.fieldErrors = ctx.checkConvertible(request.object, target, ctx.view).map(formatFieldError);
    out.push(blocker);
  }
  return out;
};

/**
 * The handover's own refusals, less those an admission rule above already explains (the same owner,
 * provisioning state or deletion, said twice, would read as two problems). Machine-busy speaks for the
 * MAPI Machine, twin-not-ready for its CAPI twin.
 */
const handoverBlockers = (problems: readonly Problem[], admission: readonly Blocker[]): Blocker[] => {
  const rules = new Set(admission.map((b) => b.rule));
  const explained = (p: Problem): boolean => {
    if (rules.has(migrationUnsupportedOwner.id) && / cannot be migrated: it is owned by /.test(p.message))
      return true;
    const about = /^(MAPI|CAPI) Machine \S+ (is being deleted;|is not provisioned:)/.exec(p.message);
    if (!about) return false;
    return about[1] === "MAPI" ? rules.has(migrationMachineBusy.id) : rules.has(migrationTwinNotReady.id);
  };
  return problems
    .filter((p) => !explained(p))
    .map((p) => ({ source: "handover", rule: p.reason, message: p.message }));
};

const rowOf = (
  kind: HandoverKind,
  mapi: KubeObject,
  input: PreflightInput,
  ctx: PolicyContext,
): PreflightRow => {
  const spec = specAuthority(mapi);
  const status = statusAuthorityReading(mapi);
  const synced = conditionOf(mapi, CONDITIONS.synchronized);
  const row: PreflightRow = {
    kind,
    namespace: namespaceOf(mapi),
    name: nameOf(mapi),
    specAuthority: spec ?? String(mapi.spec?.authoritativeAPI ?? UNSET),
    statusAuthority:
      status === "absent" ? UNSET : status === "invalid" ? String(mapi.status?.authoritativeAPI) : status,
    synchronized: {
      status: synced?.status ?? UNSET,
      ...(synced?.reason ? { reason: synced.reason } : {}),
      ...(synced?.message ? { message: synced.message } : {}),
    },
    verdict: "blocked",
    blockers: [],
  };
  if (status === "Migrating") {
    const old = synchronizedAPI(mapi);
    if (old) row.target = opposite(old);
    row.verdict = "migrating";
    row.blockers.push({
      source: "state",
      rule: "Migrating",
      message: old
        ? `a handover from ${old} to ${opposite(old)} is in progress; wait for it to finish or cancel it (set spec.authoritativeAPI back to ${old})`
        : "a handover is in progress (status.synchronizedAPI is not set, so its source cannot be told)",
    });
    return row;
  }
  // Without a status MAO has not copied spec yet; the handover starts from what spec says.
  const from: StableAuthority | undefined =
    status === "MachineAPI" || status === "ClusterAPI" ? status : status === "absent" ? spec : undefined;
  if (from === undefined) {
    row.blockers.push({
      source: "handover",
      rule: "MigrationBlocked",
      message: `status.authoritativeAPI holds an unknown value (${row.statusAuthority})`,
    });
    return row;
  }
  const target = opposite(from);
  row.target = target;
  const snapshot = readHandoverSnapshot(input.store, kind, row.name, input.namespaces);
  const admission = admissionBlockers(migrationRequest(kind, mapi, from, target), ctx, target);
  row.blockers = [...admission, ...handoverBlockers(migrationRefusals(snapshot, from), admission)];
  row.verdict = row.blockers.length === 0 ? "ready" : "blocked";
  return row;
};

/** SPEC §0.1 checks plus one row per MAPI Machine and MachineSet (MachineSets first, then by name). */
export function preflightReport(input: PreflightInput): PreflightReport {
  const view = clusterView(input.store, input.namespaces);
  const ctx: PolicyContext = {
    view,
    settings: {
      ...input.namespaces,
      controllerUsers: [],
      requireDeleteConfirmation: true,
      cacheStaleAfterMs: Number.POSITIVE_INFINITY,
    },
    checkConvertible: input.checkConvertible ?? checkConvertible,
    enforcing: true,
  };
  const byName = (a: KubeObject, b: KubeObject) => nameOf(a).localeCompare(nameOf(b));
  const rows = [
    ...[...input.store.list(KINDS.mapiMachineSet, input.namespaces.mapiNamespace)]
      .sort(byName)
      .map((o) => rowOf("MachineSet", o, input, ctx)),
    ...[...input.store.list(KINDS.mapiMachine, input.namespaces.mapiNamespace)]
      .sort(byName)
      .map((o) => rowOf("Machine", o, input, ctx)),
  ];
  const count = (v: Verdict) => rows.filter((r) => r.verdict === v).length;
  const summary = {
    objects: rows.length,
    ready: count("ready"),
    blocked: count("blocked"),
    migrating: count("migrating"),
  };
  const supportOk = input.support.reasons.length === 0;
  return {
    support: { ...input.support, ok: supportOk },
    rows,
    summary,
    ok: supportOk && summary.ready === rows.length,
  };
}

// ---------------------------------------------------------------------------------------------------
// Rendering

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** `3 objects: 2 could migrate now, 1 blocked` (and `, 1 migrating` when handovers are open). */
export const summaryLine = (report: PreflightReport): string => {
  const s = report.summary;
  const parts = [`${s.ready} could migrate now`, `${s.blocked} blocked`];
  if (s.migrating > 0) parts.push(`${s.migrating} migrating`);
  const line = `${plural(s.objects, "object")}: ${parts.join(", ")}`;
  return report.support.ok ? line : `${line} (cluster not supported, see above)`;
};

const synchronizedText = (row: PreflightRow): string =>
  row.synchronized.reason
    ? `${row.synchronized.status} (${row.synchronized.reason})`
    : row.synchronized.status;

const verdictText = (row: PreflightRow): string =>
  row.verdict === "ready"
    ? `could migrate to ${row.target}`
    : row.verdict === "migrating"
      ? `migrating${row.target ? ` to ${row.target}` : ""}`
      : `blocked${row.target ? ` (to ${row.target})` : ""}`;

const blockerLines = (b: Blocker): string[] => {
  if (b.source === "admission" && b.fieldErrors && b.fieldErrors.length > 0)
    return b.fieldErrors.map((e) => `admission ${b.rule}: ${e}`);
  return [`${b.source} ${b.rule}: ${b.message}`];
};

/** What a person reads at a terminal: the support checks, one line per object plus indented reasons, the summary. */
export function renderTable(report: PreflightReport): string {
  const lines: string[] = [];
  if (report.support.ok)
    lines.push(
      "supported cluster: yes (MachineAPIMigration feature gate, CRD migration fields, no platform migration controllers)",
    );
  else {
    lines.push("supported cluster: NO");
    for (const reason of report.support.reasons) lines.push(`    ${reason}`);
  }
  lines.push("");
  const header = ["KIND", "NAME", "SPEC", "STATUS", "SYNCHRONIZED", "MIGRATION"];
  const cells = report.rows.map((r) =>
    [
      r.kind,
      `${r.namespace}/${r.name}`,
      r.specAuthority,
      r.statusAuthority,
      synchronizedText(r),
      verdictText(r),
    ].map(oneLine),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const format = (c: readonly string[]) =>
    c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join("  ");
  lines.push(format(header));
  report.rows.forEach((row, i) => {
    lines.push(format(cells[i]!));
    for (const b of row.blockers) for (const l of blockerLines(b)) lines.push(`    ${l}`);
  });
  lines.push("");
  lines.push(summaryLine(report));
  // Cells and reasons carry what others wrote (condition reasons, refusal messages): escaped for the terminal
  // and kept on their lines (decision 155); the cells before their widths are measured.
  return `${lines.map(oneLine).join("\n")}\n`;
}

export const renderJson = (report: PreflightReport): string => `${JSON.stringify(report, null, 2)}\n`;

// ---------------------------------------------------------------------------------------------------
// Shell

const PREFLIGHT_USAGE =
  "usage: preflight [--kubeconfig FILE] [--context NAME] [-o table|json] [--mapi-namespace NS] [--capi-namespace NS]";

const PREFLIGHT_HELP = `${PREFLIGHT_USAGE}

Reports, for every MAPI Machine and MachineSet, whether it could migrate now and why not.
Exit status: 0 everything could migrate, 1 something is blocked, 2 bad usage or an unreadable cluster.

  -o, --output table|json     output format (default table)
  --kubeconfig FILE           kubeconfig (else KUBECONFIG, else ~/.kube/config, else the pod's service account)
  --context NAME              kubeconfig context (default: its current-context)
  -h, --help                  this help
Every setting of \`config-reference\` is accepted too (e.g. --mapi-namespace, --capi-namespace), as a flag or
its MACHINE_API_MIGRATION_ variable — except MACHINE_API_MIGRATION_KUBECONFIG, which is serve's alone.`;

const PREFLIGHT_FLAGS: CommandFlags = { output: { type: "string", short: "o" } };

/**
 * `cli preflight`: exit 0 when every object could migrate now on a supported cluster, 1 otherwise, 2 on
 * bad usage, bad settings or a cluster that cannot be read.
 */
export async function runPreflight(
  args: readonly string[],
  io: CommandIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  if (asksForHelp(args)) {
    io.stdout.write(`${PREFLIGHT_HELP}\n`);
    return 0;
  }
  const connected = connectFromSettings("preflight", args, env, PREFLIGHT_FLAGS);
  if (!connected.ok) {
    io.stderr.write(`machine-api-migration preflight: ${connected.error}\n${PREFLIGHT_USAGE}\n`);
    return 2;
  }
  const { config, connection, flags } = connected;
  const output = flags.output ?? "table";
  if (output !== "table" && output !== "json") {
    io.stderr.write(
      `machine-api-migration preflight: -o must be table or json, not ${JSON.stringify(output)}\n${PREFLIGHT_USAGE}\n`,
    );
    return 2;
  }
  const namespaces = { mapiNamespace: config.mapiNamespace, capiNamespace: config.capiNamespace };
  let report: PreflightReport;
  try {
    const [support, store] = await Promise.all([
      readSupport(connection.client),
      readCluster(connection.client, namespaces),
    ]);
    report = preflightReport({ store, namespaces, support });
  } catch (e) {
    io.stderr.write(
      `machine-api-migration preflight: cannot read the cluster at ${connected.server} (${connected.source}): ${errorText(e)}\n`,
    );
    return 2;
  }
  io.stdout.write(output === "json" ? renderJson(report) : renderTable(report));
  return report.ok ? 0 : 1;
}
