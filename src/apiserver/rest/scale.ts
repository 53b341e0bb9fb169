/**
 * The scale subresource of kinds that declare one (CRD `subresources.scale`): an autoscaling/v1 Scale is
 * read from the paths the CRD names, and a write to it changes only `specReplicasPath` of the stored object,
 * through the common update path with admission seeing Scale objects, as kube does.
 */

import { cloneJson } from "../../json-text.js";
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { badRequest, invalid, notFound } from "../status.js";
import type { ResourceInfo } from "../types.js";
import type { AdmissionView, ObjectRequest } from "./request.js";
import type { WritePath } from "./write-path.js";

const setPath = (o: Record<string, unknown>, dotted: string, value: unknown): void => {
  const segs = dotted.replace(/^\./, "").split(".");
  let cur = o;
  for (const s of segs.slice(0, -1)) {
    if (!isRecord(cur[s])) cur[s] = {};
    cur = cur[s] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = value;
};
const readPath = (o: unknown, dotted: string): unknown => getPath(o, dotted.replace(/^\./, "").split("."));

/** A copy of `o` with `replicas` at the kind's spec replicas path. */
const withReplicas = (res: ResourceInfo, o: KubeObject, replicas: unknown): KubeObject => {
  const copy = cloneJson(o) as Record<string, unknown>;
  setPath(copy, res.scale!.specReplicasPath, replicas);
  return copy as KubeObject;
};

export const scaleOf = (res: ResourceInfo, o: KubeObject): KubeObject => {
  const s = res.scale!;
  const selector = s.labelSelectorPath ? readPath(o, s.labelSelectorPath) : undefined;
  return {
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: {
      name: o.metadata?.name,
      ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
      uid: o.metadata?.uid,
      resourceVersion: o.metadata?.resourceVersion,
      creationTimestamp: o.metadata?.creationTimestamp,
    },
    spec: { replicas: Number(readPath(o, s.specReplicasPath) ?? 0) },
    status: {
      replicas: Number(readPath(o, s.statusReplicasPath) ?? 0),
      ...(typeof selector === "string" ? { selector } : {}),
    },
  };
};

/** Admission sees autoscaling/v1 Scale objects for this subresource, as in kube. */
const scaleView = (res: ResourceInfo): AdmissionView => ({
  kind: { group: "autoscaling", version: "v1", kind: "Scale" },
  toView: (o) => scaleOf(res, o),
  fromView: (view, o) => {
    const r = getPath(view, ["spec", "replicas"]);
    return typeof r === "number" ? withReplicas(res, o, r) : o;
  },
});

/** PUT or PATCH of `…/scale`: `change` turns the current Scale into the desired one. */
export const updateScale = async (
  write: WritePath,
  request: ObjectRequest,
  change: (scale: KubeObject) => unknown,
): Promise<KubeObject> => {
  const { ctx, res, version, namespace, name } = request;
  if (!res.scale) throw notFound(res.group, `${res.plural}/scale`, name);
  const updated = await write.retrying(async () => {
    const old = write.get(res, namespace, name);
    const scale = change(scaleOf(res, old));
    if (!isRecord(scale)) throw badRequest("Scale must be an object");
    const replicas = getPath(scale, ["spec", "replicas"]);
    if (typeof replicas === "number" && Number.isInteger(replicas) && replicas < 0)
      throw invalid(res.group, res.kind, name, [
        {
          reason: "FieldValueInvalid",
          field: ".spec.replicas",
          message: `Invalid value: ${replicas}: should be a non-negative integer`,
        },
      ]);
    if (typeof replicas !== "number" || !Number.isInteger(replicas))
      throw invalid("autoscaling", "Scale", name, [
        {
          reason: "FieldValueInvalid",
          field: "spec.replicas",
          message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
        },
      ]);
    const rv = getPath(scale, ["metadata", "resourceVersion"]);
    const precondition = typeof rv === "string" && rv !== old.metadata?.resourceVersion ? rv : undefined;
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
