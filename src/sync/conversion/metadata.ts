/**
 * Labels, annotations and lifecycle hooks between a MAPI Machine (or MachineSet template) and its CAPI
 * counterpart (SPEC §5.1). Shared by machine.ts and machineset.ts so the two kinds cannot drift. Product
 * annotations (`machine-api-migration.openshift.io/*`) and the pause annotation never cross: they belong to
 * the controllers, not to the converted content.
 */
import { ANNOTATIONS, LABELS, PRODUCT_PREFIX } from "../../kube/kinds.js";
import { isRecord } from "../../kube/object.js";
import { fieldPath, type Issues, invalid, warn } from "./types.js";

const MAPI_LABELS = Object.freeze({
  role: "machine.openshift.io/cluster-api-machine-role",
  type: "machine.openshift.io/cluster-api-machine-type",
  instanceType: "machine.openshift.io/instance-type",
  region: "machine.openshift.io/region",
  zone: "machine.openshift.io/zone",
});
const NODE_ROLE_PREFIX = "node-role.kubernetes.io/";
/** CAPI's control plane label; set for role `master` so CAPI tooling recognises the machine. */
const CAPI_CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane";
const CONTROL_PLANE_ROLE = "master";

const MAPI_DELETE_MARK = "machine.openshift.io/delete-machine";
const CAPI_DELETE_MARK = "cluster.x-k8s.io/delete-machine";
const MAPI_INSTANCE_STATE = "machine.openshift.io/instance-state";
const HOOK_PREFIXES = Object.freeze({
  preDrain: "pre-drain.delete.hook.machine.cluster.x-k8s.io/",
  preTerminate: "pre-terminate.delete.hook.machine.cluster.x-k8s.io/",
});

const isProductKey = (key: string) => key.startsWith(`${PRODUCT_PREFIX}/`);

/** A string map at `value`, reporting entries that are not strings. */
export const readStringMap = (issues: Issues, value: unknown, path: string): Record<string, string> => {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) {
    invalid(issues, path, value, "must be a map of strings");
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "string") out[k] = v;
    else invalid(issues, fieldPath(path, k), v, "must be a string");
  }
  return out;
};

export const isMapiControlPlane = (labels: Record<string, string>): boolean =>
  labels[MAPI_LABELS.role] === CONTROL_PLANE_ROLE || labels[MAPI_LABELS.type] === CONTROL_PLANE_ROLE;

export const isCapiControlPlane = (labels: Record<string, string>): boolean =>
  Object.hasOwn(labels, CAPI_CONTROL_PLANE_LABEL) ||
  Object.hasOwn(labels, `${NODE_ROLE_PREFIX}${CONTROL_PLANE_ROLE}`);

/** SPEC §5.1 labels, MAPI → CAPI. `labelsPath` names where the role labels live, for the warning. */
export const labelsToCapi = (
  issues: Issues,
  labels: Record<string, string>,
  specLabels: Record<string, string>,
  clusterName: string,
  labelsPath: string,
): Record<string, string> => {
  const out: Record<string, string> = {};
  const role = labels[MAPI_LABELS.role];
  const type = labels[MAPI_LABELS.type];
  if (role !== undefined && type !== undefined && role !== type)
    warn(
      issues,
      labelsPath,
      `machine role "${role}" and machine type "${type}" differ; CAPI keeps both as node-role labels and converting back sets both to "${[role, type].sort()[0]}"`,
    );
  for (const [key, value] of Object.entries(labels)) {
    if (key === MAPI_LABELS.role || key === MAPI_LABELS.type) {
      if (value !== "") out[`${NODE_ROLE_PREFIX}${value}`] = "";
      continue;
    }
    if (key === MAPI_LABELS.instanceType || key === MAPI_LABELS.region || key === MAPI_LABELS.zone) continue;
    out[key] = value;
  }
  Object.assign(out, specLabels);
  if (isMapiControlPlane(labels)) out[CAPI_CONTROL_PLANE_LABEL] = "";
  out[LABELS.capiClusterName] = clusterName;
  return out;
};

