/**
 * The DELETE rules of SPEC §2.3, on the guard webhook (`validate-guard`, failurePolicy Ignore, so they only ever
 * add safety). Deleting a non-authoritative MAPI MachineSet orphans its Machines and must not cascade in the
 * foreground (`delete-nonauthoritative-parent`). Deleting the CAPI mirror of a MAPI object the Machine API
 * runs — or ran until the handover now in progress — also deletes the MAPI object, so it warns and, with
 * `requireDeleteConfirmation`, needs the `confirm-delete` annotation (`delete-authoritative-via-mirror`).
 * Cluster API deletes the Machines of a deleted, unpaused MachineSet whatever the propagation policy, so an
 * orphaning delete of one is refused (`orphan-ignored-by-capi`). Deleting the CAPI `Cluster` or its
 * infrastructure cluster takes the paused mirrors of the MAPI objects with it, so it needs `confirm-delete`
 * (`cluster-delete-guard`). DELETE requests carry the object in `oldObject`.
 */
import {
  ANNOTATIONS,
  AUTHORITY,
  CAPI_GROUP,
  INFRA_GROUP,
  KINDS,
  MAPI_GROUP,
  type ResourceType,
} from "../../kube/kinds.js";
import {
  annotationsOf,
  finalizersOf,
  getPath,
  isRecord,
  type KubeObject,
  nameOf,
  ownerReferencesOf,
} from "../../kube/object.js";
import { statusAuthority, synchronizedAPI } from "../../protocol/authority.js";
import { isPaused } from "../../protocol/pause.js";
import { annotationPath } from "../keys.js";
import {
  capiResource,
  describe,
  describeSubject,
  groupOfApiVersion,
  mapiResource,
  mapiTypeFor,
  matches,
  pluralOfKind,
  requestNamespace,
  resourceOf,
  subjectFor,
  subjectObject,
} from "../subject.js";
import type { AdmissionRequest, ClusterView } from "../types.js";
import { allow, deny, type Rule, warn } from "../verdict.js";

/** Machines of `group` in `namespace` whose ownerReferences name the MachineSet `setName` of that group. */
function ownedMachines(view: ClusterView, group: string, namespace: string, setName: string): KubeObject[] {
  const type = group === MAPI_GROUP ? KINDS.mapiMachine : KINDS.capiMachine;
  return view
    .list(type, namespace)
    .filter((m) =>
      ownerReferencesOf(m).some(
        (ref) =>
          ref.kind === "MachineSet" && ref.name === setName && groupOfApiVersion(ref.apiVersion) === group,
      ),
    );
}

