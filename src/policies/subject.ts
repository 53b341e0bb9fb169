/**
 * What an admission request is about, in the rules' vocabulary: which API (MAPI or CAPI), which role
 * (Machine, MachineSet, InfraMachine, infrastructure template), its name and namespace — classified once per
 * decision by the engine (`RuleContext.subject`); plus what a request does to authority (SPEC §1, §2.3: a
 * change, a cancel; the fields themselves are read by src/protocol) and the words and commands messages use
 * to name objects. Pure functions over request and object JSON; odd shapes read as absent, never throw.
 */
import {
  AUTHORITY,
  CAPI_GROUP,
  CAPI_VERSION,
  INFRA_GROUP,
  KINDS,
  MAPI_GROUP,
  MAPI_VERSION,
  type ResourceType,
  type StableAuthority,
} from "../kube/kinds.js";
import { isRecord, type KubeObject, nameOf, namespaceOf } from "../kube/object.js";
import type { ObjectStore } from "../kube/store.js";
import { type PlatformConverter, servedPlatform } from "../platforms/registry.js";
import { specAuthorityAsWritten, statusAuthority, synchronizedAPI } from "../protocol/authority.js";
import type { AdmissionRequest, PolicySettings } from "./types.js";

export type Api = "mapi" | "capi";
export type Role = "machine" | "machineSet" | "infraMachine" | "infraTemplate";

/** Kinds in the infrastructure group: `*MachineTemplate` is a template, `*Machine` an InfraMachine. */
const isInfraTemplateKind = (group: string, kind: string): boolean =>
  group === INFRA_GROUP && kind.endsWith("MachineTemplate");
const isInfraMachineKind = (group: string, kind: string): boolean =>
  group === INFRA_GROUP && kind.endsWith("Machine");

/** Classifies a group + kind; undefined for anything that is not a machine kind. */
function roleOf(group: string, kind: string): { api: Api; role: Role } | undefined {
  if (group === MAPI_GROUP || group === CAPI_GROUP) {
    const api: Api = group === MAPI_GROUP ? "mapi" : "capi";
    if (kind === "Machine") return { api, role: "machine" };
    if (kind === "MachineSet") return { api, role: "machineSet" };
    return undefined;
  }
  if (isInfraTemplateKind(group, kind)) return { api: "capi", role: "infraTemplate" };
  if (isInfraMachineKind(group, kind)) return { api: "capi", role: "infraMachine" };
  return undefined;
}

export const groupOfApiVersion = (apiVersion: unknown): string => {
  if (typeof apiVersion !== "string") return "";
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
};

export const classifyObject = (o: KubeObject | undefined): { api: Api; role: Role } | undefined =>
  isRecord(o) && typeof o.kind === "string" ? roleOf(groupOfApiVersion(o.apiVersion), o.kind) : undefined;

