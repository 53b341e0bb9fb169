import { describe, expect, it } from "vitest";
import { ANNOTATIONS, FINALIZERS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import type { ForkInput } from "../../src/sync/fork.js";
import { awaitedPauseAcknowledgers, fork } from "../../src/sync/fork.js";
import {
  awsMachine,
  capiMachine,
  capiMachineSet,
  condition,
  deleting,
  EARLIER,
  LATER,
  mapiMachine,
  mapiMachineSet,
} from "./builders.js";

const unpaused = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, annotations: {} } });
const withConditions = (o: KubeObject, ...conditions: ReturnType<typeof condition>[]): KubeObject => ({
  ...o,
  status: { ...(o.status ?? {}), conditions },
});
const withAnnotation = (o: KubeObject, key: string, value: string): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, annotations: { ...(o.metadata?.annotations ?? {}), [key]: value } },
});
const synced = (o: KubeObject) => withConditions(o, condition("Synchronized", "True"));

/** A Migrating MAPI Machine whose step-4 record says Paused=False at EARLIER for every acknowledger. */
const migrating = (from: "MachineAPI" | "ClusterAPI", pausedAt = LATER) =>
  withAnnotation(
    withConditions(
      mapiMachine("m", { authority: "Migrating", status: { synchronizedAPI: from } }),
      condition("Synchronized", "True"),
      condition("Paused", "True", pausedAt),
    ),
    ANNOTATIONS.pausedFalseAt,
    JSON.stringify(
      from === "MachineAPI" ? { mapi: EARLIER } : { capiMachine: EARLIER, infraMachine: EARLIER },
    ),
  );

const machine = (input: Omit<ForkInput, "kind">): ForkInput => ({ kind: "Machine", ...input });

const cases: [string, ForkInput, ReturnType<typeof fork>["kind"], Record<string, unknown>?][] = [
  [
    "§4.2 both absent, nothing left → bothAbsent without release",
    machine({}),
    "bothAbsent",
    { releaseInfraMachine: false },
  ],
  [
    "§4.2 both absent, InfraMachine still holds the sync finalizer → release it",
    machine({ infraMachine: awsMachine("m") }),
    "bothAbsent",
    { releaseInfraMachine: true },
  ],
  [
    "§4.2 MAPI absent: CAPI-only MachineSet → ignore",
    { kind: "MachineSet", capi: capiMachineSet("s", { meta: { finalizers: [] } }) },
    "ignore",
  ],
  [
    "§4.2 MAPI absent: CAPI-only Machine not owned by a mirrored set → ignore",
    machine({ capi: capiMachine("m"), mirroredOwner: false }),
    "ignore",
  ],
  [
    "§4.2 MAPI absent: CAPI Machine of a mirrored set → mirror it",
    machine({ capi: capiMachine("m"), infraMachine: awsMachine("m"), mirroredOwner: true }),
    "mirrorCapiOnlyMachine",
  ],
  [
    "§4.2 MAPI absent: deleting CAPI Machine is never mirrored",
    machine({ capi: deleting(capiMachine("m", { meta: { finalizers: [] } })), mirroredOwner: true }),
    "ignore",
  ],
  [
    "§4.6 MAPI absent: deleting CAPI Machine still holding our finalizer → deletion path (unknown authority)",
    machine({ capi: deleting(capiMachine("m")), mirroredOwner: true }),
    "deleting",
    { authority: "unknown" },
  ],
  [
    "§4.2 status absent → no-op",
    machine({ mapi: { ...mapiMachine("m"), status: {} }, capi: capiMachine("m") }),
    "noop",
  ],
  ["§4.2 MachineAPI → MAPI to CAPI", machine({ mapi: mapiMachine("m") }), "mapiToCapi"],
  [
    "§4.2 MachineAPI with a paused twin → MAPI to CAPI",
    machine({ mapi: mapiMachine("m"), capi: capiMachine("m"), infraMachine: awsMachine("m") }),
    "mapiToCapi",
  ],
  [
    "§4.2 MachineAPI with an unpaused CAPI twin → UnpausedTwinDetected",
    machine({ mapi: mapiMachine("m"), capi: unpaused(capiMachine("m")), infraMachine: awsMachine("m") }),
    "unpausedTwinDetected",
  ],
  [
    "§4.2 MachineAPI with an unpaused InfraMachine → UnpausedTwinDetected",
    machine({ mapi: mapiMachine("m"), capi: capiMachine("m"), infraMachine: unpaused(awsMachine("m")) }),
    "unpausedTwinDetected",
  ],
  [
    "§4.2 MachineAPI with a twin already marked needs-attention stays detected",
    machine({
      mapi: mapiMachine("m"),
      capi: withAnnotation(capiMachine("m"), ANNOTATIONS.needsAttention, "UnpausedTwinDetected"),
    }),
    "unpausedTwinDetected",
  ],
  [
    "§4.2 ClusterAPI with twin → CAPI to MAPI",
    machine({ mapi: synced(mapiMachine("m", { authority: "ClusterAPI" })), capi: capiMachine("m") }),
    "capiToMapi",
  ],
  [
    "§4.2 ClusterAPI without twin, never Synchronized (born ClusterAPI) → create the twin",
    machine({ mapi: mapiMachine("m", { authority: "ClusterAPI" }) }),
    "createBornClusterAPITwin",
  ],
  [
    "§4.2 ClusterAPI without twin after it was synchronized → propagate the deletion, never recreate",
    machine({ mapi: synced(mapiMachine("m", { authority: "ClusterAPI" })) }),
    "propagateDeletionOfAuthoritative",
  ],
  [
    "§4.2 anything deleting → deletion path first (MAPI deleting under MachineAPI)",
    machine({ mapi: deleting(mapiMachine("m")), capi: capiMachine("m") }),
    "deleting",
    { authority: "MachineAPI" },
  ],
  [
    "§4.2 anything deleting → deletion path first (CAPI deleting under ClusterAPI)",
    machine({
      mapi: synced(mapiMachine("m", { authority: "ClusterAPI" })),
      capi: deleting(capiMachine("m")),
    }),
    "deleting",
    { authority: "ClusterAPI" },
  ],
  [
    "§4.2 an admin deleting an unpaused user twin is not a deletion of ours: it is released, never propagated (MachineAPI)",
    machine({ mapi: mapiMachine("m"), capi: deleting(unpaused(capiMachine("m"))) }),
    "releaseForeignTwin",
  ],
  [
    "§4.2 an admin deleting a needs-attention twin: released, never propagated (MachineAPI)",
    machine({
      mapi: mapiMachine("m"),
      capi: deleting(withAnnotation(capiMachine("m"), ANNOTATIONS.needsAttention, "UnpausedTwinDetected")),
    }),
    "releaseForeignTwin",
  ],
  [
    "§3.5 deletion while Migrating → deletion path in Migrating mode",
    machine({ mapi: migrating("MachineAPI"), capi: deleting(capiMachine("m")) }),
    "deleting",
    { authority: "Migrating" },
  ],
  [
    "§4.2 Migrating, acknowledgers paused after the record → final sync from synchronizedAPI",
    machine({ mapi: migrating("MachineAPI"), capi: capiMachine("m"), infraMachine: awsMachine("m") }),
    "finalSync",
    { direction: "MachineAPI" },
  ],
  [
    "§3.1 step 6: a stale Paused=True (earlier than the recorded Paused=False) does not count",
    machine({ mapi: migrating("MachineAPI", "2026-11-30T08:00:00Z"), capi: capiMachine("m") }),
    "noop",
  ],
  [
    "§3.1 step 6 from ClusterAPI: CAPI Machine and InfraMachine must both acknowledge",
    machine({
      mapi: migrating("ClusterAPI"),
      capi: withConditions(capiMachine("m"), condition("Paused", "True", LATER)),
      infraMachine: awsMachine("m", { pausedCondition: "False" }),
    }),
    "noop",
  ],
  [
    "§3.1 step 6 from ClusterAPI: both acknowledged → final sync to MAPI",
    machine({
      mapi: migrating("ClusterAPI"),
      capi: withConditions(capiMachine("m"), condition("Paused", "True", LATER)),
      infraMachine: withConditions(awsMachine("m"), condition("Paused", "True", LATER)),
    }),
    "finalSync",
    { direction: "ClusterAPI" },
  ],
  [
    "§4.2 Migrating without synchronizedAPI → no-op (the migration controller decides)",
    machine({
      mapi: { ...migrating("MachineAPI"), status: { authoritativeAPI: "Migrating" } },
      capi: capiMachine("m"),
    }),
    "noop",
  ],
  [
    "§4.2 MachineSet MachineAPI → MAPI to CAPI",
    { kind: "MachineSet", mapi: mapiMachineSet("s"), capi: capiMachineSet("s") },
    "mapiToCapi",
  ],
  [
    "§4.2 MachineSet unpaused CAPI twin under MachineAPI → UnpausedTwinDetected",
    { kind: "MachineSet", mapi: mapiMachineSet("s"), capi: unpaused(capiMachineSet("s")) },
    "unpausedTwinDetected",
  ],
];

