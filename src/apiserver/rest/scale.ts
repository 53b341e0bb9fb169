/**
 * The scale subresource of kinds that declare one (CRD `subresources.scale`): an autoscaling/v1 Scale is
 * read from the paths the CRD names, and a write to it changes only `specReplicasPath` of the stored object,
 * through the common update path with admission seeing Scale objects, as kube does.
 *
 * A Scale a client writes is decoded as kube decodes it, into Go's autoscaling/v1 Scale: a missing `spec`
 * or `replicas` is Go's zero value, so it scales to 0 (a MachineSet drains), and anything of the wrong type
 * (a string, 1.5, a number past int32) or another kind is refused before the object is read. Server-side
 * apply to a custom resource's scale never succeeds in kube 1.33: it fails converting its result (500) once
 * it has checked ownership (409 when another manager owns the replicas).
 */

import { cloneJson, jsonText } from "../../json-text.js";
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { appendAll } from "../../lists.js";
import { unmarshalError } from "../go-json.js";
import { fromFieldsV1, type ManagedFieldsEntry, serverSideApply } from "../managed-fields.js";
import { unknownMetadataFields } from "../object-meta.js";
import { preconditionOf } from "../resource-version.js";
import { ApiError, badRequest, invalid, notFound } from "../status.js";
import type { ResourceInfo } from "../types.js";
import type { AdmissionView, ObjectRequest } from "./request.js";
import { checkBodyName, strictDecodingError, unknownField } from "./strategy.js";
import type { WritePath } from "./write-path.js";

const SCALE_VERSION = "autoscaling/v1";

/** What the Scale a patch starts from holds when the object has no replicas (kube: the smallest int32). */
const MISSING_REPLICAS = -2147483648;

const segmentsOf = (dotted: string): string[] => dotted.replace(/^\./, "").split(".");

