/**
 * The contract one platform module fulfils (AWS, OpenStack): turn a MAPI providerSpec into the
 * InfraMachine spec and back, name the instance labels and mirror the provider status. The Machine- and
 * MachineSet-level converters (machine.ts, machineset.ts) know nothing about any platform beyond this
 * interface; the registry (registry.ts) picks the module from the Infrastructure object.
 */
import type { ResourceType } from "../../kube/kinds.js";
import type { KubeObject } from "../../kube/object.js";
import type { Unstamped } from "./stamp.js";
import type { Issues } from "./types.js";

/** What the converters read from `Infrastructure/cluster`. */
export interface InfrastructureInfo {
  /** `status.infrastructureName`: the CAPI Cluster and AWSCluster name. */
  clusterName: string;
  /** `status.platformStatus.type`, e.g. "AWS". */
  platform: string;
  /** `status.platformStatus.<platform>.region` where the platform has regions ("" when unset). */
  region: string;
  /** `status.platformStatus.<platform>.ipFamily` (`IPv4`, `DualStackIPv4Primary`, …; "" when unset). */
  ipFamily: string;
}

export interface ToCapiContext {
  /** Field path of the providerSpec value, e.g. `spec.providerSpec.value`. */
  path: string;
  infrastructure: InfrastructureInfo;
  owner: "Machine" | "MachineSet";
  controlPlane: boolean;
  /** MAPI `spec.providerID` (Machines only), mirrored into the InfraMachine. */
  providerID?: string;
}

export interface ToCapiProviderResult {
  /** AWSMachine `spec` (or AWSMachineTemplate `spec.template.spec`). */
  infraSpec: Record<string, unknown>;
  /** CAPI `spec.failureDomain`. */
  failureDomain?: string;
  /** CAPI `spec.bootstrap.dataSecretName`. */
  dataSecretName?: string;
}

export interface ToMapiContext {
  /** Field path of the InfraMachine spec, e.g. `spec` (AWSMachine) or `spec.template.spec` (template). */
  path: string;
  infrastructure: InfrastructureInfo;
  owner: "Machine" | "MachineSet";
  controlPlane: boolean;
  failureDomain?: string;
  dataSecretName?: string;
  /** The platform's InfraCluster (AWSCluster), needed for control plane load balancers. */
  infraCluster?: KubeObject;
}

export interface PlatformConverter {
  /** Infrastructure `status.platformStatus.type`. */
  readonly platform: string;
  readonly infraMachine: ResourceType;
  readonly infraMachineTemplate: ResourceType;
  readonly infraCluster: ResourceType;
  /** The provider's finalizer on its InfraMachine (the handover's step 9 waits on it, SPEC §3). */
  readonly infraMachineFinalizer: string;
  /** Region of the platform from the Infrastructure object ("" when it has none). */
  regionOf(infrastructure: KubeObject): string;
  /** IP family of the cluster from the Infrastructure object ("" when it has none). */
  ipFamilyOf(infrastructure: KubeObject): string;
  providerSpecToCapi(value: unknown, ctx: ToCapiContext, issues: Issues): ToCapiProviderResult;
  /** Returns the MAPI `providerSpec.value`. */
  infraSpecToProviderSpec(infraSpec: unknown, ctx: ToMapiContext, issues: Issues): Record<string, unknown>;
  /** Labels MAO puts on a MAPI Machine from its provider (instance type, region, zone). */
  instanceLabels(
    providerSpecValue: Record<string, unknown>,
    infrastructure: InfrastructureInfo,
    failureDomain: string | undefined,
  ): Record<string, string>;
  /** InfraMachine `status` from the MAPI Machine (SPEC §5.4). */
  infraMachineStatusFromMapi(mapiMachine: KubeObject): Record<string, unknown>;
  /**
   * MAPI `status.providerStatus` from the InfraMachine; `existing` keeps condition transition times, and the
   * conditions that need a new one are left for `stampNow` (stamp.ts; paths relative to the providerStatus).
   */
  providerStatusFromCapi(
    infraMachine: KubeObject,
    capiMachine: KubeObject,
    existing: unknown,
  ): Unstamped<Record<string, unknown>>;
}
