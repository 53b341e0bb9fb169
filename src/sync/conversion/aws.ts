/**
 * AWS: the SPEC §5.3 table between the OpenShift `AWSMachineProviderConfig` (MAPI providerSpec) and the
 * CAPA v1beta2 `AWSMachine` spec, both ways (status mirroring is in aws-status.ts). The
 * provider defaults this module writes out explicitly sit in `AWS_PROVIDER_DEFAULTS` right below, so the
 * sync's "desired ⊆ live" comparison never sees a false diff against a server that defaults them. Anything
 * the table does not cover is an error, never silently dropped: a field we cannot carry could be the one
 * that decides which instance AWS runs.
 */
import { KINDS, MAPI_API_VERSION } from "../../kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { infraMachineStatusFromMapi, instanceLabels, providerStatusFromCapi } from "./aws-status.js";
import { put, readArray, readBoolean, readInteger, readRecord, readString, rejectUnknown } from "./fields.js";
import type { PlatformConverter, ToCapiContext, ToCapiProviderResult, ToMapiContext } from "./platform.js";
import { fieldPath, type Issues, invalid, warn } from "./types.js";

/**
 * Every value the converter writes although the source did not say it (SPEC §5.3 "write the provider's
 * default explicitly"). A server or controller that defaults these fields then holds exactly what we wrote.
 */
export const AWS_PROVIDER_DEFAULTS = Object.freeze({
  /** `hostAffinity` when `placement.host` is absent or `AnyAvailable`. */
  hostAffinity: "default",
  /** `instanceMetadataOptions` besides `httpTokens`, always written; CAPI → MAPI refuses anything else. */
  instanceMetadataOptions: Object.freeze({
    httpEndpoint: "enabled",
    httpProtocolIpv6: "disabled",
    instanceMetadataTags: "disabled",
    httpPutResponseHopLimit: 1,
  }),
  /** `httpTokens` when `metadataServiceOptions.authentication` is "" or absent. */
  httpTokens: "optional",
  /** `size` of a volume whose `ebs.volumeSize` is unset (GiB). */
  volumeSize: 120,
  /** `rootVolume` when the providerSpec has no root block device. */
  rootVolume: Object.freeze({}),
  /** `subnet` when the providerSpec has none (MAPI's subnet is a non-pointer struct, so `{}` both ways). */
  subnet: Object.freeze({}),
  /** `ignition.storageType`: OpenShift user data is an Ignition pointer config, small and not secret. */
  ignitionStorageType: "UnencryptedUserData",
  /** The only `credentialsSecret` MAPI → CAPI accepts, and the one CAPI → MAPI writes. */
  credentialsSecretName: "aws-cloud-credentials",
});

const PROVIDER_CONFIG_KIND = "AWSMachineProviderConfig";

/** Fields of `AWSMachineProviderConfig` the table converts (SPEC §5.3); any other field is an error. */
const PROVIDER_SPEC_FIELDS: ReadonlySet<string> = new Set([
  "apiVersion",
  "kind",
  "metadata",
  "ami",
  "instanceType",
  "cpuOptions",
  "tags",
  "iamInstanceProfile",
  "userDataSecret",
  "credentialsSecret",
  "keyName",
  "deviceIndex",
  "publicIp",
  "networkInterfaceType",
  "securityGroups",
  "subnet",
  "placement",
  "loadBalancers",
  "blockDevices",
  "spotMarketOptions",
  "metadataServiceOptions",
  "placementGroupName",
  "placementGroupPartition",
  "capacityReservationId",
  "marketType",
]);

/** AWSMachine spec fields the table converts back; `aws-unsupported-fields` (SPEC §2.3) and others fail. */
const AWS_MACHINE_FIELDS: ReadonlySet<string> = new Set([
  "ami",
  "instanceType",
  "cpuOptions",
  "additionalTags",
  "iamInstanceProfile",
  "sshKeyName",
  "publicIP",
  "networkInterfaceType",
  "additionalSecurityGroups",
  "subnet",
  "tenancy",
  "hostAffinity",
  "hostID",
  "dynamicHostAllocation",
  "rootVolume",
  "nonRootVolumes",
  "spotMarketOptions",
  "instanceMetadataOptions",
  "placementGroupName",
  "placementGroupPartition",
  "capacityReservationId",
  "marketType",
  "ignition",
  "cloudInit",
  "providerID",
  "instanceID",
]);

