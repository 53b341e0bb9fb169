/**
 * The nested OpenStack shapes the field table (table.ts) converts, each with its two directions side by
 * side: Neutron filters (MAPO's comma-separated tags ↔ CAPO's tag lists), security groups, the server group,
 * volumes, server metadata, and the two MAPO ways of attaching a server to networks (`networks[]` and
 * `ports[]`) ↔ CAPO's single `ports[]`. Field-level wiring is in table.ts.
 *
 * Over 500 lines on purpose: each shape's two directions are read together (a port's fields must come back
 * exactly as they went), and ports and networks share their filter and security-group helpers.
 */
import { isRecord } from "../../kube/object.js";
import {
  put,
  readArray,
  readBoolean,
  readInteger,
  readRecord,
  readString,
  rejectUnknown,
} from "../../sync/conversion/fields.js";
import { fieldPath, type Issues, invalid, warn } from "../../sync/conversion/types.js";
import { OPENSTACK_PROVIDER_DEFAULTS } from "./data.js";

const UNSUPPORTED_IN_MAPI = "not supported by Machine API (rule openstack-unsupported-fields)";

/** Records of a list at `from[key]`, each with its path; a non-object item is an error and skipped. */
export const records = (issues: Issues, from: Record<string, unknown>, key: string, path: string) =>
  (readArray(issues, from, key, path) ?? []).flatMap((item, i) => {
    const p = fieldPath(path, key, i);
    if (isRecord(item)) return [{ item, path: p, index: i }];
    invalid(issues, p, item, "must be an object");
    return [];
  });

/** A list of strings at `from[key]`; undefined when absent. */
export const readStrings = (issues: Issues, from: Record<string, unknown>, key: string, path: string) => {
  const list = readArray(issues, from, key, path);
  if (list === undefined) return undefined;
  if (list.every((v) => typeof v === "string")) return list as string[];
  invalid(issues, fieldPath(path, key), list, "must be a list of strings");
  return undefined;
};

const nonEmpty = (obj: Record<string, unknown>) => (Object.keys(obj).length > 0 ? obj : undefined);

// ---------------------------------------------------------------------------------------------------
// Neutron filters: MAPO `{name, description, projectId|tenantId, tags: "a,b", …}` ↔ CAPO `{name,
// description, projectID, tags: [a, b], …}`

const TAG_KEYS = ["tags", "tagsAny", "notTags", "notTagsAny"] as const;

/** `"a,b,,c"` → `[a, b, c]`; undefined for an empty string (upstream's splitTags). */
const splitTags = (tags: string | undefined) => {
  const list = (tags ?? "").split(",").filter((t) => t !== "");
  return list.length > 0 ? list : undefined;
};

const joinTags = (issues: Issues, filter: Record<string, unknown>, key: string, path: string) => {
  const tags = readStrings(issues, filter, key, path);
  return tags === undefined || tags.length === 0 ? undefined : tags.join(",");
};

/** MAPO filter fields that are deprecated and ignored by MAPO: warned about, never carried. */
const IGNORED_FILTER_FIELDS = [
  "status",
  "adminStateUp",
  "shared",
  "marker",
  "limit",
  "sortKey",
  "sortDir",
  "enableDhcp",
  "subnetpoolId",
  "networkId",
];

type FilterKind = "network" | "subnet" | "securityGroup";

/** MAPO-only and CAPO-only names of the extra subnet filter fields. */
const SUBNET_FIELDS: readonly (readonly [mapi: string, capi: string, integer: boolean])[] = [
  ["ipVersion", "ipVersion", true],
  ["gateway_ip", "gatewayIP", false],
  ["cidr", "cidr", false],
  ["ipv6AddressMode", "ipv6AddressMode", false],
  ["ipv6RaMode", "ipv6RAMode", false],
];

/**
 * A MAPO filter → `{id, filter}`: the filter's deprecated `id` is the resource's ID when the parent has no
 * uuid, `tenantId` is the project when `projectId` is unset; the rest maps by name.
 */
