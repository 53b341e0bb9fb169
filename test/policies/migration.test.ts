/**
 * Table tests for the migration rules (SPEC §2.3): `migration-machine-busy`, `migration-twin-not-ready`,
 * `migration-unsupported-owner`, `migration-unconvertible` (with a fake converter) and the warning
 * `migration-not-synchronized`; and that a cancel is admissible in every state.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import { decide } from "../../src/policies/engine.js";
import type { ConvertibilityCheck } from "../../src/policies/types.js";
import {
  type Case,
  capiMachine,
  capiMachineSet,
  checkCase,
  context,
  edit,
  infrastructureObject,
  mapiMachine,
  mapiMachineSet,
  openstackCapiMachine,
  openstackInfrastructureObject,
  openstackMapiMachine,
  updateRequest,
} from "./builders.js";

const toCapi = (o: KubeObject) =>
  updateRequest(
    o,
    edit(o, (m) => {
      m.spec.authoritativeAPI = "ClusterAPI";
    }),
  );

const toMapi = (o: KubeObject) =>
  updateRequest(
    o,
    edit(o, (m) => {
      m.spec.authoritativeAPI = "MachineAPI";
    }),
  );

const cpmsOwned = edit(mapiMachine({ name: "master-0" }), (m) => {
  m.metadata.ownerReferences = [
    {
      apiVersion: "machine.openshift.io/v1",
      kind: "ControlPlaneMachineSet",
      name: "cluster",
      uid: "u-cpms",
      controller: true,
    },
  ];
});

const unconvertible: ConvertibilityCheck = () => [
  { path: "spec.providerSpec.value.deviceIndex", value: 1, message: "deviceIndex must be 0 or unset" },
  {
    path: "spec.providerSpec.value.ami",
    value: { arn: "arn:aws:ec2:x" },
    message: "unable to convert AMI ARN reference. Not supported in CAPI",
  },
];

/** What the converter says of an OpenStackMachine whose flavor is an ID (SPEC §5.5). */
const flavorByID: ConvertibilityCheck = () => [
  {
    path: "spec.flavorID",
    value: "3a8e1f2c-7b6d-4e5f-9a0b-1c2d3e4f5a6b",
    message: "MAPO only supports defining flavors via names",
  },
];

