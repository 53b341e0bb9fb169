/**
 * Status mirroring of SPEC §5.4, both ways: MAPI Machine status → CAPI Machine + InfraMachine status, CAPI
 * Machine + InfraMachine → MAPI Machine status, and MachineSet counts. Conditions are merged per type into
 * what the target already has: a produced type keeps its lastTransitionTime while its status is unchanged,
 * and types this file does not produce (CAPI Paused/NodeHealthy/UpToDate, every MAPI condition, including
 * Paused and Synchronized) are left exactly as they were. Pure: the caller passes `now`, and each Machine
 * converter is its `…Unstamped` twin (no clock) followed by `stampNow` (stamp.ts), which is what lets the
 * sync remember the object-reading part across reconciles.
 */
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { formatSelector } from "../../kube/selector.js";
import { platformFor } from "../../platforms/registry.js";
import type { PlatformChoice } from "./machine.js";
import { labelsToCapi, readStringMap } from "./metadata.js";
import {
  keptConditions,
  keptTransitionTime,
  type StampPath,
  stampNow,
  type Unstamped,
  unstamped,
} from "./stamp.js";
import { type ConversionResult, newIssues } from "./types.js";

const PROVISIONED_PHASES = ["Provisioned", "Running", "Deleting"];
const BOOTSTRAPPED_PHASES = ["Running", "Deleting"];

interface NewCondition {
  type: string;
  status: "True" | "False";
  reason: string;
  message?: string;
}

/**
 * Replaces each produced type, keeping its transition time when the status did not change; the others
 * (changed or new) are left for `stampNow` (stamp.ts), their indices named.
 */
export const mergeConditionsUnstamped = (
  existing: readonly Record<string, unknown>[],
  produced: readonly NewCondition[],
): Unstamped<Record<string, unknown>[]> => {
  const producedTypes = new Set(produced.map((c) => c.type));
  const kept = existing.filter((c) => !producedTypes.has(String(c.type)));
  const stamps: StampPath[] = [];
  const merged = produced.map((c, i) => {
    const lastTransitionTime = keptTransitionTime(
      existing.find((e) => e.type === c.type),
      c.status,
    );
    if (lastTransitionTime !== undefined) return { ...c, lastTransitionTime };
    stamps.push([kept.length + i]);
    return { ...c };
  });
  return unstamped([...kept, ...merged], stamps);
};

/** Replaces each produced type, keeping its transition time when the status did not change. */
export const mergeConditions = (
  existing: readonly Record<string, unknown>[],
  produced: readonly NewCondition[],
  now: string,
): Record<string, unknown>[] => stampNow(mergeConditionsUnstamped(existing, produced), now);

/** `stamps` of a part, as seen from the result that holds the part at `prefix`. */
const under = (prefix: StampPath, stamps: readonly StampPath[]): StampPath[] =>
  stamps.map((path) => [...prefix, ...path]);

const condition = (type: string, ok: boolean, trueReason: string, falseReason: string): NewCondition => ({
  type,
  status: ok ? "True" : "False",
  reason: ok ? trueReason : falseReason,
});

/** The v1beta2 conditions a CAPI Machine would carry in the MAPI Machine's phase. */
const capiConditionsFromPhase = (phase: string, hasNode: boolean): NewCondition[] => {
  const provisioned = PROVISIONED_PHASES.includes(phase);
  const bootstrapped = BOOTSTRAPPED_PHASES.includes(phase);
  const running = phase === "Running" && hasNode;
  return [
    condition("Available", running, "Available", "NotAvailable"),
    condition("Ready", running, "Ready", "NotReady"),
    condition("BootstrapConfigReady", bootstrapped, "DataSecretAvailable", "DataSecretNotAvailable"),
    condition("InfrastructureReady", provisioned, "Ready", "NotReady"),
    condition("Deleting", phase === "Deleting", "Deleting", "NotDeleting"),
    condition("NodeReady", running, "NodeReady", hasNode ? "NodeNotReady" : "NodeDoesNotExist"),
  ];
};

export interface MachineStatusToCapiOptions extends PlatformChoice {
  now: string;
  /** The CAPI Machine as it is now, whose conditions are merged into. */
  capiMachine?: KubeObject;
}

/** The options of an unstamped conversion: the objects, not the clock. */
const withoutNow = <O extends { now: string }>({ now: _now, ...rest }: O): Omit<O, "now"> => rest;

