/**
 * Table tests for the DELETE rules on the warn webhook (SPEC §2.3): `delete-nonauthoritative-parent` and
 * `delete-authoritative-via-mirror` (with `requireDeleteConfirmation` on and off).
 */
import { describe, it } from "vitest";
import { ANNOTATIONS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import {
  type Case,
  capiMachine,
  capiMachineSet,
  checkCase,
  deleteRequest,
  edit,
  mapiMachine,
  mapiMachineSet,
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

describe("delete-nonauthoritative-parent", () => {
  const mapiSet = mapiMachineSet({ status: "ClusterAPI" });
  const cases: Case[] = [
    {
      name: "delete-nonauthoritative-parent: warns that the CAPI MachineSet and its Machines keep running",
      webhook: "validate-warn",
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
      webhook: "validate-warn",
      request: deleteRequest(mapiSet, { options: { propagationPolicy: "Foreground" } }),
      objects: [capiMachineSet({ paused: "none" }), ...capiMembers],
      allowed: false,
      rule: "delete-nonauthoritative-parent",
      message: `Deleting MAPI MachineSet openshift-machine-api/${SET} with propagationPolicy=Foreground is refused: it is not authoritative (status.authoritativeAPI=ClusterAPI) and the garbage collector would delete its Machines before they can be orphaned. Delete it with the default propagation or orphan its Machines: oc delete machinesets.machine.openshift.io/${SET} -n openshift-machine-api --cascade=orphan (rule delete-nonauthoritative-parent)`,
    },
    {
      name: "delete-nonauthoritative-parent: silent for an authoritative MAPI MachineSet",
      webhook: "validate-warn",
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

describe("delete-authoritative-via-mirror", () => {
  const confirmed = (o: KubeObject) =>
    edit(o, (c) => {
      c.metadata.annotations[ANNOTATIONS.confirmDelete] = "true";
    });
  const cases: Case[] = [
    {
      name: "delete-authoritative-via-mirror: denies deleting the CAPI mirror of an authoritative MAPI MachineSet without confirmation",
      webhook: "validate-warn",
      request: deleteRequest(capiMachineSet()),
      objects: [mapiMachineSet(), ...mapiMembers],
      allowed: false,
      rule: "delete-authoritative-via-mirror",
      message: `Deleting CAPI MachineSet openshift-cluster-api/${SET} also deletes the authoritative MAPI MachineSet openshift-machine-api/${SET} (and its 2 Machines), which the Machine API controllers run (status.authoritativeAPI=MachineAPI); it needs confirmation. To delete both, confirm first: oc annotate machinesets.cluster.x-k8s.io/${SET} -n openshift-cluster-api machine-api-migration.openshift.io/confirm-delete=true, then delete again — or delete the authoritative copy: oc delete machinesets.machine.openshift.io/${SET} -n openshift-machine-api (rule delete-authoritative-via-mirror)`,
    },
    {
      name: "delete-authoritative-via-mirror: warns once the mirror carries confirm-delete",
      webhook: "validate-warn",
      request: deleteRequest(confirmed(capiMachine())),
      objects: [mapiMachine()],
      allowed: true,
      rule: "delete-authoritative-via-mirror",
      warnings: ["this also deletes the authoritative MAPI Machine openshift-machine-api/worker-a"],
    },
    {
      name: "delete-authoritative-via-mirror: only warns when requireDeleteConfirmation is off",
      webhook: "validate-warn",
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
      webhook: "validate-warn",
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
      name: "delete-authoritative-via-mirror: silent when the MAPI twin is ClusterAPI",
      webhook: "validate-warn",
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
