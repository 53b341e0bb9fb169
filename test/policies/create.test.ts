/**
 * Table tests for the create rules (SPEC §2.3): `capi-create-paused` (incl. InfraMachines and templates),
 * `capi-create-twin-paused`, `mapi-create-twin`.
 */
import { describe, it } from "vitest";
import {
  awsMachine,
  awsMachineTemplate,
  type Case,
  capiMachine,
  capiMachineSet,
  checkCase,
  createRequest,
  edit,
  mapiMachine,
  mapiMachineSet,
} from "./builders.js";

const withPausedCondition = (status: "True" | "False") =>
  edit(mapiMachine({ status: "ClusterAPI" }), (m) => {
    m.status.conditions = m.status.conditions.filter((c: { type: string }) => c.type !== "Paused");
    m.status.conditions.push({ type: "Paused", status, lastTransitionTime: "2026-11-30T09:00:00Z" });
  });

describe("capi-create-paused", () => {
  const cases: Case[] = [
    {
      name: "capi-create-paused: denies an unpaused CAPI Machine while the MAPI twin is MachineAPI",
      request: createRequest(capiMachine({ paused: "none" })),
      objects: [mapiMachine()],
      allowed: false,
      rule: "capi-create-paused",
      message:
        'CAPI Machine openshift-cluster-api/worker-a must be created paused while MAPI Machine openshift-machine-api/worker-a holds authority (status.authoritativeAPI=MachineAPI): metadata.annotations["cluster.x-k8s.io/paused"] is missing. Add the annotation cluster.x-k8s.io/paused: "" (the mutating webhook normally adds it; check that machine-api-migration-mutate is running), or migrate the MAPI Machine to Cluster API first. (rule capi-create-paused)',
    },
    {
      name: "capi-create-paused: denies an unpaused AWSMachine (InfraMachine) while the MAPI twin is Migrating",
      request: createRequest(awsMachine({ paused: "none" })),
      objects: [mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" })],
      allowed: false,
      rule: "capi-create-paused",
      message:
        /^AWSMachine openshift-cluster-api\/worker-a must be created paused .*status\.authoritativeAPI=Migrating/,
    },
    {
      name: "capi-create-paused: denies an unpaused AWSMachineTemplate while the MAPI MachineSet status is absent",
      request: createRequest(awsMachineTemplate({ paused: "none" })),
      objects: [mapiMachineSet({ status: "absent" })],
      allowed: false,
      rule: "capi-create-paused",
      message: /no status\.authoritativeAPI yet/,
    },
    {
      name: "capi-create-paused: allows a paused CAPI Machine (an admin's pause is enough)",
      request: createRequest(capiMachine({ paused: "admin" })),
      objects: [mapiMachine()],
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-create-paused: allows an unpaused InfraMachine whose MAPI twin is ClusterAPI",
      request: createRequest(awsMachine({ paused: "none" })),
      objects: [mapiMachine({ status: "ClusterAPI" })],
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-create-paused: allows an unpaused CAPI Machine without a MAPI twin",
      request: createRequest(capiMachine({ name: "capi-only", paused: "none" })),
      objects: [mapiMachine()],
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-create-paused: a stale MAPI view answers retry",
      request: createRequest(capiMachine({ paused: "none" })),
      objects: [mapiMachine()],
      options: { freshness: () => ({ synced: true, disconnectedForMs: 45_000 }) },
      allowed: false,
      rule: "capi-create-paused",
      message:
        "cluster view is stale, retry in a few seconds (machines.machine.openshift.io: no open watch for 45s). (rule capi-create-paused)",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("capi-create-twin-paused", () => {
  const cases: Case[] = [
    {
      name: "capi-create-twin-paused: denies a CAPI Machine while the ClusterAPI MAPI twin reports Paused=False",
      request: createRequest(capiMachine({ paused: "none" })),
      objects: [withPausedCondition("False")],
      allowed: false,
      rule: "capi-create-twin-paused",
      message:
        "CAPI Machine openshift-cluster-api/worker-a cannot be created yet: its twin MAPI Machine openshift-machine-api/worker-a has status.authoritativeAPI=ClusterAPI but reports Paused=False, so the Machine API controllers may still act on it. Retry once oc get machines.machine.openshift.io/worker-a -n openshift-machine-api -o jsonpath='{.status.conditions[?(@.type==\"Paused\")].status}' prints True. (rule capi-create-twin-paused)",
    },
    {
      name: "capi-create-twin-paused: denies a CAPI MachineSet whose ClusterAPI MAPI twin has no Paused condition",
      request: createRequest(capiMachineSet({ paused: "none" })),
      objects: [
        edit(mapiMachineSet({ status: "ClusterAPI" }), (m) => {
          m.status.conditions = [];
        }),
      ],
      allowed: false,
      rule: "capi-create-twin-paused",
      message: /reports no Paused condition/,
    },
    {
      name: "capi-create-twin-paused: allows a CAPI Machine once the ClusterAPI MAPI twin reports Paused=True",
      request: createRequest(capiMachine({ paused: "none" })),
      objects: [withPausedCondition("True")],
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("mapi-create-twin", () => {
  const cases: Case[] = [
    {
      name: "mapi-create-twin: denies a MachineAPI MAPI Machine when the CAPI twin exists",
      request: createRequest(mapiMachine({ status: "absent", spec: "MachineAPI" })),
      objects: [capiMachine({ paused: "none" })],
      allowed: false,
      rule: "mapi-create-twin",
      message:
        "MAPI Machine openshift-machine-api/worker-a cannot be created with spec.authoritativeAPI=MachineAPI: CAPI Machine openshift-cluster-api/worker-a already exists and would be a second copy acting on the same machines. Write spec.authoritativeAPI: ClusterAPI explicitly (an omitted value defaults to MachineAPI) so the existing copy stays authoritative; inspect it with oc get machines.cluster.x-k8s.io/worker-a -n openshift-cluster-api -o yaml. (rule mapi-create-twin)",
    },
    {
      name: "mapi-create-twin: a CAPI twin being deleted is an earlier Machine's: the refusal says to wait until it is gone (decision 180)",
      request: createRequest(mapiMachine({ status: "absent", spec: "MachineAPI" })),
      objects: [
        edit(capiMachine({ paused: "marked" }), (m) => {
          m.metadata.deletionTimestamp = "2026-11-30T09:59:00Z";
        }),
      ],
      allowed: false,
      rule: "mapi-create-twin",
      message:
        "MAPI Machine openshift-machine-api/worker-a cannot be created with spec.authoritativeAPI=MachineAPI yet: CAPI Machine openshift-cluster-api/worker-a of that name is still being deleted (since 2026-11-30T09:59:00Z). Create it once that copy is gone: oc wait --for=delete machines.cluster.x-k8s.io/worker-a -n openshift-cluster-api; until then it may still hold an instance. (rule mapi-create-twin)",
    },
    {
      name: "mapi-create-twin: allows a ClusterAPI MAPI MachineSet when the CAPI twin exists",
      request: createRequest(mapiMachineSet({ status: "absent", spec: "ClusterAPI" })),
      objects: [capiMachineSet({ paused: "none" })],
      allowed: true,
      rule: "none",
    },
    {
      name: "mapi-create-twin: allows a MachineAPI MAPI Machine without a CAPI twin",
      request: createRequest(mapiMachine({ status: "absent" })),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});
