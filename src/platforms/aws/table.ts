/**
 * The SPEC §5.3 table between the OpenShift `AWSMachineProviderConfig` (MAPI providerSpec) and the CAPA
 * v1beta2 `AWSMachine` spec, one row per field: the row names the field on both sides and holds its two
 * conversions beside each other, so a field cannot be converted one way and forgotten the other. The rows
 * run in order both ways (the order of the fields in the output and of the errors a user sees). The nested
 * shapes rows share are in shapes.ts; the frame that runs the table is ../frame.ts.
 */

import { isDeepStrictEqual } from "node:util";
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
import type { FieldRow } from "../frame.js";
import { AWS_PROVIDER_DEFAULTS, DUAL_STACK_IP_FAMILIES } from "./data.js";
import {
  blockDevicesToCapi,
  blockDevicesToMapi,
  copyStrings,
  hostToCapi,
  hostToMapi,
  loadBalancersFromCluster,
  metadataOptionsToCapi,
  metadataOptionsToMapi,
  referenceList,
  referenceToCapi,
  referenceToMapi,
} from "./shapes.js";

/** A row of the AWS field table: the shared row shape (src/platforms/frame.ts). */
export type AwsFieldRow = FieldRow;

type Reader = typeof readString | typeof readInteger | typeof readBoolean;

/** A field copied as is, under its name on each side. */
const scalar = (mapi: string, capi: string, read: Reader): AwsFieldRow => ({
  mapi: [mapi],
  capi: [capi],
  toCapi: (issues, value, ctx, out) => put(out.infraSpec, capi, read(issues, value, mapi, ctx.path)),
  toMapi: (issues, spec, ctx, out) => put(out, mapi, read(issues, spec, capi, ctx.path)),
});

/** An object of string fields with the same name and shape on both sides (cpuOptions, spotMarketOptions). */
const stringObject = (
  field: string,
  keys: readonly string[],
  unknownInMapi: string,
  unknownInCapi: string,
): AwsFieldRow => ({
  mapi: [field],
  capi: [field],
  toCapi: (issues, value, ctx, out) =>
    put(out.infraSpec, field, copyStrings(issues, value, field, ctx.path, keys, unknownInMapi)),
  toMapi: (issues, spec, ctx, out) =>
    put(out, field, copyStrings(issues, spec, field, ctx.path, keys, unknownInCapi)),
});

/** A field whose values map one to one (`[mapi, capi]` pairs); a value outside the pairs is an error. */
const enumeration = (
  mapi: string,
  capi: string,
  pairs: readonly (readonly [string, string])[],
): AwsFieldRow => {
  const convert =
    (from: string, to: string, side: 0 | 1) =>
    (issues: Issues, source: Record<string, unknown>, path: string, target: Record<string, unknown>) => {
      const v = readString(issues, source, from, path);
      if (v === undefined) return;
      const pair = pairs.find((p) => p[side] === v);
      if (pair !== undefined) target[to] = pair[1 - side];
      else {
        const named = pairs.map((p) => p[side]).filter((x) => x !== "");
        const allowed = `${named.join(", ")}${named.length < pairs.length ? " or empty" : ""}`;
        invalid(issues, fieldPath(path, from), v, `${from} must be ${allowed}`);
      }
    };
  const toCapi = convert(mapi, capi, 0);
  const toMapi = convert(capi, mapi, 1);
  return {
    mapi: [mapi],
    capi: [capi],
    toCapi: (issues, value, ctx, out) => toCapi(issues, value, ctx.path, out.infraSpec),
    toMapi: (issues, spec, ctx, out) => toMapi(issues, spec, ctx.path, out),
  };
};

/** A field of one side only: the other direction has nothing to read or write. */
const nothing = (): void => {};

const MARKET_TYPES = ["OnDemand", "Spot", "CapacityBlock", ""];
const INSTANCE_ID_PATTERN = /^i-[0-9a-zA-Z]+$/;

/** `aws:///us-east-1a/i-0123` → `i-0123`; undefined when the last segment is not an instance ID. */
const instanceIdOf = (providerID: string): string | undefined => {
  const last = providerID.split("/").pop() ?? "";
  return INSTANCE_ID_PATTERN.test(last) ? last : undefined;
};

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

