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

export function clusterView(store: ObjectStore, namespaces: ViewNamespaces): ClusterView {
  const { mapiNamespace, capiNamespace } = namespaces;

  /**
   * The name of the MAPI Machine an InfraMachine mirrors: its owner CAPI Machine's name; without an owner,
   * the CAPI Machine whose infrastructureRef names it; else its own name. The first answer wins, so an
   * owner that has no MAPI twin yields no twin rather than a guess by name.
   */
  const mapiMachineNameOfInfra = (infra: KubeObject): string => {
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
  };

  const twinOf = (object: KubeObject): KubeObject | undefined => {
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
        const mapiName = mapiMachineNameOfInfra(object);
        return mapiName ? store.get(KINDS.mapiMachine, mapiNamespace, mapiName) : undefined;
      }
      case "infraTemplate": {
        const setName = labelsOf(object)[LABELS.templateMachineSet];
        return setName ? store.get(KINDS.mapiMachineSet, mapiNamespace, setName) : undefined;
      }
    }
  };

  return {
    get: (type, namespace, name) => store.get(type, namespace, name),
    list: (type, namespace) => store.list(type, namespace),
    freshness: (type) => store.freshness(type),
    twinOf,
  };
}
