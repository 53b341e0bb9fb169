/**
 * PUT and PATCH: what each verb checks of its body before the common update path (write-path.ts) takes the
 * desired object — name and uid against the URL, the resourceVersion precondition (required for custom
 * resources), the four patch types, and server-side apply, which may create its object. The patch
 * algorithms themselves are in ../patch.ts, field ownership in ../managed-fields.ts.
 */

import { jsonText } from "../../json-text.js";
import { isRecord, type KubeObject } from "../../kube/object.js";
import { serverSideApply } from "../managed-fields.js";
import { meta, typedDecodeProblem } from "../object-meta.js";
import { jsonPatch, mergePatch, PatchError, strategicMerge } from "../patch.js";
import { preconditionOf } from "../resource-version.js";
import { ApiError, badRequest, invalid, notFound, unsupportedMediaType } from "../status.js";
import { type ResourceInfo, resourceKey } from "../types.js";
import { authorizeCreateOnApply } from "./admit.js";
import type { PatchRequest, PatchType, UpdateRequest } from "./request.js";
import { applyScale, patchScale, putScale } from "./scale.js";
import { checkPrecondition, checkTypeMeta, gvOf, listTypesOf, stripStatusForMain } from "./strategy.js";
import type { WritePath } from "./write-path.js";

/** A non-empty string, or undefined. */
const given = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

const nameMismatch = (bodyName: unknown, name: string): ApiError =>
  badRequest(`the name of the object (${String(bodyName)}) does not match the name on the URL (${name})`);

export const update = async (write: WritePath, request: UpdateRequest): Promise<KubeObject> => {
  const { ctx, res, version, namespace, name, subresource, body } = request;
  if (!isRecord(body)) throw badRequest("the body of the request must be a JSON object");
  if (subresource === "scale") return putScale(write, request, body);
  checkTypeMeta(res, gvOf(res, version), body);
  const bodyMeta = isRecord(body.metadata) ? body.metadata : {};
  if (bodyMeta.name !== undefined && bodyMeta.name !== name) throw nameMismatch(bodyMeta.name, name);
  // "" and "0" are no precondition: built-ins update unconditionally, custom resources refuse (422).
  const precondition = preconditionOf(res, name, bodyMeta.resourceVersion);
  checkPrecondition(res, write.get(res, namespace, name), "uid", given(bodyMeta.uid));
  return write.retrying(() =>
    write.applyUpdate({
      ctx,
      res,
      version,
      old: write.get(res, namespace, name),
      candidate: body,
      subresource,
      precondition,
    }),
  );
};

export const patch = async (
  write: WritePath,
  request: PatchRequest,
): Promise<{ object: KubeObject; created: boolean }> => {
  const { ctx, res, version, namespace, name, subresource, type, body, force } = request;
  if (type === "strategic" && !res.builtIn)
    throw unsupportedMediaType(
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    );
  if (type === "apply" && !ctx.fieldManager)
    throw invalid("meta.k8s.io", "PatchOptions", "", [
      {
        reason: "FieldValueRequired",
        field: "fieldManager",
        message: "Required value: is required for apply patch",
      },
    ]);
  if (type === "apply" && !isRecord(body)) throw badRequest("apply patch must be an object");
  if (subresource === "scale") {
    if (type === "apply") return applyScale(write, request, body as Record<string, unknown>, force);
    return {
      object: await patchScale(write, request, (scale) => applyPatchBody(type, scale, body)),
      created: false,
    };
  }
  let created = false;
  const object = await write.retrying(async () => {
    const live = write.deps.storage.get(resourceKey(res), res.namespaced ? namespace : "", name);
    if (type === "apply") {
      const applied = body as KubeObject;
      const am = isRecord(applied.metadata) ? applied.metadata : {};
      if (am.name !== undefined && am.name !== name) throw nameMismatch(am.name, name);
      if (!live) {
        if (subresource) throw notFound(res.group, res.plural, name);
        authorizeCreateOnApply(write.deps.authorize, request);
        const result = serverSideApply(
          undefined,
          applied,
          ctx.fieldManager!,
          force,
          gvOf(res, version),
          write.now(),
          undefined,
          listTypesOf(res, version),
        );
        const createBody = { ...result.object, metadata: { ...meta(result.object), name } };
        const obj = await write.create({
          ctx,
          res,
          version,
          namespace,
          body: createBody,
          applyFields: result.managedFields,
        });
        created = true;
        return obj;
      }
      const appliedBody = subresource === "status" ? applied : stripStatusForMain(res, applied);
      const result = serverSideApply(
        live,
        appliedBody,
        ctx.fieldManager!,
        force,
        gvOf(res, version),
        write.now(),
        subresource,
        listTypesOf(res, version),
      );
      return write.applyUpdate({
        ctx,
        res,
        version,
        old: live,
        candidate: result.object,
        subresource,
        precondition: given(am.resourceVersion),
        applyFields: result.managedFields,
      });
    }
    if (!live) throw notFound(res.group, res.plural, name);
    const patched = applyPatchBody(type, live, body);
    if (!isRecord(patched)) throw badRequest("the patch produced something that is not an object");
    checkPatchedObject(res, name, patched as KubeObject);
    const pm = isRecord(patched.metadata) ? patched.metadata : {};
    // A patch that leaves the resourceVersion as it was is retried on the newest object (kube re-applies it);
    // one that sets it (or removes it: no precondition, which custom resources refuse) is the write's.
    const precondition =
      pm.resourceVersion === live.metadata?.resourceVersion
        ? undefined
        : preconditionOf(res, name, pm.resourceVersion);
    return write.applyUpdate({
      ctx,
      res,
      version,
      old: live,
      candidate: patched as KubeObject,
      subresource,
      precondition,
    });
  });
  return { object, created };
};

/**
 * What kube's patch handler refuses in a patch's result before anything else (decision 125): a result whose
 * name is gone or differs from the URL's (400), and one its typed decoding cannot read (422 on `patch`) —
 * stored, it would be an object no typed client can decode.
 */
const checkPatchedObject = (res: ResourceInfo, name: string, patched: KubeObject): void => {
  const patchedName = isRecord(patched.metadata) ? patched.metadata.name : undefined;
  if (patchedName === undefined || patchedName === null || patchedName === "")
    throw badRequest(
      `the name of the object (${name} based on URL) was undeterminable: name must be provided`,
    );
  if (patchedName !== name)
    throw badRequest(
      `the name of the object (${String(patchedName)}) does not match the name on the URL (${name})`,
    );
  const why = typedDecodeProblem(res, patched);
  if (why)
    throw invalid("", "", "", [
      {
        reason: "FieldValueInvalid",
        field: "patch",
        message: `Invalid value: ${JSON.stringify(jsonText(patched))}: ${why}`,
      },
    ]);
};

const applyPatchBody = (type: PatchType, target: unknown, body: unknown): unknown => {
  try {
    switch (type) {
      case "merge":
        return mergePatch(target, body);
      case "json":
        return jsonPatch(target, body);
      case "strategic":
        return strategicMerge(target, body);
      case "apply":
        return mergePatch(target, body);
    }
  } catch (e) {
    if (e instanceof PatchError)
      throw e.code === 422 ? new ApiError(422, "Invalid", e.message) : badRequest(e.message);
    throw e;
  }
};
