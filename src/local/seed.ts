/**
 * The objects `npm start -- --seed demo` (AWS), `--seed demo-openstack` (OpenStack) and `--seed demo-powervs`
 * (PowerVS) load into the local API server (SPEC §8 local mode, issues 3 and 23): an `Infrastructure/cluster`
 * of the platform, the CAPI `Cluster` and the platform's InfraCluster (`AWSCluster`, `OpenStackCluster`,
 * `IBMPowerVSCluster`), the `FeatureGate` that enables the migration API (SPEC §0.1), two MAPI MachineSets and
 * three MAPI Machines with realistic providerSpecs. What differs between platforms is one `DemoPlatform`
 * record each (`DEMO_PLATFORMS`); every builder below is shared. Pure data; demo.ts writes it. Owner
 * references are filled in by the writer, which knows the uids.
 */

import { CAPI_API_VERSION, CONFIG_API_VERSION, MAPI_API_VERSION } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { platformNamed } from "../platforms/registry.js";
import { POWERVS_WORKSPACE } from "../simulate/clouds.js";
import type { PlatformConverter } from "../sync/conversion/platform.js";

export const DEMO_INFRASTRUCTURE_NAME = "demo-7xk2p";
const DEMO_REGION = "us-east-1";
/** The cloud of the OpenStack demo in its clouds.yaml, and the Secret that holds that file. */
const OPENSTACK_CLOUD = "openstack";
const OPENSTACK_CLOUDS_SECRET = "openstack-cloud-credentials";
/**
 * The PowerVS demo's place: its region and zone (Infrastructure `platformStatus.powervs`), the workspace
 * (service instance) every instance runs in, and the resource group that holds them.
 */
/** The demo's PowerVS workspace: the one the simulated PowerVS cloud has (src/simulate/clouds.ts). */
export const POWERVS_DEMO = POWERVS_WORKSPACE;

export interface SeedNamespaces {
  mapiNamespace: string;
  capiNamespace: string;
}

/** The platforms the demo seeds: `Infrastructure` `status.platformStatus.type`. */
export type DemoPlatformType = "AWS" | "OpenStack" | "PowerVS";

/** What the demo says differently on one platform; the builders of this file and demo.ts share the rest. */
export interface DemoPlatform {
  readonly type: DemoPlatformType;
  /** Infrastructure `spec.platformSpec`. */
  readonly platformSpec: Record<string, unknown>;
  /** Infrastructure `status.platformStatus`. */
  readonly platformStatus: Record<string, unknown>;
  /** The InfraCluster's `spec` (its kind is the registry's `infraCluster`; its status `{ ready: true }`). */
  readonly infraClusterSpec: Record<string, unknown>;
  /**
   * The zone of the demo's zone suffix (`a`, `b`, `c`); it names the MachineSets. On a platform without a
   * zone per Machine (PowerVS) it is the installer's MachineSet index instead.
   */
  zone(suffix: string): string;
  /** A worker's providerSpec value in `zone`, as the installer writes it. */
  providerSpec(zone: string): Record<string, unknown>;
  /** The id of the demo's `index`th provisioned instance (fixed: the demo reads the same on every run). */
  instanceId(index: number): string;
  /** The node an instance with the private address `ip`, running the Machine `machineName`, becomes. */
  nodeName(ip: string, machineName: string): string;
}

export function featureGate(): KubeObject {
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: "FeatureGate",
    metadata: { name: "cluster" },
    spec: { featureSet: "CustomNoUpgrade", customNoUpgrade: { enabled: ["MachineAPIMigration"] } },
    status: {
      featureGates: [{ version: "4.20.0", enabled: [{ name: "MachineAPIMigration" }], disabled: [] }],
    },
  };
}

/** An OpenShift AWSMachineProviderConfig as the installer writes it for a worker in `zone`. */
export function awsProviderSpec(zone: string, instanceType = "m6i.xlarge"): Record<string, unknown> {
  return {
    apiVersion: MAPI_API_VERSION,
    kind: "AWSMachineProviderConfig",
    ami: { id: "ami-0c5d61202c3b9c33e" },
    instanceType,
    blockDevices: [{ ebs: { encrypted: true, volumeSize: 120, volumeType: "gp3" } }],
    credentialsSecret: { name: "aws-cloud-credentials" },
    deviceIndex: 0,
    iamInstanceProfile: { id: `${DEMO_INFRASTRUCTURE_NAME}-worker-profile` },
    metadataServiceOptions: {},
    placement: { availabilityZone: zone, region: DEMO_REGION },
    securityGroups: [
      { filters: [{ name: "tag:Name", values: [`${DEMO_INFRASTRUCTURE_NAME}-node`] }] },
      { filters: [{ name: "tag:Name", values: [`${DEMO_INFRASTRUCTURE_NAME}-lb`] }] },
    ],
    subnet: {
      filters: [{ name: "tag:Name", values: [`${DEMO_INFRASTRUCTURE_NAME}-subnet-private-${zone}`] }],
    },
    tags: [{ name: `kubernetes.io/cluster/${DEMO_INFRASTRUCTURE_NAME}`, value: "owned" }],
    userDataSecret: { name: "worker-user-data" },
  };
}

