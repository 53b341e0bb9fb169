/**
 * `cli uninstall-prepare` (SPEC §9): makes the cluster safe to remove the product from, in this order —
 * (1) refuse while the product's controllers hold their Lease or its Deployment asks for replicas;
 * (2) delete the three webhook configurations, so the command's own writes are not refused (the product's
 * pods are gone by then, and a Fail webhook without a server refuses every edit); (3) refuse while any
 * handover is open unless `--resolve-migrations`, which ends each one with the planner itself (cancel per
 * §3.3, or complete per §3.5 where step 9 has begun); (4) make every pause state match authority (the
 * planner's step 3 repair, which here also pauses and flags a §4.2 twin, as the sync would); (5) remove the
 * sync finalizer from every MAPI and CAPI machine object and InfraMachine. Without `--yes` it is a dry run:
 * it reads the cluster, applies every request to an in-memory copy instead of sending it, prints what it
 * would do and changes nothing. Every write is guarded (resourceVersion or a JSON Patch `test`); a 409
 * re-reads and re-plans. The pure parts are in ./uninstall-plan.ts.
 */
import { existsSync } from "node:fs";
import pino from "pino";
import { asksForHelp, type CommandFlags } from "../config.js";
import type { KubeClient } from "../kube/client.js";
import { getOrAbsent } from "../kube/client.js";
import { type Clock, systemClock } from "../kube/clock.js";
import { clockSkewNote } from "../kube/cluster-clock.js";
import { ConflictError, InvalidError, NotFoundError } from "../kube/errors.js";
import { createEventRecorder, type EventRecorder } from "../kube/events.js";
import type { ResourceType } from "../kube/kinds.js";
import { KINDS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { finalizersOf, getPath, isDeleting } from "../kube/object.js";
import { appendAll } from "../lists.js";
import { planHandover } from "../migration/planner.js";
import { describeObject } from "../migration/preconditions.js";
import { readHandoverSnapshot } from "../migration/read-snapshot.js";
import type { HandoverKind, ObjectRef } from "../migration/snapshot.js";
import type { Step } from "../migration/steps.js";
import type { PatchRequest } from "../migration/write.js";
import { requestOf } from "../migration/write.js";
import type { MemoryStore } from "../policies/memory-store.js";
import { synchronizedAPI } from "../protocol/authority.js";
import { type CommandIo, connectFromSettings, errorText, type Namespaces, readCluster } from "./shell.js";
import { oneLine } from "./terminal.js";
import {
  applyRequest,
  describeStep,
  describeTarget,
  halfDeletedTwins,
  leaseState,
  mapiObjects,
  NO_LEASE,
  needsAttentionNotes,
  openHandovers,
  syncFinalizerStep,
  syncFinalizerSteps,
  WEBHOOK_CONFIGURATIONS,
} from "./uninstall-plan.js";

/** The field manager of the command's writes (shown in managedFields). */
const UNINSTALL_FIELD_MANAGER = "machine-api-migration-uninstall";
/** A handover ends in a handful of steps; more means something keeps undoing them. */
const MAX_STEPS_PER_OBJECT = 30;
/** Conflicts tolerated per object before giving up on it (another writer keeps changing it). */
const MAX_CONFLICTS_PER_OBJECT = 5;

export interface UninstallSettings extends Namespaces {
  leaseName: string;
  /** The product's Deployment, named in the refusal's command. */
  deploymentName?: string;
}

export interface UninstallOptions {
  /** End open handovers instead of refusing (SPEC §9). */
  resolveMigrations: boolean;
  /** Send the writes; false is the dry run. */
  apply: boolean;
}

export interface UninstallDeps {
  client: KubeClient;
  clock: Clock;
  /** One line of the report. */
  print: (line: string) => void;
  /** Events on the MAPI object when a handover is ended (SPEC §3.4), as the controller would record them. */
  events?: EventRecorder;
}

export interface UninstallOutcome {
  /** 0: done (or, dry run, would be done); 1: refused or left work that needs a person. */
  code: 0 | 1;
  webhooksRemoved: number;
  handoversResolved: number;
  repairs: number;
  finalizersRemoved: number;
  problems: string[];
}

const typeOfRef = (ref: Pick<ObjectRef, "apiVersion" | "kind">): ResourceType => {
  const group = ref.apiVersion.includes("/") ? ref.apiVersion.split("/")[0] : "";
  const type = Object.values(KINDS).find((t) => t.group === group && t.kind === ref.kind);
  if (!type) throw new Error(`no known resource for ${ref.kind} ${ref.apiVersion}`);
  return type;
};

/**
 * A write that lost a race with another writer: a stale resourceVersion (409), an object gone meanwhile, or
 * a JSON Patch whose `test` failed — kube-apiserver answers that with 422, the local API server with 409.
 */
const lostRace = (e: unknown, request: PatchRequest): boolean =>
  e instanceof ConflictError ||
  e instanceof NotFoundError ||
  (e instanceof InvalidError && request.patchType === "application/json-patch+json");

/** Steps 1–5 of SPEC §9 as described at the top of this file. */
export async function uninstallPrepare(
  settings: UninstallSettings,
  options: UninstallOptions,
  deps: UninstallDeps,
): Promise<UninstallOutcome> {
  const { client, clock } = deps;
  const dry = !options.apply;
  const say = (line: string) => deps.print(dry ? `(dry run) ${line}` : line);
  const ns: Namespaces = { mapiNamespace: settings.mapiNamespace, capiNamespace: settings.capiNamespace };
  const outcome: UninstallOutcome = {
    code: 0,
    webhooksRemoved: 0,
    handoversResolved: 0,
    repairs: 0,
    finalizersRemoved: 0,
    problems: [],
  };
  const refuse = (lines: string[]): UninstallOutcome => {
    for (const l of lines) deps.print(l);
    return { ...outcome, code: 1 };
  };

  // (1) The Lease: while a leader runs, it would re-plan (and undo) every write made here.
  const leaseName = `${settings.capiNamespace}/${settings.leaseName}`;
  const lease = leaseState(
    await getOrAbsent(client, KINDS.lease, settings.capiNamespace, settings.leaseName),
    clock.now(),
  );
  const deployment = settings.deploymentName ?? "machine-api-migration";
  const scaleToZero = `  oc scale deployments.apps/${deployment} -n ${settings.capiNamespace} --replicas=0`;
  if (lease.held) {
    return refuse([
      `refusing: the product's controllers hold Lease ${leaseName} (holder ${lease.holder}, renewed ${lease.renewedAt}, valid until ${lease.expiresAt}).`,
      `Scale the product to zero first, then run this again once the Lease is released or expired:`,
      scaleToZero,
    ]);
  }
  // No Lease at all is what a stopped product that never ran leaves — and what a mistyped --capi-namespace or
  // --lease-name finds while the product runs: told apart by the namespace and the product's Deployment.
  if (lease.why === NO_LEASE && !(await getOrAbsent(client, KINDS.namespace, "", settings.capiNamespace)))
    return refuse([
      `refusing: namespace ${settings.capiNamespace} does not exist, so neither does Lease ${leaseName}: is --capi-namespace right?`,
    ]);
  // A released or expired Lease is what a leader between terms leaves too (a rolling restart, a pod starting):
  // while the Deployment asks for replicas, its controllers take the Lease again and undo what this writes
  // (decision 182). A Deployment scaled to zero (or absent) is the only proof the product is stopped.
  const running = await getOrAbsent(client, KINDS.deployment, settings.capiNamespace, deployment);
  const replicas = running ? (getPath(running, ["spec", "replicas"]) ?? 1) : 0;
  if (replicas !== 0)
    return refuse([
      lease.why === NO_LEASE
        ? `refusing: there is no Lease ${leaseName}, but Deployment ${settings.capiNamespace}/${deployment} asks for ${replicas} replicas, whose controllers take a Lease: is --lease-name right?`
        : `refusing: Deployment ${settings.capiNamespace}/${deployment} asks for ${replicas} replicas, whose controllers would take Lease ${leaseName} again (it is ${lease.why}).`,
      `Scale the product to zero first, then run this again:`,
      scaleToZero,
    ]);
  deps.print(`Lease ${leaseName}: not held (${lease.why})`);
  // A MAPI namespace that does not exist lists no MAPI object: no open handover and no half-deleted twin would
  // be seen, and the CAPI side's sync finalizers would be removed regardless (decision 170).
  if (!(await getOrAbsent(client, KINDS.namespace, "", settings.mapiNamespace)))
    return refuse([
      `refusing: namespace ${settings.mapiNamespace} does not exist: is --mapi-namespace right?`,
    ]);

  // (2) The webhook configurations, each deleted with the uid and resourceVersion it was read at.
  for (const { type, name } of WEBHOOK_CONFIGURATIONS) {
    const found = await getOrAbsent(client, type, "", name);
    if (!found) {
      deps.print(`${type.kind} ${name}: already absent`);
      continue;
    }
    if (!dry) {
      try {
        await client.delete(type, "", name, {
          preconditions: {
            uid: found.metadata?.uid ?? "",
            resourceVersion: found.metadata?.resourceVersion ?? "",
          },
        });
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
      }
    }
    outcome.webhooksRemoved++;
    say(`deleted ${type.kind} ${name}`);
  }

  // (3) Open handovers.
  let store: MemoryStore = await readCluster(client, ns);
  const open = openHandovers(store, ns);
  if (open.length > 0 && !options.resolveMigrations) {
    const lines = open.map(({ kind, name }) => {
      const mapi = store.get(
        kind === "Machine" ? KINDS.mapiMachine : KINDS.mapiMachineSet,
        ns.mapiNamespace,
        name,
      );
      const old = mapi ? synchronizedAPI(mapi) : undefined;
      return `  ${describeObject(kind, "mapi", mapi)} is Migrating${old ? ` (from ${old})` : ""}`;
    });
    return refuse([
      `refusing: ${open.length} handover${open.length === 1 ? " is" : "s are"} open:`,
      ...lines,
      "Re-run with --resolve-migrations to end each one now (cancelled, or completed where its old side already released its finalizers),",
      "or scale the product back up and re-apply its manifests to let them finish.",
    ]);
  }

  /**
   * Sends (or, dry run, applies in memory) one request and keeps the store in step with the answer: the
   * object as the server returned it, or gone when the write released its last finalizer while deleting.
   */
  const execute = async (request: PatchRequest): Promise<void> => {
    const { target } = request;
    const type = typeOfRef(target);
    let after: KubeObject;
    if (dry) {
      const current = store.get(type, target.namespace, target.name);
      if (!current) throw new NotFoundError(404, "NotFound", `${describeTarget(target)} not found`);
      after = applyRequest(current, request);
    } else {
      after = await client.patch(
        type,
        target.namespace,
        target.name,
        request.patchType === "application/merge-patch+json"
          ? { type: "merge", body: request.body }
          : { type: "json", body: request.body },
        {
          fieldManager: UNINSTALL_FIELD_MANAGER,
          ...(request.patchType === "application/merge-patch+json" && request.subresource
            ? { subresource: request.subresource }
            : {}),
        },
      );
    }
    const withType: KubeObject = {
      ...after,
      apiVersion: after.apiVersion ?? target.apiVersion,
      kind: after.kind ?? target.kind,
    };
    if (isDeleting(withType) && finalizersOf(withType).length === 0) store.remove(withType);
    else store.put(withType);
  };

  /** A conflict or a vanished object: read everything again and re-plan from what the server holds. */
  const reread = async (): Promise<void> => {
    if (!dry) store = await readCluster(client, ns);
  };

  // (3, resolved) and (4): re-plan each MAPI object until the planner has nothing left to do.
  const settle = async (kind: HandoverKind, name: string, now: Date): Promise<void> => {
    let conflicts = 0;
    for (let i = 0; i < MAX_STEPS_PER_OBJECT; i++) {
      const snapshot = readHandoverSnapshot(store, kind, name, ns);
      const step: Step = planHandover(snapshot, now, { resolveOpenHandovers: true });
      if (step.kind === "done") return;
      const request = requestOf(step);
      if (!request) {
        outcome.problems.push(`${describeObject(kind, "mapi", snapshot.mapi)}: ${describeStep(step)}`);
        return;
      }
      try {
        await execute(request);
      } catch (e) {
        if (lostRace(e, request) && ++conflicts <= MAX_CONFLICTS_PER_OBJECT) {
          await reread();
          continue;
        }
        outcome.problems.push(
          `${describeTarget(request.target)}: ${describeStep(step)} failed: ${errorText(e)}`,
        );
        return;
      }
      if (step.kind === "completeMigration" || step.kind === "cancelMigration") {
        outcome.handoversResolved++;
        const mapi = snapshot.mapi;
        if (!dry && mapi && deps.events)
          await deps.events.record(mapi, step.event.type, step.event.reason, step.event.message);
      } else outcome.repairs++;
      say(describeStep(step));
    }
    outcome.problems.push(
      `${describeObject(kind, "mapi", undefined)} ${ns.mapiNamespace}/${name}: still changing after ${MAX_STEPS_PER_OBJECT} steps; another writer may be undoing them`,
    );
  };

  const now = new Date(clock.now());
  const openKeys = new Set(open.map((o) => `${o.kind}/${o.name}`));
  const rest = mapiObjects(store, ns).filter((o) => !openKeys.has(`${o.kind}/${o.name}`));
  for (const { kind, name } of [...open, ...rest]) await settle(kind, name, now);

  appendAll(outcome.problems, halfDeletedTwins(store, ns));
  if (outcome.problems.length > 0)
    return refuse([
      "refusing to remove the sync finalizers until these are dealt with:",
      ...outcome.problems.map((p) => `  ${p}`),
      "Deal with them and run this again; the steps already taken are kept and will not be repeated.",
    ]);

  // (5) The sync finalizer, InfraMachines first, then CAPI, then MAPI objects.
  for (const planned of syncFinalizerSteps(store, ns)) {
    if (planned.kind !== "removeFinalizers") continue;
    let step: Step | undefined = planned;
    for (let attempt = 0; step; attempt++) {
      const request = requestOf(step);
      if (!request) break;
      try {
        await execute(request);
        outcome.finalizersRemoved++;
        say(describeStep(step));
        break;
      } catch (e) {
        const target: ObjectRef = request.target;
        if (
          lostRace(e, request) &&
          !(e instanceof NotFoundError) &&
          attempt < MAX_CONFLICTS_PER_OBJECT &&
          !dry
        ) {
          const fresh = await getOrAbsent(client, typeOfRef(target), target.namespace, target.name);
          step = fresh ? syncFinalizerStep(target.role, fresh) : undefined;
          continue;
        }
        if (e instanceof NotFoundError) break;
        outcome.problems.push(
          `${describeTarget(target)}: removing the sync finalizer failed: ${errorText(e)}`,
        );
        break;
      }
    }
  }
  if (outcome.problems.length > 0)
    return refuse([
      "some sync finalizers are left:",
      ...outcome.problems.map((p) => `  ${p}`),
      "Run this again.",
    ]);

  for (const note of needsAttentionNotes(store, ns)) deps.print(note);
  const summary = `removed ${outcome.webhooksRemoved} webhook configuration(s), resolved ${outcome.handoversResolved} handover(s), made ${outcome.repairs} pause/status repair(s), removed ${outcome.finalizersRemoved} sync finalizer(s)`;
  if (dry) {
    deps.print(`dry run: would have ${summary}. Nothing was changed; run again with --yes to do it.`);
  } else {
    deps.print(`done: ${summary}.`);
    deps.print(
      "The product can now be removed (oc delete -k manifests/); every Machine keeps the authority shown by status.authoritativeAPI.",
    );
  }
  return outcome;
}

const UNINSTALL_USAGE =
  "usage: uninstall-prepare [--kubeconfig FILE] [--context NAME] [--resolve-migrations] [--yes] [--lease-name NAME] [--mapi-namespace NS] [--capi-namespace NS]";

const UNINSTALL_HELP = `${UNINSTALL_USAGE}

Makes the cluster safe to remove the product (SPEC §9): refuses while the controllers hold the Lease,
removes the webhook configurations, resolves open handovers (with --resolve-migrations), matches pause
states to authority and removes the sync finalizers. A dry run unless --yes.
Exit status: 0 done (dry run: would be done), 1 refused or left work for a person, 2 bad usage.

  --resolve-migrations        resolve open handovers (cancel, or complete where step 9 has begun)
  -y, --yes                   make the changes (default: print what would be done)
  --kubeconfig FILE           kubeconfig (else KUBECONFIG, else ~/.kube/config, else the pod's service account)
  --context NAME              kubeconfig context (default: its current-context)
  -h, --help                  this help
Every setting of \`config-reference\` is accepted too (e.g. --lease-name, --mapi-namespace), as a flag or
its MACHINE_API_MIGRATION_ variable — except MACHINE_API_MIGRATION_KUBECONFIG, which is serve's alone.`;

const UNINSTALL_FLAGS: CommandFlags = {
  "resolve-migrations": { type: "boolean" },
  yes: { type: "boolean", short: "y" },
};

/**
 * `cli uninstall-prepare`. Exit 0 when done (dry run: when it would be done), 1 when it refused or left
 * work for a person, 2 on bad usage, bad settings or a cluster that cannot be reached.
 */
export async function runUninstallPrepare(
  args: readonly string[],
  io: CommandIo,
  env: Readonly<Record<string, string | undefined>>,
  clock: Clock = systemClock,
): Promise<number> {
  if (asksForHelp(args)) {
    io.stdout.write(`${UNINSTALL_HELP}\n`);
    return 0;
  }
  const connected = connectFromSettings("uninstall-prepare", args, env, UNINSTALL_FLAGS, existsSync, clock);
  if (!connected.ok) {
    io.stderr.write(`machine-api-migration uninstall-prepare: ${connected.error}\n${UNINSTALL_USAGE}\n`);
    return 2;
  }
  const { config, connection, flags } = connected;
  // The Lease's renewTime and the times this writes are the cluster's: judged and written on its clock.
  const cluster = connected.clusterClock;
  try {
    const outcome = await uninstallPrepare(
      {
        mapiNamespace: config.mapiNamespace,
        capiNamespace: config.capiNamespace,
        leaseName: config.leaseName,
      },
      { resolveMigrations: flags["resolve-migrations"] === true, apply: flags.yes === true },
      {
        client: connection.client,
        clock: cluster,
        // Lines carry what others wrote (a Lease holder, finalizer names): escaped, one per line (decision 155).
        print: (line) => io.stdout.write(`${oneLine(line)}\n`),
        // The report is the command's output; the recorder's own log lines would only interleave with it.
        events: createEventRecorder({
          client: connection.client,
          component: UNINSTALL_FIELD_MANAGER,
          clock: cluster,
          logger: pino({ level: "silent" }),
        }),
      },
    );
    const skew = clockSkewNote(cluster.offsetMs());
    if (skew) io.stdout.write(`${skew}\n`);
    return outcome.code;
  } catch (e) {
    io.stderr.write(
      `machine-api-migration uninstall-prepare: the cluster at ${connected.server} (${connected.source}): ${errorText(e)}\n`,
    );
    return 2;
  }
}