const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`;
const machinesPhrase = (n: number): string => counted(n, "Machine");

/** The object carries `confirm-delete: "true"` (exactly that value). */
const confirmed = (request: AdmissionRequest): boolean =>
  annotationsOf(request.oldObject ?? undefined)[ANNOTATIONS.confirmDelete] === "true";

/** The garbage collector's finalizers (metav1.FinalizerOrphanDependents, FinalizerDeleteDependents). */
const GC_FINALIZERS = { orphan: "orphan", foreground: "foregroundDeletion" } as const;

/**
 * How kube-apiserver carries out a DELETE: an explicit `orphanDependents` or `propagationPolicy` (it refuses
 * both at once), else the object's own `orphan` or `foregroundDeletion` finalizer, which a delete that names
 * no policy keeps (the generic store's shouldOrphanDependents / shouldDeleteDependents), else Background, a
 * custom resource's default. `finalizer` says the policy came from the object.
 */
const propagationOf = (
  request: AdmissionRequest,
): { policy: "Orphan" | "Foreground" | "Background"; finalizer?: string } => {
  const options = isRecord(request.options) ? request.options : {};
  if (typeof options.orphanDependents === "boolean")
    return { policy: options.orphanDependents ? "Orphan" : "Background" };
  const policy = options.propagationPolicy;
  if (policy === "Orphan" || policy === "Foreground" || policy === "Background") return { policy };
  for (const finalizer of finalizersOf(request.oldObject ?? undefined)) {
    if (finalizer === GC_FINALIZERS.orphan) return { policy: "Orphan", finalizer };
    if (finalizer === GC_FINALIZERS.foreground) return { policy: "Foreground", finalizer };
  }
  return { policy: "Background" };
};

/** "propagationPolicy=Foreground", and where it came from when the request did not name it. */
const policyPhrase = (p: ReturnType<typeof propagationOf>): string =>
  `propagationPolicy=${p.policy}${p.finalizer ? ` (its ${p.finalizer} finalizer, kept by a delete that names no policy)` : ""}`;

/** `oc annotate <resource>/<name> -n <ns> confirm-delete=true` */
const confirmCommand = (resource: string, name: string, namespace: string): string =>
  `oc annotate ${resource}/${name} -n ${namespace} ${ANNOTATIONS.confirmDelete}=true`;

export const deleteNonauthoritativeParent: Rule = {
  id: "delete-nonauthoritative-parent",
  webhook: "validate-guard",
  reads: [KINDS.capiMachineSet, KINDS.capiMachine],
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["DELETE"], api: "mapi", roles: ["machineSet"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const old = request.oldObject ?? undefined;
    const status = statusAuthority(old);
    // Not authoritative: ClusterAPI holds it, or it is handing back from ClusterAPI (the members are still
    // Cluster API's until the handover completes, and a delete now rolls it back: SPEC §3.5).
    const leavingClusterAPI = status === AUTHORITY.migrating && synchronizedAPI(old) === AUTHORITY.clusterAPI;
    if (status !== AUTHORITY.clusterAPI && !leavingClusterAPI) return allow();
    const state = leavingClusterAPI
      ? "status.authoritativeAPI=Migrating, leaving ClusterAPI"
      : "status.authoritativeAPI=ClusterAPI";
    const capiNs = ctx.settings.capiNamespace;
    const capiSet = ctx.view.twinOf(subjectObject(subject, request));
    const count = ownedMachines(ctx.view, CAPI_GROUP, capiNs, subject.name).length;
    const survivors = `${describe("capi", "MachineSet", capiNs, subject.name)} and its ${machinesPhrase(count)} keep running`;
    const propagation = propagationOf(request);
    if (propagation.policy === "Foreground")
      return deny(
        403,
        `Deleting ${describeSubject(subject)} with ${policyPhrase(propagation)} is refused: it is not authoritative (${state}) and the garbage collector would delete its Machines before they can be orphaned.`,
        ["propagationPolicy"],
        `Delete it with the default propagation or orphan its Machines: oc delete ${mapiResource(subject.kind)}/${subject.name} -n ${subject.namespace} --cascade=orphan`,
      );
    return capiSet ? warn(survivors) : allow();
  },
};

/**
 * How the Machine API holds a MAPI object whose CAPI copy is a mirror: it runs it (status MachineAPI), or ran it
 * until the handover now in progress (Migrating from MachineAPI — a delete rolls that back, §3.5); undefined
 * when the CAPI copy is not a mirror of the Machine API's.
 */
const heldByMachineAPI = (mapi: KubeObject | undefined): "runs" | "handingOver" | undefined => {
  const status = statusAuthority(mapi);
  if (status === AUTHORITY.machineAPI) return "runs";
  if (status === AUTHORITY.migrating && synchronizedAPI(mapi) === AUTHORITY.machineAPI) return "handingOver";
  return undefined;
};

export const deleteAuthoritativeViaMirror: Rule = {
  id: "delete-authoritative-via-mirror",
  webhook: "validate-guard",
  reads: (request) => [mapiTypeFor(request), KINDS.mapiMachine],
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["DELETE"], api: "capi", roles: ["machine", "machineSet"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const mapi = ctx.view.twinOf(subjectObject(subject, request));
    const held = heldByMachineAPI(mapi);
    if (!held) return allow();
    const mapiNs = ctx.settings.mapiNamespace;
    const mapiName = nameOf(mapi);
    const members =
      subject.kind === "MachineSet"
        ? ` (and its ${machinesPhrase(ownedMachines(ctx.view, MAPI_GROUP, mapiNs, mapiName).length)})`
        : "";
    const also = `also deletes the authoritative ${describe("mapi", subject.kind, mapiNs, mapiName)}${members}`;
    if (!ctx.settings.requireDeleteConfirmation || confirmed(request)) return warn(`this ${also}`);
    const runs =
      held === "runs"
        ? "which the Machine API controllers run (status.authoritativeAPI=MachineAPI)"
        : "which is being handed over from the Machine API (status.authoritativeAPI=Migrating, status.synchronizedAPI=MachineAPI)";
    return deny(
      403,
      `Deleting ${describeSubject(subject)} ${also}, ${runs}; it needs confirmation.`,
      [annotationPath(ANNOTATIONS.confirmDelete)],
      `To delete both, confirm first: ${confirmCommand(capiResource(subject.kind), subject.name, subject.namespace)}, then delete again — or delete the authoritative copy: oc delete ${mapiResource(subject.kind)}/${mapiName} -n ${mapiNs}`,
    );
  },
};

export const orphanIgnoredByCapi: Rule = {
  id: "orphan-ignored-by-capi",
  webhook: "validate-guard",
  reads: [KINDS.mapiMachineSet, KINDS.capiMachine],
  appliesTo: (request, ctx) =>
    propagationOf(request).policy === "Orphan" &&
    matches(request, ctx.subject, { operations: ["DELETE"], api: "capi", roles: ["machineSet"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    // A paused MachineSet controller does nothing, not even on delete: only the garbage collector acts, and
    // it orphans the Machines as asked.
    if (isPaused(request.oldObject ?? undefined)) return allow();
    if (!ctx.view.twinOf(subjectObject(subject, request))) return allow();
    const count = ownedMachines(ctx.view, CAPI_GROUP, subject.namespace, subject.name).length;
    return deny(
      403,
      `Deleting ${describeSubject(subject)} with ${policyPhrase(propagationOf(request))} is refused: Cluster API's MachineSet controller deletes every Machine of a deleted MachineSet whatever the propagation policy, so --cascade=orphan would not keep its ${machinesPhrase(count)}.`,
      ["propagationPolicy"],
      `Delete it with the default propagation if its Machines should go with it: oc delete ${capiResource(subject.kind)}/${subject.name} -n ${subject.namespace} — to keep them, keep the MachineSet.`,
    );
  },
};

