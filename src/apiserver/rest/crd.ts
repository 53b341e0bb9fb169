/**
 * The CustomResourceDefinition lifecycle as the write path sees it: a CRD is compiled on every write (422
 * when invalid), gets the status kube's CRD controllers would set and the cleanup finalizer, registers its
 * type once stored and unregisters it when finally removed; no instance may be created while it
 * terminates. Deleting a CRD's instances is the CRD finalizer's job (controllers.ts).
 */
import { isRecord, type KubeObject } from "../../kube/object.js";
import { meta } from "../object-meta.js";
import type { Registry } from "../registry.js";
import { ApiError, invalid } from "../status.js";
import type { Storage } from "../storage.js";
import type { CompiledCrd, ResourceInfo } from "../types.js";
import { resourceKey } from "../types.js";
import type { RestDeps } from "./request.js";

export const CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions";
export const CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io";

export const isCrdType = (res: ResourceInfo): boolean => resourceKey(res) === CRD_KEY;

/** CRDs: compile (422 when invalid) and compute the status kube's CRD controllers would set. */
export const prepareCrd = (
  deps: Pick<RestDeps, "compileCrd" | "registry">,
  change: { object: KubeObject; old: KubeObject | undefined; now: string },
): { object: KubeObject; compiled: CompiledCrd } => {
  const { object: o, old, now } = change;
  const result = deps.compileCrd(o);
  const name = String(o.metadata?.name ?? "");
  if (!result.ok) throw invalid("apiextensions.k8s.io", "CustomResourceDefinition", name, result.causes);
  const c = result.value;
  const existing = deps.registry.byKey(resourceKey({ group: c.group, plural: c.names.plural }));
  if (!old && existing)
    throw invalid("apiextensions.k8s.io", "CustomResourceDefinition", name, [
      {
        reason: "FieldValueInvalid",
        field: "spec.names.plural",
        message: `Invalid value: "${c.names.plural}": already served`,
      },
    ]);
  const oldConditions = Array.isArray(old?.status?.conditions)
    ? (old.status.conditions as Array<Record<string, unknown>>)
    : [];
  const condition = (type: string, reason: string, message: string): Record<string, unknown> => {
    const prev = oldConditions.find((x) => x.type === type && x.status === "True");
    return { type, status: "True", lastTransitionTime: prev?.lastTransitionTime ?? now, reason, message };
  };
  const storage = c.versions.find((v) => v.storage)?.name ?? c.versions[0]?.name ?? "";
  const stored = Array.isArray(old?.status?.storedVersions) ? (old.status.storedVersions as string[]) : [];
  const status = {
    conditions: [
      condition("NamesAccepted", "NoConflicts", "no conflicts found"),
      condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
    ],
    acceptedNames: { ...c.names, shortNames: c.names.shortNames, categories: c.names.categories },
    storedVersions: stored.includes(storage) ? stored : [...stored, storage],
  };
  const finalizers = [...(o.metadata?.finalizers ?? [])];
  if (!old && !finalizers.includes(CRD_CLEANUP_FINALIZER)) finalizers.push(CRD_CLEANUP_FINALIZER);
  return { object: { ...o, metadata: { ...meta(o), finalizers }, status }, compiled: c };
};

/** Creating an instance of a CRD that is being deleted is refused (405), as kube does. */
export const checkNotTerminating = (storage: Storage, res: ResourceInfo): void => {
  const crd = res.crd?.crd;
  if (!crd) return;
  const live = storage.get(CRD_KEY, "", String(crd.metadata?.name ?? ""));
  if (typeof live?.metadata?.deletionTimestamp === "string")
    throw new ApiError(
      405,
      "MethodNotAllowed",
      `create not allowed while custom resource definition is terminating`,
    );
};

/** A removed CRD's type is no longer served. */
export const unregisterCrd = (registry: Registry, crd: KubeObject): void => {
  const spec = isRecord(crd.spec) ? crd.spec : {};
  const names = isRecord(spec.names) ? spec.names : {};
  registry.remove(resourceKey({ group: String(spec.group ?? ""), plural: String(names.plural ?? "") }));
};
