/**
 * MachineSet level of SPEC §5.2, both ways: replicas, selector, delete policy, minReadySeconds and the
 * template, whose MachineSpec converts exactly like a Machine's (machine.ts). The InfraMachine spec goes
 * into an AWSMachineTemplate named by its content hash (template-name.ts) and labelled with the template
 * label, so the sync can find and garbage-collect outdated templates it made.
 */
import { apiVersionOf, CAPI_API_VERSION, INFRA_GROUP, LABELS, MAPI_API_VERSION } from "../../kube/kinds.js";
import { annotationsOf, getPath, isRecord, type KubeObject, labelsOf, nameOf } from "../../kube/object.js";
import { platformFor } from "../../platforms/registry.js";
import {
  type ConversionOptions,
  capiMachinePartsToMapi,
  checkKind,
  infraMetadata,
  mapiMachinePartsToCapi,
  type ReverseConversionOptions,
} from "./machine.js";
import {
  annotationsToCapi,
  annotationsToMapi,
  labelsToCapi,
  labelsToMapi,
  putMap,
  readStringMap,
} from "./metadata.js";
import { templateName } from "./template-name.js";
import { type ConversionResult, fieldPath, finish, type Issues, invalid, newIssues, warn } from "./types.js";

/** `spec.deletion.order` when MAPI's deletePolicy is unset: both APIs default to Random. */
const DEFAULT_DELETE_POLICY = "Random";
const DELETE_POLICIES = ["Random", "Newest", "Oldest"];

const MAPI_MACHINESET_SPEC_FIELDS: ReadonlySet<string> = new Set([
  "replicas",
  "selector",
  "deletePolicy",
  "minReadySeconds",
  "template",
  "authoritativeAPI",
]);
const CAPI_MACHINESET_SPEC_FIELDS: ReadonlySet<string> = new Set([
  "clusterName",
  "replicas",
  "selector",
  "deletion",
  "template",
]);

const readSelector = (
  issues: Issues,
  selector: unknown,
  path: string,
  convertLabels: (labels: Record<string, string>) => Record<string, string>,
): Record<string, unknown> => {
  if (selector !== undefined && !isRecord(selector))
    invalid(issues, path, selector, "must be a label selector");
  const source = isRecord(selector) ? selector : {};
  for (const [key, value] of Object.entries(source))
    if (key !== "matchLabels" && key !== "matchExpressions")
      invalid(issues, fieldPath(path, key), value, "unknown label selector field");
  const out: Record<string, unknown> = {};
  const matchLabels = convertLabels(
    readStringMap(issues, source.matchLabels, fieldPath(path, "matchLabels")),
  );
  if (Object.keys(matchLabels).length > 0) out.matchLabels = matchLabels;
  if (Array.isArray(source.matchExpressions) && source.matchExpressions.length > 0)
    out.matchExpressions = structuredClone(source.matchExpressions);
  return out;
};

const readReplicas = (issues: Issues, spec: Record<string, unknown>, path: string) => {
  const replicas = spec.replicas;
  if (replicas === undefined) return undefined;
  if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0) {
    invalid(issues, fieldPath(path, "replicas"), replicas, "must be a non-negative integer");
    return undefined;
  }
  return replicas;
};

