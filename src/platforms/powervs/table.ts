/**
 * The table between MAPI's `PowerVSMachineProviderConfig` (providerSpec, machine.openshift.io/v1) and
 * CAPIBM's v1beta2 `IBMPowerVSMachine` spec, one row per field, both conversions side by side, following
 * openshift/cluster-capi-operator's pkg/conversion (mapi2capi/powervs.go, capi2mapi/powervs.go); where this
 * table does something else, decision 88 says what and why. Rows run in order both ways; the frame that runs
 * the table is ../frame.ts. Status mirroring is status.ts.
 */

import { put, readInteger, readRecord, readString, rejectUnknown } from "../../sync/conversion/fields.js";
import type { ToMapiContext } from "../../sync/conversion/platform.js";
import { fieldPath, type Issues, invalid } from "../../sync/conversion/types.js";
import type { FieldRow } from "../frame.js";
import { POWERVS_PROCESSOR_TYPES, POWERVS_PROVIDER_DEFAULTS, POWERVS_RESOURCE_TYPES } from "./data.js";

/** A row of the PowerVS field table: the shared row shape (src/platforms/frame.ts). */
export type PowerVSFieldRow = FieldRow;

const UNSUPPORTED_IN_MAPI = "not supported by Machine API (rule powervs-unsupported-fields)";

const nothing = (): void => {};

type ResourceType = keyof typeof POWERVS_RESOURCE_TYPES;
const RESOURCE_KEYS: readonly string[] = Object.values(POWERVS_RESOURCE_TYPES);
const isResourceType = (v: unknown): v is ResourceType =>
  typeof v === "string" && Object.hasOwn(POWERVS_RESOURCE_TYPES, v);

/**
 * A MAPI `PowerVSResource` `{type, id|name|regex}` → a CAPIBM `IBMPowerVSResourceReference` holding the one
 * key the type names. Upstream copies that key even when it is missing (an empty reference CAPIBM cannot
 * resolve) and drops the others; both are refused here, so the way back finds what came in.
 */
const resourceToCapi = (
  issues: Issues,
  value: Record<string, unknown>,
  key: string,
  path: string,
): Record<string, string> | undefined => {
  const p = fieldPath(path, key);
  const resource = readRecord(issues, value, key, path) ?? {};
  rejectUnknown(issues, resource, new Set(["type", ...RESOURCE_KEYS]), p, "unknown PowerVS resource field");
  const type = resource.type;
  if (!isResourceType(type)) {
    invalid(issues, fieldPath(p, "type"), type ?? "", "unknown type");
    return undefined;
  }
  const wanted = POWERVS_RESOURCE_TYPES[type];
  let ok = true;
  for (const other of RESOURCE_KEYS)
    if (other !== wanted && resource[other] !== undefined && resource[other] !== null) {
      invalid(issues, fieldPath(p, other), resource[other], `${other} must be unset when type is ${type}`);
      ok = false;
    }
  const reference = readString(issues, resource, wanted, p);
  if (reference === undefined || reference === "") {
    if (resource[wanted] === undefined || reference === "")
      invalid(
        issues,
        fieldPath(p, wanted),
        resource[wanted] ?? null,
        `${wanted} is required when type is ${type}`,
      );
    return undefined;
  }
  return ok ? { [wanted]: reference } : undefined;
};

/**
 * A CAPIBM reference → a MAPI `PowerVSResource`. Upstream takes id, then name, then regex and drops the
 * rest silently; a reference naming two of them is refused here (CAPIBM allows only one).
 */
const referenceToMapi = (
  issues: Issues,
  reference: Record<string, unknown>,
  path: string,
  emptyMessage: string,
): Record<string, string> | undefined => {
  rejectUnknown(issues, reference, new Set(RESOURCE_KEYS), path, UNSUPPORTED_IN_MAPI);
  const set = (Object.entries(POWERVS_RESOURCE_TYPES) as [ResourceType, string][]).flatMap(([type, key]) => {
    const v = readString(issues, reference, key, path);
    return v === undefined ? [] : [{ type, key, v }];
  });
  if (set.length === 0) {
    if (RESOURCE_KEYS.every((k) => reference[k] === undefined))
      invalid(issues, path, reference, emptyMessage);
    return undefined;
  }
  if (set.length > 1) {
    invalid(
      issues,
      path,
      reference,
      "only one of id, name or regex may be set: Machine API names a PowerVS resource one way",
    );
    return undefined;
  }
  const [{ type, key, v }] = set as [{ type: ResourceType; key: string; v: string }];
  return { type, [key]: v };
};