export const filterToCapo = (
  issues: Issues,
  filter: Record<string, unknown>,
  path: string,
  kind: FilterKind,
) => {
  const known = new Set([
    "id",
    "name",
    "description",
    "tenantId",
    "projectId",
    ...TAG_KEYS,
    ...IGNORED_FILTER_FIELDS,
    ...(kind === "subnet" ? SUBNET_FIELDS.map(([m]) => m) : []),
  ]);
  rejectUnknown(issues, filter, known, path, "unknown filter field");
  for (const key of IGNORED_FILTER_FIELDS)
    if (filter[key] !== undefined && filter[key] !== "" && filter[key] !== 0)
      warn(issues, fieldPath(path, key), `${key} is ignored by MAPO, ignoring`);
  const out: Record<string, unknown> = {};
  put(out, "name", readString(issues, filter, "name", path) || undefined);
  put(out, "description", readString(issues, filter, "description", path) || undefined);
  const project =
    readString(issues, filter, "projectId", path) || readString(issues, filter, "tenantId", path);
  put(out, "projectID", project || undefined);
  if (kind === "subnet")
    for (const [mapi, capi, integer] of SUBNET_FIELDS) {
      const v = integer ? readInteger(issues, filter, mapi, path) : readString(issues, filter, mapi, path);
      if (v !== undefined && v !== "" && v !== 0) out[capi] = v;
    }
  for (const key of TAG_KEYS) put(out, key, splitTags(readString(issues, filter, key, path)));
  return { id: readString(issues, filter, "id", path) || undefined, filter: nonEmpty(out) };
};

/** A CAPO filter → the MAPO filter (never the deprecated `id`/`tenantId`). */
export const filterToMapo = (
  issues: Issues,
  filter: Record<string, unknown>,
  path: string,
  kind: FilterKind,
) => {
  const known = new Set([
    "name",
    "description",
    "projectID",
    ...TAG_KEYS,
    ...(kind === "subnet" ? SUBNET_FIELDS.map(([, c]) => c) : []),
  ]);
  rejectUnknown(issues, filter, known, path, UNSUPPORTED_IN_MAPI);
  const out: Record<string, unknown> = {};
  put(out, "name", readString(issues, filter, "name", path) || undefined);
  put(out, "description", readString(issues, filter, "description", path) || undefined);
  put(out, "projectId", readString(issues, filter, "projectID", path) || undefined);
  if (kind === "subnet")
    for (const [mapi, capi, integer] of SUBNET_FIELDS) {
      const v = integer ? readInteger(issues, filter, capi, path) : readString(issues, filter, capi, path);
      if (v !== undefined && v !== "" && v !== 0) out[mapi] = v;
    }
  for (const key of TAG_KEYS) put(out, key, joinTags(issues, filter, key, path));
  return out;
};

/** A CAPO `{id}` / `{filter}` param: exactly one of them (CAPO's MaxProperties 1). */
const capoParam = (id: string | undefined, filter: Record<string, unknown> | undefined) =>
  id !== undefined ? { id } : filter !== undefined ? { filter } : undefined;

// ---------------------------------------------------------------------------------------------------
// security groups: MAPO `{uuid, name, filter}` ↔ CAPO `{id}` | `{filter}`

export const securityGroupsToCapo = (issues: Issues, value: Record<string, unknown>, path: string) =>
  records(issues, value, "securityGroups", path).flatMap<Record<string, unknown>>(({ item, path: p }) => {
    rejectUnknown(issues, item, new Set(["uuid", "name", "filter"]), p, "unknown security group field");
    const uuid = readString(issues, item, "uuid", p) || undefined;
    const name = readString(issues, item, "name", p) || undefined;
    const rawFilter = readRecord(issues, item, "filter", p) ?? {};
    const converted = filterToCapo(issues, rawFilter, fieldPath(p, "filter"), "securityGroup");
    const id = uuid ?? converted.id;
    if (id !== undefined) {
      if (name !== undefined || converted.filter !== undefined)
        warn(issues, p, "name and filter are ignored when the security group has a uuid");
      return [{ id }];
    }
    const filter = { ...(converted.filter ?? {}), ...(name === undefined ? {} : { name }) };
    if (Object.keys(filter).length === 0) {
      invalid(issues, p, item, "A security group must be referenced by a UUID or filter");
      return [];
    }
    return [{ filter }];
  });

export const securityGroupsToMapo = (issues: Issues, spec: Record<string, unknown>, path: string) =>
  records(issues, spec, "securityGroups", path).flatMap(({ item, path: p }) => {
    rejectUnknown(issues, item, new Set(["id", "filter"]), p, UNSUPPORTED_IN_MAPI);
    const id = readString(issues, item, "id", p);
    const filter = readRecord(issues, item, "filter", p);
    if (id === undefined && filter === undefined) {
      invalid(issues, p, item, "A security group must be referenced by a UUID or filter");
      return [];
    }
    const out: Record<string, unknown> = {};
    put(out, "uuid", id);
    if (filter !== undefined) {
      const { name, ...rest } = filterToMapo(issues, filter, fieldPath(p, "filter"), "securityGroup");
      put(out, "name", name);
      if (Object.keys(rest).length > 0) out.filter = rest;
    }
    return [out];
  });