export const mapiMachineSetToCapi = (
  mapi: KubeObject,
  infra: KubeObject | undefined,
  opts: ConversionOptions,
): ConversionResult<{ machineSet: KubeObject; infraTemplate: KubeObject }> => {
  const lookup = platformFor(infra, opts.platforms);
  if (!lookup.ok) return lookup;
  const { platform, infrastructure } = lookup;
  const issues = newIssues();
  checkKind(issues, mapi, MAPI_API_VERSION, "MachineSet");
  const name = nameOf(mapi);
  const spec = isRecord(mapi.spec) ? mapi.spec : {};
  for (const [key, value] of Object.entries(spec))
    if (!MAPI_MACHINESET_SPEC_FIELDS.has(key) && value !== undefined)
      invalid(issues, fieldPath("spec", key), value, "field has no CAPI equivalent and cannot be converted");

  const template = isRecord(spec.template) ? spec.template : {};
  const templateMeta = isRecord(template.metadata) ? template.metadata : {};
  const templateMetaPath = "spec.template.metadata";
  const parts = mapiMachinePartsToCapi(
    {
      spec: template.spec,
      labels: readStringMap(issues, templateMeta.labels, fieldPath(templateMetaPath, "labels")),
      annotations: readStringMap(
        issues,
        templateMeta.annotations,
        fieldPath(templateMetaPath, "annotations"),
      ),
      specPath: "spec.template.spec",
      metaPath: templateMetaPath,
      owner: "MachineSet",
    },
    platform,
    infrastructure,
    issues,
  );
  const infraTemplateName = templateName(name, parts.infraSpec);

  const deletePolicy = spec.deletePolicy ?? "";
  if (typeof deletePolicy !== "string" || (deletePolicy !== "" && !DELETE_POLICIES.includes(deletePolicy)))
    invalid(issues, "spec.deletePolicy", deletePolicy, "deletePolicy must be Random, Newest or Oldest");
  const minReadySeconds = spec.minReadySeconds;
  if (
    minReadySeconds !== undefined &&
    (typeof minReadySeconds !== "number" || !Number.isInteger(minReadySeconds))
  )
    invalid(issues, "spec.minReadySeconds", minReadySeconds, "must be an integer");

  const templateMetadata: Record<string, unknown> = {};
  putMap(templateMetadata, "labels", parts.labels);
  putMap(templateMetadata, "annotations", parts.annotations);
  const capiTemplateSpec: Record<string, unknown> = {
    ...parts.spec,
    infrastructureRef: {
      apiGroup: INFRA_GROUP,
      kind: platform.infraMachineTemplate.kind,
      name: infraTemplateName,
    },
  };
  if (typeof minReadySeconds === "number") capiTemplateSpec.minReadySeconds = minReadySeconds;

  const capiSpec: Record<string, unknown> = { clusterName: infrastructure.clusterName };
  const replicas = readReplicas(issues, spec, "spec");
  if (replicas !== undefined) capiSpec.replicas = replicas;
  capiSpec.deletion = {
    order: typeof deletePolicy === "string" && deletePolicy !== "" ? deletePolicy : DEFAULT_DELETE_POLICY,
  };
  capiSpec.selector = readSelector(issues, spec.selector, "spec.selector", (labels) =>
    labelsToCapi(issues, labels, {}, infrastructure.clusterName, "spec.selector.matchLabels"),
  );
  capiSpec.template = { metadata: templateMetadata, spec: capiTemplateSpec };

  const metadata: Record<string, unknown> = { name, namespace: opts.capiNamespace };
  putMap(
    metadata,
    "labels",
    labelsToCapi(issues, labelsOf(mapi), {}, infrastructure.clusterName, "metadata.labels"),
  );
  putMap(
    metadata,
    "annotations",
    annotationsToCapi(issues, annotationsOf(mapi), {}, undefined, "metadata.annotations"),
  );
  const machineSet: KubeObject = {
    apiVersion: CAPI_API_VERSION,
    kind: "MachineSet",
    metadata,
    spec: capiSpec,
  };
  const infraTemplate: KubeObject = {
    apiVersion: apiVersionOf(platform.infraMachineTemplate),
    kind: platform.infraMachineTemplate.kind,
    metadata: infraMetadata(infraTemplateName, opts.capiNamespace, infrastructure.clusterName, {
      [LABELS.templateMachineSet]: name,
    }),
    spec: { template: { spec: parts.infraSpec } },
  };
  return finish(issues, { machineSet, infraTemplate });
};

