/**
 * The OpenStack platform, as the converters and the registry (src/sync/conversion/registry.ts) see it: CAPO's
 * kinds, and the frame that runs the field table (table.ts) each way: check the envelope, refuse every field
 * no row knows, then let each row convert its field. Status mirroring is status.ts; shared data is data.ts.
 */
import type { KubeObject } from "../../kube/object.js";
import { isRecord } from "../../kube/object.js";
import { rejectUnknown } from "../../sync/conversion/fields.js";
import type {
  PlatformConverter,
  ToCapiContext,
  ToCapiProviderResult,
  ToMapiContext,
} from "../../sync/conversion/platform.js";
import { fieldPath, type Issues, invalid } from "../../sync/conversion/types.js";
import {
  OPENSTACK_KINDS,
  OPENSTACK_PLATFORM,
  PROVIDER_CONFIG_API_VERSION,
  PROVIDER_CONFIG_KIND,
} from "./data.js";
import { infraMachineStatusFromMapi, instanceLabels, providerStatusFromCapi } from "./status.js";
import { hasContent, OPENSTACK_FIELD_TABLE } from "./table.js";

export {
  OPENSTACK_KINDS,
  OPENSTACK_MACHINE_FINALIZER,
  OPENSTACK_PROVIDER_DEFAULTS,
  OPENSTACK_UNSUPPORTED_FIELDS,
  type OpenStackUnsupportedField,
} from "./data.js";
export { OPENSTACK_FIELD_TABLE } from "./table.js";

const ENVELOPE_FIELDS = ["apiVersion", "kind", "metadata"];

const PROVIDER_SPEC_FIELDS: ReadonlySet<string> = new Set([
  ...ENVELOPE_FIELDS,
  ...OPENSTACK_FIELD_TABLE.flatMap((row) => row.mapi),
]);

const OPENSTACK_MACHINE_FIELDS: ReadonlySet<string> = new Set(
  OPENSTACK_FIELD_TABLE.flatMap((row) => row.capi),
);

const UNSUPPORTED_HINT = "not supported by Machine API (rule openstack-unsupported-fields)";

const providerSpecToCapi = (value: unknown, ctx: ToCapiContext, issues: Issues): ToCapiProviderResult => {
  const path = ctx.path;
  if (!isRecord(value)) {
    invalid(issues, path, value ?? null, `must be an ${PROVIDER_CONFIG_KIND}`);
    return { infraSpec: {} };
  }
  if (value.kind !== undefined && value.kind !== PROVIDER_CONFIG_KIND)
    invalid(issues, fieldPath(path, "kind"), value.kind, `kind must be ${PROVIDER_CONFIG_KIND} on OpenStack`);
  rejectUnknown(
    issues,
    value,
    PROVIDER_SPEC_FIELDS,
    path,
    "field has no CAPI equivalent and cannot be converted",
  );
  if (hasContent(value.metadata))
    invalid(issues, fieldPath(path, "metadata"), value.metadata, "metadata is not supported");
  const result: ToCapiProviderResult = { infraSpec: {} };
  for (const row of OPENSTACK_FIELD_TABLE) row.toCapi(issues, value, ctx, result);
  return result;
};

const infraSpecToProviderSpec = (
  infraSpec: unknown,
  ctx: ToMapiContext,
  issues: Issues,
): Record<string, unknown> => {
  const value: Record<string, unknown> = {
    apiVersion: PROVIDER_CONFIG_API_VERSION,
    kind: PROVIDER_CONFIG_KIND,
  };
  if (!isRecord(infraSpec)) {
    invalid(issues, ctx.path, infraSpec ?? null, "must be an OpenStackMachine spec");
    return value;
  }
  rejectUnknown(issues, infraSpec, OPENSTACK_MACHINE_FIELDS, ctx.path, UNSUPPORTED_HINT);
  for (const row of OPENSTACK_FIELD_TABLE) row.toMapi(issues, infraSpec, ctx, value);
  return value;
};

export const openstackPlatform: PlatformConverter = Object.freeze({
  platform: OPENSTACK_PLATFORM,
  infraMachine: OPENSTACK_KINDS.openStackMachine,
  infraMachineTemplate: OPENSTACK_KINDS.openStackMachineTemplate,
  infraCluster: OPENSTACK_KINDS.openStackCluster,
  // OpenStack's platformStatus has no region or IP family the converter needs.
  regionOf: (_infrastructure: KubeObject) => "",
  ipFamilyOf: (_infrastructure: KubeObject) => "",
  providerSpecToCapi,
  infraSpecToProviderSpec,
  instanceLabels,
  infraMachineStatusFromMapi,
  providerStatusFromCapi,
});