export interface Subject {
  readonly api: Api;
  readonly role: Role;
  readonly group: string;
  readonly version: string;
  /** Kubernetes kind of the main resource (`MachineSet` also for its `scale` subresource). */
  readonly kind: string;
  readonly plural: string;
  readonly name: string;
  readonly namespace: string;
  /** "" for the main resource. */
  readonly subResource: string;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The namespace a request is in: the request's own field, else the object's. */
export const requestNamespace = (request: AdmissionRequest): string =>
  str(request.namespace) ||
  namespaceOf(request.object ?? undefined) ||
  namespaceOf(request.oldObject ?? undefined);

/** The object a request is about: the new object, or the old one for DELETE. */
const requestObject = (request: AdmissionRequest): KubeObject | undefined => {
  const o = request.operation === "DELETE" ? request.oldObject : (request.object ?? request.oldObject);
  return isRecord(o) ? o : undefined;
};

/**
 * Classifies the request by its resource (which also holds for subresources, whose `kind` is e.g. Scale).
 * Undefined when it is not a machine kind, or a MAPI kind outside the MAPI namespace / a CAPI kind outside
 * the CAPI namespace: those are not the rules' business.
 */
export function subjectOf(request: AdmissionRequest, settings: PolicySettings): Subject | undefined {
  const resource = isRecord(request.resource) ? request.resource : undefined;
  const group = str(resource?.group);
  const plural = str(resource?.resource);
  const subResource = str(request.subResource);
  const requestKind = isRecord(request.kind) ? request.kind : undefined;
  let kind: string;
  if (group === MAPI_GROUP || group === CAPI_GROUP) {
    if (plural === "machines") kind = "Machine";
    else if (plural === "machinesets") kind = "MachineSet";
    else return undefined;
  } else if (group === INFRA_GROUP) {
    kind =
      !subResource && str(requestKind?.group) === group
        ? str(requestKind?.kind)
        : str(requestObject(request)?.kind);
  } else return undefined;
  const role = roleOf(group, kind);
  if (!role) return undefined;
  const namespace = requestNamespace(request);
  const expected = role.api === "mapi" ? settings.mapiNamespace : settings.capiNamespace;
  if (namespace !== expected) return undefined;
  const version = str(resource?.version) || (group === MAPI_GROUP ? MAPI_VERSION : CAPI_VERSION);
  const name = str(request.name) || nameOf(requestObject(request));
  // Spelled out, not `...role`: a spread into a literal with more properties cost ~3 µs a call in the bench
  // profile (bench/, PERFORMANCE.md) against ~0.1 µs for this. The engine calls it once per decision.
  return { api: role.api, role: role.role, group, version, kind, plural, name, namespace, subResource };
}

/**
 * The object of the request normalised for twin resolution: on CREATE the new object; on UPDATE and DELETE
 * what the object *was* (`oldObject`), never the owners or labels the request itself sets (SPEC §2.3: a new
 * first ownerReference or template label must not choose which MAPI object judges the request). apiVersion
 * and kind come from the resource (a `scale` request carries a Scale, not the MachineSet); name and namespace
 * are always set.
 */
export function subjectObject(subject: Subject, request: AdmissionRequest): KubeObject {
  const source = request.operation === "CREATE" ? request.object : request.oldObject;
  const o = subject.subResource || !isRecord(source) ? undefined : source;
  const metadata = isRecord(o?.metadata) ? o.metadata : {};
  return {
    ...(o ?? {}),
    apiVersion: `${subject.group}/${subject.version}`,
    kind: subject.kind,
    metadata: { ...metadata, name: subject.name, namespace: subject.namespace },
  };
}

// --- authority (SPEC §1) -----------------------------------------------------------------------------

// The accessors are src/protocol's, one set for every controller: spec reads as the user wrote it (the CRD
// default applied to an unset value), status as undefined while unset.

/** UPDATE of a MAPI main resource that changes `spec.authoritativeAPI`. */
const changesAuthority = (request: AdmissionRequest): boolean =>
  request.operation === "UPDATE" &&
  !request.subResource &&
  isRecord(request.object) &&
  isRecord(request.oldObject) &&
  specAuthorityAsWritten(request.object) !== specAuthorityAsWritten(request.oldObject);

/**
 * A cancel (SPEC §2.3): `spec.authoritativeAPI` changes back to `status.synchronizedAPI` while status is
 * Migrating. Without a `synchronizedAPI` (a handover begun by another implementation) every change of spec
 * while Migrating is read as a cancel: it is the only change that can be meant, and §3.3 infers the rest.
 */
const isCancel = (request: AdmissionRequest): boolean => {
  if (!changesAuthority(request)) return false;
  const old = request.oldObject ?? undefined;
  if (statusAuthority(old) !== AUTHORITY.migrating) return false;
  const back = synchronizedAPI(old);
  return back === undefined || specAuthorityAsWritten(request.object ?? undefined) === back;
};

/** A migration request: authority changes and it is not a cancel. */
export const isMigrationRequest = (request: AdmissionRequest): boolean =>
  changesAuthority(request) && !isCancel(request);

/** Which side is authoritative for a MAPI object: absent status counts as MachineAPI (§1 table). */
export function authoritativeSideOf(mapi: KubeObject | undefined): Api | undefined {
  const status = statusAuthority(mapi);
  if (status === undefined || status === AUTHORITY.machineAPI) return "mapi";
  if (status === AUTHORITY.clusterAPI) return "capi";
  const old = synchronizedAPI(mapi);
  return old === undefined ? undefined : old === AUTHORITY.machineAPI ? "mapi" : "capi";
}

// --- words and commands for messages -------------------------------------------------------------------

/** `MAPI Machine openshift-machine-api/worker-a`, `AWSMachine openshift-cluster-api/worker-a`. */
export const describe = (api: Api, kind: string, namespace: string, name: string): string =>
  kind === "Machine" || kind === "MachineSet"
    ? `${api === "mapi" ? "MAPI" : "CAPI"} ${kind} ${namespace}/${name}`
    : `${kind} ${namespace}/${name}`;
export const describeSubject = (s: Subject): string => describe(s.api, s.kind, s.namespace, s.name);

/** Fully-qualified resource name (`oc get machine` alone resolves to the CAPI group, SPEC §2.1). */
export const resourceOf = (plural: string, group: string): string => `${plural}.${group}`;
/** The plural of a CAPI infrastructure kind, by the providers' convention (`AWSMachine` → `awsmachines`). */
export const pluralOfKind = (kind: string): string => `${kind.toLowerCase()}s`;

export const mapiResource = (kind: string): string =>
  resourceOf(kind === "MachineSet" ? "machinesets" : "machines", MAPI_GROUP);
export const capiResource = (kind: string): string =>
  resourceOf(kind === "MachineSet" ? "machinesets" : "machines", CAPI_GROUP);

/**
 * The platform the cluster runs, as its Infrastructure object names it (the registry's default while it names
 * none): whose infrastructure kinds a message names when the objects at hand do not say. Rules that call it
 * read `Infrastructure/cluster`.
 */
export const servedPlatformOf = (view: Pick<ObjectStore, "get">): PlatformConverter =>
  servedPlatform(view.get(KINDS.infrastructure, "", "cluster"));

/** `oc patch … --type=merge -p '{"spec":{"authoritativeAPI":"X"}}'` for a MAPI object. */
export const setAuthorityCommand = (
  kind: string,
  namespace: string,
  name: string,
  to: StableAuthority,
): string =>
  `oc patch ${mapiResource(kind)}/${name} -n ${namespace} --type=merge -p '{"spec":{"authoritativeAPI":"${to}"}}'`;

/** A one-line request filter for `appliesTo` (STYLE: filters are pure one-line predicates). */
export interface SubjectFilter {
  readonly operations: readonly AdmissionRequest["operation"][];
  readonly api?: Api;
  readonly roles?: readonly Role[];
  readonly kinds?: readonly string[];
  /** Subresources the rule judges; default only the main resource (""). */
  readonly subResources?: readonly string[];
}

/** Whether a rule applies: the request's operation, and its subject as the engine classified it once. */
export function matches(
  request: AdmissionRequest,
  subject: Subject | undefined,
  filter: SubjectFilter,
): boolean {
  if (!filter.operations.includes(request.operation)) return false;
  if (!subject) return false;
  if (filter.api && subject.api !== filter.api) return false;
  if (filter.roles && !filter.roles.includes(subject.role)) return false;
  if (filter.kinds && !filter.kinds.includes(subject.kind)) return false;
  return (filter.subResources ?? [""]).includes(subject.subResource);
}

/** The subject of a request that `appliesTo` accepted; rules call it from `check`. */
export function subjectFor(ctx: { readonly subject: Subject | undefined }): Subject {
  if (!ctx.subject) throw new Error("rule checked a request that is not a machine kind in its namespace");
  return ctx.subject;
}

/**
 * The MAPI kind that carries authority for a request's object (its twin's kind, or its own): Machines and
 * InfraMachines map to MAPI Machines, MachineSets and templates to MAPI MachineSets. Rules declare it in
 * `reads`.
 */
export const mapiTypeFor = (request: AdmissionRequest): ResourceType => {
  const plural = str(isRecord(request.resource) ? request.resource.resource : undefined);
  return plural === "machinesets" || plural.endsWith("machinetemplates")
    ? KINDS.mapiMachineSet
    : KINDS.mapiMachine;
};
/** The CAPI twin kind of a MAPI request. */
export const capiTypeFor = (request: AdmissionRequest): ResourceType =>
  mapiTypeFor(request) === KINDS.mapiMachineSet ? KINDS.capiMachineSet : KINDS.capiMachine;

/**
 * The kinds resolving a CAPI request's MAPI twin reads (view.ts): the MAPI kind, and for infrastructure kinds
 * also the CAPI kind whose references name them (CAPI Machines for InfraMachines, MachineSets for templates).
 */
export const twinReadsFor = (request: AdmissionRequest): readonly ResourceType[] =>
  str(isRecord(request.resource) ? request.resource.group : undefined) === INFRA_GROUP
    ? [mapiTypeFor(request), capiTypeFor(request)]
    : [mapiTypeFor(request)];

/**
 * The MAPI twin a CAPI CREATE must be paused for (SPEC §2.3 `capi-create-paused` and `pause-new-capi`): the
 * twin while its status is not ClusterAPI, with that status; undefined when the object has no twin or its
 * twin is ClusterAPI-authoritative. The message words are the caller's, built only when it refuses.
 */
export function authoritativeTwinOfCreate(
  request: AdmissionRequest,
  ctx: {
    readonly subject: Subject | undefined;
    readonly view: { twinOf(o: KubeObject): KubeObject | undefined };
  },
): { mapi: KubeObject; status: string | undefined } | undefined {
  const mapi = ctx.view.twinOf(subjectObject(subjectFor(ctx), request));
  if (!mapi) return undefined;
  const status = statusAuthority(mapi);
  return status === AUTHORITY.clusterAPI ? undefined : { mapi, status };
}
