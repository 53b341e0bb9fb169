/**
 * The check the product-object schema tests share (SPEC §8: "nothing the product writes is pruned
 * silently"): compile manifests/crds, then run an object through its CRD's pruning and defaulting and its
 * validation, reporting the paths it lost and the validation causes. Added fields are fine (defaults).
 */
import { loadProjectCrds } from "../../../src/apiserver/fixtures/crds.js";
import { type CompiledCrd, compileCrd } from "../../../src/apiserver/schema/index.js";
import { isRecord, type KubeObject } from "../../../src/kube/object.js";

/** The project's CRDs compiled, by `group/Kind`. */
export async function compiledProjectCrds(): Promise<Map<string, CompiledCrd>> {
  const byKind = new Map<string, CompiledCrd>();
  for (const crd of await loadProjectCrds()) {
    const r = compileCrd(crd);
    if (!r.ok) throw new Error(JSON.stringify(r.causes));
    byKind.set(`${r.value.group}/${r.value.names.kind}`, r.value);
  }
  return byKind;
}

/** Paths present in `before` that are gone or changed in `after` (added fields are fine: defaults). */
export function lost(before: unknown, after: unknown, path = ""): string[] {
  if (isRecord(before)) {
    if (!isRecord(after)) return [path];
    return Object.entries(before).flatMap(([k, v]) =>
      Object.hasOwn(after, k) ? lost(v, after[k], `${path}.${k}`) : [`${path}.${k}`],
    );
  }
  if (Array.isArray(before)) {
    if (!Array.isArray(after) || after.length !== before.length) return [path];
    return before.flatMap((v, i) => lost(v, after[i], `${path}[${i}]`));
  }
  return before === after ? [] : [path];
}

/** What `o` loses to its CRD's pruning, and what its CRD's validation says about what is left. */
export const checkAgainst = (
  byKind: ReadonlyMap<string, CompiledCrd>,
  o: KubeObject,
): { lost: string[]; causes: string[] } => {
  const [group, version] = String(o.apiVersion).split("/") as [string, string];
  const crd = byKind.get(`${group}/${o.kind}`);
  if (!crd) throw new Error(`no CRD for ${o.apiVersion} ${o.kind}`);
  const pruned = crd.pruneAndDefault(version, o);
  return {
    lost: lost(o, pruned),
    causes: crd.validate(version, pruned, undefined).map((c) => `${c.field}: ${c.message}`),
  };
};