describe("migration rules", () => {
  const cases: Case[] = [
    {
      name: "migration-machine-busy: denies while status.phase is Provisioning",
      request: toCapi(mapiMachine({ phase: "Provisioning" })),
      objects: [capiMachine()],
      allowed: false,
      rule: "migration-machine-busy",
      message:
        "MAPI Machine openshift-machine-api/worker-a cannot migrate to ClusterAPI yet: it is still provisioning (status.phase=Provisioning) and its instance may exist without a providerID. Retry once oc get machines.machine.openshift.io/worker-a -n openshift-machine-api -o jsonpath='{.status.phase}' prints Provisioned or Running. (rule migration-machine-busy)",
    },
    {
      name: "migration-machine-busy: denies while status.phase is empty",
      request: toCapi(mapiMachine({ phase: "" })),
      objects: [capiMachine()],
      allowed: false,
      rule: "migration-machine-busy",
      message: /it is still provisioning \(status\.phase is empty\)/,
    },
    {
      name: "migration-machine-busy: denies while the Machine is being deleted",
      request: toCapi(
        edit(mapiMachine(), (m) => {
          m.metadata.deletionTimestamp = "2026-11-30T09:30:00Z";
        }),
      ),
      objects: [capiMachine()],
      allowed: false,
      rule: "migration-machine-busy",
      message: /it is being deleted \(metadata\.deletionTimestamp is set\)/,
    },
    {
      name: "migration-machine-busy: denies a Failed Machine without a providerID",
      request: toCapi(
        edit(mapiMachine({ phase: "Failed" }), (m) => {
          delete m.spec.providerID;
        }),
      ),
      objects: [capiMachine()],
      allowed: false,
      rule: "migration-machine-busy",
      message:
        "MAPI Machine openshift-machine-api/worker-a cannot migrate to ClusterAPI: it failed without a providerID (status.phase=Failed, spec.providerID is empty), so an instance it may have started cannot be found and the other side would create a second one. Delete it instead and let its MachineSet replace it: oc delete machines.machine.openshift.io/worker-a -n openshift-machine-api (rule migration-machine-busy)",
    },
    {
      name: "migration-machine-busy: denies a Failed Machine whose providerID is empty",
      request: toCapi(
        edit(mapiMachine({ phase: "Failed" }), (m) => {
          m.spec.providerID = "";
        }),
      ),
      objects: [capiMachine()],
      allowed: false,
      rule: "migration-machine-busy",
      message: /it failed without a providerID/,
    },
    {
      name: "migration-machine-busy: denies a Failed Machine that gets a providerID only in the same request",
      request: updateRequest(
        edit(mapiMachine({ phase: "Failed" }), (m) => {
          delete m.spec.providerID;
        }),
        edit(mapiMachine({ phase: "Failed" }), (m) => {
          m.spec.authoritativeAPI = "ClusterAPI";
          m.spec.providerID = "aws:///us-east-1a/i-0ffffffffffffffff";
        }),
      ),
      objects: [capiMachine()],
      allowed: false,
      rule: "migration-machine-busy",
      message: /it failed without a providerID/,
    },
    {
      name: "migration-machine-busy: allows a Failed Machine with a providerID",
      request: toCapi(mapiMachine({ phase: "Failed" })),
      objects: [capiMachine()],
      allowed: true,
      rule: "none",
    },
    {
      name: "migration-machine-busy: allows a Running Machine",
      request: toCapi(mapiMachine()),
      objects: [capiMachine()],
      allowed: true,
      rule: "none",
    },
    {
      name: "migration-twin-not-ready: denies when the CAPI twin is not provisioned",
      request: toCapi(mapiMachine()),
      objects: [capiMachine({ provisioned: false })],
      allowed: false,
      rule: "migration-twin-not-ready",
      message:
        "MAPI Machine openshift-machine-api/worker-a cannot migrate to ClusterAPI yet: its twin CAPI Machine openshift-cluster-api/worker-a has not provisioned its infrastructure (status.initialization.infrastructureProvisioned is not true). Retry once oc get machines.cluster.x-k8s.io/worker-a -n openshift-cluster-api -o jsonpath='{.status.initialization.infrastructureProvisioned}' prints true. (rule migration-twin-not-ready)",
    },
    {
      name: "migration-twin-not-ready: denies when the CAPI twin is being deleted",
      request: toCapi(mapiMachine()),
      objects: [capiMachine({ deleting: true })],
      allowed: false,
      rule: "migration-twin-not-ready",
      message: /its twin CAPI Machine openshift-cluster-api\/worker-a is being deleted/,
    },
    {
      name: "migration-twin-not-ready: allows a Failed CAPI twin without provisioned infrastructure, as step 4 does",
      request: toCapi(mapiMachine()),
      objects: [
        edit(capiMachine({ provisioned: false }), (m) => {
          m.status.phase = "Failed";
        }),
      ],
      allowed: true,
      rule: "none",
    },
    {
      name: "migration-twin-not-ready: allows when there is no CAPI twin yet",
      request: toCapi(mapiMachine()),
      allowed: true,
      rule: "none",
    },
    {
      name: "migration-unsupported-owner: denies a Machine owned by a ControlPlaneMachineSet",
      request: toCapi(cpmsOwned),
      objects: [capiMachine({ name: "master-0" })],
      allowed: false,
      rule: "migration-unsupported-owner",
      message:
        "MAPI Machine openshift-machine-api/master-0 cannot migrate: it is owned by ControlPlaneMachineSet/cluster; control plane machines stay on the Machine API. Leave spec.authoritativeAPI as it is; the ControlPlaneMachineSet manages this Machine. (rule migration-unsupported-owner)",
    },
    {
      name: "migration-unsupported-owner: denies even when the same request drops the owner reference",
      request: updateRequest(
        cpmsOwned,
        edit(cpmsOwned, (m) => {
          m.spec.authoritativeAPI = "ClusterAPI";
          m.metadata.ownerReferences = [];
        }),
      ),
      objects: [capiMachine({ name: "master-0" })],
      allowed: false,
      rule: "migration-unsupported-owner",
    },
    {
      name: "migration-unsupported-owner: denies a MachineSet with owner references",
      request: toCapi(
        edit(mapiMachineSet(), (m) => {
          m.metadata.ownerReferences = [
            { apiVersion: "example.com/v1", kind: "NodePool", name: "pool-a", uid: "u" },
          ];
        }),
      ),
      objects: [capiMachineSet()],
      allowed: false,
      rule: "migration-unsupported-owner",
      message:
        /^MAPI MachineSet openshift-machine-api\/ci-abc12-worker-us-east-1a cannot migrate: it has owner references \(NodePool\/pool-a\)/,
    },
    {
      // Issue 23 / SPEC §4.3: upstream marks such a set Synchronized=False, not convertible; two controllers
      // (the MachineDeployment's and the MachineSet's) would otherwise drive one set after the handover.
      name: "migration-unsupported-owner: denies a MachineSet whose CAPI twin is owned by a MachineDeployment",
      request: toCapi(mapiMachineSet()),
      objects: [
        edit(capiMachineSet(), (m) => {
          m.metadata.ownerReferences = [
            {
              apiVersion: "cluster.x-k8s.io/v1beta2",
              kind: "MachineDeployment",
              name: "workers-md",
              uid: "u-md",
              controller: true,
            },
          ];
        }),
      ],
      allowed: false,
      rule: "migration-unsupported-owner",
      message:
        "MAPI MachineSet openshift-machine-api/ci-abc12-worker-us-east-1a cannot migrate: its CAPI twin openshift-cluster-api/ci-abc12-worker-us-east-1a is owned by MachineDeployment/workers-md, which drives it; only MachineSets owned by nothing but the Cluster can be handed over. Leave spec.authoritativeAPI as it is, or remove that owner reference from the CAPI MachineSet if its owner no longer manages it. (rule migration-unsupported-owner)",
    },
    {
      name: "migration-unsupported-owner: allows a MachineSet whose CAPI twin is owned by the Cluster only",
      request: toCapi(mapiMachineSet()),
      objects: [
        edit(capiMachineSet(), (m) => {
          m.metadata.ownerReferences = [
            { apiVersion: "cluster.x-k8s.io/v1beta2", kind: "Cluster", name: "ci-abc12", uid: "u-c" },
          ];
        }),
      ],
      allowed: true,
      rule: "none",
    },
    {
      name: "migration-unsupported-owner: allows a Machine owned by a MachineSet",
      request: toCapi(
        edit(mapiMachine(), (m) => {
          m.metadata.ownerReferences = [
            {
              apiVersion: "machine.openshift.io/v1beta1",
              kind: "MachineSet",
              name: "ms",
              uid: "u",
              controller: true,
            },
          ];
        }),
      ),
      objects: [capiMachine()],
      allowed: true,
      rule: "none",
    },
    {
      name: "migration-unconvertible: denies listing every failing field path",
      request: toCapi(mapiMachine()),
      objects: [capiMachine()],
      options: { checkConvertible: unconvertible },
      allowed: false,
      rule: "migration-unconvertible",
      message:
        'MAPI Machine openshift-machine-api/worker-a cannot migrate to ClusterAPI: its current content does not convert: spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset; spec.providerSpec.value.ami: Invalid value: {"arn":"arn:aws:ec2:x"}: unable to convert AMI ARN reference. Not supported in CAPI. Fix these fields on the authoritative copy (oc edit machines.machine.openshift.io/worker-a -n openshift-machine-api), then set spec.authoritativeAPI again. (rule migration-unconvertible)',
    },
    {
      name: "migration-unconvertible: back to MachineAPI, points at the CAPI Machine and the served platform's InfraMachine (AWS)",
      request: toMapi(mapiMachine({ status: "ClusterAPI" })),
      objects: [infrastructureObject(), capiMachine({ paused: "none" })],
      options: { checkConvertible: unconvertible },
      allowed: false,
      rule: "migration-unconvertible",
      message:
        /\. Fix these fields on the authoritative copy \(oc edit machines\.cluster\.x-k8s\.io\/worker-a -n openshift-cluster-api \(and its InfraMachine, e\.g\. awsmachines\.infrastructure\.cluster\.x-k8s\.io\)\), then set spec\.authoritativeAPI again\. \(rule migration-unconvertible\)$/,
    },
    {
      name: "migration-unconvertible: back to MachineAPI on OpenStack, points at the OpenStackMachine",
      request: toMapi(openstackMapiMachine({ status: "ClusterAPI" })),
      objects: [openstackInfrastructureObject(), openstackCapiMachine({ paused: "none" })],
      options: { checkConvertible: flavorByID },
      allowed: false,
      rule: "migration-unconvertible",
      message:
        'MAPI Machine openshift-machine-api/worker-a cannot migrate to MachineAPI: its current content does not convert: spec.flavorID: Invalid value: "3a8e1f2c-7b6d-4e5f-9a0b-1c2d3e4f5a6b": MAPO only supports defining flavors via names. Fix these fields on the authoritative copy (oc edit machines.cluster.x-k8s.io/worker-a -n openshift-cluster-api (and its InfraMachine, e.g. openstackmachines.infrastructure.cluster.x-k8s.io)), then set spec.authoritativeAPI again. (rule migration-unconvertible)',
    },
    {
      name: "migration-unconvertible: allows when the converter reports nothing",
      request: toCapi(mapiMachineSet()),
      objects: [capiMachineSet()],
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });

  it("migration-unconvertible: asks the converter about the new object, the target and the view", () => {
    const calls: [string | undefined, string][] = [];
    const check: ConvertibilityCheck = (o, target, view) => {
      calls.push([o.spec?.authoritativeAPI as string | undefined, target]);
      expect(view.twinOf(o)?.metadata?.name).toBe("worker-a");
      return [];
    };
    const ms = mapiMachine({ status: "ClusterAPI" });
    const back = updateRequest(
      ms,
      edit(ms, (m) => {
        m.spec.authoritativeAPI = "MachineAPI";
      }),
    );
    expect(
      decide("validate", back, context([capiMachine({ paused: "none" })], { checkConvertible: check }))
        .allowed,
    ).toBe(true);
    expect(calls).toEqual([["MachineAPI", "MachineAPI"]]);
  });
});

