/**
 * The pure core of `cli migrate` (SPEC §12): from the listed MAPI Machines and MachineSets and the very
 * checks `preflight` runs (./preflight.ts `preflightReport`, imported, never copied), which objects are
 * done, which handovers are open, which can be flipped now, which wait and for what, and which are
 * blocked and why — with the waves the flips go in (MachineSets first, then their members, then standalone
 * Machines; at most N open handovers per wave). Also the judgement of one open handover (complete, still
 * running, or failed: MigrationBlocked, Synchronized=False persisting, cancelled, gone, stuck past the
 * timeout) and the text the command prints. No I/O and no clock: `now` is passed in. The shell that
 * watches the cluster and writes `spec.authoritativeAPI` is ./migrate.ts.
 */
import type { StableAuthority } from "../kube/kinds.js";
import { CONDITIONS, KINDS, MAPI_GROUP } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { conditionOf, getPath, nameOf, timeMs } from "../kube/object.js";
import { appendAll } from "../lists.js";
import type { Problem } from "../migration/preconditions.js";
import type { HandoverKind } from "../migration/snapshot.js";
import { EVENT_REASONS } from "../migration/steps.js";
import type { ConvertibilityCheck, ObjectStore } from "../policies/types.js";
import { opposite, specAuthority, statusAuthorityReading, synchronizedAPI } from "../protocol/authority.js";
import { hasPauseMarker, isPaused } from "../protocol/pause.js";
import type { Support } from "../supported.js";
import { type Blocker, type PreflightRow, preflightReport } from "./preflight.js";
import type { Namespaces } from "./shell.js";
import { oneLine } from "./terminal.js";

/** The three groups of SPEC §12, in the order they move. */
export type Group = "MachineSets" | "members" | "standalone";
const GROUP_ORDER: readonly Group[] = ["MachineSets", "members", "standalone"];

export type ItemState =
  /** status and spec already name the target. */
  | { state: "done" }
  /**
   * A handover toward the target is open: spec names it, status does not yet. `notBegun`: for one whose status
   * still names the old authority, what keeps it from beginning as the planner sees it (SPEC §3.1 step 4 and
   * admission's checks) — what the controller's MigrationBlocked or Waiting… Event said, which may have expired.
   */
  | { state: "open"; notBegun?: Blocker[] }
  /** Goes in wave `wave` (1 = the next flips); `waitsFor` says what must finish first (empty for wave 1). */
  | { state: "queued"; wave: number; waitsFor: string[] }
  /** Will not move in this run as things stand. */
  | { state: "blocked"; blockers: Blocker[] };

export type PlanItem = {
  kind: HandoverKind;
  name: string;
  group: Group;
  /** Members: the MAPI MachineSet that owns the Machine. */
  machineSet?: string;
} & ItemState;

export interface PlanInput {
  store: ObjectStore;
  namespaces: Namespaces;
  support: Support;
  target: StableAuthority;
  /** The `--selector` predicate over MAPI objects (both kinds); absent selects everything. */
  selects?: (o: KubeObject) => boolean;
  machineSetsOnly: boolean;
  maxInFlight: number;
  /** Whether the product's controllers run (their Lease is held): without them no flip would ever complete. */
  controllers: { running: boolean; detail: string };
  checkConvertible?: ConvertibilityCheck;
}

export interface MigrationPlan {
  target: StableAuthority;
  maxInFlight: number;
  /** Reasons nothing may be flipped at all (unsupported cluster, controllers not running). */
  refusals: string[];
  items: PlanItem[];
  /** Item keys (`Kind/name`) per wave, wave 1 first; open handovers are not in any wave. */
  waves: string[][];
  summary: { objects: number; done: number; open: number; queued: number; blocked: number };
}

export const itemKey = (i: { kind: HandoverKind; name: string }): string => `${i.kind}/${i.name}`;