// ---------------------------------------------------------------------------------------------------
// server group: MAPO `serverGroupID` / `serverGroupName` ↔ CAPO `serverGroup {id}` | `{filter: {name}}`

export const serverGroupToCapo = (issues: Issues, value: Record<string, unknown>, path: string) => {
  const id = readString(issues, value, "serverGroupID", path) || undefined;
  const name = readString(issues, value, "serverGroupName", path) || undefined;
  if (id !== undefined && name !== undefined)
    warn(
      issues,
      fieldPath(path, "serverGroupName"),
      "serverGroupName is dropped because serverGroupID is set (both must name the same server group)",
    );
  if (id !== undefined) return { id };
  return name === undefined ? undefined : { filter: { name } };
};

export const serverGroupToMapo = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const group = readRecord(issues, spec, "serverGroup", path);
  if (group === undefined) return {};
  const p = fieldPath(path, "serverGroup");
  rejectUnknown(issues, group, new Set(["id", "filter"]), p, UNSUPPORTED_IN_MAPI);
  const id = readString(issues, group, "id", p);
  if (id !== undefined) return { serverGroupID: id };
  const filter = readRecord(issues, group, "filter", p);
  const name = filter === undefined ? undefined : readString(issues, filter, "name", fieldPath(p, "filter"));
  if (filter !== undefined)
    rejectUnknown(issues, filter, new Set(["name"]), fieldPath(p, "filter"), UNSUPPORTED_IN_MAPI);
  if (name !== undefined) return { serverGroupName: name };
  invalid(issues, p, group, "A server group must be referenced by a UUID or filter");
  return {};
};

// ---------------------------------------------------------------------------------------------------
// volumes: MAPO `rootVolume` / `additionalBlockDevices[]` ↔ CAPO (availability zone `{from: Name, name}`)

const azToCapo = (zone: string | undefined) =>
  zone === undefined || zone === ""
    ? undefined
    : { from: OPENSTACK_PROVIDER_DEFAULTS.volumeAvailabilityZoneFrom, name: zone };

const azToMapo = (issues: Issues, volume: Record<string, unknown>, path: string) => {
  const az = readRecord(issues, volume, "availabilityZone", path);
  if (az === undefined) return undefined;
  const p = fieldPath(path, "availabilityZone");
  rejectUnknown(issues, az, new Set(["from", "name"]), p, UNSUPPORTED_IN_MAPI);
  const from = az.from ?? OPENSTACK_PROVIDER_DEFAULTS.volumeAvailabilityZoneFrom;
  if (from !== OPENSTACK_PROVIDER_DEFAULTS.volumeAvailabilityZoneFrom) {
    invalid(
      issues,
      fieldPath(p, "from"),
      from,
      "Machine API can only name a volume availability zone (from: Name)",
    );
    return undefined;
  }
  return readString(issues, az, "name", p);
};

const DEPRECATED_ROOT_VOLUME: readonly (readonly [string, string])[] = [
  ["deviceType", "deviceType is silently ignored by MAPO and will not be converted"],
  ["sourceType", "sourceType is silently ignored by MAPO and will not be converted"],
  ["sourceUUID", "sourceUUID is superseded by spec.image in MAPO and will be ignored here"],
];

export const rootVolumeToCapo = (issues: Issues, value: Record<string, unknown>, path: string) => {
  const root = readRecord(issues, value, "rootVolume", path);
  if (root === undefined) return undefined;
  const p = fieldPath(path, "rootVolume");
  rejectUnknown(
    issues,
    root,
    new Set(["diskSize", "volumeType", "availabilityZone", ...DEPRECATED_ROOT_VOLUME.map(([k]) => k)]),
    p,
    "unknown root volume field",
  );
  for (const [key, message] of DEPRECATED_ROOT_VOLUME) {
    const v = readString(issues, root, key, p);
    if (v !== undefined && v !== "") warn(issues, fieldPath(p, key), message);
  }
  const size = readInteger(issues, root, "diskSize", p);
  // CAPO requires sizeGiB ≥ 1: upstream writes 0 and CAPO's admission refuses it later; say it now.
  if (size === undefined || size < 1)
    invalid(
      issues,
      fieldPath(p, "diskSize"),
      size ?? null,
      "a root volume needs a diskSize of at least 1 GiB",
    );
  const out: Record<string, unknown> = { sizeGiB: size ?? 0 };
  put(out, "type", readString(issues, root, "volumeType", p) || undefined);
  put(out, "availabilityZone", azToCapo(readString(issues, root, "availabilityZone", p)));
  return out;
};

