/**
 * The PowerVS platform, as the converters and the registry (src/platforms/registry.ts) see it: CAPIBM's
 * kinds and its field table (table.ts) in the shared frame (../frame.ts).
 * Status mirroring is status.ts; shared data is data.ts.
 */
import { getPath, type KubeObject } from "../../kube/object.js";
import type { PlatformConverter } from "../../sync/conversion/platform.js";
import { fieldTableFrame, instanceLabelsFrom } from "../frame.js";
import {
  POWERVS_KINDS,
  POWERVS_MACHINE_FINALIZER,
  POWERVS_PLATFORM,
  PROVIDER_CONFIG_API_VERSION,
  PROVIDER_CONFIG_KIND,
} from "./data.js";
import { infraMachineStatusFromMapi, providerStatusFromCapi } from "./status.js";
import { POWERVS_FIELD_TABLE } from "./table.js";

export {
  POWERVS_KINDS,
  POWERVS_MACHINE_FINALIZER,
  POWERVS_PLATFORM,
  POWERVS_PROVIDER_DEFAULTS,
  POWERVS_UNSUPPORTED_FIELDS,
  type PowerVSUnsupportedField,
} from "./data.js";
export { POWERVS_FIELD_TABLE } from "./table.js";

const frame = fieldTableFrame({
  providerConfig: { apiVersion: PROVIDER_CONFIG_API_VERSION, kind: PROVIDER_CONFIG_KIND },
  platform: POWERVS_PLATFORM,
  infraMachineKind: POWERVS_KINDS.ibmPowerVSMachine.kind,
  table: POWERVS_FIELD_TABLE,
  unsupportedRule: "powervs-unsupported-fields",
});

const platformStatusField = (infrastructure: KubeObject, key: "region" | "zone"): string => {
  const v = getPath(infrastructure, ["status", "platformStatus", "powervs", key]);
  return typeof v === "string" ? v : "";
};

/** `status.platformStatus.powervs.region` ("" when unset). */
const regionOf = (infrastructure: KubeObject): string => platformStatusField(infrastructure, "region");

/**
 * `status.platformStatus.powervs.zone` ("" when unset): MAO's zone label on PowerVS Machines. The converters'
 * InfrastructureInfo has no zone yet, so the instance labels leave it out until the platform is wired.
 */
export const zoneOf = (infrastructure: KubeObject): string => platformStatusField(infrastructure, "zone");

export const powervsPlatform: PlatformConverter = Object.freeze({
  platform: POWERVS_PLATFORM,
  infraMachine: POWERVS_KINDS.ibmPowerVSMachine,
  infraMachineTemplate: POWERVS_KINDS.ibmPowerVSMachineTemplate,
  infraCluster: POWERVS_KINDS.ibmPowerVSCluster,
  infraMachineFinalizer: POWERVS_MACHINE_FINALIZER,
  regionOf,
  // PowerVS's platformStatus has no IP family the converter needs.
  ipFamilyOf: (_infrastructure: KubeObject) => "",
  ...frame,
  // MAO's instance-type on PowerVS is the system type; PowerVS has no failure domain, so no zone label.
  instanceLabels: instanceLabelsFrom("systemType"),
  infraMachineStatusFromMapi,
  providerStatusFromCapi,
});
