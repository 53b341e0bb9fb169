/**
 * Builders for real-shaped PowerVS objects used by the PowerVS conversion tests: a PowerVS Infrastructure,
 * a MAPI `PowerVSMachineProviderConfig` as the installer writes it, CAPIBM v1beta2 `IBMPowerVSMachine` /
 * template specs, and CAPI Machines/MachineSets that reference them. Each returns a fresh object; rows
 * override what they are about.
 */
import type { KubeObject } from "../../../src/kube/object.js";
import { CAPI_NS, CLUSTER, capiMachine, capiMachineSet, mapiMachine, mapiMachineSet } from "./builders.js";

export const PVS_REGION = "dal";
export const PVS_ZONE = "dal10";
export const SERVICE_INSTANCE_ID = "3f5b2f0c-7d1e-4c2a-9b8e-1a2b3c4d5e6f";
export const CAPIBM_API_VERSION = "infrastructure.cluster.x-k8s.io/v1beta2";
export const PROVIDER_ID = `ibmpowervs://${PVS_REGION}/${PVS_ZONE}/${SERVICE_INSTANCE_ID}/7c1d9e2a-0b3f-4a5c-8d6e-9f0a1b2c3d4e`;

export const powervsInfrastructure = (overrides: { name?: string } = {}): KubeObject => ({
  apiVersion: "config.openshift.io/v1",
  kind: "Infrastructure",
  metadata: { name: "cluster" },
  status: {
    infrastructureName: overrides.name ?? CLUSTER,
    platformStatus: { type: "PowerVS", powervs: { region: PVS_REGION, zone: PVS_ZONE } },
  },
});

/** A valid PowerVSMachineProviderConfig as the installer writes it for a worker. */
export const powervsProviderSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: "machine.openshift.io/v1",
  kind: "PowerVSMachineProviderConfig",
  credentialsSecret: { name: "powervs-credentials" },
  userDataSecret: { name: "worker-user-data" },
  serviceInstance: { type: "ID", id: SERVICE_INSTANCE_ID },
  image: { type: "Name", name: "rhcos-demo-x7k2p" },
  network: { type: "RegEx", regex: "^DHCPSERVER.*demo-x7k2p.*_Private$" },
  keyPairName: "demo-x7k2p-key",
  systemType: "s922",
  processorType: "Shared",
  processors: "0.5",
  memoryGiB: 32,
  ...extra,
});

/** The IBMPowerVSMachine spec the converter writes for `powervsProviderSpec()`. */
export const ibmPowerVSMachineSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  serviceInstance: { id: SERVICE_INSTANCE_ID },
  image: { name: "rhcos-demo-x7k2p" },
  network: { regex: "^DHCPSERVER.*demo-x7k2p.*_Private$" },
  sshKey: "demo-x7k2p-key",
  systemType: "s922",
  processorType: "Shared",
  processors: "0.5",
  memoryGiB: 32,
  ...extra,
});

export const powervsMapiMachine = (
  value: Record<string, unknown>,
  opts: { spec?: Record<string, unknown>; status?: Record<string, unknown> } = {},
) => mapiMachine({ value, ...opts });

export const powervsMapiMachineSet = (value: Record<string, unknown>) => mapiMachineSet({ value });

export const ibmPowerVSMachine = (
  spec: Record<string, unknown> = ibmPowerVSMachineSpec(),
  opts: { name?: string; status?: Record<string, unknown> } = {},
): KubeObject => ({
  apiVersion: CAPIBM_API_VERSION,
  kind: "IBMPowerVSMachine",
  metadata: {
    name: opts.name ?? "worker-a",
    namespace: CAPI_NS,
    labels: { "cluster.x-k8s.io/cluster-name": CLUSTER },
  },
  spec,
  ...(opts.status === undefined ? {} : { status: opts.status }),
});

export const ibmPowerVSMachineTemplate = (
  name: string,
  spec: Record<string, unknown> = ibmPowerVSMachineSpec(),
): KubeObject => ({
  apiVersion: CAPIBM_API_VERSION,
  kind: "IBMPowerVSMachineTemplate",
  metadata: { name, namespace: CAPI_NS },
  spec: { template: { spec } },
});

/** A CAPI Machine referencing an IBMPowerVSMachine (PowerVS has no failure domain). */
export const powervsCapiMachine = (
  opts: { spec?: Record<string, unknown>; status?: Record<string, unknown> } = {},
) =>
  capiMachine({
    spec: {
      infrastructureRef: {
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "IBMPowerVSMachine",
        name: "worker-a",
      },
      failureDomain: undefined,
      ...opts.spec,
    },
    ...(opts.status === undefined ? {} : { status: opts.status }),
  });

export const powervsCapiMachineSet = (templateName: string) =>
  capiMachineSet(templateName, {
    templateSpec: {
      infrastructureRef: {
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "IBMPowerVSMachineTemplate",
        name: templateName,
      },
      failureDomain: undefined,
    },
  });
