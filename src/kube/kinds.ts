/**
 * The vocabulary of SPEC §0: API groups, kinds, plurals, and the well-known annotation, label and
 * finalizer names. Everything that names a Kubernetes thing the product touches lives here, so a rename is
 * one edit. Namespaces are configuration (src/config.ts), not constants.
 */

export const MAPI_GROUP = "machine.openshift.io";
export const MAPI_VERSION = "v1beta1";
export const MAPI_API_VERSION = `${MAPI_GROUP}/${MAPI_VERSION}`;
export const CAPI_GROUP = "cluster.x-k8s.io";
export const CAPI_VERSION = "v1beta2";
export const CAPI_API_VERSION = `${CAPI_GROUP}/${CAPI_VERSION}`;
export const INFRA_GROUP = "infrastructure.cluster.x-k8s.io";
const INFRA_VERSION = "v1beta2";
export const INFRA_API_VERSION = `${INFRA_GROUP}/${INFRA_VERSION}`;
/** CAPO's served version: upstream's converter writes `infrastructure.cluster.x-k8s.io/v1beta1`. */
const CAPO_VERSION = "v1beta1";
export const CAPO_API_VERSION = `${INFRA_GROUP}/${CAPO_VERSION}`;
export const CONFIG_GROUP = "config.openshift.io";
export const CONFIG_API_VERSION = `${CONFIG_GROUP}/v1`;

/** One API resource the product reads or writes. */
export interface ResourceType {
  readonly group: string; // "" for the core group
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

const type = (
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced = true,
): ResourceType => Object.freeze({ group, version, kind, plural, namespaced });

/** The kinds of SPEC §0, keyed by a stable short id used across the code base. */
export const KINDS = Object.freeze({
  mapiMachine: type(MAPI_GROUP, MAPI_VERSION, "Machine", "machines"),
  mapiMachineSet: type(MAPI_GROUP, MAPI_VERSION, "MachineSet", "machinesets"),
  capiMachine: type(CAPI_GROUP, CAPI_VERSION, "Machine", "machines"),
  capiMachineSet: type(CAPI_GROUP, CAPI_VERSION, "MachineSet", "machinesets"),
  capiCluster: type(CAPI_GROUP, CAPI_VERSION, "Cluster", "clusters"),
  awsMachine: type(INFRA_GROUP, INFRA_VERSION, "AWSMachine", "awsmachines"),
  awsMachineTemplate: type(INFRA_GROUP, INFRA_VERSION, "AWSMachineTemplate", "awsmachinetemplates"),
  awsCluster: type(INFRA_GROUP, INFRA_VERSION, "AWSCluster", "awsclusters"),
  openStackMachine: type(INFRA_GROUP, CAPO_VERSION, "OpenStackMachine", "openstackmachines"),
  openStackMachineTemplate: type(
    INFRA_GROUP,
    CAPO_VERSION,
    "OpenStackMachineTemplate",
    "openstackmachinetemplates",
  ),
  openStackCluster: type(INFRA_GROUP, CAPO_VERSION, "OpenStackCluster", "openstackclusters"),
  ibmPowerVSMachine: type(INFRA_GROUP, INFRA_VERSION, "IBMPowerVSMachine", "ibmpowervsmachines"),
  ibmPowerVSMachineTemplate: type(
    INFRA_GROUP,
    INFRA_VERSION,
    "IBMPowerVSMachineTemplate",
    "ibmpowervsmachinetemplates",
  ),
  ibmPowerVSCluster: type(INFRA_GROUP, INFRA_VERSION, "IBMPowerVSCluster", "ibmpowervsclusters"),
  infrastructure: type(CONFIG_GROUP, "v1", "Infrastructure", "infrastructures", false),
  featureGate: type(CONFIG_GROUP, "v1", "FeatureGate", "featuregates", false),
  clusterOperator: type(CONFIG_GROUP, "v1", "ClusterOperator", "clusteroperators", false),
  lease: type("coordination.k8s.io", "v1", "Lease", "leases"),
  deployment: type("apps", "v1", "Deployment", "deployments"),
  event: type("", "v1", "Event", "events"),
  configMap: type("", "v1", "ConfigMap", "configmaps"),
  namespace: type("", "v1", "Namespace", "namespaces", false),
  customResourceDefinition: type(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    false,
  ),
});

export const apiVersionOf = (t: ResourceType): string => (t.group ? `${t.group}/${t.version}` : t.version);

/** Authority values (SPEC §1). */
export const AUTHORITY = Object.freeze({
  machineAPI: "MachineAPI",
  clusterAPI: "ClusterAPI",
  migrating: "Migrating",
} as const);
export type StableAuthority = "MachineAPI" | "ClusterAPI";
export type StatusAuthority = StableAuthority | "Migrating";

export const PRODUCT_PREFIX = "machine-api-migration.openshift.io";
export const ANNOTATIONS = Object.freeze({
  paused: "cluster.x-k8s.io/paused",
  pausedBy: `${PRODUCT_PREFIX}/paused-by`,
  pausedFalseAt: `${PRODUCT_PREFIX}/paused-false-at`,
  needsAttention: `${PRODUCT_PREFIX}/needs-attention`,
  confirmDelete: `${PRODUCT_PREFIX}/confirm-delete`,
});
/** The value of the pause marker annotation (SPEC §0). */
export const PAUSED_BY_VALUE = "machine-api-migration";

export const DELETE_MARKS: readonly string[] = Object.freeze([
  "machine.openshift.io/delete-machine",
  "machine.openshift.io/cluster-api-delete-machine",
  "cluster.x-k8s.io/delete-machine",
]);

export const FINALIZERS = Object.freeze({
  sync: "sync.machine.openshift.io/finalizer",
  mapiMachine: "machine.machine.openshift.io",
  capiMachine: "machine.cluster.x-k8s.io",
  capiMachineSet: "cluster.x-k8s.io/machineset",
  awsMachine: "awsmachine.infrastructure.cluster.x-k8s.io",
  openStackMachine: "openstackmachine.infrastructure.cluster.x-k8s.io",
  ibmPowerVSMachine: "ibmpowervsmachine.infrastructure.cluster.x-k8s.io",
});

/** Where a CAPI Machine and a CAPI MachineSet reference their infrastructure object (InfraMachine, template). */
export const INFRASTRUCTURE_REF_PATHS = Object.freeze({
  machine: Object.freeze(["spec", "infrastructureRef"]),
  machineSet: Object.freeze(["spec", "template", "spec", "infrastructureRef"]),
});

export const LABELS = Object.freeze({
  templateMachineSet: "machine.openshift.io/cluster-api-machineset",
  capiSetName: "cluster.x-k8s.io/set-name",
  capiClusterName: "cluster.x-k8s.io/cluster-name",
  machineTemplateHash: "machine-template-hash",
});

/** Condition types the product reads or writes on MAPI objects (SPEC §1). */
export const CONDITIONS = Object.freeze({ synchronized: "Synchronized", paused: "Paused" });
