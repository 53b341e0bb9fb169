/**
 * The nested AWS shapes the field table (table.ts) converts, each with its two directions side by side:
 * resource references, EBS volumes and block devices, dedicated-host placement, instance metadata options
 * and the control plane load balancers CAPI keeps on the AWSCluster. Field-level wiring is in table.ts.
 */
import { getPath, isRecord } from "../../kube/object.js";
import {
  put,
  readArray,
  readBoolean,
  readInteger,
  readRecord,
  readString,
  rejectUnknown,
} from "../../sync/conversion/fields.js";
import type { ToMapiContext } from "../../sync/conversion/platform.js";
import { fieldPath, type Issues, invalid, warn } from "../../sync/conversion/types.js";
import { AWS_PROVIDER_DEFAULTS } from "./data.js";

const HOST_ID_PATTERN = /^h-([0-9a-f]{8}|[0-9a-f]{17})$/;

// ---------------------------------------------------------------------------------------------------
// resource references: MAPI `{id, arn, filters}` ↔ CAPA `{id, filters}`

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
export const referenceToCapi = (issues: Issues, ref: Record<string, unknown>, path: string) => {
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
export const referenceToMapi = (issues: Issues, ref: Record<string, unknown>, path: string) => {
  rejectUnknown(issues, ref, new Set(["id", "filters"]), path, "unknown resource reference field");
  const out: Record<string, unknown> = {};
  put(out, "id", readString(issues, ref, "id", path));
  const filters = readArray(issues, ref, "filters", path);
  if (filters !== undefined) out.filters = copyFilters(issues, filters, fieldPath(path, "filters"));
  return out;
};

/** A list of references at `from[key]` converted one by one; undefined when absent or empty. */
export const referenceList = (
  issues: Issues,
  from: Record<string, unknown>,
  key: string,
  path: string,
  convert: (issues: Issues, ref: Record<string, unknown>, path: string) => Record<string, unknown>,
) => {
  const list = readArray(issues, from, key, path);
  if (list === undefined || list.length === 0) return undefined;
  return list.flatMap((g, i) => {
    const p = fieldPath(path, key, i);
    if (!isRecord(g)) {
      invalid(issues, p, g, "must be an object");
      return [];
    }
    return [convert(issues, g, p)];
  });
};

/** An object of string fields `keys` copied as is (cpuOptions, spotMarketOptions: same shape both sides). */
export const copyStrings = (
  issues: Issues,
  from: Record<string, unknown>,
  key: string,
  path: string,
  keys: readonly string[],
  unknownMessage: string,
) => {
  const obj = readRecord(issues, from, key, path);
  if (obj === undefined) return undefined;
  const p = fieldPath(path, key);
  rejectUnknown(issues, obj, new Set(keys), p, unknownMessage);
  const out: Record<string, unknown> = {};
  for (const k of keys) put(out, k, readString(issues, obj, k, p));
  return out;
};

// ---------------------------------------------------------------------------------------------------
// volumes: MAPI `blockDevices[{deviceName?, ebs}]` ↔ CAPA `rootVolume` + `nonRootVolumes[]`

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

const INT32_MAX = 2 ** 31 - 1;

/** CAPA's volume sizes are int64; MAPI's are int32 (SPEC §5.3 additions): a larger value cannot be written. */
const readInt32 = (issues: Issues, obj: Record<string, unknown>, key: string, path: string) => {
  const v = readInteger(issues, obj, key, path);
  if (v === undefined || (v <= INT32_MAX && v >= -INT32_MAX - 1)) return v;
  invalid(issues, fieldPath(path, key), v, `must be at most ${INT32_MAX} (Machine API stores it as int32)`);
  return undefined;
};

const volumeToEbs = (issues: Issues, volume: Record<string, unknown>, path: string) => {
  rejectUnknown(
    issues,
    volume,
    new Set(["deviceName", "size", "type", "iops", "throughput", "encrypted", "encryptionKey"]),
    path,
    "volume field has no MAPI equivalent",
  );
  const ebs: Record<string, unknown> = {};
  put(ebs, "volumeSize", readInt32(issues, volume, "size", path));
  put(ebs, "volumeType", readString(issues, volume, "type", path));
  put(ebs, "iops", readInt32(issues, volume, "iops", path));
  put(ebs, "throughputMib", readInt32(issues, volume, "throughput", path));
  put(ebs, "encrypted", readBoolean(issues, volume, "encrypted", path));
  const key = readString(issues, volume, "encryptionKey", path);
  if (key !== undefined) ebs.kmsKey = key.startsWith("arn:") ? { arn: key } : { id: key };
  return ebs;
};

export const blockDevicesToCapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
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

export const blockDevicesToMapi = (issues: Issues, infraSpec: Record<string, unknown>, path: string) => {
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
  return blockDevices.length > 0 ? blockDevices : undefined;
};

// ---------------------------------------------------------------------------------------------------
// dedicated hosts: MAPI `placement.host` ↔ CAPA `hostAffinity`, `hostID`, `dynamicHostAllocation`

export const hostToCapi = (
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
  if (strategy === "Dynamic" && affinity !== "DedicatedHost")
    // CAPI → MAPI refuses a dynamic allocation outside `hostAffinity: host`, so it could never come back.
    invalid(
      issues,
      fieldPath(dp, "allocationStrategy"),
      strategy,
      "allocationStrategy Dynamic needs affinity DedicatedHost",
    );
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

export const hostToMapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
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
  // openshift/api forbids DedicatedHost without a host ID or a dynamic allocation, and a dynamic allocation
  // outside DedicatedHost affinity: CAPA ignores one, MAPI would make it a request for a dedicated host.
  if (affinity === "host" && hostID === undefined && dynamic === undefined)
    invalid(
      issues,
      fieldPath(path, "hostAffinity"),
      affinity,
      "hostAffinity host needs hostID or dynamicHostAllocation",
    );
  if (dynamic !== undefined && affinity !== "host") {
    invalid(
      issues,
      fieldPath(path, "dynamicHostAllocation"),
      dynamic,
      "dynamicHostAllocation needs hostAffinity host",
    );
    return undefined;
  }
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

// ---------------------------------------------------------------------------------------------------
// instance metadata: MAPI `metadataServiceOptions.authentication` ↔ CAPA `instanceMetadataOptions`

export const metadataOptionsToCapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
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

export const metadataOptionsToMapi = (issues: Issues, spec: Record<string, unknown>, path: string) => {
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

// ---------------------------------------------------------------------------------------------------
// control plane load balancers: MAPI `loadBalancers` ← the AWSCluster (MAPI → CAPI only validates)

export const loadBalancersFromCluster = (issues: Issues, ctx: ToMapiContext, path: string) => {
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
