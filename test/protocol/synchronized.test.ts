/**
 * The `Synchronized` reasons both controllers rely on (src/protocol/synchronized.ts): the reason the sync
 * writes after the final sync is the one §3.1 step 7 waits for, and nothing else satisfies step 7.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import { finalSyncProblem } from "../../src/migration/preconditions.js";
import { SYNCHRONIZED_REASONS } from "../../src/protocol/synchronized.js";
import { REASONS, synchronized } from "../../src/sync/condition.js";

const mapiWith = (reason: string): KubeObject => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: { name: "m", namespace: "openshift-machine-api", generation: 4 },
  status: {
    authoritativeAPI: "Migrating",
    synchronizedAPI: "MachineAPI",
    synchronizedGeneration: 4,
    conditions: [{ type: "Synchronized", status: "True", reason, message: "" }],
  },
});

describe("§3.1 step 7 and §4.2: the final sync's reason", () => {
  it("the sync writes FinalSyncComplete after a final sync, ResourceSynchronized otherwise", () => {
    expect(synchronized("Machine", "MAPItoCAPI", true).reason).toBe(SYNCHRONIZED_REASONS.finalSyncComplete);
    expect(synchronized("Machine", "MAPItoCAPI").reason).toBe(SYNCHRONIZED_REASONS.resourceSynchronized);
    expect(REASONS.finalSyncComplete).toBe("FinalSyncComplete");
  });

  it.each([
    [SYNCHRONIZED_REASONS.finalSyncComplete, true],
    [SYNCHRONIZED_REASONS.resourceSynchronized, false],
    [SYNCHRONIZED_REASONS.awaitingFinalSync, false],
  ])("step 7 with Synchronized=True reason %s: satisfied %s", (reason, satisfied) => {
    const problem = finalSyncProblem({ kind: "Machine", mapi: mapiWith(reason) }, "MachineAPI");
    expect(problem === undefined).toBe(satisfied);
  });
});
