/**
 * The label and annotation guards of SPEC §2.3 shared by the frozen rules: which keys are protected,
 * which are delete marks (never protected, so scale-down works on mixed sets), which belong to the product,
 * and the twin-owned labels check. Returns field paths; the rules word the messages.
 */
import { ANNOTATIONS, DELETE_MARKS, LABELS, PRODUCT_PREFIX } from "../kube/kinds.js";
import { annotationsOf, type KubeObject, labelsOf } from "../kube/object.js";
import { keyChanges, pathOf } from "./diff.js";

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
  const oldLabels = labelsOf(before);
  const newLabels = labelsOf(after);
  const out = new Set<string>();
  for (const { key } of keyChanges(oldLabels, newLabels))
    if (isProtectedLabel(key) || key === LABELS.machineTemplateHash) out.add(labelPath(key));
  for (const { key } of keyChanges(annotationsOf(before), annotationsOf(after)))
    if (isProtectedAnnotation(key)) out.add(annotationPath(key));
  if (authoritativeTwin) {
    for (const [key, value] of Object.entries(labelsOf(authoritativeTwin)))
      if (newLabels[key] !== oldLabels[key] && newLabels[key] !== value) out.add(labelPath(key));
  }
  return [...out];
}
