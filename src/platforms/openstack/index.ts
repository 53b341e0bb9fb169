/**
 * The OpenStack platform, as the converters and the registry (src/platforms/registry.ts) see it: CAPO's
 * kinds and its field table (table.ts) in the shared frame (../frame.ts). Status mirroring is status.ts;
 * shared data is data.ts.
 */
import type { KubeObject } from "../../kube/object.js";
import type { PlatformConverter } from "../../sync/conversion/platform.js";
import { fieldTableFrame, instanceLabelsFrom } from "../frame.js";
import {
  OPENSTACK_KINDS,
  OPENSTACK_MACHINE_FINALIZER,
  OPENSTACK_PLATFORM,
  PROVIDER_CONFIG_API_VERSION,
  PROVIDER_CONFIG_KIND,
} from "./data.js";
import { infraMachineStatusFromMapi, providerStatusFromCapi } from "./status.js";
import { OPENSTACK_FIELD_TABLE } from "./table.js";

export {
  OPENSTACK_KINDS,
  OPENSTACK_MACHINE_FINALIZER,
  OPENSTACK_PROVIDER_DEFAULTS,
  OPENSTACK_UNSUPPORTED_FIELDS,
  type OpenStackUnsupportedField,
} from "./data.js";
export { OPENSTACK_FIELD_TABLE } from "./table.js";

const frame = fieldTableFrame({
  providerConfig: { apiVersion: PROVIDER_CONFIG_API_VERSION, kind: PROVIDER_CONFIG_KIND },
  platform: OPENSTACK_PLATFORM,
  infraMachineKind: OPENSTACK_KINDS.openStackMachine.kind,
  table: OPENSTACK_FIELD_TABLE,
  unsupportedRule: "openstack-unsupported-fields",
});

export const openstackPlatform: PlatformConverter = Object.freeze({
  platform: OPENSTACK_PLATFORM,
  infraMachine: OPENSTACK_KINDS.openStackMachine,
  infraMachineTemplate: OPENSTACK_KINDS.openStackMachineTemplate,
  infraCluster: OPENSTACK_KINDS.openStackCluster,
  infraMachineFinalizer: OPENSTACK_MACHINE_FINALIZER,
  // OpenStack's platformStatus has no region or IP family the converter needs.
  regionOf: (_infrastructure: KubeObject) => "",
  ipFamilyOf: (_infrastructure: KubeObject) => "",
  ...frame,
  instanceLabels: instanceLabelsFrom("flavor"),
  infraMachineStatusFromMapi,
  providerStatusFromCapi,
});
