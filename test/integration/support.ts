/**
 * Shared steps of the integration tests that are not the harness's own (test/integration/harness.ts starts
 * the cluster and controllers; this file holds what several tests then do against it).
 */
import type { KubeClient } from "../../src/kube/client.js";
import { KINDS } from "../../src/kube/kinds.js";
import { DEMO_INFRASTRUCTURE_NAME } from "../../src/local/seed.js";
import { CAPI_NS } from "./harness.js";

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
