/**
 * Builders for real-shaped objects and admission requests used by the policy tests: MAPI Machine (AWS
 * providerSpec) and MachineSet, CAPI Machine and MachineSet, AWSMachine, AWSMachineTemplate, AWSCluster, their
 * CAPO v1beta1 counterparts (OpenStackMachine, OpenStackMachineTemplate, OpenStackCluster, an OpenStack
 * Infrastructure and providerSpec) and CAPIBM v1beta2 ones (IBMPowerVSMachine, IBMPowerVSMachineTemplate,
 * IBMPowerVSCluster, a PowerVS Infrastructure and providerSpec), and the AdmissionRequest envelopes the API
 * server sends (CREATE/UPDATE/DELETE, `scale` and `status` subresources), other platforms' infrastructure
 * kinds (`onPlatform`) and a cluster with both authorities (`twinWorld`). `edit` returns a changed deep copy, so a test states only what its case changes.
 */

import { expect } from "vitest";
import type { ResourceType } from "../../src/kube/kinds.js";
import {
  ANNOTATIONS,
  CAPI_API_VERSION,
  CAPO_API_VERSION,
  CONFIG_API_VERSION,
  FINALIZERS,
  INFRA_API_VERSION,
  LABELS,
  MAPI_API_VERSION,
  PAUSED_BY_VALUE,
  type StableAuthority,
  type StatusAuthority,
} from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { decide } from "../../src/policies/engine.js";
import { memoryStore } from "../../src/policies/memory-store.js";
import type {
  AdmissionRequest,
  ConvertibilityCheck,
  Decision,
  Freshness,
  PolicyContext,
  PolicySettings,
  UserInfo,
  WebhookName,
} from "../../src/policies/types.js";
import { clusterView } from "../../src/policies/view.js";

export const MAPI_NS = "openshift-machine-api";
export const CAPI_NS = "openshift-cluster-api";
export const CLUSTER = "ci-abc12";
export const PRODUCT_USER = "system:serviceaccount:openshift-cluster-api:machine-api-migration";

export const SETTINGS: PolicySettings = Object.freeze({
  mapiNamespace: MAPI_NS,
  capiNamespace: CAPI_NS,
  controllerUsers: [
    PRODUCT_USER,
    "system:serviceaccount:openshift-machine-api:machine-api-controllers",
    "system:serviceaccount:kube-system:generic-garbage-collector",
  ],
  requireDeleteConfirmation: true,
  cacheStaleAfterMs: 30_000,
});

export const ADMIN: UserInfo = {
  username: "kube:admin",
  groups: ["system:cluster-admins", "system:authenticated"],
};
export const MASTERS: UserInfo = {
  username: "system:admin",
  groups: ["system:masters", "system:authenticated"],
};

/** A deep copy with `change` applied: `edit(machine, (m) => { m.spec.x = 1 })`. */
// biome-ignore lint/suspicious/noExplicitAny: tests reach into arbitrary JSON
export function edit<T extends KubeObject>(o: T, change: (draft: any) => void): T {
  const copy = structuredClone(o);
  change(copy);
  return copy;
}

const condition = (type: string, status: string, reason = "AsExpected") => ({
  type,
  status,
  reason,
  severity: status === "True" ? "" : "Info",
  lastTransitionTime: "2026-11-30T09:00:00Z",
});

export interface MapiOptions {
  name?: string;
  /** status.authoritativeAPI; "absent" leaves it unset. */
  status?: StatusAuthority | "absent";
  /** spec.authoritativeAPI; defaults to the stable status value. */
  spec?: StableAuthority;
  synchronizedAPI?: StableAuthority;
  phase?: string;
  paused?: "True" | "False";
  synchronized?: "True" | "False" | "Unknown";
}

function mapiStatus(o: MapiOptions): Record<string, unknown> {
  const status = o.status ?? "MachineAPI";
  const stable = status === "Migrating" || status === "absent" ? undefined : status;
  return {
    ...(status === "absent" ? {} : { authoritativeAPI: status }),
    ...((o.synchronizedAPI ?? stable) ? { synchronizedAPI: o.synchronizedAPI ?? stable } : {}),
    synchronizedGeneration: 1,
    conditions: [
      condition("Synchronized", o.synchronized ?? "True", "ResourceSynchronized"),
      condition("Paused", o.paused ?? (status === "MachineAPI" ? "False" : "True")),
    ],
  };
}

