/**
 * Writes the `--seed demo` objects (seed.ts) into the local cluster the way the cluster's own actors would
 * have: the admin creates the MachineSets; machine-api-operator (MAO) creates their Machines, adds its
 * finalizer and reports them provisioned; one standalone Machine has already been handed over to Cluster API,
 * so its CAPI twin and AWSMachine exist (written by the product's identity, converted by the real converter)
 * and the MAPI copy is paused. Every write goes through the API, under that actor's identity.
 */
import type { KubeClient } from "../kube/client.js";
import { ConflictError } from "../kube/errors.js";
import { CAPI_API_VERSION, FINALIZERS, KINDS, MAPI_API_VERSION, type ResourceType } from "../kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "../kube/object.js";
import { instanceLabels } from "../simulate/mao.js";
import { mapiMachineStatusToCapi, mapiMachineToCapi } from "../sync/conversion/index.js";
import type { LocalCluster } from "./cluster.js";
import { createIfMissing } from "./cluster.js";
import { capiCluster, demoSeed, infrastructure, type SeedNamespaces } from "./seed.js";

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

/** What MAO reports for a provisioned Machine (phase, providerID, node, addresses, Paused acknowledgement). */
export function provisionedMapiStatus(
  machine: KubeObject,
  index: number,
  authority: "MachineAPI" | "ClusterAPI",
): Record<string, unknown> {
  const zone = String(getPath(machine, ["spec", "providerSpec", "value", "placement", "availabilityZone"]));
  const ip = `10.0.${128 + index}.${17 + index}`;
  const nodeName = `ip-10-0-${128 + index}-${17 + index}.ec2.internal`;
  const instanceId = `i-0${(0x5a3c9e1b7d2f4 + index).toString(16)}`;
  const at = now();
  return {
    authoritativeAPI: authority,
    synchronizedAPI: authority,
    phase: "Running",
    providerStatus: { instanceId, instanceState: "running" },
    nodeRef: { apiVersion: "v1", kind: "Node", name: nodeName },
    addresses: [
      { type: "InternalIP", address: ip },
      { type: "InternalDNS", address: nodeName },
    ],
    lastUpdated: at,
    conditions: [
      {
        type: "Paused",
        status: authority === "MachineAPI" ? "False" : "True",
        reason: authority === "MachineAPI" ? "AuthoritativeAPIMachineAPI" : "AuthoritativeAPINotMachineAPI",
        lastTransitionTime: at,
      },
    ],
    _providerID: `aws:///${zone}/${instanceId}`,
  };
}

export interface SeedOptions {
  /**
   * true: write the Machines as MAO would have left them once provisioned (status, providerID, finalizers) and
   * the handed-over Machine's CAPI twin — for admission-only runs, where no stand-in provisions anything.
   * false: write only what a user and the MachineSet controller create; the simulated providers provision the
   * instances and the sync creates the twins (the handed-over Machine is born ClusterAPI).
   */
  provisioned: boolean;
}

/**
 * Writes `status` over the object's status as its controller would. Against a cluster whose controllers
 * already run (the product on the real control plane) they may write between our create and this update:
 * on a conflict the live object is read again and the seed's fields laid over its status.
 */
async function statusOver(
  client: KubeClient,
  type: ResourceType,
  object: KubeObject,
  status: Record<string, unknown>,
): Promise<KubeObject> {
  let current = object;
  for (let attempt = 0; ; attempt++) {
    try {
      const live = isRecord(current.status) ? current.status : {};
      return await client.updateStatus(type, { ...current, status: { ...live, ...status } });
    } catch (e) {
      if (!(e instanceof ConflictError) || attempt >= 5) throw e;
      current = await client.get(type, current.metadata?.namespace ?? "", current.metadata?.name ?? "");
    }
  }
}

