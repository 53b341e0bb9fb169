/**
 * SPEC §4.2 and I1 with the real controllers against the API server: a user's unpaused CAPI Machine and
 * AWSMachine (the race of §4.2) under a MachineAPI Machine is paused *and* flagged — `needs-attention` on both,
 * `Synchronized=False UnpausedTwinDetected`, a Warning Event — whichever of the sync and the migration
 * controller reconciles it first (decision 53: the sync owns that pause). The harness runs the sync
 * controllers; this file runs the Machine migration controller itself, as the product's identity on its own
 * cache, so that each order can be arranged: the sync stopped while the migration controller sees the twin
 * first, or the migration controller started only after the sync flagged it. The providers are not simulated
 * (nothing here needs them). Waiting is polling for a state, never asserting elapsed time.
 */
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cache, createCache } from "../../src/kube/cache.js";
import { systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import type { Controller } from "../../src/kube/controller.js";
import { createEventRecorder } from "../../src/kube/events.js";
import { ANNOTATIONS, KINDS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath } from "../../src/kube/object.js";
import { mapiMachine } from "../../src/local/seed.js";
import { createMigrationController } from "../../src/migration/controller.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness } from "./harness.js";
import { createUnpausedTwins } from "./support.js";

let h: Harness;
let migrationCache: Cache | undefined;
let migration: Controller | undefined;
/** The migration controller's writes, from its `wrote` log lines: `step target`. */
const migrationWrites: string[] = [];

const silentExceptWrites = {
  level: "info",
  write(line: string) {
    const o = JSON.parse(line) as Record<string, unknown>;
    if (o.msg === "wrote") migrationWrites.push(`${String(o.step)} ${String(o.target)}`);
  },
};

const startMigration = async (): Promise<void> => {
  const connection = connect({ kubeconfigText: h.cluster.kubeconfigText, context: "controller" });
  const quiet = pino({ level: "silent" });
  const cache = createCache({ transport: connection.transport, logger: quiet, clock: systemClock });
  const controller = createMigrationController({
    kind: "Machine",
    cache,
    client: connection.client,
    events: createEventRecorder({
      client: connection.client,
      component: "machine-api-migration",
      clock: systemClock,
      logger: quiet,
    }),
    registry: new Registry(),
    clock: systemClock,
    logger: pino({ level: "info" }, silentExceptWrites),
    namespaces: ns,
    waitBackoff: { initialMs: 50, maxMs: 500 },
    blockedRequeueMs: 1_000,
  });
  await cache.waitForSync(10_000);
  migrationCache = cache;
  migration = controller;
  await controller.start();
};

const migrationIdle = (): boolean => {
  const q = migration?.queue();
  return q !== undefined && q.len() === 0 && q.processing().length === 0;
};

const twins = async (name: string): Promise<KubeObject[]> => [
  await h.admin.get(KINDS.capiMachine, CAPI_NS, name),
  await h.admin.get(KINDS.awsMachine, CAPI_NS, name),
];

/**
 * The migration controller has reconciled `name` on what the API server holds now: its cache shows the live
 * resourceVersion of the MAPI Machine and both twins, and its queue is idle for five polls in a row.
 */
const migrationSettled = async (name: string): Promise<void> => {
  let calm = 0;
  await h.waitFor(`the migration controller to settle on ${name}`, async () => {
    const live = [await h.admin.get(KINDS.mapiMachine, MAPI_NS, name), ...(await twins(name))];
    const seen = [
      migrationCache?.get(KINDS.mapiMachine, MAPI_NS, name),
      migrationCache?.get(KINDS.capiMachine, CAPI_NS, name),
      migrationCache?.get(KINDS.awsMachine, CAPI_NS, name),
    ];
    const caughtUp = live.every((o, i) => o.metadata?.resourceVersion === seen[i]?.metadata?.resourceVersion);
    calm = caughtUp && migrationIdle() ? calm + 1 : 0;
    return calm >= 5;
  });
};

/** The race of §4.2: a user's CAPI Machine and AWSMachine, unpaused and with an instance, then the MAPI Machine. */
const createRace = async (name: string): Promise<void> => {
  await createUnpausedTwins(h.admin, name, { instanceID: "i-0abc1234def567890" });
  // MAO's part: the Machine, with status.authoritativeAPI copied from spec (SPEC §1).
  const mao = h.cluster.clientAs("mao");
  const base = mapiMachine(ns, name, "a");
  const created = await mao.create(KINDS.mapiMachine, {
    ...base,
    spec: { ...base.spec, authoritativeAPI: "MachineAPI" },
  });
  await mao.updateStatus(KINDS.mapiMachine, {
    ...created,
    status: { authoritativeAPI: "MachineAPI", synchronizedAPI: "MachineAPI" },
  });
};

/** The §4.2 outcome: both twins paused with the marker and flagged, the condition and the Warning Event. */
const flagged = async (name: string): Promise<void> => {
  const mapi = await h.waitFor("Synchronized=False UnpausedTwinDetected", async () => {
    const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, name);
    return conditionOf(o, "Synchronized")?.reason === "UnpausedTwinDetected" ? o : undefined;
  });
  expect(conditionOf(mapi, "Synchronized")?.message).toContain("i-0abc1234def567890");
  expect(getPath(mapi, ["status", "authoritativeAPI"])).toBe("MachineAPI");
  for (const o of await twins(name)) {
    expect(o.metadata?.annotations, String(o.kind)).toMatchObject({
      [ANNOTATIONS.paused]: "",
      [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE,
      [ANNOTATIONS.needsAttention]: "UnpausedTwinDetected",
    });
    expect(o.metadata?.deletionTimestamp).toBeUndefined();
  }
  const reasons = await h.waitFor("the UnpausedTwinDetected Event", async () => {
    const r = await h.eventReasons({ kind: "Machine", name });
    return r.includes("UnpausedTwinDetected") ? r : undefined;
  });
  expect(reasons).toContain("UnpausedTwinDetected");
  // The migration controller never paused the twin: that pause is the sync's (decision 53).
  expect(migrationWrites.filter((w) => w.startsWith("pause ") && w.includes(`/${name}`))).toEqual([]);
};

beforeAll(async () => {
  h = await startHarness({ name: "unpaused-twin-owner", migration: false, standIns: false });
}, 60_000);

afterAll(async () => {
  await migration?.stop();
  await migrationCache?.stop();
  await h?.stop();
});

describe("SPEC §4.2 / I1: the sync alone pauses an unpaused twin under MachineAPI, and flags it, in either order", () => {
  it("the migration controller first (the sync stopped), then the sync: flagged", async () => {
    const name = "race-migration-first";
    await Promise.all(h.controllers().map((c) => c.stop()));
    await startMigration();
    await createRace(name);
    // Steady under MachineAPI with an unpaused twin: nothing of the migration controller's own to do.
    await migrationSettled(name);
    for (const o of await twins(name))
      expect(o.metadata?.annotations?.[ANNOTATIONS.paused], String(o.kind)).toBeUndefined();
    await h.restartProduct();
    await flagged(name);
  }, 60_000);

  it("the sync first, then the migration controller (both running): flagged, and left so", async () => {
    const name = "race-sync-first";
    await migration?.stop();
    await migrationCache?.stop();
    migration = undefined;
    if (!h.controllers().every((c) => c.isRunning())) await h.restartProduct();
    await createRace(name);
    await h.waitFor("the sync to flag the twin", async () => {
      const o = await h.admin.get(KINDS.capiMachine, CAPI_NS, name);
      return o.metadata?.annotations?.[ANNOTATIONS.needsAttention] !== undefined;
    });
    await startMigration();
    await migrationSettled(name);
    await flagged(name);
  }, 60_000);
});
