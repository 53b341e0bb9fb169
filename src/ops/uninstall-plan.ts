/**
 * The pure half of `cli uninstall-prepare` (SPEC §9): whether the product's controllers still hold their
 * Lease, which objects are mid-handover, which sync finalizers must go and the guarded request that removes
 * each, how a planner step reads to an admin, and how a request would change an object (the dry run applies
 * requests in memory instead of sending them). The order of the work and all I/O live in ./uninstall.ts.
 */
import jsonpatch from "fast-json-patch";
import type { ResourceType } from "../kube/kinds.js";
import { CAPI_GROUP, FINALIZERS, KINDS, MAPI_GROUP } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { finalizersOf, getPath, isDeleting, isRecord, nameOf, timeMs } from "../kube/object.js";
import { HANDOVER_KINDS } from "../migration/kinds.js";
import { describeObject } from "../migration/preconditions.js";
import { readHandoverSnapshot } from "../migration/read-snapshot.js";
import type { HandoverKind, ObjectRef, Role } from "../migration/snapshot.js";
import { objectOf, refOf } from "../migration/snapshot.js";
import type { Step } from "../migration/steps.js";
import type { PatchRequest } from "../migration/write.js";
import { PLATFORMS } from "../platforms/registry.js";
import { capiResource, mapiResource } from "../policies/subject.js";
import type { ObjectStore } from "../policies/types.js";
import { statusAuthorityReading } from "../protocol/authority.js";
import { needsAttention } from "../protocol/pause.js";
import type { Namespaces } from "./shell.js";

/** The three webhook configurations of SPEC §2.2, removed first so the command's own writes pass. */
export const WEBHOOK_CONFIGURATIONS: ReadonlyArray<{ type: ResourceType; name: string }> = Object.freeze([
  {
    type: {
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "ValidatingWebhookConfiguration",
      plural: "validatingwebhookconfigurations",
      namespaced: false,
    },
    name: "machine-api-migration-deny",
  },
  {
    type: {
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "ValidatingWebhookConfiguration",
      plural: "validatingwebhookconfigurations",
      namespaced: false,
    },
    name: "machine-api-migration-guard",
  },
  {
    type: {
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "MutatingWebhookConfiguration",
      plural: "mutatingwebhookconfigurations",
      namespaced: false,
    },
    name: "machine-api-migration-mutate",
  },
]);

// ---------------------------------------------------------------------------------------------------
// The Lease

/** Why a Lease that does not exist is not held. */
export const NO_LEASE = "no Lease";

export type LeaseState =
  | { held: false; why: string }
  | { held: true; holder: string; renewedAt: string; expiresAt: string };

/**
 * Whether the leader's Lease is in force at `now`: a holder whose last renewal plus the lease duration lies
 * in the future. A released Lease (empty holder, SIGTERM path) or an expired one is free.
 */
export function leaseState(lease: KubeObject | undefined, now: number): LeaseState {
  if (!lease) return { held: false, why: NO_LEASE };
  const holder = getPath(lease, ["spec", "holderIdentity"]);
  if (typeof holder !== "string" || holder === "") return { held: false, why: "released (no holder)" };
  const renewed =
    timeMs(getPath(lease, ["spec", "renewTime"])) ?? timeMs(getPath(lease, ["spec", "acquireTime"]));
  const seconds = getPath(lease, ["spec", "leaseDurationSeconds"]);
  if (renewed === undefined || typeof seconds !== "number")
    return { held: false, why: `held by ${holder} but carries no renewTime or leaseDurationSeconds` };
  const expires = renewed + seconds * 1000;
  const iso = (ms: number) => new Date(ms).toISOString();
  return expires > now
    ? { held: true, holder, renewedAt: iso(renewed), expiresAt: iso(expires) }
    : { held: false, why: `expired at ${iso(expires)} (last holder ${holder})` };
}

// ---------------------------------------------------------------------------------------------------
// What there is to do

