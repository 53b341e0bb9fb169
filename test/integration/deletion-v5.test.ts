/**
 * Issue 19's deletion defects on the whole product (test/integration/harness.ts: the real webhook, the sync and
 * migration controllers, the MAO/CAPI/CAPA stand-ins sharing one instance ledger), as an admin meets them with
 * kubectl, on the local API server and on the real control plane whose garbage collector makes them bite:
 * - SPEC §4.6 the user's choice travels per Machine: `kubectl delete machineset --cascade=orphan` on a mixed
 *   MachineAPI set (one member migrated to ClusterAPI) terminates nothing, on either API;
 * - SPEC §3.5 deleting the MAPI copy of a MachineSet mid-handover ClusterAPI → MachineAPI rolls back and
 *   orphans: the CAPI set and its Machines keep running (and a later delete of the CAPI set takes its labelled
 *   template with it);
 * - SPEC §4.6 deleting the CAPI `Cluster` is not a request for MAPI machines: the paused mirrors go
 *   (`MirrorDeletedByCascade`), nothing is recreated until a Cluster exists again, no instance is touched;
 * - SPEC §4.2 an admin resolves a needs-attention twin by deleting it: its duplicate instance is terminated,
 *   the delete never reaches the MAPI Machine (last: its race leaves a "created twice" in the ledger).
 * Waiting polls for a state, never asserts elapsed time. Every scenario uses its own names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResourceType } from "../../src/kube/kinds.js";
import { ANNOTATIONS, KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath, isDeleting, nameOf, ownerReferencesOf } from "../../src/kube/object.js";
import { capiCluster, DEMO_INFRASTRUCTURE_NAME, mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { statusAuthority } from "../../src/protocol/authority.js";
import { isPaused } from "../../src/protocol/pause.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";
import {
  type AdminKubectl,
  adminKubectl,
  asClusterAPI,
  createUnpausedTwins,
  liveObject,
  membersKept,
  runningMembers as runningMembersOf,
  setHandoverAwaitingClusterAPI,
} from "./support.js";

let h: Harness;
let admin: AdminKubectl;

beforeAll(async () => {
  h = await startHarness({ name: "deletion-v5" });
  admin = await adminKubectl(h, "deletion-v5");
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await admin?.remove();
});

/** kubectl as the cluster admin; fails the test on a non-zero exit. */
const kubectl = async (args: readonly string[]): Promise<string> => {
  const r = await admin.run(args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
};

const live = (type: ResourceType, namespace: string, name: string) => liveObject(h, type, namespace, name);

/** Gone, or replaced by another incarnation (a different uid). */
const gone = (type: ResourceType, namespace: string, name: string, uid?: string) =>
  h.waitFor(
    `${type.kind} ${namespace}/${name} gone`,
    async () => {
      const o = await live(type, namespace, name);
      return o === undefined || (uid !== undefined && o.metadata?.uid !== uid);
    },
    60_000,
  );

const runningMembers = (set: string, count: number) => runningMembersOf(h, set, count);

const synchronizedReason = (type: ResourceType, name: string, reason: string) =>
  h.waitFor(
    `${type.kind} ${name} Synchronized reason ${reason}`,
    async () => conditionOf(await live(type, MAPI_NS, name), "Synchronized")?.reason === reason,
    60_000,
  );

/** The ledger's terminations of the instances of these Machines. */
const terminationsOf = (machines: readonly string[]) =>
  h.ledger
    .snapshot()
    .instances.filter((i) => machines.includes(i.machineName) && i.terminatedSeq !== undefined)
    .map((i) => `${i.machineName} (${i.side}) terminated by ${i.terminatedBy}`);

const liveInstancesOf = (machines: readonly string[]) =>
  h.ledger
    .snapshot()
    .instances.filter((i) => machines.includes(i.machineName) && i.terminatedSeq === undefined)
    .map((i) => i.instanceId)
    .sort();

describe("SPEC §4.6 the user's choice travels per Machine", () => {
  it("kubectl delete machineset --cascade=orphan on a mixed MachineAPI set terminates nothing: every Machine of both APIs stays, orphaned", async () => {
    const set = mapiMachineSet(ns, "a", 2);
    const name = nameOf(set);
    await h.admin.create(KINDS.mapiMachineSet, set);
    const members = await runningMembers(name, 2);
    await h.quiesce();

    // One member is handed over to ClusterAPI: the set is mixed (SPEC §1).
    const [migrated, stayed] = members as [string, string];
    const w = h.watch("Machine", migrated);
    await h.setSpecAuthority("Machine", migrated, "ClusterAPI");
    await h.steady(w, "ClusterAPI", 60_000);
    await h.quiesce();
    const capiSet = await h.admin.get(KINDS.capiMachineSet, CAPI_NS, name);
    const template = String(getPath(capiSet, ["spec", "template", "spec", "infrastructureRef", "name"]));
    const instances = liveInstancesOf(members);
    expect(instances).toHaveLength(2);

    await kubectl([
      "delete",
      `machinesets.machine.openshift.io/${name}`,
      "-n",
      MAPI_NS,
      "--cascade=orphan",
      "--wait=false",
    ]);
    await gone(KINDS.mapiMachineSet, MAPI_NS, name);
    await gone(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.awsMachineTemplate, CAPI_NS, template);
    await h.quiesce();

    for (const { mapi, capi } of await membersKept(h, members)) {
      // Orphaned on both sides, and never re-owned by the sync (owner references only at creation).
      expect(ownerReferencesOf(mapi).filter((r) => r.kind === "MachineSet")).toEqual([]);
      expect(ownerReferencesOf(capi)).toEqual([]);
    }
    expect(statusAuthority(await live(KINDS.mapiMachine, MAPI_NS, migrated))).toBe("ClusterAPI");
    expect(isPaused(await live(KINDS.capiMachine, CAPI_NS, migrated))).toBe(false);
    expect(statusAuthority(await live(KINDS.mapiMachine, MAPI_NS, stayed))).toBe("MachineAPI");
    expect(terminationsOf(members)).toEqual([]);
    expect(liveInstancesOf(members)).toEqual(instances);
    expect(h.violations()).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});

describe("SPEC §3.5 a MachineSet copy deleted mid-handover follows the set's pre-handover authority", () => {
  it("deleting the MAPI copy during ClusterAPI → MachineAPI rolls back and orphans: the CAPI set and its Machines keep running", async () => {
    const set = asClusterAPI(mapiMachineSet(ns, "b", 2));
    const name = nameOf(set);
    const w = h.watch("MachineSet", name);
    await h.admin.create(KINDS.mapiMachineSet, set);
    const members = await runningMembers(name, 2);
    await h.steady(w, "ClusterAPI", 60_000);
    await h.quiesce();
    const instances = liveInstancesOf(members);
    expect(instances).toHaveLength(2);
    const capiSet = await h.admin.get(KINDS.capiMachineSet, CAPI_NS, name);
    const template = String(getPath(capiSet, ["spec", "template", "spec", "infrastructureRef", "name"]));

    await setHandoverAwaitingClusterAPI(h, name);

    await kubectl(["delete", `machinesets.machine.openshift.io/${name}`, "-n", MAPI_NS, "--wait=false"]);
    await gone(KINDS.mapiMachineSet, MAPI_NS, name);
    await h.startStandIn("capi");
    await h.quiesce();

    const capi = await live(KINDS.capiMachineSet, CAPI_NS, name);
    expect(capi).toBeDefined();
    expect(isDeleting(capi)).toBe(false);
    expect(isPaused(capi)).toBe(false);
    for (const member of members) {
      for (const [type, namespace] of [
        [KINDS.capiMachine, CAPI_NS],
        [KINDS.awsMachine, CAPI_NS],
        [KINDS.mapiMachine, MAPI_NS],
      ] as const) {
        const o = await live(type, namespace, member);
        expect(o, `${type.kind} ${member} exists`).toBeDefined();
        expect(isDeleting(o), `${type.kind} ${member} is not being deleted`).toBe(false);
      }
    }
    expect(terminationsOf(members)).toEqual([]);
    expect(liveInstancesOf(members)).toEqual(instances);
    expect(h.violations()).toEqual([]);
    expect(await h.ledgerViolations()).toEqual([]);

    // The admin deletes the CAPI set after all: its Machines go (each once), and so does the labelled
    // template the sync made for it (SPEC §4.6 templates), though the set has had no MAPI copy since.
    await kubectl(["delete", `machinesets.cluster.x-k8s.io/${name}`, "-n", CAPI_NS, "--wait=false"]);
    await gone(KINDS.capiMachineSet, CAPI_NS, name);
    await gone(KINDS.awsMachineTemplate, CAPI_NS, template);
    for (const member of members) {
      await gone(KINDS.capiMachine, CAPI_NS, member);
      await gone(KINDS.mapiMachine, MAPI_NS, member);
    }
    await h.quiesce();
    expect(terminationsOf(members).sort()).toEqual(
      members.map((m) => `${m} (ClusterAPI) terminated by ClusterAPI`).sort(),
    );
    expect(await h.ledgerViolations()).toEqual([]);
  });
});

describe("SPEC §4.6 deleting the CAPI Cluster is not a request for MAPI machines", () => {
  it("kubectl delete cluster: the paused mirrors go (MirrorDeletedByCascade), none is recreated until a Cluster exists again, no instance is touched", async () => {
    const standalone = "v5-cascade-standalone";
    const set = mapiMachineSet(ns, "c", 2);
    const setName = nameOf(set);
    await h.admin.create(KINDS.mapiMachine, mapiMachine(ns, standalone, "c"));
    await h.admin.create(KINDS.mapiMachineSet, set);
    const members = await runningMembers(setName, 2);
    await h.waitFor(
      "the standalone Machine Running and synchronized",
      async () => {
        const o = await live(KINDS.mapiMachine, MAPI_NS, standalone);
        return (
          getPath(o, ["status", "phase"]) === "Running" && conditionOf(o, "Synchronized")?.status === "True"
        );
      },
      60_000,
    );
    await synchronizedReason(KINDS.mapiMachineSet, setName, "ResourceSynchronized");
    await h.quiesce();
    const machines = [standalone, ...members];
    const instances = liveInstancesOf(machines);
    expect(instances).toHaveLength(3);
    const mirrors: [ResourceType, string, string][] = [
      [
        KINDS.capiMachineSet,
        setName,
        String((await h.admin.get(KINDS.capiMachineSet, CAPI_NS, setName)).metadata?.uid),
      ],
    ];
    for (const m of machines)
      mirrors.push([
        KINDS.capiMachine,
        m,
        String((await h.admin.get(KINDS.capiMachine, CAPI_NS, m)).metadata?.uid),
      ]);

    // The admin confirms and deletes the Cluster (SPEC §2.3 cluster-delete-guard asks for the confirmation).
    const cluster = await h.admin.get(KINDS.capiCluster, CAPI_NS, DEMO_INFRASTRUCTURE_NAME);
    await h.admin.patch(KINDS.capiCluster, CAPI_NS, DEMO_INFRASTRUCTURE_NAME, {
      type: "merge",
      body: { metadata: { annotations: { [ANNOTATIONS.confirmDelete]: "true" } } },
    });
    await kubectl([
      "delete",
      `clusters.cluster.x-k8s.io/${DEMO_INFRASTRUCTURE_NAME}`,
      "-n",
      CAPI_NS,
      "--wait=false",
    ]);
    await gone(KINDS.capiCluster, CAPI_NS, DEMO_INFRASTRUCTURE_NAME, cluster.metadata?.uid);
    for (const [type, name, uid] of mirrors) await gone(type, CAPI_NS, name, uid);
    await h.quiesce();
    expect(terminationsOf(machines)).toEqual([]);
    await synchronizedReason(KINDS.mapiMachineSet, setName, "MirrorDeletedByCascade");
    for (const m of machines) await synchronizedReason(KINDS.mapiMachine, m, "MirrorDeletedByCascade");
    await h.quiesce();

    // No CAPI object is created while no Cluster exists; the MAPI side is untouched.
    expect(await live(KINDS.capiMachineSet, CAPI_NS, setName)).toBeUndefined();
    for (const m of machines) {
      expect(await live(KINDS.capiMachine, CAPI_NS, m)).toBeUndefined();
      expect(await live(KINDS.awsMachine, CAPI_NS, m)).toBeUndefined();
      const mapi = await live(KINDS.mapiMachine, MAPI_NS, m);
      expect(isDeleting(mapi), `MAPI Machine ${m} is not being deleted`).toBe(false);
      expect(getPath(mapi, ["status", "phase"])).toBe("Running");
    }
    expect(isDeleting(await live(KINDS.mapiMachineSet, MAPI_NS, setName))).toBe(false);
    expect(terminationsOf(machines)).toEqual([]);

    // The platform recreates its Cluster under the same name: the mirrors come back, owned by the new one.
    const [seeded] = capiCluster(ns);
    const recreated = await h.admin.create(KINDS.capiCluster, seeded as KubeObject);
    await synchronizedReason(KINDS.mapiMachineSet, setName, "ResourceSynchronized");
    for (const m of machines) await synchronizedReason(KINDS.mapiMachine, m, "ResourceSynchronized");
    await h.quiesce();
    const newSet = await h.admin.get(KINDS.capiMachineSet, CAPI_NS, setName);
    expect(ownerReferencesOf(newSet)).toMatchObject([{ kind: "Cluster", uid: recreated.metadata?.uid }]);
    expect(ownerReferencesOf(await h.admin.get(KINDS.capiMachine, CAPI_NS, standalone))).toMatchObject([
      { kind: "Cluster", uid: recreated.metadata?.uid },
    ]);
    for (const m of members) {
      const capi = await h.admin.get(KINDS.capiMachine, CAPI_NS, m);
      expect(ownerReferencesOf(capi)).toMatchObject([{ kind: "MachineSet", uid: newSet.metadata?.uid }]);
      expect(isPaused(capi)).toBe(true);
    }
    expect(terminationsOf(machines)).toEqual([]);
    expect(liveInstancesOf(machines)).toEqual(instances);
    expect(h.ledger.snapshot().instances.filter((i) => machines.includes(i.machineName))).toHaveLength(3);
    expect(await h.ledgerViolations()).toEqual([]);
  });
});

describe("SPEC §4.2 an admin resolves a needs-attention twin by deleting it", () => {
  it("kubectl delete of the needs-attention CAPI twin: its duplicate instance is terminated, the MAPI Machine and its instance stay, a paused twin replaces it", async () => {
    const name = "v5-race";
    // A user's unpaused CAPI Machine and AWSMachine exist before the MAPI Machine (the race of §4.2): CAPA
    // provisions an instance for them.
    await createUnpausedTwins(h.admin, name);
    const duplicate = await h.waitFor(
      "CAPA's instance for the user's AWSMachine",
      async () => {
        const aws = await live(KINDS.awsMachine, CAPI_NS, name);
        const id = getPath(aws, ["spec", "instanceID"]);
        return typeof id === "string" && id !== "" ? id : undefined;
      },
      60_000,
    );
    // The MAPI Machine arrives as MAO's MachineSet controller would create it.
    await h.cluster.clientAs("mao").create(KINDS.mapiMachine, mapiMachine(ns, name, "d"));
    await synchronizedReason(KINDS.mapiMachine, name, "UnpausedTwinDetected");
    const mapi = await h.waitFor(
      "MAO's own instance for the MAPI Machine",
      async () => {
        const o = await live(KINDS.mapiMachine, MAPI_NS, name);
        return getPath(o, ["status", "phase"]) === "Running" ? o : undefined;
      },
      60_000,
    );
    const own = String(mapi.spec?.providerID).split("/").pop();
    expect(own).not.toBe(duplicate);
    const twin = await h.waitFor(
      "the twin paused and marked needs-attention",
      async () => {
        const capi = await live(KINDS.capiMachine, CAPI_NS, name);
        const aws = await live(KINDS.awsMachine, CAPI_NS, name);
        return [capi, aws].every(
          (o) => isPaused(o) && o?.metadata?.annotations?.[ANNOTATIONS.needsAttention] !== undefined,
        )
          ? { capi, aws }
          : undefined;
      },
      60_000,
    );
    await h.quiesce();

    await kubectl(["delete", `machines.cluster.x-k8s.io/${name}`, "-n", CAPI_NS, "--wait=false"]);
    await gone(KINDS.awsMachine, CAPI_NS, name, twin.aws?.metadata?.uid);
    await gone(KINDS.capiMachine, CAPI_NS, name, twin.capi?.metadata?.uid);
    await synchronizedReason(KINDS.mapiMachine, name, "ResourceSynchronized");
    await h.quiesce();

    const after = await live(KINDS.mapiMachine, MAPI_NS, name);
    expect(isDeleting(after)).toBe(false);
    expect(getPath(after, ["status", "phase"])).toBe("Running");
    expect(isPaused(await live(KINDS.capiMachine, CAPI_NS, name))).toBe(true);
    const instances = h.ledger.snapshot().instances.filter((i) => i.machineName === name);
    expect(instances.find((i) => i.instanceId === duplicate)).toMatchObject({ terminatedBy: "ClusterAPI" });
    expect(instances.find((i) => i.instanceId === own)?.terminatedSeq).toBeUndefined();
    // The race itself created the Machine's instance twice; nothing else broke the first duty.
    const violations = await h.ledgerViolations();
    expect(violations.filter((v) => !v.startsWith(`Machine ${name}: `))).toEqual([]);
    expect(violations).toHaveLength(1);
  });
});
