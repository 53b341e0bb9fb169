/**
 * The migration rules of SPEC §2.3: when a user changes `spec.authoritativeAPI` on a MAPI object (and it
 * is not a cancel, which is always admissible), refuse what the handover could not complete safely —
 * a Machine still provisioning, failed without a providerID, or being deleted (`migration-machine-busy`),
 * a CAPI twin without its infrastructure (`migration-twin-not-ready`), owners the other API cannot
 * represent (`migration-unsupported-owner`), content that does not convert (`migration-unconvertible`) —
 * and warn when the twins are not in sync yet (`migration-not-synchronized`, on the guard webhook).
 */

import { formatFieldError } from "../../kube/field-error.js";
import { AUTHORITY, CONDITIONS, KINDS } from "../../kube/kinds.js";
import { conditionOf, getPath, isDeleting, nameOf, ownerReferencesOf } from "../../kube/object.js";
import { capiMachineProvisioned } from "../../migration/kinds.js";
import { isStableAuthority, specAuthorityAsWritten } from "../../protocol/authority.js";
import {
  capiResource,
  capiTypeFor,
  describe,
  describeSubject,
  isMigrationRequest,
  mapiResource,
  matches,
  resourceOf,
  type Subject,
  servedPlatformOf,
  subjectFor,
  subjectObject,
} from "../subject.js";
import type { AdmissionRequest, ClusterView } from "../types.js";
import { allow, deny, type Rule, warn } from "../verdict.js";

const migrating =
  (roles: readonly ("machine" | "machineSet")[]) =>
  (request: AdmissionRequest, ctx: { readonly subject: Subject | undefined }) =>
    matches(request, ctx.subject, { operations: ["UPDATE"], api: "mapi", roles }) &&
    isMigrationRequest(request);

const target = (request: AdmissionRequest): string =>
  String(specAuthorityAsWritten(request.object ?? undefined));

const cannotMigrate = (subject: Subject, request: AdmissionRequest): string =>
  `${describeSubject(subject)} cannot migrate to ${target(request)} yet`;

/** The served platform's InfraMachine resource (`awsmachines.infrastructure.cluster.x-k8s.io` on AWS). */
const infraMachineResource = (view: ClusterView): string => {
  const type = servedPlatformOf(view).infraMachine;
  return resourceOf(type.plural, type.group);
};

export const migrationMachineBusy: Rule = {
  id: "migration-machine-busy",
  webhook: "validate",
  reads: [],
  appliesTo: migrating(["machine"]),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const current = request.oldObject ?? undefined;
    const get = `oc get ${mapiResource(subject.kind)}/${subject.name} -n ${subject.namespace}`;
    if (isDeleting(current))
      return deny(
        403,
        `${cannotMigrate(subject, request)}: it is being deleted (metadata.deletionTimestamp is set).`,
        ["metadata.deletionTimestamp"],
        `Let the deletion finish (${get} -w); a Machine being deleted keeps its authority.`,
      );
    const phase = getPath(current, ["status", "phase"]);
    if (phase === undefined || phase === null || phase === "" || phase === "Provisioning")
      return deny(
        403,
        `${cannotMigrate(subject, request)}: it is still provisioning (${phase ? `status.phase=${String(phase)}` : "status.phase is empty"}) and its instance may exist without a providerID.`,
        ["status.phase"],
        `Retry once ${get} -o jsonpath='{.status.phase}' prints Provisioned or Running.`,
      );
    // Judged on what the Machine was: a providerID written in the same request is not the old side's.
    const providerID = getPath(current, ["spec", "providerID"]);
    if (phase === "Failed" && (typeof providerID !== "string" || providerID === ""))
      return deny(
        403,
        `${describeSubject(subject)} cannot migrate to ${target(request)}: it failed without a providerID (status.phase=Failed, spec.providerID is empty), so an instance it may have started cannot be found and the other side would create a second one.`,
        ["status.phase", "spec.providerID"],
        `Delete it instead and let its MachineSet replace it: oc delete ${mapiResource(subject.kind)}/${subject.name} -n ${subject.namespace}`,
      );
    return allow();
  },
};

export const migrationTwinNotReady: Rule = {
  id: "migration-twin-not-ready",
  webhook: "validate",
  reads: [KINDS.capiMachine],
  appliesTo: migrating(["machine"]),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const twin = ctx.view.twinOf(subjectObject(subject, request));
    if (!twin) return allow();
    const capiNs = ctx.settings.capiNamespace;
    const twinWords = describe("capi", subject.kind, capiNs, nameOf(twin));
    const get = `oc get ${capiResource(subject.kind)}/${nameOf(twin)} -n ${capiNs}`;
    if (isDeleting(twin))
      return deny(
        403,
        `${cannotMigrate(subject, request)}: its twin ${twinWords} is being deleted.`,
        ["metadata.deletionTimestamp"],
        `Let the deletion finish (${get} -w).`,
      );
    // Step 4's own check, so admission and the planner agree on "provisioned" (a Failed twin passes both).
    const notProvisioned = capiMachineProvisioned(twin);
    if (notProvisioned !== undefined)
      return deny(
        403,
        `${cannotMigrate(subject, request)}: its twin ${twinWords} has not provisioned its infrastructure (${notProvisioned}).`,
        ["status.initialization.infrastructureProvisioned"],
        `Retry once ${get} -o jsonpath='{.status.initialization.infrastructureProvisioned}' prints true.`,
      );
    return allow();
  },
};

