/**
 * What the `migrate` e2e tests read of a fleet (test/e2e/migrate*.test.ts): the MAPI MachineSets and Machines
 * through kubectl, and a wait until every one is steady, Synchronized and (Machines) Running — the state an
 * admin starts a migration from.
 */
import { runKubectl } from "./helpers.js";

const MAPI_NS = "openshift-machine-api";

/** Where kubectl runs: the product's directory (its HOME and discovery cache) and its kubeconfig. */
export interface KubectlTarget {
  dir: string;
  kubeconfig: string;
}

export interface MapiObject {
  kind: string;
  metadata: { name: string };
  spec: { authoritativeAPI?: string };
  status?: {
    authoritativeAPI?: string;
    phase?: string;
    conditions?: Array<{ type: string; status: string }>;
  };
}

export const mapiObjects = async (target: KubectlTarget): Promise<MapiObject[]> => {
  const r = await runKubectl(target.dir, target.kubeconfig, [
    "get",
    "machinesets.machine.openshift.io,machines.machine.openshift.io",
    "-n",
    MAPI_NS,
    "-o",
    "json",
  ]);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout).items;
};

const synchronized = (o: MapiObject) =>
  o.status?.conditions?.find((c) => c.type === "Synchronized")?.status === "True";

/** Waits (test-side, bounded) until `count` MAPI objects are all steady and Synchronized, Machines Running. */
export const settled = async (target: KubectlTarget, count: number): Promise<void> => {
  let objects: MapiObject[] = [];
  for (let i = 0; i < 300; i++) {
    objects = await mapiObjects(target);
    const steady = objects.filter(
      (o) =>
        synchronized(o) &&
        o.status?.authoritativeAPI === o.spec.authoritativeAPI &&
        (o.kind === "MachineSet" || o.status?.phase === "Running"),
    );
    if (objects.length === count && steady.length === count) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not settled: ${JSON.stringify(objects.map((o) => [o.metadata.name, o.status]))}`);
};