const NETWORK_INTERFACE_TYPES: Readonly<Record<string, string>> = Object.freeze({
  ENA: "interface",
  EFA: "efa",
  "": "",
});
const MARKET_TYPES = ["OnDemand", "Spot", "CapacityBlock", ""];
const HOST_ID_PATTERN = /^h-([0-9a-f]{8}|[0-9a-f]{17})$/;
const INSTANCE_ID_PATTERN = /^i-[0-9a-zA-Z]+$/;

// ---------------------------------------------------------------------------------------------------
// shared AWS shapes

/** `[{name, values[]}]`, the filter shape MAPI and CAPA share. */
const copyFilters = (issues: Issues, filters: unknown[], path: string): Record<string, unknown>[] =>
  filters.flatMap((f, i) => {
    const p = fieldPath(path, i);
    if (!isRecord(f)) {
      invalid(issues, p, f, "must be an object with name and values");
      return [];
    }
    rejectUnknown(issues, f, new Set(["name", "values"]), p, "unknown filter field");
    const name = readString(issues, f, "name", p);
    const values = readArray(issues, f, "values", p);
    const out: Record<string, unknown> = {};
    put(out, "name", name);
    if (values !== undefined) {
      const strings = values.filter((v): v is string => typeof v === "string");
      if (strings.length !== values.length)
        invalid(issues, fieldPath(p, "values"), values, "must be strings");
      out.values = strings;
    }
    return [out];
  });

/** A MAPI `AWSResourceReference {id, arn, filters}` → CAPA `{id, filters}`; ARNs have no CAPA form. */
const referenceToCapi = (issues: Issues, ref: Record<string, unknown>, path: string) => {
  rejectUnknown(issues, ref, new Set(["id", "arn", "filters"]), path, "unknown resource reference field");
  if (ref.arn !== undefined)
    invalid(
      issues,
      fieldPath(path, "arn"),
      ref.arn,
      "unable to convert ARN reference. Not supported in CAPI",
    );
  const out: Record<string, unknown> = {};
  put(out, "id", readString(issues, ref, "id", path));
  const filters = readArray(issues, ref, "filters", path);
  if (filters !== undefined) out.filters = copyFilters(issues, filters, fieldPath(path, "filters"));
  return out;
};

/** CAPA `AWSResourceReference {id, filters}` → MAPI. */
const referenceToMapi = (issues: Issues, ref: Record<string, unknown>, path: string) => {
  rejectUnknown(issues, ref, new Set(["id", "filters"]), path, "unknown resource reference field");
  const out: Record<string, unknown> = {};
  put(out, "id", readString(issues, ref, "id", path));
  const filters = readArray(issues, ref, "filters", path);
  if (filters !== undefined) out.filters = copyFilters(issues, filters, fieldPath(path, "filters"));
  return out;
};

// ---------------------------------------------------------------------------------------------------
// MAPI → CAPI

const amiToCapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const p = fieldPath(path, "ami");
  const ami = readRecord(issues, spec, "ami", path);
  if (ami === undefined) {
    invalid(issues, p, spec.ami ?? null, "unable to find a valid AMI resource type");
    return undefined;
  }
  rejectUnknown(issues, ami, new Set(["id", "arn", "filters"]), p, "unknown AMI reference field");
  if (ami.arn !== undefined)
    invalid(
      issues,
      fieldPath(p, "arn"),
      ami.arn,
      "unable to convert AMI ARN reference. Not supported in CAPI",
    );
  if (ami.filters !== undefined)
    invalid(
      issues,
      fieldPath(p, "filters"),
      ami.filters,
      "unable to convert AMI Filters reference. Not supported in CAPI",
    );
  const id = readString(issues, ami, "id", p);
  if (id === undefined && ami.arn === undefined && ami.filters === undefined)
    invalid(issues, p, ami, "unable to find a valid AMI resource type");
  return id === undefined ? undefined : { id };
};

const EBS_FIELDS: ReadonlySet<string> = new Set([
  "volumeSize",
  "volumeType",
  "iops",
  "throughputMib",
  "encrypted",
  "kmsKey",
  "deleteOnTermination",
]);