/**
 * An OpenShift `OpenstackProviderSpec` (MAPO, machine.openshift.io/v1alpha1) as the installer writes it for
 * a worker in the compute availability zone `zone`: the nodes subnet and the worker security group by name,
 * one server group per zone, the cluster's tag and server metadata, trunk ports.
 */
export function openstackProviderSpec(zone: string, flavor = "m1.xlarge"): Record<string, unknown> {
  const tag = `openshiftClusterID=${DEMO_INFRASTRUCTURE_NAME}`;
  return {
    apiVersion: "machine.openshift.io/v1alpha1",
    kind: "OpenstackProviderSpec",
    availabilityZone: zone,
    cloudName: OPENSTACK_CLOUD,
    cloudsSecret: { name: OPENSTACK_CLOUDS_SECRET, namespace: "openshift-machine-api" },
    flavor,
    image: `${DEMO_INFRASTRUCTURE_NAME}-rhcos`,
    networks: [
      { filter: {}, subnets: [{ filter: { name: `${DEMO_INFRASTRUCTURE_NAME}-nodes`, tags: tag } }] },
    ],
    securityGroups: [{ filter: {}, name: `${DEMO_INFRASTRUCTURE_NAME}-worker` }],
    serverGroupName: `${DEMO_INFRASTRUCTURE_NAME}-worker-${zone}`,
    serverMetadata: {
      Name: `${DEMO_INFRASTRUCTURE_NAME}-worker`,
      openshiftClusterID: DEMO_INFRASTRUCTURE_NAME,
    },
    tags: [tag],
    trunk: true,
    userDataSecret: { name: "worker-user-data" },
  };
}

/**
 * An OpenShift `PowerVSMachineProviderConfig` (machine.openshift.io/v1) as the installer writes it for a
 * worker: the workspace by ID, the cluster's RHCOS image and its network by name, the installer's default
 * worker pool (s922, shared, 0.5 processors, 32 GiB), the cluster's SSH key. PowerVS has no zone per Machine
 * (the workspace is in the Infrastructure's zone), so every worker's providerSpec is the same.
 */
export function powervsProviderSpec(systemType = "s922"): Record<string, unknown> {
  return {
    apiVersion: "machine.openshift.io/v1",
    kind: "PowerVSMachineProviderConfig",
    serviceInstance: { type: "ID", id: POWERVS_DEMO.serviceInstanceID },
    image: { type: "Name", name: `rhcos-${DEMO_INFRASTRUCTURE_NAME}` },
    network: { type: "Name", name: `${DEMO_INFRASTRUCTURE_NAME}-network` },
    systemType,
    processorType: "Shared",
    processors: "0.5",
    memoryGiB: 32,
    keyPairName: `${DEMO_INFRASTRUCTURE_NAME}-key`,
    credentialsSecret: { name: "powervs-credentials" },
    userDataSecret: { name: "worker-user-data" },
  };
}

const ZONE_SUFFIXES = ["a", "b", "c"];

