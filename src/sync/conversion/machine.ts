/**
 * Machine level of SPEC §5.1, both ways: the MachineSpec of a MAPI Machine (or of a MachineSet template)
 * to a CAPI MachineSpec plus the InfraMachine spec, and back. The platform module converts the
 * providerSpec; this file owns clusterName, bootstrap, infrastructureRef, providerID, failureDomain,
 * deletion timeouts, taints, lifecycle hooks and labels/annotations. Finalizers, ownerReferences and the
 * pause annotation are never produced here: those belong to the controllers.
 */
import { apiVersionOf, CAPI_API_VERSION, INFRA_GROUP, LABELS, MAPI_API_VERSION } from "../../kube/kinds.js";
import { annotationsOf, getPath, isRecord, type KubeObject, labelsOf, nameOf } from "../../kube/object.js";
import { platformFor } from "../../platforms/registry.js";
import {
  annotationsToCapi,
  annotationsToMapi,
  isCapiControlPlane,
  isMapiControlPlane,
  labelsToCapi,
  labelsToMapi,
  putMap,
  readStringMap,
} from "./metadata.js";
import type { InfrastructureInfo, PlatformConverter } from "./platform.js";
import { type ConversionResult, fieldPath, finish, type Issues, invalid, newIssues } from "./types.js";

/** CAPI `spec.deletion.nodeDeletionTimeoutSeconds` written for every machine: MAPI's fixed node deletion wait. */
const NODE_DELETION_TIMEOUT_SECONDS = 10;

const MAPI_MACHINE_SPEC_FIELDS: ReadonlySet<string> = new Set([
  "metadata",
  "providerSpec",
  "providerID",
  "taints",
  "lifecycleHooks",
  // Authority is the sync's and the handover's business (SPEC §4.4); it has no CAPI counterpart.
  "authoritativeAPI",
]);
const CAPI_MACHINE_SPEC_FIELDS: ReadonlySet<string> = new Set([
  "clusterName",
  "bootstrap",
  "infrastructureRef",
  "providerID",
  "failureDomain",
  "deletion",
  "version",
  "readinessGates",
  "minReadySeconds",
  "taints",
]);

/**
 * The platform modules a conversion may use (default: the registry's `PLATFORMS`, the platforms the product
 * supports end to end). Tests of a platform not yet in the registry pass it here.
 */
export interface PlatformChoice {
  platforms?: readonly PlatformConverter[];
}
export interface ConversionOptions extends PlatformChoice {
  capiNamespace: string;
}
export interface ReverseConversionOptions extends PlatformChoice {
  mapiNamespace: string;
  /** The platform's InfraCluster (AWSCluster, OpenStackCluster): needed only for control plane machines. */
  infraCluster?: KubeObject;
}

/** A MAPI MachineSpec with the labels/annotations of the object (or template) that holds it. */
export interface MapiMachineParts {
  spec: unknown;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** `spec` for a Machine, `spec.template.spec` for a MachineSet. */
  specPath: string;
  /** `metadata` for a Machine, `spec.template.metadata` for a MachineSet. */
  metaPath: string;
  owner: "Machine" | "MachineSet";
}

export interface CapiMachineParts {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** CAPI MachineSpec without `infrastructureRef.name`, which the caller names (Machine vs template). */
  spec: Record<string, unknown>;
  infraSpec: Record<string, unknown>;
}

