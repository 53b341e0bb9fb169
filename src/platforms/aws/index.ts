/**
 * The AWS platform, as the converters and the registry (src/platforms/registry.ts) see it: its kinds,
 * its region, its field table (table.ts) in the shared frame (../frame.ts), and the one check of its own, the
 * AWSCluster's identity. Status mirroring is status.ts; the data other layers read is data.ts.
 */
import { FINALIZERS, KINDS, MAPI_API_VERSION } from "../../kube/kinds.js";
import { getPath, type KubeObject } from "../../kube/object.js";
import type { PlatformConverter, ToMapiContext } from "../../sync/conversion/platform.js";
import { type Issues, invalid } from "../../sync/conversion/types.js";
import { fieldTableFrame, instanceLabelsFrom, isEmptyValue } from "../frame.js";
import { AWS_PLATFORM, AWS_PROVIDER_DEFAULTS, PROVIDER_CONFIG_KIND } from "./data.js";
import { infraMachineStatusFromMapi, providerStatusFromCapi } from "./status.js";
import { AWS_FIELD_TABLE } from "./table.js";

export {
  AWS_PROVIDER_DEFAULTS,
  AWS_UNSUPPORTED_FIELDS,
  type AwsUnsupportedField,
} from "./data.js";
export { AWS_FIELD_TABLE } from "./table.js";

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

const frame = fieldTableFrame({
  providerConfig: { apiVersion: MAPI_API_VERSION, kind: PROVIDER_CONFIG_KIND },
  platform: AWS_PLATFORM,
  infraMachineKind: KINDS.awsMachine.kind,
  table: AWS_FIELD_TABLE,
  unsupportedRule: "aws-unsupported-fields",
  afterToMapi: checkClusterIdentity,
});

export const awsPlatform: PlatformConverter = Object.freeze({
  platform: AWS_PLATFORM,
  infraMachine: KINDS.awsMachine,
  infraMachineTemplate: KINDS.awsMachineTemplate,
  infraCluster: KINDS.awsCluster,
  infraMachineFinalizer: FINALIZERS.awsMachine,
  regionOf: (infrastructure: KubeObject) => {
    const region = getPath(infrastructure, ["status", "platformStatus", "aws", "region"]);
    return typeof region === "string" ? region : "";
  },
  ipFamilyOf: (infrastructure: KubeObject) => {
    const ipFamily = getPath(infrastructure, ["status", "platformStatus", "aws", "ipFamily"]);
    return typeof ipFamily === "string" && ipFamily !== "" ? ipFamily : AWS_PROVIDER_DEFAULTS.ipFamily;
  },
  ...frame,
  instanceLabels: instanceLabelsFrom("instanceType"),
  infraMachineStatusFromMapi,
  providerStatusFromCapi,
});