const ownerSetOf = (machine: KubeObject): string | undefined => {
  const owners = machine.metadata?.ownerReferences;
  if (!Array.isArray(owners)) return undefined;
  const owner = owners.find(
    (o) =>
      o?.kind === "MachineSet" && typeof o.apiVersion === "string" && o.apiVersion.startsWith("machine."),
  );
  return typeof owner?.name === "string" ? owner.name : undefined;
};

const blockedBy = (message: string, rule: Problem["reason"] = "MigrationBlocked"): Blocker => ({
  source: "handover",
  rule,
  message,
});

/**
 * rule `state`: where one object stands with respect to the target, from its MAPI copy and preflight's row.
 * Candidates (status = spec = the other authority) are `queued` here when preflight finds them ready; the
 * waves are assigned afterwards.
 */
function stateOf(mapi: KubeObject, row: PreflightRow | undefined, target: StableAuthority): ItemState {
  const status = statusAuthorityReading(mapi);
  const spec = specAuthority(mapi);
  if (status === target)
    return spec === target
      ? { state: "done" }
      : {
          state: "blocked",
          blockers: [
            blockedBy(
              `spec.authoritativeAPI asks for ${spec ?? "(unset)"}: a handover away from ${target} was requested; migrate --to ${target} will not undo it`,
            ),
          ],
        };
  if (status === "Migrating") {
    const old = synchronizedAPI(mapi);
    if (old === opposite(target) && spec === target) return { state: "open" };
    // Toward the target, but spec was set back: the controllers are rolling a cancel back. Waiting for it as
    // an open handover would wait for a flip that is not coming; flipping it again would undo someone's cancel.
    if (old === opposite(target))
      return {
        state: "blocked",
        blockers: [
          blockedBy(
            `a handover from ${old} to ${target} is being cancelled (spec.authoritativeAPI is ${spec ?? "(unset)"} again); migrate --to ${target} will not undo a cancel: run it again once status.authoritativeAPI is ${old}`,
          ),
        ],
      };
    return { state: "blocked", blockers: row?.blockers ?? [] };
  }
  if (status === "absent")
    return {
      state: "blocked",
      blockers: [
        blockedBy(
          "status.authoritativeAPI is not set yet (the controllers copy spec to status first)",
          "WaitingForSync",
        ),
      ],
    };
  if (status === "invalid") return { state: "blocked", blockers: row?.blockers ?? [] };
  // status is the other authority.
  if (spec === target)
    return row?.blockers.length ? { state: "open", notBegun: row.blockers } : { state: "open" };
  if (row?.verdict !== "ready") return { state: "blocked", blockers: row?.blockers ?? [] };
  return { state: "queued", wave: 0, waitsFor: [] };
}

/**
 * rule `waves`: queued items go in waves of at most `maxInFlight`, a group only once every queued item of
 * the groups before it has gone (MachineSets, then members, then standalone Machines), and a member only
 * once its MachineSet — when this run moves it — is done. Open handovers occupy the first wave's slots
 * (the shell waits for them before it flips anything). A member of a MachineSet that is blocked is blocked.
 * One pass per group: each group's queued items, in order, cut into waves (decision 146).
 */
