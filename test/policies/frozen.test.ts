/**
 * Table tests for the frozen rules (SPEC §2.3): `mapi-frozen`, `capi-frozen`, `frozen-while-migrating`,
 * with the label/annotation guards, delete marks, finalizer/ownerReference removal, twin-owned labels and
 * the `scale` / `status` subresources; the AWS cases again on OpenStack's and PowerVS's kinds (SPEC §0: the
 * same roles).
 */
import { describe, it } from "vitest";
import { ANNOTATIONS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import {
  awsMachine,
  awsMachineTemplate,
  type Case,
  capiMachine,
  capiMachineSet,
  checkCase,
  edit,
  ibmPowerVSMachine,
  ibmPowerVSMachineTemplate,
  infrastructureObject,
  mapiMachine,
  mapiMachineSet,
  openStackMachine,
  openStackMachineTemplate,
  openstackCapiMachine,
  openstackInfrastructureObject,
  openstackMapiMachine,
  powervsCapiMachine,
  powervsInfrastructureObject,
  powervsMapiMachine,
  scaleRequest,
  statusRequest,
  updateRequest,
} from "./builders.js";

const capiOwned = mapiMachine({ status: "ClusterAPI" });
const capiTwin = capiMachine({ paused: "none" });

describe("mapi-frozen", () => {
  const cases: Case[] = [
    {
      name: "mapi-frozen: denies providerSpec change when status is ClusterAPI",
      request: updateRequest(
        capiOwned,
        edit(capiOwned, (m) => {
          m.spec.providerSpec.value.instanceType = "m6i.2xlarge";
        }),
      ),
      objects: [capiOwned, capiTwin],
      allowed: false,
      rule: "mapi-frozen",
      message:
        "MAPI Machine openshift-machine-api/worker-a is not authoritative (status.authoritativeAPI=ClusterAPI): spec.providerSpec.value.instanceType changed. Edit the Cluster API copy instead: oc edit awsmachines.infrastructure.cluster.x-k8s.io/worker-a -n openshift-cluster-api — or set spec.authoritativeAPI=MachineAPI to migrate back. (rule mapi-frozen)",
    },
    {
      name: "mapi-frozen: denies providerSpec change when status is Migrating, naming the cancel",
      request: updateRequest(
        mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" }),
        edit(mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" }), (m) => {
          m.spec.providerSpec.value.instanceType = "m6i.2xlarge";
        }),
      ),
      allowed: false,
      rule: "mapi-frozen",
      message:
        'MAPI Machine openshift-machine-api/worker-a is being migrated (status.authoritativeAPI=Migrating): spec.providerSpec.value.instanceType changed. Wait until the handover completes (oc get machines.machine.openshift.io/worker-a -n openshift-machine-api -o jsonpath=\'{.status.authoritativeAPI}\'), or cancel it: oc patch machines.machine.openshift.io/worker-a -n openshift-machine-api --type=merge -p \'{"spec":{"authoritativeAPI":"MachineAPI"}}\'. (rule mapi-frozen)',
    },
    {
      name: "mapi-frozen: on OpenStack, denies providerSpec change when status is ClusterAPI, naming the OpenStackMachine",
      request: updateRequest(
        openstackMapiMachine({ status: "ClusterAPI" }),
        edit(openstackMapiMachine({ status: "ClusterAPI" }), (m) => {
          m.spec.providerSpec.value.flavor = "m1.2xlarge";
        }),
      ),
      objects: [openstackInfrastructureObject(), openstackCapiMachine({ paused: "none" })],
      allowed: false,
      rule: "mapi-frozen",
      message:
        "MAPI Machine openshift-machine-api/worker-a is not authoritative (status.authoritativeAPI=ClusterAPI): spec.providerSpec.value.flavor changed. Edit the Cluster API copy instead: oc edit openstackmachines.infrastructure.cluster.x-k8s.io/worker-a -n openshift-cluster-api — or set spec.authoritativeAPI=MachineAPI to migrate back. (rule mapi-frozen)",
    },
    {
      name: "mapi-frozen: without the CAPI twin in the cache, names the served platform's InfraMachine (OpenStack)",
      request: updateRequest(
        openstackMapiMachine({ status: "ClusterAPI" }),
        edit(openstackMapiMachine({ status: "ClusterAPI" }), (m) => {
          m.spec.providerSpec.value.flavor = "m1.2xlarge";
        }),
      ),
      objects: [openstackInfrastructureObject()],
      allowed: false,
      rule: "mapi-frozen",
      message:
        /: spec\.providerSpec\.value\.flavor changed\. Edit the Cluster API copy instead: oc edit openstackmachines\.infrastructure\.cluster\.x-k8s\.io\/worker-a -n openshift-cluster-api — /,
    },
    {
      name: "mapi-frozen: on PowerVS, denies providerSpec change when status is ClusterAPI, naming the IBMPowerVSMachine",
      request: updateRequest(
        powervsMapiMachine({ status: "ClusterAPI" }),
        edit(powervsMapiMachine({ status: "ClusterAPI" }), (m) => {
          m.spec.providerSpec.value.memoryGiB = 64;
        }),
      ),
      objects: [powervsInfrastructureObject(), powervsCapiMachine({ paused: "none" })],
      allowed: false,
      rule: "mapi-frozen",
      message:
        "MAPI Machine openshift-machine-api/worker-a is not authoritative (status.authoritativeAPI=ClusterAPI): spec.providerSpec.value.memoryGiB changed. Edit the Cluster API copy instead: oc edit ibmpowervsmachines.infrastructure.cluster.x-k8s.io/worker-a -n openshift-cluster-api — or set spec.authoritativeAPI=MachineAPI to migrate back. (rule mapi-frozen)",
    },
    {
      name: "mapi-frozen: without the CAPI twin in the cache, names the served platform's InfraMachine (PowerVS)",
      request: updateRequest(
        powervsMapiMachine({ status: "ClusterAPI" }),
        edit(powervsMapiMachine({ status: "ClusterAPI" }), (m) => {
          m.spec.providerSpec.value.memoryGiB = 64;
        }),
      ),
      objects: [powervsInfrastructureObject()],
      allowed: false,
      rule: "mapi-frozen",
      message:
        /: spec\.providerSpec\.value\.memoryGiB changed\. Edit the Cluster API copy instead: oc edit ibmpowervsmachines\.infrastructure\.cluster\.x-k8s\.io\/worker-a -n openshift-cluster-api — /,
    },
    ...(
      [
        ["AWS", [infrastructureObject()]],
        ["no Infrastructure yet: the default platform, AWS", []],
      ] as [string, KubeObject[]][]
    ).map(
      ([served, objects]): Case => ({
        name: `mapi-frozen: without the CAPI twin in the cache, names the served platform's InfraMachine (${served})`,
        request: updateRequest(
          capiOwned,
          edit(capiOwned, (m) => {
            m.spec.providerSpec.value.instanceType = "m6i.2xlarge";
          }),
        ),
        objects,
        allowed: false,
        rule: "mapi-frozen",
        message:
          "MAPI Machine openshift-machine-api/worker-a is not authoritative (status.authoritativeAPI=ClusterAPI): spec.providerSpec.value.instanceType changed. Edit the Cluster API copy instead: oc edit awsmachines.infrastructure.cluster.x-k8s.io/worker-a -n openshift-cluster-api — or set spec.authoritativeAPI=MachineAPI to migrate back. (rule mapi-frozen)",
      }),
    ),
    {
      name: "mapi-frozen: allows providerSpec change when status is MachineAPI",
      request: updateRequest(
        mapiMachine(),
        edit(mapiMachine(), (m) => {
          m.spec.providerSpec.value.instanceType = "m6i.2xlarge";
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "mapi-frozen: denies a taint change and points at the CAPI Machine",
      request: updateRequest(
        capiOwned,
        edit(capiOwned, (m) => {
          m.spec.taints = [{ key: "dedicated", value: "infra", effect: "NoSchedule" }];
        }),
      ),
      objects: [capiTwin],
      allowed: false,
      rule: "mapi-frozen",
      message:
        /spec\.taints changed\. Edit the Cluster API copy instead: oc edit machines\.cluster\.x-k8s\.io\/worker-a -n openshift-cluster-api/,
    },
    {
      name: "mapi-frozen: allows changing only spec.authoritativeAPI (migrating back)",
      request: updateRequest(
        capiOwned,
        edit(capiOwned, (m) => {
          m.spec.authoritativeAPI = "MachineAPI";
        }),
      ),
      objects: [capiTwin],
      allowed: true,
      rule: "none",
    },
    ...[
      ["machine.openshift.io/zone", "label"],
      ["kubernetes.io/hostname", "label"],
      ["topology.cluster.x-k8s.io/owned", "label"],
      ["machine.openshift.io/instance-state", "annotation"],
      ["cluster.x-k8s.io/paused", "annotation"],
      ["example.clusters.x-k8s.io", "annotation"],
    ].map(
      ([key, where]): Case => ({
        name: `mapi-frozen: denies adding protected ${where} ${key} when status is ClusterAPI`,
        request: updateRequest(
          capiOwned,
          edit(capiOwned, (m) => {
            m.metadata[`${where}s`][key as string] = "x";
          }),
        ),
        objects: [capiTwin],
        allowed: false,
        rule: "mapi-frozen",
        message: `MAPI Machine openshift-machine-api/worker-a is not authoritative (status.authoritativeAPI=ClusterAPI): metadata.${where}s["${key}"] changed. Edit the Cluster API copy instead: oc edit machines.cluster.x-k8s.io/worker-a -n openshift-cluster-api — or set spec.authoritativeAPI=MachineAPI to migrate back. (rule mapi-frozen)`,
      }),
    ),
    {
      name: "mapi-frozen: denies removing a protected annotation when status is ClusterAPI",
      request: updateRequest(
        capiOwned,
        edit(capiOwned, (m) => {
          delete m.metadata.annotations["machine.openshift.io/instance-state"];
        }),
      ),
      objects: [capiTwin],
      allowed: false,
      rule: "mapi-frozen",
      message: /metadata\.annotations\["machine\.openshift\.io\/instance-state"\] changed/,
    },
    {
      name: "mapi-frozen: allows an unprotected label of the user's own when status is ClusterAPI",
      request: updateRequest(
        capiOwned,
        edit(capiOwned, (m) => {
          m.metadata.labels["team.example.com/owner"] = "storage";
        }),
      ),
      objects: [capiTwin],
      allowed: true,
      rule: "none",
    },
    ...[
      "machine.openshift.io/delete-machine",
      "machine.openshift.io/cluster-api-delete-machine",
      "cluster.x-k8s.io/delete-machine",
    ].map(
      (mark): Case => ({
        name: `mapi-frozen: delete mark ${mark} is never protected`,
        request: updateRequest(
          capiOwned,
          edit(capiOwned, (m) => {
            m.metadata.annotations[mark] = "true";
          }),
        ),
        objects: [capiTwin],
        allowed: true,
        rule: "none",
      }),
    ),
    {
      name: "mapi-frozen: removing finalizers and ownerReferences is always allowed",
      request: updateRequest(
        edit(capiOwned, (m) => {
          m.metadata.ownerReferences = [
            {
              apiVersion: "machine.openshift.io/v1beta1",
              kind: "MachineSet",
              name: "ms",
              uid: "u1",
              controller: true,
            },
          ];
        }),
        edit(capiOwned, (m) => {
          m.metadata.finalizers = [];
          m.metadata.ownerReferences = [];
        }),
      ),
      objects: [capiTwin],
      allowed: true,
      rule: "none",
    },
    {
      name: "mapi-frozen: denies a label the authoritative twin owns set to another value",
      request: updateRequest(
        capiOwned,
        edit(capiOwned, (m) => {
          m.metadata.labels["team.example.com/owner"] = "storage";
        }),
      ),
      objects: [
        edit(capiTwin, (c) => {
          c.metadata.labels["team.example.com/owner"] = "network";
        }),
      ],
      allowed: false,
      rule: "mapi-frozen",
      message: /metadata\.labels\["team\.example\.com\/owner"\] changed/,
    },
    {
      name: "mapi-frozen: allows setting a twin-owned label to the twin's value",
      request: updateRequest(
        capiOwned,
        edit(capiOwned, (m) => {
          m.metadata.labels["team.example.com/owner"] = "network";
        }),
      ),
      objects: [
        edit(capiTwin, (c) => {
          c.metadata.labels["team.example.com/owner"] = "network";
        }),
      ],
      allowed: true,
      rule: "none",
    },
    {
      name: "mapi-frozen: denies a machine-template-hash change",
      request: updateRequest(
        edit(capiOwned, (m) => {
          m.metadata.labels["machine-template-hash"] = "1234";
        }),
        edit(capiOwned, (m) => {
          m.metadata.labels["machine-template-hash"] = "5678";
        }),
      ),
      objects: [capiTwin],
      allowed: false,
      rule: "mapi-frozen",
      message: /metadata\.labels\["machine-template-hash"\] changed/,
    },
    {
      name: "mapi-frozen: denies scale of a MAPI MachineSet when status is ClusterAPI",
      request: scaleRequest(mapiMachineSet({ status: "ClusterAPI" }), 2, 5),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), capiMachineSet({ paused: "none" })],
      allowed: false,
      rule: "mapi-frozen",
      message:
        "MAPI MachineSet openshift-machine-api/ci-abc12-worker-us-east-1a is not authoritative (status.authoritativeAPI=ClusterAPI): spec.replicas changed. Scale the Cluster API copy instead: oc scale machinesets.cluster.x-k8s.io/ci-abc12-worker-us-east-1a -n openshift-cluster-api --replicas=5 — or set spec.authoritativeAPI=MachineAPI to migrate back. (rule mapi-frozen)",
    },
    {
      // kube sends a Scale to 0 without replicas (`spec: {}`): the suggested command still says 0.
      name: "mapi-frozen: denies a scale to 0 of a MAPI MachineSet when status is ClusterAPI",
      request: scaleRequest(mapiMachineSet({ status: "ClusterAPI" }), 2, 0),
      objects: [mapiMachineSet({ status: "ClusterAPI" }), capiMachineSet({ paused: "none" })],
      allowed: false,
      rule: "mapi-frozen",
      message:
        /Scale the Cluster API copy instead: oc scale machinesets\.cluster\.x-k8s\.io\/ci-abc12-worker-us-east-1a -n openshift-cluster-api --replicas=0 — /,
    },
    {
      name: "mapi-frozen: allows scale of a MAPI MachineSet when status is MachineAPI",
      request: scaleRequest(mapiMachineSet(), 2, 5),
      objects: [mapiMachineSet(), capiMachineSet()],
      allowed: true,
      rule: "none",
    },
    {
      name: "mapi-frozen: a status subresource update is not its business",
      request: statusRequest(
        capiOwned,
        edit(capiOwned, (m) => {
          m.status.phase = "Failed";
        }),
      ),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("capi-frozen", () => {
  const mapi = mapiMachine();
  const infra = awsMachine();
  const cases: Case[] = [
    {
      name: "capi-frozen: denies AWSMachine spec change when the MAPI twin is MachineAPI",
      request: updateRequest(
        infra,
        edit(infra, (a) => {
          a.spec.instanceType = "m6i.2xlarge";
        }),
      ),
      objects: [mapi, capiMachine(), infra],
      allowed: false,
      rule: "capi-frozen",
      message:
        'AWSMachine openshift-cluster-api/worker-a is not authoritative (MAPI Machine openshift-machine-api/worker-a has status.authoritativeAPI=MachineAPI): spec.instanceType changed. Edit the Machine API copy instead: oc edit machines.machine.openshift.io/worker-a -n openshift-machine-api — or migrate it to Cluster API first: oc patch machines.machine.openshift.io/worker-a -n openshift-machine-api --type=merge -p \'{"spec":{"authoritativeAPI":"ClusterAPI"}}\' (rule capi-frozen)',
    },
    {
      name: "capi-frozen: denies OpenStackMachine spec change when the MAPI twin is MachineAPI (the AWSMachine case on OpenStack)",
      request: updateRequest(
        openStackMachine(),
        edit(openStackMachine(), (a) => {
          a.spec.flavor = "m1.2xlarge";
        }),
      ),
      objects: [openstackInfrastructureObject(), openstackMapiMachine(), openstackCapiMachine()],
      allowed: false,
      rule: "capi-frozen",
      message:
        'OpenStackMachine openshift-cluster-api/worker-a is not authoritative (MAPI Machine openshift-machine-api/worker-a has status.authoritativeAPI=MachineAPI): spec.flavor changed. Edit the Machine API copy instead: oc edit machines.machine.openshift.io/worker-a -n openshift-machine-api — or migrate it to Cluster API first: oc patch machines.machine.openshift.io/worker-a -n openshift-machine-api --type=merge -p \'{"spec":{"authoritativeAPI":"ClusterAPI"}}\' (rule capi-frozen)',
    },
    {
      name: "capi-frozen: denies OpenStackMachineTemplate change; its twin is the MachineSet of its template label",
      request: updateRequest(
        openStackMachineTemplate(),
        edit(openStackMachineTemplate(), (t) => {
          t.spec.template.spec.flavor = "m1.2xlarge";
        }),
      ),
      objects: [openstackInfrastructureObject(), mapiMachineSet()],
      allowed: false,
      rule: "capi-frozen",
      message:
        /^OpenStackMachineTemplate openshift-cluster-api\/ci-abc12-worker-us-east-1a-1a2b3c4d is not authoritative \(MAPI MachineSet openshift-machine-api\/ci-abc12-worker-us-east-1a has status\.authoritativeAPI=MachineAPI\): spec\.template\.spec\.flavor changed/,
    },
    {
      name: "capi-frozen: allows OpenStackMachine spec change when the MAPI twin is ClusterAPI",
      request: updateRequest(
        openStackMachine({ paused: "none" }),
        edit(openStackMachine({ paused: "none" }), (a) => {
          a.spec.flavor = "m1.2xlarge";
        }),
      ),
      objects: [openstackMapiMachine({ status: "ClusterAPI" }), openstackCapiMachine({ paused: "none" })],
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-frozen: denies IBMPowerVSMachine spec change when the MAPI twin is MachineAPI (the AWSMachine case on PowerVS)",
      request: updateRequest(
        ibmPowerVSMachine(),
        edit(ibmPowerVSMachine(), (a) => {
          a.spec.memoryGiB = 64;
        }),
      ),
      objects: [powervsInfrastructureObject(), powervsMapiMachine(), powervsCapiMachine()],
      allowed: false,
      rule: "capi-frozen",
      message:
        'IBMPowerVSMachine openshift-cluster-api/worker-a is not authoritative (MAPI Machine openshift-machine-api/worker-a has status.authoritativeAPI=MachineAPI): spec.memoryGiB changed. Edit the Machine API copy instead: oc edit machines.machine.openshift.io/worker-a -n openshift-machine-api — or migrate it to Cluster API first: oc patch machines.machine.openshift.io/worker-a -n openshift-machine-api --type=merge -p \'{"spec":{"authoritativeAPI":"ClusterAPI"}}\' (rule capi-frozen)',
    },
    {
      name: "capi-frozen: denies IBMPowerVSMachineTemplate change; its twin is the MachineSet of its template label",
      request: updateRequest(
        ibmPowerVSMachineTemplate(),
        edit(ibmPowerVSMachineTemplate(), (t) => {
          t.spec.template.spec.systemType = "e980";
        }),
      ),
      objects: [powervsInfrastructureObject(), mapiMachineSet()],
      allowed: false,
      rule: "capi-frozen",
      message:
        /^IBMPowerVSMachineTemplate openshift-cluster-api\/ci-abc12-worker-us-east-1a-1a2b3c4d is not authoritative \(MAPI MachineSet openshift-machine-api\/ci-abc12-worker-us-east-1a has status\.authoritativeAPI=MachineAPI\): spec\.template\.spec\.systemType changed/,
    },
    {
      name: "capi-frozen: allows IBMPowerVSMachine spec change when the MAPI twin is ClusterAPI",
      request: updateRequest(
        ibmPowerVSMachine({ paused: "none" }),
        edit(ibmPowerVSMachine({ paused: "none" }), (a) => {
          a.spec.memoryGiB = 64;
        }),
      ),
      objects: [powervsMapiMachine({ status: "ClusterAPI" }), powervsCapiMachine({ paused: "none" })],
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-frozen: denies CAPI Machine spec change while the MAPI status is absent",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          c.spec.failureDomain = "us-east-1b";
        }),
      ),
      objects: [mapiMachine({ status: "absent" })],
      allowed: false,
      rule: "capi-frozen",
      message:
        /has no status\.authoritativeAPI yet, so Machine API is authoritative\): spec\.failureDomain changed/,
    },
    {
      name: "capi-frozen: allows CAPI Machine spec change when the MAPI twin is ClusterAPI",
      request: updateRequest(
        capiTwin,
        edit(capiTwin, (c) => {
          c.spec.failureDomain = "us-east-1b";
        }),
      ),
      objects: [capiOwned],
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-frozen: allows a CAPI-only Machine (no MAPI twin) to change",
      request: updateRequest(
        capiMachine({ name: "capi-only", paused: "none" }),
        edit(capiMachine({ name: "capi-only", paused: "none" }), (c) => {
          c.spec.failureDomain = "us-east-1b";
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-frozen: denies removing an admin's pause (no marker) while MAPI is authoritative",
      request: updateRequest(
        capiMachine({ paused: "admin" }),
        edit(capiMachine({ paused: "admin" }), (c) => {
          delete c.metadata.annotations[ANNOTATIONS.paused];
        }),
      ),
      objects: [mapi],
      allowed: false,
      rule: "capi-frozen",
      message: /metadata\.annotations\["cluster\.x-k8s\.io\/paused"\] changed/,
    },
    {
      name: "capi-frozen: delete mark cluster.x-k8s.io/delete-machine is never protected",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          c.metadata.annotations["cluster.x-k8s.io/delete-machine"] = "";
        }),
      ),
      objects: [mapi],
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-frozen: denies scale of a CAPI MachineSet when the MAPI twin is MachineAPI",
      request: scaleRequest(capiMachineSet(), 2, 3),
      objects: [mapiMachineSet()],
      allowed: false,
      rule: "capi-frozen",
      message:
        /spec\.replicas changed\. Scale the Machine API copy instead: oc scale machinesets\.machine\.openshift\.io\/ci-abc12-worker-us-east-1a -n openshift-machine-api --replicas=3 — /,
    },
    {
      name: "capi-frozen: allows scale of a CAPI MachineSet when the MAPI twin is ClusterAPI",
      request: scaleRequest(capiMachineSet({ paused: "none" }), 2, 3),
      objects: [mapiMachineSet({ status: "ClusterAPI" })],
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-frozen: denies AWSMachineTemplate change; its twin is the MachineSet of its template label",
      request: updateRequest(
        awsMachineTemplate(),
        edit(awsMachineTemplate(), (t) => {
          t.spec.template.spec.instanceType = "m6i.2xlarge";
        }),
      ),
      objects: [mapiMachineSet()],
      allowed: false,
      rule: "capi-frozen",
      message:
        /^AWSMachineTemplate openshift-cluster-api\/ci-abc12-worker-us-east-1a-1a2b3c4d is not authoritative \(MAPI MachineSet openshift-machine-api\/ci-abc12-worker-us-east-1a has status\.authoritativeAPI=MachineAPI\): spec\.template\.spec\.instanceType changed/,
    },
    {
      name: "capi-frozen: an unknown infra kind (not cached) resolves its twin through its owner Machine",
      request: updateRequest(
        edit(infra, (a) => {
          a.kind = "GCPMachine";
        }),
        edit(infra, (a) => {
          a.kind = "GCPMachine";
          a.spec.instanceType = "n2-standard-4";
        }),
      ),
      objects: [mapi],
      options: {
        freshness: (t) =>
          t.kind === "GCPMachine"
            ? { synced: false, disconnectedForMs: 0 }
            : { synced: true, disconnectedForMs: 0 },
      },
      allowed: false,
      rule: "capi-frozen",
      message: /^GCPMachine openshift-cluster-api\/worker-a is not authoritative/,
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("frozen-while-migrating", () => {
  const migrating = mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" });
  const cases: Case[] = [
    {
      name: "frozen-while-migrating: denies a user label on the MAPI object while Migrating",
      request: updateRequest(
        migrating,
        edit(migrating, (m) => {
          m.metadata.labels["team.example.com/owner"] = "storage";
        }),
      ),
      allowed: false,
      rule: "frozen-while-migrating",
      message:
        /^MAPI Machine openshift-machine-api\/worker-a is being migrated \(status\.authoritativeAPI=Migrating\): metadata\.labels\["team\.example\.com\/owner"\] changed; until the handover ends only/,
    },
    {
      name: "frozen-while-migrating: denies a user label on the CAPI twin while Migrating",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          c.metadata.labels["team.example.com/owner"] = "storage";
        }),
      ),
      objects: [migrating],
      allowed: false,
      rule: "frozen-while-migrating",
      message:
        /^CAPI Machine openshift-cluster-api\/worker-a is frozen while MAPI Machine openshift-machine-api\/worker-a is being migrated/,
    },
    {
      name: "frozen-while-migrating: denies adding a finalizer while Migrating",
      request: updateRequest(
        migrating,
        edit(migrating, (m) => {
          m.metadata.finalizers.push("example.com/hold");
        }),
      ),
      allowed: false,
      rule: "frozen-while-migrating",
      message: /metadata\.finalizers changed/,
    },
    {
      name: "frozen-while-migrating: denies adding an ownerReference while Migrating",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          c.metadata.ownerReferences = [{ apiVersion: "v1", kind: "ConfigMap", name: "x", uid: "u" }];
        }),
      ),
      objects: [migrating],
      allowed: false,
      rule: "frozen-while-migrating",
      message: /metadata\.ownerReferences changed/,
    },
    {
      name: "frozen-while-migrating: allows delete marks and removing finalizers while Migrating",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          c.metadata.annotations["cluster.x-k8s.io/delete-machine"] = "true";
          c.metadata.finalizers = [];
        }),
      ),
      objects: [migrating],
      allowed: true,
      rule: "none",
    },
    {
      name: "frozen-while-migrating: allows a kubectl-apply cancel that rewrites last-applied-configuration",
      request: updateRequest(
        migrating,
        edit(migrating, (m) => {
          m.spec.authoritativeAPI = "MachineAPI";
          m.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}";
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "frozen-while-migrating: not its business when nothing is Migrating",
      request: updateRequest(
        mapiMachine(),
        edit(mapiMachine(), (m) => {
          m.metadata.labels["team.example.com/owner"] = "storage";
        }),
      ),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});
