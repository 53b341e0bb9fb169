/**
 * Status mirroring in two steps (src/sync/conversion/stamp.ts): the Machine status converters are exactly
 * their unstamped twin followed by `stampNow`, and `stampNow` sets `now` only where a stamp points, copying
 * only that path and keeping the key order a one-step converter writes.
 */
import { describe, expect, it } from "vitest";
import {
  capiMachineStatusToMapi,
  capiMachineStatusToMapiUnstamped,
  mapiMachineStatusToCapi,
  mapiMachineStatusToCapiUnstamped,
  mergeConditions,
  stampNow,
} from "../../../src/sync/conversion/index.js";
import { mergeConditionsUnstamped } from "../../../src/sync/conversion/status.js";
import {
  awsMachine,
  awsMachineSpec,
  capiMachine,
  infrastructure,
  mapiMachine,
  mapiMachineCreatedSince,
} from "./builders.js";

const NOW = "2026-11-30T10:00:00Z";
const EARLIER = "2026-11-29T08:00:00Z";

const deepFreeze = <T>(v: T): T => {
  if (typeof v === "object" && v !== null) {
    for (const child of Object.values(v)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
};

describe("stampNow", () => {
  it("without stamps: the result itself, unchanged", () => {
    const result = { a: [{ type: "Ready" }] };
    expect(stampNow({ result, stamps: [] }, NOW)).toBe(result);
  });

  it("appends lastTransitionTime (last key) on each stamped object; copies only the stamped paths", () => {
    const untouched = { type: "Kept", status: "True", lastTransitionTime: EARLIER };
    const other = { deep: { x: 1 } };
    const result = deepFreeze({
      value: { conditions: [untouched, { type: "Ready", status: "True", reason: "Ready" }], other },
    });
    const out = stampNow({ result, stamps: [["value", "conditions", 1]] }, NOW);
    expect(out).toEqual({
      value: {
        conditions: [untouched, { type: "Ready", status: "True", reason: "Ready", lastTransitionTime: NOW }],
        other,
      },
    });
    expect(JSON.stringify(out.value.conditions[1])).toBe(
      `{"type":"Ready","status":"True","reason":"Ready","lastTransitionTime":"${NOW}"}`,
    );
    expect(out.value.conditions[0]).toBe(untouched);
    expect(out.value.other).toBe(other);
    expect(result.value.conditions[1]).not.toHaveProperty("lastTransitionTime");
  });

  it("stamps several paths of one result", () => {
    const result = deepFreeze({ list: [{ type: "A" }, { type: "B" }, { type: "C" }] });
    expect(
      stampNow(
        {
          result,
          stamps: [
            [`list`, 0],
            ["list", 2],
          ],
        },
        NOW,
      ).list,
    ).toEqual([
      { type: "A", lastTransitionTime: NOW },
      { type: "B" },
      { type: "C", lastTransitionTime: NOW },
    ]);
  });
});

describe("the Machine status converters are their unstamped twin, stamped", () => {
  const previous = [
    { type: "Ready", status: "False", reason: "NotReady", lastTransitionTime: EARLIER },
    { type: "Available", status: "False", reason: "NotAvailable", lastTransitionTime: EARLIER },
    { type: "Paused", status: "False", reason: "NotPaused", lastTransitionTime: EARLIER },
  ];
  const cases: Record<string, { phase: string; capiConditions?: unknown[] }> = {
    "no CAPI Machine conditions yet: every produced condition is stamped": { phase: "Running" },
    "Ready and Available unchanged: only the types new to it are stamped": {
      phase: "Provisioning",
      capiConditions: previous,
    },
    "Ready and Available turn True: those two are stamped": { phase: "Running", capiConditions: previous },
  };
  for (const [name, { phase, capiConditions }] of Object.entries(cases)) {
    it(`MAPI → CAPI: ${name}`, () => {
      const mapi = mapiMachine({ status: { phase, nodeRef: { name: "ip-10-0-0-5" } } });
      const capi = capiMachine(capiConditions ? { status: { conditions: capiConditions } } : {});
      const open = mapiMachineStatusToCapiUnstamped(mapi, infrastructure(), { capiMachine: capi });
      expect(stampNow(open, NOW)).toEqual(
        mapiMachineStatusToCapi(mapi, infrastructure(), { now: NOW, capiMachine: capi }),
      );
      const stampedTypes = open.stamps.map((path) => {
        if (!open.result.ok) throw new Error("conversion failed");
        return (open.result.value.machineStatus.conditions as { type: string }[])[path[3] as number]?.type;
      });
      if (capiConditions === undefined) expect(stampedTypes).toHaveLength(6);
      else if (phase === "Provisioning")
        expect(stampedTypes).toEqual([
          "BootstrapConfigReady",
          "InfrastructureReady",
          "Deleting",
          "NodeReady",
        ]);
      else expect(stampedTypes).toEqual(expect.arrayContaining(["Available", "Ready"]));
    });
  }

  it("MAPI → CAPI with conditions already as produced: no stamp, and the result needs no clock", () => {
    const mapi = mapiMachine({ status: { phase: "Running", nodeRef: { name: "n1" } } });
    const first = mapiMachineStatusToCapi(mapi, infrastructure(), { now: EARLIER });
    if (!first.ok) throw new Error("conversion failed");
    const capi = capiMachine({ status: { conditions: first.value.machineStatus.conditions } });
    const open = mapiMachineStatusToCapiUnstamped(mapi, infrastructure(), { capiMachine: capi });
    expect(open.stamps).toEqual([]);
    expect(stampNow(open, NOW)).toEqual(first);
  });

  it("CAPI → MAPI: a new or changed MachineCreation condition is stamped; a held one keeps its time", () => {
    const infraMachine = awsMachine({ spec: awsMachineSpec({ instanceID: "i-0abc" }) });
    const capi = capiMachine({ status: { phase: "Running" } });
    const held = mapiMachineCreatedSince(EARLIER);
    for (const mapi of [undefined, mapiMachine(), held]) {
      const opts = mapi ? { mapiMachine: mapi } : {};
      const open = capiMachineStatusToMapiUnstamped(capi, infraMachine, infrastructure(), opts);
      expect(stampNow(open, NOW)).toEqual(
        capiMachineStatusToMapi(capi, infraMachine, infrastructure(), { ...opts, now: NOW }),
      );
      expect(open.stamps).toEqual(
        mapi === held ? [] : [["value", "status", "providerStatus", "conditions", 0]],
      );
    }
  });

  it("a conversion that cannot start (no Infrastructure) has nothing to stamp", () => {
    const open = mapiMachineStatusToCapiUnstamped(mapiMachine(), undefined, {});
    expect(open.result.ok).toBe(false);
    expect(open.stamps).toEqual([]);
  });

  it("mergeConditions is mergeConditionsUnstamped, stamped", () => {
    const produced = [
      { type: "Ready", status: "True" as const, reason: "Ready" },
      { type: "Deleting", status: "False" as const, reason: "NotDeleting" },
    ];
    const existing = [
      { type: "Paused", status: "False", lastTransitionTime: EARLIER },
      { type: "Ready", status: "False", lastTransitionTime: EARLIER },
      { type: "Deleting", status: "False", lastTransitionTime: EARLIER },
    ];
    const open = mergeConditionsUnstamped(existing, produced);
    expect(open.stamps).toEqual([[1]]);
    expect(stampNow(open, NOW)).toEqual(mergeConditions(existing, produced, NOW));
    expect(mergeConditions(existing, produced, NOW)).toEqual([
      { type: "Paused", status: "False", lastTransitionTime: EARLIER },
      { type: "Ready", status: "True", reason: "Ready", lastTransitionTime: NOW },
      { type: "Deleting", status: "False", reason: "NotDeleting", lastTransitionTime: EARLIER },
    ]);
  });
});
