/**
 * The frozen rules of SPEC §2.3: `mapi-frozen` (a MAPI object that is not authoritative), `capi-frozen`
 * (a CAPI object whose MAPI twin is authoritative or not yet decided) and `frozen-while-migrating` (both
 * twins during a handover). They refuse spec changes (`scale` included), protected label/annotation keys,
 * twin-owned labels, `machine-template-hash` and added or changed ownerReferences; `spec.authoritativeAPI`
 * on MAPI is never frozen, so migrating and cancelling stay possible. Removing finalizers or ownerReferences
 * is never refused. A CAPI object's MAPI twin is resolved from what it was (`oldObject`), so the owners and
 * template label a request sets cannot choose which MAPI object judges it.
 */
import { AUTHORITY, INFRA_GROUP, KINDS } from "../../kube/kinds.js";
import { finalizersOf, getPath, type KubeObject } from "../../kube/object.js";
import { statusAuthority, synchronizedAPI } from "../../protocol/authority.js";
import { listPaths } from "../compare.js";
import { changedPaths } from "../diff.js";
import {
  annotationPath,
  guardedChanges,
  isDeleteMark,
  labelPath,
  metadataGuardViolations,
  OWNER_REFERENCES_PATH,
  ownerReferenceViolations,
  readAnnotations,
  readLabels,
} from "../keys.js";
import { remembered } from "../slices.js";
import {
  authoritativeSideOf,
  capiResource,
  describe,
  describeSubject,
  mapiResource,
  mapiTypeFor,
  matches,
  pluralOfKind,
  resourceOf,
  type Subject,
  servedPlatformOf,
  setAuthorityCommand,
  subjectFor,
  subjectObject,
  twinReadsFor,
} from "../subject.js";
import type { AdmissionRequest, ClusterView } from "../types.js";
import { allow, deny, type Rule } from "../verdict.js";

/** kubectl's own bookkeeping; `kubectl apply` of a cancel rewrites it, and it carries no content. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Spec paths a request changes; a `scale` request changes `spec.replicas` of its MachineSet. */
function specChanges(request: AdmissionRequest, subject: Subject, exceptAuthority: boolean): string[] {
  if (subject.subResource === "scale")
    return changedPaths(
      getPath(request.oldObject, ["spec", "replicas"]),
      getPath(request.object, ["spec", "replicas"]),
      "spec.replicas",
    );
  // `spec.authoritativeAPI` left out in place, not by copying the spec: a copy would be a new value on every
  // run of a decision in slices, and the walk of it could not be resumed (decision 74).
  return changedPaths(
    request.oldObject?.spec,
    request.object?.spec,
    "spec",
    exceptAuthority ? "authoritativeAPI" : undefined,
  );
}

/**
 * The MAPI object that carries authority for the request's subject (SPEC §1: authority lives on MAPI); for a
 * CAPI object, its twin as it was before the request (SPEC §2.3).
 */
function mapiAuthorityObject(
  request: AdmissionRequest,
  subject: Subject,
  view: ClusterView,
): KubeObject | undefined {
  if (subject.api === "capi") return view.twinOf(subjectObject(subject, request));
  if (subject.subResource === "scale") return view.get(KINDS.mapiMachineSet, subject.namespace, subject.name);
  return request.oldObject ?? undefined;
}

/** The replicas a scale request asks for: kube leaves 0 out of the Scale it sends (Go's omitempty). */
const requestedReplicas = (request: AdmissionRequest): string => {
  const r = getPath(request.object, ["spec", "replicas"]);
  return typeof r === "number" ? String(r) : "0";
};

/**
 * Owner references outside a handover: the paths of those the request adds or changes, on an object that is
 * not authoritative. While Migrating, `frozen-while-migrating` judges them with everything else a handover
 * does not allow.
 */
function ownerChanges(request: AdmissionRequest, subject: Subject, status: string | undefined): string[] {
  if (subject.subResource || status === AUTHORITY.migrating) return [];
  return ownerViolations(request.oldObject ?? undefined, request.object ?? undefined);
}

// Linear passes over a review's metadata, computed once per decision run in slices: every later slice runs
// the decision again from the start (./slices.ts, decision 74).
const guardViolations = (request: AdmissionRequest, twinOwner: KubeObject | undefined): string[] => {
  const before = request.oldObject ?? undefined;
  const after = request.object ?? undefined;
  return remembered("metadataGuardViolations", [before, after, twinOwner], () =>
    metadataGuardViolations(before, after, twinOwner),
  );
};
const ownerViolations = (before: KubeObject | undefined, after: KubeObject | undefined): string[] =>
  remembered("ownerReferenceViolations", [before, after], () => ownerReferenceViolations(before, after));

/** Why owner references are refused, when they are: the sentence after "… changed." */
const ownersNote = (paths: readonly string[], subject: Subject): string =>
  paths.includes(OWNER_REFERENCES_PATH)
    ? ` Its ownerReferences may be removed, not added or changed, while it is not authoritative${subject.role === "infraMachine" ? ": they decide which Machine API object it mirrors" : ""}.`
    : "";

