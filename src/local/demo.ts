/**
 * Writes the `--seed demo` / `demo-openstack` / `demo-powervs` objects (seed.ts) into the local cluster the
 * way the cluster's own actors would have: the admin creates the Infrastructure, the CAPI Cluster and its
 * InfraCluster (`seedInfrastructure`, also called alone before the process reads its platform) and the
 * MachineSets; machine-api-operator (MAO) creates their Machines, adds its finalizer and reports them
 * provisioned; one standalone Machine has already been handed over to Cluster API, so its CAPI twin and
 * InfraMachine (AWSMachine, OpenStackMachine, IBMPowerVSMachine) exist (written by the product's identity,
 * converted by the real converter) and the MAPI copy is paused. Every write goes through the API, under that
 * actor's identity. Nothing here names a platform: seed.ts's `DemoPlatform`, the conversion registry's module
 * and the stand-ins' simulated cloud (src/simulate/clouds.ts: providerID form, running state, MAO's labels and
 * providerStatus) say what differs.
 */
import type { KubeClient } from "../kube/client.js";
import { ConflictError } from "../kube/errors.js";
import { CAPI_API_VERSION, FINALIZERS, KINDS, MAPI_API_VERSION, type ResourceType } from "../kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "../kube/object.js";
import { cloudOf } from "../simulate/clouds.js";
import { infraProviderOf } from "../simulate/index.js";
import { instanceLabels } from "../simulate/mao.js";
import { mapiMachineStatusToCapi, mapiMachineToCapi } from "../sync/conversion/index.js";
import type { LocalCluster } from "./cluster.js";
import { createIfMissing } from "./cluster.js";
import {
  capiCluster,
  type DemoPlatformType,
  demoPlatform,
  demoSeed,
  infrastructure,
  platformConverterOf,
  type SeedNamespaces,
} from "./seed.js";

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * What MAO reports for a provisioned Machine on `platform` (phase, providerID, node, addresses, Paused
 * acknowledgement): the demo's fixed instance, in the forms of the platform's simulated cloud.
 */
export function provisionedMapiStatus(
  machine: KubeObject,
  index: number,
  authority: "MachineAPI" | "ClusterAPI",
  platform: DemoPlatformType = "AWS",
): Record<string, unknown> {
  const demo = demoPlatform(platform);
  const cloud = cloudOf(platformConverterOf(platform));
  // A providerSpec without a zone (PowerVS) runs where the cloud puts it.
  const zoneOfSpec = getPath(machine, ["spec", "providerSpec", "value", ...cloud.mapiZonePath]);
  const zone = typeof zoneOfSpec === "string" ? zoneOfSpec : cloud.defaultZone;
  const ip = `10.0.${128 + index}.${17 + index}`;
  const nodeName = demo.nodeName(ip, machine.metadata?.name ?? "");
  const instanceId = demo.instanceId(index);
  const providerID = cloud.providerID(zone, instanceId);
  const at = now();
  return {
    authoritativeAPI: authority,
    synchronizedAPI: authority,
    phase: "Running",
    providerStatus: cloud.providerStatus?.(instanceId, providerID) ?? {
      instanceId,
      instanceState: cloud.runningState,
    },
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
    _providerID: providerID,
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
  /**
   * The platform of the cluster (default AWS: `--seed demo`; OpenStack: `--seed demo-openstack`; PowerVS:
   * `--seed demo-powervs`).
   */
  platform?: DemoPlatformType;
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

/**
 * The cluster-wide facts the process reads before it picks its platform: `Infrastructure/cluster` (status
 * written as its operator would), the CAPI Cluster and the platform's InfraCluster. Creates only what is
 * missing, so calling it again (or `seedDemo` after it) changes nothing.
 */
export async function seedInfrastructure(
  cluster: Pick<LocalCluster, "clientAs">,
  ns: SeedNamespaces,
  platformType: string,
): Promise<void> {
  const platform = demoPlatform(platformType).type;
  const admin = cluster.clientAs("admin");
  const infra = infrastructure(platform);
  const createdInfra = await createIfMissing(admin, KINDS.infrastructure, infra);
  if (createdInfra) await admin.updateStatus(KINDS.infrastructure, { ...createdInfra, status: infra.status });
  const [capi, infraCluster] = capiCluster(ns, platform);
  await createIfMissing(admin, KINDS.capiCluster, capi!);
  await createIfMissing(admin, platformConverterOf(platform).infraCluster, infraCluster!);
}

export async function seedDemo(
  cluster: Pick<LocalCluster, "clientAs">,
  ns: SeedNamespaces,
  options: SeedOptions,
): Promise<void> {
  const platform = options.platform ?? "AWS";
  const admin = cluster.clientAs("admin");
  const mao = cluster.clientAs("mao");
  const seed = demoSeed(ns, platform);
  const cloud = cloudOf(platformConverterOf(platform));

  await seedInfrastructure(cluster, ns, platform);

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
    const { _providerID: providerID, ...status } = provisionedMapiStatus(machine, index, authority, platform);
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
        // What MAO's actuator writes once the instance exists (the printer columns read them).
        labels: { ...machine.metadata?.labels, ...instanceLabels(machine, cloud) },
        annotations: {
          ...machine.metadata?.annotations,
          "machine.openshift.io/instance-state": cloud.runningState,
        },
        // MAO's finalizer while MAPI is authoritative; the sync's own on both twins of a handed-over Machine.
        finalizers: handedOver ? [FINALIZERS.sync] : [FINALIZERS.mapiMachine],
        ...owner,
      },
      spec: { ...machine.spec, authoritativeAPI: authority, providerID },
    };
    const created = await createIfMissing(mao, KINDS.mapiMachine, toCreate);
    if (!created) continue;
    const withStatus = await statusOver(mao, KINDS.mapiMachine, created, status);
    if (handedOver) await seedCapiTwin(cluster, ns, withStatus, platform);
  }
}