export const rootVolumeToMapo = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const root = readRecord(issues, spec, "rootVolume", path);
  if (root === undefined) return undefined;
  const p = fieldPath(path, "rootVolume");
  rejectUnknown(issues, root, new Set(["sizeGiB", "type", "availabilityZone"]), p, UNSUPPORTED_IN_MAPI);
  const out: Record<string, unknown> = {};
  put(out, "diskSize", readInteger(issues, root, "sizeGiB", p));
  put(out, "volumeType", readString(issues, root, "type", p) || undefined);
  put(out, "availabilityZone", azToMapo(issues, root, p) || undefined);
  return out;
};

const BLOCK_DEVICE_TYPES = ["Local", "Volume"];

export const blockDevicesToCapo = (issues: Issues, value: Record<string, unknown>, path: string) =>
  records(issues, value, "additionalBlockDevices", path).flatMap(({ item, path: p }) => {
    rejectUnknown(issues, item, new Set(["name", "sizeGiB", "storage"]), p, "unknown block device field");
    const storage = readRecord(issues, item, "storage", p) ?? {};
    const sp = fieldPath(p, "storage");
    rejectUnknown(issues, storage, new Set(["type", "volume"]), sp, "unknown block device storage field");
    const type = readString(issues, storage, "type", sp);
    if (type === undefined || !BLOCK_DEVICE_TYPES.includes(type))
      invalid(issues, fieldPath(sp, "type"), type ?? null, "type must be Local or Volume");
    const out: Record<string, unknown> = {
      name: readString(issues, item, "name", p) ?? "",
      sizeGiB: readInteger(issues, item, "sizeGiB", p) ?? 0,
    };
    const volume = readRecord(issues, storage, "volume", sp);
    if (type === "Volume") {
      if (volume === undefined) {
        invalid(issues, fieldPath(sp, "volume"), null, "volume is required, but is missing");
        return [];
      }
      const vp = fieldPath(sp, "volume");
      rejectUnknown(issues, volume, new Set(["type", "availabilityZone"]), vp, "unknown volume field");
      const capoVolume: Record<string, unknown> = {};
      put(capoVolume, "type", readString(issues, volume, "type", vp) || undefined);
      put(capoVolume, "availabilityZone", azToCapo(readString(issues, volume, "availabilityZone", vp)));
      out.storage = { type, volume: capoVolume };
    } else {
      if (volume !== undefined)
        warn(issues, fieldPath(sp, "volume"), "volume options apply only to Volume block devices, ignoring");
      out.storage = { type };
    }
    return [out];
  });

export const blockDevicesToMapo = (issues: Issues, spec: Record<string, unknown>, path: string) =>
  records(issues, spec, "additionalBlockDevices", path).flatMap(({ item, path: p }) => {
    rejectUnknown(issues, item, new Set(["name", "sizeGiB", "storage"]), p, UNSUPPORTED_IN_MAPI);
    const storage = readRecord(issues, item, "storage", p) ?? {};
    const sp = fieldPath(p, "storage");
    rejectUnknown(issues, storage, new Set(["type", "volume"]), sp, UNSUPPORTED_IN_MAPI);
    const type = readString(issues, storage, "type", sp);
    const out: Record<string, unknown> = {
      name: readString(issues, item, "name", p) ?? "",
      sizeGiB: readInteger(issues, item, "sizeGiB", p) ?? 0,
    };
    const volume = readRecord(issues, storage, "volume", sp);
    if (type === "Volume") {
      if (volume === undefined) {
        invalid(issues, p, item, "The volume field must be populated if type is volume");
        return [];
      }
      const vp = fieldPath(sp, "volume");
      rejectUnknown(issues, volume, new Set(["type", "availabilityZone"]), vp, UNSUPPORTED_IN_MAPI);
      const mapoVolume: Record<string, unknown> = {};
      put(mapoVolume, "type", readString(issues, volume, "type", vp) || undefined);
      put(mapoVolume, "availabilityZone", azToMapo(issues, volume, vp) || undefined);
      out.storage = { type, volume: mapoVolume };
    } else out.storage = { type };
    return [out];
  });

// ---------------------------------------------------------------------------------------------------
// server metadata: MAPO map ↔ CAPO `[{key, value}]` sorted by key

export const serverMetadataToCapo = (issues: Issues, value: Record<string, unknown>, path: string) => {
  const metadata = readRecord(issues, value, "serverMetadata", path);
  if (metadata === undefined) return undefined;
  const out = Object.keys(metadata)
    .sort()
    .flatMap((key) => {
      const v = readString(issues, metadata, key, fieldPath(path, "serverMetadata"));
      return v === undefined ? [] : [{ key, value: v }];
    });
  return out.length > 0 ? out : undefined;
};

