/**
 * The simulated clouds behind the stand-ins (SPEC §1.1, §5.5), one row per platform: how an instance is
 * named and addressed (its id, its providerID, the node it becomes), where it lands when nothing says, the
 * state a running one reports, which providerSpec fields MAO's actuator reads for its zone and labels, and
 * how an actuator finds an instance it already launched before it launches another. Plain data and small
 * pure functions; the ledger (ledger.ts) keeps the instances, and each stand-in uses the row of the
 * cluster's platform. Adding a platform's stand-ins starts with a row here.
 */

import { ACTIVE_INSTANCE_STATE } from "../platforms/openstack/data.js";
import {
  ACTIVE_INSTANCE_STATE as POWERVS_ACTIVE_STATE,
  PROVIDER_CONFIG_API_VERSION as POWERVS_PROVIDER_STATUS_API_VERSION,
  PROVIDER_STATUS_KIND as POWERVS_PROVIDER_STATUS_KIND,
} from "../platforms/powervs/data.js";
import type { PlatformConverter } from "../sync/conversion/platform.js";
import { DEFAULT_ZONE, nodeNameFor } from "./common.js";
import type { InstanceLedger, InstanceRecord, InstanceSide } from "./ledger.js";

/**
 * The simulated PowerVS cloud's one workspace (service instance), where every instance lands: a real
 * actuator takes it from the providerSpec's `serviceInstance`; the local demo seed names this one.
 */
export const POWERVS_WORKSPACE = Object.freeze({
  region: "dal",
  zone: "dal10",
  serviceInstanceID: "9b1c4e2a-6f3d-4a8b-b5c7-2d0e8f1a3c64",
  resourceGroup: "demo-resource-group",
});

export interface SimulatedCloud {
  /** Infrastructure `status.platformStatus.type` of the platform this cloud serves. */
  readonly platform: string;
  /** A new instance id from a ledger's 8-hex-digit random prefix and its counter. */
  instanceId(prefix: string, counter: number): string;
  providerID(zone: string, instanceId: string): string;
  /** The instance id a providerID of this cloud names; undefined for any other providerID. */
  instanceIdOf(providerID: string): string | undefined;
  /** The name of the node an instance becomes. */
  nodeName(instanceId: string, machineName: string): string;
  /** Where an instance lands when neither the providerSpec nor the Machine names a zone. */
  readonly defaultZone: string;
  /** The state a running instance reports (MAPI providerStatus, MAO's annotation, InfraMachine status). */
  readonly runningState: string;
  /**
   * How an actuator finds an instance it launched for a Machine before it launches one: by its own tags
   * (`ownTags`: MAO never finds CAPA's instance, nor CAPA MAO's, which is how two active sides create
   * twice) or by server name (`name`: MAPO and CAPO, and MAPI's and CAPIBM's PowerVS actuators, name the
   * instance after the Machine, so either finds the other's).
   */
  readonly lookup: "ownTags" | "name";
  /** Where in the MAPI providerSpec value MAO's actuator reads the zone it launches in. */
  readonly mapiZonePath: readonly string[];
  /** The labels (`machine.openshift.io/<key>`) MAO's actuator writes, each from a providerSpec path. */
  readonly instanceLabelPaths: Readonly<Record<string, readonly string[]>>;
  /**
   * The MAPI providerStatus MAO's actuator writes for a running instance, where it says more than
   * `instanceId` and `instanceState` (PowerVS's names its kind and workspace).
   */
  readonly providerStatus?: (instanceId: string, providerID: string) => Record<string, unknown>;
}

/** `aws:///<zone>/<instance-id>`, the providerID form of MAO's and CAPA's AWS actuators. */
export const awsProviderID = (zone: string, instanceId: string): string => `aws:///${zone}/${instanceId}`;

export const AWS_CLOUD: SimulatedCloud = Object.freeze({
  platform: "AWS",
  // 17 hex digits like EC2's ids: the random prefix keeps ids distinct across ledgers, the counter within one.
  instanceId: (prefix: string, counter: number) => `i-${prefix}${counter.toString(16).padStart(9, "0")}`,
  providerID: awsProviderID,
  instanceIdOf: (providerID: string) => {
    const last = providerID.split("/").pop() ?? "";
    return /^i-[0-9a-f]+$/.test(last) ? last : undefined;
  },
  // EC2's private DNS name, stable per instance id.
  nodeName: (instanceId: string) => nodeNameFor(instanceId),
  defaultZone: DEFAULT_ZONE,
  runningState: "running",
  lookup: "ownTags",
  mapiZonePath: ["placement", "availabilityZone"],
  instanceLabelPaths: {
    "instance-type": ["instanceType"],
    region: ["placement", "region"],
    zone: ["placement", "availabilityZone"],
  },
});