const ebsToVolume = (issues: Issues, ebs: Record<string, unknown>, path: string, root: boolean) => {
  rejectUnknown(issues, ebs, EBS_FIELDS, path, "unknown EBS field");
  const volume: Record<string, unknown> = {
    size: readInteger(issues, ebs, "volumeSize", path) ?? AWS_PROVIDER_DEFAULTS.volumeSize,
  };
  put(volume, "type", readString(issues, ebs, "volumeType", path));
  // The installer writes `iops: 0` and `kmsKey: {arn: ""}` to mean "unset"; CAPA omits empty values.
  const iops = readInteger(issues, ebs, "iops", path);
  if (iops !== 0) put(volume, "iops", iops);
  put(volume, "throughput", readInteger(issues, ebs, "throughputMib", path));
  put(volume, "encrypted", readBoolean(issues, ebs, "encrypted", path));
  const kmsKey = readRecord(issues, ebs, "kmsKey", path);
  if (kmsKey !== undefined) {
    const p = fieldPath(path, "kmsKey");
    rejectUnknown(issues, kmsKey, new Set(["id", "arn", "filters"]), p, "unknown KMS key reference field");
    if (kmsKey.filters !== undefined)
      invalid(issues, fieldPath(p, "filters"), kmsKey.filters, "KMS key filters are not supported in CAPI");
    const id = readString(issues, kmsKey, "id", p);
    const arn = readString(issues, kmsKey, "arn", p);
    if (id && arn) invalid(issues, p, kmsKey, "only one of id and arn may be set for a KMS key");
    // CAPA takes either form in one string; an ARN is recognisable by its prefix on the way back.
    const key = arn || id;
    if (key !== undefined && key !== "") volume.encryptionKey = key;
  }
  const deleteOnTermination = readBoolean(issues, ebs, "deleteOnTermination", path);
  if (deleteOnTermination === false) {
    const p = fieldPath(path, "deleteOnTermination");
    if (root)
      warn(
        issues,
        p,
        "deleteOnTermination=false is not supported in CAPI for the root volume; the root volume will be deleted with the instance",
      );
    else
      invalid(issues, p, false, "non-root volumes with deleteOnTermination=false are not supported in CAPI");
  }
  return volume;
};

const blockDevicesToCapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const devices = readArray(issues, spec, "blockDevices", path) ?? [];
  let rootVolume: Record<string, unknown> | undefined;
  const nonRootVolumes: Record<string, unknown>[] = [];
  devices.forEach((device, i) => {
    const p = fieldPath(path, "blockDevices", i);
    if (!isRecord(device)) {
      invalid(issues, p, device, "must be an object");
      return;
    }
    rejectUnknown(
      issues,
      device,
      new Set(["deviceName", "ebs", "noDevice", "virtualName"]),
      p,
      "unknown block device field",
    );
    if (device.noDevice !== undefined)
      invalid(issues, fieldPath(p, "noDevice"), device.noDevice, "noDevice is not supported in CAPI");
    if (device.virtualName !== undefined)
      invalid(
        issues,
        fieldPath(p, "virtualName"),
        device.virtualName,
        "virtualName is not supported in CAPI",
      );
    const deviceName = readString(issues, device, "deviceName", p);
    const ebs = readRecord(issues, device, "ebs", p);
    if (ebs === undefined) {
      warn(issues, p, "missing ebs configuration for block device; it is not carried over");
      return;
    }
    const volume = ebsToVolume(issues, ebs, fieldPath(p, "ebs"), deviceName === undefined);
    if (deviceName === undefined) {
      if (rootVolume !== undefined)
        invalid(issues, p, device, "only one block device without deviceName (the root volume) is allowed");
      rootVolume = volume;
    } else nonRootVolumes.push({ deviceName, ...volume });
  });
  return { rootVolume: rootVolume ?? { ...AWS_PROVIDER_DEFAULTS.rootVolume }, nonRootVolumes };
};