type MachineStatusToCapi = ConversionResult<{
  machineStatus: Record<string, unknown>;
  infraMachineStatus: Record<string, unknown>;
}>;

/** mapiMachineStatusToCapi before the clock: every field, conditions left for `stampNow`. */
export const mapiMachineStatusToCapiUnstamped = (
  mapi: KubeObject,
  infra: KubeObject | undefined,
  opts: Omit<MachineStatusToCapiOptions, "now">,
): Unstamped<MachineStatusToCapi> => {
  const lookup = platformFor(infra, opts.platforms);
  if (!lookup.ok) return unstamped(lookup);
  const status = isRecord(mapi.status) ? mapi.status : {};
  const phase = typeof status.phase === "string" ? status.phase : "";
  const nodeName = getPath(status, ["nodeRef", "name"]);
  const hasNode = typeof nodeName === "string" && nodeName !== "";

  const machineStatus: Record<string, unknown> = {};
  if (phase !== "") machineStatus.phase = phase;
  if (hasNode) machineStatus.nodeRef = { name: nodeName };
  if (Array.isArray(status.addresses)) machineStatus.addresses = structuredClone(status.addresses);
  if (typeof status.lastUpdated === "string") machineStatus.lastUpdated = status.lastUpdated;
  machineStatus.initialization = {
    infrastructureProvisioned: PROVISIONED_PHASES.includes(phase),
    bootstrapDataSecretCreated: BOOTSTRAPPED_PHASES.includes(phase),
  };
  const conditions = mergeConditionsUnstamped(
    keptConditions(getPath(opts.capiMachine, ["status"])),
    capiConditionsFromPhase(phase, hasNode),
  );
  machineStatus.conditions = conditions.result;
  const failure: Record<string, unknown> = {};
  if (typeof status.errorReason === "string") failure.failureReason = status.errorReason;
  if (typeof status.errorMessage === "string") failure.failureMessage = status.errorMessage;
  if (Object.keys(failure).length > 0) machineStatus.deprecated = { v1beta1: failure };

  const infraMachineStatus = lookup.platform.infraMachineStatusFromMapi(mapi);
  return unstamped(
    { ok: true, value: { machineStatus, infraMachineStatus }, warnings: [] },
    under(["value", "machineStatus", "conditions"], conditions.stamps),
  );
};

/** SPEC §5.4 MAPI Machine status → CAPI Machine status and InfraMachine status. */
export const mapiMachineStatusToCapi = (
  mapi: KubeObject,
  infra: KubeObject | undefined,
  opts: MachineStatusToCapiOptions,
): MachineStatusToCapi => stampNow(mapiMachineStatusToCapiUnstamped(mapi, infra, withoutNow(opts)), opts.now);

/** CAPI phase → MAPI phase; undefined means "leave unset". */
const mapiPhaseOf = (capiPhase: unknown): string | undefined => {
  if (typeof capiPhase !== "string" || ["", "Pending", "Unknown"].includes(capiPhase)) return undefined;
  return capiPhase === "Deleted" ? "Deleting" : capiPhase;
};

export interface MachineStatusToMapiOptions extends PlatformChoice {
  now: string;
  /** The MAPI Machine as it is now, whose providerStatus conditions are merged into. */
  mapiMachine?: KubeObject;
}

type MachineStatusToMapi = ConversionResult<{ status: Record<string, unknown> }>;

/** capiMachineStatusToMapi before the clock: every field, providerStatus conditions left for `stampNow`. */
export const capiMachineStatusToMapiUnstamped = (
  capi: KubeObject,
  infraMachine: KubeObject,
  infra: KubeObject | undefined,
  opts: Omit<MachineStatusToMapiOptions, "now">,
): Unstamped<MachineStatusToMapi> => {
  const lookup = platformFor(infra, opts.platforms);
  if (!lookup.ok) return unstamped(lookup);
  const source = isRecord(capi.status) ? capi.status : {};
  const status: Record<string, unknown> = {};
  const phase = mapiPhaseOf(source.phase);
  if (phase !== undefined) status.phase = phase;
  const nodeName = getPath(source, ["nodeRef", "name"]);
  if (typeof nodeName === "string" && nodeName !== "")
    status.nodeRef = { apiVersion: "v1", kind: "Node", name: nodeName };
  if (Array.isArray(source.addresses)) status.addresses = structuredClone(source.addresses);
  if (typeof source.lastUpdated === "string") status.lastUpdated = source.lastUpdated;
  const failureReason = getPath(source, ["deprecated", "v1beta1", "failureReason"]);
  const failureMessage = getPath(source, ["deprecated", "v1beta1", "failureMessage"]);
  if (typeof failureReason === "string") status.errorReason = failureReason;
  if (typeof failureMessage === "string") status.errorMessage = failureMessage;
  const providerStatus = lookup.platform.providerStatusFromCapi(
    infraMachine,
    capi,
    getPath(opts.mapiMachine, ["status", "providerStatus"]),
  );
  status.providerStatus = providerStatus.result;
  return unstamped(
    { ok: true, value: { status }, warnings: [] },
    under(["value", "status", "providerStatus"], providerStatus.stamps),
  );
};