export function assignWaves(items: PlanItem[], maxInFlight: number): string[][] {
  const byKey = new Map(items.map((i) => [itemKey(i), i]));
  const setKey = (name: string) => itemKey({ kind: "MachineSet", name });
  // Members of a blocked (in scope) MachineSet cannot go before it.
  for (const item of items) {
    if (item.state !== "queued" || !item.machineSet) continue;
    const set = byKey.get(setKey(item.machineSet));
    if (set?.state === "blocked")
      Object.assign(item, {
        state: "blocked",
        blockers: [
          blockedBy(
            `waits for MAPI MachineSet ${item.machineSet}, which is blocked (MachineSets move before their Machines)`,
          ),
        ],
      });
  }
  // A member's MachineSet in scope is now done, open (wave 0) or queued in the group before, so it has gone
  // before any member: cutting each group in order keeps "a member only after its set".
  const byGroup = new Map<Group, PlanItem[]>(GROUP_ORDER.map((g) => [g, []]));
  let open = 0;
  for (const item of items) {
    if (item.state === "open") open++;
    if (item.state === "queued") byGroup.get(item.group)?.push(item);
  }
  const size = Math.max(1, maxInFlight);
  const waves: string[][] = [];
  for (const queued of byGroup.values())
    for (let first = 0; first < queued.length; first += size) {
      const wave = queued.slice(first, first + size);
      const number = waves.length + 1;
      for (const item of wave) {
        const waitsFor: string[] = [];
        if (number > 1) {
          if (item.machineSet && byKey.has(setKey(item.machineSet)))
            waitsFor.push(`MachineSet ${item.machineSet}`);
          waitsFor.push(`wave ${number - 1}`);
        } else if (open > 0) waitsFor.push(`${open} open handover${open === 1 ? "" : "s"}`);
        Object.assign(item, { wave: number, waitsFor });
      }
      waves.push(wave.map(itemKey));
    }
  return waves;
}