const specAuthority = (o: MapiOptions): StableAuthority =>
  o.spec ??
  (o.status === "ClusterAPI" ? "ClusterAPI" : o.status === "Migrating" ? "ClusterAPI" : "MachineAPI");

export const awsProviderSpec = () => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "AWSMachineProviderConfig",
  ami: { id: "ami-0c2f1a9b8e7d6c5b4" },
  instanceType: "m6i.xlarge",
  placement: { region: "us-east-1", availabilityZone: "us-east-1a" },
  subnet: { filters: [{ name: "tag:Name", values: [`${CLUSTER}-subnet-private-us-east-1a`] }] },
  securityGroups: [{ filters: [{ name: "tag:Name", values: [`${CLUSTER}-node`] }] }],
  iamInstanceProfile: { id: `${CLUSTER}-worker-profile` },
  userDataSecret: { name: "worker-user-data" },
  credentialsSecret: { name: "aws-cloud-credentials" },
  blockDevices: [{ ebs: { volumeSize: 120, volumeType: "gp3", encrypted: true } }],
  tags: [{ name: `kubernetes.io/cluster/${CLUSTER}`, value: "owned" }],
  deviceIndex: 0,
});

export function mapiMachine(o: MapiOptions = {}): KubeObject {
  const name = o.name ?? "worker-a";
  return {
    apiVersion: MAPI_API_VERSION,
    kind: "Machine",
    metadata: {
      name,
      namespace: MAPI_NS,
      uid: `uid-mapi-machine-${name}`,
      resourceVersion: "100",
      generation: 1,
      labels: {
        "machine.openshift.io/cluster-api-cluster": CLUSTER,
        "machine.openshift.io/cluster-api-machine-role": "worker",
        "machine.openshift.io/cluster-api-machine-type": "worker",
        "machine.openshift.io/cluster-api-machineset": `${CLUSTER}-worker-us-east-1a`,
      },
      annotations: { "machine.openshift.io/instance-state": "running" },
      finalizers: [FINALIZERS.mapiMachine, FINALIZERS.sync],
    },
    spec: {
      authoritativeAPI: specAuthority(o),
      lifecycleHooks: {},
      metadata: {},
      providerID: "aws:///us-east-1a/i-0a1b2c3d4e5f60718",
      providerSpec: { value: awsProviderSpec() },
    },
    status: {
      phase: o.phase ?? "Running",
      nodeRef: { kind: "Node", name: `ip-10-0-1-23.ec2.internal` },
      ...mapiStatus(o),
    },
  };
}

export function mapiMachineSet(o: MapiOptions & { replicas?: number } = {}): KubeObject {
  const name = o.name ?? `${CLUSTER}-worker-us-east-1a`;
  const selector = {
    "machine.openshift.io/cluster-api-cluster": CLUSTER,
    "machine.openshift.io/cluster-api-machineset": name,
  };
  return {
    apiVersion: MAPI_API_VERSION,
    kind: "MachineSet",
    metadata: {
      name,
      namespace: MAPI_NS,
      uid: `uid-mapi-machineset-${name}`,
      resourceVersion: "200",
      generation: 1,
      labels: { "machine.openshift.io/cluster-api-cluster": CLUSTER },
      finalizers: [FINALIZERS.sync],
    },
    spec: {
      authoritativeAPI: specAuthority(o),
      replicas: o.replicas ?? 2,
      deletePolicy: "Oldest",
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...selector, "machine.openshift.io/cluster-api-machine-role": "worker" } },
        spec: { authoritativeAPI: specAuthority(o), providerSpec: { value: awsProviderSpec() } },
      },
    },
    status: { replicas: o.replicas ?? 2, readyReplicas: o.replicas ?? 2, ...mapiStatus(o) },
  };
}

