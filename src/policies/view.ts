/**
 * The ClusterView the rules read: an ObjectStore (informer cache in production, memory-store.ts in
 * tests) plus twin resolution per SPEC §0 and §2.3. Twin resolution reads only MAPI and CAPI Machines and
 * MachineSets, never an infrastructure kind, so it works for infra kinds the cache does not watch.
 */
import { CAPI_GROUP, KINDS, LABELS } from "../kube/kinds.js";
import { getPath, type KubeObject, labelsOf, nameOf, ownerReferencesOf } from "../kube/object.js";
import { classifyObject, groupOfApiVersion } from "./subject.js";
import type { ClusterView, ObjectStore } from "./types.js";

export interface ViewNamespaces {
  mapiNamespace: string;
  capiNamespace: string;
}

/**
 * The name of the MAPI Machine an InfraMachine mirrors: its owner CAPI Machine's name; without an owner,
 * the CAPI Machine whose infrastructureRef names it; else its own name. The first answer wins, so an
 * owner that has no MAPI twin yields no twin rather than a guess by name.
 */
function mapiMachineNameOfInfra(store: ObjectStore, capiNamespace: string, infra: KubeObject): string {
  const owner = ownerReferencesOf(infra).find(
    (ref) => ref.kind === "Machine" && groupOfApiVersion(ref.apiVersion) === CAPI_GROUP,
  );
  if (owner && typeof owner.name === "string") return owner.name;
  const name = nameOf(infra);
  const referrer = store
    .list(KINDS.capiMachine, capiNamespace)
    .find(
      (m) =>
        getPath(m, ["spec", "infrastructureRef", "name"]) === name &&
        [undefined, infra.kind].includes(
          getPath(m, ["spec", "infrastructureRef", "kind"]) as string | undefined,
        ),
    );
  return referrer ? nameOf(referrer) : name;
}

function twinIn(store: ObjectStore, namespaces: ViewNamespaces, object: KubeObject): KubeObject | undefined {
  const { mapiNamespace, capiNamespace } = namespaces;
  const role = classifyObject(object);
  const name = nameOf(object);
  if (!role || !name) return undefined;
  switch (role.role) {
    case "machine":
      return role.api === "mapi"
        ? store.get(KINDS.capiMachine, capiNamespace, name)
        : store.get(KINDS.mapiMachine, mapiNamespace, name);
    case "machineSet":
      return role.api === "mapi"
        ? store.get(KINDS.capiMachineSet, capiNamespace, name)
        : store.get(KINDS.mapiMachineSet, mapiNamespace, name);
    case "infraMachine": {
      const mapiName = mapiMachineNameOfInfra(store, capiNamespace, object);
      return mapiName ? store.get(KINDS.mapiMachine, mapiNamespace, mapiName) : undefined;
    }
    case "infraTemplate": {
      const setName = labelsOf(object)[LABELS.templateMachineSet];
      return setName ? store.get(KINDS.mapiMachineSet, mapiNamespace, setName) : undefined;
    }
  }
}

/**
 * The engine builds one of these per decision (over its freshness-guarded store), so it is only methods
 * over the module-level helpers above: no per-call helper closures.
 */
export function clusterView(store: ObjectStore, namespaces: ViewNamespaces): ClusterView {
  return {
    get(type, namespace, name) {
      return store.get(type, namespace, name);
    },
    list(type, namespace) {
      return store.list(type, namespace);
    },
    freshness(type) {
      return store.freshness(type);
    },
    twinOf(object) {
      return twinIn(store, namespaces, object);
    },
  };
}