/** The MAPI objects whose handover is open (status Migrating), MachineSets first. */
export function openHandovers(
  store: ObjectStore,
  ns: Namespaces,
): Array<{ kind: HandoverKind; name: string }> {
  const of = (kind: HandoverKind, type: ResourceType) =>
    store
      .list(type, ns.mapiNamespace)
      .filter((o) => statusAuthorityReading(o) === "Migrating")
      .map((o) => ({ kind, name: nameOf(o) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  return [...of("MachineSet", KINDS.mapiMachineSet), ...of("Machine", KINDS.mapiMachine)];
}

/** Every MAPI Machine and MachineSet, MachineSets first: each gets its pause state made to match authority. */
export function mapiObjects(store: ObjectStore, ns: Namespaces): Array<{ kind: HandoverKind; name: string }> {
  const of = (kind: HandoverKind, type: ResourceType) =>
    store
      .list(type, ns.mapiNamespace)
      .map((o) => ({ kind, name: nameOf(o) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  return [...of("MachineSet", KINDS.mapiMachineSet), ...of("Machine", KINDS.mapiMachine)];
}

/** The kinds that may carry the sync finalizer (SPEC §4.6), in the order it is released. */
const SYNC_FINALIZER_HOLDERS: ReadonlyArray<{
  type: ResourceType;
  role: Role;
  namespace: keyof Namespaces;
}> = Object.freeze([
  // Every platform's: a kind the cluster does not serve reads as empty.
  ...PLATFORMS.flatMap((p) => [
    { type: p.infraMachine, role: "infraMachine" as const, namespace: "capiNamespace" as const },
    { type: p.infraMachineTemplate, role: "capi" as const, namespace: "capiNamespace" as const },
  ]),
  { type: KINDS.capiMachine, role: "capi", namespace: "capiNamespace" },
  { type: KINDS.capiMachineSet, role: "capi", namespace: "capiNamespace" },
  { type: KINDS.mapiMachine, role: "mapi", namespace: "mapiNamespace" },
  { type: KINDS.mapiMachineSet, role: "mapi", namespace: "mapiNamespace" },
]);

/** The step that removes the sync finalizer from `object`, or undefined when it has none. */
export const syncFinalizerStep = (role: Role, object: KubeObject): Step | undefined =>
  finalizersOf(object).includes(FINALIZERS.sync)
    ? {
        kind: "removeFinalizers",
        target: refOf(role, object),
        finalizers: [FINALIZERS.sync],
        observed: finalizersOf(object),
      }
    : undefined;

/** Every sync-finalizer removal the store calls for, InfraMachines first, then CAPI, then MAPI. */
export function syncFinalizerSteps(store: ObjectStore, ns: Namespaces): Step[] {
  const steps: Step[] = [];
  for (const holder of SYNC_FINALIZER_HOLDERS)
    for (const object of [...store.list(holder.type, ns[holder.namespace])].sort((a, b) =>
      nameOf(a).localeCompare(nameOf(b)),
    )) {
      const step = syncFinalizerStep(holder.role, object);
      if (step) steps.push(step);
    }
  return steps;
}

/**
 * Deletions only half propagated: a Machine or MachineSet of one API is being deleted and still holds the
 * sync finalizer, while its twin is not being deleted. The sync would have deleted the twin (SPEC §4.6);
 * removing the finalizer now would drop the user's delete for the other side, so a person deletes the twin
 * first. One sentence per case, with the command.
 */
export function halfDeletedTwins(store: ObjectStore, ns: Namespaces): string[] {
  const pairs: Array<[HandoverKind, ResourceType, ResourceType]> = [
    ["MachineSet", KINDS.mapiMachineSet, KINDS.capiMachineSet],
    ["Machine", KINDS.mapiMachine, KINDS.capiMachine],
  ];
  const out: string[] = [];
  for (const [kind, mapiType, capiType] of pairs) {
    const names = new Set(
      [...store.list(mapiType, ns.mapiNamespace), ...store.list(capiType, ns.capiNamespace)].map(nameOf),
    );
    for (const name of [...names].sort()) {
      const mapi = store.get(mapiType, ns.mapiNamespace, name);
      const capi = store.get(capiType, ns.capiNamespace, name);
      if (!mapi || !capi || isDeleting(mapi) === isDeleting(capi)) continue;
      const [deleting, other, otherApi, resource, namespace] = isDeleting(mapi)
        ? [mapi, capi, "CAPI", capiResource(kind), ns.capiNamespace]
        : [capi, mapi, "MAPI", mapiResource(kind), ns.mapiNamespace];
      if (!finalizersOf(deleting).includes(FINALIZERS.sync)) continue;
      out.push(
        `${isDeleting(mapi) ? `MAPI ${kind} ${ns.mapiNamespace}` : `CAPI ${kind} ${ns.capiNamespace}`}/${name} is being deleted but its twin ${otherApi} ${kind} ${namespace}/${nameOf(other)} is not (the sync would have deleted it): oc delete ${resource}/${name} -n ${namespace}`,
      );
    }
  }
  return out;
}

/**
 * One note per MachineAPI object whose CAPI twin is marked needs-attention (SPEC §4.2: found unpaused while
 * MachineAPI was authoritative, paused and flagged by the sync or by this command): it stays paused, and a
 * person decides which copy owns the instance — with the product gone, nothing else will (decision 181).
 */
export function needsAttentionNotes(store: ObjectStore, ns: Namespaces): string[] {
  const out: string[] = [];
  for (const { kind, name } of mapiObjects(store, ns)) {
    const s = readHandoverSnapshot(store, kind, name, ns);
    if (!s.mapi || statusAuthorityReading(s.mapi) !== "MachineAPI") continue;
    const flagged = HANDOVER_KINDS[kind].pauseTargets
      .map((role) => ({ role, object: objectOf(s, role) }))
      .filter(({ object }) => needsAttention(object));
    const first = flagged[0];
    if (!first) continue;
    out.push(
      `note: ${describeObject(kind, first.role, first.object)} is marked needs-attention: it was found unpaused while ${describeObject(kind, "mapi", s.mapi)} is MachineAPI-authoritative; it stays paused. Decide which copy owns the instance (docs/operations.md, "A twin marked needs-attention").`,
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Words

const groupOf = (apiVersion: string): string => (apiVersion.includes("/") ? apiVersion.split("/")[0]! : "");

/** `MAPI Machine openshift-machine-api/x`, `CAPI MachineSet …`, `AWSMachine …`. */
export const describeTarget = (
  ref: Pick<ObjectRef, "apiVersion" | "kind" | "namespace" | "name">,
): string => {
  const group = groupOf(ref.apiVersion);
  const api = group === MAPI_GROUP ? "MAPI " : group === CAPI_GROUP ? "CAPI " : "";
  return `${api}${ref.kind} ${ref.namespace}/${ref.name}`;
};

/** One line per executed (or, in a dry run, planned) step, for the admin's terminal. */
export function describeStep(step: Step): string {
  switch (step.kind) {
    case "done":
      return step.why === "gone" ? "gone" : "nothing to do";
    case "wait":
    case "blocked":
      return `${step.event.reason}: ${step.event.message}`;
    case "initStatus":
    case "setSynchronizedAPI": {
      const fields = Object.entries(step.statusPatch)
        .map(([k, v]) => `status.${k}=${String(v)}`)
        .join(", ");
      return `${describeTarget(step.target)}: set ${fields}`;
    }
    case "pause":
      return `${describeTarget(step.target)}: paused (${Object.keys(step.addAnnotations).join(", ")})`;
    case "unpause":
      return `${describeTarget(step.target)}: removed the product's pause (${step.removeAnnotations.join(", ")})`;
    case "recordPausedFalseAt":
      return `${describeTarget(step.target)}: recorded ${step.annotation}`;
    case "startMigration":
      return `${describeTarget(step.target)}: started a handover from ${step.from} to ${step.to}`;
    case "addFinalizers":
      return `${describeTarget(step.target)}: added finalizer ${step.finalizers.join(", ")}`;
    case "removeFinalizers":
      return `${describeTarget(step.target)}: removed finalizer ${step.finalizers.join(", ")}`;
    case "completeMigration":
      return `${describeTarget(step.target)}: completed the handover, ${step.to} is authoritative`;
    case "cancelMigration":
      return `${describeTarget(step.target)}: cancelled the handover, ${step.to} stays authoritative`;
    default: {
      const unreachable: never = step;
      return unreachable;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The dry run's stand-in for the API server

/** RFC 7386 JSON merge patch: objects merge, `null` removes, everything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isRecord(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/**
 * The object as `request` would leave it. The resourceVersion precondition is checked as the API server
 * would; a failed `test` throws as a 409 would. The resourceVersion itself does not move (no write happened).
 */
export function applyRequest(object: KubeObject, request: PatchRequest): KubeObject {
  if (request.patchType === "application/merge-patch+json") {
    const wanted = getPath(request.body, ["metadata", "resourceVersion"]);
    if (typeof wanted === "string" && wanted !== object.metadata?.resourceVersion)
      throw new Error(`resourceVersion ${wanted} is stale`);
    return applyMergePatch(object, request.body) as KubeObject;
  }
  return jsonpatch.applyPatch(structuredClone(object), request.body, true, false).newDocument;
}