export const DEMO_PLATFORMS: Readonly<Record<DemoPlatformType, DemoPlatform>> = Object.freeze({
  AWS: {
    type: "AWS",
    platformSpec: { type: "AWS", aws: {} },
    platformStatus: { type: "AWS", aws: { region: DEMO_REGION } },
    infraClusterSpec: { region: DEMO_REGION },
    zone: (suffix: string) => `${DEMO_REGION}${suffix}`,
    providerSpec: (zone: string) => awsProviderSpec(zone),
    // An EC2 instance id; the node is named after its private address, as EC2's internal DNS names it.
    instanceId: (index: number) => `i-0${(0x5a3c9e1b7d2f4 + index).toString(16)}`,
    nodeName: (ip: string) => `ip-${ip.replaceAll(".", "-")}.ec2.internal`,
  },
  OpenStack: {
    type: "OpenStack",
    platformSpec: { type: "OpenStack", openstack: {} },
    platformStatus: {
      type: "OpenStack",
      openstack: {
        apiServerInternalIP: "10.0.0.5",
        apiServerInternalIPs: ["10.0.0.5"],
        cloudName: OPENSTACK_CLOUD,
        ingressIP: "10.0.0.7",
        ingressIPs: ["10.0.0.7"],
        loadBalancer: { type: "OpenShiftManagedDefault" },
      },
    },
    // cluster-capi-operator's OpenStackCluster names the same cloud and credentials as the Machines.
    infraClusterSpec: { identityRef: { cloudName: OPENSTACK_CLOUD, name: OPENSTACK_CLOUDS_SECRET } },
    zone: (suffix: string) => `az-${suffix}`,
    providerSpec: (zone: string) => openstackProviderSpec(zone),
    // A Nova server UUID; Nova names the node after the server, which MAPO names after the Machine.
    instanceId: (index: number) =>
      `3f7c2a9e-1b4d-4e6f-8a2c-${(0x5a3c9e1b7d2f + index).toString(16).padStart(12, "0")}`,
    nodeName: (_ip: string, machineName: string) => machineName,
  },
  PowerVS: {
    type: "PowerVS",
    platformSpec: { type: "PowerVS", powervs: {} },
    platformStatus: {
      type: "PowerVS",
      powervs: {
        region: POWERVS_DEMO.region,
        zone: POWERVS_DEMO.zone,
        resourceGroup: POWERVS_DEMO.resourceGroup,
        cisInstanceCRN:
          "crn:v1:bluemix:public:internet-svcs:global:a/4c2e9d7b1a3f4e6d8b0c2a4e6f8d0b1c:e5a7c9b1-3d5f-4a7c-9e1b-3d5f7a9c1e3b::",
      },
    },
    // The installer's IBMPowerVSCluster, cut to what names the cluster's place: the workspace, its zone, the
    // resource group and the network the Machines use.
    infraClusterSpec: {
      serviceInstance: { id: POWERVS_DEMO.serviceInstanceID },
      zone: POWERVS_DEMO.zone,
      resourceGroup: { name: POWERVS_DEMO.resourceGroup },
      network: { name: `${DEMO_INFRASTRUCTURE_NAME}-network` },
    },
    // No zone per Machine: the installer numbers the worker MachineSets instead (`<infra>-worker-0`).
    zone: (suffix: string) => String(ZONE_SUFFIXES.indexOf(suffix)),
    providerSpec: () => powervsProviderSpec(),
    // A PowerVS instance (PVM) UUID; the node is named after the instance, which the actuator names after
    // the Machine.
    instanceId: (index: number) =>
      `7c1d9e2a-0b3f-4a5c-8d6e-${(0x9f0a1b2c3d4e + index).toString(16).padStart(12, "0")}`,
    nodeName: (_ip: string, machineName: string) => machineName,
  },
});

/** The demo's record for `type`; a platform the demo does not seed is a programming error. */
export function demoPlatform(type: string): DemoPlatform {
  if (!Object.hasOwn(DEMO_PLATFORMS, type))
    throw new Error(
      `the demo seeds no platform ${JSON.stringify(type)}: it seeds ${Object.keys(DEMO_PLATFORMS).join(", ")}`,
    );
  return DEMO_PLATFORMS[type as DemoPlatformType];
}

/** The conversion registry's module for `type`: its kinds (InfraMachine, InfraCluster) and finalizer. */
export function platformConverterOf(type: DemoPlatformType): PlatformConverter {
  const converter = platformNamed(type);
  if (converter === undefined) throw new Error(`platform ${type} is not in the conversion registry`);
  return converter;
}

export function infrastructure(platform: DemoPlatformType = "AWS"): KubeObject {
  const p = demoPlatform(platform);
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: "Infrastructure",
    metadata: { name: "cluster" },
    spec: { platformSpec: structuredClone(p.platformSpec) },
    status: {
      infrastructureName: DEMO_INFRASTRUCTURE_NAME,
      platform: p.type,
      platformStatus: structuredClone(p.platformStatus),
      controlPlaneTopology: "HighlyAvailable",
      infrastructureTopology: "HighlyAvailable",
    },
  };
}