/** SPEC §5.1 MAPI → CAPI for one MachineSpec. */
export const mapiMachinePartsToCapi = (
  parts: MapiMachineParts,
  platform: PlatformConverter,
  infrastructure: InfrastructureInfo,
  issues: Issues,
): CapiMachineParts => {
  const path = parts.specPath;
  const spec = isRecord(parts.spec) ? parts.spec : {};
  if (!isRecord(parts.spec)) invalid(issues, path, parts.spec ?? null, "spec must be an object");
  for (const [key, value] of Object.entries(spec))
    if (!MAPI_MACHINE_SPEC_FIELDS.has(key) && value !== undefined)
      invalid(issues, fieldPath(path, key), value, "field has no CAPI equivalent and cannot be converted");

  const taints = spec.taints;
  if (Array.isArray(taints) ? taints.length > 0 : taints !== undefined && taints !== null)
    invalid(issues, fieldPath(path, "taints"), taints, "taints are not currently supported");

  const specMeta = isRecord(spec.metadata) ? spec.metadata : {};
  const metaPath = fieldPath(path, "metadata");
  for (const key of ["name", "generateName", "namespace"])
    if (specMeta[key] !== undefined && specMeta[key] !== "")
      invalid(issues, fieldPath(metaPath, key), specMeta[key], `metadata.${key} is not supported in CAPI`);
  if (Array.isArray(specMeta.ownerReferences) && specMeta.ownerReferences.length > 0)
    invalid(
      issues,
      fieldPath(metaPath, "ownerReferences"),
      specMeta.ownerReferences,
      "ownerReferences are not supported in CAPI",
    );
  const specLabels = readStringMap(issues, specMeta.labels, fieldPath(metaPath, "labels"));
  const specAnnotations = readStringMap(issues, specMeta.annotations, fieldPath(metaPath, "annotations"));

  const controlPlane = isMapiControlPlane(parts.labels);
  const providerID = typeof spec.providerID === "string" ? spec.providerID : undefined;
  if (spec.providerID !== undefined && providerID === undefined)
    invalid(issues, fieldPath(path, "providerID"), spec.providerID, "must be a string");
  const providerSpec = isRecord(spec.providerSpec) ? spec.providerSpec : {};
  const provider = platform.providerSpecToCapi(
    providerSpec.value,
    {
      path: fieldPath(path, "providerSpec", "value"),
      infrastructure,
      owner: parts.owner,
      controlPlane,
      ...(parts.owner === "Machine" && providerID !== undefined ? { providerID } : {}),
    },
    issues,
  );

  const capiSpec: Record<string, unknown> = {
    clusterName: infrastructure.clusterName,
    bootstrap: provider.dataSecretName === undefined ? {} : { dataSecretName: provider.dataSecretName },
    // Named by the caller (InfraMachine vs hashed template); set here only to keep the usual field order.
    infrastructureRef: { apiGroup: INFRA_GROUP, kind: "", name: "" },
  };
  if (providerID !== undefined && providerID !== "") capiSpec.providerID = providerID;
  if (provider.failureDomain !== undefined) capiSpec.failureDomain = provider.failureDomain;
  capiSpec.deletion = { nodeDeletionTimeoutSeconds: NODE_DELETION_TIMEOUT_SECONDS };

  return {
    labels: labelsToCapi(
      issues,
      parts.labels,
      specLabels,
      infrastructure.clusterName,
      fieldPath(parts.metaPath, "labels"),
    ),
    annotations: annotationsToCapi(
      issues,
      parts.annotations,
      specAnnotations,
      spec.lifecycleHooks,
      fieldPath(path, "lifecycleHooks"),
    ),
    spec: capiSpec,
    infraSpec: provider.infraSpec,
  };
};

export interface CapiToMapiParts {
  spec: unknown;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  specPath: string;
  metaPath: string;
  owner: "Machine" | "MachineSet";
  /** The InfraMachine spec (or template `spec.template.spec`) and the path it is reported under. */
  infraSpec: unknown;
  infraSpecPath: string;
  /** The kind and name `spec.infrastructureRef` must name. */
  expectedInfraRef: { kind: string; name: string };
  infraCluster?: KubeObject;
}

export interface MapiMachineSpecParts {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: Record<string, unknown>;
  providerSpecValue: Record<string, unknown>;
  failureDomain?: string;
}