const pauseAnnotations = (paused: "marked" | "admin" | "none"): Record<string, string> =>
  paused === "marked"
    ? { [ANNOTATIONS.paused]: "", [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE }
    : paused === "admin"
      ? { [ANNOTATIONS.paused]: "" }
      : {};

export interface CapiOptions {
  name?: string;
  paused?: "marked" | "admin" | "none";
  provisioned?: boolean;
  deleting?: boolean;
}

export function capiMachine(o: CapiOptions = {}): KubeObject {
  const name = o.name ?? "worker-a";
  return {
    apiVersion: CAPI_API_VERSION,
    kind: "Machine",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-capi-machine-${name}`,
      resourceVersion: "300",
      generation: 1,
      labels: { [LABELS.capiClusterName]: CLUSTER, "node-role.kubernetes.io/worker": "" },
      annotations: pauseAnnotations(o.paused ?? "marked"),
      finalizers: [FINALIZERS.sync],
      ...(o.deleting ? { deletionTimestamp: "2026-11-30T09:30:00Z" } : {}),
    },
    spec: {
      clusterName: CLUSTER,
      bootstrap: { dataSecretName: "worker-user-data" },
      infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name },
      providerID: "aws:///us-east-1a/i-0a1b2c3d4e5f60718",
      failureDomain: "us-east-1a",
      deletion: { nodeDeletionTimeoutSeconds: 10 },
    },
    status: { phase: "Running", initialization: { infrastructureProvisioned: o.provisioned ?? true } },
  };
}

export function capiMachineSet(o: CapiOptions & { replicas?: number } = {}): KubeObject {
  const name = o.name ?? `${CLUSTER}-worker-us-east-1a`;
  const selector = { [LABELS.capiClusterName]: CLUSTER, "machine.openshift.io/cluster-api-machineset": name };
  return {
    apiVersion: CAPI_API_VERSION,
    kind: "MachineSet",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-capi-machineset-${name}`,
      resourceVersion: "400",
      generation: 1,
      labels: { [LABELS.capiClusterName]: CLUSTER },
      annotations: pauseAnnotations(o.paused ?? "marked"),
      finalizers: [FINALIZERS.sync],
    },
    spec: {
      clusterName: CLUSTER,
      replicas: o.replicas ?? 2,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: selector },
        spec: {
          clusterName: CLUSTER,
          bootstrap: { dataSecretName: "worker-user-data" },
          infrastructureRef: {
            apiGroup: "infrastructure.cluster.x-k8s.io",
            kind: "AWSMachineTemplate",
            name: `${name}-1a2b3c4d`,
          },
        },
      },
    },
    status: { replicas: o.replicas ?? 2 },
  };
}

const awsMachineSpec = () => ({
  ami: { id: "ami-0c2f1a9b8e7d6c5b4" },
  instanceType: "m6i.xlarge",
  iamInstanceProfile: `${CLUSTER}-worker-profile`,
  ignition: { storageType: "UnencryptedUserData", version: "3.4" },
  additionalTags: { [`kubernetes.io/cluster/${CLUSTER}`]: "owned" },
  rootVolume: { size: 120, type: "gp3", encrypted: true },
  instanceMetadataOptions: { httpEndpoint: "enabled", httpTokens: "optional", httpPutResponseHopLimit: 1 },
});

/** The ownerReference Cluster API puts on an InfraMachine: its CAPI Machine `name`, as controller. */
export const capiMachineOwnerRef = (name: string) => ({
  apiVersion: CAPI_API_VERSION,
  kind: "Machine",
  name,
  uid: `uid-capi-machine-${name}`,
  controller: true,
  blockOwnerDeletion: true,
});

/** An AWSMachine owned by the CAPI Machine `owner` (default: same name). */
export function awsMachine(o: CapiOptions & { owner?: string | null } = {}): KubeObject {
  const name = o.name ?? "worker-a";
  const owner = o.owner === undefined ? name : o.owner;
  return {
    apiVersion: INFRA_API_VERSION,
    kind: "AWSMachine",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-awsmachine-${name}`,
      resourceVersion: "500",
      labels: { [LABELS.capiClusterName]: CLUSTER },
      annotations: pauseAnnotations(o.paused ?? "marked"),
      finalizers: [FINALIZERS.sync],
      ...(owner ? { ownerReferences: [capiMachineOwnerRef(owner)] } : {}),
    },
    spec: {
      ...awsMachineSpec(),
      providerID: "aws:///us-east-1a/i-0a1b2c3d4e5f60718",
      instanceID: "i-0a1b2c3d4e5f60718",
    },
    status: { ready: true, instanceState: "running" },
  };
}

export function awsMachineTemplate(o: CapiOptions & { machineSet?: string | null } = {}): KubeObject {
  const set = o.machineSet === undefined ? `${CLUSTER}-worker-us-east-1a` : o.machineSet;
  const name = o.name ?? `${CLUSTER}-worker-us-east-1a-1a2b3c4d`;
  return {
    apiVersion: INFRA_API_VERSION,
    kind: "AWSMachineTemplate",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-awsmachinetemplate-${name}`,
      resourceVersion: "600",
      labels: set ? { [LABELS.templateMachineSet]: set } : {},
      annotations: pauseAnnotations(o.paused ?? "none"),
    },
    spec: { template: { spec: awsMachineSpec() } },
  };
}