export const serverMetadataToMapo = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const out: Record<string, string> = {};
  for (const { item, path: p } of records(issues, spec, "serverMetadata", path)) {
    rejectUnknown(issues, item, new Set(["key", "value"]), p, UNSUPPORTED_IN_MAPI);
    const key = readString(issues, item, "key", p);
    const v = readString(issues, item, "value", p) ?? "";
    if (key === undefined) invalid(issues, fieldPath(p, "key"), null, "a server metadata key is required");
    else if (Object.hasOwn(out, key))
      invalid(issues, fieldPath(p, "key"), key, "duplicate server metadata key");
    else out[key] = v;
  }
  return nonEmpty(out);
};

// ---------------------------------------------------------------------------------------------------
// port binding profile: MAPO `{capabilities: "…switchdev…", trusted: "true"}` ↔ CAPO booleans

const profileToCapo = (issues: Issues, from: Record<string, unknown>, path: string) => {
  const profile = readRecord(issues, from, "profile", path);
  if (profile === undefined) return undefined;
  const p = fieldPath(path, "profile");
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(profile)) {
    if (typeof v !== "string") {
      invalid(issues, fieldPath(p, key), v, "must be a string");
      continue;
    }
    if (key === "capabilities")
      out.ovsHWOffload = v.includes(OPENSTACK_PROVIDER_DEFAULTS.profile.capabilities);
    else if (key === "trusted") out.trustedVF = v === OPENSTACK_PROVIDER_DEFAULTS.profile.trusted;
    else {
      invalid(issues, p, profile, "profile contains an unsupported key");
      continue;
    }
    const expected: string = OPENSTACK_PROVIDER_DEFAULTS.profile[key];
    if (v !== expected)
      warn(
        issues,
        fieldPath(p, key),
        `only ${JSON.stringify(expected)} is carried back to Machine API; ${JSON.stringify(v)} becomes ${key === "capabilities" ? "ovsHWOffload" : "trustedVF"}: ${String(key === "capabilities" ? out.ovsHWOffload : out.trustedVF)}`,
      );
  }
  return out;
};

const profileToMapo = (issues: Issues, port: Record<string, unknown>, path: string) => {
  const profile = readRecord(issues, port, "profile", path);
  if (profile === undefined) return undefined;
  const p = fieldPath(path, "profile");
  rejectUnknown(issues, profile, new Set(["ovsHWOffload", "trustedVF"]), p, UNSUPPORTED_IN_MAPI);
  const out: Record<string, string> = {};
  if (readBoolean(issues, profile, "ovsHWOffload", p) === true)
    out.capabilities = OPENSTACK_PROVIDER_DEFAULTS.profile.capabilities;
  if (readBoolean(issues, profile, "trustedVF", p) === true)
    out.trusted = OPENSTACK_PROVIDER_DEFAULTS.profile.trusted;
  return nonEmpty(out);
};

/** MAPO `portSecurity` ↔ CAPO `disablePortSecurity`: the same switch, inverted, kept both ways. */
const portSecurityToCapo = (issues: Issues, from: Record<string, unknown>, path: string) => {
  const security = readBoolean(issues, from, "portSecurity", path);
  return security === undefined ? undefined : !security;
};

// ---------------------------------------------------------------------------------------------------
// MAPO `ports[]` → CAPO ports. Upstream always writes `nameSuffix` and `description` for these (even
// empty): that is also how CAPI → MAPI tells a MAPO port from a MAPO network (decision 77).

const MAPO_PORT_FIELDS = new Set([
  "networkID",
  "nameSuffix",
  "description",
  "adminStateUp",
  "macAddress",
  "fixedIPs",
  "tenantID",
  "projectID",
  "securityGroups",
  "allowedAddressPairs",
  "tags",
  "vnicType",
  "profile",
  "portSecurity",
  "trunk",
  "hostID",
]);

const addressPairsToCapo = (issues: Issues, from: Record<string, unknown>, path: string) =>
  records(issues, from, "allowedAddressPairs", path).map(({ item, path: p }) => {
    rejectUnknown(issues, item, new Set(["ipAddress", "macAddress"]), p, "unknown address pair field");
    const pair: Record<string, unknown> = { ipAddress: readString(issues, item, "ipAddress", p) ?? "" };
    put(pair, "macAddress", readString(issues, item, "macAddress", p) || undefined);
    return pair;
  });

