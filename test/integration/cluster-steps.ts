/**
 * Steps the Cluster-cascade integration tests share (SPEC §4.6, I6): a MachineAPI set with one Running member
 * and its mirror, the confirmed delete of the CAPI `Cluster` (recorded in the ledger as the user's request),
 * and the platform bringing its Cluster back once the old one is gone.
 */
import { ANNOTATIONS, KINDS } from "../../src/kube/kinds.js";
import { getPath, nameOf, ownerReferencesOf } from "../../src/kube/object.js";
import { capiCluster, DEMO_INFRASTRUCTURE_NAME, mapiMachineSet } from "../../src/local/seed.js";
import { CAPI_NS, type Harness, MAPI_NS, ns } from "./harness.js";

/** Creates a one-replica MachineAPI set and waits for its member to run with its mirror; both names. */
export async function setWithRunningMember(
  h: Harness,
  suffix: string,
): Promise<{ name: string; member: string }> {
  const set = mapiMachineSet(ns, suffix, 1);
  const name = nameOf(set);
  await h.admin.create(KINDS.mapiMachineSet, set);
  await h.steady({ kind: "MachineSet", name }, "MachineAPI", 30_000);
  const member = await h.waitFor(
    "the member Running with its mirror",
    async () => {
      const owned = (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((m) =>
        ownerReferencesOf(m).some((r) => r.kind === "MachineSet" && r.name === name),
      );
      const m = owned[0];
      if (!m || getPath(m, ["status", "phase"]) !== "Running") return undefined;
      await h.admin.get(KINDS.capiMachine, CAPI_NS, nameOf(m));
      return nameOf(m);
    },
    30_000,
  );
  return { name, member };
}

/** The admin confirms and deletes the CAPI Cluster: a request for the ClusterAPI side (its CAPI Machines and sets). */
export async function deleteClusterConfirmed(h: Harness, sets: string[] = []): Promise<void> {
  const members = (await h.admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items.map(nameOf);
  await h.admin.patch(KINDS.capiCluster, CAPI_NS, DEMO_INFRASTRUCTURE_NAME, {
    type: "merge",
    body: { metadata: { annotations: { [ANNOTATIONS.confirmDelete]: "true" } } },
  });
  await h.userDelete(KINDS.capiCluster, CAPI_NS, DEMO_INFRASTRUCTURE_NAME, {
    kind: "Cluster",
    name: DEMO_INFRASTRUCTURE_NAME,
    members,
    ...(sets.length > 0 ? { sets } : {}),
  });
}

/** The platform recreates its Cluster (same name, new uid) once the old one is gone. */
export async function recreateClusterWhenGone(h: Harness): Promise<void> {
  await h.waitFor(
    "the Cluster gone",
    async () =>
      (await h.admin.list(KINDS.capiCluster, { namespace: CAPI_NS })).items.length ? undefined : true,
    30_000,
  );
  for (const o of capiCluster(ns)) if (o.kind === "Cluster") await h.admin.create(KINDS.capiCluster, o);
}
