/**
 * The product's shipped RBAC against authorization and OpenShift's `OwnerReferencesPermissionEnforcement`
 * admission plugin (SPEC §8, §8.1, §9), on both backends: every twin the sync creates carries an
 * ownerReference with `blockOwnerDeletion`, which the plugin allows only to a writer who may `update` the
 * owner's `finalizers` subresource. This suite found that defect on the real control plane first
 * (decision 35); the local server now enforces the same (decision 47).
 *
 * The last test removes one rule from a copy of manifests/base/rbac.yaml and shows the server's 403: the
 * proof that these tests would catch the defect they were written for.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import type { KubeClient } from "../../src/kube/client.js";
import { ForbiddenError } from "../../src/kube/errors.js";
import { CAPO_API_VERSION, INFRA_API_VERSION, KINDS } from "../../src/kube/kinds.js";
import { isRecord, type KubeObject, type OwnerReference } from "../../src/kube/object.js";
import { capiCluster } from "../../src/local/seed.js";
import { startPlainTestCluster, type TestCluster } from "../cluster/backend.js";

const run = promisify(execFile);
const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";
const ns = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };

let cluster: TestCluster;
let dir: string;
let admin: KubeClient;
let product: KubeClient;
let owners: {
  cluster: KubeObject;
  capiMachineSet: KubeObject;
  capiMachine: KubeObject;
  mapiMachineSet: KubeObject;
};

const ownerRef = (o: KubeObject, controller: boolean) => ({
  apiVersion: String(o.apiVersion),
  kind: String(o.kind),
  name: String(o.metadata?.name),
  uid: String(o.metadata?.uid),
  ...(controller ? { controller: true } : {}),
  blockOwnerDeletion: true,
});

/** A CAPI MachineSet of the cluster, optionally owned. */
const capiMachineSetBody = (name: string, clusterName: string, ownerReferences: OwnerReference[] = []) => ({
  apiVersion: "cluster.x-k8s.io/v1beta2",
  kind: "MachineSet",
  metadata: { name, namespace: CAPI_NS, ...(ownerReferences.length ? { ownerReferences } : {}) },
  spec: {
    clusterName,
    selector: { matchLabels: { a: "b" } },
    template: {
      metadata: { labels: { a: "b" } },
      spec: {
        clusterName,
        bootstrap: { dataSecretName: "worker-user-data" },
        infrastructureRef: {
          apiGroup: "infrastructure.cluster.x-k8s.io",
          kind: "AWSMachineTemplate",
          name: "t",
        },
      },
    },
  },
});

/** A CAPI Machine of the cluster pointing at an AWSMachine of its own name, optionally owned. */
const capiMachineBody = (name: string, clusterName: string, ownerReferences: OwnerReference[] = []) => ({
  apiVersion: "cluster.x-k8s.io/v1beta2",
  kind: "Machine",
  metadata: { name, namespace: CAPI_NS, ...(ownerReferences.length ? { ownerReferences } : {}) },
  spec: {
    clusterName,
    bootstrap: { dataSecretName: "worker-user-data" },
    infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name },
  },
});

/**
 * The four kinds of owner the sync points a twin at (SPEC §4.3, §4.2), each with a dependent it creates (the
 * InfraMachine on each platform).
 */
const dependents = () => [
  {
    what: "CAPI MachineSet → Cluster",
    type: KINDS.capiMachineSet,
    object: capiMachineSetBody("rbac-set", String(owners.cluster.metadata?.name), [
      ownerRef(owners.cluster, false),
    ]),
  },
  {
    what: "CAPI Machine → CAPI MachineSet",
    type: KINDS.capiMachine,
    object: capiMachineBody("rbac-member", String(owners.cluster.metadata?.name), [
      ownerRef(owners.capiMachineSet, true),
    ]),
  },
  {
    what: "AWSMachine → CAPI Machine",
    type: KINDS.awsMachine,
    object: {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSMachine",
      metadata: {
        name: "rbac-infra",
        namespace: CAPI_NS,
        ownerReferences: [ownerRef(owners.capiMachine, true)],
      },
      spec: { instanceType: "m6i.large" },
    },
  },
  {
    // SPEC §0, §5.5: on OpenStack the sync creates CAPO's InfraMachine under the same owner.
    what: "OpenStackMachine → CAPI Machine",
    type: KINDS.openStackMachine,
    object: {
      apiVersion: CAPO_API_VERSION,
      kind: "OpenStackMachine",
      metadata: {
        name: "rbac-openstack-infra",
        namespace: CAPI_NS,
        ownerReferences: [ownerRef(owners.capiMachine, true)],
      },
      spec: { flavor: "m1.large", image: { filter: { name: "rhcos-4.17" } } },
    },
  },
  {
    // SPEC §0, §5.5: on PowerVS the sync creates CAPIBM's InfraMachine under the same owner.
    what: "IBMPowerVSMachine → CAPI Machine",
    type: KINDS.ibmPowerVSMachine,
    object: {
      apiVersion: INFRA_API_VERSION,
      kind: "IBMPowerVSMachine",
      metadata: {
        name: "rbac-powervs-infra",
        namespace: CAPI_NS,
        ownerReferences: [ownerRef(owners.capiMachine, true)],
      },
      spec: {
        serviceInstance: { id: "3f5b2f0c-7d1e-4c2a-9b8e-1a2b3c4d5e6f" },
        image: { name: "rhcos-4.17" },
        network: { regex: "^DHCPSERVER.*_Private$" },
        systemType: "s922",
        processorType: "Shared",
        processors: "0.5",
        memoryGiB: 32,
      },
    },
  },
  {
    what: "MAPI Machine → MAPI MachineSet",
    type: KINDS.mapiMachine,
    object: {
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "Machine",
      metadata: {
        name: "rbac-mirror",
        namespace: MAPI_NS,
        ownerReferences: [ownerRef(owners.mapiMachineSet, true)],
      },
      spec: { authoritativeAPI: "ClusterAPI" },
    },
  },
];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "shipped-rbac-"));
  cluster = await startPlainTestCluster("shipped-rbac-cluster-", ns);
  admin = cluster.clientAs("admin");
  product = cluster.clientAs("controller");
  const [c, awsCluster] = capiCluster(ns);
  const createdCluster = await admin.create(KINDS.capiCluster, c!);
  await admin.create(KINDS.awsCluster, awsCluster!);
  const clusterName = String(createdCluster.metadata?.name);
  const capiMachineSet = await admin.create(
    KINDS.capiMachineSet,
    capiMachineSetBody("owner-set", clusterName),
  );
  const capiMachine = await admin.create(KINDS.capiMachine, capiMachineBody("owner-machine", clusterName));
  const mapiMachineSet = await admin.create(KINDS.mapiMachineSet, {
    apiVersion: "machine.openshift.io/v1beta1",
    kind: "MachineSet",
    metadata: { name: "owner-set", namespace: MAPI_NS },
    spec: {
      authoritativeAPI: "MachineAPI",
      selector: { matchLabels: { a: "b" } },
      template: { metadata: { labels: { a: "b" } }, spec: {} },
    },
  });
  owners = { cluster: createdCluster, capiMachineSet, capiMachine, mapiMachineSet };
});