const hostToCapi = (
  issues: Issues,
  placement: Record<string, unknown>,
  path: string,
  out: Record<string, unknown>,
) => {
  const host = readRecord(issues, placement, "host", path);
  if (host === undefined) {
    out.hostAffinity = AWS_PROVIDER_DEFAULTS.hostAffinity;
    return;
  }
  const p = fieldPath(path, "host");
  rejectUnknown(issues, host, new Set(["affinity", "dedicatedHost"]), p, "unknown host placement field");
  const affinity = host.affinity;
  if (affinity === "AnyAvailable") out.hostAffinity = AWS_PROVIDER_DEFAULTS.hostAffinity;
  else if (affinity === "DedicatedHost") out.hostAffinity = "host";
  else
    invalid(
      issues,
      fieldPath(p, "affinity"),
      affinity ?? null,
      "affinity must be AnyAvailable or DedicatedHost",
    );
  const dedicated = readRecord(issues, host, "dedicatedHost", p);
  if (dedicated === undefined) return;
  const dp = fieldPath(p, "dedicatedHost");
  rejectUnknown(
    issues,
    dedicated,
    new Set(["id", "allocationStrategy", "dynamicHostAllocation"]),
    dp,
    "unknown dedicated host field",
  );
  const id = readString(issues, dedicated, "id", dp);
  const strategy = dedicated.allocationStrategy;
  if (strategy === "Dynamic") {
    if (id !== undefined)
      invalid(issues, fieldPath(dp, "id"), id, "id must be empty when allocationStrategy is Dynamic");
    const dynamic = readRecord(issues, dedicated, "dynamicHostAllocation", dp);
    out.dynamicHostAllocation = dynamic === undefined ? {} : { ...dynamic };
  } else if (strategy === undefined || strategy === "UserProvided") {
    if (dedicated.dynamicHostAllocation !== undefined)
      invalid(
        issues,
        fieldPath(dp, "dynamicHostAllocation"),
        dedicated.dynamicHostAllocation,
        "dynamicHostAllocation requires allocationStrategy Dynamic",
      );
    put(out, "hostID", id);
  } else
    invalid(
      issues,
      fieldPath(dp, "allocationStrategy"),
      strategy,
      "allocationStrategy must be UserProvided or Dynamic",
    );
};

const metadataOptionsToCapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const options = readRecord(issues, spec, "metadataServiceOptions", path);
  let httpTokens: string = AWS_PROVIDER_DEFAULTS.httpTokens;
  if (options !== undefined) {
    const p = fieldPath(path, "metadataServiceOptions");
    rejectUnknown(issues, options, new Set(["authentication"]), p, "unknown metadata service option");
    const auth = options.authentication;
    if (auth === "Required") httpTokens = "required";
    else if (auth !== undefined && auth !== "" && auth !== "Optional")
      invalid(
        issues,
        fieldPath(p, "authentication"),
        auth,
        "authentication must be Optional, Required or empty",
      );
  }
  return { httpTokens, ...AWS_PROVIDER_DEFAULTS.instanceMetadataOptions };
};

