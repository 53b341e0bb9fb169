/**
 * The one live read of SPEC §4.6: before a deletion is propagated or a finalizer released, are the
 * namespaces or CustomResourceDefinitions of the twins being deleted? Read from the API server, never the
 * cache: informers give no ordering across kinds, so a cache can show a Machine deleting before it shows
 * its namespace deleting. A namespace or CRD that is already gone counts as being removed.
 */
import type { KubeClient } from "../../kube/client.js";
import { NotFoundError } from "../../kube/errors.js";
import type { ResourceType } from "../../kube/kinds.js";
import { KINDS } from "../../kube/kinds.js";
import { isDeleting } from "../../kube/object.js";

export interface StorageToCheck {
  namespaces: readonly string[];
  customResourceDefinitions: readonly string[];
}

const beingRemoved = async (client: KubeClient, type: ResourceType, name: string): Promise<boolean> => {
  try {
    return isDeleting(await client.get(type, "", name));
  } catch (e) {
    if (e instanceof NotFoundError) return true;
    throw e;
  }
};

/** True when any namespace or CRD named in `check` is deleting or gone. */
export async function readStorageBeingRemoved(client: KubeClient, check: StorageToCheck): Promise<boolean> {
  const reads = [
    ...check.namespaces.map((n) => beingRemoved(client, KINDS.namespace, n)),
    ...check.customResourceDefinitions.map((n) => beingRemoved(client, KINDS.customResourceDefinition, n)),
  ];
  return (await Promise.all(reads)).some(Boolean);
}