const SERVER_UUID = /^openstack:\/\/[^/]*\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export const OPENSTACK_CLOUD: SimulatedCloud = Object.freeze({
  platform: "OpenStack",
  // A Nova server UUID: the random prefix first, the counter last.
  instanceId: (prefix: string, counter: number) =>
    `${prefix}-0000-4000-8000-${counter.toString(16).padStart(12, "0")}`,
  // `openstack:///<server uuid>`, as MAPO and CAPO write it: no zone in it.
  providerID: (_zone: string, instanceId: string) => `openstack:///${instanceId}`,
  instanceIdOf: (providerID: string) => SERVER_UUID.exec(providerID)?.[1],
  // Nova names the node after the server, which both actuators name after the Machine.
  nodeName: (_instanceId: string, machineName: string) => machineName,
  defaultZone: "nova",
  runningState: ACTIVE_INSTANCE_STATE,
  lookup: "name",
  mapiZonePath: ["availabilityZone"],
  instanceLabelPaths: { "instance-type": ["flavor"], zone: ["availabilityZone"] },
});

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/** Groups: the workspace (service instance ID), then the PVM instance ID. */
const PVM_INSTANCE = new RegExp(`^ibmpowervs://[^/]*/[^/]*/([^/]+)/(${UUID})$`);

/** A PowerVS zone's region, as CAPIBM derives it (`dal10` → `dal`, `mon01` → `mon`). */
const powervsRegionOf = (zone: string): string => zone.replace(/-?\d+$/, "");

export const POWERVS_CLOUD: SimulatedCloud = Object.freeze({
  platform: "PowerVS",
  // A PVM instance ID is a UUID: the random prefix first, the counter last.
  instanceId: (prefix: string, counter: number) =>
    `${prefix}-0000-4000-9000-${counter.toString(16).padStart(12, "0")}`,
  // `ibmpowervs://<region>/<zone>/<service instance ID>/<instance ID>`, as src/platforms/powervs/status.ts
  // parses it. The row is not told the workspace, so every instance runs in the demo's one (the one its
  // providerSpecs name).
  providerID: (zone: string, instanceId: string) =>
    `ibmpowervs://${powervsRegionOf(zone)}/${zone}/${POWERVS_WORKSPACE.serviceInstanceID}/${instanceId}`,
  instanceIdOf: (providerID: string) => PVM_INSTANCE.exec(providerID)?.[2],
  // Both actuators name the instance after the Machine, and the node takes the instance's name.
  nodeName: (_instanceId: string, machineName: string) => machineName,
  // PowerVS has no failure domains: every instance lands in the workspace's zone.
  defaultZone: POWERVS_WORKSPACE.zone,
  runningState: POWERVS_ACTIVE_STATE,
  // CAPIBM looks an instance up by server name before creating one (ensureInstanceUnique in
  // cloud/scope/powervs_machine.go), as MAPI's PowerVS actuator does: either finds the other's.
  lookup: "name",
  // The providerSpec names no zone: MAO's actuator reads none (the empty path is the value itself, never a
  // string) and writes no zone label.
  mapiZonePath: [],
  instanceLabelPaths: { "instance-type": ["systemType"] },
  providerStatus: (instanceId: string, providerID: string) => {
    const workspace = PVM_INSTANCE.exec(providerID)?.[1];
    return {
      apiVersion: POWERVS_PROVIDER_STATUS_API_VERSION,
      kind: POWERVS_PROVIDER_STATUS_KIND,
      instanceId,
      instanceState: POWERVS_ACTIVE_STATE,
      ...(workspace ? { serviceInstanceID: workspace } : {}),
    };
  },
});

const CLOUDS: readonly SimulatedCloud[] = Object.freeze([AWS_CLOUD, OPENSTACK_CLOUD, POWERVS_CLOUD]);

/** The simulated cloud of a platform; a platform without one has no stand-ins to run. */
export const cloudOf = (platform: Pick<PlatformConverter, "platform">): SimulatedCloud => {
  const cloud = CLOUDS.find((c) => c.platform === platform.platform);
  if (!cloud)
    throw new Error(
      `no simulated providers for platform ${JSON.stringify(platform.platform)}: supported are ${CLOUDS.map((c) => c.platform).join(", ")}`,
    );
  return cloud;
};

/** The cloud whose providerID form `providerID` has, if any. */
const cloudOfProviderID = (providerID: string): SimulatedCloud | undefined =>
  CLOUDS.find((c) => c.instanceIdOf(providerID) !== undefined);

/** The instance id a providerID of any simulated cloud names, or undefined for anything else. */
export const instanceIdOfProviderID = (providerID: string): string | undefined =>
  cloudOfProviderID(providerID)?.instanceIdOf(providerID);

/**
 * The node a Machine with this providerID becomes; a providerID no cloud knows names no instance, and the
 * node is then named as an AWS instance named after the Machine would be.
 */
export const nodeNameOfProviderID = (providerID: string, machineName: string): string => {
  const cloud = cloudOfProviderID(providerID);
  const instanceId = cloud?.instanceIdOf(providerID);
  return cloud && instanceId ? cloud.nodeName(instanceId, machineName) : nodeNameFor(machineName);
};

/** The instance `side`'s actuator finds for `machineName` before launching one (see `lookup`). */
export const findLaunched = (
  cloud: SimulatedCloud,
  ledger: Pick<InstanceLedger, "findLive" | "findLiveNamed">,
  machineName: string,
  side: Exclude<InstanceSide, "existing">,
): InstanceRecord | undefined =>
  cloud.lookup === "name" ? ledger.findLiveNamed(machineName) : ledger.findLive(machineName, side);