/** `aws:///us-east-1a/i-0123` → `i-0123`; undefined when the last segment is not an instance ID. */
export const instanceIdOf = (providerID: string): string | undefined => {
  const last = providerID.split("/").pop() ?? "";
  return INSTANCE_ID_PATTERN.test(last) ? last : undefined;
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

  const spec: Record<string, unknown> = {};
  put(spec, "ami", amiToCapi(issues, value, path));
  put(spec, "instanceType", readString(issues, value, "instanceType", path));

  const cpuOptions = readRecord(issues, value, "cpuOptions", path);
  if (cpuOptions !== undefined) {
    const p = fieldPath(path, "cpuOptions");
    rejectUnknown(issues, cpuOptions, new Set(["confidentialCompute"]), p, "unknown CPU option");
    const out: Record<string, unknown> = {};
    put(out, "confidentialCompute", readString(issues, cpuOptions, "confidentialCompute", p));
    spec.cpuOptions = out;
  }

  const tags = readArray(issues, value, "tags", path);
  if (tags !== undefined && tags.length > 0) {
    const additionalTags: Record<string, string> = {};
    tags.forEach((tag, i) => {
      const p = fieldPath(path, "tags", i);
      if (!isRecord(tag) || typeof tag.name !== "string" || typeof tag.value !== "string") {
        invalid(issues, p, tag, "a tag must have a string name and value");
        return;
      }
      if (Object.hasOwn(additionalTags, tag.name))
        warn(issues, p, `duplicate tag name "${tag.name}": the last value wins`);
      additionalTags[tag.name] = tag.value;
    });
    spec.additionalTags = additionalTags;
  }

  const profile = readRecord(issues, value, "iamInstanceProfile", path);
  if (profile !== undefined) {
    const p = fieldPath(path, "iamInstanceProfile");
    const ref = referenceToCapi(issues, profile, p);
    if (ref.filters !== undefined)
      invalid(
        issues,
        fieldPath(p, "filters"),
        profile.filters,
        "IAM instance profile filters are not supported in CAPI",
      );
    if (typeof ref.id === "string") spec.iamInstanceProfile = ref.id;
  }

  put(spec, "sshKeyName", readString(issues, value, "keyName", path));
  const deviceIndex = readInteger(issues, value, "deviceIndex", path);
  if (deviceIndex !== undefined && deviceIndex !== 0)
    invalid(issues, fieldPath(path, "deviceIndex"), deviceIndex, "deviceIndex must be 0 or unset");
  put(spec, "publicIP", readBoolean(issues, value, "publicIp", path));

  const nit = readString(issues, value, "networkInterfaceType", path);
  if (nit !== undefined) {
    const mapped = NETWORK_INTERFACE_TYPES[nit];
    if (mapped === undefined)
      invalid(
        issues,
        fieldPath(path, "networkInterfaceType"),
        nit,
        "networkInterfaceType must be ENA, EFA or empty",
      );
    else spec.networkInterfaceType = mapped;
  }

  const groups = readArray(issues, value, "securityGroups", path);
  if (groups !== undefined && groups.length > 0)
    spec.additionalSecurityGroups = groups.flatMap((g, i) => {
      const p = fieldPath(path, "securityGroups", i);
      if (!isRecord(g)) {
        invalid(issues, p, g, "must be an object");
        return [];
      }
      return [referenceToCapi(issues, g, p)];
    });

  const subnet = readRecord(issues, value, "subnet", path);
  spec.subnet =
    subnet === undefined
      ? { ...AWS_PROVIDER_DEFAULTS.subnet }
      : referenceToCapi(issues, subnet, fieldPath(path, "subnet"));

  let failureDomain: string | undefined;
  const placement = readRecord(issues, value, "placement", path);
  const pp = fieldPath(path, "placement");
  if (placement !== undefined) {
    rejectUnknown(
      issues,
      placement,
      new Set(["region", "availabilityZone", "tenancy", "host"]),
      pp,
      "unknown placement field",
    );
    const region = readString(issues, placement, "region", pp);
    if (region !== undefined && region !== "" && region !== ctx.infrastructure.region)
      invalid(
        issues,
        fieldPath(pp, "region"),
        region,
        `placement.region should match infrastructure status value ${JSON.stringify(ctx.infrastructure.region)}`,
      );
    failureDomain = readString(issues, placement, "availabilityZone", pp);
    put(spec, "tenancy", readString(issues, placement, "tenancy", pp));
    hostToCapi(issues, placement, pp, spec);
  } else spec.hostAffinity = AWS_PROVIDER_DEFAULTS.hostAffinity;

  const loadBalancers = readArray(issues, value, "loadBalancers", path);
  // Control plane load balancers live on the AWSCluster in CAPI; CAPI → MAPI rebuilds them from it.
  if (loadBalancers !== undefined && loadBalancers.length > 0) {
    if (ctx.owner === "MachineSet")
      invalid(
        issues,
        fieldPath(path, "loadBalancers"),
        loadBalancers,
        "loadBalancers are not supported for MachineSets (only control plane Machines may have them)",
      );
    else if (!ctx.controlPlane)
      invalid(
        issues,
        fieldPath(path, "loadBalancers"),
        loadBalancers,
        "loadBalancers are not supported for non-control plane machines",
      );
  }

  const credentials = readRecord(issues, value, "credentialsSecret", path);
  if (credentials !== undefined && credentials.name !== AWS_PROVIDER_DEFAULTS.credentialsSecretName)
    invalid(
      issues,
      fieldPath(path, "credentialsSecret"),
      credentials,
      `credentialsSecret must be ${JSON.stringify(AWS_PROVIDER_DEFAULTS.credentialsSecretName)} or unset: CAPA uses its own credentials, convert this machine by hand`,
    );

  let dataSecretName: string | undefined;
  const userData = readRecord(issues, value, "userDataSecret", path);
  if (userData !== undefined) {
    const p = fieldPath(path, "userDataSecret");
    rejectUnknown(issues, userData, new Set(["name"]), p, "unknown secret reference field");
    dataSecretName = readString(issues, userData, "name", p);
  }

  const { rootVolume, nonRootVolumes } = blockDevicesToCapi(issues, value, path);
  spec.rootVolume = rootVolume;
  if (nonRootVolumes.length > 0) spec.nonRootVolumes = nonRootVolumes;

  const spot = readRecord(issues, value, "spotMarketOptions", path);
  if (spot !== undefined) {
    const p = fieldPath(path, "spotMarketOptions");
    rejectUnknown(issues, spot, new Set(["maxPrice"]), p, "unknown spot market option");
    const out: Record<string, unknown> = {};
    put(out, "maxPrice", readString(issues, spot, "maxPrice", p));
    spec.spotMarketOptions = out;
  }

  spec.instanceMetadataOptions = metadataOptionsToCapi(issues, value, path);
  put(spec, "placementGroupName", readString(issues, value, "placementGroupName", path));
  put(spec, "placementGroupPartition", readInteger(issues, value, "placementGroupPartition", path));
  put(spec, "capacityReservationId", readString(issues, value, "capacityReservationId", path));
  const marketType = readString(issues, value, "marketType", path);
  if (marketType !== undefined && !MARKET_TYPES.includes(marketType))
    invalid(
      issues,
      fieldPath(path, "marketType"),
      marketType,
      "marketType must be OnDemand, Spot, CapacityBlock or empty",
    );
  put(spec, "marketType", marketType);
  spec.ignition = { storageType: AWS_PROVIDER_DEFAULTS.ignitionStorageType };

  if (ctx.providerID !== undefined && ctx.providerID !== "") {
    spec.providerID = ctx.providerID;
    put(spec, "instanceID", instanceIdOf(ctx.providerID));
  }
  const result: ToCapiProviderResult = { infraSpec: spec };
  if (failureDomain !== undefined) result.failureDomain = failureDomain;
  if (dataSecretName !== undefined) result.dataSecretName = dataSecretName;
  return result;
};

