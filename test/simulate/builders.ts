/**
 * Real-shaped objects for the stand-in tests: MAPI Machines and MachineSets from the demo seed's shapes
 * (src/local/seed.ts), CAPI Machines, MachineSets, and the InfraMachines and templates of both platforms
 * (AWSMachine, OpenStackMachine) valid under the project's CRDs. Small functions with overrides, no copied
 * blobs.
 */
import {
  ANNOTATIONS,
  CAPI_API_VERSION,
  CAPO_API_VERSION,
  INFRA_API_VERSION,
  INFRA_GROUP,
  LABELS,
} from "../../src/kube/kinds.js";
import type { KubeObject, ObjectMeta } from "../../src/kube/object.js";
import { mapiMachine, mapiMachineSet } from "../../src/local/seed.js";

export const MAPI_NS = "openshift-machine-api";
export const CAPI_NS = "openshift-cluster-api";
export const NS = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
export const CLUSTER = "demo-7xk2p";
export const NOW_MS = Date.parse("2026-11-30T10:00:00Z");
export const EARLIER = "2026-11-30T09:00:00Z";

export interface Over {
  meta?: Partial<ObjectMeta>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const apply = (o: KubeObject, over: Over): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, ...over.meta },
  spec: { ...o.spec, ...over.spec },
  ...(over.status ? { status: over.status } : {}),
});

export const paused = { [ANNOTATIONS.paused]: "" };

export const mapiMachineOf = (name: string, over: Over = {}): KubeObject =>
  apply(mapiMachine(NS, name, "a"), over);

export const mapiMachineSetOf = (replicas: number, over: Over = {}): KubeObject =>
  apply(mapiMachineSet(NS, "a", replicas), over);

export const capiMachineOf = (name: string, over: Over = {}): KubeObject =>
  apply(
    {
      apiVersion: CAPI_API_VERSION,
      kind: "Machine",
      metadata: { name, namespace: CAPI_NS, labels: { [LABELS.capiClusterName]: CLUSTER } },
      spec: {
        clusterName: CLUSTER,
        bootstrap: { dataSecretName: "worker-user-data" },
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: "AWSMachine", name },
        failureDomain: "us-east-1a",
      },
    },
    over,
  );

const awsSpec = () => ({
  instanceType: "m6i.xlarge",
  ami: { id: "ami-0c5d61202c3b9c33e" },
  iamInstanceProfile: `${CLUSTER}-worker-profile`,
});

export const awsMachineOf = (name: string, over: Over = {}): KubeObject =>
  apply(
    {
      apiVersion: INFRA_API_VERSION,
      kind: "AWSMachine",
      metadata: { name, namespace: CAPI_NS },
      spec: awsSpec(),
    },
    over,
  );

export const awsMachineTemplateOf = (name: string): KubeObject => ({
  apiVersion: INFRA_API_VERSION,
  kind: "AWSMachineTemplate",
  metadata: { name, namespace: CAPI_NS },
  spec: { template: { spec: awsSpec() } },
});

export const capiMachineSetOf = (name: string, replicas: number, over: Over = {}): KubeObject =>
  apply(
    {
      apiVersion: CAPI_API_VERSION,
      kind: "MachineSet",
      metadata: { name, namespace: CAPI_NS },
      spec: {
        clusterName: CLUSTER,
        replicas,
        selector: { matchLabels: { [LABELS.capiSetName]: name } },
        template: {
          metadata: { labels: { [LABELS.capiSetName]: name } },
          spec: {
            clusterName: CLUSTER,
            bootstrap: { dataSecretName: "worker-user-data" },
            infrastructureRef: { apiGroup: INFRA_GROUP, kind: "AWSMachineTemplate", name },
            failureDomain: "us-east-1b",
          },
        },
      },
    },
    over,
  );

/** An owner reference from `owner` (which must carry a uid). */
export const controlledBy = (owner: KubeObject) => ({
  apiVersion: String(owner.apiVersion),
  kind: String(owner.kind),
  name: String(owner.metadata?.name),
  uid: String(owner.metadata?.uid),
  controller: true,
  blockOwnerDeletion: true,
});

// --- OpenStack (CAPO v1beta1) ------------------------------------------------------------------------

/** The OpenStack demo's compute availability zone `a`. */
export const OS_ZONE = "az-a";

export const mapiOpenStackMachineOf = (name: string, over: Over = {}): KubeObject =>
  apply(mapiMachine(NS, name, "a", undefined, "OpenStack"), over);

/** An OpenStackMachine spec as the converter writes it for the demo's worker providerSpec. */
const openStackSpec = () => ({
  flavor: "m1.xlarge",
  image: { filter: { name: `${CLUSTER}-rhcos` } },
  ports: [{ fixedIPs: [{ subnet: { filter: { name: `${CLUSTER}-nodes` } } }] }],
  securityGroups: [{ filter: { name: `${CLUSTER}-worker` } }],
  trunk: true,
  identityRef: { name: "openstack-cloud-credentials", cloudName: "openstack" },
});

export const openStackMachineOf = (name: string, over: Over = {}): KubeObject =>
  apply(
    {
      apiVersion: CAPO_API_VERSION,
      kind: "OpenStackMachine",
      metadata: { name, namespace: CAPI_NS },
      spec: openStackSpec(),
    },
    over,
  );

export const openStackMachineTemplateOf = (name: string): KubeObject => ({
  apiVersion: CAPO_API_VERSION,
  kind: "OpenStackMachineTemplate",
  metadata: { name, namespace: CAPI_NS },
  spec: { template: { spec: openStackSpec() } },
});

/** A CAPI Machine whose InfraMachine is the OpenStackMachine of its name, in OS_ZONE. */
export const capiOpenStackMachineOf = (name: string, over: Over = {}): KubeObject =>
  capiMachineOf(name, {
    ...over,
    spec: {
      infrastructureRef: { apiGroup: INFRA_GROUP, kind: "OpenStackMachine", name },
      failureDomain: OS_ZONE,
      ...over.spec,
    },
  });

/** A CAPI MachineSet stamping from the OpenStackMachineTemplate `name`, in zone `az-b`. */
export const capiOpenStackMachineSetOf = (name: string, replicas: number, over: Over = {}): KubeObject => {
  const set = capiMachineSetOf(name, replicas, over);
  const template = set.spec?.template as { metadata: unknown; spec: Record<string, unknown> };
  return {
    ...set,
    spec: {
      ...set.spec,
      template: {
        ...template,
        spec: {
          ...template.spec,
          infrastructureRef: { apiGroup: INFRA_GROUP, kind: "OpenStackMachineTemplate", name },
          failureDomain: "az-b",
        },
      },
    },
  };
};