/** "Wait … or cancel …" for anything refused during a handover. */
function whileMigratingHint(
  mapi: KubeObject | undefined,
  kind: string,
  namespace: string,
  name: string,
): string {
  const back = synchronizedAPI(mapi);
  const cancel = back ? `, or cancel it: ${setAuthorityCommand(kind, namespace, name, back)}` : "";
  return `Wait until the handover completes (oc get ${mapiResource(kind)}/${name} -n ${namespace} -o jsonpath='{.status.authoritativeAPI}')${cancel}.`;
}

// --- mapi-frozen ---------------------------------------------------------------------------------------

/**
 * Which CAPI object an admin edits instead of a frozen MAPI one: providerSpec lives on the InfraMachine — the
 * one the CAPI twin references, else (no twin in the cache) the served platform's kind of the same name.
 */
function capiEditCommand(
  request: AdmissionRequest,
  subject: Subject,
  paths: string[],
  capiTwin: KubeObject | undefined,
  ctx: { readonly view: ClusterView; readonly settings: { readonly capiNamespace: string } },
): string {
  const capiNamespace = ctx.settings.capiNamespace;
  if (subject.subResource === "scale")
    return `Scale the Cluster API copy instead: oc scale ${capiResource("MachineSet")}/${subject.name} -n ${capiNamespace} --replicas=${requestedReplicas(request)}`;
  if (subject.kind === "Machine" && paths.some(isProviderSpecPath)) {
    const kind = infrastructureRefText(capiTwin, "kind", "") || servedPlatformOf(ctx.view).infraMachine.kind;
    const resource = resourceOf(pluralOfKind(kind), infrastructureRefText(capiTwin, "apiGroup", INFRA_GROUP));
    const name = infrastructureRefText(capiTwin, "name", subject.name);
    return `Edit the Cluster API copy instead: oc edit ${resource}/${name} -n ${capiNamespace}`;
  }
  return `Edit the Cluster API copy instead: oc edit ${capiResource(subject.kind)}/${subject.name} -n ${capiNamespace}`;
}

const isProviderSpecPath = (path: string): boolean => path.startsWith("spec.providerSpec");

/** A string field of the CAPI twin's infrastructureRef, or `fallback` when it is unset or empty. */
function infrastructureRefText(capiTwin: KubeObject | undefined, field: string, fallback: string): string {
  const v = getPath(capiTwin, ["spec", "infrastructureRef", field]);
  return typeof v === "string" && v ? v : fallback;
}

export const mapiFrozen: Rule = {
  id: "mapi-frozen",
  webhook: "validate",
  reads: (request) =>
    request.subResource === "scale"
      ? [KINDS.mapiMachineSet, KINDS.capiMachineSet]
      : request.resource?.resource === "machinesets"
        ? [KINDS.capiMachineSet]
        : [KINDS.capiMachine],
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["UPDATE"], api: "mapi", subResources: ["", "scale"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const mapi = mapiAuthorityObject(request, subject, ctx.view);
    const status = statusAuthority(mapi);
    if (status !== AUTHORITY.clusterAPI && status !== AUTHORITY.migrating) return allow();
    const capiTwin = ctx.view.twinOf(subjectObject(subject, request));
    const twinOwner = authoritativeSideOf(mapi) === "capi" ? capiTwin : undefined;
    const paths = [
      ...specChanges(request, subject, true),
      ...(subject.subResource ? [] : guardViolations(request, twinOwner)),
      ...ownerChanges(request, subject, status),
    ];
    if (paths.length === 0) return allow();
    const { kind, namespace, name } = subject;
    if (status === AUTHORITY.migrating)
      return deny(
        403,
        `${describeSubject(subject)} is being migrated (status.authoritativeAPI=Migrating): ${listPaths(paths)} changed.`,
        paths,
        whileMigratingHint(mapi, kind, namespace, name),
      );
    const edit = capiEditCommand(request, subject, paths, capiTwin, ctx);
    return deny(
      403,
      `${describeSubject(subject)} is not authoritative (status.authoritativeAPI=ClusterAPI): ${listPaths(paths)} changed.${ownersNote(paths, subject)}`,
      paths,
      `${edit} — or set spec.authoritativeAPI=MachineAPI to migrate back.`,
    );
  },
};

// --- capi-frozen ---------------------------------------------------------------------------------------

/** "(MAPI Machine ns/x has status.authoritativeAPI=MachineAPI)" — why a CAPI object is not authoritative. */
const mapiStatusPhrase = (mapiWords: string, mapi: KubeObject | undefined): string => {
  const status = statusAuthority(mapi);
  return status === undefined
    ? `${mapiWords} has no status.authoritativeAPI yet, so Machine API is authoritative`
    : `${mapiWords} has status.authoritativeAPI=${status}`;
};

