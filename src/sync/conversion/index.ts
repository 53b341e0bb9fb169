/**
 * The public face of the converters (SPEC §5): Machine and MachineSet both ways, status mirroring, and
 * `checkConvertible` for the admission rule `migration-unconvertible`. Everything here is pure; the sync
 * controllers and the `convert` CLI are the shells that feed it objects.
 */
import { KINDS } from "../../kube/kinds.js";
import { getPath, type KubeObject, namespaceOf } from "../../kube/object.js";
import { platformFor } from "../../platforms/registry.js";
import type { ClusterView, ConvertibilityCheck } from "../../policies/types.js";
import { capiMachineToMapi, mapiMachineToCapi } from "./machine.js";
import { capiMachineSetToMapi, mapiMachineSetToCapi } from "./machineset.js";
import type { FieldError } from "./types.js";

export { AWS_PROVIDER_DEFAULTS, awsPlatform } from "../../platforms/aws/index.js";
export {
  DEFAULT_PLATFORM,
  PLATFORMS,
  platformFor,
  platformNamed,
  platformOfInfraKind,
  servedPlatform,
} from "../../platforms/registry.js";
export {
  type ConversionOptions,
  capiMachineToMapi,
  mapiMachineToCapi,
  type ReverseConversionOptions,
} from "./machine.js";
export { capiMachineSetToMapi, mapiMachineSetToCapi } from "./machineset.js";
export type { InfrastructureInfo, PlatformConverter } from "./platform.js";
export { type StampPath, stampNow, type Unstamped } from "./stamp.js";
export {
  capiMachineSetStatusToMapi,
  capiMachineStatusToMapi,
  capiMachineStatusToMapiUnstamped,
  formatSelector,
  mapiMachineSetStatusToCapi,
  mapiMachineStatusToCapi,
  mapiMachineStatusToCapiUnstamped,
  mergeConditions,
} from "./status.js";
export { fnv1a32, templateHash, templateName } from "./template-name.js";
export { type ConversionResult, type FieldError, formatFieldError, formatFieldErrors } from "./types.js";

/** Where CAPI twins live when the view cannot tell (no twin yet): the SPEC §0 default. */
const DEFAULT_CAPI_NAMESPACE = "openshift-cluster-api";

const missing = (path: string, message: string): FieldError[] => [{ path, value: null, message }];

const toClusterAPI = (mapi: KubeObject, infra: KubeObject, view: ClusterView): FieldError[] => {
  const capiNamespace = namespaceOf(view.twinOf(mapi)) || DEFAULT_CAPI_NAMESPACE;
  const result =
    mapi.kind === "MachineSet"
      ? mapiMachineSetToCapi(mapi, infra, { capiNamespace })
      : mapiMachineToCapi(mapi, infra, { capiNamespace });
  return result.ok ? [] : result.errors;
};

const toMachineAPI = (mapi: KubeObject, infra: KubeObject, view: ClusterView): FieldError[] => {
  const lookup = platformFor(infra);
  if (!lookup.ok) return lookup.errors;
  const twin = view.twinOf(mapi);
  if (twin === undefined)
    return missing(
      "metadata.name",
      `no Cluster API ${mapi.kind ?? "object"} mirrors this one yet; it cannot be converted back to Machine API`,
    );
  const namespace = namespaceOf(twin);
  const { platform, infrastructure } = lookup;
  const infraCluster = view.get(platform.infraCluster, namespace, infrastructure.clusterName);
  const opts = { mapiNamespace: namespaceOf(mapi), ...(infraCluster === undefined ? {} : { infraCluster }) };
  if (mapi.kind === "MachineSet") {
    const ref = getPath(twin, ["spec", "template", "spec", "infrastructureRef", "name"]);
    const template =
      typeof ref === "string" ? view.get(platform.infraMachineTemplate, namespace, ref) : undefined;
    const result = capiMachineSetToMapi(twin, template, infra, opts);
    return result.ok ? [] : result.errors;
  }
  const ref = getPath(twin, ["spec", "infrastructureRef", "name"]);
  const infraMachine = typeof ref === "string" ? view.get(platform.infraMachine, namespace, ref) : undefined;
  const result = capiMachineToMapi(twin, infraMachine, infra, opts);
  return result.ok ? [] : result.errors;
};

/**
 * Rule `migration-unconvertible`: every field error that stops the target side from being produced from
 * the cached objects; empty when the handover may start.
 */
export const checkConvertible: ConvertibilityCheck = (mapiObject, target, view) => {
  const infra = view.get(KINDS.infrastructure, "", "cluster");
  if (infra === undefined)
    return missing(
      "Infrastructure/cluster",
      'the Infrastructure object "cluster" is not in the cache; cannot convert',
    );
  return target === "ClusterAPI"
    ? toClusterAPI(mapiObject, infra, view)
    : toMachineAPI(mapiObject, infra, view);
};
