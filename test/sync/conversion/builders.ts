/**
 * Small builders for real-shaped MAPI and CAPI objects used by the conversion tests. Each returns a fresh
 * object; tests override what their row is about with `with*` helpers instead of copying blobs.
 */

import type { ResourceType } from "../../../src/kube/kinds.js";
import type { KubeObject } from "../../../src/kube/object.js";
import type { ClusterView } from "../../../src/policies/types.js";

export const CLUSTER = "demo-x7k2p";
export const REGION = "us-east-1";
export const ZONE = "us-east-1a";
export const CAPI_NS = "openshift-cluster-api";
export const MAPI_NS = "openshift-machine-api";

export const infrastructure = (
  overrides: { platform?: string; name?: string; region?: string; ipFamily?: string } = {},
): KubeObject => ({
  apiVersion: "config.openshift.io/v1",
  kind: "Infrastructure",
  metadata: { name: "cluster" },
  status: {
    infrastructureName: overrides.name ?? CLUSTER,
    platformStatus: {
      type: overrides.platform ?? "AWS",
      aws: {
        region: overrides.region ?? REGION,
        ...(overrides.ipFamily === undefined ? {} : { ipFamily: overrides.ipFamily }),
      },
    },
  },
});

/** A minimal valid AWSMachineProviderConfig. */
export const providerSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "AWSMachineProviderConfig",
  ami: { id: "ami-0123456789abcdef0" },
  instanceType: "m6i.xlarge",
  credentialsSecret: { name: "aws-cloud-credentials" },
  placement: { region: REGION, availabilityZone: ZONE },
  subnet: { id: "subnet-0a1b2c3d" },
  userDataSecret: { name: "worker-user-data" },
  ...extra,
});

export const mapiMachine = (
  opts: {
    name?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    spec?: Record<string, unknown>;
    value?: Record<string, unknown>;
    status?: Record<string, unknown>;
  } = {},
): KubeObject => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: {
    name: opts.name ?? "worker-a",
    namespace: MAPI_NS,
    labels: opts.labels ?? {
      "machine.openshift.io/cluster-api-machine-role": "worker",
      "machine.openshift.io/cluster-api-machine-type": "worker",
    },
    ...(opts.annotations === undefined ? {} : { annotations: opts.annotations }),
  },
  spec: { providerSpec: { value: opts.value ?? providerSpec() }, ...opts.spec },
  ...(opts.status === undefined ? {} : { status: opts.status }),
});

/** A MAPI Machine whose provider status says the instance was created, a condition held since `since`. */
export const mapiMachineCreatedSince = (since: string): KubeObject =>
  mapiMachine({
    status: {
      providerStatus: {
        conditions: [
          {
            type: "MachineCreation",
            status: "True",
            reason: "MachineCreationSucceeded",
            lastTransitionTime: since,
          },
        ],
      },
    },
  });

export const mapiMachineSet = (
  opts: {
    name?: string;
    spec?: Record<string, unknown>;
    value?: Record<string, unknown>;
    templateLabels?: Record<string, string>;
    templateSpec?: Record<string, unknown>;
  } = {},
): KubeObject => {
  const name = opts.name ?? "workers";
  return {
    apiVersion: "machine.openshift.io/v1beta1",
    kind: "MachineSet",
    metadata: { name, namespace: MAPI_NS, labels: { "machine.openshift.io/cluster-api-cluster": CLUSTER } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { "machine.openshift.io/cluster-api-machineset": name } },
      template: {
        metadata: {
          labels: opts.templateLabels ?? {
            "machine.openshift.io/cluster-api-machineset": name,
            "machine.openshift.io/cluster-api-machine-role": "worker",
            "machine.openshift.io/cluster-api-machine-type": "worker",
          },
        },
        spec: { providerSpec: { value: opts.value ?? providerSpec() }, ...opts.templateSpec },
      },
      ...opts.spec,
    },
  };
};

/** A minimal valid CAPA v1beta2 AWSMachine spec as the converter writes it. */
export const awsMachineSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ami: { id: "ami-0123456789abcdef0" },
  instanceType: "m6i.xlarge",
  subnet: { id: "subnet-0a1b2c3d" },
  hostAffinity: "default",
  rootVolume: {},
  instanceMetadataOptions: {
    httpTokens: "optional",
    httpEndpoint: "enabled",
    httpProtocolIpv6: "disabled",
    instanceMetadataTags: "disabled",
    httpPutResponseHopLimit: 1,
  },
  ignition: { storageType: "UnencryptedUserData" },
  ...extra,
});

