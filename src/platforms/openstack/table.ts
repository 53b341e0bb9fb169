/**
 * The table between MAPO's `OpenstackProviderSpec` (MAPI providerSpec, machine.openshift.io/v1alpha1) and
 * CAPO's v1beta1 `OpenStackMachine` spec, one row per field, both conversions side by side, following
 * openshift/cluster-capi-operator's pkg/conversion (mapi2capi/openstack.go, capi2mapi/openstack.go); where
 * this table does something else, decision 77 says what and why. Rows run in order both ways. The nested
 * shapes are shapes.ts; the frame that runs the table is ../frame.ts.
 */

import { put, readBoolean, readRecord, readString, rejectUnknown } from "../../sync/conversion/fields.js";
import { fieldPath, type Issues, invalid, warn } from "../../sync/conversion/types.js";
import { type FieldRow, isEmptyValue } from "../frame.js";
import { OPENSTACK_PROVIDER_DEFAULTS } from "./data.js";
import {
  blockDevicesToCapo,
  blockDevicesToMapo,
  capoPortsToMapo,
  mapoNetworksToCapo,
  mapoPortsToCapo,
  readStrings,
  rootVolumeToCapo,
  rootVolumeToMapo,
  securityGroupsToCapo,
  securityGroupsToMapo,
  serverGroupToCapo,
  serverGroupToMapo,
  serverMetadataToCapo,
  serverMetadataToMapo,
} from "./shapes.js";

/** A row of the OpenStack field table: the shared row shape (src/platforms/frame.ts). */
export type OpenStackFieldRow = FieldRow;

const UNSUPPORTED_IN_MAPI = "not supported by Machine API (rule openstack-unsupported-fields)";

const nothing = (): void => {};

/** A field copied as is under its name on each side (`empty` values are left out both ways). */
const scalar = (
  mapi: string,
  capi: string,
  read: typeof readString | typeof readBoolean,
): OpenStackFieldRow => ({
  mapi: [mapi],
  capi: [capi],
  toCapi: (issues, value, ctx, out) => put(out.infraSpec, capi, read(issues, value, mapi, ctx.path)),
  toMapi: (issues, spec, ctx, out) => put(out, mapi, read(issues, spec, capi, ctx.path)),
});

/** A MAPI field upstream drops without a word; we refuse it, since it changes what the server gets. */
const refused = (mapi: string, why: string): OpenStackFieldRow => ({
  mapi: [mapi],
  capi: [],
  toCapi: (issues, value, ctx) => {
    const v = value[mapi];
    if (v !== undefined && v !== "") invalid(issues, fieldPath(ctx.path, mapi), v, why);
  },
  toMapi: nothing,
});

/** A CAPO field Machine API cannot carry, with the message upstream gives where it has one. */
const unsupported = (capi: string, message = UNSUPPORTED_IN_MAPI): OpenStackFieldRow => ({
  mapi: [],
  capi: [capi],
  toCapi: nothing,
  toMapi: (issues, spec, ctx) => {
    if (spec[capi] !== undefined && spec[capi] !== null)
      invalid(issues, fieldPath(ctx.path, capi), spec[capi], message);
  },
});

const listRow = (
  mapi: string,
  capi: string,
  toCapo: (issues: Issues, v: Record<string, unknown>, path: string) => unknown[],
  toMapo: (issues: Issues, v: Record<string, unknown>, path: string) => unknown[],
): OpenStackFieldRow => ({
  mapi: [mapi],
  capi: [capi],
  toCapi: (issues, value, ctx, out) => {
    const list = toCapo(issues, value, ctx.path);
    if (list.length > 0) out.infraSpec[capi] = list;
  },
  toMapi: (issues, spec, ctx, out) => {
    const list = toMapo(issues, spec, ctx.path);
    if (list.length > 0) out[mapi] = list;
  },
});

const imageToMapo = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const p = fieldPath(path, "image");
  const image = readRecord(issues, spec, "image", path) ?? {};
  rejectUnknown(issues, image, new Set(["id", "filter", "imageRef"]), p, UNSUPPORTED_IN_MAPI);
  for (const key of ["id", "imageRef"])
    if (image[key] !== undefined) {
      invalid(issues, fieldPath(p, key), image[key], "MAPO only supports defining images by names");
      return undefined;
    }
  const filter = readRecord(issues, image, "filter", p);
  const name = filter === undefined ? undefined : readString(issues, filter, "name", fieldPath(p, "filter"));
  if (filter === undefined || name === undefined) {
    invalid(issues, fieldPath(p, "filter"), filter ?? null, "MAPO only supports defining images by names");
    return undefined;
  }
  rejectUnknown(issues, filter, new Set(["name", "tags"]), fieldPath(p, "filter"), UNSUPPORTED_IN_MAPI);
  if (filter.tags !== undefined)
    warn(issues, fieldPath(p, "filter", "tags"), "MAPO does not support filtering image by tags");
  return name;
};