/** The CAPI `Cluster` the platform creates, named after the Infrastructure's infrastructureName (SPEC §0). */
export function capiClusterObject(o: { name?: string } = {}): KubeObject {
  const name = o.name ?? CLUSTER;
  return {
    apiVersion: CAPI_API_VERSION,
    kind: "Cluster",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-cluster-${name}`,
      resourceVersion: "700",
      annotations: {},
    },
    spec: {
      infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSCluster", name },
    },
    status: { initialization: { infrastructureProvisioned: true }, phase: "Provisioned" },
  };
}

/** The infrastructure cluster (`AWSCluster`) of the CAPI `Cluster` of the same name. */
export function awsClusterObject(o: { name?: string } = {}): KubeObject {
  const name = o.name ?? CLUSTER;
  return {
    apiVersion: INFRA_API_VERSION,
    kind: "AWSCluster",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-awscluster-${name}`,
      resourceVersion: "710",
      annotations: { "cluster.x-k8s.io/managed-by": "" },
    },
    spec: { region: "us-east-1" },
    status: { ready: true },
  };
}

/** `Infrastructure/cluster`, whose `status.infrastructureName` names the CAPI `Cluster` (SPEC §0). */
export function infrastructureObject(infrastructureName = CLUSTER): KubeObject {
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: "Infrastructure",
    metadata: { name: "cluster", uid: "uid-infrastructure", resourceVersion: "1" },
    spec: { platformSpec: { type: "AWS", aws: {} } },
    status: {
      infrastructureName,
      platform: "AWS",
      platformStatus: { type: "AWS", aws: { region: "us-east-1" } },
    },
  };
}

// --- OpenStack (CAPO v1beta1, SPEC §5.5) ---------------------------------------------------------------

/** `Infrastructure/cluster` of an OpenStack cluster: the platform the process serves. */
export function openstackInfrastructureObject(infrastructureName = CLUSTER): KubeObject {
  return edit(infrastructureObject(infrastructureName), (i) => {
    i.spec.platformSpec = { type: "OpenStack", openstack: {} };
    i.status.platform = "OpenStack";
    i.status.platformStatus = { type: "OpenStack", openstack: { cloudName: "openstack" } };
  });
}

/** The MAPO providerSpec the installer writes for a worker (`OpenstackProviderSpec`). */
export const openstackProviderSpec = () => ({
  apiVersion: "machine.openshift.io/v1alpha1",
  kind: "OpenstackProviderSpec",
  cloudName: "openstack",
  cloudsSecret: { name: "openstack-cloud-credentials", namespace: MAPI_NS },
  flavor: "m1.xlarge",
  image: "rhcos-4.17",
  availabilityZone: "nova-az1",
  networks: [{ filter: {}, subnets: [{ filter: { name: `${CLUSTER}-nodes` } }] }],
  securityGroups: [{ filter: {}, name: `${CLUSTER}-worker` }],
  serverGroupName: `${CLUSTER}-worker`,
  tags: [`openshiftClusterID=${CLUSTER}`],
  trunk: true,
  userDataSecret: { name: "worker-user-data" },
});

/** A MAPI Machine of an OpenStack cluster: `mapiMachine(o)` with MAPO's providerSpec and providerID. */
export const openstackMapiMachine = (o: MapiOptions = {}): KubeObject =>
  edit(mapiMachine(o), (m) => {
    m.spec.providerSpec.value = openstackProviderSpec();
    m.spec.providerID = "openstack:///9b3e1c2a-5d4f-4e6a-8b7c-0d1e2f3a4b5c";
  });

const openStackMachineSpec = () => ({
  flavor: "m1.xlarge",
  image: { filter: { name: "rhcos-4.17" } },
  ports: [{ fixedIPs: [{ subnet: { filter: { name: `${CLUSTER}-nodes` } } }] }],
  securityGroups: [{ filter: { name: `${CLUSTER}-worker` } }],
  serverGroup: { filter: { name: `${CLUSTER}-worker` } },
  tags: [`openshiftClusterID=${CLUSTER}`],
  trunk: true,
  identityRef: { name: "openstack-cloud-credentials", cloudName: "openstack" },
});

