/**
 * The pure core of the `convert` CLI: given parsed YAML documents and the Infrastructure object, convert
 * every MAPI (or CAPI) Machine and MachineSet in them and say, per object, what failed or was lossy. The
 * shell (cli.ts) reads files, parses YAML and prints; this file does no I/O, so its table tests need no
 * files.
 */
import { apiVersionOf, CAPI_API_VERSION, MAPI_API_VERSION, type ResourceType } from "../../kube/kinds.js";
import { getPath, isRecord, type KubeObject, nameOf, namespaceOf } from "../../kube/object.js";
import { appendAll } from "../../lists.js";
import { platformFor } from "../../platforms/registry.js";
import { capiMachineToMapi, mapiMachineToCapi } from "./machine.js";
import { capiMachineSetToMapi, mapiMachineSetToCapi } from "./machineset.js";
import { type ConversionResult, formatFieldError } from "./types.js";

export type Direction = "capi" | "mapi";

export interface ConvertDocumentsOptions {
  to: Direction;
  capiNamespace: string;
  mapiNamespace: string;
}

export interface ConvertDocumentsResult {
  /** Converted objects, in input order (a Machine is followed by its InfraMachine). */
  objects: KubeObject[];
  /** One line per field error, prefixed by `kind/name`. */
  errors: string[];
  /** One line per warning, prefixed by `kind/name`. */
  warnings: string[];
  /** How many input objects failed to convert. */
  failed: number;
}

/** Flattens `List` kinds (`v1 List`, `MachineList`, …) into their items; drops empty documents. */
export const flattenDocuments = (documents: readonly unknown[]): KubeObject[] =>
  documents.flatMap((doc): KubeObject[] => {
    if (!isRecord(doc)) return [];
    if (typeof doc.kind === "string" && doc.kind.endsWith("List") && Array.isArray(doc.items))
      return flattenDocuments(doc.items);
    return [doc as KubeObject];
  });

const label = (o: KubeObject) => `${o.kind ?? "Object"}/${nameOf(o) || "<unnamed>"}`;

const is = (o: KubeObject, apiVersion: string, kind: string) =>
  o.apiVersion === apiVersion && o.kind === kind;
const isOf = (o: KubeObject, type: ResourceType) => is(o, apiVersionOf(type), type.kind);

/** Finds an object of `kind` named `name`, preferring the same namespace as `near`. */
/** An object of the platform's `type` (its group and version) named `name`, the one beside `near` first. */
const findNamed = (objects: readonly KubeObject[], type: ResourceType, name: unknown, near: KubeObject) =>
  typeof name !== "string"
    ? undefined
    : (objects.find((o) => isOf(o, type) && nameOf(o) === name && namespaceOf(o) === namespaceOf(near)) ??
      objects.find((o) => isOf(o, type) && nameOf(o) === name));

export const convertDocuments = (
  documents: readonly unknown[],
  infrastructure: KubeObject,
  options: ConvertDocumentsOptions,
): ConvertDocumentsResult => {
  const out: ConvertDocumentsResult = { objects: [], errors: [], warnings: [], failed: 0 };
  const lookup = platformFor(infrastructure);
  if (!lookup.ok) {
    out.errors.push(
      ...lookup.errors.map(
        (e) => `Infrastructure/${nameOf(infrastructure) || "cluster"}: ${formatFieldError(e)}`,
      ),
    );
    out.failed = 1;
    return out;
  }
  const { platform, infrastructure: info } = lookup;
  const objects = flattenDocuments(documents);
  const consumed = new Set<KubeObject>();

  const record = <T>(
    source: KubeObject,
    result: ConversionResult<T>,
    produce: (value: T) => KubeObject[],
  ) => {
    if (result.ok) {
      appendAll(out.objects, produce(result.value));
      appendAll(
        out.warnings,
        result.warnings.map((w) => `${label(source)}: ${w}`),
      );
    } else {
      out.failed += 1;
      appendAll(
        out.errors,
        result.errors.map((e) => `${label(source)}: ${formatFieldError(e)}`),
      );
    }
  };

  for (const o of objects) {
    if (options.to === "capi") {
      if (is(o, MAPI_API_VERSION, "Machine"))
        record(o, mapiMachineToCapi(o, infrastructure, { capiNamespace: options.capiNamespace }), (v) => [
          v.machine,
          v.infraMachine,
        ]);
      else if (is(o, MAPI_API_VERSION, "MachineSet"))
        record(o, mapiMachineSetToCapi(o, infrastructure, { capiNamespace: options.capiNamespace }), (v) => [
          v.machineSet,
          v.infraTemplate,
        ]);
      else out.warnings.push(`${label(o)}: skipped: not a ${MAPI_API_VERSION} Machine or MachineSet`);
      continue;
    }
    if (is(o, CAPI_API_VERSION, "Machine") || is(o, CAPI_API_VERSION, "MachineSet")) {
      const infraCluster =
        objects.find((c) => isOf(c, platform.infraCluster) && nameOf(c) === info.clusterName) ??
        objects.find((c) => isOf(c, platform.infraCluster));
      if (infraCluster !== undefined) consumed.add(infraCluster);
      const opts = {
        mapiNamespace: options.mapiNamespace,
        ...(infraCluster === undefined ? {} : { infraCluster }),
      };
      if (o.kind === "Machine") {
        const infraMachine = findNamed(
          objects,
          platform.infraMachine,
          getPath(o, ["spec", "infrastructureRef", "name"]),
          o,
        );
        if (infraMachine !== undefined) consumed.add(infraMachine);
        record(o, capiMachineToMapi(o, infraMachine, infrastructure, opts), (v) => [v.machine]);
      } else {
        const template = findNamed(
          objects,
          platform.infraMachineTemplate,
          getPath(o, ["spec", "template", "spec", "infrastructureRef", "name"]),
          o,
        );
        if (template !== undefined) consumed.add(template);
        record(o, capiMachineSetToMapi(o, template, infrastructure, opts), (v) => [v.machineSet]);
      }
    }
  }
  if (options.to === "mapi")
    for (const o of objects)
      if (!consumed.has(o) && !is(o, CAPI_API_VERSION, "Machine") && !is(o, CAPI_API_VERSION, "MachineSet"))
        out.warnings.push(`${label(o)}: skipped: not a CAPI Machine or MachineSet, nor referenced by one`);
  return out;
};