/** SPEC §5.1 labels, CAPI → MAPI: node-role becomes role and type; CAPI's own keys stay behind. */
export const labelsToMapi = (
  issues: Issues,
  labels: Record<string, string>,
  labelsPath: string,
): Record<string, string> => {
  const out: Record<string, string> = {};
  const roles: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    if (key.startsWith(NODE_ROLE_PREFIX)) {
      roles.push(key.slice(NODE_ROLE_PREFIX.length));
      continue;
    }
    if (key.includes("cluster.x-k8s.io/")) continue;
    out[key] = value;
  }
  roles.sort();
  const role = roles[0];
  if (role !== undefined) {
    out[MAPI_LABELS.role] = role;
    out[MAPI_LABELS.type] = role;
  }
  if (roles.length > 1)
    warn(
      issues,
      labelsPath,
      `several node-role labels (${roles.join(", ")}); Machine API keeps one role: "${role}"`,
    );
  return out;
};

export interface LifecycleHook {
  name: string;
  owner: string;
}
export interface LifecycleHooks {
  preDrain?: LifecycleHook[];
  preTerminate?: LifecycleHook[];
}

const readHooks = (issues: Issues, value: unknown, path: string): LifecycleHook[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    invalid(issues, path, value, "must be a list of {name, owner}");
    return [];
  }
  return value.flatMap((hook, i) => {
    if (isRecord(hook) && typeof hook.name === "string" && typeof hook.owner === "string" && hook.name !== "")
      return [{ name: hook.name, owner: hook.owner }];
    invalid(issues, fieldPath(path, i), hook, "a lifecycle hook needs a name and an owner");
    return [];
  });
};

/** SPEC §5.1 annotations, MAPI → CAPI, with the lifecycle hooks folded in. */
export const annotationsToCapi = (
  issues: Issues,
  annotations: Record<string, string>,
  specAnnotations: Record<string, string>,
  lifecycleHooks: unknown,
  hooksPath: string,
): Record<string, string> => {
  const out: Record<string, string> = {};
  const copy = (source: Record<string, string>) => {
    for (const [key, value] of Object.entries(source)) {
      if (isProductKey(key) || key === MAPI_INSTANCE_STATE || key === ANNOTATIONS.paused) continue;
      out[key === MAPI_DELETE_MARK ? CAPI_DELETE_MARK : key] = value;
    }
  };
  copy(annotations);
  copy(specAnnotations);
  if (lifecycleHooks !== undefined && lifecycleHooks !== null) {
    if (!isRecord(lifecycleHooks)) invalid(issues, hooksPath, lifecycleHooks, "must be an object");
    else {
      for (const [key, value] of Object.entries(lifecycleHooks))
        if (key !== "preDrain" && key !== "preTerminate")
          invalid(issues, fieldPath(hooksPath, key), value, "unknown lifecycle hook kind");
      for (const kind of ["preDrain", "preTerminate"] as const)
        for (const hook of readHooks(issues, lifecycleHooks[kind], fieldPath(hooksPath, kind)))
          out[`${HOOK_PREFIXES[kind]}${hook.name}`] = hook.owner;
    }
  }
  return out;
};

/** SPEC §5.1 annotations, CAPI → MAPI: delete mark and hooks come back, other CAPI keys stay behind. */
export const annotationsToMapi = (
  annotations: Record<string, string>,
): { annotations: Record<string, string>; lifecycleHooks: LifecycleHooks } => {
  const out: Record<string, string> = {};
  const hooks: Required<LifecycleHooks> = { preDrain: [], preTerminate: [] };
  for (const [key, value] of Object.entries(annotations)) {
    if (key === CAPI_DELETE_MARK) {
      out[MAPI_DELETE_MARK] = value;
      continue;
    }
    const hookKind = (["preDrain", "preTerminate"] as const).find((k) => key.startsWith(HOOK_PREFIXES[k]));
    if (hookKind !== undefined) {
      hooks[hookKind].push({ name: key.slice(HOOK_PREFIXES[hookKind].length), owner: value });
      continue;
    }
    if (isProductKey(key) || key.includes("cluster.x-k8s.io")) continue;
    out[key] = value;
  }
  const lifecycleHooks: LifecycleHooks = {};
  for (const kind of ["preDrain", "preTerminate"] as const) {
    // Annotations are a map: order is lost on the CAPI side, so hooks come back sorted by name.
    if (hooks[kind].length > 0) lifecycleHooks[kind] = hooks[kind].sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  return { annotations: out, lifecycleHooks };
};

/** Puts a map under `key` only when it has entries, so empty maps do not show up as diffs. */
export const putMap = (target: Record<string, unknown>, key: string, map: Record<string, string>): void => {
  if (Object.keys(map).length > 0) target[key] = map;
};