const isControlPlaneOwner = (ref: { kind?: unknown }): boolean => ref.kind === "ControlPlaneMachineSet";

/**
 * The sync's own owner of a CAPI MachineSet is the `Cluster`; any other (a MachineDeployment) drives the set
 * itself, so the sync reports it `Synchronized=False` and a handover would leave two controllers on it
 * (the same test as `unsupportedCapiMachineSetOwner` in src/sync/desired.ts).
 */
const isClusterOwner = (ref: { kind?: unknown; apiVersion?: unknown }): boolean =>
  ref.kind === KINDS.capiCluster.kind &&
  typeof ref.apiVersion === "string" &&
  ref.apiVersion.startsWith(`${KINDS.capiCluster.group}/`);

export const migrationUnsupportedOwner: Rule = {
  id: "migration-unsupported-owner",
  webhook: "validate",
  reads: (request) => (capiTypeFor(request) === KINDS.capiMachineSet ? [KINDS.capiMachineSet] : []),
  appliesTo: migrating(["machine", "machineSet"]),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    // Owners before or after the request: removing an owner in the same request as migrating would let a
    // control plane machine slip through while its ControlPlaneMachineSet still manages it.
    const owners = [
      ...ownerReferencesOf(request.oldObject ?? undefined),
      ...ownerReferencesOf(request.object ?? undefined),
    ];
    const names = (refs: typeof owners) =>
      [...new Set(refs.map((r) => `${String(r.kind)}/${String(r.name)}`))].join(", ");
    if (subject.role === "machine") {
      const cpms = owners.filter(isControlPlaneOwner);
      if (cpms.length === 0) return allow();
      return deny(
        403,
        `${describeSubject(subject)} cannot migrate: it is owned by ${names(cpms)}; control plane machines stay on the Machine API.`,
        ["metadata.ownerReferences"],
        "Leave spec.authoritativeAPI as it is; the ControlPlaneMachineSet manages this Machine.",
      );
    }
    if (owners.length > 0)
      return deny(
        403,
        `${describeSubject(subject)} cannot migrate: it has owner references (${names(owners)}), which its Cluster API copy cannot represent, and its owner would keep managing it.`,
        ["metadata.ownerReferences"],
        `Migrate only MachineSets nothing owns; if the owner no longer manages it, remove the reference first: oc edit ${mapiResource(subject.kind)}/${subject.name} -n ${subject.namespace}`,
      );
    const twin = ctx.view.twinOf(subjectObject(subject, request));
    const twinOwners = ownerReferencesOf(twin).filter((r) => !isClusterOwner(r));
    if (!twin || twinOwners.length === 0) return allow();
    return deny(
      403,
      `${describeSubject(subject)} cannot migrate: its CAPI twin ${ctx.settings.capiNamespace}/${nameOf(twin)} is owned by ${names(twinOwners)}, which drives it; only MachineSets owned by nothing but the Cluster can be handed over.`,
      ["metadata.ownerReferences"],
      `Leave spec.authoritativeAPI as it is, or remove that owner reference from the CAPI MachineSet if its owner no longer manages it.`,
    );
  },
};

export const migrationUnconvertible: Rule = {
  id: "migration-unconvertible",
  webhook: "validate",
  reads: (request) => [KINDS.infrastructure, capiTypeFor(request)],
  appliesTo: migrating(["machine", "machineSet"]),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const to = specAuthorityAsWritten(request.object ?? undefined);
    if (!isStableAuthority(to) || !request.object) return allow();
    const errors = ctx.checkConvertible(request.object, to, ctx.view);
    if (!Array.isArray(errors) || errors.length === 0) return allow();
    const fix =
      to === AUTHORITY.clusterAPI
        ? `oc edit ${mapiResource(subject.kind)}/${subject.name} -n ${subject.namespace}`
        : subject.kind === "Machine"
          ? `oc edit ${capiResource(subject.kind)}/${subject.name} -n ${ctx.settings.capiNamespace} (and its InfraMachine, e.g. ${infraMachineResource(ctx.view)})`
          : `oc edit ${capiResource(subject.kind)}/${subject.name} -n ${ctx.settings.capiNamespace}`;
    return deny(
      403,
      `${describeSubject(subject)} cannot migrate to ${to}: its current content does not convert: ${errors.map(formatFieldError).join("; ")}.`,
      errors.map((e) => String(e?.path)),
      `Fix these fields on the authoritative copy (${fix}), then set spec.authoritativeAPI again.`,
    );
  },
};

export const migrationNotSynchronized: Rule = {
  id: "migration-not-synchronized",
  webhook: "validate-guard",
  reads: [],
  appliesTo: migrating(["machine", "machineSet"]),
  check: (request) =>
    conditionOf(request.oldObject ?? undefined, CONDITIONS.synchronized)?.status === "True"
      ? allow()
      : warn("Synchronized is not True: the migration will wait for a successful sync"),
};