export const OPENSTACK_FIELD_TABLE: readonly OpenStackFieldRow[] = Object.freeze([
  {
    // MAPO's flavor is a name, always written (a non-pointer string); CAPO's flavorID has no MAPO form.
    mapi: ["flavor"],
    capi: ["flavor"],
    toCapi: (issues, value, ctx, out) => {
      out.infraSpec.flavor =
        readString(issues, value, "flavor", ctx.path) ?? OPENSTACK_PROVIDER_DEFAULTS.flavor;
    },
    toMapi: (issues, spec, ctx, out) => {
      out.flavor = readString(issues, spec, "flavor", ctx.path) ?? OPENSTACK_PROVIDER_DEFAULTS.flavor;
    },
  },
  unsupported("flavorID", "MAPO only supports defining flavors via names"),
  {
    // MAPO's image is always a name: CAPO's image filter by name.
    mapi: ["image"],
    capi: ["image"],
    toCapi: (issues, value, ctx, out) => {
      const name = readString(issues, value, "image", ctx.path) ?? OPENSTACK_PROVIDER_DEFAULTS.imageName;
      out.infraSpec.image = { filter: { name } };
    },
    toMapi: (issues, spec, ctx, out) => {
      out.image = imageToMapo(issues, spec, ctx.path) ?? OPENSTACK_PROVIDER_DEFAULTS.imageName;
    },
  },
  scalar("keyName", "sshKeyName", readString),
  {
    // MAPO ports and networks both become CAPO ports: ports first, then networks (upstream's order).
    mapi: ["ports", "networks"],
    capi: ["ports"],
    toCapi: (issues, value, ctx, out) => {
      const ports = [
        ...mapoPortsToCapo(issues, value, ctx.path),
        ...mapoNetworksToCapo(issues, value, ctx.path),
      ];
      if (ports.length > 0) out.infraSpec.ports = ports;
    },
    toMapi: (issues, spec, ctx, out) => {
      const { networks, ports } = capoPortsToMapo(issues, spec, ctx.path);
      if (networks.length > 0) out.networks = networks;
      if (ports.length > 0) out.ports = ports;
    },
  },
  listRow("securityGroups", "securityGroups", securityGroupsToCapo, securityGroupsToMapo),
  scalar("trunk", "trunk", readBoolean),
  {
    mapi: ["tags"],
    capi: ["tags"],
    toCapi: (issues, value, ctx, out) => {
      const tags = readStrings(issues, value, "tags", ctx.path);
      if (tags !== undefined && tags.length > 0) out.infraSpec.tags = tags;
    },
    toMapi: (issues, spec, ctx, out) => {
      const tags = readStrings(issues, spec, "tags", ctx.path);
      if (tags !== undefined && tags.length > 0) out.tags = tags;
    },
  },
  {
    mapi: ["serverMetadata"],
    capi: ["serverMetadata"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "serverMetadata", serverMetadataToCapo(issues, value, ctx.path)),
    toMapi: (issues, spec, ctx, out) =>
      put(out, "serverMetadata", serverMetadataToMapo(issues, spec, ctx.path)),
  },
  scalar("configDrive", "configDrive", readBoolean),
  {
    mapi: ["rootVolume"],
    capi: ["rootVolume"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "rootVolume", rootVolumeToCapo(issues, value, ctx.path)),
    toMapi: (issues, spec, ctx, out) => put(out, "rootVolume", rootVolumeToMapo(issues, spec, ctx.path)),
  },
  listRow("additionalBlockDevices", "additionalBlockDevices", blockDevicesToCapo, blockDevicesToMapo),
  {
    mapi: ["serverGroupID", "serverGroupName"],
    capi: ["serverGroup"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "serverGroup", serverGroupToCapo(issues, value, ctx.path)),
    toMapi: (issues, spec, ctx, out) => Object.assign(out, serverGroupToMapo(issues, spec, ctx.path)),
  },
  {
    // The clouds secret and the cloud in it ↔ CAPO's identityRef; the secret's namespace is not carried
    // (the sync keeps the secret in both namespaces, as upstream assumes).
    mapi: ["cloudsSecret", "cloudName"],
    capi: ["identityRef"],
    toCapi: (issues, value, ctx, out) => {
      const secret = readRecord(issues, value, "cloudsSecret", ctx.path);
      const sp = fieldPath(ctx.path, "cloudsSecret");
      if (secret !== undefined)
        rejectUnknown(issues, secret, new Set(["name", "namespace"]), sp, "unknown secret reference field");
      const name = secret === undefined ? undefined : readString(issues, secret, "name", sp);
      const cloudName = readString(issues, value, "cloudName", ctx.path);
      if (name === undefined || name === "") {
        if (cloudName)
          warn(
            issues,
            fieldPath(ctx.path, "cloudName"),
            "cloudName is ignored without a cloudsSecret, ignoring",
          );
        return;
      }
      out.infraSpec.identityRef = { name, cloudName: cloudName ?? "" };
    },
    toMapi: (issues, spec, ctx, out) => {
      const identity = readRecord(issues, spec, "identityRef", ctx.path);
      if (identity === undefined) return;
      const p = fieldPath(ctx.path, "identityRef");
      rejectUnknown(issues, identity, new Set(["name", "cloudName"]), p, UNSUPPORTED_IN_MAPI);
      const name = readString(issues, identity, "name", p);
      if (!name) return;
      out.cloudsSecret = { name };
      put(out, "cloudName", readString(issues, identity, "cloudName", p) || undefined);
    },
  },
  {
    // ↔ the CAPI Machine's `spec.failureDomain`.
    mapi: ["availabilityZone"],
    capi: [],
    toCapi: (issues, value, ctx, out) => {
      const zone = readString(issues, value, "availabilityZone", ctx.path);
      if (zone) out.failureDomain = zone;
    },
    toMapi: (_issues, _spec, ctx, out) => {
      if (ctx.failureDomain) out.availabilityZone = ctx.failureDomain;
    },
  },
  {
    // ↔ the CAPI Machine's `spec.bootstrap.dataSecretName`; the namespace is not carried (upstream).
    mapi: ["userDataSecret"],
    capi: [],
    toCapi: (issues, value, ctx, out) => {
      const secret = readRecord(issues, value, "userDataSecret", ctx.path);
      if (secret === undefined) return;
      const p = fieldPath(ctx.path, "userDataSecret");
      rejectUnknown(issues, secret, new Set(["name", "namespace"]), p, "unknown secret reference field");
      const name = readString(issues, secret, "name", p);
      if (name) out.dataSecretName = name;
    },
    toMapi: (_issues, _spec, ctx, out) => {
      if (ctx.dataSecretName !== undefined) out.userDataSecret = { name: ctx.dataSecretName };
    },
  },
  {
    // MAPO ignores sshUserName; upstream drops it too, we say so.
    mapi: ["sshUserName"],
    capi: [],
    toCapi: (issues, value, ctx) => {
      if (readString(issues, value, "sshUserName", ctx.path))
        warn(
          issues,
          fieldPath(ctx.path, "sshUserName"),
          "sshUserName is ignored by MAPO and will not be converted",
        );
    },
    toMapi: nothing,
  },
  refused(
    "floatingIP",
    "floatingIP has no CAPO equivalent (CAPO allocates from floatingIPPoolRef); remove it or keep this machine on Machine API",
  ),
  refused(
    "primarySubnet",
    "primarySubnet has no CAPO equivalent (it picks the node's primary address); remove it or keep this machine on Machine API",
  ),
  unsupported("floatingIPPoolRef"),
  unsupported("schedulerHintAdditionalProperties"),
  {
    // ← the MAPI Machine's `spec.providerID`; CAPO fills instanceID itself. The way back is the CAPI
    // Machine's providerID (machine.ts).
    mapi: [],
    capi: ["providerID", "instanceID"],
    toCapi: (_issues, _value, ctx, out) => {
      if (ctx.providerID !== undefined && ctx.providerID !== "") out.infraSpec.providerID = ctx.providerID;
    },
    toMapi: (issues, spec, ctx) => {
      for (const key of ["providerID", "instanceID"])
        if (spec[key] !== undefined && typeof spec[key] !== "string")
          invalid(issues, fieldPath(ctx.path, key), spec[key], "must be a string");
    },
  },
]);

/** Whether a record has any content (used to refuse a non-empty `providerSpec.metadata`). */
/** Whether `v` holds anything (not Go's zero value). */
export const hasContent = (v: unknown): boolean => !isEmptyValue(v);
