/**
 * What every platform module shares (SPEC §5.3): the row of a field table, and the frame that runs a table
 * each way — check the envelope, refuse every field no row knows (a field we cannot carry could be the one
 * that decides which instance the cloud runs), then let each row convert its field — and the instance labels
 * MAO puts on every Machine. A platform folder (src/platforms/<name>/) supplies its table, its kinds and its
 * status mirroring; the frame is written once here.
 */
import { getPath, isRecord } from "../kube/object.js";
import { rejectUnknown } from "../sync/conversion/fields.js";
import type {
  InfrastructureInfo,
  PlatformConverter,
  ToCapiContext,
  ToCapiProviderResult,
  ToMapiContext,
} from "../sync/conversion/platform.js";
import { fieldPath, type Issues, invalid } from "../sync/conversion/types.js";

/** One row of a platform's field table: the fields it owns on each side and its two directions. */
export interface FieldRow {
  /** The providerSpec fields the row reads and writes (top-level keys). */
  readonly mapi: readonly string[];
  /** The InfraMachine spec fields the row reads and writes (top-level keys). */
  readonly capi: readonly string[];
  /**
   * InfraMachine objects the row reads only some keys of, with those keys: any other key is a field Machine
   * API cannot represent (SPEC §2.3).
   */
  readonly capiKnownKeys?: Readonly<Record<string, readonly string[]>>;
  /** providerSpec `value` → `out.infraSpec` (and the CAPI Machine's failureDomain, dataSecretName). */
  readonly toCapi: (
    issues: Issues,
    value: Record<string, unknown>,
    ctx: ToCapiContext,
    out: ToCapiProviderResult,
  ) => void;
  /** InfraMachine `spec` → providerSpec `out`. */
  readonly toMapi: (
    issues: Issues,
    spec: Record<string, unknown>,
    ctx: ToMapiContext,
    out: Record<string, unknown>,
  ) => void;
}

/** Go's zero values serialise as absent, `""`, `[]` or `{}` (`{creationTimestamp: null}` too): only those are unset. */
export const isEmptyValue = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  v === "" ||
  (Array.isArray(v) && v.length === 0) ||
  (isRecord(v) && Object.values(v).every(isEmptyValue));

export interface FrameOptions {
  /** The provider config's envelope, e.g. `machine.openshift.io/v1beta1` `AWSMachineProviderConfig`. */
  providerConfig: { apiVersion: string; kind: string };
  /** As the platform is named in messages ("AWS", "OpenStack"). */
  platform: string;
  /** The InfraMachine kind, for messages. */
  infraMachineKind: string;
  table: readonly FieldRow[];
  /** The admission rule that refuses what Machine API cannot represent, named in the hint. */
  unsupportedRule: string;
  /** A check of the whole conversion to MAPI after the rows (AWS: the AWSCluster's identity). */
  afterToMapi?: (issues: Issues, ctx: ToMapiContext) => void;
}

/** providerSpec fields every provider config carries besides the table's. */
const ENVELOPE_FIELDS = ["apiVersion", "kind", "metadata"];

/** The two directions of a field table, as a platform module hands them to the converters. */
export const fieldTableFrame = (
  o: FrameOptions,
): Pick<PlatformConverter, "providerSpecToCapi" | "infraSpecToProviderSpec"> => {
  const providerSpecFields: ReadonlySet<string> = new Set([
    ...ENVELOPE_FIELDS,
    ...o.table.flatMap((row) => row.mapi),
  ]);
  const infraMachineFields: ReadonlySet<string> = new Set(o.table.flatMap((row) => row.capi));
  const knownKeys = o.table.flatMap((row) => Object.entries(row.capiKnownKeys ?? {}));
  const hint = `not supported by Machine API (rule ${o.unsupportedRule})`;
  const { kind } = o.providerConfig;

  const providerSpecToCapi = (value: unknown, ctx: ToCapiContext, issues: Issues): ToCapiProviderResult => {
    const path = ctx.path;
    if (!isRecord(value)) {
      invalid(issues, path, value ?? null, `must be an ${kind}`);
      return { infraSpec: {} };
    }
    if (value.kind !== undefined && value.kind !== kind)
      invalid(issues, fieldPath(path, "kind"), value.kind, `kind must be ${kind} on ${o.platform}`);
    rejectUnknown(
      issues,
      value,
      providerSpecFields,
      path,
      "field has no CAPI equivalent and cannot be converted",
    );
    // `metadata` exists only because the providerSpec is a raw Kubernetes object; upstream refuses any content
    // in it (nothing would carry it to CAPI).
    if (!isEmptyValue(value.metadata))
      invalid(issues, fieldPath(path, "metadata"), value.metadata, "metadata is not supported");
    const result: ToCapiProviderResult = { infraSpec: {} };
    for (const row of o.table) row.toCapi(issues, value, ctx, result);
    return result;
  };

  const infraSpecToProviderSpec = (
    infraSpec: unknown,
    ctx: ToMapiContext,
    issues: Issues,
  ): Record<string, unknown> => {
    const path = ctx.path;
    const value: Record<string, unknown> = { apiVersion: o.providerConfig.apiVersion, kind };
    if (!isRecord(infraSpec)) {
      invalid(issues, path, infraSpec ?? null, `must be an ${o.infraMachineKind} spec`);
      return value;
    }
    rejectUnknown(issues, infraSpec, infraMachineFields, path, hint);
    for (const [field, known] of knownKeys) {
      const obj = infraSpec[field];
      if (!isRecord(obj)) continue;
      for (const [key, v] of Object.entries(obj))
        if (!known.includes(key) && v !== undefined) invalid(issues, fieldPath(path, field, key), v, hint);
    }
    for (const row of o.table) row.toMapi(issues, infraSpec, ctx, value);
    o.afterToMapi?.(issues, ctx);
    return value;
  };

  return { providerSpecToCapi, infraSpecToProviderSpec };
};

/**
 * The labels MAO puts on a Machine: instance-type from the providerSpec field `typeField` (AWS
 * `instanceType`, OpenStack `flavor`), the Infrastructure's region where the platform has one, the zone.
 */
export const instanceLabelsFrom =
  (typeField: string): PlatformConverter["instanceLabels"] =>
  (providerSpecValue: Record<string, unknown>, infrastructure: InfrastructureInfo, failureDomain) => {
    const labels: Record<string, string> = {};
    const type = getPath(providerSpecValue, [typeField]);
    if (typeof type === "string" && type !== "") labels["machine.openshift.io/instance-type"] = type;
    if (infrastructure.region !== "") labels["machine.openshift.io/region"] = infrastructure.region;
    if (failureDomain !== undefined && failureDomain !== "")
      labels["machine.openshift.io/zone"] = failureDomain;
    return labels;
  };
