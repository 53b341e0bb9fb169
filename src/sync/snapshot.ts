/**
 * What one sync reconcile reads (SPEC §4.1, §4.2), as plain data: the MAPI object, its CAPI twin, the
 * InfraMachine or the MachineSet's templates, the owners the fork and the owner references need, the
 * `Infrastructure` and the CAPI `Cluster`. Also the dependencies the planner is given (the converter, as an
 * interface so tests can fake failures and warnings) and the readers that fill a snapshot from a cache.
 * Nothing here writes; the readers only call the `ObjectStore` they are handed. The one live read SPEC §4.6
 * requires (is storage of either twin being deleted) is done by the shell and passed in as a flag.
 */
import type { ResourceType } from "../kube/kinds.js";
import { INFRA_GROUP, INFRASTRUCTURE_REF_PATHS, KINDS, LABELS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { getPath, isRecord, nameOf, ownerReferencesOf } from "../kube/object.js";
import { filedUnder, INDEX } from "../kube/store.js";
import { DEFAULT_PLATFORM, platformOfInfraKind } from "../platforms/registry.js";
import type { ObjectStore } from "../policies/types.js";
import type { PlatformConverter } from "./conversion/platform.js";
import type { Unstamped } from "./conversion/stamp.js";
import type { ConversionResult } from "./conversion/types.js";

/** The converter contract of src/sync/conversion (SPEC §5), injected so tests can fake it. */
export interface SyncConverter {
  mapiMachineToCapi(
    mapi: KubeObject,
    infrastructure: KubeObject,
    opts: { capiNamespace: string },
  ): ConversionResult<{ machine: KubeObject; infraMachine: KubeObject }>;
  mapiMachineSetToCapi(
    mapi: KubeObject,
    infrastructure: KubeObject,
    opts: { capiNamespace: string },
  ): ConversionResult<{ machineSet: KubeObject; infraTemplate: KubeObject }>;
  capiMachineToMapi(
    capi: KubeObject,
    infraMachine: KubeObject,
    infrastructure: KubeObject,
    opts: { mapiNamespace: string; infraCluster?: KubeObject },
  ): ConversionResult<{ machine: KubeObject }>;
  capiMachineSetToMapi(
    capi: KubeObject,
    infraTemplate: KubeObject,
    infrastructure: KubeObject,
    opts: { mapiNamespace: string },
  ): ConversionResult<{ machineSet: KubeObject }>;
  /** SPEC §5.4: MAPI Machine status → CAPI Machine status + InfraMachine status. */
  mapiMachineStatusToCapi(
    mapi: KubeObject,
    infrastructure: KubeObject | undefined,
    opts: { now: string; capiMachine?: KubeObject },
  ): ConversionResult<{
    machineStatus: Record<string, unknown>;
    infraMachineStatus: Record<string, unknown>;
  }>;
  /** SPEC §5.4: CAPI Machine + InfraMachine status → the mirrored MAPI Machine status fields. */
  capiMachineStatusToMapi(
    capi: KubeObject,
    infraMachine: KubeObject,
    infrastructure: KubeObject | undefined,
    opts: { now: string; mapiMachine?: KubeObject },
  ): ConversionResult<{ status: Record<string, unknown> }>;
  /**
   * Optional: `mapiMachineStatusToCapi` before the clock, so that `stampNow(this(…), now)` is exactly its
   * result. A converter that has it lets `memoisingConverter` remember status mirroring too.
   */
  mapiMachineStatusToCapiUnstamped?(
    mapi: KubeObject,
    infrastructure: KubeObject | undefined,
    opts: { capiMachine?: KubeObject },
  ): Unstamped<
    ConversionResult<{
      machineStatus: Record<string, unknown>;
      infraMachineStatus: Record<string, unknown>;
    }>
  >;
  /** Optional: `capiMachineStatusToMapi` before the clock (as `mapiMachineStatusToCapiUnstamped`). */
  capiMachineStatusToMapiUnstamped?(
    capi: KubeObject,
    infraMachine: KubeObject,
    infrastructure: KubeObject | undefined,
    opts: { mapiMachine?: KubeObject },
  ): Unstamped<ConversionResult<{ status: Record<string, unknown> }>>;
  mapiMachineSetStatusToCapi(
    mapi: KubeObject,
    infrastructure: KubeObject | undefined,
  ): ConversionResult<{ status: Record<string, unknown> }>;
  capiMachineSetStatusToMapi(capi: KubeObject): ConversionResult<{ status: Record<string, unknown> }>;
}

export interface SyncSettings {
  mapiNamespace: string;
  capiNamespace: string;
  /** The platform the cluster runs on (Infrastructure `status.platformStatus.type`); default AWS. */
  platform?: PlatformConverter;
}

/** The settings' platform, AWS when none is named (decision 87). */
export const platformOf = (settings: SyncSettings): PlatformConverter =>
  settings.platform ?? DEFAULT_PLATFORM;

export interface SyncDeps {
  converter: SyncConverter;
  settings: SyncSettings;
}

export interface MachineSnapshot {
  /** The reconcile key: the name shared by both twins. */
  name: string;
  mapi?: KubeObject;
  capi?: KubeObject;
  /** The CAPI Machine's `spec.infrastructureRef` target, or the same-named InfraMachine when no CAPI Machine. */
  infraMachine?: KubeObject;
  /** The CAPI MachineSet twin of the MAPI Machine's controlling MAPI MachineSet (owner references, §4.3). */
  capiTwinOfMapiOwner?: KubeObject;
  /** The CAPI Machine's controlling CAPI MachineSet (the MAPI-absent branch of §4.2). */
  capiOwnerMachineSet?: KubeObject;
  /** The MAPI twin of `capiOwnerMachineSet`; its presence makes a CAPI-only Machine mirrored. */
  mapiTwinOfCapiOwner?: KubeObject;
  /**
   * Every CAPI MachineSet in the CAPI namespace, read only when there is no CAPI Machine: a mirror about to
   * be created must not be one a set would adopt (§4.6).
   */
  capiMachineSets?: readonly KubeObject[];
  infrastructure?: KubeObject;
  /** The CAPI `Cluster` named after `Infrastructure .status.infrastructureName` (owner references). */
  cluster?: KubeObject;
  /** The platform's InfraCluster (AWSCluster), for control plane conversions. */
  infraCluster?: KubeObject;
  /**
   * SPEC §4.6 live read: is either namespace or any CRD of the twins being deleted. `undefined` = not read;
   * a plan that would propagate a deletion then writes nothing and asks for the read (`needsStorageCheck`).
   */
  storageBeingRemoved?: boolean;
  /**
   * SPEC §4.6 live read: does the deleting CAPI twin go with its `Cluster` (a cascade, never a request for a
   * MAPI object that is not ClusterAPI)? `undefined` = not read; a plan that depends on it writes nothing and
   * asks for the read (`needsCascadeCheck`). See shell/cascade.ts.
   */
  clusterCascade?: boolean;
}

export interface MachineSetSnapshot {
  name: string;
  mapi?: KubeObject;
  capi?: KubeObject;
  /**
   * InfraMachineTemplates in the CAPI namespace that concern this set: every one labelled with the template
   * label for it, plus the one the live CAPI MachineSet references (which may be hand-made, unlabelled).
   */
  templates: readonly KubeObject[];
  /**
   * Names of `templates` another CAPI MachineSet references (§4.6): the sync never deletes those, so a set
   * made from a copy of ours keeps working; the last reference going away brings this key back (keys below).
   */
  templatesReferencedElsewhere?: readonly string[];
  /** MAPI Machines carrying an ownerReference to the MAPI MachineSet (orphaning, §4.6). */
  mapiMachines: readonly KubeObject[];
  /** The CAPI twins (same name) of `mapiMachines` that exist: where their delete marks must show (§2.2). */
  capiMachines?: readonly KubeObject[];
  infrastructure?: KubeObject;
  cluster?: KubeObject;
  storageBeingRemoved?: boolean;
  /** As MachineSnapshot.clusterCascade, for the CAPI MachineSet. */
  clusterCascade?: boolean;
}

/** `spec.infrastructureRef` of a CAPI Machine, or `spec.template.spec.infrastructureRef` of a MachineSet. */
export interface InfrastructureRef {
  apiGroup: string;
  kind: string;
  name: string;
}

export const infrastructureRefOf = (capi: KubeObject | undefined): InfrastructureRef | undefined => {
  const ref =
    getPath(capi, INFRASTRUCTURE_REF_PATHS.machine) ?? getPath(capi, INFRASTRUCTURE_REF_PATHS.machineSet);
  if (!isRecord(ref) || typeof ref.kind !== "string" || typeof ref.name !== "string") return undefined;
  // v1beta2 uses apiGroup; tolerate a v1beta1-style apiVersion.
  const apiGroup =
    typeof ref.apiGroup === "string"
      ? ref.apiGroup
      : typeof ref.apiVersion === "string"
        ? (ref.apiVersion.split("/")[0] ?? "")
        : "";
  return { apiGroup, kind: ref.kind, name: ref.name };
};

/** Maps an infrastructure reference to the type to read; unknown kinds read as absent. */
export type InfraTypeResolver = (ref: InfrastructureRef) => ResourceType | undefined;

/** The InfraMachine and template kinds of every platform the product supports. */
export const defaultInfraTypeResolver: InfraTypeResolver = (ref) => {
  if (ref.apiGroup !== INFRA_GROUP && ref.apiGroup !== "") return undefined;
  const platform = platformOfInfraKind(ref.kind);
  if (platform === undefined) return undefined;
  if (ref.kind === platform.infraMachine.kind) return platform.infraMachine;
  if (ref.kind === platform.infraMachineTemplate.kind) return platform.infraMachineTemplate;
  return undefined;
};

const controllerOf = (o: KubeObject | undefined, kind: string, groupPrefix: string) =>
  ownerReferencesOf(o).find(
    (r) => r.controller === true && r.kind === kind && r.apiVersion.startsWith(`${groupPrefix}/`),
  );

/** The name of the Cluster (and InfraCluster) the snapshots read: the Infrastructure's infrastructureName. */
export const clusterNameOf = (infrastructure: KubeObject | undefined): string => {
  const name = getPath(infrastructure, ["status", "infrastructureName"]);
  return typeof name === "string" ? name : "";
};

export interface SnapshotReadOptions extends SyncSettings {
  resolveInfraType?: InfraTypeResolver;
  storageBeingRemoved?: boolean;
  clusterCascade?: boolean;
}

const common = (store: ObjectStore, opts: SnapshotReadOptions) => {
  const infrastructure = store.get(KINDS.infrastructure, "", "cluster");
  const clusterName = clusterNameOf(infrastructure);
  const cluster = clusterName ? store.get(KINDS.capiCluster, opts.capiNamespace, clusterName) : undefined;
  return { infrastructure, cluster, clusterName };
};

/** Fills a MachineSnapshot from the cache (SPEC §4.1 MachineSync reads). */
export const readMachineSnapshot = (
  store: ObjectStore,
  name: string,
  opts: SnapshotReadOptions,
): MachineSnapshot => {
  const resolve = opts.resolveInfraType ?? defaultInfraTypeResolver;
  const mapi = store.get(KINDS.mapiMachine, opts.mapiNamespace, name);
  const capi = store.get(KINDS.capiMachine, opts.capiNamespace, name);
  const ref = infrastructureRefOf(capi);
  const refType = ref ? resolve(ref) : undefined;
  const infraMachine =
    ref && refType
      ? store.get(refType, opts.capiNamespace, ref.name)
      : store.get(platformOf(opts).infraMachine, opts.capiNamespace, name);
  const mapiOwner = controllerOf(mapi, "MachineSet", "machine.openshift.io");
  const capiTwinOfMapiOwner = mapiOwner
    ? store.get(KINDS.capiMachineSet, opts.capiNamespace, mapiOwner.name)
    : undefined;
  const capiOwner = controllerOf(capi, "MachineSet", "cluster.x-k8s.io");
  const capiOwnerMachineSet = capiOwner
    ? store.get(KINDS.capiMachineSet, opts.capiNamespace, capiOwner.name)
    : undefined;
  const mapiTwinOfCapiOwner = capiOwnerMachineSet
    ? store.get(KINDS.mapiMachineSet, opts.mapiNamespace, nameOf(capiOwnerMachineSet))
    : undefined;
  const { infrastructure, cluster, clusterName } = common(store, opts);
  const infraCluster = clusterName
    ? store.get(platformOf(opts).infraCluster, opts.capiNamespace, clusterName)
    : undefined;
  return {
    name,
    mapi,
    capi,
    infraMachine,
    capiTwinOfMapiOwner,
    capiOwnerMachineSet,
    mapiTwinOfCapiOwner,
    ...(capi ? {} : { capiMachineSets: store.list(KINDS.capiMachineSet, opts.capiNamespace) }),
    infrastructure,
    cluster,
    infraCluster,
    storageBeingRemoved: opts.storageBeingRemoved,
    clusterCascade: opts.clusterCascade,
  };
};

/** Fills a MachineSetSnapshot from the cache (SPEC §4.1 MachineSetSync reads). */
export const readMachineSetSnapshot = (
  store: ObjectStore,
  name: string,
  opts: SnapshotReadOptions,
): MachineSetSnapshot => {
  const resolve = opts.resolveInfraType ?? defaultInfraTypeResolver;
  const mapi = store.get(KINDS.mapiMachineSet, opts.mapiNamespace, name);
  const capi = store.get(KINDS.capiMachineSet, opts.capiNamespace, name);
  const ref = infrastructureRefOf(capi);
  const templateType = (ref ? resolve(ref) : undefined) ?? platformOf(opts).infraMachineTemplate;
  const labelled = store
    .list(templateType, opts.capiNamespace)
    .filter((t) => t.metadata?.labels?.[LABELS.templateMachineSet] === name);
  const current = ref ? store.get(templateType, opts.capiNamespace, ref.name) : undefined;
  const templates =
    current && !labelled.some((t) => nameOf(t) === nameOf(current)) ? [...labelled, current] : labelled;
  const templateNames = new Set(templates.map(nameOf));
  const templatesReferencedElsewhere = [
    ...new Set(
      store
        .list(KINDS.capiMachineSet, opts.capiNamespace)
        .filter((set) => nameOf(set) !== name)
        .flatMap((set) => infrastructureRefOf(set) ?? [])
        .filter((r) => r.kind === templateType.kind && templateNames.has(r.name))
        .map((r) => r.name),
    ),
  ];
  const mapiUid = mapi?.metadata?.uid;
  // The cache files every object under its owners' uids: the set's Machines without reading the fleet.
  const mapiMachines = mapiUid
    ? filedUnder(store, KINDS.mapiMachine, opts.mapiNamespace, INDEX.owner, mapiUid)
    : [];
  const capiMachines = mapiMachines.flatMap((m): KubeObject[] => {
    const twin = store.get(KINDS.capiMachine, opts.capiNamespace, nameOf(m));
    return twin ? [twin] : [];
  });
  const { infrastructure, cluster } = common(store, opts);
  return {
    name,
    mapi,
    capi,
    templates,
    ...(templatesReferencedElsewhere.length > 0 ? { templatesReferencedElsewhere } : {}),
    mapiMachines,
    capiMachines,
    infrastructure,
    cluster,
    storageBeingRemoved: opts.storageBeingRemoved,
    clusterCascade: opts.clusterCascade,
  };
};

/**
 * §4.1 watch mapping for MachineSync: which reconcile key an event on `object` concerns. Machines of
 * either API map to their name; an InfraMachine maps to its owning CAPI Machine, else to its own name.
 */
export const machineKeysFor = (object: KubeObject): string[] => {
  if (object.kind === "Machine") return [nameOf(object)];
  const owner = ownerReferencesOf(object).find(
    (r) => r.kind === "Machine" && r.apiVersion.startsWith(`${KINDS.capiMachine.group}/`),
  );
  return [owner ? owner.name : nameOf(object)];
};

/**
 * §4.1 watch mapping for MachineSetSync: MachineSets of either API map to their name; an
 * InfraMachineTemplate maps to the set named by its template label, plus every CAPI MachineSet that
 * references it (a hand-made template has no label).
 */
export const machineSetKeysFor = (object: KubeObject, store: ObjectStore, opts: SyncSettings): string[] => {
  if (object.kind === "MachineSet") {
    // A set using a template labelled for another set: its changes (its deletion above all) may free that
    // template, which only the other set's key deletes (§4.6).
    const ref = infrastructureRefOf(object);
    const resolved = ref ? defaultInfraTypeResolver(ref) : undefined;
    const template = ref && resolved ? store.get(resolved, opts.capiNamespace, ref.name) : undefined;
    const madeFor = template?.metadata?.labels?.[LABELS.templateMachineSet];
    return madeFor && madeFor !== nameOf(object) ? [nameOf(object), madeFor] : [nameOf(object)];
  }
  const keys = new Set<string>();
  const label = object.metadata?.labels?.[LABELS.templateMachineSet];
  if (label) keys.add(label);
  for (const set of store.list(KINDS.capiMachineSet, opts.capiNamespace)) {
    const ref = infrastructureRefOf(set);
    if (ref && ref.kind === object.kind && ref.name === nameOf(object)) keys.add(nameOf(set));
  }
  return [...keys];
};

/** What the shell reads live before a deletion step (§4.6): both namespaces and the twins' CRDs. */
export const storageToCheck = (
  kind: "Machine" | "MachineSet",
  opts: SyncSettings,
  infraType: ResourceType = kind === "Machine"
    ? platformOf(opts).infraMachine
    : platformOf(opts).infraMachineTemplate,
): { namespaces: string[]; customResourceDefinitions: string[] } => {
  const crd = (t: ResourceType) => `${t.plural}.${t.group}`;
  const [mapiType, capiType] =
    kind === "Machine"
      ? [KINDS.mapiMachine, KINDS.capiMachine]
      : [KINDS.mapiMachineSet, KINDS.capiMachineSet];
  return {
    namespaces: [opts.mapiNamespace, opts.capiNamespace],
    customResourceDefinitions: [crd(mapiType), crd(capiType), crd(infraType)],
  };
};
