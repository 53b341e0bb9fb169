/**
 * The AWS platform, as the converters and the registry (src/sync/conversion/registry.ts) see it: its kinds,
 * its region, and the frame that runs the field table (table.ts) each way: check the envelope, refuse every
 * field no row knows — a field we cannot carry could be the one that decides which instance AWS runs — then
 * let each row convert its field. Status mirroring is status.ts; the data other layers read is data.ts.
 */
import { KINDS, MAPI_API_VERSION } from "../../kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { rejectUnknown } from "../../sync/conversion/fields.js";
import type {
  PlatformConverter,
  ToCapiContext,
  ToCapiProviderResult,
  ToMapiContext,
} from "../../sync/conversion/platform.js";
import { fieldPath, type Issues, invalid } from "../../sync/conversion/types.js";
import { AWS_PLATFORM, AWS_PROVIDER_DEFAULTS, PROVIDER_CONFIG_KIND } from "./data.js";
import { infraMachineStatusFromMapi, instanceLabels, providerStatusFromCapi } from "./status.js";
import { AWS_FIELD_TABLE } from "./table.js";

export {
  AWS_PROVIDER_DEFAULTS,
  AWS_UNSUPPORTED_FIELDS,
  type AwsUnsupportedField,
} from "./data.js";
export { AWS_FIELD_TABLE } from "./table.js";

/** providerSpec fields every provider config carries besides the table's. */
const ENVELOPE_FIELDS = ["apiVersion", "kind", "metadata"];

/** Fields of `AWSMachineProviderConfig` the table converts (SPEC §5.3); any other field is an error. */
const PROVIDER_SPEC_FIELDS: ReadonlySet<string> = new Set([
  ...ENVELOPE_FIELDS,
  ...AWS_FIELD_TABLE.flatMap((row) => row.mapi),
]);

/** AWSMachine spec fields the table converts back; `aws-unsupported-fields` (SPEC §2.3) and others fail. */
const AWS_MACHINE_FIELDS: ReadonlySet<string> = new Set(AWS_FIELD_TABLE.flatMap((row) => row.capi));

/** AWSMachine objects of which the table reads only some keys, with those keys. */
const AWS_MACHINE_KNOWN_KEYS: readonly (readonly [string, readonly string[]])[] = AWS_FIELD_TABLE.flatMap(
  (row) => Object.entries(row.capiKnownKeys ?? {}),
);

const UNSUPPORTED_HINT = "not supported by Machine API (rule aws-unsupported-fields)";

/** Go's zero `ObjectMeta` serialises as `{}` or `{creationTimestamp: null}`: only that counts as unset. */
const isEmptyValue = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  v === "" ||
  (Array.isArray(v) && v.length === 0) ||
  (isRecord(v) && Object.values(v).every(isEmptyValue));

/**
 * `providerSpec.metadata` exists only because the providerSpec is a raw Kubernetes object; upstream refuses
 * any content in it (nothing would carry it to CAPI).
 */
const checkProviderSpecMetadata = (issues: Issues, value: Record<string, unknown>, path: string) => {
  if (!isEmptyValue(value.metadata))
    invalid(issues, fieldPath(path, "metadata"), value.metadata, "metadata is not supported");
};

/**
 * CAPA takes its credentials from the AWSCluster's `identityRef`; Machine API runs every Machine with the
 * one credentials secret. A handover to MAPI would silently switch these Machines to other credentials.
 */
const checkClusterIdentity = (issues: Issues, ctx: ToMapiContext) => {
  const identityRef =
    ctx.infraCluster === undefined ? undefined : getPath(ctx.infraCluster, ["spec", "identityRef"]);
  if (isEmptyValue(identityRef)) return;
  invalid(
    issues,
    "AWSCluster.spec.identityRef",
    identityRef,
    `Machine API runs every Machine with the credentials secret ${JSON.stringify(AWS_PROVIDER_DEFAULTS.credentialsSecretName)}; the AWSCluster's identity cannot be carried, so converting would silently change the credentials these Machines use — remove identityRef or keep them on Cluster API`,
  );
};

const providerSpecToCapi = (value: unknown, ctx: ToCapiContext, issues: Issues): ToCapiProviderResult => {
  const path = ctx.path;
  if (!isRecord(value)) {
    invalid(issues, path, value ?? null, `must be an ${PROVIDER_CONFIG_KIND}`);
    return { infraSpec: {} };
  }
  if (value.kind !== undefined && value.kind !== PROVIDER_CONFIG_KIND)
    invalid(issues, fieldPath(path, "kind"), value.kind, `kind must be ${PROVIDER_CONFIG_KIND} on AWS`);
  rejectUnknown(
    issues,
    value,
    PROVIDER_SPEC_FIELDS,
    path,
    "field has no CAPI equivalent and cannot be converted",
  );
  checkProviderSpecMetadata(issues, value, path);
  const result: ToCapiProviderResult = { infraSpec: {} };
  for (const row of AWS_FIELD_TABLE) row.toCapi(issues, value, ctx, result);
  return result;
};

const infraSpecToProviderSpec = (
  infraSpec: unknown,
  ctx: ToMapiContext,
  issues: Issues,
): Record<string, unknown> => {
  const path = ctx.path;
  const value: Record<string, unknown> = { apiVersion: MAPI_API_VERSION, kind: PROVIDER_CONFIG_KIND };
  if (!isRecord(infraSpec)) {
    invalid(issues, path, infraSpec ?? null, "must be an AWSMachine spec");
    return value;
  }
  rejectUnknown(issues, infraSpec, AWS_MACHINE_FIELDS, path, UNSUPPORTED_HINT);
  for (const [field, known] of AWS_MACHINE_KNOWN_KEYS) {
    const obj = infraSpec[field];
    if (!isRecord(obj)) continue;
    for (const [key, v] of Object.entries(obj))
      if (!known.includes(key) && v !== undefined)
        invalid(issues, fieldPath(path, field, key), v, UNSUPPORTED_HINT);
  }
  for (const row of AWS_FIELD_TABLE) row.toMapi(issues, infraSpec, ctx, value);
  checkClusterIdentity(issues, ctx);
  return value;
};

export const awsPlatform: PlatformConverter = Object.freeze({
  platform: AWS_PLATFORM,
  infraMachine: KINDS.awsMachine,
  infraMachineTemplate: KINDS.awsMachineTemplate,
  infraCluster: KINDS.awsCluster,
  regionOf: (infrastructure: KubeObject) => {
    const region = getPath(infrastructure, ["status", "platformStatus", "aws", "region"]);
    return typeof region === "string" ? region : "";
  },
  ipFamilyOf: (infrastructure: KubeObject) => {
    const ipFamily = getPath(infrastructure, ["status", "platformStatus", "aws", "ipFamily"]);
    return typeof ipFamily === "string" && ipFamily !== "" ? ipFamily : AWS_PROVIDER_DEFAULTS.ipFamily;
  },
  providerSpecToCapi,
  infraSpecToProviderSpec,
  instanceLabels,
  infraMachineStatusFromMapi,
  providerStatusFromCapi,
});