export const capiMachineSetToMapi = (
  capi: KubeObject,
  infraTemplate: KubeObject | undefined,
  infra: KubeObject | undefined,
  opts: ReverseConversionOptions,
): ConversionResult<{ machineSet: KubeObject }> => {
  const lookup = platformFor(infra, opts.platforms);
  if (!lookup.ok) return lookup;
  const { platform, infrastructure } = lookup;
  const issues = newIssues();
  checkKind(issues, capi, CAPI_API_VERSION, "MachineSet");
  const templateKind = platform.infraMachineTemplate.kind;
  const spec = isRecord(capi.spec) ? capi.spec : {};
  for (const [key, value] of Object.entries(spec))
    if (!CAPI_MACHINESET_SPEC_FIELDS.has(key) && value !== undefined)
      invalid(
        issues,
        fieldPath("spec", key),
        value,
        "field has no Machine API equivalent and cannot be converted",
      );
  if (spec.clusterName !== undefined && spec.clusterName !== infrastructure.clusterName)
    invalid(
      issues,
      "spec.clusterName",
      spec.clusterName,
      `clusterName must be the infrastructure name ${JSON.stringify(infrastructure.clusterName)}`,
    );

  const template = isRecord(spec.template) ? spec.template : {};
  const templateMeta = isRecord(template.metadata) ? template.metadata : {};
  const templateMetaPath = "spec.template.metadata";
  const templateSpec = isRecord(template.spec) ? template.spec : {};
  if (infraTemplate === undefined)
    invalid(
      issues,
      "spec.template.spec.infrastructureRef",
      templateSpec.infrastructureRef ?? null,
      `the ${templateKind} is required to convert`,
    );
  else if (infraTemplate.kind !== templateKind)
    invalid(issues, `${templateKind}.kind`, infraTemplate.kind ?? null, `must be ${templateKind}`);
  const infraSpec =
    infraTemplate === undefined
      ? undefined
      : isRecord(infraTemplate.spec) && isRecord(infraTemplate.spec.template)
        ? (infraTemplate.spec.template.spec ?? {})
        : {};

  const { minReadySeconds, ...machineSpec } = templateSpec;
  const parts = capiMachinePartsToMapi(
    {
      spec: machineSpec,
      labels: readStringMap(issues, templateMeta.labels, fieldPath(templateMetaPath, "labels")),
      annotations: readStringMap(
        issues,
        templateMeta.annotations,
        fieldPath(templateMetaPath, "annotations"),
      ),
      specPath: "spec.template.spec",
      metaPath: templateMetaPath,
      owner: "MachineSet",
      infraSpec,
      infraSpecPath: `${templateKind}.spec.template.spec`,
      expectedInfraRef: {
        kind: templateKind,
        // A missing template is reported once above; do not report the reference as well.
        name:
          infraTemplate === undefined
            ? String(getPath(templateSpec, ["infrastructureRef", "name"]) ?? "")
            : nameOf(infraTemplate),
      },
      ...(opts.infraCluster === undefined ? {} : { infraCluster: opts.infraCluster }),
    },
    platform,
    infrastructure,
    issues,
  );

  const deletion = isRecord(spec.deletion) ? spec.deletion : {};
  for (const [key, value] of Object.entries(deletion))
    if (key !== "order" && value !== undefined)
      invalid(issues, fieldPath("spec.deletion", key), value, "deletion field has no Machine API equivalent");
  const order = deletion.order ?? DEFAULT_DELETE_POLICY;
  if (typeof order !== "string" || !DELETE_POLICIES.includes(order))
    invalid(issues, "spec.deletion.order", order, "order must be Random, Newest or Oldest");

  const mapiSpec: Record<string, unknown> = {};
  const replicas = readReplicas(issues, spec, "spec");
  if (replicas !== undefined) mapiSpec.replicas = replicas;
  mapiSpec.selector = readSelector(issues, spec.selector, "spec.selector", (labels) =>
    labelsToMapi(issues, labels, "spec.selector.matchLabels"),
  );
  mapiSpec.deletePolicy = typeof order === "string" ? order : DEFAULT_DELETE_POLICY;
  if (minReadySeconds !== undefined) {
    if (typeof minReadySeconds === "number" && Number.isInteger(minReadySeconds))
      mapiSpec.minReadySeconds = minReadySeconds;
    else invalid(issues, "spec.template.spec.minReadySeconds", minReadySeconds, "must be an integer");
  }
  const templateMetadata: Record<string, unknown> = {};
  putMap(templateMetadata, "labels", parts.labels);
  putMap(templateMetadata, "annotations", parts.annotations);
  mapiSpec.template = { metadata: templateMetadata, spec: parts.spec };

  const setAnnotations = annotationsToMapi(annotationsOf(capi));
  if (Object.keys(setAnnotations.lifecycleHooks).length > 0)
    warn(
      issues,
      "metadata.annotations",
      "lifecycle hook annotations on a MachineSet itself have no Machine API equivalent",
    );
  const metadata: Record<string, unknown> = { name: nameOf(capi), namespace: opts.mapiNamespace };
  putMap(metadata, "labels", labelsToMapi(issues, labelsOf(capi), "metadata.labels"));
  putMap(metadata, "annotations", setAnnotations.annotations);
  const machineSet: KubeObject = {
    apiVersion: MAPI_API_VERSION,
    kind: "MachineSet",
    metadata,
    spec: mapiSpec,
  };
  return finish(issues, { machineSet });
};
