/**
 * The metadata guards of SPEC §2.3 shared by the frozen rules: which label and annotation keys are protected,
 * which are delete marks (never protected, so scale-down works on mixed sets), which belong to the product,
 * the twin-owned labels check, and ownerReferences (removable, never added or changed). Returns field paths;
 * the rules word the messages.
 */
import { ANNOTATIONS, DELETE_MARKS, LABELS, PRODUCT_PREFIX } from "../kube/kinds.js";
import { annotationsOf, isRecord, type KubeObject, labelsOf, ownerReferencesOf } from "../kube/object.js";
import { keyChanges, pathOf, sameJson } from "./diff.js";

export const isDeleteMark = (key: string): boolean => DELETE_MARKS.includes(key);

export const isProductAnnotation = (key: string): boolean => key.startsWith(`${PRODUCT_PREFIX}/`);

export const isProtectedLabel = (key: string): boolean =>
  !isDeleteMark(key) &&
  (key.startsWith("machine.openshift.io") ||
    key.startsWith("kubernetes.io") ||
    key.includes("cluster.x-k8s.io/"));

export const isProtectedAnnotation = (key: string): boolean =>
  !isDeleteMark(key) &&
  key !== ANNOTATIONS.confirmDelete &&
  (key.startsWith("machine.openshift.io") ||
    key.includes("cluster.x-k8s.io") ||
    key.includes("clusters.x-k8s.io") ||
    key.startsWith(PRODUCT_PREFIX));

/**
 * An object's labels or annotations for reading, as `labelsOf`/`annotationsOf` give them (string values only)
 * but without the copy when every value is already a string, which is what the API server guarantees. The
 * guards read them on every UPDATE; copying a map key by key cost more than the comparison. Never written to.
 */
export const readLabels = (o: KubeObject | undefined): Readonly<Record<string, string>> =>
  allStrings(o?.metadata?.labels) ? (o?.metadata?.labels as Record<string, string>) : labelsOf(o);
export const readAnnotations = (o: KubeObject | undefined): Readonly<Record<string, string>> =>
  allStrings(o?.metadata?.annotations)
    ? (o?.metadata?.annotations as Record<string, string>)
    : annotationsOf(o);

/** A map the copy would reproduce exactly: every value a string, and no `__proto__` key (a copy drops it). */
function allStrings(map: unknown): boolean {
  if (!isRecord(map)) return false;
  for (const key of Object.keys(map)) if (typeof map[key] !== "string" || key === "__proto__") return false;
  return true;
}

export const labelPath = (key: string): string => pathOf(["metadata", "labels", key]);
export const annotationPath = (key: string): string => pathOf(["metadata", "annotations", key]);

/**
 * Paths of protected labels/annotations added, changed or removed, of the `machine-template-hash` label,
 * and of labels the authoritative twin owns that are set to anything but the twin's value.
 */
export function metadataGuardViolations(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
  authoritativeTwin: KubeObject | undefined,
): string[] {
  const oldLabels = readLabels(before);
  const newLabels = readLabels(after);
  const out = new Set<string>();
  for (const { key } of keyChanges(oldLabels, newLabels))
    if (isProtectedLabel(key) || key === LABELS.machineTemplateHash) out.add(labelPath(key));
  for (const { key } of keyChanges(readAnnotations(before), readAnnotations(after)))
    if (isProtectedAnnotation(key)) out.add(annotationPath(key));
  if (authoritativeTwin) {
    for (const [key, value] of Object.entries(readLabels(authoritativeTwin)))
      if (newLabels[key] !== oldLabels[key] && newLabels[key] !== value) out.add(labelPath(key));
  }
  return [...out];
}

export const OWNER_REFERENCES_PATH = "metadata.ownerReferences";

/**
 * `metadata.ownerReferences` when `after` has an owner reference that `before` has not, field for field:
 * added or changed. Removing references (and reordering them) is never refused: it is the admin's
 * break-glass and the garbage collector's orphaning.
 */
export function ownerReferenceViolations(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
): string[] {
  const old = ownerReferencesOf(before);
  return ownerReferencesOf(after).every((ref) => old.some((o) => sameJson(o, ref)))
    ? []
    : [OWNER_REFERENCES_PATH];
}