/** A string field copied as is under its name on each side (absent stays absent both ways). */
const scalar = (mapi: string, capi: string): PowerVSFieldRow => ({
  mapi: [mapi],
  capi: [capi],
  toCapi: (issues, value, ctx, out) => put(out.infraSpec, capi, readString(issues, value, mapi, ctx.path)),
  toMapi: (issues, spec, ctx, out) => put(out, mapi, readString(issues, spec, capi, ctx.path)),
});

const readProcessorType = (issues: Issues, obj: Record<string, unknown>, path: string) => {
  const v = readString(issues, obj, "processorType", path);
  if (v === undefined || v === "" || POWERVS_PROCESSOR_TYPES.includes(v)) return v;
  invalid(
    issues,
    fieldPath(path, "processorType"),
    v,
    `processorType must be one of ${POWERVS_PROCESSOR_TYPES.join(", ")} or unset`,
  );
  return undefined;
};

/** Kubernetes' IntOrString: an integer or a string ("0.5" processors). */
const readIntOrString = (issues: Issues, obj: Record<string, unknown>, key: string, path: string) => {
  const v = obj[key];
  if (v === undefined || typeof v === "string" || (typeof v === "number" && Number.isInteger(v))) return v;
  invalid(issues, fieldPath(path, key), v, "must be an integer or a string");
  return undefined;
};

const INT32_MAX = 2 ** 31 - 1;
const readInt32 = (issues: Issues, obj: Record<string, unknown>, key: string, path: string) => {
  const v = readInteger(issues, obj, key, path);
  if (v === undefined || (v >= -INT32_MAX - 1 && v <= INT32_MAX)) return v;
  invalid(issues, fieldPath(path, key), v, "must fit in a 32-bit integer");
  return undefined;
};

/** Where the CAPI Machine (or the MachineSet's template) keeps its own spec fields. */
const capiMachineSpecPath = (ctx: ToMapiContext) => (ctx.owner === "Machine" ? "spec" : "spec.template.spec");