export const AWS_FIELD_TABLE: readonly AwsFieldRow[] = Object.freeze([
  {
    mapi: ["ami"],
    capi: ["ami"],
    capiKnownKeys: { ami: ["id"] },
    toCapi: (issues, value, ctx, out) => put(out.infraSpec, "ami", amiToCapi(issues, value, ctx.path)),
    toMapi: (issues, spec, ctx, out) => {
      const ami = readRecord(issues, spec, "ami", ctx.path);
      const id = ami === undefined ? undefined : readString(issues, ami, "id", fieldPath(ctx.path, "ami"));
      if (id === undefined) invalid(issues, fieldPath(ctx.path, "ami", "id"), null, "an AMI id is required");
      else out.ami = { id };
    },
  },
  scalar("instanceType", "instanceType", readString),
  stringObject(
    "cpuOptions",
    ["confidentialCompute"],
    "unknown CPU option",
    "CPU option has no MAPI equivalent",
  ),
  {
    // `[{name, value}]` ↔ `{name: value}`; MAPI's list comes back sorted by name.
    mapi: ["tags"],
    capi: ["additionalTags"],
    toCapi: (issues, value, ctx, out) => {
      const tags = readArray(issues, value, "tags", ctx.path);
      if (tags === undefined || tags.length === 0) return;
      const additionalTags: Record<string, string> = {};
      tags.forEach((tag, i) => {
        const p = fieldPath(ctx.path, "tags", i);
        if (!isRecord(tag) || typeof tag.name !== "string" || typeof tag.value !== "string") {
          invalid(issues, p, tag, "a tag must have a string name and value");
          return;
        }
        if (Object.hasOwn(additionalTags, tag.name))
          warn(issues, p, `duplicate tag name "${tag.name}": the last value wins`);
        additionalTags[tag.name] = tag.value;
      });
      out.infraSpec.additionalTags = additionalTags;
    },
    toMapi: (issues, spec, ctx, out) => {
      const tags = readRecord(issues, spec, "additionalTags", ctx.path);
      if (tags !== undefined && Object.keys(tags).length > 0)
        out.tags = Object.keys(tags)
          .sort()
          .map((name) => ({ name, value: String(tags[name]) }));
    },
  },
  {
    // A MAPI reference `{id}` ↔ the CAPA profile name.
    mapi: ["iamInstanceProfile"],
    capi: ["iamInstanceProfile"],
    toCapi: (issues, value, ctx, out) => {
      const profile = readRecord(issues, value, "iamInstanceProfile", ctx.path);
      if (profile === undefined) return;
      const p = fieldPath(ctx.path, "iamInstanceProfile");
      const ref = referenceToCapi(issues, profile, p);
      if (ref.filters !== undefined)
        invalid(
          issues,
          fieldPath(p, "filters"),
          profile.filters,
          "IAM instance profile filters are not supported in CAPI",
        );
      if (typeof ref.id === "string") out.infraSpec.iamInstanceProfile = ref.id;
    },
    toMapi: (issues, spec, ctx, out) => {
      const profile = readString(issues, spec, "iamInstanceProfile", ctx.path);
      if (profile !== undefined) out.iamInstanceProfile = { id: profile };
    },
  },
  scalar("keyName", "sshKeyName", readString),
  {
    // CAPA always attaches the primary interface at index 0: only that (or unset) converts.
    mapi: ["deviceIndex"],
    capi: [],
    toCapi: (issues, value, ctx) => {
      const deviceIndex = readInteger(issues, value, "deviceIndex", ctx.path);
      if (deviceIndex !== undefined && deviceIndex !== 0)
        invalid(issues, fieldPath(ctx.path, "deviceIndex"), deviceIndex, "deviceIndex must be 0 or unset");
    },
    toMapi: nothing,
  },
  scalar("publicIp", "publicIP", readBoolean),
  enumeration("networkInterfaceType", "networkInterfaceType", [
    ["ENA", "interface"],
    ["EFA", "efa"],
    ["", ""],
  ]),
  {
    mapi: ["securityGroups"],
    capi: ["additionalSecurityGroups"],
    toCapi: (issues, value, ctx, out) =>
      put(
        out.infraSpec,
        "additionalSecurityGroups",
        referenceList(issues, value, "securityGroups", ctx.path, referenceToCapi),
      ),
    toMapi: (issues, spec, ctx, out) =>
      put(
        out,
        "securityGroups",
        referenceList(issues, spec, "additionalSecurityGroups", ctx.path, referenceToMapi),
      ),
  },
  {
    mapi: ["subnet"],
    capi: ["subnet"],
    toCapi: (issues, value, ctx, out) => {
      const subnet = readRecord(issues, value, "subnet", ctx.path);
      out.infraSpec.subnet =
        subnet === undefined
          ? { ...AWS_PROVIDER_DEFAULTS.subnet }
          : referenceToCapi(issues, subnet, fieldPath(ctx.path, "subnet"));
    },
    toMapi: (issues, spec, ctx, out) => {
      const subnet = readRecord(issues, spec, "subnet", ctx.path);
      out.subnet = subnet === undefined ? {} : referenceToMapi(issues, subnet, fieldPath(ctx.path, "subnet"));
    },
  },
  {
    // The region is the Infrastructure's and the zone is the CAPI Machine's failureDomain.
    mapi: ["placement"],
    capi: ["tenancy", "hostAffinity", "hostID", "dynamicHostAllocation"],
    toCapi: (issues, value, ctx, out) => {
      const placement = readRecord(issues, value, "placement", ctx.path);
      if (placement === undefined) {
        out.infraSpec.hostAffinity = AWS_PROVIDER_DEFAULTS.hostAffinity;
        return;
      }
      const pp = fieldPath(ctx.path, "placement");
      rejectUnknown(
        issues,
        placement,
        new Set(["region", "availabilityZone", "tenancy", "host"]),
        pp,
        "unknown placement field",
      );
      // Compared only when the Infrastructure names a region (upstream does the same).
      const region = readString(issues, placement, "region", pp);
      const clusterRegion = ctx.infrastructure.region;
      if (clusterRegion !== "" && region !== undefined && region !== "" && region !== clusterRegion)
        invalid(
          issues,
          fieldPath(pp, "region"),
          region,
          `placement.region should match infrastructure status value ${JSON.stringify(ctx.infrastructure.region)}`,
        );
      const failureDomain = readString(issues, placement, "availabilityZone", pp);
      if (failureDomain !== undefined) out.failureDomain = failureDomain;
      put(out.infraSpec, "tenancy", readString(issues, placement, "tenancy", pp));
      hostToCapi(issues, placement, pp, out.infraSpec);
    },
    toMapi: (issues, spec, ctx, out) => {
      const placement: Record<string, unknown> = { region: ctx.infrastructure.region };
      put(placement, "availabilityZone", ctx.failureDomain);
      put(placement, "tenancy", readString(issues, spec, "tenancy", ctx.path));
      put(placement, "host", hostToMapi(issues, spec, ctx.path));
      out.placement = placement;
    },
  },
  {
    // Control plane load balancers live on the AWSCluster in CAPI; CAPI → MAPI rebuilds them from it.
    mapi: ["loadBalancers"],
    capi: [],
    toCapi: (issues, value, ctx) => {
      const loadBalancers = readArray(issues, value, "loadBalancers", ctx.path);
      if (loadBalancers === undefined || loadBalancers.length === 0) return;
      if (ctx.owner === "MachineSet")
        invalid(
          issues,
          fieldPath(ctx.path, "loadBalancers"),
          loadBalancers,
          "loadBalancers are not supported for MachineSets (only control plane Machines may have them)",
        );
      else if (!ctx.controlPlane)
        invalid(
          issues,
          fieldPath(ctx.path, "loadBalancers"),
          loadBalancers,
          "loadBalancers are not supported for non-control plane machines",
        );
    },
    toMapi: (issues, _spec, ctx, out) => {
      if (ctx.controlPlane && ctx.owner === "Machine")
        put(out, "loadBalancers", loadBalancersFromCluster(issues, ctx, ctx.path));
    },
  },
  {
    // CAPA runs with its own credentials: only the default secret (or none) converts, and comes back.
    mapi: ["credentialsSecret"],
    capi: [],
    toCapi: (issues, value, ctx) => {
      const credentials = readRecord(issues, value, "credentialsSecret", ctx.path);
      if (credentials !== undefined && credentials.name !== AWS_PROVIDER_DEFAULTS.credentialsSecretName)
        invalid(
          issues,
          fieldPath(ctx.path, "credentialsSecret"),
          credentials,
          `credentialsSecret must be ${JSON.stringify(AWS_PROVIDER_DEFAULTS.credentialsSecretName)} or unset: CAPA uses its own credentials, convert this machine by hand`,
        );
    },
    toMapi: (_issues, _spec, _ctx, out) => {
      out.credentialsSecret = { name: AWS_PROVIDER_DEFAULTS.credentialsSecretName };
    },
  },
  {
    // ↔ the CAPI Machine's `spec.bootstrap.dataSecretName`.
    mapi: ["userDataSecret"],
    capi: [],
    toCapi: (issues, value, ctx, out) => {
      const userData = readRecord(issues, value, "userDataSecret", ctx.path);
      if (userData === undefined) return;
      const p = fieldPath(ctx.path, "userDataSecret");
      rejectUnknown(issues, userData, new Set(["name"]), p, "unknown secret reference field");
      const name = readString(issues, userData, "name", p);
      if (name !== undefined) out.dataSecretName = name;
    },
    toMapi: (_issues, _spec, ctx, out) => {
      if (ctx.dataSecretName !== undefined) out.userDataSecret = { name: ctx.dataSecretName };
    },
  },
  {
    mapi: ["blockDevices"],
    capi: ["rootVolume", "nonRootVolumes"],
    toCapi: (issues, value, ctx, out) => {
      const { rootVolume, nonRootVolumes } = blockDevicesToCapi(issues, value, ctx.path);
      out.infraSpec.rootVolume = rootVolume;
      if (nonRootVolumes.length > 0) out.infraSpec.nonRootVolumes = nonRootVolumes;
    },
    toMapi: (issues, spec, ctx, out) => put(out, "blockDevices", blockDevicesToMapi(issues, spec, ctx.path)),
  },
  stringObject(
    "spotMarketOptions",
    ["maxPrice"],
    "unknown spot market option",
    "spot market option has no MAPI equivalent",
  ),
  {
    mapi: ["metadataServiceOptions"],
    capi: ["instanceMetadataOptions"],
    toCapi: (issues, value, ctx, out) => {
      out.infraSpec.instanceMetadataOptions = metadataOptionsToCapi(issues, value, ctx.path);
    },
    toMapi: (issues, spec, ctx, out) =>
      put(out, "metadataServiceOptions", metadataOptionsToMapi(issues, spec, ctx.path)),
  },
  scalar("placementGroupName", "placementGroupName", readString),
  scalar("placementGroupPartition", "placementGroupPartition", readInteger),
  scalar("capacityReservationId", "capacityReservationId", readString),
  enumeration(
    "marketType",
    "marketType",
    MARKET_TYPES.map((v) => [v, v]),
  ),
  {
    // OpenShift user data is an Ignition pointer config: CAPA's default storage, and only that, converts.
    mapi: [],
    capi: ["ignition"],
    capiKnownKeys: { ignition: ["storageType", "version"] },
    toCapi: (_issues, _value, _ctx, out) => {
      out.infraSpec.ignition = { storageType: AWS_PROVIDER_DEFAULTS.ignitionStorageType };
    },
    toMapi: (issues, spec, ctx) => {
      const ignition = readRecord(issues, spec, "ignition", ctx.path);
      const storageType = ignition?.storageType;
      if (storageType !== undefined && storageType !== AWS_PROVIDER_DEFAULTS.ignitionStorageType)
        invalid(
          issues,
          fieldPath(ctx.path, "ignition", "storageType"),
          storageType,
          `only ${AWS_PROVIDER_DEFAULTS.ignitionStorageType} can be represented in Machine API`,
        );
    },
  },
  {
    // MAPI has no field for either: both are derived from the cluster's IP family, so only the derived
    // value (or its absence on a single-stack cluster) converts back.
    mapi: [],
    capi: ["privateDnsName", "assignPrimaryIPv6"],
    toCapi: (_issues, _value, ctx, out) => {
      if (!DUAL_STACK_IP_FAMILIES.includes(ctx.infrastructure.ipFamily)) return;
      out.infraSpec.privateDnsName = { ...AWS_PROVIDER_DEFAULTS.dualStack.privateDnsName };
      out.infraSpec.assignPrimaryIPv6 = AWS_PROVIDER_DEFAULTS.dualStack.assignPrimaryIPv6;
    },
    toMapi: (issues, spec, ctx) => {
      const ipFamily = ctx.infrastructure.ipFamily;
      const dualStack = DUAL_STACK_IP_FAMILIES.includes(ipFamily);
      for (const field of ["privateDnsName", "assignPrimaryIPv6"] as const) {
        const expected = dualStack ? AWS_PROVIDER_DEFAULTS.dualStack[field] : undefined;
        const actual = spec[field];
        if (isDeepStrictEqual(actual ?? undefined, expected)) continue;
        const why = `Machine API derives ${field} from the cluster's IP family (${JSON.stringify(ipFamily)})`;
        invalid(
          issues,
          fieldPath(ctx.path, field),
          actual ?? null,
          expected === undefined
            ? `${why}, which sets none: it cannot be converted`
            : `${why}: only ${JSON.stringify(expected)} can be converted`,
        );
      }
    },
  },
  {
    // An empty cloudInit is how the server serialises "none"; any key in it is unsupported.
    mapi: [],
    capi: ["cloudInit"],
    capiKnownKeys: { cloudInit: [] },
    toCapi: nothing,
    toMapi: nothing,
  },
  {
    // ← the MAPI Machine's `spec.providerID`; the way back is the CAPI Machine's (machine.ts).
    mapi: [],
    capi: ["providerID", "instanceID"],
    toCapi: (_issues, _value, ctx, out) => {
      if (ctx.providerID === undefined || ctx.providerID === "") return;
      out.infraSpec.providerID = ctx.providerID;
      put(out.infraSpec, "instanceID", instanceIdOf(ctx.providerID));
    },
    toMapi: nothing,
  },
]);