const addressPairsToMapo = (issues: Issues, from: Record<string, unknown>, path: string) =>
  records(issues, from, "allowedAddressPairs", path).map(({ item, path: p }) => {
    rejectUnknown(issues, item, new Set(["ipAddress", "macAddress"]), p, UNSUPPORTED_IN_MAPI);
    const pair: Record<string, unknown> = {};
    put(pair, "ipAddress", readString(issues, item, "ipAddress", p) || undefined);
    put(pair, "macAddress", readString(issues, item, "macAddress", p) || undefined);
    return pair;
  });

export const mapoPortsToCapo = (issues: Issues, value: Record<string, unknown>, path: string) =>
  records(issues, value, "ports", path).map(({ item, path: p }) => {
    rejectUnknown(issues, item, MAPO_PORT_FIELDS, p, "unknown port field");
    for (const key of ["tenantID", "projectID"])
      if (readString(issues, item, key, p))
        warn(issues, fieldPath(p, key), `${key} is ignored by MAPO, ignoring`);
    if (readString(issues, item, "hostID", p))
      warn(issues, fieldPath(p, "hostID"), "hostID is ignored by MAPO, ignoring");
    const port: Record<string, unknown> = {
      network: { id: readString(issues, item, "networkID", p) ?? "" },
      description: readString(issues, item, "description", p) ?? "",
      nameSuffix: readString(issues, item, "nameSuffix", p) ?? "",
    };
    const fixedIPs = records(issues, item, "fixedIPs", p).map(({ item: ip, path: ipp }) => {
      rejectUnknown(issues, ip, new Set(["subnetID", "ipAddress"]), ipp, "unknown fixed IP field");
      const out: Record<string, unknown> = {};
      const subnetID = readString(issues, ip, "subnetID", ipp);
      if (subnetID) out.subnet = { id: subnetID };
      put(out, "ipAddress", readString(issues, ip, "ipAddress", ipp) || undefined);
      return out;
    });
    if (fixedIPs.length > 0) port.fixedIPs = fixedIPs;
    const groups = readStrings(issues, item, "securityGroups", p);
    if (groups !== undefined && groups.length > 0) port.securityGroups = groups.map((id) => ({ id }));
    put(port, "tags", readStrings(issues, item, "tags", p));
    put(port, "trunk", readBoolean(issues, item, "trunk", p));
    put(port, "adminStateUp", readBoolean(issues, item, "adminStateUp", p));
    put(port, "macAddress", readString(issues, item, "macAddress", p) || undefined);
    const pairs = addressPairsToCapo(issues, item, p);
    if (pairs.length > 0) port.allowedAddressPairs = pairs;
    put(port, "vnicType", readString(issues, item, "vnicType", p) || undefined);
    port.profile = profileToCapo(issues, item, p) ?? {};
    put(port, "disablePortSecurity", portSecurityToCapo(issues, item, p));
    return port;
  });

// ---------------------------------------------------------------------------------------------------
// MAPO `networks[]` → CAPO ports: a network with an ID or filter is one port with a fixed IP per subnet;
// a network of subnets only is one port per subnet (what MAPO itself creates).

const MAPO_NETWORK_FIELDS = new Set([
  "uuid",
  "fixedIp",
  "filter",
  "subnets",
  "noAllowedAddressPairs",
  "portTags",
  "vnicType",
  "profile",
  "portSecurity",
]);

const subnetToCapo = (issues: Issues, subnet: Record<string, unknown>, path: string) => {
  rejectUnknown(
    issues,
    subnet,
    new Set(["uuid", "filter", "portTags", "portSecurity"]),
    path,
    "unknown subnet field",
  );
  if (subnet.portSecurity !== undefined)
    warn(
      issues,
      fieldPath(path, "portSecurity"),
      "portSecurity on a subnet is ignored by MAPO (set it on the network), ignoring",
    );
  const converted = filterToCapo(
    issues,
    readRecord(issues, subnet, "filter", path) ?? {},
    fieldPath(path, "filter"),
    "subnet",
  );
  const id = readString(issues, subnet, "uuid", path) || converted.id;
  return {
    param: capoParam(id, id === undefined ? converted.filter : undefined),
    ignoredFilter: id !== undefined && converted.filter !== undefined,
    portTags: readStrings(issues, subnet, "portTags", path) ?? [],
  };
};