/** SPEC §5.1 CAPI → MAPI for one MachineSpec (with its InfraMachine spec). */
export const capiMachinePartsToMapi = (
  parts: CapiToMapiParts,
  platform: PlatformConverter,
  infrastructure: InfrastructureInfo,
  issues: Issues,
): MapiMachineSpecParts => {
  const path = parts.specPath;
  const spec = isRecord(parts.spec) ? parts.spec : {};
  if (!isRecord(parts.spec)) invalid(issues, path, parts.spec ?? null, "spec must be an object");
  for (const [key, value] of Object.entries(spec))
    if (!CAPI_MACHINE_SPEC_FIELDS.has(key) && value !== undefined)
      invalid(
        issues,
        fieldPath(path, key),
        value,
        "field has no Machine API equivalent and cannot be converted",
      );

  if (spec.clusterName !== undefined && spec.clusterName !== infrastructure.clusterName)
    invalid(
      issues,
      fieldPath(path, "clusterName"),
      spec.clusterName,
      `clusterName must be the infrastructure name ${JSON.stringify(infrastructure.clusterName)}`,
    );
  if (spec.version !== undefined)
    invalid(issues, fieldPath(path, "version"), spec.version, "version is not supported by Machine API");
  if (Array.isArray(spec.readinessGates) ? spec.readinessGates.length > 0 : spec.readinessGates !== undefined)
    invalid(
      issues,
      fieldPath(path, "readinessGates"),
      spec.readinessGates,
      "readinessGates are not supported by Machine API",
    );
  if (Array.isArray(spec.taints) ? spec.taints.length > 0 : spec.taints !== undefined)
    invalid(issues, fieldPath(path, "taints"), spec.taints, "taints are not currently supported");

  const deletion = isRecord(spec.deletion) ? spec.deletion : {};
  const deletionPath = fieldPath(path, "deletion");
  for (const [key, value] of Object.entries(deletion)) {
    if (value === undefined) continue;
    if (key === "nodeDrainTimeoutSeconds" || key === "nodeVolumeDetachTimeoutSeconds")
      invalid(issues, fieldPath(deletionPath, key), value, `${key} is not supported by Machine API`);
    else if (key === "nodeDeletionTimeoutSeconds") {
      if (value !== NODE_DELETION_TIMEOUT_SECONDS)
        invalid(
          issues,
          fieldPath(deletionPath, key),
          value,
          `Machine API always waits ${NODE_DELETION_TIMEOUT_SECONDS}s for node deletion; only ${NODE_DELETION_TIMEOUT_SECONDS} can be converted`,
        );
    } else if (!(parts.owner === "MachineSet" && key === "order"))
      invalid(issues, fieldPath(deletionPath, key), value, "deletion field has no Machine API equivalent");
  }

  const bootstrap = isRecord(spec.bootstrap) ? spec.bootstrap : {};
  if (bootstrap.configRef !== undefined)
    invalid(
      issues,
      fieldPath(path, "bootstrap", "configRef"),
      bootstrap.configRef,
      "a bootstrap configRef is not supported by Machine API; use bootstrap.dataSecretName",
    );
  const dataSecretName = typeof bootstrap.dataSecretName === "string" ? bootstrap.dataSecretName : undefined;

  const ref = isRecord(spec.infrastructureRef) ? spec.infrastructureRef : {};
  const refPath = fieldPath(path, "infrastructureRef");
  if (ref.apiGroup !== INFRA_GROUP)
    invalid(issues, fieldPath(refPath, "apiGroup"), ref.apiGroup ?? null, `apiGroup must be ${INFRA_GROUP}`);
  if (ref.kind !== parts.expectedInfraRef.kind)
    invalid(
      issues,
      fieldPath(refPath, "kind"),
      ref.kind ?? null,
      `kind must be ${parts.expectedInfraRef.kind}`,
    );
  if (ref.name !== parts.expectedInfraRef.name)
    invalid(
      issues,
      fieldPath(refPath, "name"),
      ref.name ?? null,
      `must name the ${parts.expectedInfraRef.kind} given for conversion (${JSON.stringify(parts.expectedInfraRef.name)})`,
    );

  const failureDomain = typeof spec.failureDomain === "string" ? spec.failureDomain : undefined;
  const controlPlane = isCapiControlPlane(parts.labels);
  // Without the InfraMachine (already reported by the caller) its fields would only add noise.
  const providerSpecValue: Record<string, unknown> =
    parts.infraSpec === undefined
      ? {}
      : platform.infraSpecToProviderSpec(
          parts.infraSpec,
          {
            path: parts.infraSpecPath,
            infrastructure,
            owner: parts.owner,
            controlPlane,
            ...(failureDomain === undefined ? {} : { failureDomain }),
            ...(dataSecretName === undefined ? {} : { dataSecretName }),
            ...(parts.infraCluster === undefined ? {} : { infraCluster: parts.infraCluster }),
          },
          issues,
        );

  const { annotations, lifecycleHooks } = annotationsToMapi(parts.annotations);
  const mapiSpec: Record<string, unknown> = {};
  if (Object.keys(lifecycleHooks).length > 0) mapiSpec.lifecycleHooks = lifecycleHooks;
  // minReadySeconds on a CAPI Machine is copied there from its MachineSet's template; MAPI keeps it on the
  // MachineSet only, so a Machine's copy is left behind on purpose.
  if (typeof spec.providerID === "string" && spec.providerID !== "") mapiSpec.providerID = spec.providerID;
  mapiSpec.providerSpec = { value: providerSpecValue };
  return {
    labels: labelsToMapi(issues, parts.labels, fieldPath(parts.metaPath, "labels")),
    annotations,
    spec: mapiSpec,
    providerSpecValue,
    ...(failureDomain === undefined ? {} : { failureDomain }),
  };
};

/** The source's kind, apiVersion and name: the twin gets the same name, so there must be one. */
export const checkKind = (issues: Issues, object: KubeObject, apiVersion: string, kind: string): void => {
  if (object.kind !== kind) invalid(issues, "kind", object.kind ?? null, `must be ${kind}`);
  if (nameOf(object) === "")
    invalid(
      issues,
      "metadata.name",
      object.metadata?.name ?? null,
      "a name is required: the twin has the same name",
    );
  if (object.apiVersion !== apiVersion)
    invalid(issues, "apiVersion", object.apiVersion ?? null, `must be ${apiVersion}`);
};

