/**
 * The objects `npm start -- --seed demo` loads into the local API server (SPEC §8 local mode, issue 3): an
 * AWS `Infrastructure/cluster`, the CAPI `Cluster` and `AWSCluster`, the `FeatureGate` that enables the
 * migration API (SPEC §0.1), two MAPI MachineSets and three MAPI Machines with realistic AWS providerSpecs.
 * Pure data; `local.ts` writes it. Owner references are filled in by the writer, which knows the uids.
 */
import { CAPI_API_VERSION, CONFIG_API_VERSION, INFRA_API_VERSION, MAPI_API_VERSION } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";

export const DEMO_INFRASTRUCTURE_NAME = "demo-7xk2p";
const DEMO_REGION = "us-east-1";

export interface SeedNamespaces {
  mapiNamespace: string;
  capiNamespace: string;
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

export function infrastructure(): KubeObject {
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: "Infrastructure",
    metadata: { name: "cluster" },
    spec: { platformSpec: { type: "AWS", aws: {} } },
    status: {
      infrastructureName: DEMO_INFRASTRUCTURE_NAME,
      platform: "AWS",
      platformStatus: { type: "AWS", aws: { region: DEMO_REGION } },
      controlPlaneTopology: "HighlyAvailable",
      infrastructureTopology: "HighlyAvailable",
    },
  };
}

export function capiCluster(ns: SeedNamespaces): KubeObject[] {
  return [
    {
      apiVersion: CAPI_API_VERSION,
      kind: "Cluster",
      metadata: { name: DEMO_INFRASTRUCTURE_NAME, namespace: ns.capiNamespace },
      spec: {
        infrastructureRef: {
          apiGroup: "infrastructure.cluster.x-k8s.io",
          kind: "AWSCluster",
          name: DEMO_INFRASTRUCTURE_NAME,
        },
      },
      status: { initialization: { infrastructureProvisioned: true }, phase: "Provisioned" },
    },
    {
      apiVersion: INFRA_API_VERSION,
      kind: "AWSCluster",
      metadata: { name: DEMO_INFRASTRUCTURE_NAME, namespace: ns.capiNamespace },
      spec: { region: DEMO_REGION },
      status: { ready: true },
    },
  ];
}

const zoneOf = (suffix: string) => `${DEMO_REGION}${suffix}`;

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

const machineLabels = (setName?: string): Record<string, string> => ({
  "machine.openshift.io/cluster-api-cluster": DEMO_INFRASTRUCTURE_NAME,
  "machine.openshift.io/cluster-api-machine-role": "worker",
  "machine.openshift.io/cluster-api-machine-type": "worker",
  ...(setName ? { "machine.openshift.io/cluster-api-machineset": setName } : {}),
});

export function mapiMachineSet(ns: SeedNamespaces, zoneSuffix: string, replicas: number): KubeObject {
  const name = `${DEMO_INFRASTRUCTURE_NAME}-worker-${zoneOf(zoneSuffix)}`;
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
          providerSpec: { value: awsProviderSpec(zoneOf(zoneSuffix)) },
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
): KubeObject {
  return {
    apiVersion: MAPI_API_VERSION,
    kind: "Machine",
    metadata: { name, namespace: ns.mapiNamespace, labels: machineLabels(setName) },
    spec: {
      authoritativeAPI: "MachineAPI",
      lifecycleHooks: {},
      metadata: {},
      providerSpec: { value: awsProviderSpec(zoneOf(zoneSuffix)) },
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

export function demoSeed(ns: SeedNamespaces): DemoSeed {
  const setA = mapiMachineSet(ns, "a", 1);
  const setB = mapiMachineSet(ns, "b", 1);
  const setAName = setA.metadata!.name!;
  const setBName = setB.metadata!.name!;
  return {
    clusterScoped: [featureGate(), infrastructure()],
    capi: capiCluster(ns),
    machineSets: [setA, setB],
    machines: [
      { machine: mapiMachine(ns, `${setAName}-4qzbx`, "a", setAName), ownerSetName: setAName },
      { machine: mapiMachine(ns, `${setBName}-8n2vd`, "b", setBName), ownerSetName: setBName },
      { machine: mapiMachine(ns, `${DEMO_INFRASTRUCTURE_NAME}-infra-0`, "c") },
    ],
  };
}