export const POWERVS_FIELD_TABLE: readonly PowerVSFieldRow[] = Object.freeze([
  {
    // The workspace. CAPIBM's deprecated serviceInstanceID is an ID reference by another name.
    mapi: ["serviceInstance"],
    capi: ["serviceInstance", "serviceInstanceID"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "serviceInstance", resourceToCapi(issues, value, "serviceInstance", ctx.path)),
    toMapi: (issues, spec, ctx, out) => {
      const p = fieldPath(ctx.path, "serviceInstance");
      const id = readString(issues, spec, "serviceInstanceID", ctx.path);
      const reference = readRecord(issues, spec, "serviceInstance", ctx.path);
      if (id !== undefined && id !== "") {
        // Upstream lets serviceInstanceID win and drops serviceInstance; only the same workspace is accepted.
        if (reference !== undefined && !(Object.keys(reference).length === 1 && reference.id === id))
          invalid(
            issues,
            fieldPath(ctx.path, "serviceInstanceID"),
            id,
            "serviceInstanceID and serviceInstance name different workspaces: keep only serviceInstance",
          );
        else out.serviceInstance = { type: "ID", id };
        return;
      }
      if (reference === undefined) {
        if (spec.serviceInstance === undefined || spec.serviceInstance === null)
          invalid(issues, p, null, "unable to convert service instance, service instance is nil");
        return;
      }
      put(
        out,
        "serviceInstance",
        referenceToMapi(issues, reference, p, "unable to convert service instance to MAPI"),
      );
    },
  },
  {
    // CAPIBM's imageRef names an IBMPowerVSImage object, not an image: upstream turns it into an image name,
    // which converts back as a different field, so it is refused (powervs-unsupported-fields).
    mapi: ["image"],
    capi: ["image", "imageRef"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "image", resourceToCapi(issues, value, "image", ctx.path)),
    toMapi: (issues, spec, ctx, out) => {
      const p = fieldPath(ctx.path, "image");
      const imageRef = spec.imageRef;
      if (imageRef !== undefined && imageRef !== null)
        invalid(issues, fieldPath(ctx.path, "imageRef"), imageRef, UNSUPPORTED_IN_MAPI);
      const image = readRecord(issues, spec, "image", ctx.path);
      if (image === undefined) {
        if (
          (spec.image === undefined || spec.image === null) &&
          (imageRef === undefined || imageRef === null)
        )
          invalid(issues, p, null, "unable to convert image, image and imageref is nil");
        return;
      }
      put(
        out,
        "image",
        referenceToMapi(issues, image, p, "unable to convert image, image id, name and regex all are nil"),
      );
    },
  },
  {
    mapi: ["network"],
    capi: ["network"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "network", resourceToCapi(issues, value, "network", ctx.path)),
    toMapi: (issues, spec, ctx, out) => {
      // CAPIBM's network is not a pointer: an absent one reads as `{}`, as upstream sees it.
      const network = readRecord(issues, spec, "network", ctx.path);
      if (network === undefined && spec.network !== undefined && spec.network !== null) return;
      put(
        out,
        "network",
        referenceToMapi(
          issues,
          network ?? {},
          fieldPath(ctx.path, "network"),
          "unable to convert network to MAPI",
        ),
      );
    },
  },
  scalar("keyPairName", "sshKey"),
  scalar("systemType", "systemType"),
  {
    mapi: ["processorType"],
    capi: ["processorType"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "processorType", readProcessorType(issues, value, ctx.path)),
    toMapi: (issues, spec, ctx, out) => put(out, "processorType", readProcessorType(issues, spec, ctx.path)),
  },
  {
    mapi: ["processors"],
    capi: ["processors"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "processors", readIntOrString(issues, value, "processors", ctx.path)),
    toMapi: (issues, spec, ctx, out) =>
      put(out, "processors", readIntOrString(issues, spec, "processors", ctx.path)),
  },
  {
    mapi: ["memoryGiB"],
    capi: ["memoryGiB"],
    toCapi: (issues, value, ctx, out) =>
      put(out.infraSpec, "memoryGiB", readInt32(issues, value, "memoryGiB", ctx.path)),
    toMapi: (issues, spec, ctx, out) => put(out, "memoryGiB", readInt32(issues, spec, "memoryGiB", ctx.path)),
  },
  {
    // CAPIBM reads its own credentials; the installer's secret is the same account, any other is not.
    mapi: ["credentialsSecret"],
    capi: [],
    toCapi: (issues, value, ctx) => {
      const credentials = readRecord(issues, value, "credentialsSecret", ctx.path);
      if (credentials !== undefined && credentials.name !== POWERVS_PROVIDER_DEFAULTS.credentialsSecretName)
        invalid(
          issues,
          fieldPath(ctx.path, "credentialsSecret"),
          credentials,
          `credentialsSecret must be ${JSON.stringify(POWERVS_PROVIDER_DEFAULTS.credentialsSecretName)} or unset: CAPIBM uses its own credentials, convert this machine by hand`,
        );
    },
    toMapi: (_issues, _spec, _ctx, out) => {
      out.credentialsSecret = { name: POWERVS_PROVIDER_DEFAULTS.credentialsSecretName };
    },
  },
  {
    // ↔ the CAPI Machine's `spec.bootstrap.dataSecretName`.
    mapi: ["userDataSecret"],
    capi: [],
    toCapi: (issues, value, ctx, out) => {
      const secret = readRecord(issues, value, "userDataSecret", ctx.path);
      if (secret === undefined) return;
      const p = fieldPath(ctx.path, "userDataSecret");
      rejectUnknown(issues, secret, new Set(["name"]), p, "unknown secret reference field");
      const name = readString(issues, secret, "name", p);
      if (name) out.dataSecretName = name;
    },
    toMapi: (_issues, _spec, ctx, out) => {
      if (ctx.dataSecretName) out.userDataSecret = { name: ctx.dataSecretName };
    },
  },
  {
    // CAPIBM attaches load balancers to control plane machines only, and not from the machine: upstream
    // refuses them on every Machine.
    mapi: ["loadBalancers"],
    capi: [],
    toCapi: (issues, value, ctx) => {
      const lbs = value.loadBalancers;
      if (lbs !== undefined && lbs !== null && !(Array.isArray(lbs) && lbs.length === 0))
        invalid(issues, fieldPath(ctx.path, "loadBalancers"), lbs, "loadBalancers are not supported");
    },
    toMapi: nothing,
  },
  {
    // PowerVS has no failure domains (upstream clears the CAPI one); one set on the CAPI side would be lost.
    mapi: [],
    capi: [],
    toCapi: nothing,
    toMapi: (issues, _spec, ctx) => {
      if (ctx.failureDomain)
        invalid(
          issues,
          fieldPath(capiMachineSpecPath(ctx), "failureDomain"),
          ctx.failureDomain,
          "PowerVS has no failure domains, so Machine API cannot carry one: remove it",
        );
    },
  },
  {
    // ← the MAPI Machine's `spec.providerID`, so CAPIBM adopts the instance; the way back is the CAPI
    // Machine's providerID (machine.ts).
    mapi: [],
    capi: ["providerID"],
    toCapi: (_issues, _value, ctx, out) => {
      if (ctx.providerID !== undefined && ctx.providerID !== "") out.infraSpec.providerID = ctx.providerID;
    },
    toMapi: (issues, spec, ctx) => {
      if (spec.providerID !== undefined && spec.providerID !== null && typeof spec.providerID !== "string")
        invalid(issues, fieldPath(ctx.path, "providerID"), spec.providerID, "must be a string");
    },
  },
]);