/** The CAPI Cluster and the platform's InfraCluster its infrastructureRef names. */
export function capiCluster(ns: SeedNamespaces, platform: DemoPlatformType = "AWS"): KubeObject[] {
  const infraCluster = platformConverterOf(platform).infraCluster;
  return [
    {
      apiVersion: CAPI_API_VERSION,
      kind: "Cluster",
      metadata: { name: DEMO_INFRASTRUCTURE_NAME, namespace: ns.capiNamespace },
      spec: {
        infrastructureRef: {
          apiGroup: infraCluster.group,
          kind: infraCluster.kind,
          name: DEMO_INFRASTRUCTURE_NAME,
        },
      },
      status: { initialization: { infrastructureProvisioned: true }, phase: "Provisioned" },
    },
    {
      apiVersion: `${infraCluster.group}/${infraCluster.version}`,
      kind: infraCluster.kind,
      metadata: { name: DEMO_INFRASTRUCTURE_NAME, namespace: ns.capiNamespace },
      spec: structuredClone(demoPlatform(platform).infraClusterSpec),
      status: { ready: true },
    },
  ];
}

const machineLabels = (setName?: string): Record<string, string> => ({
  "machine.openshift.io/cluster-api-cluster": DEMO_INFRASTRUCTURE_NAME,
  "machine.openshift.io/cluster-api-machine-role": "worker",
  "machine.openshift.io/cluster-api-machine-type": "worker",
  ...(setName ? { "machine.openshift.io/cluster-api-machineset": setName } : {}),
});

export function mapiMachineSet(
  ns: SeedNamespaces,
  zoneSuffix: string,
  replicas: number,
  platform: DemoPlatformType = "AWS",
): KubeObject {
  const p = demoPlatform(platform);
  const zone = p.zone(zoneSuffix);
  const name = `${DEMO_INFRASTRUCTURE_NAME}-worker-${zone}`;
  return {
    apiVersion: MAPI_API_VERSION,
    kind: "MachineSet",
    metadata: {
      name,
      namespace: ns.mapiNamespace,
      labels: { "machine.openshift.io/cluster-api-cluster": DEMO_INFRASTRUCTURE_NAME },
    },
    spec: {
      authoritativeAPI: "MachineAPI",
      replicas,
      selector: {
        matchLabels: {
          "machine.openshift.io/cluster-api-cluster": DEMO_INFRASTRUCTURE_NAME,
          "machine.openshift.io/cluster-api-machineset": name,
        },
      },
      template: {
        metadata: { labels: machineLabels(name) },
        spec: {
          authoritativeAPI: "MachineAPI",
          lifecycleHooks: {},
          metadata: {},
          providerSpec: { value: p.providerSpec(zone) },
        },
      },
    },
  };
}

/** A Machine as the MachineSet controller would have created it (owner reference added by the writer). */
export function mapiMachine(
  ns: SeedNamespaces,
  name: string,
  zoneSuffix: string,
  setName?: string,
  platform: DemoPlatformType = "AWS",
): KubeObject {
  const p = demoPlatform(platform);
  return {
    apiVersion: MAPI_API_VERSION,
    kind: "Machine",
    metadata: { name, namespace: ns.mapiNamespace, labels: machineLabels(setName) },
    spec: {
      authoritativeAPI: "MachineAPI",
      lifecycleHooks: {},
      metadata: {},
      providerSpec: { value: p.providerSpec(p.zone(zoneSuffix)) },
    },
  };
}

export interface DemoSeed {
  clusterScoped: KubeObject[];
  capi: KubeObject[];
  machineSets: KubeObject[];
  /** Machines with the name of the MachineSet that owns them, if any. */
  machines: Array<{ machine: KubeObject; ownerSetName?: string }>;
}

export function demoSeed(ns: SeedNamespaces, platform: DemoPlatformType = "AWS"): DemoSeed {
  const setA = mapiMachineSet(ns, "a", 1, platform);
  const setB = mapiMachineSet(ns, "b", 1, platform);
  const setAName = setA.metadata!.name!;
  const setBName = setB.metadata!.name!;
  return {
    clusterScoped: [featureGate(), infrastructure(platform)],
    capi: capiCluster(ns, platform),
    machineSets: [setA, setB],
    machines: [
      { machine: mapiMachine(ns, `${setAName}-4qzbx`, "a", setAName, platform), ownerSetName: setAName },
      { machine: mapiMachine(ns, `${setBName}-8n2vd`, "b", setBName, platform), ownerSetName: setBName },
      { machine: mapiMachine(ns, `${DEMO_INFRASTRUCTURE_NAME}-infra-0`, "c", undefined, platform) },
    ],
  };
}