/** Infra object metadata: same name, CAPI namespace, and the cluster-name label CAPA expects. */
export const infraMetadata = (
  name: string,
  namespace: string,
  clusterName: string,
  labels: Record<string, string> = {},
) => ({
  name,
  namespace,
  labels: { ...labels, [LABELS.capiClusterName]: clusterName },
});

export const mapiMachineToCapi = (
  mapi: KubeObject,
  infra: KubeObject | undefined,
  opts: ConversionOptions,
): ConversionResult<{ machine: KubeObject; infraMachine: KubeObject }> => {
  const lookup = platformFor(infra, opts.platforms);
  if (!lookup.ok) return lookup;
  const { platform, infrastructure } = lookup;
  const issues = newIssues();
  checkKind(issues, mapi, MAPI_API_VERSION, "Machine");
  const name = nameOf(mapi);
  const parts = mapiMachinePartsToCapi(
    {
      spec: mapi.spec,
      labels: labelsOf(mapi),
      annotations: annotationsOf(mapi),
      specPath: "spec",
      metaPath: "metadata",
      owner: "Machine",
    },
    platform,
    infrastructure,
    issues,
  );
  const metadata: Record<string, unknown> = { name, namespace: opts.capiNamespace };
  putMap(metadata, "labels", parts.labels);
  putMap(metadata, "annotations", parts.annotations);
  const machine: KubeObject = {
    apiVersion: CAPI_API_VERSION,
    kind: "Machine",
    metadata,
    spec: {
      ...parts.spec,
      infrastructureRef: { apiGroup: INFRA_GROUP, kind: platform.infraMachine.kind, name },
    },
  };
  const infraMachine: KubeObject = {
    apiVersion: apiVersionOf(platform.infraMachine),
    kind: platform.infraMachine.kind,
    metadata: infraMetadata(name, opts.capiNamespace, infrastructure.clusterName),
    spec: parts.infraSpec,
  };
  return finish(issues, { machine, infraMachine });
};

export const capiMachineToMapi = (
  capi: KubeObject,
  infraMachine: KubeObject | undefined,
  infra: KubeObject | undefined,
  opts: ReverseConversionOptions,
): ConversionResult<{ machine: KubeObject }> => {
  const lookup = platformFor(infra, opts.platforms);
  if (!lookup.ok) return lookup;
  const { platform, infrastructure } = lookup;
  const issues = newIssues();
  checkKind(issues, capi, CAPI_API_VERSION, "Machine");
  const infraKind = platform.infraMachine.kind;
  if (infraMachine === undefined)
    invalid(
      issues,
      "spec.infrastructureRef",
      capi.spec?.infrastructureRef ?? null,
      `the ${infraKind} is required to convert`,
    );
  else if (infraMachine.kind !== infraKind)
    invalid(issues, `${infraKind}.kind`, infraMachine.kind ?? null, `must be ${infraKind}`);
  const parts = capiMachinePartsToMapi(
    {
      spec: capi.spec,
      labels: labelsOf(capi),
      annotations: annotationsOf(capi),
      specPath: "spec",
      metaPath: "metadata",
      owner: "Machine",
      infraSpec: infraMachine === undefined ? undefined : (infraMachine.spec ?? {}),
      infraSpecPath: `${infraKind}.spec`,
      expectedInfraRef: {
        kind: infraKind,
        name: infraMachine === undefined ? nameOf(capi) : nameOf(infraMachine),
      },
      ...(opts.infraCluster === undefined ? {} : { infraCluster: opts.infraCluster }),
    },
    platform,
    infrastructure,
    issues,
  );
  // The instance is what must never be lost: if CAPA recorded it on the AWSMachine before the CAPI
  // Machine copied it, the MAPI Machine still gets it.
  const infraProviderID = getPath(infraMachine, ["spec", "providerID"]);
  if (typeof infraProviderID === "string" && infraProviderID !== "") {
    if (parts.spec.providerID === undefined) parts.spec.providerID = infraProviderID;
    else if (parts.spec.providerID !== infraProviderID)
      invalid(
        issues,
        `${infraKind}.spec.providerID`,
        infraProviderID,
        `differs from the Machine's spec.providerID ${JSON.stringify(parts.spec.providerID)}; resolve which instance this is by hand`,
      );
  }
  const labels = {
    ...parts.labels,
    ...platform.instanceLabels(parts.providerSpecValue, infrastructure, parts.failureDomain),
  };
  const metadata: Record<string, unknown> = { name: nameOf(capi), namespace: opts.mapiNamespace };
  putMap(metadata, "labels", labels);
  putMap(metadata, "annotations", parts.annotations);
  const machine: KubeObject = { apiVersion: MAPI_API_VERSION, kind: "Machine", metadata, spec: parts.spec };
  return finish(issues, { machine });
};