/** An OpenStackMachine owned by the CAPI Machine `owner` (default: same name), as `awsMachine` is. */
export function openStackMachine(o: CapiOptions & { owner?: string | null } = {}): KubeObject {
  const name = o.name ?? "worker-a";
  const owner = o.owner === undefined ? name : o.owner;
  return {
    apiVersion: CAPO_API_VERSION,
    kind: "OpenStackMachine",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-openstackmachine-${name}`,
      resourceVersion: "500",
      labels: { [LABELS.capiClusterName]: CLUSTER },
      annotations: pauseAnnotations(o.paused ?? "marked"),
      finalizers: [FINALIZERS.sync],
      ...(owner ? { ownerReferences: [capiMachineOwnerRef(owner)] } : {}),
    },
    spec: {
      ...openStackMachineSpec(),
      providerID: "openstack:///9b3e1c2a-5d4f-4e6a-8b7c-0d1e2f3a4b5c",
    },
    status: { ready: true, instanceState: "ACTIVE" },
  };
}

export function openStackMachineTemplate(o: CapiOptions & { machineSet?: string | null } = {}): KubeObject {
  const set = o.machineSet === undefined ? `${CLUSTER}-worker-us-east-1a` : o.machineSet;
  const name = o.name ?? `${CLUSTER}-worker-us-east-1a-1a2b3c4d`;
  return {
    apiVersion: CAPO_API_VERSION,
    kind: "OpenStackMachineTemplate",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-openstackmachinetemplate-${name}`,
      resourceVersion: "600",
      labels: set ? { [LABELS.templateMachineSet]: set } : {},
      annotations: pauseAnnotations(o.paused ?? "none"),
    },
    spec: { template: { spec: openStackMachineSpec() } },
  };
}

