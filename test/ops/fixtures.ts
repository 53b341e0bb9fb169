/**
 * Test support for the admin commands against the test cluster (the local API server, or the real control
 * plane under `npm run test:cluster`): a started cluster seeded with
 * the demo (src/local/demo.ts), and builders that write Machines in the states preflight and
 * uninstall-prepare must judge — provisioning, deleting, unconvertible, fully synchronised with twins, and
 * mid-handover at a chosen step — each written by the identity that would write it in a cluster.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ANNOTATIONS, CAPI_API_VERSION, FINALIZERS, KINDS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { provisionedMapiStatus, seedDemo } from "../../src/local/demo.js";
import { awsProviderSpec, mapiMachine } from "../../src/local/seed.js";
import { createCertificateAuthority } from "../../src/server/certs.js";
import { mapiMachineStatusToCapi, mapiMachineToCapi } from "../../src/sync/conversion/index.js";
import { startTestCluster, type TestCluster } from "../cluster/backend.js";
import { silentLogger } from "../kube/fakes.js";

export const NS = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };

export interface Harness {
  cluster: TestCluster;
  dir: string;
  stop(): Promise<void>;
}

/** A local API server with the demo seed (no product webhooks, no controllers). */
export async function startSeededCluster(): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), "mam-ops-"));
  const cluster = await startTestCluster({
    stateDir: join(dir, "state"),
    ...NS,
    controllerUsers: [],
    webhookCaPem: createCertificateAuthority("ops test webhook CA").certPem,
    logger: silentLogger(),
  });
  // `provisioned: true`: the seed as MAO leaves it (status, finalizers, the handed-over twin).
  await seedDemo(cluster, NS, { provisioned: true });
  return {
    cluster,
    dir,
    async stop() {
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const stamp = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

/** A MAPI Machine as MAO writes it; `status` replaces the provisioned status where given. */
export async function createMapiMachine(
  cluster: TestCluster,
  name: string,
  options: {
    providerSpec?: Record<string, unknown>;
    status?: Record<string, unknown>;
    finalizers?: string[];
    authority?: "MachineAPI" | "ClusterAPI";
  } = {},
): Promise<KubeObject> {
  const mao = cluster.clientAs("mao");
  const seed = mapiMachine(NS, name, "a");
  const authority = options.authority ?? "MachineAPI";
  const { _providerID: providerID, ...provisioned } = provisionedMapiStatus(seed, 40, authority);
  const created = await mao.create(KINDS.mapiMachine, {
    ...seed,
    metadata: { ...seed.metadata, finalizers: options.finalizers ?? [FINALIZERS.mapiMachine] },
    spec: {
      ...seed.spec,
      authoritativeAPI: authority,
      providerID,
      ...(options.providerSpec ? { providerSpec: { value: options.providerSpec } } : {}),
    },
  });
  return mao.updateStatus(KINDS.mapiMachine, { ...created, status: options.status ?? provisioned });
}

export const deviceIndexOne = (): Record<string, unknown> => ({
  ...awsProviderSpec("us-east-1a"),
  deviceIndex: 1,
});

export interface TwinOptions {
  /** Finalizers of the three objects (defaults: the steady state of `authority`). */
  mapiFinalizers?: string[];
  capiFinalizers?: string[];
  awsFinalizers?: string[];
  paused: boolean;
}

/**
 * A MAPI Machine with its CAPI twin and AWSMachine, converted by the real converter. The MAPI status is
 * synchronised (Synchronized=True at its generation, Paused acknowledged) under `authority`.
 */
export async function createTwinnedMachine(
  cluster: TestCluster,
  name: string,
  authority: "MachineAPI" | "ClusterAPI",
  twin: TwinOptions,
): Promise<{ mapi: KubeObject; capi: KubeObject; aws: KubeObject }> {
  const at = stamp();
  const created = await createMapiMachine(cluster, name, {
    authority,
    finalizers:
      twin.mapiFinalizers ??
      (authority === "MachineAPI" ? [FINALIZERS.mapiMachine, FINALIZERS.sync] : [FINALIZERS.sync]),
  });
  const mao = cluster.clientAs("mao");
  const mapi = await mao.updateStatus(KINDS.mapiMachine, {
    ...created,
    status: {
      ...created.status,
      authoritativeAPI: authority,
      synchronizedAPI: authority,
      synchronizedGeneration: created.metadata?.generation ?? 1,
      conditions: [
        { type: "Synchronized", status: "True", reason: "ResourceSynchronized", lastTransitionTime: at },
        {
          type: "Paused",
          status: authority === "MachineAPI" ? "False" : "True",
          reason: "AuthoritativeAPIMachineAPI",
          lastTransitionTime: at,
        },
      ],
    },
  });
  const product = cluster.clientAs("controller");
  const infra = await product.get(KINDS.infrastructure, "", "cluster");
  const converted = mapiMachineToCapi(mapi, infra, { capiNamespace: NS.capiNamespace });
  if (!converted.ok) throw new Error(JSON.stringify(converted.errors));
  const pause: Record<string, string> = twin.paused
    ? { [ANNOTATIONS.paused]: "", [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE }
    : {};
  const capiActive = authority === "ClusterAPI";
  const capi = await product.create(KINDS.capiMachine, {
    ...converted.value.machine,
    metadata: {
      ...converted.value.machine.metadata,
      annotations: { ...converted.value.machine.metadata?.annotations, ...pause },
      finalizers:
        twin.capiFinalizers ?? (capiActive ? [FINALIZERS.capiMachine, FINALIZERS.sync] : [FINALIZERS.sync]),
    },
  });
  const aws = await product.create(KINDS.awsMachine, {
    ...converted.value.infraMachine,
    metadata: {
      ...converted.value.infraMachine.metadata,
      annotations: { ...converted.value.infraMachine.metadata?.annotations, ...pause },
      finalizers:
        twin.awsFinalizers ?? (capiActive ? [FINALIZERS.awsMachine, FINALIZERS.sync] : [FINALIZERS.sync]),
      ownerReferences: [
        { apiVersion: CAPI_API_VERSION, kind: "Machine", name, uid: capi.metadata!.uid!, controller: true },
      ],
    },
  });
  const statuses = mapiMachineStatusToCapi(mapi, infra, { capiMachine: capi, now: at });
  if (!statuses.ok) throw new Error(JSON.stringify(statuses.errors));
  const capiPaused = {
    type: "Paused",
    status: twin.paused ? "True" : "False",
    reason: "x",
    lastTransitionTime: at,
  };
  const withConditions = (status: Record<string, unknown>) => ({
    ...status,
    conditions: [
      ...((status.conditions as Array<{ type: string }> | undefined) ?? []).filter(
        (c) => c.type !== "Paused",
      ),
      capiPaused,
    ],
  });
  const capiWithStatus = await cluster
    .clientAs("capi")
    .updateStatus(KINDS.capiMachine, { ...capi, status: withConditions(statuses.value.machineStatus) });
  const awsWithStatus = await cluster
    .clientAs("capa")
    .updateStatus(KINDS.awsMachine, { ...aws, status: withConditions(statuses.value.infraMachineStatus) });
  return { mapi, capi: capiWithStatus, aws: awsWithStatus };
}

/** Puts a MAPI Machine into `Migrating` from `from` (spec set to the other authority), as the controller would. */
export async function markMigrating(
  cluster: TestCluster,
  name: string,
  from: "MachineAPI" | "ClusterAPI",
): Promise<void> {
  const admin = cluster.clientAs("admin");
  const to = from === "MachineAPI" ? "ClusterAPI" : "MachineAPI";
  await admin.patch(KINDS.mapiMachine, NS.mapiNamespace, name, {
    type: "merge",
    body: { spec: { authoritativeAPI: to } },
  });
  await cluster.clientAs("controller").patch(
    KINDS.mapiMachine,
    NS.mapiNamespace,
    name,
    {
      type: "merge",
      body: {
        status: {
          authoritativeAPI: "Migrating",
          synchronizedAPI: from,
          conditions: [
            {
              type: "Synchronized",
              status: "Unknown",
              reason: "AwaitingFinalSync",
              lastTransitionTime: stamp(),
            },
          ],
        },
      },
    },
    { subresource: "status" },
  );
}

/** Captures what a command writes. */
export const captureIo = () => {
  const out = { stdout: "", stderr: "" };
  return {
    out,
    io: {
      stdout: { write: (t: string) => (out.stdout += t) },
      stderr: { write: (t: string) => (out.stderr += t) },
    },
  };
};