export const mapoNetworksToCapo = (issues: Issues, value: Record<string, unknown>, path: string) =>
  records(issues, value, "networks", path).flatMap(({ item, path: p }) => {
    rejectUnknown(issues, item, MAPO_NETWORK_FIELDS, p, "unknown network field");
    if (readString(issues, item, "fixedIp", p))
      warn(issues, fieldPath(p, "fixedIp"), "fixedIp is ignored by MAPO, ignoring");
    const converted = filterToCapo(
      issues,
      readRecord(issues, item, "filter", p) ?? {},
      fieldPath(p, "filter"),
      "network",
    );
    const id = readString(issues, item, "uuid", p) || converted.id;
    if (id !== undefined && converted.filter !== undefined)
      warn(issues, fieldPath(p, "filter"), "the network filter is ignored because the network has a uuid");
    const network = capoParam(id, id === undefined ? converted.filter : undefined);
    const portTags = readStrings(issues, item, "portTags", p) ?? [];
    const subnets = records(issues, item, "subnets", p).map(({ item: s, path: sp }) => {
      const subnet = subnetToCapo(issues, s, sp);
      if (subnet.ignoredFilter)
        warn(issues, fieldPath(sp, "filter"), "the subnet filter is ignored because the subnet has a uuid");
      return subnet;
    });
    // Settings of every port this network entry makes.
    const shared: Record<string, unknown> = {};
    if (readBoolean(issues, item, "noAllowedAddressPairs", p) === true) shared.allowedAddressPairs = [];
    put(shared, "vnicType", readString(issues, item, "vnicType", p) || undefined);
    put(shared, "profile", profileToCapo(issues, item, p));
    put(shared, "disablePortSecurity", portSecurityToCapo(issues, item, p));
    const withTags = (tags: string[]) => (tags.length > 0 ? { tags } : {});
    if (network === undefined) {
      if (subnets.length === 0) {
        invalid(issues, p, item, "a network needs a uuid, a filter or subnets");
        return [];
      }
      return subnets.map((s) => ({
        ...(s.param === undefined ? {} : { fixedIPs: [{ subnet: s.param }] }),
        ...withTags([...portTags, ...s.portTags]),
        ...shared,
      }));
    }
    const fixedIPs = subnets.flatMap((s) => (s.param === undefined ? [] : [{ subnet: s.param }]));
    return [
      {
        network,
        ...(fixedIPs.length > 0 ? { fixedIPs } : {}),
        ...withTags([...portTags, ...subnets.flatMap((s) => s.portTags)]),
        ...shared,
      },
    ];
  });

// ---------------------------------------------------------------------------------------------------
// CAPO ports → MAPO `ports[]` or `networks[]`

const CAPO_PORT_FIELDS = new Set([
  "network",
  "description",
  "nameSuffix",
  "fixedIPs",
  "securityGroups",
  "tags",
  "trunk",
  "adminStateUp",
  "macAddress",
  "allowedAddressPairs",
  "hostID",
  "vnicType",
  "profile",
  "disablePortSecurity",
  "propagateUplinkStatus",
  "valueSpecs",
]);

/** Fields only a MAPO `ports[]` entry can carry: a CAPO port that sets one must become a MAPO port. */
const isMapoPort = (port: Record<string, unknown>) =>
  port.nameSuffix !== undefined ||
  port.description !== undefined ||
  port.adminStateUp !== undefined ||
  port.macAddress !== undefined ||
  port.trunk !== undefined ||
  (Array.isArray(port.securityGroups) && port.securityGroups.length > 0) ||
  (Array.isArray(port.allowedAddressPairs) && port.allowedAddressPairs.length > 0) ||
  (Array.isArray(port.fixedIPs) && port.fixedIPs.some((ip) => isRecord(ip) && ip.ipAddress !== undefined));

const warnUnsupportedPortFields = (issues: Issues, port: Record<string, unknown>, path: string) => {
  for (const key of ["hostID", "propagateUplinkStatus", "valueSpecs"])
    if (port[key] !== undefined)
      warn(issues, fieldPath(path, key), `The ${key} field has no equivalent in MAPO and is not supported`);
};