/**
 * SPEC §5.4 CAPI Machine + InfraMachine status → MAPI Machine status. The result holds only the fields
 * mirrored; the caller patches them in, so `authoritativeAPI`, `synchronized*` and MAPI conditions stay.
 */
export const capiMachineStatusToMapi = (
  capi: KubeObject,
  infraMachine: KubeObject,
  infra: KubeObject | undefined,
  opts: MachineStatusToMapiOptions,
): MachineStatusToMapi =>
  stampNow(capiMachineStatusToMapiUnstamped(capi, infraMachine, infra, withoutNow(opts)), opts.now);

/** `metav1.FormatLabelSelector`, from the one selector module (the status mirror writes it, §5.4). */
export { formatSelector };

const count = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isInteger(v) ? v : undefined;
const putCount = (target: Record<string, unknown>, key: string, v: unknown) => {
  const n = count(v);
  if (n !== undefined) target[key] = n;
};

/** SPEC §5.4 MAPI MachineSet status → CAPI MachineSet status (selector as CAPI's converted selector). */
export const mapiMachineSetStatusToCapi = (
  mapi: KubeObject,
  infra: KubeObject | undefined,
): ConversionResult<{ status: Record<string, unknown> }> => {
  const lookup = platformFor(infra);
  if (!lookup.ok) return lookup;
  const source = isRecord(mapi.status) ? mapi.status : {};
  const status: Record<string, unknown> = {};
  const selector = getPath(mapi, ["spec", "selector"]);
  const issues = newIssues();
  const converted = {
    matchLabels: labelsToCapi(
      issues,
      readStringMap(issues, getPath(selector, ["matchLabels"]), "spec.selector.matchLabels"),
      {},
      lookup.infrastructure.clusterName,
      "spec.selector.matchLabels",
    ),
    matchExpressions: getPath(selector, ["matchExpressions"]),
  };
  status.selector = formatSelector(converted);
  putCount(status, "replicas", source.replicas);
  putCount(status, "readyReplicas", source.readyReplicas);
  putCount(status, "availableReplicas", source.availableReplicas);
  const v1beta1: Record<string, unknown> = {};
  putCount(v1beta1, "fullyLabeledReplicas", source.fullyLabeledReplicas);
  putCount(v1beta1, "readyReplicas", source.readyReplicas);
  putCount(v1beta1, "availableReplicas", source.availableReplicas);
  if (typeof source.errorReason === "string") v1beta1.failureReason = source.errorReason;
  if (typeof source.errorMessage === "string") v1beta1.failureMessage = source.errorMessage;
  if (Object.keys(v1beta1).length > 0) status.deprecated = { v1beta1 };
  return { ok: true, value: { status }, warnings: [] };
};

/** SPEC §5.4 CAPI MachineSet status → MAPI MachineSet status counts and error. */
export const capiMachineSetStatusToMapi = (
  capi: KubeObject,
): ConversionResult<{ status: Record<string, unknown> }> => {
  const source = isRecord(capi.status) ? capi.status : {};
  const v1beta1 = getPath(source, ["deprecated", "v1beta1"]);
  const legacy = isRecord(v1beta1) ? v1beta1 : {};
  const status: Record<string, unknown> = {};
  putCount(status, "replicas", source.replicas);
  putCount(status, "fullyLabeledReplicas", legacy.fullyLabeledReplicas ?? source.replicas);
  putCount(status, "readyReplicas", source.readyReplicas ?? legacy.readyReplicas);
  putCount(status, "availableReplicas", source.availableReplicas ?? legacy.availableReplicas);
  if (typeof legacy.failureReason === "string") status.errorReason = legacy.failureReason;
  if (typeof legacy.failureMessage === "string") status.errorMessage = legacy.failureMessage;
  return { ok: true, value: { status }, warnings: [] };
};
