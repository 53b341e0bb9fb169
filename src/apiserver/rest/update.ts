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
import { applyScale, gvkOf, patchScale, putScale } from "./scale.js";
import {
  checkBodyName,
  checkPrecondition,
  checkTypeMeta,
  gvOf,
  listTypesOf,
  nameMismatch,
  stripStatusForMain,
  undeclaredFields,
} from "./strategy.js";
import type { WritePath } from "./write-path.js";

/** A non-empty string, or undefined. */
const given = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export const update = async (write: WritePath, request: UpdateRequest): Promise<KubeObject> => {
  const { ctx, res, version, namespace, name, subresource, body } = request;
  if (!isRecord(body)) throw badRequest("the body of the request must be a JSON object");
  if (subresource === "scale") return putScale(write, request, body);
  checkTypeMeta(res, gvOf(res, version), body);
  const bodyMeta = isRecord(body.metadata) ? body.metadata : {};
  checkBodyName(bodyMeta.name, name);
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
  if (type === "apply" && subresource !== "scale") checkAppliedObject(res, version, body as KubeObject);
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
    // The patch applies to the stored object: its own version, or the request's, is no change of version.
    const versions = [gvOf(res, version), String(live.apiVersion)];
    checkPatchedObject(res, versions, namespace, name, patched as KubeObject);
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
 * What kube's field manager refuses in an applied configuration before anything is changed (decision 132): one
 * that is not of the endpoint's kind and version (400 "invalid object type"), one that carries managedFields
 * (400), and one with a field the kind's schema does not declare (500: the typed patch cannot be built; the
 * local server stored it).
 */
const checkAppliedObject = (res: ResourceInfo, version: string, applied: KubeObject): void => {
  const gvk = gvkOf(applied);
  if (gvk !== gvkOf({ apiVersion: gvOf(res, version), kind: res.kind }))
    throw badRequest(`invalid object type: ${gvk}`);
  const m = isRecord(applied.metadata) ? applied.metadata : {};
  if (m.managedFields !== undefined && m.managedFields !== null)
    throw badRequest("metadata.managedFields must be nil");
  const undeclared = undeclaredFields(res, version, applied);
  if (undeclared)
    throw new ApiError(
      500,
      "",
      `failed to create typed patch object (${String(m.namespace ?? "")}/${String(m.name ?? "")}; ${gvk}): .${undeclared}: field not declared in schema`,
    );
};

/** kube's 422 on a patch's result: the field is `patch`, the value the patched object. */
const patchInvalid = (patched: KubeObject, why: string): ApiError =>
  invalid("", "", "", [
    {
      reason: "FieldValueInvalid",
      field: "patch",
      message: `Invalid value: ${JSON.stringify(jsonText(patched))}: ${why}`,
    },
  ]);

/**
 * What kube's patch handler refuses in a patch's result before anything else (decisions 125, 131): a result
 * whose name is gone or differs from the URL's, or whose namespace differs (400); one naming another kind or
 * version, or a custom resource without its kind (422 on `patch`: kube cannot convert it back); and one its
 * typed decoding cannot read (422) — stored, it would be an object no typed client can decode.
 */
const checkPatchedObject = (
  res: ResourceInfo,
  versions: readonly string[],
  namespace: string,
  name: string,
  patched: KubeObject,
): void => {
  const patchedNamespace = isRecord(patched.metadata) ? patched.metadata.namespace : undefined;
  if (
    res.namespaced &&
    typeof patchedNamespace === "string" &&
    patchedNamespace &&
    patchedNamespace !== namespace
  )
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  const patchedKind = patched.kind;
  if (patchedKind !== undefined && patchedKind !== null && patchedKind !== res.kind) {
    // A built-in cannot be converted from another kind; a custom resource is validated as one, and refused.
    if (res.builtIn)
      throw patchInvalid(patched, `converting (${String(patchedKind)}) to (${res.kind}): unknown conversion`);
    throw invalid(res.group, String(patchedKind), name, [
      {
        reason: "FieldValueInvalid",
        field: "kind",
        message: `Invalid value: ${JSON.stringify(patchedKind)}: must be ${res.kind}`,
      },
    ]);
  }
  if (!res.builtIn && (patched.kind === undefined || patched.kind === null))
    throw patchInvalid(patched, "Object 'Kind' is missing in the patched object");
  const patchedVersion = patched.apiVersion;
  if (patchedVersion !== undefined && patchedVersion !== null && !versions.includes(String(patchedVersion)))
    throw patchInvalid(
      patched,
      `no kind ${JSON.stringify(res.kind)} is registered for version ${JSON.stringify(String(patchedVersion))}`,
    );
  checkBodyName(isRecord(patched.metadata) ? patched.metadata.name : undefined, name);
  const why = typedDecodeProblem(res, patched);
  if (why) throw patchInvalid(patched, why);
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
      throw e.code === 422
        ? new ApiError(422, "Invalid", e.message)
        : e.code === 413
          ? new ApiError(413, "RequestEntityTooLarge", e.message)
          : badRequest(e.message);
    throw e;
  }
};
