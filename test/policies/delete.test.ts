/**
 * Table tests for the DELETE rules on the guard webhook (SPEC §2.3): `delete-nonauthoritative-parent`,
 * `delete-authoritative-via-mirror` (with `requireDeleteConfirmation` on and off, and while Migrating),
 * `orphan-ignored-by-capi` and `cluster-delete-guard` (on AWS's, OpenStack's and PowerVS's infrastructure
 * cluster).
 */
import { describe, it } from "vitest";
import { ANNOTATIONS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import {
  awsClusterObject,
  type Case,
  capiClusterObject,
  capiMachine,
  capiMachineSet,
  checkCase,
  deleteRequest,
  edit,
  ibmPowerVSClusterObject,
  infrastructureObject,
  mapiMachine,
  mapiMachineSet,
  openStackClusterObject,
  openstackInfrastructureObject,
  powervsInfrastructureObject,
  twinWorld,
} from "./builders.js";

const SET = "ci-abc12-worker-us-east-1a";
const member = (name: string, apiVersion: string, build: (o: { name: string }) => KubeObject): KubeObject =>
  edit(build({ name }), (m) => {
    m.metadata.ownerReferences = [
      { apiVersion, kind: "MachineSet", name: SET, uid: "u-set", controller: true },
    ];
  });
const capiMembers = ["worker-a", "worker-b", "worker-c"].map((n) =>
  member(n, "cluster.x-k8s.io/v1beta2", (o) => capiMachine({ ...o, paused: "none" })),
);
const mapiMembers = ["worker-a", "worker-b"].map((n) =>
  member(n, "machine.openshift.io/v1beta1", mapiMachine),
);

const withFinalizers = (o: KubeObject, finalizers: string[]): KubeObject =>
  edit(o, (c) => {
    c.metadata.finalizers = [...(c.metadata.finalizers ?? []), ...finalizers];
  });

describe("delete-nonauthoritative-parent", () => {
  const mapiSet = mapiMachineSet({ status: "ClusterAPI" });
  const cases: Case[] = [
    {
      name: "delete-nonauthoritative-parent: warns that the CAPI MachineSet and its Machines keep running",
      webhook: "validate-guard",
      request: deleteRequest(mapiSet),
      objects: [
        capiMachineSet({ paused: "none" }),
        ...capiMembers,
        capiMachine({ name: "stray", paused: "none" }),
      ],
      allowed: true,
      rule: "delete-nonauthoritative-parent",
      warnings: [`CAPI MachineSet openshift-cluster-api/${SET} and its 3 Machines keep running`],
    },
    {
      name: "delete-nonauthoritative-parent: denies propagationPolicy Foreground",
      webhook: "validate-guard",
      request: deleteRequest(mapiSet, { options: { propagationPolicy: "Foreground" } }),
      objects: [capiMachineSet({ paused: "none" }), ...capiMembers],
      allowed: false,
      rule: "delete-nonauthoritative-parent",
      message: `Deleting MAPI MachineSet openshift-machine-api/${SET} with propagationPolicy=Foreground is refused: it is not authoritative (status.authoritativeAPI=ClusterAPI) and the garbage collector would delete its Machines before they can be orphaned. Delete it with the default propagation or orphan its Machines: oc delete machinesets.machine.openshift.io/${SET} -n openshift-machine-api --cascade=orphan (rule delete-nonauthoritative-parent)`,
    },
    {
      // While the MAPI copy hands back from ClusterAPI it is as non-authoritative as under ClusterAPI: the
      // collector would delete its members before the sync could orphan them (decision 73).
      name: "delete-nonauthoritative-parent: denies propagationPolicy Foreground while Migrating from ClusterAPI",
      webhook: "validate-guard",
      request: deleteRequest(
        mapiMachineSet({ status: "Migrating", spec: "MachineAPI", synchronizedAPI: "ClusterAPI" }),
        { options: { propagationPolicy: "Foreground" } },
      ),
      objects: [capiMachineSet({ paused: "none" }), ...capiMembers],
      allowed: false,
      rule: "delete-nonauthoritative-parent",
      message: `Deleting MAPI MachineSet openshift-machine-api/${SET} with propagationPolicy=Foreground is refused: it is not authoritative (status.authoritativeAPI=Migrating, leaving ClusterAPI) and the garbage collector would delete its Machines before they can be orphaned. Delete it with the default propagation or orphan its Machines: oc delete machinesets.machine.openshift.io/${SET} -n openshift-machine-api --cascade=orphan (rule delete-nonauthoritative-parent)`,
    },
    {
      // kube-apiserver keeps an object's `foregroundDeletion` finalizer when a DELETE names no propagation
      // policy, and deletes in the foreground (an audit's find, 2026-12-07; decision 169).
      name: "delete-nonauthoritative-parent: denies a delete without a policy of a set holding the foregroundDeletion finalizer",
      webhook: "validate-guard",
      request: deleteRequest(withFinalizers(mapiSet, ["foregroundDeletion"]), { options: {} }),
      objects: [capiMachineSet({ paused: "none" }), ...capiMembers],
      allowed: false,
      rule: "delete-nonauthoritative-parent",
      message: `Deleting MAPI MachineSet openshift-machine-api/${SET} with propagationPolicy=Foreground (its foregroundDeletion finalizer, kept by a delete that names no policy) is refused: it is not authoritative (status.authoritativeAPI=ClusterAPI) and the garbage collector would delete its Machines before they can be orphaned. Delete it with the default propagation or orphan its Machines: oc delete machinesets.machine.openshift.io/${SET} -n openshift-machine-api --cascade=orphan (rule delete-nonauthoritative-parent)`,
    },
    {
      name: "delete-nonauthoritative-parent: an explicit Background or orphanDependents overrides the finalizer",
      webhook: "validate-guard",
      request: deleteRequest(withFinalizers(mapiSet, ["foregroundDeletion"]), {
        options: { propagationPolicy: "Background" },
      }),
      objects: [capiMachineSet({ paused: "none" }), ...capiMembers],
      allowed: true,
      rule: "delete-nonauthoritative-parent",
      warnings: [`CAPI MachineSet openshift-cluster-api/${SET} and its 3 Machines keep running`],
    },
    {
      name: "delete-nonauthoritative-parent: orphanDependents=false overrides the finalizer too",
      webhook: "validate-guard",
      request: deleteRequest(withFinalizers(mapiSet, ["foregroundDeletion"]), {
        options: { orphanDependents: false },
      }),
      objects: [capiMachineSet({ paused: "none" }), ...capiMembers],
      allowed: true,
      rule: "delete-nonauthoritative-parent",
    },
    {
      name: "delete-nonauthoritative-parent: silent for an authoritative MAPI MachineSet",
      webhook: "validate-guard",
      request: deleteRequest(mapiMachineSet(), { options: { propagationPolicy: "Foreground" } }),
      objects: [capiMachineSet()],
      allowed: true,
      rule: "none",
      warnings: [],
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

const confirmed = (o: KubeObject) =>
  edit(o, (c) => {
    c.metadata.annotations = { ...(c.metadata.annotations ?? {}), [ANNOTATIONS.confirmDelete]: "true" };
  });

describe("delete-authoritative-via-mirror", () => {
  const cases: Case[] = [
    {
      name: "delete-authoritative-via-mirror: denies deleting the CAPI mirror of an authoritative MAPI MachineSet without confirmation",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet()),
      objects: [mapiMachineSet(), ...mapiMembers],
      allowed: false,
      rule: "delete-authoritative-via-mirror",
      message: `Deleting CAPI MachineSet openshift-cluster-api/${SET} also deletes the authoritative MAPI MachineSet openshift-machine-api/${SET} (and its 2 Machines), which the Machine API controllers run (status.authoritativeAPI=MachineAPI); it needs confirmation. To delete both, confirm first: oc annotate machinesets.cluster.x-k8s.io/${SET} -n openshift-cluster-api machine-api-migration.openshift.io/confirm-delete=true, then delete again — or delete the authoritative copy: oc delete machinesets.machine.openshift.io/${SET} -n openshift-machine-api (rule delete-authoritative-via-mirror)`,
    },
    {
      name: "delete-authoritative-via-mirror: warns once the mirror carries confirm-delete",
      webhook: "validate-guard",
      request: deleteRequest(confirmed(capiMachine())),
      objects: [mapiMachine()],
      allowed: true,
      rule: "delete-authoritative-via-mirror",
      warnings: ["this also deletes the authoritative MAPI Machine openshift-machine-api/worker-a"],
    },
    {
      name: "delete-authoritative-via-mirror: only warns when requireDeleteConfirmation is off",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet()),
      objects: [mapiMachineSet(), ...mapiMembers],
      options: { settings: { requireDeleteConfirmation: false } },
      allowed: true,
      rule: "delete-authoritative-via-mirror",
      // 122 characters: the engine cuts warnings to 120 (SPEC §2.1) without splitting a character.
      warnings: [
        `this also deletes the authoritative MAPI MachineSet openshift-machine-api/${SET} (and its 2 Machi...`,
      ],
    },
    {
      name: 'delete-authoritative-via-mirror: confirm-delete must be exactly "true"',
      webhook: "validate-guard",
      request: deleteRequest(
        edit(capiMachine(), (c) => {
          c.metadata.annotations[ANNOTATIONS.confirmDelete] = "yes";
        }),
      ),
      objects: [mapiMachine()],
      allowed: false,
      rule: "delete-authoritative-via-mirror",
    },
    {
      name: "delete-authoritative-via-mirror: denies deleting the CAPI mirror of a MachineSet being migrated from MachineAPI without confirmation",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet()),
      objects: [mapiMachineSet({ status: "Migrating", synchronizedAPI: "MachineAPI" }), ...mapiMembers],
      allowed: false,
      rule: "delete-authoritative-via-mirror",
      message: `Deleting CAPI MachineSet openshift-cluster-api/${SET} also deletes the authoritative MAPI MachineSet openshift-machine-api/${SET} (and its 2 Machines), which is being handed over from the Machine API (status.authoritativeAPI=Migrating, status.synchronizedAPI=MachineAPI); it needs confirmation. To delete both, confirm first: oc annotate machinesets.cluster.x-k8s.io/${SET} -n openshift-cluster-api machine-api-migration.openshift.io/confirm-delete=true, then delete again — or delete the authoritative copy: oc delete machinesets.machine.openshift.io/${SET} -n openshift-machine-api (rule delete-authoritative-via-mirror)`,
    },
    {
      name: "delete-authoritative-via-mirror: denies deleting the CAPI mirror of a Machine being migrated from MachineAPI without confirmation",
      webhook: "validate-guard",
      request: deleteRequest(capiMachine()),
      objects: [mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" })],
      allowed: false,
      rule: "delete-authoritative-via-mirror",
      message:
        /^Deleting CAPI Machine openshift-cluster-api\/worker-a also deletes the authoritative MAPI Machine openshift-machine-api\/worker-a, which is being handed over from the Machine API/,
    },
    {
      name: "delete-authoritative-via-mirror: warns for a confirmed mirror being migrated from MachineAPI",
      webhook: "validate-guard",
      request: deleteRequest(confirmed(capiMachine())),
      objects: [mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" })],
      allowed: true,
      rule: "delete-authoritative-via-mirror",
      warnings: ["this also deletes the authoritative MAPI Machine openshift-machine-api/worker-a"],
    },
    {
      name: "delete-authoritative-via-mirror: silent when the MAPI twin is being migrated from ClusterAPI",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet()),
      objects: [mapiMachineSet({ status: "Migrating", synchronizedAPI: "ClusterAPI" }), ...mapiMembers],
      allowed: true,
      rule: "none",
      warnings: [],
    },
    {
      name: "delete-authoritative-via-mirror: silent when the MAPI twin is ClusterAPI",
      webhook: "validate-guard",
      request: deleteRequest(capiMachine({ paused: "none" })),
      objects: [mapiMachine({ status: "ClusterAPI" })],
      allowed: true,
      rule: "none",
      warnings: [],
    },
    {
      name: "delete-authoritative-via-mirror: DELETE is not the deny webhook's business",
      request: deleteRequest(capiMachine()),
      objects: [mapiMachine()],
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("orphan-ignored-by-capi", () => {
  const orphan = { options: { propagationPolicy: "Orphan" } };
  const cases: Case[] = [
    {
      name: "orphan-ignored-by-capi: denies propagationPolicy Orphan on an unpaused CAPI MachineSet with a MAPI twin",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet({ paused: "none" }), orphan),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), ...capiMembers],
      allowed: false,
      rule: "orphan-ignored-by-capi",
      message: `Deleting CAPI MachineSet openshift-cluster-api/${SET} with propagationPolicy=Orphan is refused: Cluster API's MachineSet controller deletes every Machine of a deleted MachineSet whatever the propagation policy, so --cascade=orphan would not keep its 3 Machines. Delete it with the default propagation if its Machines should go with it: oc delete machinesets.cluster.x-k8s.io/${SET} -n openshift-cluster-api — to keep them, keep the MachineSet. (rule orphan-ignored-by-capi)`,
    },
    {
      name: "orphan-ignored-by-capi: denies the older orphanDependents=true the same way",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet({ paused: "none" }), { options: { orphanDependents: true } }),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), ...capiMembers],
      allowed: false,
      rule: "orphan-ignored-by-capi",
      message:
        /with propagationPolicy=Orphan is refused: Cluster API's MachineSet controller deletes every Machine/,
    },
    {
      name: "orphan-ignored-by-capi: denies a delete without a policy of a set holding the orphan finalizer",
      webhook: "validate-guard",
      request: deleteRequest(withFinalizers(capiMachineSet({ paused: "none" }), ["orphan"]), { options: {} }),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), ...capiMembers],
      allowed: false,
      rule: "orphan-ignored-by-capi",
      message:
        /with propagationPolicy=Orphan \(its orphan finalizer, kept by a delete that names no policy\) is refused/,
    },
    {
      name: "orphan-ignored-by-capi: an explicit Background overrides the orphan finalizer",
      webhook: "validate-guard",
      request: deleteRequest(withFinalizers(capiMachineSet({ paused: "none" }), ["orphan"]), {
        options: { propagationPolicy: "Background" },
      }),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), ...capiMembers],
      allowed: true,
      rule: "none",
    },
    {
      name: "orphan-ignored-by-capi: denies an unpaused CAPI MachineSet even when its MAPI twin is MachineAPI",
      webhook: "validate-guard",
      request: deleteRequest(confirmed(capiMachineSet({ paused: "none" })), orphan),
      objects: [mapiMachineSet(), ...mapiMembers],
      allowed: false,
      rule: "orphan-ignored-by-capi",
    },
    {
      name: "orphan-ignored-by-capi: allows Orphan on the paused mirror (the confirmed delete only warns)",
      webhook: "validate-guard",
      request: deleteRequest(confirmed(capiMachineSet()), orphan),
      objects: [mapiMachineSet(), ...mapiMembers],
      allowed: true,
      rule: "delete-authoritative-via-mirror",
    },
    {
      name: "orphan-ignored-by-capi: an admin's pause counts as paused",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet({ paused: "admin" }), orphan),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), ...capiMembers],
      allowed: true,
      rule: "none",
    },
    {
      name: "orphan-ignored-by-capi: silent for a CAPI MachineSet without a MAPI twin",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet({ paused: "none" }), orphan),
      objects: [...capiMembers],
      allowed: true,
      rule: "none",
    },
    {
      name: "orphan-ignored-by-capi: silent for the default propagation",
      webhook: "validate-guard",
      request: deleteRequest(capiMachineSet({ paused: "none" })),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), ...capiMembers],
      allowed: true,
      rule: "none",
    },
    {
      name: "orphan-ignored-by-capi: DELETE is not the deny webhook's business",
      request: deleteRequest(capiMachineSet({ paused: "none" }), orphan),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), ...capiMembers],
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("cluster-delete-guard", () => {
  // worker-a and SET_A are MachineAPI, worker-c is Migrating: three MAPI objects mirror into the Cluster.
  const world = () => [infrastructureObject(), ...twinWorld("AWS")];
  const openstackWorld = () => [openstackInfrastructureObject(), ...twinWorld("OpenStack")];
  const powervsWorld = () => [powervsInfrastructureObject(), ...twinWorld("IBMPowerVS")];
  const allClusterAPI = () => [
    infrastructureObject(),
    mapiMachine({ status: "ClusterAPI" }),
    mapiMachineSet({ status: "ClusterAPI" }),
  ];
  const cases: Case[] = [
    {
      name: "cluster-delete-guard: denies deleting the CAPI Cluster while MAPI objects are MachineAPI or Migrating",
      webhook: "validate-guard",
      request: deleteRequest(capiClusterObject()),
      objects: world(),
      allowed: false,
      rule: "cluster-delete-guard",
      message:
        "Deleting CAPI Cluster openshift-cluster-api/ci-abc12 needs confirmation: it holds the paused Cluster API copies of 3 MAPI objects (2 Machines, 1 MachineSet; status.authoritativeAPI MachineAPI or Migrating), and they would be deleted with it. Their instances are not affected: the copies are released without any provider acting on them and recreated once a Cluster exists again. To delete it, confirm first: oc annotate clusters.cluster.x-k8s.io/ci-abc12 -n openshift-cluster-api machine-api-migration.openshift.io/confirm-delete=true, then delete again. (rule cluster-delete-guard)",
    },
    {
      name: "cluster-delete-guard: denies deleting the infrastructure cluster (AWSCluster) the same way",
      webhook: "validate-guard",
      request: deleteRequest(awsClusterObject()),
      objects: world(),
      allowed: false,
      rule: "cluster-delete-guard",
      message:
        /^Deleting AWSCluster openshift-cluster-api\/ci-abc12 needs confirmation: it holds the paused Cluster API copies of 3 MAPI objects .* oc annotate awsclusters\.infrastructure\.cluster\.x-k8s\.io\/ci-abc12 -n openshift-cluster-api machine-api-migration\.openshift\.io\/confirm-delete=true, then delete again\. \(rule cluster-delete-guard\)$/,
    },
    {
      name: "cluster-delete-guard: denies deleting the infrastructure cluster (OpenStackCluster) the same way",
      webhook: "validate-guard",
      request: deleteRequest(openStackClusterObject()),
      objects: openstackWorld(),
      allowed: false,
      rule: "cluster-delete-guard",
      message:
        "Deleting OpenStackCluster openshift-cluster-api/ci-abc12 needs confirmation: it holds the paused Cluster API copies of 3 MAPI objects (2 Machines, 1 MachineSet; status.authoritativeAPI MachineAPI or Migrating), and they would be deleted with it. Their instances are not affected: the copies are released without any provider acting on them and recreated once a Cluster exists again. To delete it, confirm first: oc annotate openstackclusters.infrastructure.cluster.x-k8s.io/ci-abc12 -n openshift-cluster-api machine-api-migration.openshift.io/confirm-delete=true, then delete again. (rule cluster-delete-guard)",
    },
    {
      name: "cluster-delete-guard: warns once the OpenStackCluster carries confirm-delete",
      webhook: "validate-guard",
      request: deleteRequest(confirmed(openStackClusterObject())),
      objects: openstackWorld(),
      allowed: true,
      rule: "cluster-delete-guard",
      warnings: [
        "this releases the paused Cluster API copies of 3 MAPI objects; their instances keep running",
      ],
    },
    {
      name: "cluster-delete-guard: silent for an OpenStackCluster other than the Infrastructure's",
      webhook: "validate-guard",
      request: deleteRequest(openStackClusterObject({ name: "scratch" })),
      objects: openstackWorld(),
      allowed: true,
      rule: "none",
    },
    {
      name: "cluster-delete-guard: denies deleting the infrastructure cluster (IBMPowerVSCluster) the same way",
      webhook: "validate-guard",
      request: deleteRequest(ibmPowerVSClusterObject()),
      objects: powervsWorld(),
      allowed: false,
      rule: "cluster-delete-guard",
      message:
        "Deleting IBMPowerVSCluster openshift-cluster-api/ci-abc12 needs confirmation: it holds the paused Cluster API copies of 3 MAPI objects (2 Machines, 1 MachineSet; status.authoritativeAPI MachineAPI or Migrating), and they would be deleted with it. Their instances are not affected: the copies are released without any provider acting on them and recreated once a Cluster exists again. To delete it, confirm first: oc annotate ibmpowervsclusters.infrastructure.cluster.x-k8s.io/ci-abc12 -n openshift-cluster-api machine-api-migration.openshift.io/confirm-delete=true, then delete again. (rule cluster-delete-guard)",
    },
    {
      name: "cluster-delete-guard: warns once the IBMPowerVSCluster carries confirm-delete",
      webhook: "validate-guard",
      request: deleteRequest(confirmed(ibmPowerVSClusterObject())),
      objects: powervsWorld(),
      allowed: true,
      rule: "cluster-delete-guard",
      warnings: [
        "this releases the paused Cluster API copies of 3 MAPI objects; their instances keep running",
      ],
    },
    {
      name: "cluster-delete-guard: silent for an IBMPowerVSCluster other than the Infrastructure's",
      webhook: "validate-guard",
      request: deleteRequest(ibmPowerVSClusterObject({ name: "scratch" })),
      objects: powervsWorld(),
      allowed: true,
      rule: "none",
    },
    {
      name: "cluster-delete-guard: counts a Machine being migrated from ClusterAPI (a cascade ends its handover at MachineAPI)",
      webhook: "validate-guard",
      request: deleteRequest(capiClusterObject()),
      objects: [
        infrastructureObject(),
        mapiMachine({ status: "Migrating", synchronizedAPI: "ClusterAPI" }),
        mapiMachineSet({ status: "ClusterAPI" }),
      ],
      allowed: false,
      rule: "cluster-delete-guard",
      message: /the paused Cluster API copies of 1 MAPI object \(1 Machine; /,
    },
    {
      name: "cluster-delete-guard: denies whatever requireDeleteConfirmation says",
      webhook: "validate-guard",
      request: deleteRequest(capiClusterObject()),
      objects: world(),
      options: { settings: { requireDeleteConfirmation: false } },
      allowed: false,
      rule: "cluster-delete-guard",
    },
    {
      name: "cluster-delete-guard: warns once the Cluster carries confirm-delete",
      webhook: "validate-guard",
      request: deleteRequest(confirmed(capiClusterObject())),
      objects: world(),
      allowed: true,
      rule: "cluster-delete-guard",
      warnings: [
        "this releases the paused Cluster API copies of 3 MAPI objects; their instances keep running",
      ],
    },
    {
      name: 'cluster-delete-guard: confirm-delete must be exactly "true"',
      webhook: "validate-guard",
      request: deleteRequest(
        edit(awsClusterObject(), (c) => {
          c.metadata.annotations[ANNOTATIONS.confirmDelete] = "yes";
        }),
      ),
      objects: world(),
      allowed: false,
      rule: "cluster-delete-guard",
    },
    {
      name: "cluster-delete-guard: silent when every MAPI object is ClusterAPI",
      webhook: "validate-guard",
      request: deleteRequest(capiClusterObject()),
      objects: allClusterAPI(),
      allowed: true,
      rule: "none",
      warnings: [],
    },
    {
      name: "cluster-delete-guard: silent for a Cluster other than the Infrastructure's",
      webhook: "validate-guard",
      request: deleteRequest(capiClusterObject({ name: "scratch" })),
      objects: world(),
      allowed: true,
      rule: "none",
    },
    {
      name: "cluster-delete-guard: guards when the Infrastructure is not known",
      webhook: "validate-guard",
      request: deleteRequest(capiClusterObject({ name: "scratch" })),
      objects: twinWorld("AWS"),
      allowed: false,
      rule: "cluster-delete-guard",
    },
    {
      name: "cluster-delete-guard: DELETE is not the deny webhook's business",
      request: deleteRequest(capiClusterObject()),
      objects: world(),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});
