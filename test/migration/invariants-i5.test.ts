/**
 * I5 (SPEC §3.2) as test/migration/invariants.ts checks it on a sync plan: the sync never writes the spec of
 * the active side, except the three writes the invariant names — the born-ClusterAPI twin's creation, delete
 * marks, and the autoscaler's replicas carried to a ClusterAPI MachineSet (§2.2).
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import type { Branch } from "../../src/sync/fork.js";
import type { SyncWrite } from "../../src/sync/writes.js";
import { annotateWrite, createWrite, setReplicasWrite } from "../../src/sync/writes.js";
import {
  CAPI_NS,
  capiMachine,
  capiMachineSet,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
} from "../sync/builders.js";
import { syncSpecViolations } from "./invariants.js";

const namespaces = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
const CAPI_MARK = "cluster.x-k8s.io/delete-machine";

const applyTo = (o: KubeObject, spec: Record<string, unknown> | undefined): SyncWrite => ({
  kind: "apply",
  target: {
    apiVersion: String(o.apiVersion),
    kind: String(o.kind),
    namespace: String(o.metadata?.namespace),
    name: String(o.metadata?.name),
    uid: String(o.metadata?.uid),
  },
  resourceVersion: "1",
  fieldManager: "machine-api-migration-sync",
  body: {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: { name: o.metadata?.name },
    ...(spec ? { spec } : {}),
  },
  changedPaths: [],
});

const clusterApiSet = mapiMachineSet("workers", { authority: "ClusterAPI", spec: { replicas: 3 } });
const machineApiSet = mapiMachineSet("workers", { spec: { replicas: 3 } });
const capiSet = capiMachineSet("workers", { meta: { annotations: {} } });
const capiMachineA = capiMachine("m");
const mapiMachineA = mapiMachine("m");
const capiToMapi: Branch = { kind: "capiToMapi" };
const mapiToCapi: Branch = { kind: "mapiToCapi" };

const rows: { name: string; branch: Branch; mapi: KubeObject; writes: SyncWrite[]; violations: number }[] = [
  {
    name: "exception: the autoscaler's replicas carried to a ClusterAPI MachineSet",
    branch: capiToMapi,
    mapi: clusterApiSet,
    writes: [setReplicasWrite(capiSet, 3)],
    violations: 0,
  },
  {
    name: "a replicas write that is not the MAPI copy's value",
    branch: capiToMapi,
    mapi: clusterApiSet,
    writes: [setReplicasWrite(capiSet, 7)],
    violations: 1,
  },
  {
    name: "a replicas write on the active MAPI side under MachineAPI",
    branch: mapiToCapi,
    mapi: machineApiSet,
    writes: [setReplicasWrite(machineApiSet, 3)],
    violations: 1,
  },
  {
    name: "exception: a delete mark carried to the active CAPI Machine",
    branch: capiToMapi,
    mapi: mapiMachine("m", { authority: "ClusterAPI" }),
    writes: [annotateWrite(capiMachineA, { [CAPI_MARK]: "" }, "deleteMark")],
    violations: 0,
  },
  {
    name: "an apply of the active CAPI side's spec under ClusterAPI",
    branch: capiToMapi,
    mapi: clusterApiSet,
    writes: [applyTo(capiSet, { replicas: 3 })],
    violations: 1,
  },
  {
    name: "an apply of the mirror's spec is the sync's job",
    branch: capiToMapi,
    mapi: clusterApiSet,
    writes: [applyTo(clusterApiSet, { replicas: 2 })],
    violations: 0,
  },
  {
    name: "exception: the twin of an object born ClusterAPI is created",
    branch: { kind: "createBornClusterAPITwin" },
    mapi: mapiMachine("m", { authority: "ClusterAPI" }),
    writes: [createWrite(capiMachineA)],
    violations: 0,
  },
  {
    name: "any other creation on the active side",
    branch: capiToMapi,
    mapi: mapiMachine("m", { authority: "ClusterAPI" }),
    writes: [createWrite(capiMachineA)],
    violations: 1,
  },
  {
    name: "an apply of the active MAPI side's spec under MachineAPI",
    branch: mapiToCapi,
    mapi: mapiMachineA,
    writes: [applyTo(mapiMachineA, { providerSpec: {} })],
    violations: 1,
  },
];

describe("I5: the sync never writes the spec of the active side, except the three named writes", () => {
  for (const r of rows) {
    it(`${r.name} → ${r.violations === 0 ? "holds" : "violated"}`, () => {
      const found = syncSpecViolations({ branch: r.branch, writes: r.writes }, r.mapi, namespaces);
      expect(found).toHaveLength(r.violations);
      for (const v of found) expect(v.invariant).toBe("I5");
    });
  }

  it("while Migrating both sides are paused: nothing is the active side", () => {
    const migrating = mapiMachineSet("workers", { authority: "Migrating" });
    expect(
      syncSpecViolations(
        { branch: capiToMapi, writes: [applyTo(capiSet, { replicas: 1 })] },
        migrating,
        namespaces,
      ),
    ).toEqual([]);
  });
});