/** The infrastructure cluster (`OpenStackCluster`) of the CAPI `Cluster` of the same name. */
export function openStackClusterObject(o: { name?: string } = {}): KubeObject {
  const name = o.name ?? CLUSTER;
  return {
    apiVersion: CAPO_API_VERSION,
    kind: "OpenStackCluster",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-openstackcluster-${name}`,
      resourceVersion: "710",
      annotations: { "cluster.x-k8s.io/managed-by": "" },
    },
    spec: {
      identityRef: { name: "openstack-cloud-credentials", cloudName: "openstack" },
      externalNetwork: { filter: { name: "external" } },
    },
    status: { ready: true },
  };
}

/** CAPI copies referencing OpenStack kinds (CAPO v1beta1), as `capiMachine`/`capiMachineSet` reference AWS's. */
export const openstackCapiMachine = (o: CapiOptions = {}): KubeObject =>
  edit(capiMachine(o), (c) => {
    c.spec.infrastructureRef.kind = "OpenStackMachine";
    c.spec.providerID = "openstack:///9b3e1c2a-5d4f-4e6a-8b7c-0d1e2f3a4b5c";
    c.spec.failureDomain = "nova-az1";
  });

// --- PowerVS (CAPIBM v1beta2, SPEC §5.5) ---------------------------------------------------------------

const POWERVS_SERVICE_INSTANCE_ID = "3f5b2f0c-7d1e-4c2a-9b8e-1a2b3c4d5e6f";
const POWERVS_PROVIDER_ID = `ibmpowervs://dal/dal10/${POWERVS_SERVICE_INSTANCE_ID}/7c1d9e2a-0b3f-4a5c-8d6e-9f0a1b2c3d4e`;

/** `Infrastructure/cluster` of a PowerVS cluster: the platform the process serves. */
export function powervsInfrastructureObject(infrastructureName = CLUSTER): KubeObject {
  return edit(infrastructureObject(infrastructureName), (i) => {
    i.spec.platformSpec = { type: "PowerVS", powervs: {} };
    i.status.platform = "PowerVS";
    i.status.platformStatus = { type: "PowerVS", powervs: { region: "dal", zone: "dal10" } };
  });
}

/** The providerSpec the installer writes for a PowerVS worker (`PowerVSMachineProviderConfig`). */
export const powervsProviderSpec = () => ({
  apiVersion: "machine.openshift.io/v1",
  kind: "PowerVSMachineProviderConfig",
  credentialsSecret: { name: "powervs-credentials" },
  userDataSecret: { name: "worker-user-data" },
  serviceInstance: { type: "ID", id: POWERVS_SERVICE_INSTANCE_ID },
  image: { type: "Name", name: `rhcos-${CLUSTER}` },
  network: { type: "RegEx", regex: `^DHCPSERVER.*${CLUSTER}.*_Private$` },
  keyPairName: `${CLUSTER}-key`,
  systemType: "s922",
  processorType: "Shared",
  processors: "0.5",
  memoryGiB: 32,
});

/** A MAPI Machine of a PowerVS cluster: `mapiMachine(o)` with the PowerVS providerSpec and providerID. */
export const powervsMapiMachine = (o: MapiOptions = {}): KubeObject =>
  edit(mapiMachine(o), (m) => {
    m.spec.providerSpec.value = powervsProviderSpec();
    m.spec.providerID = POWERVS_PROVIDER_ID;
  });

const ibmPowerVSMachineSpec = () => ({
  serviceInstance: { id: POWERVS_SERVICE_INSTANCE_ID },
  image: { name: `rhcos-${CLUSTER}` },
  network: { regex: `^DHCPSERVER.*${CLUSTER}.*_Private$` },
  sshKey: `${CLUSTER}-key`,
  systemType: "s922",
  processorType: "Shared",
  processors: "0.5",
  memoryGiB: 32,
});

/** An IBMPowerVSMachine owned by the CAPI Machine `owner` (default: same name), as `awsMachine` is. */
export function ibmPowerVSMachine(o: CapiOptions & { owner?: string | null } = {}): KubeObject {
  const name = o.name ?? "worker-a";
  const owner = o.owner === undefined ? name : o.owner;
  return {
    apiVersion: INFRA_API_VERSION,
    kind: "IBMPowerVSMachine",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-ibmpowervsmachine-${name}`,
      resourceVersion: "500",
      labels: { [LABELS.capiClusterName]: CLUSTER },
      annotations: pauseAnnotations(o.paused ?? "marked"),
      finalizers: [FINALIZERS.sync],
      ...(owner ? { ownerReferences: [capiMachineOwnerRef(owner)] } : {}),
    },
    spec: { ...ibmPowerVSMachineSpec(), providerID: POWERVS_PROVIDER_ID },
    status: { ready: true, instanceState: "ACTIVE" },
  };
}

export function ibmPowerVSMachineTemplate(o: CapiOptions & { machineSet?: string | null } = {}): KubeObject {
  const set = o.machineSet === undefined ? `${CLUSTER}-worker-us-east-1a` : o.machineSet;
  const name = o.name ?? `${CLUSTER}-worker-us-east-1a-1a2b3c4d`;
  return {
    apiVersion: INFRA_API_VERSION,
    kind: "IBMPowerVSMachineTemplate",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-ibmpowervsmachinetemplate-${name}`,
      resourceVersion: "600",
      labels: set ? { [LABELS.templateMachineSet]: set } : {},
      annotations: pauseAnnotations(o.paused ?? "none"),
    },
    spec: { template: { spec: ibmPowerVSMachineSpec() } },
  };
}

/** The infrastructure cluster (`IBMPowerVSCluster`) of the CAPI `Cluster` of the same name. */
export function ibmPowerVSClusterObject(o: { name?: string } = {}): KubeObject {
  const name = o.name ?? CLUSTER;
  return {
    apiVersion: INFRA_API_VERSION,
    kind: "IBMPowerVSCluster",
    metadata: {
      name,
      namespace: CAPI_NS,
      uid: `uid-ibmpowervscluster-${name}`,
      resourceVersion: "710",
      annotations: { "cluster.x-k8s.io/managed-by": "" },
    },
    spec: {
      serviceInstanceID: POWERVS_SERVICE_INSTANCE_ID,
      zone: { name: "dal10" },
      network: { regex: `^DHCPSERVER.*${CLUSTER}.*_Private$` },
    },
    status: { ready: true },
  };
}

/** CAPI copies referencing PowerVS kinds (CAPIBM v1beta2; PowerVS has no failure domain). */
export const powervsCapiMachine = (o: CapiOptions = {}): KubeObject =>
  edit(capiMachine(o), (c) => {
    c.spec.infrastructureRef.kind = "IBMPowerVSMachine";
    c.spec.providerID = POWERVS_PROVIDER_ID;
    delete c.spec.failureDomain;
  });

/**
 * Platforms whose infrastructure kinds the infrastructure tests run on: SPEC §5.5's three, and GCP, which the
 * product has no converter for (the rules classify every `*Machine`/`*MachineTemplate` of the infra group).
 */
export const INFRA_PLATFORMS = ["AWS", "OpenStack", "IBMPowerVS", "GCP"] as const;

/**
 * The same object as another platform's infrastructure kind (SPEC §0: every supported platform's InfraMachine
 * and template play the AWS roles): `onPlatform(awsMachine(), "OpenStack")` is an OpenStackMachine.
 */
export const onPlatform = <T extends KubeObject>(o: T, platform: string): T =>
  platform === "AWS"
    ? o
    : edit(o, (draft) => {
        draft.kind = String(draft.kind).replace(/^AWS/, platform);
      });

export const SET_A = `${CLUSTER}-worker-us-east-1a`;
export const SET_B = `${CLUSTER}-worker-us-east-1b`;
/** The template the CAPI copy of SET_A references (and `awsMachineTemplate()`'s name). */
export const TEMPLATE_A = `${SET_A}-1a2b3c4d`;

/**
 * A cluster with both authorities: worker-a and SET_A are MachineAPI (their CAPI copies are paused mirrors),
 * worker-b and SET_B are ClusterAPI (unpaused CAPI copies), worker-c is being migrated. The CAPI copies
 * reference `platform`'s infrastructure kinds; the InfraMachines and templates are left to each test.
 */
export function twinWorld(platform: string, o: { withoutCapiMachineA?: boolean } = {}): KubeObject[] {
  const refKind = (c: KubeObject, kind: string) =>
    edit(c, (draft) => {
      const ref = draft.spec.infrastructureRef ?? draft.spec.template.spec.infrastructureRef;
      ref.kind = `${platform}${kind}`;
    });
  return [
    mapiMachine(),
    mapiMachine({ name: "worker-b", status: "ClusterAPI" }),
    mapiMachine({ name: "worker-c", status: "Migrating", synchronizedAPI: "MachineAPI" }),
    ...(o.withoutCapiMachineA ? [] : [refKind(capiMachine(), "Machine")]),
    refKind(capiMachine({ name: "worker-b", paused: "none" }), "Machine"),
    refKind(capiMachine({ name: "worker-c" }), "Machine"),
    mapiMachineSet(),
    mapiMachineSet({ name: SET_B, status: "ClusterAPI" }),
    refKind(capiMachineSet(), "MachineTemplate"),
    refKind(capiMachineSet({ name: SET_B, paused: "none" }), "MachineTemplate"),
  ];
}

// --- admission requests --------------------------------------------------------------------------------

const PLURALS: Record<string, string> = {
  Machine: "machines",
  MachineSet: "machinesets",
  AWSMachine: "awsmachines",
  AWSMachineTemplate: "awsmachinetemplates",
  AWSCluster: "awsclusters",
  OpenStackMachine: "openstackmachines",
  OpenStackMachineTemplate: "openstackmachinetemplates",
  OpenStackCluster: "openstackclusters",
  IBMPowerVSMachine: "ibmpowervsmachines",
  IBMPowerVSMachineTemplate: "ibmpowervsmachinetemplates",
  IBMPowerVSCluster: "ibmpowervsclusters",
  GCPMachine: "gcpmachines",
};

function envelope(
  operation: AdmissionRequest["operation"],
  o: KubeObject,
  rest: Partial<AdmissionRequest>,
): AdmissionRequest {
  const [group, version] = String(o.apiVersion).split("/") as [string, string];
  const kind = String(o.kind);
  return {
    uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
    kind: { group, version, kind },
    resource: { group, version, resource: PLURALS[kind] ?? `${kind.toLowerCase()}s` },
    name: o.metadata?.name,
    namespace: o.metadata?.namespace,
    operation,
    userInfo: ADMIN,
    object: null,
    oldObject: null,
    ...rest,
  };
}

export const createRequest = (o: KubeObject, rest: Partial<AdmissionRequest> = {}): AdmissionRequest =>
  envelope("CREATE", o, { object: o, ...rest });
export const updateRequest = (
  oldObject: KubeObject,
  object: KubeObject,
  rest: Partial<AdmissionRequest> = {},
): AdmissionRequest => envelope("UPDATE", object, { object, oldObject, ...rest });
export const deleteRequest = (o: KubeObject, rest: Partial<AdmissionRequest> = {}): AdmissionRequest =>
  envelope("DELETE", o, {
    oldObject: o,
    options: { apiVersion: "meta.k8s.io/v1", kind: "DeleteOptions", propagationPolicy: "Background" },
    ...rest,
  });

/** UPDATE of `<machineset>/scale`: the objects are autoscaling/v1 Scale, the resource is the MachineSet's. */
export function scaleRequest(machineSet: KubeObject, from: number, to: number): AdmissionRequest {
  // As kube-apiserver serialises a Scale: Go's omitempty leaves 0 replicas out (`spec: {}`).
  const scale = (replicas: number): KubeObject => ({
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: { name: machineSet.metadata?.name, namespace: machineSet.metadata?.namespace },
    spec: replicas ? { replicas } : {},
    status: { replicas: from },
  });
  const base = envelope("UPDATE", machineSet, {
    object: scale(to),
    oldObject: scale(from),
    subResource: "scale",
  });
  return {
    ...base,
    kind: { group: "autoscaling", version: "v1", kind: "Scale" },
    requestSubResource: "scale",
  };
}

export const statusRequest = (oldObject: KubeObject, object: KubeObject): AdmissionRequest =>
  envelope("UPDATE", object, { object, oldObject, subResource: "status", requestSubResource: "status" });

// --- context -------------------------------------------------------------------------------------------

export const FRESH: Freshness = { synced: true, disconnectedForMs: 0 };

export interface ContextOptions {
  freshness?: (t: ResourceType) => Freshness;
  settings?: Partial<PolicySettings>;
  checkConvertible?: ConvertibilityCheck;
  enforcing?: boolean;
}

/** A PolicyContext over an in-memory store holding `objects`. */
export function context(objects: KubeObject[], o: ContextOptions = {}): PolicyContext {
  const settings = { ...SETTINGS, ...o.settings };
  const store = memoryStore(objects, o.freshness ?? (() => FRESH));
  return {
    view: clusterView(store, settings),
    settings,
    checkConvertible: o.checkConvertible ?? (() => []),
    enforcing: o.enforcing ?? true,
  };
}

// --- table cases ---------------------------------------------------------------------------------------

export interface Case {
  name: string;
  webhook?: WebhookName;
  request: AdmissionRequest;
  objects?: KubeObject[];
  options?: ContextOptions;
  allowed: boolean;
  rule: string;
  /** Exact status message (string) or a pattern it must match. */
  message?: string | RegExp;
  warnings?: string[];
}

export const decideCase = (c: Case): Decision =>
  decide(c.webhook ?? "validate", c.request, context(c.objects ?? [], c.options));

/** Decides a case and asserts what it states. */
export function checkCase(c: Case): Decision {
  const d = decideCase(c);
  expect({ allowed: d.allowed, rule: d.rule }).toEqual({ allowed: c.allowed, rule: c.rule });
  if (c.allowed) expect(d.status).toBeUndefined();
  else expect(d.status?.message).toBeTypeOf("string");
  if (typeof c.message === "string") expect(d.status?.message).toBe(c.message);
  else if (c.message) expect(d.status?.message).toMatch(c.message);
  if (c.warnings) expect(d.warnings).toEqual(c.warnings);
  return d;
}

/**
 * The AdmissionReview text of an UPDATE of a ClusterAPI-frozen MAPI Machine whose providerSpec.value.crafted goes
 * from `before` to `after`: a string is spliced in as JSON text (a shape JSON.stringify cannot write, or would
 * recurse on), anything else is set as the value. The crafted-shape tests and the reliability campaign use it.
 */
export const craftedFrozenUpdate = (uid: string, before: unknown, after: unknown): string => {
  const frozen = mapiMachine({ status: "ClusterAPI" });
  const text = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: updateRequest(
      edit(frozen, (m) => {
        m.spec.providerSpec.value.crafted = typeof before === "string" ? "@before" : before;
      }),
      edit(frozen, (m) => {
        m.spec.providerSpec.value.crafted = typeof after === "string" ? "@after" : after;
      }),
      { uid },
    ),
  });
  const splice = (t: string, mark: string, v: unknown) => (typeof v === "string" ? t.replace(mark, v) : t);
  return splice(splice(text, '"@before"', before), '"@after"', after);
};