export const awsMachine = (
  opts: { name?: string; spec?: Record<string, unknown>; status?: Record<string, unknown> } = {},
): KubeObject => ({
  apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
  kind: "AWSMachine",
  metadata: {
    name: opts.name ?? "worker-a",
    namespace: CAPI_NS,
    labels: { "cluster.x-k8s.io/cluster-name": CLUSTER },
  },
  spec: opts.spec ?? awsMachineSpec(),
  ...(opts.status === undefined ? {} : { status: opts.status }),
});

export const capiMachine = (
  opts: {
    name?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
  } = {},
): KubeObject => {
  const name = opts.name ?? "worker-a";
  return {
    apiVersion: "cluster.x-k8s.io/v1beta2",
    kind: "Machine",
    metadata: {
      name,
      namespace: CAPI_NS,
      labels: opts.labels ?? {
        "node-role.kubernetes.io/worker": "",
        "cluster.x-k8s.io/cluster-name": CLUSTER,
      },
      ...(opts.annotations === undefined ? {} : { annotations: opts.annotations }),
    },
    spec: {
      clusterName: CLUSTER,
      bootstrap: { dataSecretName: "worker-user-data" },
      infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name },
      failureDomain: ZONE,
      deletion: { nodeDeletionTimeoutSeconds: 10 },
      ...opts.spec,
    },
    ...(opts.status === undefined ? {} : { status: opts.status }),
  };
};

export const awsMachineTemplate = (
  name: string,
  spec: Record<string, unknown> = awsMachineSpec(),
): KubeObject => ({
  apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
  kind: "AWSMachineTemplate",
  metadata: { name, namespace: CAPI_NS },
  spec: { template: { spec } },
});

export const capiMachineSet = (
  templateName: string,
  opts: { name?: string; spec?: Record<string, unknown>; templateSpec?: Record<string, unknown> } = {},
): KubeObject => {
  const name = opts.name ?? "workers";
  return {
    apiVersion: "cluster.x-k8s.io/v1beta2",
    kind: "MachineSet",
    metadata: { name, namespace: CAPI_NS, labels: { "cluster.x-k8s.io/cluster-name": CLUSTER } },
    spec: {
      clusterName: CLUSTER,
      replicas: 2,
      deletion: { order: "Random" },
      selector: {
        matchLabels: {
          "cluster.x-k8s.io/cluster-name": CLUSTER,
          "machine.openshift.io/cluster-api-machineset": name,
        },
      },
      template: {
        metadata: {
          labels: {
            "cluster.x-k8s.io/cluster-name": CLUSTER,
            "machine.openshift.io/cluster-api-machineset": name,
            "node-role.kubernetes.io/worker": "",
          },
        },
        spec: {
          clusterName: CLUSTER,
          bootstrap: { dataSecretName: "worker-user-data" },
          infrastructureRef: {
            apiGroup: "infrastructure.cluster.x-k8s.io",
            kind: "AWSMachineTemplate",
            name: templateName,
          },
          failureDomain: ZONE,
          deletion: { nodeDeletionTimeoutSeconds: 10 },
          ...opts.templateSpec,
        },
      },
      ...opts.spec,
    },
  };
};

/** An in-memory ClusterView: objects keyed by kind/namespace/name; twins by same name, other namespace. */
export const memoryView = (objects: KubeObject[]): ClusterView => {
  const matches = (t: ResourceType, o: KubeObject) =>
    o.kind === t.kind && (o.apiVersion ?? "").startsWith(t.group === "" ? t.version : `${t.group}/`);
  return {
    get: (t, namespace, name) =>
      objects.find(
        (o) => matches(t, o) && (o.metadata?.namespace ?? "") === namespace && o.metadata?.name === name,
      ),
    list: (t, namespace) =>
      objects.filter(
        (o) => matches(t, o) && (namespace === undefined || o.metadata?.namespace === namespace),
      ),
    freshness: () => ({ synced: true, disconnectedForMs: 0 }),
    twinOf: (object) => {
      const mapi = object.apiVersion?.startsWith("machine.openshift.io/");
      return objects.find(
        (o) =>
          o.kind === object.kind &&
          o.metadata?.name === object.metadata?.name &&
          o.metadata?.namespace === (mapi ? CAPI_NS : MAPI_NS),
      );
    },
  };
};