const capoPortToMapoPort = (issues: Issues, port: Record<string, unknown>, path: string) => {
  const network = readRecord(issues, port, "network", path);
  const networkID =
    network === undefined ? undefined : readString(issues, network, "id", fieldPath(path, "network"));
  if (network === undefined || networkID === undefined || network.filter !== undefined) {
    invalid(issues, fieldPath(path, "network"), network ?? null, "A port must have a reference to a network");
    return undefined;
  }
  const out: Record<string, unknown> = { networkID };
  put(out, "nameSuffix", readString(issues, port, "nameSuffix", path) || undefined);
  put(out, "description", readString(issues, port, "description", path) || undefined);
  put(out, "adminStateUp", readBoolean(issues, port, "adminStateUp", path));
  put(out, "macAddress", readString(issues, port, "macAddress", path) || undefined);
  const fixedIPs = records(issues, port, "fixedIPs", path).flatMap(({ item, path: ip }) => {
    rejectUnknown(issues, item, new Set(["subnet", "ipAddress"]), ip, UNSUPPORTED_IN_MAPI);
    const subnet = readRecord(issues, item, "subnet", ip);
    if (subnet?.filter !== undefined) {
      invalid(
        issues,
        fieldPath(ip, "subnet", "filter"),
        subnet.filter,
        "MAPO only supports defining subnets via IDs",
      );
      return [];
    }
    const subnetID =
      subnet === undefined ? undefined : readString(issues, subnet, "id", fieldPath(ip, "subnet"));
    if (subnetID === undefined) {
      invalid(issues, fieldPath(ip, "subnet", "id"), null, "MAPO only supports defining subnets via IDs");
      return [];
    }
    const fixed: Record<string, unknown> = { subnetID };
    put(fixed, "ipAddress", readString(issues, item, "ipAddress", ip) || undefined);
    return [fixed];
  });
  if (fixedIPs.length > 0) out.fixedIPs = fixedIPs;
  const groups = records(issues, port, "securityGroups", path).flatMap(({ item, path: gp }) => {
    const id = readString(issues, item, "id", gp);
    if (id === undefined || item.filter !== undefined) {
      invalid(issues, gp, item, "MAPO only supports defining port security groups by ID");
      return [];
    }
    return [id];
  });
  if (groups.length > 0) out.securityGroups = groups;
  const pairs = addressPairsToMapo(issues, port, path);
  if (pairs.length > 0) out.allowedAddressPairs = pairs;
  put(out, "tags", readStrings(issues, port, "tags", path));
  put(out, "vnicType", readString(issues, port, "vnicType", path) || undefined);
  put(out, "profile", profileToMapo(issues, port, path));
  const disable = readBoolean(issues, port, "disablePortSecurity", path);
  if (disable !== undefined) out.portSecurity = !disable;
  put(out, "trunk", readBoolean(issues, port, "trunk", path));
  return out;
};

const capoPortToMapoNetwork = (issues: Issues, port: Record<string, unknown>, path: string) => {
  const out: Record<string, unknown> = {};
  const network = readRecord(issues, port, "network", path);
  if (network !== undefined) {
    const np = fieldPath(path, "network");
    rejectUnknown(issues, network, new Set(["id", "filter"]), np, UNSUPPORTED_IN_MAPI);
    const id = readString(issues, network, "id", np);
    const filter = readRecord(issues, network, "filter", np);
    if (id !== undefined) out.uuid = id;
    else if (filter !== undefined)
      out.filter = filterToMapo(issues, filter, fieldPath(np, "filter"), "network");
    else invalid(issues, np, network, "A network must be referenced by a UUID or filter");
  }
  const subnets = records(issues, port, "fixedIPs", path).flatMap(({ item, path: ip }) => {
    rejectUnknown(issues, item, new Set(["subnet"]), ip, UNSUPPORTED_IN_MAPI);
    const subnet = readRecord(issues, item, "subnet", ip);
    if (subnet === undefined) return [];
    const sp = fieldPath(ip, "subnet");
    rejectUnknown(issues, subnet, new Set(["id", "filter"]), sp, UNSUPPORTED_IN_MAPI);
    const mapo: Record<string, unknown> = {};
    put(mapo, "uuid", readString(issues, subnet, "id", sp));
    const filter = readRecord(issues, subnet, "filter", sp);
    if (filter !== undefined) mapo.filter = filterToMapo(issues, filter, fieldPath(sp, "filter"), "subnet");
    return [mapo];
  });
  if (subnets.length > 0) out.subnets = subnets;
  if (Array.isArray(port.allowedAddressPairs) && port.allowedAddressPairs.length === 0)
    out.noAllowedAddressPairs = true;
  put(out, "portTags", readStrings(issues, port, "tags", path));
  put(out, "vnicType", readString(issues, port, "vnicType", path) || undefined);
  put(out, "profile", profileToMapo(issues, port, path));
  const disable = readBoolean(issues, port, "disablePortSecurity", path);
  if (disable !== undefined) out.portSecurity = !disable;
  return out;
};

export const capoPortsToMapo = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const networks: Record<string, unknown>[] = [];
  const ports: Record<string, unknown>[] = [];
  for (const { item, path: p } of records(issues, spec, "ports", path)) {
    rejectUnknown(issues, item, CAPO_PORT_FIELDS, p, UNSUPPORTED_IN_MAPI);
    warnUnsupportedPortFields(issues, item, p);
    if (isMapoPort(item)) {
      const port = capoPortToMapoPort(issues, item, p);
      if (port !== undefined) ports.push(port);
    } else networks.push(capoPortToMapoNetwork(issues, item, p));
  }
  return { networks, ports };
};