/** The whole plan (SPEC §12): preflight's report turned into what this run does, in order. */
export function planMigration(input: PlanInput): MigrationPlan {
  const report = preflightReport({
    store: input.store,
    namespaces: input.namespaces,
    support: input.support,
    ...(input.checkConvertible ? { checkConvertible: input.checkConvertible } : {}),
  });
  const rowOf = new Map(report.rows.map((r) => [itemKey(r), r]));
  const selects = input.selects ?? (() => true);
  const byName = (a: KubeObject, b: KubeObject) => nameOf(a).localeCompare(nameOf(b));
  const items: PlanItem[] = [];
  for (const set of [...input.store.list(KINDS.mapiMachineSet, input.namespaces.mapiNamespace)].sort(
    byName,
  )) {
    if (!selects(set)) continue;
    const name = nameOf(set);
    items.push({
      kind: "MachineSet",
      name,
      group: "MachineSets",
      ...stateOf(set, rowOf.get(itemKey({ kind: "MachineSet", name })), input.target),
    });
  }
  if (!input.machineSetsOnly) {
    const machines = [...input.store.list(KINDS.mapiMachine, input.namespaces.mapiNamespace)].sort(byName);
    const members: PlanItem[] = [];
    const standalone: PlanItem[] = [];
    for (const machine of machines) {
      if (!selects(machine)) continue;
      const name = nameOf(machine);
      const machineSet = ownerSetOf(machine);
      const state = stateOf(machine, rowOf.get(itemKey({ kind: "Machine", name })), input.target);
      if (machineSet) members.push({ kind: "Machine", name, group: "members", machineSet, ...state });
      else standalone.push({ kind: "Machine", name, group: "standalone", ...state });
    }
    appendAll(items, members, standalone);
  }
  const refusals = [
    ...input.support.reasons.map((r) => `the cluster is not supported: ${r}`),
    ...(input.controllers.running
      ? []
      : [
          `the product's controllers are not running (${input.controllers.detail}): no handover would be carried out`,
        ]),
  ];
  const waves = refusals.length > 0 ? [] : assignWaves(items, input.maxInFlight);
  if (refusals.length > 0)
    for (const item of items)
      if (item.state === "queued")
        Object.assign(item, { state: "blocked", blockers: refusals.map((r) => blockedBy(r)) });
  const count = (s: ItemState["state"]) => items.filter((i) => i.state === s).length;
  return {
    target: input.target,
    maxInFlight: input.maxInFlight,
    refusals,
    items,
    waves,
    summary: {
      objects: items.length,
      done: count("done"),
      open: count("open"),
      queued: count("queued"),
      blocked: count("blocked"),
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// One open handover

/** How long `Synchronized=False` may persist on an open handover before the run stops on it. */
export const SYNCHRONIZED_FALSE_GRACE_MS = 30_000;

export interface HandoverWatch {
  target: StableAuthority;
  /** When this run flipped it (or, resumed, first saw it open). */
  since: number;
  /** When `Synchronized=False` was first seen on it without a True in between. */
  synchronizedFalseSince?: number;
  /** The watch has shown spec.authoritativeAPI = target since the flip (a cache lags behind the write). */
  specSeen: boolean;
  /** The latest `MigrationBlocked` Event about it since `since`, if any. */
  blockedEvent?: string;
}

/**
 * When spec.authoritativeAPI was last written, from managedFields (the newest main-resource entry whose
 * fieldsV1 names `f:spec` `f:authoritativeAPI`): a resumed run times a handover it finds open from its flip,
 * not from when it looked. Undefined when no entry says so.
 */
export function flipTimeOf(mapi: KubeObject | undefined): number | undefined {
  const entries = mapi?.metadata?.managedFields;
  if (!Array.isArray(entries)) return undefined;
  let newest: number | undefined;
  for (const e of entries) {
    if (!e || typeof e !== "object" || e.subresource) continue;
    const spec = (e.fieldsV1 as Record<string, unknown> | undefined)?.["f:spec"];
    if (!spec || typeof spec !== "object" || !("f:authoritativeAPI" in spec)) continue;
    const at = timeMs(e.time);
    if (at !== undefined && (newest === undefined || at > newest)) newest = at;
  }
  return newest;
}

export type HandoverOutcome =
  | { outcome: "complete" }
  | { outcome: "running"; step: string }
  | {
      outcome: "failed";
      reason: "MigrationBlocked" | "SynchronizedFalse" | "Stuck" | "Cancelled" | "Gone";
      message: string;
      /**
       * status.authoritativeAPI reached the target: the handover is over, and what failed is the new side's
       * sync (or step 11) — nothing is left open, and a cancel would start a handover back (decision 184).
       */
      completed?: true;
    };

/**
 * rule `complete`: an open handover is complete once status.authoritativeAPI is the target, spec still asks
 * for it, `Synchronized` is True again (step 10 set it Unknown, so a True is the new side's first sync), and,
 * toward ClusterAPI, the CAPI twin no longer carries the product's pause (step 11). It has failed when the
 * controller reported `MigrationBlocked`, `Synchronized=False` persisted for the grace period, spec was set
 * back (a cancel, once the watch had shown the flip) or the object went away; it is stuck once `timeoutMs`
 * passed since `since`. Once status is the target the handover itself is over (step 10): a persisting
 * `Synchronized=False` or a timeout then fails it `completed` — a sync problem, never an open handover — and
 * an earlier `MigrationBlocked` no longer counts (decision 184).
 */
export function judgeHandover(
  mapi: KubeObject | undefined,
  capiTwin: KubeObject | undefined,
  watch: HandoverWatch,
  now: number,
  timeoutMs: number,
): HandoverOutcome {
  if (!mapi) return { outcome: "failed", reason: "Gone", message: "the MAPI object was deleted" };
  const spec = specAuthority(mapi);
  const status = statusAuthorityReading(mapi);
  const synced = conditionOf(mapi, CONDITIONS.synchronized);
  if (spec !== watch.target && !watch.specSeen)
    // Bounded like every other wait: a flip the watch never shows is stuck, not waited on forever.
    return now - watch.since >= timeoutMs
      ? {
          outcome: "failed",
          reason: "Stuck",
          message: `not complete after ${Math.round(timeoutMs / 1000)} s (spec.authoritativeAPI is ${spec ?? "(unset)"}: the flip to ${watch.target} was never seen)`,
        }
      : { outcome: "running", step: "waiting for the watch to show the flip" };
  if (spec !== watch.target)
    return {
      outcome: "failed",
      reason: "Cancelled",
      message: `spec.authoritativeAPI was set to ${spec ?? "(unset)"} by someone else (status.authoritativeAPI is ${status})`,
    };
  const twinReleased =
    watch.target !== "ClusterAPI" || !capiTwin || !(isPaused(capiTwin) && hasPauseMarker(capiTwin));
  if (status === watch.target && synced?.status === "True" && twinReleased) return { outcome: "complete" };
  const syncFalsePersisted =
    synced?.status === "False" &&
    watch.synchronizedFalseSince !== undefined &&
    now - watch.synchronizedFalseSince >= Math.min(SYNCHRONIZED_FALSE_GRACE_MS, timeoutMs);
  if (status === watch.target) {
    const completed = `the handover completed (status.authoritativeAPI is ${status})`;
    if (syncFalsePersisted)
      return {
        outcome: "failed",
        reason: "SynchronizedFalse",
        completed: true,
        message: `${completed}, but Synchronized is False (${synced?.reason ?? ""}: ${synced?.message ?? ""}): a sync problem, not an open handover`,
      };
    if (now - watch.since >= timeoutMs)
      return {
        outcome: "failed",
        reason: "Stuck",
        completed: true,
        message: `${completed}, but after ${Math.round(timeoutMs / 1000)} s ${
          synced?.status === "True"
            ? "the CAPI twin still carries the product's pause (step 11 has not run)"
            : `Synchronized is ${synced?.status ?? "unset"}${synced?.reason ? ` (${synced.reason})` : ""}: the new side's first sync has not run`
        }`,
      };
    return { outcome: "running", step: "completing" };
  }
  if (watch.blockedEvent)
    return { outcome: "failed", reason: "MigrationBlocked", message: watch.blockedEvent };
  if (syncFalsePersisted)
    return {
      outcome: "failed",
      reason: "SynchronizedFalse",
      message: `Synchronized is False (${synced?.reason ?? ""}: ${synced?.message ?? ""})`,
    };
  if (now - watch.since >= timeoutMs)
    return {
      outcome: "failed",
      reason: "Stuck",
      message: `not complete after ${Math.round(timeoutMs / 1000)} s (status.authoritativeAPI is ${status}, Synchronized is ${synced?.status ?? "unset"}${synced?.reason ? ` (${synced.reason})` : ""})`,
    };
  return {
    outcome: "running",
    step:
      status === "Migrating"
        ? `Migrating (${synced?.reason ?? "Synchronized unset"})`
        : "waiting for the controller to start it",
  };
}

/** When an Event last happened: its `lastTimestamp`, else its `eventTime`, else its `firstTimestamp`. */
export const eventTimeMs = (e: KubeObject): number | undefined =>
  timeMs(e.lastTimestamp) ?? timeMs(getPath(e, ["eventTime"])) ?? timeMs(e.firstTimestamp);

const HANDOVER_REASONS: ReadonlySet<string> = new Set(EVENT_REASONS);

/** How long ago, as a person reads it: seconds up to two minutes, minutes up to two hours, then hours. */
const ago = (ms: number): string =>
  ms < 120_000
    ? `${Math.max(0, Math.round(ms / 1000))} s`
    : ms < 7_200_000
      ? `${Math.round(ms / 60_000)} min`
      : `${Math.round(ms / 3_600_000)} h`;

/**
 * For a stuck handover: what the migration controller last said about it since its flip (`since`), from the
 * Events about the MAPI object — the newest whose reason is a handover's (SPEC §3.4: one per transition, so
 * a wait's Event is as old as the wait). The controller's Events are about the MAPI object; the CAPI twin of
 * the same name has other Events, told apart by the involved object's API group.
 */
export function lastReport(events: readonly KubeObject[], since: number, now: number): string {
  let newest: { at: number; e: KubeObject } | undefined;
  for (const e of events) {
    const about = getPath(e, ["involvedObject", "apiVersion"]);
    if (typeof about !== "string" || !about.startsWith(`${MAPI_GROUP}/`)) continue;
    if (typeof e.reason !== "string" || !HANDOVER_REASONS.has(e.reason)) continue;
    const at = eventTimeMs(e);
    if (at === undefined || at < since) continue;
    if (!newest || at >= newest.at) newest = { at, e };
  }
  if (!newest)
    return "; the controller has recorded no Event about it since the flip (Events expire after kube-apiserver's --event-ttl)";
  return `; the controller last reported ${String(newest.e.reason)} ${ago(now - newest.at)} ago: ${String(newest.e.message ?? "")}`;
}

// ---------------------------------------------------------------------------------------------------
// What the admin reads and runs

const resourceOf = (kind: HandoverKind): string =>
  kind === "Machine" ? "machines.machine.openshift.io" : "machinesets.machine.openshift.io";

/** The command that flips (or cancels) one object, as the README writes it. */
const patchCommand = (
  kind: HandoverKind,
  name: string,
  namespace: string,
  authority: StableAuthority,
): string =>
  `oc patch ${resourceOf(kind)}/${name} -n ${namespace} --type merge -p '{"spec":{"authoritativeAPI":"${authority}"}}'`;

/** How to resolve a handover this run leaves open: let it finish, cancel it, or end it for an uninstall. */
export const resolutionLines = (
  open: ReadonlyArray<{ kind: HandoverKind; name: string }>,
  namespace: string,
  target: StableAuthority,
): string[] =>
  open.length === 0
    ? []
    : [
        `${open.length} handover${open.length === 1 ? " is" : "s are"} left open; the controllers carry ${open.length === 1 ? "it" : "them"} on. Run migrate --to ${target} again to wait for ${open.length === 1 ? "it" : "them"} and continue, or cancel:`,
        ...open.map((o) => `  ${patchCommand(o.kind, o.name, namespace, opposite(target))}`),
        "(before removing the product, uninstall-prepare --resolve-migrations ends every open handover instead)",
      ];

const blockerText = (b: Blocker): string[] =>
  b.source === "admission" && b.fieldErrors && b.fieldErrors.length > 0
    ? b.fieldErrors.map((e) => `admission ${b.rule}: ${e}`)
    : [`${b.source} ${b.rule}: ${b.message}`];

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export const planSummaryLine = (plan: MigrationPlan): string => {
  const s = plan.summary;
  return `migrate to ${plan.target}: ${plural(s.objects, "object")} — ${s.done} done, ${s.open} in flight, ${s.queued} to flip in ${plural(plan.waves.length, "wave")} (at most ${plan.maxInFlight} at a time), ${s.blocked} blocked`;
};

/** The plan as text: the summary, each wave, the open handovers, and every blocked object with its reasons. */
export function renderPlan(plan: MigrationPlan, namespace: string): string {
  const lines = [planSummaryLine(plan)];
  for (const r of plan.refusals) lines.push(`  refusing to flip anything: ${r}`);
  const byKey = new Map(plan.items.map((i) => [itemKey(i), i]));
  const open = plan.items.filter((i) => i.state === "open");
  if (open.length > 0)
    lines.push(`in flight: ${open.map((i) => `${i.kind} ${namespace}/${i.name}`).join(", ")}`);
  plan.waves.forEach((wave, n) => {
    const first = byKey.get(wave[0]!);
    const after = (i: PlanItem | undefined) =>
      i?.machineSet && n > 0 && byKey.has(itemKey({ kind: "MachineSet", name: i.machineSet }))
        ? ` (after MachineSet ${i.machineSet})`
        : "";
    lines.push(
      `wave ${n + 1} (${first?.group}): ${wave.map((k) => `${k.replace("/", ` ${namespace}/`)}${after(byKey.get(k))}`).join(", ")}`,
    );
  });
  const blocked = plan.items.filter((i) => i.state === "blocked");
  if (blocked.length > 0) lines.push("blocked:");
  for (const item of blocked) {
    lines.push(`  ${item.kind} ${namespace}/${item.name}`);
    if (item.state === "blocked")
      for (const b of item.blockers) for (const l of blockerText(b)) lines.push(`    ${l}`);
  }
  // Each line carries what others wrote (condition and refusal messages): escaped, on its own (decision 155).
  return `${lines.map(oneLine).join("\n")}\n`;
}
