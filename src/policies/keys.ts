/**
 * The metadata guards of SPEC §2.3 shared by the frozen rules: which label and annotation keys are protected,
 * which are delete marks (never protected, so scale-down works on mixed sets), which belong to the product,
 * the twin-owned labels check, and ownerReferences (removable, never added or changed). Returns field paths;
 * the rules word the messages.
 */

import { ANNOTATIONS, DELETE_MARKS, LABELS, PRODUCT_PREFIX } from "../kube/kinds.js";
import { annotationsOf, isRecord, type KubeObject, labelsOf, ownerReferencesOf } from "../kube/object.js";
import { pathOf } from "./diff.js";

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
  for (const key of guardedChanges(oldLabels, newLabels, guardedLabel)) out.add(labelPath(key));
  for (const key of guardedChanges(readAnnotations(before), readAnnotations(after), isProtectedAnnotation))
    out.add(annotationPath(key));
  if (authoritativeTwin) {
    for (const [key, value] of Object.entries(readLabels(authoritativeTwin)))
      if (newLabels[key] !== oldLabels[key] && newLabels[key] !== value) out.add(labelPath(key));
  }
  return [...out];
}

const guardedLabel = (key: string): boolean => isProtectedLabel(key) || key === LABELS.machineTemplateHash;

/** How many of a guard's changed keys are put in key order; messages name the first few (decision 61). */
export const SORTED_CHANGES = 100;

/**
 * The keys added, changed or removed between two maps that `guarded` keeps: the `SORTED_CHANGES` smallest in
 * key order, then the rest as met — all of them in key order when there are few, as sorting would give.
 * Linear in the maps: only the kept changes are ordered, and at most `SORTED_CHANGES` of them sorted.
 */
export function guardedChanges(
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
  guarded: (key: string) => boolean,
): string[] {
  const out: string[] = [];
  for (const key of Object.keys(before))
    if ((!Object.hasOwn(after, key) || before[key] !== after[key]) && guarded(key)) out.push(key);
  for (const key of Object.keys(after)) if (!Object.hasOwn(before, key) && guarded(key)) out.push(key);
  return smallestFirst(out, SORTED_CHANGES);
}

const stringLess = (a: string, b: string): boolean => a < b;
const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * `keys` (distinct) with the `first` smallest sorted in front and the rest after them as met. A max-heap of
 * `first` entries picks them: at most one comparison for each key that cannot enter it, O(log first) for one
 * that does. `less` is injectable so a test can count comparisons.
 */
export function smallestFirst(keys: readonly string[], first: number, less = stringLess): string[] {
  // Usually no key, or one: nothing to order, and no comparator built per call (guards run on every UPDATE).
  if (keys.length <= 1) return [...keys];
  const compare =
    less === stringLess
      ? compareStrings
      : (a: string, b: string): number => (less(a, b) ? -1 : less(b, a) ? 1 : 0);
  if (keys.length <= 2 * first) return [...keys].sort(compare);
  const heap: string[] = [];
  const swap = (i: number, j: number): void => {
    [heap[i], heap[j]] = [heap[j] as string, heap[i] as string];
  };
  for (const key of keys) {
    if (heap.length < first) {
      heap.push(key);
      for (let j = heap.length - 1; j > 0 && less(heap[(j - 1) >> 1] as string, heap[j] as string); ) {
        swap(j, (j - 1) >> 1);
        j = (j - 1) >> 1;
      }
    } else if (less(key, heap[0] as string)) {
      heap[0] = key;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        let top = i;
        if (l < heap.length && less(heap[top] as string, heap[l] as string)) top = l;
        if (l + 1 < heap.length && less(heap[top] as string, heap[l + 1] as string)) top = l + 1;
        if (top === i) break;
        swap(i, top);
        i = top;
      }
    }
  }
  const chosen = new Set(heap);
  return [...heap.sort(compare), ...keys.filter((k) => !chosen.has(k))];
}

export const OWNER_REFERENCES_PATH = "metadata.ownerReferences";

/**
 * `metadata.ownerReferences` when `after` has an owner reference that `before` has not, field for field:
 * added or changed. Removing references (and reordering them) is never refused: it is the admin's
 * break-glass and the garbage collector's orphaning. Linear in the references (decision 61): each is reduced
 * once to a canonical key (`sameJson`'s equality: a null field is a missing one), looked up in a set.
 */
export function ownerReferenceViolations(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
): string[] {
  const old = new Set(ownerReferencesOf(before).map(canonicalKey));
  return ownerReferencesOf(after).every((ref) => old.has(canonicalKey(ref))) ? [] : [OWNER_REFERENCES_PATH];
}

/** Emitted as it is by `canonicalKey`, never taken for a value. */
class Text {
  constructor(readonly text: string) {}
}
const OPEN_LIST = new Text("[");
const CLOSE_LIST = new Text("]");
const OPEN_MAP = new Text("{");
const CLOSE_MAP = new Text("}");
const COMMA = new Text(",");

const absentValue = (v: unknown): boolean => v === null || v === undefined;

/**
 * A string equal for two JSON values exactly when `sameJson` holds: types tagged, object keys sorted, keys
 * whose value is null or missing left out. An explicit stack, so any depth.
 */
export function canonicalKey(value: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v instanceof Text) out.push(v.text);
    else if (absentValue(v)) out.push("null");
    else if (typeof v === "string") out.push(`s${JSON.stringify(v)}`);
    else if (typeof v === "number" || typeof v === "boolean")
      out.push(`${typeof v === "number" ? "n" : "b"}${String(v)}`);
    else if (Array.isArray(v)) {
      out.push(OPEN_LIST.text);
      stack.push(CLOSE_LIST);
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push(v[i]);
        if (i > 0) stack.push(COMMA);
      }
    } else if (typeof v === "object") {
      const map = v as Record<string, unknown>;
      const keys = Object.keys(map)
        .filter((k) => !absentValue(map[k]))
        .sort();
      out.push(OPEN_MAP.text);
      stack.push(CLOSE_MAP);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        stack.push(map[key], new Text(`${JSON.stringify(key)}:`));
        if (i > 0) stack.push(COMMA);
      }
    } else out.push(`?${String(v)}`);
  }
  return out.join("");
}