describe("migration-not-synchronized", () => {
  const cases: Case[] = [
    {
      name: "migration-not-synchronized: warns when Synchronized is not True",
      webhook: "validate-guard",
      request: toCapi(mapiMachine({ synchronized: "False" })),
      allowed: true,
      rule: "migration-not-synchronized",
      warnings: ["Synchronized is not True: the migration will wait for a successful sync"],
    },
    {
      name: "migration-not-synchronized: silent when Synchronized is True",
      webhook: "validate-guard",
      request: toCapi(mapiMachine()),
      allowed: true,
      rule: "none",
      warnings: [],
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("cancel", () => {
  /** A handover MachineAPI → ClusterAPI in progress, in every state that would block a migration. */
  const states: [string, KubeObject, KubeObject[], ConvertibilityCheck?][] = [
    ["plain", mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" }), [capiMachine()]],
    [
      "provisioning",
      mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI", phase: "Provisioning" }),
      [capiMachine()],
    ],
    [
      "twin not provisioned",
      mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" }),
      [capiMachine({ provisioned: false })],
    ],
    [
      "twin deleting",
      mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" }),
      [capiMachine({ deleting: true })],
    ],
    [
      "unconvertible",
      mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" }),
      [capiMachine()],
      unconvertible,
    ],
    [
      "not synchronized",
      mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI", synchronized: "Unknown" }),
      [capiMachine()],
    ],
    [
      "control plane owner",
      edit(cpmsOwned, (m) => {
        m.spec.authoritativeAPI = "ClusterAPI";
        m.status.authoritativeAPI = "Migrating";
        m.status.synchronizedAPI = "MachineAPI";
      }),
      [capiMachine({ name: "master-0" })],
    ],
    [
      "deleting",
      edit(mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" }), (m) => {
        m.metadata.deletionTimestamp = "2026-11-30T09:30:00Z";
      }),
      [capiMachine()],
    ],
    [
      "without synchronizedAPI",
      edit(mapiMachine({ status: "Migrating" }), (m) => {
        delete m.status.synchronizedAPI;
      }),
      [capiMachine()],
    ],
  ];
  it.each(states)(
    "cancel: admissible on both validating webhooks when %s",
    (_, migrating, objects, check) => {
      const cancel = updateRequest(
        migrating,
        edit(migrating, (m) => {
          m.spec.authoritativeAPI = "MachineAPI";
        }),
      );
      const ctx = context([migrating, ...objects], check ? { checkConvertible: check } : {});
      expect(decide("validate", cancel, ctx)).toEqual({ allowed: true, rule: "none", warnings: [] });
      expect(decide("validate-guard", cancel, ctx)).toEqual({ allowed: true, rule: "none", warnings: [] });
    },
  );

  it("cancel: a cancel back to ClusterAPI is admissible too", () => {
    const migrating = edit(
      mapiMachine({ status: "Migrating", synchronizedAPI: "ClusterAPI", phase: "Provisioning" }),
      (m) => {
        m.spec.authoritativeAPI = "MachineAPI";
      },
    );
    const cancel = updateRequest(
      migrating,
      edit(migrating, (m) => {
        m.spec.authoritativeAPI = "ClusterAPI";
      }),
    );
    expect(
      decide(
        "validate",
        cancel,
        context([capiMachine({ provisioned: false })], { checkConvertible: unconvertible }),
      ).allowed,
    ).toBe(true);
  });
});
