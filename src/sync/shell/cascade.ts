/**
 * The live read behind SPEC §4.6 "Deleting the CAPI Cluster is not a request for MAPI machines": does a
 * deleting CAPI object go with its `Cluster`? Its owner chain is walked on the API server, never in the
 * cache: a Cluster ownerReference counts when the Cluster with that reference's *uid* is gone or being
 * deleted (the platform recreates its Cluster under the same name, so a name is not enough); a MachineSet
 * ownerReference is followed to that MachineSet's own Cluster reference while it still exists with that uid.
 *
 * One case has no owner left to read: the garbage collector deletes a MachineSet's Machines only once the
 * set itself is gone. The MachineSet sync releases a MachineAPI set's paused mirror without deleting the MAPI
 * copy only in a cascade (any other deletion of it deletes the MAPI copy first), so a vanished CAPI set whose
 * MAPI twin is still there and not deleting means its Machines go with the Cluster too. When the MAPI twin is
 * being deleted as well (a user's `--cascade=orphan` after the Cluster's delete), the member's own Cluster is
 * read by name: absent, being deleted, or created after the member means the Cluster's cascade took the set.
 * Both readings err towards a cascade, which keeps the MAPI Machine (I6): the mirror is recreated later.
 */
import type { KubeClient } from "../../kube/client.js";
import { getOrAbsent } from "../../kube/client.js";
import type { ResourceType } from "../../kube/kinds.js";
import { CAPI_GROUP, KINDS } from "../../kube/kinds.js";
import type { KubeObject } from "../../kube/object.js";
import { getPath, isDeleting, ownerReferencesOf } from "../../kube/object.js";
import type { SyncSettings } from "../snapshot.js";

/** A live GET; undefined when NotFound. */
export type LiveRead = (
  type: ResourceType,
  namespace: string,
  name: string,
) => Promise<KubeObject | undefined>;

export const liveReadOf =
  (client: KubeClient): LiveRead =>
  (type, namespace, name) =>
    getOrAbsent(client, type, namespace, name);

/** True when `object` (a deleting CAPI Machine or MachineSet) goes with its Cluster; see the file comment. */
export async function readClusterCascade(
  read: LiveRead,
  object: KubeObject,
  settings: SyncSettings,
): Promise<boolean> {
  // The set's own Cluster reference went with the set: read the member's Cluster by name. Absent, being
  // deleted, or created after the member (recreated since; the same second counts, erring towards a
  // cascade) means the Cluster's cascade took the set.
  const clusterGoneSince = async (o: KubeObject): Promise<boolean> => {
    const name = getPath(o, ["spec", "clusterName"]);
    if (typeof name !== "string" || name === "") return false;
    const cluster = await read(KINDS.capiCluster, settings.capiNamespace, name);
    if (!cluster || isDeleting(cluster)) return true;
    const born = Date.parse(cluster.metadata?.creationTimestamp ?? "");
    const memberBorn = Date.parse(o.metadata?.creationTimestamp ?? "");
    return born >= memberBorn;
  };
  const chain = async (o: KubeObject, depth: number): Promise<boolean> => {
    for (const ref of ownerReferencesOf(o)) {
      if (!ref.apiVersion.startsWith(`${CAPI_GROUP}/`)) continue;
      if (ref.kind === "Cluster") {
        const cluster = await read(KINDS.capiCluster, settings.capiNamespace, ref.name);
        if (!cluster || cluster.metadata?.uid !== ref.uid || isDeleting(cluster)) return true;
      } else if (ref.kind === "MachineSet" && depth === 0) {
        const set = await read(KINDS.capiMachineSet, settings.capiNamespace, ref.name);
        if (set && set.metadata?.uid === ref.uid) {
          if (await chain(set, depth + 1)) return true;
        } else {
          const mapiSet = await read(KINDS.mapiMachineSet, settings.mapiNamespace, ref.name);
          if (mapiSet && !isDeleting(mapiSet)) return true;
          if (await clusterGoneSince(o)) return true;
        }
      }
    }
    return false;
  };
  return chain(object, 0);
}
