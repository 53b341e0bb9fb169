import { beforeAll, describe, expect, it } from "vitest";
import type { CompiledCrd } from "../../../src/apiserver/schema/index.js";
import type { KubeObject } from "../../../src/kube/object.js";
import { demoSeed } from "../../../src/local/seed.js";
import { convertDocuments } from "../../../src/sync/conversion/documents.js";
import {
  capiMachineSetStatusToMapi,
  capiMachineStatusToMapi,
  mapiMachineSetStatusToCapi,
  mapiMachineStatusToCapi,
} from "../../../src/sync/conversion/status.js";
import { checkAgainst, compiledProjectCrds } from "./survival.js";

/**
 * Cross-check of manifests/crds against what the product really writes (SPEC §8: "nothing the product
 * writes is pruned silently"): the local-mode seed and the converter's output, both directions. The
 * OpenStack kinds have their own file (openstack-objects.test.ts).
 */
let byKind: ReadonlyMap<string, CompiledCrd> = new Map();

beforeAll(async () => {
  byKind = await compiledProjectCrds();
});

const check = (o: KubeObject) => checkAgainst(byKind, o);

const ns = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };
const seed = demoSeed(ns);
const seedObjects = (): KubeObject[] => [
  ...seed.clusterScoped,
  ...seed.capi,
  ...seed.machineSets,
  ...seed.machines.map((m) => m.machine),
];
const infrastructure = seed.clusterScoped.find((o) => o.kind === "Infrastructure")!;

describe("project CRDs keep everything the product writes", () => {
  it("the check itself notices a pruned field", () => {
    const machine = structuredClone(seed.machines[0]!.machine);
    (machine.spec as Record<string, unknown>).notInTheSchema = true;
    expect(check(machine).lost).toEqual([".spec.notInTheSchema"]);
  });

  it.each(seedObjects().map((o) => [`${o.kind} ${o.metadata?.name}`, o] as const))(
    "local-mode seed: %s survives pruning and validates",
    (_name, o) => {
      expect(check(o)).toEqual({ lost: [], causes: [] });
    },
  );

  const toCapi = () =>
    convertDocuments([...seed.machineSets, ...seed.machines.map((m) => m.machine)], infrastructure, {
      to: "capi",
      ...ns,
    });

  it("the seed converts to CAPI without errors (precondition)", () => {
    const r = toCapi();
    expect(r.errors).toEqual([]);
    expect(r.objects.map((o) => o.kind).sort()).toEqual([
      "AWSMachine",
      "AWSMachine",
      "AWSMachine",
      "AWSMachineTemplate",
      "AWSMachineTemplate",
      "Machine",
      "Machine",
      "Machine",
      "MachineSet",
      "MachineSet",
    ]);
  });

  it("every CAPI/CAPA object the converter writes survives pruning and validates", () => {
    const results = toCapi().objects.map((o) => ({ object: `${o.kind} ${o.metadata?.name}`, ...check(o) }));
    expect(results.filter((r) => r.lost.length > 0 || r.causes.length > 0)).toEqual([]);
  });

  it("converting back to MAPI produces objects the MAPI CRDs keep whole", () => {
    const capi = toCapi().objects;
    const back = convertDocuments([...capi, ...seed.capi], infrastructure, { to: "mapi", ...ns });
    expect(back.errors).toEqual([]);
    const results = back.objects.map((o) => ({ object: `${o.kind} ${o.metadata?.name}`, ...check(o) }));
    expect(results.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.lost.length > 0 || r.causes.length > 0)).toEqual([]);
  });

  it("status written by the sync (§5.4) survives the CRDs, both directions", () => {
    const now = "2026-01-02T03:04:05Z";
    const capi = toCapi().objects;
    const mapiMachine: KubeObject = {
      ...structuredClone(seed.machines[0]!.machine),
      status: {
        phase: "Running",
        nodeRef: { apiVersion: "v1", kind: "Node", name: "ip-10-0-1-2.ec2.internal" },
        addresses: [{ type: "InternalIP", address: "10.0.1.2" }],
        lastUpdated: now,
        errorReason: "InvalidConfiguration",
        errorMessage: "boom",
        providerStatus: { instanceId: "i-0abc", instanceState: "running" },
        authoritativeAPI: "MachineAPI",
        synchronizedAPI: "MachineAPI",
        synchronizedGeneration: 1,
      },
    };
    const capiMachine = capi.find(
      (o) => o.kind === "Machine" && o.metadata?.name === mapiMachine.metadata?.name,
    )!;
    const awsMachine = capi.find(
      (o) => o.kind === "AWSMachine" && o.metadata?.name === mapiMachine.metadata?.name,
    )!;
    const forward = mapiMachineStatusToCapi(mapiMachine, infrastructure, { now, capiMachine });
    if (!forward.ok) throw new Error(JSON.stringify(forward.errors));
    const capiWithStatus = { ...capiMachine, status: forward.value.machineStatus };
    const awsWithStatus = { ...awsMachine, status: forward.value.infraMachineStatus };
    const backward = capiMachineStatusToMapi(capiWithStatus, awsWithStatus, infrastructure, {
      now,
      mapiMachine,
    });
    if (!backward.ok) throw new Error(JSON.stringify(backward.errors));
    const mapiWithStatus = { ...mapiMachine, status: { ...mapiMachine.status, ...backward.value.status } };

    const set = seed.machineSets[0]!;
    const mapiSet: KubeObject = {
      ...structuredClone(set),
      status: {
        replicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        fullyLabeledReplicas: 1,
        observedGeneration: 1,
      },
    };
    const setForward = mapiMachineSetStatusToCapi(mapiSet, infrastructure);
    if (!setForward.ok) throw new Error(JSON.stringify(setForward.errors));
    const capiSet = capi.find((o) => o.kind === "MachineSet" && o.metadata?.name === set.metadata?.name)!;
    const capiSetWithStatus = { ...capiSet, status: setForward.value.status };
    const setBackward = capiMachineSetStatusToMapi(capiSetWithStatus);
    if (!setBackward.ok) throw new Error(JSON.stringify(setBackward.errors));
    const mapiSetWithStatus = { ...mapiSet, status: { ...mapiSet.status, ...setBackward.value.status } };

    const results = [capiWithStatus, awsWithStatus, mapiWithStatus, capiSetWithStatus, mapiSetWithStatus].map(
      (o) => ({
        object: `${o.kind} ${o.metadata?.name}`,
        ...check(o),
      }),
    );
    expect(results.filter((r) => r.lost.length > 0 || r.causes.length > 0)).toEqual([]);
  });
});