describe("fork (SPEC §4.2)", () => {
  it.each(cases)("%s", (_name, input, kind, fields) => {
    const branch = fork(input);
    expect(branch.kind).toBe(kind);
    if (fields) expect(branch).toMatchObject(fields);
  });

  it("§3.1 step 6 names every acknowledger still awaited", () => {
    const input = machine({
      mapi: migrating("ClusterAPI"),
      capi: capiMachine("m"),
      infraMachine: awsMachine("m", { pausedCondition: "False" }),
    });
    expect(awaitedPauseAcknowledgers(input, "ClusterAPI")).toEqual(["capiMachine", "infraMachine"]);
  });

  it("§3.1 step 6: no recorded Paused=False means not acknowledged", () => {
    const mapi = withConditions(
      mapiMachine("m", { authority: "Migrating" }),
      condition("Paused", "True", LATER),
    );
    expect(awaitedPauseAcknowledgers(machine({ mapi }), "MachineAPI")).toEqual(["mapi"]);
  });

  it("§3.1 step 6: a Paused=True whose time does not parse is no acknowledgement (as the planner judges it)", () => {
    const mapi = migrating("MachineAPI", "not a time");
    expect(awaitedPauseAcknowledgers(machine({ mapi }), "MachineAPI")).toEqual(["mapi"]);
    expect(fork(machine({ mapi, capi: capiMachine("m"), infraMachine: awsMachine("m") })).kind).toBe("noop");
  });

  it("the sync finalizer is what marks a MAPI-less deleting CAPI Machine as ours", () => {
    const capi = deleting(capiMachine("m", { meta: { finalizers: [FINALIZERS.capiMachine] } }));
    expect(fork(machine({ capi, mirroredOwner: true })).kind).toBe("ignore");
  });
});
