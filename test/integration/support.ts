/**
 * Shared steps of the integration tests that are not the harness's own (test/integration/harness.ts starts
 * the cluster and controllers; this file holds what several tests then do against it).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { KubeClient } from "../../src/kube/client.js";
import { NotFoundError } from "../../src/kube/errors.js";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import { conditionOf, getPath, isDeleting, type KubeObject, nameOf } from "../../src/kube/object.js";
import { DEMO_INFRASTRUCTURE_NAME, mapiMachine } from "../../src/local/seed.js";
import { statusAuthority } from "../../src/protocol/authority.js";
import { isPaused } from "../../src/protocol/pause.js";
import { type Result, runKubectl } from "../e2e/helpers.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, type Watched } from "./harness.js";

/**
 * A MAPI Machine as a user creates it, watched (I1–I4), until MAO's stand-in runs it and it is steady under
 * MachineAPI with its paused twins.
 */
export const createRunningMachine = async (h: Harness, name: string): Promise<Watched> => {
  const w = h.watch("Machine", name);
  await h.admin.create(KINDS.mapiMachine, mapiMachine(ns, name, "a"));
  await h.waitFor(`MAO's Machine ${name} Running`, async () => {
    const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, name);
    return getPath(o, ["status", "phase"]) === "Running" || undefined;
  });
  await h.steady(w, "MachineAPI");
  return w;
};

export interface AdminKubectl {
  /** kubectl as the cluster admin; a non-zero exit is returned, not thrown. */
  run(args: readonly string[]): Promise<Result>;
  /** Removes its home (kubeconfig and discovery cache). */
  remove(): Promise<void>;
}

/** kubectl as the cluster admin, in a home of its own (never the user's discovery cache). */
export const adminKubectl = async (h: Harness, name: string): Promise<AdminKubectl> => {
  const home = await mkdtemp(join(tmpdir(), `${name}-kubectl-`));
  const kubeconfig = join(home, "admin.kubeconfig");
  await writeFile(kubeconfig, h.cluster.kubeconfigFor("admin"), { mode: 0o600 });
  return {
    run: (args) => runKubectl(home, kubeconfig, args),
    remove: () => rm(home, { recursive: true, force: true }),
  };
};

/**
 * The race of SPEC §4.2, the user's side: an unpaused CAPI Machine and its AWSMachine, created (AWSMachine
 * first) before the MAPI Machine of the same name exists. With `instanceID` the AWSMachine already has an
 * instance; without it, CAPA (where it runs) provisions one.
 */
export const createUnpausedTwins = async (
  client: KubeClient,
  name: string,
  { instanceID }: { instanceID?: string } = {},
): Promise<void> => {
  await client.create(KINDS.awsMachine, {
    apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
    kind: "AWSMachine",
    metadata: { name, namespace: CAPI_NS },
    spec: {
      instanceType: "m6i.xlarge",
      ami: { id: "ami-0c5d61202c3b9c33e" },
      ignition: { storageType: "UnencryptedUserData" },
      ...(instanceID === undefined ? {} : { instanceID }),
    },
  });
  await client.create(KINDS.capiMachine, {
    apiVersion: "cluster.x-k8s.io/v1beta2",
    kind: "Machine",
    metadata: { name, namespace: CAPI_NS },
    spec: {
      clusterName: DEMO_INFRASTRUCTURE_NAME,
      bootstrap: { dataSecretName: "worker-user-data" },
      infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name },
    },
  });
};

/** The object as the API server has it now, or undefined when it does not exist. */
export const liveObject = (
  h: Harness,
  type: ResourceType,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> =>
  h.admin.get(type, namespace, name).catch((e: unknown) => {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  });

/** A seed object made ClusterAPI everywhere it says MachineAPI (spec, status, its template's spec). */
export const asClusterAPI = (o: KubeObject): KubeObject =>
  JSON.parse(JSON.stringify(o).replaceAll('"MachineAPI"', '"ClusterAPI"')) as KubeObject;

/** The MAPI Machines named after `set` (its members). */
export const membersOf = async (h: Harness, set: string, namespace = MAPI_NS, type = KINDS.mapiMachine) =>
  (await h.admin.list(type, { namespace })).items.filter((m) => nameOf(m).startsWith(`${set}-`));

/** Waits until `set` has exactly `count` members, each Running with Synchronized=True; their names, sorted. */
export const runningMembers = (h: Harness, set: string, count: number) =>
  h.waitFor(
    `${count} Machines of ${set} Running and synchronized`,
    async () => {
      const items = await membersOf(h, set);
      const ready = items.filter(
        (m) =>
          getPath(m, ["status", "phase"]) === "Running" &&
          conditionOf(m, "Synchronized")?.status === "True" &&
          typeof m.spec?.providerID === "string",
      );
      return ready.length === count && items.length === count ? items.map(nameOf).sort() : undefined;
    },
    60_000,
  );

/**
 * A ClusterAPI MachineSet's handover to MachineAPI held at step 6: Cluster API's controllers are stopped, so
 * the handover pauses the CAPI set (step 5) and waits for them to acknowledge it.
 */
export const setHandoverAwaitingClusterAPI = async (h: Harness, name: string): Promise<void> => {
  await h.stopStandIn("capi");
  await h.setSpecAuthority("MachineSet", name, "MachineAPI");
  await h.waitFor(
    "the handover Migrating, the CAPI set paused and awaiting its acknowledgement",
    async () =>
      statusAuthority(await liveObject(h, KINDS.mapiMachineSet, MAPI_NS, name)) === "Migrating" &&
      isPaused(await liveObject(h, KINDS.capiMachineSet, CAPI_NS, name)),
    60_000,
  );
};

/** Each member's MAPI Machine, CAPI Machine and AWSMachine, asserted to exist and not to be deleting. */
export const membersKept = async (h: Harness, members: readonly string[]) => {
  const kept: { member: string; mapi: KubeObject; capi: KubeObject; infra: KubeObject }[] = [];
  for (const member of members) {
    const mapi = await liveObject(h, KINDS.mapiMachine, MAPI_NS, member);
    const capi = await liveObject(h, KINDS.capiMachine, CAPI_NS, member);
    const infra = await liveObject(h, KINDS.awsMachine, CAPI_NS, member);
    for (const o of [mapi, capi, infra]) {
      expect(o, `${member} exists`).toBeDefined();
      expect(isDeleting(o), `${o?.kind} ${member} is not being deleted`).toBe(false);
    }
    kept.push({ member, mapi: mapi as KubeObject, capi: capi as KubeObject, infra: infra as KubeObject });
  }
  return kept;
};