afterAll(async () => {
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("authorization (SPEC §8, §8.1)", () => {
  it("a user without RBAC is refused: CAPA's identity may not list Secrets in kube-system", async () => {
    const secrets = {
      group: "",
      version: "v1",
      kind: "Secret",
      plural: "secrets",
      namespaced: true,
    } as const;
    await expect(cluster.clientAs("capa").list(secrets, { namespace: "kube-system" })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
  });
});

describe("manifests/base/rbac.yaml as shipped (SPEC §9) against OwnerReferencesPermissionEnforcement", () => {
  it.each([
    "CAPI MachineSet → Cluster",
    "CAPI Machine → CAPI MachineSet",
    "AWSMachine → CAPI Machine",
    "OpenStackMachine → CAPI Machine",
    "IBMPowerVSMachine → CAPI Machine",
    "MAPI Machine → MAPI MachineSet",
  ])("the product may create a twin with blockOwnerDeletion: %s", async (what) => {
    const d = dependents().find((x) => x.what === what)!;
    const created = await product.create(d.type, d.object as KubeObject);
    expect(created.metadata?.ownerReferences?.[0]?.blockOwnerDeletion).toBe(true);
    await admin.delete(d.type, String(d.object.metadata.namespace), String(d.object.metadata.name));
  });
});

describe("a rule removed from the shipped RBAC fails with the server's 403", () => {
  it("without update on cluster.x-k8s.io machinesets/finalizers the CAPI Machine create is refused", async () => {
    const shipped = await readFile("manifests/base/rbac.yaml", "utf8");
    const docs = parseAllDocuments(shipped).map((d) => d.toJS() as KubeObject);
    const withoutRule = docs.map((o) => {
      if (o.kind !== "Role" || o.metadata?.namespace !== CAPI_NS || !Array.isArray(o.rules)) return o;
      const rules = o.rules
        .filter(isRecord)
        .map((r) => ({
          ...r,
          resources: (r.resources as string[]).filter((x) => x !== "machinesets/finalizers"),
        }))
        .filter((r) => r.resources.length > 0);
      return { ...o, rules };
    });
    expect(JSON.stringify(withoutRule)).not.toBe(JSON.stringify(docs));
    const file = join(dir, "rbac-without-rule.yaml");
    await writeFile(file, withoutRule.map((o) => stringify(o)).join("---\n"));
    await run("/usr/bin/kubectl", [
      "--kubeconfig",
      cluster.kubeconfigPath,
      "--cache-dir",
      join(dir, "cache"),
      "apply",
      "-f",
      file,
    ]);
    const d = dependents().find((x) => x.what === "CAPI Machine → CAPI MachineSet")!;
    // RBAC changes reach the authorizer through its informer: wait until the refusal shows.
    let refusal: unknown;
    for (let i = 0; i < 100 && !refusal; i++) {
      try {
        await product.create(d.type, d.object as KubeObject);
        await admin.delete(d.type, CAPI_NS, String(d.object.metadata.name));
        await new Promise((r) => setTimeout(r, 100));
      } catch (e) {
        refusal = e;
      }
    }
    expect(refusal).toBeInstanceOf(ForbiddenError);
    expect(String((refusal as Error).message)).toMatch(
      /cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on/,
    );
    // Put the shipped rules back for anything after this test.
    await run("/usr/bin/kubectl", [
      "--kubeconfig",
      cluster.kubeconfigPath,
      "--cache-dir",
      join(dir, "cache"),
      "apply",
      "-f",
      "manifests/base/rbac.yaml",
    ]);
  });
});