const setPath = (o: Record<string, unknown>, dotted: string, value: unknown): void => {
  const segs = segmentsOf(dotted);
  let cur = o;
  for (const s of segs.slice(0, -1)) {
    if (!isRecord(cur[s])) cur[s] = {};
    cur = cur[s] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = value;
};
const readPath = (o: unknown, dotted: string): unknown => getPath(o, segmentsOf(dotted));

/** A copy of `o` with `replicas` at the kind's spec replicas path. */
const withReplicas = (res: ResourceInfo, o: KubeObject, replicas: unknown): KubeObject => {
  const copy = cloneJson(o) as Record<string, unknown>;
  setPath(copy, res.scale!.specReplicasPath, replicas);
  return copy as KubeObject;
};

/** The object's Scale as kube writes it: Go's `omitempty` leaves out 0 replicas and an empty selector. */
export const scaleOf = (res: ResourceInfo, o: KubeObject): KubeObject => {
  const s = res.scale!;
  const selector = s.labelSelectorPath ? readPath(o, s.labelSelectorPath) : undefined;
  const replicas = Number(readPath(o, s.specReplicasPath) ?? 0);
  return {
    apiVersion: SCALE_VERSION,
    kind: "Scale",
    metadata: {
      name: o.metadata?.name,
      ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
      uid: o.metadata?.uid,
      resourceVersion: o.metadata?.resourceVersion,
      creationTimestamp: o.metadata?.creationTimestamp,
    },
    spec: replicas ? { replicas } : {},
    status: {
      replicas: Number(readPath(o, s.statusReplicasPath) ?? 0),
      ...(typeof selector === "string" && selector ? { selector } : {}),
    },
  };
};

/** GET of `…/scale`: kube refuses (500) to make up a Scale for an object without replicas. */
export const readScale = (res: ResourceInfo, o: KubeObject): KubeObject => {
  const path = res.scale!.specReplicasPath;
  if (readPath(o, path) === undefined) {
    const why = `the spec replicas field ${JSON.stringify(path)} does not exist`;
    throw new ApiError(500, "InternalError", `Internal error occurred: ${why}`, {
      causes: [{ reason: "", field: "", message: why }],
    });
  }
  return scaleOf(res, o);
};

/** Admission sees autoscaling/v1 Scale objects for this subresource, as in kube. */
const scaleView = (res: ResourceInfo): AdmissionView => ({
  kind: { group: "autoscaling", version: "v1", kind: "Scale" },
  toView: (o) => scaleOf(res, o),
  fromView: (view, o) => withReplicas(res, o, replicasOf(view)),
});

// ---- decoding a Scale as Go's encoding/json decodes it into autoscaling/v1.Scale

type GoField = "string" | "int32" | "map[string]string" | GoStruct;
interface GoStruct {
  /** The struct's name and its type as Go prints them in an unmarshal error. */
  name: string;
  type: string;
  fields: Readonly<Record<string, GoField>>;
}

const SCALE_TYPE: GoStruct = {
  name: "Scale",
  type: "v1.Scale",
  fields: {
    apiVersion: "string",
    kind: "string",
    metadata: {
      name: "ObjectMeta",
      type: "v1.ObjectMeta",
      fields: {
        name: "string",
        generateName: "string",
        namespace: "string",
        uid: "string",
        resourceVersion: "string",
        labels: "map[string]string",
        annotations: "map[string]string",
      },
    },
    spec: { name: "ScaleSpec", type: "v1.ScaleSpec", fields: { replicas: "int32" } },
    status: {
      name: "ScaleStatus",
      type: "v1.ScaleStatus",
      fields: { replicas: "int32", selector: "string" },
    },
  },
};

const isInt32 = (v: unknown): boolean =>
  typeof v === "number" && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647;

/**
 * Why Go cannot unmarshal `v` into a field of type `type` (Go's message: the innermost struct, the JSON path
 * from the root, the Go type), or undefined. `null` is always fine: it leaves Go's zero value.
 */
const goProblem = (v: unknown, type: GoField, struct: string, path: string): string | undefined => {
  if (v === null || v === undefined) return undefined;
  const wrong = (goType: string): string => unmarshalError(v, `${struct}.${path}`, goType, type === "int32");
  if (type === "string") return typeof v === "string" ? undefined : wrong("string");
  if (type === "int32") return isInt32(v) ? undefined : wrong("int32");
  if (type === "map[string]string") {
    if (!isRecord(v)) return wrong(type);
    for (const [k, value] of Object.entries(v)) {
      const why = goProblem(value, "string", struct, `${path}.${k}`);
      if (why) return why;
    }
    return undefined;
  }
  if (!isRecord(v)) return wrong(type.type);
  for (const [k, field] of Object.entries(type.fields)) {
    const why = goProblem(v[k], field, type.name, path ? `${path}.${k}` : k);
    if (why) return why;
  }
  return undefined;
};

/** Why kube cannot decode `scale` as an autoscaling/v1 Scale (missing apiVersion and kind default to it). */
const scaleDecodeProblem = (scale: Record<string, unknown>): string | undefined => {
  const why = goProblem(scale, SCALE_TYPE, "", "");
  if (why) return why;
  const apiVersion = (scale.apiVersion as string | undefined) || SCALE_VERSION;
  const kind = (scale.kind as string | undefined) || "Scale";
  return apiVersion === SCALE_VERSION && kind === "Scale"
    ? undefined
    : `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "pkg/runtime/scheme.go:110"`;
};

/**
 * The fields of `scale` an autoscaling/v1 Scale does not have, as Go's strict decoder names them (`extra`,
 * `spec.bogus`, `metadata.x`): in the body's order, or — for a patch, whose result kube encodes again with
 * its keys sorted before decoding it — in sorted order.
 */
export const unknownScaleFields = (scale: Record<string, unknown>, sorted: boolean): string[] => {
  const keysOf = (o: Record<string, unknown>): string[] => (sorted ? Object.keys(o).sort() : Object.keys(o));
  const out: string[] = [];
  for (const k of keysOf(scale)) {
    const field = Object.hasOwn(SCALE_TYPE.fields, k) ? SCALE_TYPE.fields[k] : undefined;
    const value = scale[k];
    if (field === undefined) out.push(k);
    else if (k === "metadata") {
      const unknown = unknownMetadataFields({ metadata: value } as KubeObject);
      appendAll(out, sorted ? unknown.sort() : unknown);
    } else if (typeof field === "object" && isRecord(value))
      for (const f of keysOf(value)) if (!Object.hasOwn(field.fields, f)) out.push(`${k}.${f}`);
  }
  return out;
};

/**
 * `fieldValidation` of a Scale's unknown fields: warnings on `ctx` (Warn, kube's default), nothing (Ignore),
 * or the names of the fields that make a Strict request fail.
 */
const strictFailures = (request: ObjectRequest, unknown: readonly string[]): readonly string[] => {
  const mode = request.ctx.fieldValidation ?? "Warn";
  if (mode === "Strict") return unknown;
  // A patch applied again (the object changed under it) adds them again: the answer gives each once.
  if (mode === "Warn") for (const p of unknown) request.ctx.warnings.push(unknownField(p));
  return [];
};

/** The replicas a decoded Scale carries: Go's zero value when `spec` or `replicas` is missing or null. */
const replicasOf = (scale: Record<string, unknown>): number => {
  const r = getPath(scale, ["spec", "replicas"]);
  return typeof r === "number" ? r : 0;
};

/** A string of the Scale's metadata, "" when absent (Go's zero value). */
const metaString = (
  scale: Record<string, unknown>,
  key: "name" | "namespace" | "resourceVersion",
): string => {
  const v = isRecord(scale.metadata) ? scale.metadata[key] : undefined;
  return typeof v === "string" ? v : "";
};

/** Whether the Scale names a namespace other than the URL's. */
const otherNamespace = (request: ObjectRequest, scale: Record<string, unknown>): boolean => {
  const namespace = metaString(scale, "namespace");
  return request.res.namespaced && namespace !== "" && namespace !== request.namespace;
};

/** kube's checkName: the Scale written must name the URL's object, in its namespace (400). */
const checkName = (request: ObjectRequest, scale: Record<string, unknown>): void => {
  checkBodyName(metaString(scale, "name"), request.name);
  if (otherNamespace(request, scale))
    throw badRequest(
      `the namespace of the object (${metaString(scale, "namespace")}) does not match the namespace on the request (${request.namespace})`,
    );
};

/** Go's GroupVersionKind.String() of an object's apiVersion and kind. */
/** An object's group, version and kind as Go's GroupVersionKind.String() prints them: `/v1, Kind=ConfigMap`. */
export const gvkOf = (o: Record<string, unknown>): string => {
  const apiVersion = typeof o.apiVersion === "string" ? o.apiVersion : "";
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/", 2) : ["", apiVersion];
  return `${group}/${version}, Kind=${typeof o.kind === "string" ? o.kind : ""}`;
};

/**
 * The update of the stored object a Scale asks for: `change` turns the current Scale into the desired one;
 * `conditional` says whether its resourceVersion is a precondition even when it is the current one (a PUT's
 * is; a patch that leaves it as it was is retried on the newest object, as kube re-applies patches).
 */
const updateScale = async (
  write: WritePath,
  request: ObjectRequest,
  change: (scale: KubeObject) => Record<string, unknown>,
  conditional: boolean,
): Promise<KubeObject> => {
  const { ctx, res, version, namespace, name } = request;
  const specReplicasPath = res.scale!.specReplicasPath;
  const updated = await write.retrying(async () => {
    const old = write.get(res, namespace, name);
    // What a patch applies to, as kube builds it: with the Scale's view of the object's managed fields.
    const current = scaleOf(res, old);
    if (readPath(old, specReplicasPath) === undefined) current.spec = { replicas: MISSING_REPLICAS };
    const managedFields = scaleManagedFields(res, old);
    if (managedFields.length > 0) current.metadata = { ...current.metadata, managedFields };
    const scale = change(current);
    const replicas = replicasOf(scale);
    if (replicas === MISSING_REPLICAS)
      throw badRequest(`the spec replicas field ${JSON.stringify(specReplicasPath)} cannot be empty`);
    if (replicas < 0)
      throw invalid(res.group, res.kind, name, [
        {
          reason: "FieldValueInvalid",
          field: ".spec.replicas",
          message: `Invalid value: ${replicas}: should be a non-negative integer`,
        },
      ]);
    // An empty resourceVersion leaves the stored object's; any other, "0" included, becomes the object's.
    const rv = metaString(scale, "resourceVersion");
    const precondition =
      rv === "" || (!conditional && rv === old.metadata?.resourceVersion)
        ? undefined
        : preconditionOf(res, name, rv);
    return write.applyUpdate({
      ctx,
      res,
      version,
      old,
      candidate: withReplicas(res, old, replicas),
      subresource: "scale",
      precondition,
      view: scaleView(res),
    });
  });
  return scaleOf(res, updated);
};

const needScale = (request: ObjectRequest): void => {
  const { res, name } = request;
  if (!res.scale) throw notFound(res.group, `${res.plural}/scale`, name);
};

/** PUT of `…/scale`: the body is decoded (400), must name the URL's object (400), then scales. */
export const putScale = (
  write: WritePath,
  request: ObjectRequest,
  body: Record<string, unknown>,
): Promise<KubeObject> => {
  needScale(request);
  // kube's error path asks the custom resource's scheme for the Scale's kind, which it does not know: every
  // undecodable Scale gets this one message, and so does a strict decoding error (an unknown field under
  // `fieldValidation=Strict`), before the object is read.
  const strict = strictFailures(request, unknownScaleFields(body, false));
  if (scaleDecodeProblem(body) || strict.length > 0)
    throw badRequest('no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:110"');
  // kube's handler checks the namespace (its own wording) before the name.
  if (otherNamespace(request, body))
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  checkName(request, body);
  return updateScale(write, request, () => body, true);
};

/**
 * A JSON, merge or strategic patch of `…/scale`: `patch` applies it to the current Scale; a result kube
 * cannot decode is a 422 on `patch`, one naming another object a 400.
 */
export const patchScale = (
  write: WritePath,
  request: ObjectRequest,
  patch: (scale: KubeObject) => unknown,
): Promise<KubeObject> => {
  needScale(request);
  return updateScale(
    write,
    request,
    (current) => {
      const patched = patch(current);
      if (!isRecord(patched)) throw badRequest("the patch produced something that is not an object");
      const strict = strictFailures(request, unknownScaleFields(patched, true));
      const why =
        scaleDecodeProblem(patched) ??
        (strict.length > 0 ? strictDecodingError(strict.map(unknownField)) : undefined);
      if (why)
        throw invalid("", "", "", [
          {
            reason: "FieldValueInvalid",
            field: "patch",
            message: `Invalid value: ${JSON.stringify(jsonText(patched))}: ${why}`,
          },
        ]);
      checkName(request, patched);
      return patched;
    },
    false,
  );
};

/**
 * The managed fields of the Scale kube applies to (its ScaleHandler.ToSubresource): the entries of the
 * object that own its replicas, as owning the Scale's `spec.replicas` through autoscaling/v1.
 */
const scaleManagedFields = (res: ResourceInfo, o: KubeObject): ManagedFieldsEntry[] => {
  const nested = (segs: string[]): Record<string, unknown> =>
    segs.reduceRight<Record<string, unknown>>((inner, s) => ({ [`f:${s}`]: inner }), {});
  const [replicas] = fromFieldsV1(nested(segmentsOf(res.scale!.specReplicasPath)));
  const entries = Array.isArray(o.metadata?.managedFields)
    ? (o.metadata.managedFields as ManagedFieldsEntry[])
    : [];
  return entries
    .filter((e) => e.apiVersion.startsWith(`${res.group}/`) && fromFieldsV1(e.fieldsV1).has(replicas!))
    .map((e) => ({ ...e, apiVersion: SCALE_VERSION, fieldsV1: nested(["spec", "replicas"]) }));
};

/**
 * Server-side apply to `…/scale`: kube's field manager checks the applied object's type (400) and field
 * ownership (409 unless forced), then fails to convert the result back to the custom resource (500) —
 * nothing is ever stored. Kept so that a client sees locally what a cluster answers.
 */
export const applyScale = (
  write: WritePath,
  request: ObjectRequest,
  applied: Record<string, unknown>,
  force: boolean,
): never => {
  needScale(request);
  const { ctx, res, namespace, name } = request;
  const old = write.get(res, namespace, name);
  const gvk = gvkOf(applied);
  if (gvk !== `${SCALE_VERSION}, Kind=Scale`) throw badRequest(`invalid object type: ${gvk}`);
  const live = { ...scaleOf(res, old) };
  live.metadata = { ...live.metadata, managedFields: scaleManagedFields(res, old) };
  serverSideApply(live, applied as KubeObject, ctx.fieldManager!, force, SCALE_VERSION, write.now());
  throw new ApiError(
    500,
    "",
    `failed to convert new object (${metaString(applied, "namespace")}/${metaString(applied, "name")}; ${gvk}) to proper version: request to convert CR to an invalid group/version: ${SCALE_VERSION}`,
  );
};