/**
 * The kind of a DELETE of the CAPI `Cluster` or an infrastructure cluster (`AWSCluster`, any platform's
 * `*Cluster` in the infrastructure group); undefined for anything else. Request-only, like `subjectOf`.
 */
const clusterKindOf = (request: AdmissionRequest): string | undefined => {
  if (request.subResource) return undefined;
  const resource = isRecord(request.resource) ? request.resource : undefined;
  const group = typeof resource?.group === "string" ? resource.group : "";
  if (group === CAPI_GROUP) return resource?.resource === "clusters" ? "Cluster" : undefined;
  if (group !== INFRA_GROUP) return undefined;
  const kind = isRecord(request.kind) && request.kind.group === INFRA_GROUP ? request.kind.kind : undefined;
  return typeof kind === "string" && kind.endsWith("Cluster") ? kind : undefined;
};

const requestName = (request: AdmissionRequest): string =>
  (typeof request.name === "string" && request.name) || nameOf(request.oldObject ?? undefined);

export const clusterDeleteGuard: Rule = {
  id: "cluster-delete-guard",
  webhook: "validate-guard",
  reads: [KINDS.infrastructure, KINDS.mapiMachine, KINDS.mapiMachineSet],
  appliesTo: (request, ctx) =>
    request.operation === "DELETE" &&
    clusterKindOf(request) !== undefined &&
    requestNamespace(request) === ctx.settings.capiNamespace,
  check: (request, ctx) => {
    const kind = clusterKindOf(request) ?? "";
    const name = requestName(request);
    const namespace = ctx.settings.capiNamespace;
    // The Cluster the MAPI objects mirror into carries the infrastructure name (SPEC §0); while that name is
    // unknown, every Cluster is guarded.
    const infrastructureName = getPath(ctx.view.get(KINDS.infrastructure, "", "cluster"), [
      "status",
      "infrastructureName",
    ]);
    if (typeof infrastructureName === "string" && infrastructureName !== "" && infrastructureName !== name)
      return allow();
    const mapiNs = ctx.settings.mapiNamespace;
    // Under MachineAPI and while Migrating (either way: a cascade ends a handover at MachineAPI, §3.5) the
    // CAPI copy is a paused mirror the garbage collector would delete with the Cluster.
    const mirrored = (type: ResourceType) =>
      ctx.view.list(type, mapiNs).filter((o) => {
        const status = statusAuthority(o);
        return status === AUTHORITY.machineAPI || status === AUTHORITY.migrating;
      }).length;
    const machines = mirrored(KINDS.mapiMachine);
    const machineSets = mirrored(KINDS.mapiMachineSet);
    const total = machines + machineSets;
    if (total === 0) return allow();
    const copies = `the paused Cluster API copies of ${counted(total, "MAPI object")}`;
    if (confirmed(request)) return warn(`this releases ${copies}; their instances keep running`);
    const what = kind === "Cluster" ? `CAPI Cluster ${namespace}/${name}` : `${kind} ${namespace}/${name}`;
    const resource =
      kind === "Cluster" ? resourceOf("clusters", CAPI_GROUP) : resourceOf(pluralOfKind(kind), INFRA_GROUP);
    const parts = [
      ...(machines > 0 ? [counted(machines, "Machine")] : []),
      ...(machineSets > 0 ? [counted(machineSets, "MachineSet")] : []),
    ].join(", ");
    return deny(
      403,
      `Deleting ${what} needs confirmation: it holds ${copies} (${parts}; status.authoritativeAPI MachineAPI or Migrating), and they would be deleted with it. Their instances are not affected: the copies are released without any provider acting on them and recreated once a Cluster exists again.`,
      [annotationPath(ANNOTATIONS.confirmDelete)],
      `To delete it, confirm first: ${confirmCommand(resource, name, namespace)}, then delete again.`,
    );
  },
};