export async function seedDemo(
  cluster: Pick<LocalCluster, "clientAs">,
  ns: SeedNamespaces,
  options: SeedOptions,
): Promise<void> {
  const admin = cluster.clientAs("admin");
  const mao = cluster.clientAs("mao");
  const seed = demoSeed(ns);

  const infra = infrastructure();
  const createdInfra = await createIfMissing(admin, KINDS.infrastructure, infra);
  if (createdInfra) await admin.updateStatus(KINDS.infrastructure, { ...createdInfra, status: infra.status });
  const [cluster0, awsCluster] = capiCluster(ns);
  await createIfMissing(admin, KINDS.capiCluster, cluster0!);
  await createIfMissing(admin, KINDS.awsCluster, awsCluster!);

  const setUids = new Map<string, string>();
  for (const set of seed.machineSets) {
    const created = await createIfMissing(admin, KINDS.mapiMachineSet, set);
    if (!created) continue;
    setUids.set(created.metadata!.name!, created.metadata!.uid!);
    if (options.provisioned)
      await statusOver(mao, KINDS.mapiMachineSet, created, {
        authoritativeAPI: "MachineAPI",
        replicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        fullyLabeledReplicas: 1,
        observedGeneration: 1,
      });
  }

  let index = 0;
  for (const { machine, ownerSetName } of seed.machines) {
    index++;
    const handedOver = ownerSetName === undefined;
    const authority = handedOver ? "ClusterAPI" : "MachineAPI";
    const ownerUid = ownerSetName ? setUids.get(ownerSetName) : undefined;
    const { _providerID: providerID, ...status } = provisionedMapiStatus(machine, index, authority);
    const owner =
      ownerSetName && ownerUid
        ? {
            ownerReferences: [
              {
                apiVersion: MAPI_API_VERSION,
                kind: "MachineSet",
                name: ownerSetName,
                uid: ownerUid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {};
    if (!options.provisioned) {
      await createIfMissing(mao, KINDS.mapiMachine, {
        ...machine,
        metadata: { ...machine.metadata, ...owner },
        spec: { ...machine.spec, authoritativeAPI: authority },
      });
      continue;
    }
    const toCreate: KubeObject = {
      ...machine,
      metadata: {
        ...machine.metadata,
        // What MAO's AWS actuator writes once the instance exists (the printer columns read them).
        labels: { ...machine.metadata?.labels, ...instanceLabels(machine) },
        annotations: { ...machine.metadata?.annotations, "machine.openshift.io/instance-state": "running" },
        // MAO's finalizer while MAPI is authoritative; the sync's own on both twins of a handed-over Machine.
        finalizers: handedOver ? [FINALIZERS.sync] : [FINALIZERS.mapiMachine],
        ...owner,
      },
      spec: { ...machine.spec, authoritativeAPI: authority, providerID },
    };
    const created = await createIfMissing(mao, KINDS.mapiMachine, toCreate);
    if (!created) continue;
    const withStatus = await statusOver(mao, KINDS.mapiMachine, created, status);
    if (handedOver) await seedCapiTwin(cluster, ns, withStatus);
  }
}

/** The CAPI Machine and AWSMachine of a Machine already handed over to Cluster API: unpaused, provisioned. */
async function seedCapiTwin(
  cluster: Pick<LocalCluster, "clientAs">,
  ns: SeedNamespaces,
  mapi: KubeObject,
): Promise<void> {
  const product = cluster.clientAs("controller");
  const infra = await product.get(KINDS.infrastructure, "", "cluster");
  const converted = mapiMachineToCapi(mapi, infra, { capiNamespace: ns.capiNamespace });
  if (!converted.ok) throw new Error(`demo seed does not convert: ${JSON.stringify(converted.errors)}`);
  const { machine, infraMachine } = converted.value;
  const clusterObject = await product.get(
    KINDS.capiCluster,
    ns.capiNamespace,
    String(getPath(infra, ["status", "infrastructureName"])),
  );
  const capiMachine = await createIfMissing(product, KINDS.capiMachine, {
    ...machine,
    metadata: {
      ...machine.metadata,
      finalizers: [FINALIZERS.capiMachine, FINALIZERS.sync],
      ownerReferences: [
        {
          apiVersion: CAPI_API_VERSION,
          kind: "Cluster",
          name: clusterObject.metadata!.name!,
          uid: clusterObject.metadata!.uid!,
          blockOwnerDeletion: true,
        },
      ],
    },
  });
  if (!capiMachine) return;
  const aws = await createIfMissing(product, KINDS.awsMachine, {
    ...infraMachine,
    metadata: {
      ...infraMachine.metadata,
      finalizers: [FINALIZERS.awsMachine, FINALIZERS.sync],
      ownerReferences: [
        {
          apiVersion: CAPI_API_VERSION,
          kind: "Machine",
          name: capiMachine.metadata!.name!,
          uid: capiMachine.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  });
  const statuses = mapiMachineStatusToCapi(mapi, infra, { capiMachine, now: now() });
  if (!statuses.ok) throw new Error(`demo seed status does not convert: ${JSON.stringify(statuses.errors)}`);
  await statusOver(cluster.clientAs("capi"), KINDS.capiMachine, capiMachine, statuses.value.machineStatus);
  if (aws)
    await statusOver(cluster.clientAs("capa"), KINDS.awsMachine, aws, statuses.value.infraMachineStatus);
}