/**
 * The CAPI Machine and InfraMachine of a Machine already handed over to Cluster API: unpaused, provisioned;
 * the InfraMachine's status written by the platform's provider.
 */
async function seedCapiTwin(
  cluster: Pick<LocalCluster, "clientAs">,
  ns: SeedNamespaces,
  mapi: KubeObject,
  platform: DemoPlatformType,
): Promise<void> {
  const product = cluster.clientAs("controller");
  const converter = platformConverterOf(platform);
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
  const createdInfraMachine = await createIfMissing(product, converter.infraMachine, {
    ...infraMachine,
    metadata: {
      ...infraMachine.metadata,
      finalizers: [converter.infraMachineFinalizer, FINALIZERS.sync],
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
  // The provider stand-in's own identity (its kubeconfig context is the stand-in's name).
  const provider = cluster.clientAs(infraProviderOf(platformConverterOf(platform)).name);
  const statuses = mapiMachineStatusToCapi(mapi, infra, { capiMachine, now: now() });
  if (!statuses.ok) throw new Error(`demo seed status does not convert: ${JSON.stringify(statuses.errors)}`);
  await statusOver(cluster.clientAs("capi"), KINDS.capiMachine, capiMachine, statuses.value.machineStatus);
  if (!createdInfraMachine) return;
  // The provider records the instance it runs where the converter does not (CAPO fills instanceID itself);
  // where the InfraMachine's status names it (CAPIBM), the status below records it.
  const instanceId = cloudOf(converter).instanceIdOf(String(getPath(mapi, ["spec", "providerID"])));
  const recorded =
    getPath(createdInfraMachine, ["spec", "instanceID"]) === undefined &&
    statuses.value.infraMachineStatus.instanceID === undefined &&
    instanceId !== undefined
      ? await provider.update(converter.infraMachine, {
          ...createdInfraMachine,
          spec: { ...createdInfraMachine.spec, instanceID: instanceId },
        })
      : createdInfraMachine;
  await statusOver(provider, converter.infraMachine, recorded, statuses.value.infraMachineStatus);
}