export const capiFrozen: Rule = {
  id: "capi-frozen",
  webhook: "validate",
  reads: twinReadsFor,
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["UPDATE"], api: "capi", subResources: ["", "scale"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const mapi = mapiAuthorityObject(request, subject, ctx.view);
    if (!mapi) return allow();
    const status = statusAuthority(mapi);
    if (status === AUTHORITY.clusterAPI) return allow();
    const twinOwner = authoritativeSideOf(mapi) === "mapi" ? mapi : undefined;
    const paths = [
      ...specChanges(request, subject, false),
      ...(subject.subResource ? [] : guardViolations(request, twinOwner)),
      ...ownerChanges(request, subject, status),
    ];
    if (paths.length === 0) return allow();
    const mapiKind = mapiTypeFor(request).kind;
    const mapiName = typeof mapi.metadata?.name === "string" ? mapi.metadata.name : subject.name;
    const mapiNs = ctx.settings.mapiNamespace;
    const mapiWords = describe("mapi", mapiKind, mapiNs, mapiName);
    if (status === AUTHORITY.migrating)
      return deny(
        403,
        `${describeSubject(subject)} is frozen while ${mapiWords} is being migrated (status.authoritativeAPI=Migrating): ${listPaths(paths)} changed.`,
        paths,
        whileMigratingHint(mapi, mapiKind, mapiNs, mapiName),
      );
    const edit =
      subject.subResource === "scale"
        ? `Scale the Machine API copy instead: oc scale ${mapiResource(mapiKind)}/${mapiName} -n ${mapiNs} --replicas=${requestedReplicas(request)}`
        : `Edit the Machine API copy instead: oc edit ${mapiResource(mapiKind)}/${mapiName} -n ${mapiNs}`;
    return deny(
      403,
      `${describeSubject(subject)} is not authoritative (${mapiStatusPhrase(mapiWords, mapi)}): ${listPaths(paths)} changed.${ownersNote(paths, subject)}`,
      paths,
      `${edit} — or migrate it to Cluster API first: ${setAuthorityCommand(mapiKind, mapiNs, mapiName, AUTHORITY.clusterAPI)}`,
    );
  },
};

// --- frozen-while-migrating ------------------------------------------------------------------------------

/** Whether `after` holds a finalizer `before` does not (removing finalizers is always allowed). */
export function addsFinalizer(before: readonly string[], after: readonly string[]): boolean {
  // A set, not `includes` per finalizer: that was quadratic in a crafted list (decision 61).
  const old = new Set(before);
  return after.some((f) => !old.has(f));
}

/** Annotation keys a handover leaves alone: delete marks and kubectl's bookkeeping. */
const judgedWhileMigrating = (key: string): boolean => !isDeleteMark(key) && key !== LAST_APPLIED;
const everyKey = (): boolean => true;

/** Everything a request changes that a handover does not allow: see the rule's table row. */
function migratingViolations(request: AdmissionRequest, subject: Subject): string[] {
  const paths = specChanges(request, subject, subject.api === "mapi");
  if (subject.subResource) return paths;
  const before = request.oldObject ?? undefined;
  const after = request.object ?? undefined;
  for (const path of remembered("migratingMetadata", [before, after], () => metadataChanges(before, after)))
    paths.push(path);
  return paths;
}

/** The labels, annotations, finalizers and ownerReferences a handover does not let a request change. */
function metadataChanges(before: KubeObject | undefined, after: KubeObject | undefined): string[] {
  const paths: string[] = [];
  // The changed keys in one pass, the 100 smallest sorted in front (decision 61): not a sort of them all.
  for (const key of guardedChanges(readLabels(before), readLabels(after), everyKey))
    paths.push(labelPath(key));
  for (const key of guardedChanges(readAnnotations(before), readAnnotations(after), judgedWhileMigrating))
    paths.push(annotationPath(key));
  if (addsFinalizer(finalizersOf(before), finalizersOf(after))) paths.push("metadata.finalizers");
  for (const path of ownerReferenceViolations(before, after)) paths.push(path);
  return paths;
}

export const frozenWhileMigrating: Rule = {
  id: "frozen-while-migrating",
  webhook: "validate",
  reads: (request) =>
    request.resource?.group === KINDS.mapiMachine.group
      ? request.subResource === "scale"
        ? [mapiTypeFor(request)]
        : []
      : twinReadsFor(request),
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["UPDATE"], subResources: ["", "scale"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const mapi = mapiAuthorityObject(request, subject, ctx.view);
    if (statusAuthority(mapi) !== AUTHORITY.migrating) return allow();
    const paths = migratingViolations(request, subject);
    if (paths.length === 0) return allow();
    const mapiKind = mapiTypeFor(request).kind;
    const mapiName = typeof mapi?.metadata?.name === "string" ? mapi.metadata.name : subject.name;
    const mapiNs = ctx.settings.mapiNamespace;
    const who =
      subject.api === "mapi"
        ? `${describeSubject(subject)} is being migrated`
        : `${describeSubject(subject)} is frozen while ${describe("mapi", mapiKind, mapiNs, mapiName)} is being migrated`;
    return deny(
      403,
      `${who} (status.authoritativeAPI=Migrating): ${listPaths(paths)} changed; until the handover ends only spec.authoritativeAPI (cancel), delete marks and removing finalizers or ownerReferences are allowed.`,
      paths,
      whileMigratingHint(mapi, mapiKind, mapiNs, mapiName),
    );
  },
};
