/**
 * Builders for real-shaped OpenStack objects used by the OpenStack conversion tests: an OpenStack
 * Infrastructure, a MAPO `OpenstackProviderSpec`, CAPO v1beta1 `OpenStackMachine` / template specs, and CAPI
 * Machines/MachineSets that reference them. Each returns a fresh object; rows override what they are about.
 */
import type { KubeObject } from "../../../src/kube/object.js";
import { CAPI_NS, CLUSTER, capiMachine, capiMachineSet, mapiMachine, mapiMachineSet } from "./builders.js";

export const OS_ZONE = "nova-az1";
export const NETWORK_ID = "6b1b3e5c-3c55-4f0b-9c1e-6a0d7e8b9c01";
export const SUBNET_ID = "0f6f8d2e-1b7c-4b8e-a7f1-3d9c2e4b5a10";
export const CAPO_API_VERSION = "infrastructure.cluster.x-k8s.io/v1beta1";

export const openstackInfrastructure = (overrides: { name?: string } = {}): KubeObject => ({
  apiVersion: "config.openshift.io/v1",
  kind: "Infrastructure",
  metadata: { name: "cluster" },
  status: {
    infrastructureName: overrides.name ?? CLUSTER,
    platformStatus: { type: "OpenStack", openstack: { cloudName: "openstack" } },
  },
});

/** A minimal valid OpenstackProviderSpec as the installer writes it for a worker. */
export const openstackProviderSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: "machine.openshift.io/v1alpha1",
  kind: "OpenstackProviderSpec",
  cloudName: "openstack",
  cloudsSecret: { name: "openstack-cloud-credentials", namespace: "openshift-machine-api" },
  flavor: "m1.xlarge",
  image: "rhcos-4.17",
  availabilityZone: OS_ZONE,
  networks: [{ filter: {}, subnets: [{ filter: { name: "demo-nodes", tags: "openshiftClusterID=demo" } }] }],
  securityGroups: [{ filter: {}, name: "demo-worker" }],
  serverGroupName: "demo-worker",
  serverMetadata: { Name: "demo-worker", openshiftClusterID: CLUSTER },
  tags: ["openshiftClusterID=demo"],
  trunk: true,
  userDataSecret: { name: "worker-user-data" },
  ...extra,
});

/** The OpenStackMachine spec the converter writes for `openstackProviderSpec()`. */
export const openStackMachineSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  flavor: "m1.xlarge",
  image: { filter: { name: "rhcos-4.17" } },
  ports: [{ fixedIPs: [{ subnet: { filter: { name: "demo-nodes", tags: ["openshiftClusterID=demo"] } } }] }],
  securityGroups: [{ filter: { name: "demo-worker" } }],
  trunk: true,
  tags: ["openshiftClusterID=demo"],
  serverMetadata: [
    { key: "Name", value: "demo-worker" },
    { key: "openshiftClusterID", value: CLUSTER },
  ],
  serverGroup: { filter: { name: "demo-worker" } },
  identityRef: { name: "openstack-cloud-credentials", cloudName: "openstack" },
  ...extra,
});

export const openstackMapiMachine = (
  value: Record<string, unknown>,
  opts: { spec?: Record<string, unknown>; status?: Record<string, unknown> } = {},
) => mapiMachine({ value, ...opts });

export const openstackMapiMachineSet = (value: Record<string, unknown>) => mapiMachineSet({ value });

export const openStackMachine = (
  spec: Record<string, unknown> = openStackMachineSpec(),
  opts: { name?: string; status?: Record<string, unknown> } = {},
): KubeObject => ({
  apiVersion: CAPO_API_VERSION,
  kind: "OpenStackMachine",
  metadata: {
    name: opts.name ?? "worker-a",
    namespace: CAPI_NS,
    labels: { "cluster.x-k8s.io/cluster-name": CLUSTER },
  },
  spec,
  ...(opts.status === undefined ? {} : { status: opts.status }),
});

export const openStackMachineTemplate = (
  name: string,
  spec: Record<string, unknown> = openStackMachineSpec(),
) => ({
  apiVersion: CAPO_API_VERSION,
  kind: "OpenStackMachineTemplate",
  metadata: { name, namespace: CAPI_NS },
  spec: { template: { spec } },
});

/** A CAPI Machine referencing an OpenStackMachine, in zone OS_ZONE. */
export const openstackCapiMachine = (
  opts: { spec?: Record<string, unknown>; status?: Record<string, unknown> } = {},
) =>
  capiMachine({
    spec: {
      infrastructureRef: {
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "OpenStackMachine",
        name: "worker-a",
      },
      failureDomain: OS_ZONE,
      ...opts.spec,
    },
    ...(opts.status === undefined ? {} : { status: opts.status }),
  });

export const openstackCapiMachineSet = (templateName: string) =>
  capiMachineSet(templateName, {
    templateSpec: {
      infrastructureRef: {
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "OpenStackMachineTemplate",
        name: templateName,
      },
      failureDomain: OS_ZONE,
    },
  });