// ---------------------------------------------------------------------------------------------------
// CAPI → MAPI

const volumeToEbs = (issues: Issues, volume: Record<string, unknown>, path: string) => {
  rejectUnknown(
    issues,
    volume,
    new Set(["deviceName", "size", "type", "iops", "throughput", "encrypted", "encryptionKey"]),
    path,
    "volume field has no MAPI equivalent",
  );
  const ebs: Record<string, unknown> = {};
  put(ebs, "volumeSize", readInteger(issues, volume, "size", path));
  put(ebs, "volumeType", readString(issues, volume, "type", path));
  put(ebs, "iops", readInteger(issues, volume, "iops", path));
  put(ebs, "throughputMib", readInteger(issues, volume, "throughput", path));
  put(ebs, "encrypted", readBoolean(issues, volume, "encrypted", path));
  const key = readString(issues, volume, "encryptionKey", path);
  if (key !== undefined) ebs.kmsKey = key.startsWith("arn:") ? { arn: key } : { id: key };
  return ebs;
};

const UNSUPPORTED_HINT = "not supported by Machine API (rule aws-unsupported-fields)";

const checkUnsupportedNested = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const nested: [string, readonly string[], readonly string[]][] = [
    ["ami", ["id"], ["eksLookupType"]],
    ["ignition", ["storageType", "version"], ["proxy", "tls"]],
    ["cloudInit", [], ["secretCount", "secretPrefix", "insecureSkipSecretsManager", "secureSecretsBackend"]],
  ];
  for (const [field, allowed] of nested) {
    const obj = spec[field];
    if (!isRecord(obj)) continue;
    for (const [key, v] of Object.entries(obj))
      if (!allowed.includes(key) && v !== undefined)
        invalid(issues, fieldPath(path, field, key), v, UNSUPPORTED_HINT);
  }
};

const loadBalancersFromCluster = (issues: Issues, ctx: ToMapiContext, path: string) => {
  if (ctx.infraCluster === undefined) {
    invalid(
      issues,
      fieldPath(path, "loadBalancers"),
      null,
      "the AWSCluster is needed to convert a control plane machine (its load balancers live there)",
    );
    return undefined;
  }
  const out: Record<string, unknown>[] = [];
  for (const field of ["controlPlaneLoadBalancer", "secondaryControlPlaneLoadBalancer"]) {
    const lb = getPath(ctx.infraCluster, ["spec", field]);
    if (!isRecord(lb)) continue;
    const p = `AWSCluster.spec.${field}`;
    if (typeof lb.name !== "string" || lb.name === "") {
      invalid(
        issues,
        fieldPath(p, "name"),
        lb.name ?? null,
        "a control plane load balancer needs a name to be converted",
      );
      continue;
    }
    const type = lb.loadBalancerType ?? "classic";
    if (type === "nlb") out.push({ name: lb.name, type: "network" });
    else if (type === "classic" || type === "elb") out.push({ name: lb.name, type: "classic" });
    else
      invalid(
        issues,
        fieldPath(p, "loadBalancerType"),
        type,
        "only classic, elb and nlb load balancers convert",
      );
  }
  return out.length > 0 ? out : undefined;
};

const hostToMapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const affinity = spec.hostAffinity ?? AWS_PROVIDER_DEFAULTS.hostAffinity;
  const hostID = readString(issues, spec, "hostID", path);
  if (hostID !== undefined && !HOST_ID_PATTERN.test(hostID))
    invalid(issues, fieldPath(path, "hostID"), hostID, "hostID must match ^h-([0-9a-f]{8}|[0-9a-f]{17})$");
  const dynamic = readRecord(issues, spec, "dynamicHostAllocation", path);
  if (hostID !== undefined && dynamic !== undefined)
    invalid(
      issues,
      fieldPath(path, "dynamicHostAllocation"),
      dynamic,
      "hostID and dynamicHostAllocation are exclusive",
    );
  let dedicatedHost: Record<string, unknown> | undefined;
  if (hostID !== undefined) dedicatedHost = { id: hostID };
  else if (dynamic !== undefined)
    dedicatedHost = {
      allocationStrategy: "Dynamic",
      ...(Object.keys(dynamic).length > 0 ? { dynamicHostAllocation: { ...dynamic } } : {}),
    };
  if (affinity === "host")
    return { affinity: "DedicatedHost", ...(dedicatedHost === undefined ? {} : { dedicatedHost }) };
  if (affinity !== "default") {
    invalid(issues, fieldPath(path, "hostAffinity"), affinity, "hostAffinity must be default or host");
    return undefined;
  }
  return dedicatedHost === undefined ? undefined : { affinity: "AnyAvailable", dedicatedHost };
};

const metadataOptionsToMapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const options = readRecord(issues, spec, "instanceMetadataOptions", path);
  if (options === undefined) return undefined;
  const p = fieldPath(path, "instanceMetadataOptions");
  const fixed: Record<string, unknown> = AWS_PROVIDER_DEFAULTS.instanceMetadataOptions;
  for (const [key, v] of Object.entries(options)) {
    if (key === "httpTokens" || v === undefined) continue;
    if (!Object.hasOwn(fixed, key))
      invalid(issues, fieldPath(p, key), v, "instance metadata option has no MAPI equivalent");
    else if (v !== fixed[key])
      invalid(
        issues,
        fieldPath(p, key),
        v,
        `only ${JSON.stringify(fixed[key])} can be represented in Machine API`,
      );
  }
  const tokens = options.httpTokens;
  if (tokens === "required") return { authentication: "Required" };
  if (tokens !== undefined && tokens !== "optional")
    invalid(issues, fieldPath(p, "httpTokens"), tokens, "httpTokens must be optional or required");
  return undefined;
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
  checkUnsupportedNested(issues, infraSpec, path);

  const ami = readRecord(issues, infraSpec, "ami", path);
  const amiId = ami === undefined ? undefined : readString(issues, ami, "id", fieldPath(path, "ami"));
  if (amiId === undefined) invalid(issues, fieldPath(path, "ami", "id"), null, "an AMI id is required");
  else value.ami = { id: amiId };
  put(value, "instanceType", readString(issues, infraSpec, "instanceType", path));

  const cpuOptions = readRecord(issues, infraSpec, "cpuOptions", path);
  if (cpuOptions !== undefined) {
    const p = fieldPath(path, "cpuOptions");
    rejectUnknown(
      issues,
      cpuOptions,
      new Set(["confidentialCompute"]),
      p,
      "CPU option has no MAPI equivalent",
    );
    const out: Record<string, unknown> = {};
    put(out, "confidentialCompute", readString(issues, cpuOptions, "confidentialCompute", p));
    value.cpuOptions = out;
  }

  const tags = readRecord(issues, infraSpec, "additionalTags", path);
  if (tags !== undefined && Object.keys(tags).length > 0)
    value.tags = Object.keys(tags)
      .sort()
      .map((name) => ({ name, value: String(tags[name]) }));

  const profile = readString(issues, infraSpec, "iamInstanceProfile", path);
  if (profile !== undefined) value.iamInstanceProfile = { id: profile };
  put(value, "keyName", readString(issues, infraSpec, "sshKeyName", path));
  put(value, "publicIp", readBoolean(issues, infraSpec, "publicIP", path));

  const nit = readString(issues, infraSpec, "networkInterfaceType", path);
  if (nit !== undefined) {
    const mapped = Object.entries(NETWORK_INTERFACE_TYPES).find(([, capi]) => capi === nit)?.[0];
    if (mapped === undefined)
      invalid(
        issues,
        fieldPath(path, "networkInterfaceType"),
        nit,
        "networkInterfaceType must be interface, efa or empty",
      );
    else value.networkInterfaceType = mapped;
  }

  const groups = readArray(issues, infraSpec, "additionalSecurityGroups", path);
  if (groups !== undefined && groups.length > 0)
    value.securityGroups = groups.flatMap((g, i) => {
      const p = fieldPath(path, "additionalSecurityGroups", i);
      if (!isRecord(g)) {
        invalid(issues, p, g, "must be an object");
        return [];
      }
      return [referenceToMapi(issues, g, p)];
    });
  const subnet = readRecord(issues, infraSpec, "subnet", path);
  value.subnet = subnet === undefined ? {} : referenceToMapi(issues, subnet, fieldPath(path, "subnet"));

  const placement: Record<string, unknown> = { region: ctx.infrastructure.region };
  put(placement, "availabilityZone", ctx.failureDomain);
  put(placement, "tenancy", readString(issues, infraSpec, "tenancy", path));
  put(placement, "host", hostToMapi(issues, infraSpec, path));
  value.placement = placement;

  if (ctx.controlPlane && ctx.owner === "Machine")
    put(value, "loadBalancers", loadBalancersFromCluster(issues, ctx, path));

  value.credentialsSecret = { name: AWS_PROVIDER_DEFAULTS.credentialsSecretName };
  if (ctx.dataSecretName !== undefined) value.userDataSecret = { name: ctx.dataSecretName };

  const blockDevices: Record<string, unknown>[] = [];
  const root = readRecord(issues, infraSpec, "rootVolume", path);
  if (root !== undefined && Object.keys(root).length > 0) {
    const p = fieldPath(path, "rootVolume");
    if (root.deviceName !== undefined)
      invalid(
        issues,
        fieldPath(p, "deviceName"),
        root.deviceName,
        "the root volume's device name cannot be set in Machine API",
      );
    const { deviceName: _ignored, ...rest } = root;
    blockDevices.push({ ebs: volumeToEbs(issues, rest, p) });
  }
  const nonRoot = readArray(issues, infraSpec, "nonRootVolumes", path) ?? [];
  nonRoot.forEach((volume, i) => {
    const p = fieldPath(path, "nonRootVolumes", i);
    if (!isRecord(volume)) {
      invalid(issues, p, volume, "must be an object");
      return;
    }
    const deviceName = readString(issues, volume, "deviceName", p);
    if (deviceName === undefined)
      invalid(issues, fieldPath(p, "deviceName"), null, "a non-root volume needs a deviceName");
    blockDevices.push({ deviceName, ebs: volumeToEbs(issues, volume, p) });
  });
  if (blockDevices.length > 0) value.blockDevices = blockDevices;

  const spot = readRecord(issues, infraSpec, "spotMarketOptions", path);
  if (spot !== undefined) {
    const p = fieldPath(path, "spotMarketOptions");
    rejectUnknown(issues, spot, new Set(["maxPrice"]), p, "spot market option has no MAPI equivalent");
    const out: Record<string, unknown> = {};
    put(out, "maxPrice", readString(issues, spot, "maxPrice", p));
    value.spotMarketOptions = out;
  }
  put(value, "metadataServiceOptions", metadataOptionsToMapi(issues, infraSpec, path));
  put(value, "placementGroupName", readString(issues, infraSpec, "placementGroupName", path));
  put(value, "placementGroupPartition", readInteger(issues, infraSpec, "placementGroupPartition", path));
  put(value, "capacityReservationId", readString(issues, infraSpec, "capacityReservationId", path));
  const marketType = readString(issues, infraSpec, "marketType", path);
  if (marketType !== undefined && !MARKET_TYPES.includes(marketType))
    invalid(
      issues,
      fieldPath(path, "marketType"),
      marketType,
      "marketType must be OnDemand, Spot, CapacityBlock or empty",
    );
  put(value, "marketType", marketType);

  const ignition = readRecord(issues, infraSpec, "ignition", path);
  const storageType = ignition?.storageType;
  if (storageType !== undefined && storageType !== AWS_PROVIDER_DEFAULTS.ignitionStorageType)
    invalid(
      issues,
      fieldPath(path, "ignition", "storageType"),
      storageType,
      `only ${AWS_PROVIDER_DEFAULTS.ignitionStorageType} can be represented in Machine API`,
    );
  return value;
};

export const awsPlatform: PlatformConverter = Object.freeze({
  platform: "AWS",
  infraMachine: KINDS.awsMachine,
  infraMachineTemplate: KINDS.awsMachineTemplate,
  infraCluster: KINDS.awsCluster,
  regionOf: (infrastructure: KubeObject) => {
    const region = getPath(infrastructure, ["status", "platformStatus", "aws", "region"]);
    return typeof region === "string" ? region : "";
  },
  providerSpecToCapi,
  infraSpecToProviderSpec,
  instanceLabels,
  infraMachineStatusFromMapi,
  providerStatusFromCapi,
});
