/**
 * Issue 19 on the whole product (test/integration/harness.ts), on the local API server and on the real
 * control plane: SPEC v5 §3.5 "live reads before releasing anything" and §3.1 step 9 as real Cluster API
 * shapes it. The migration controllers here are started by the test itself (the harness runs the sync
 * controllers and the stand-ins), so a test can play what the harness cannot: a leader that dies right after
 * step 9's write and a standby whose cache is behind, and a step-9 write whose reply is lost and that reaches
 * the server late. I1–I4 are checked after every watch event, the instance ledger (I6) at the end.
 */
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cache, createCache } from "../../src/kube/cache.js";
import type { KubeClient } from "../../src/kube/client.js";
import { systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import type { Controller } from "../../src/kube/controller.js";
import { TransportError } from "../../src/kube/errors.js";
import { createEventRecorder } from "../../src/kube/events.js";
import { FINALIZERS, KINDS, type ResourceType } from "../../src/kube/kinds.js";
import {
  finalizersOf,
  getPath,
  isDeleting,
  type KubeObject,
  ownerReferencesOf,
} from "../../src/kube/object.js";
import { mapiMachineSet } from "../../src/local/seed.js";
import { createMigrationController } from "../../src/migration/controller.js";
import { statusAuthorityReading } from "../../src/protocol/authority.js";
import { isPaused } from "../../src/protocol/pause.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, startHarness, type Watched } from "./harness.js";
import { createRunningMachine } from "./support.js";

const quiet = pino({ level: "silent" });
let h: Harness;

beforeAll(async () => {
  // The sync controllers and the stand-ins; each test runs the migration controllers it needs.
  h = await startHarness({ name: "handover-v5", migration: false });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

interface MigrationOptions {
  /** Wraps the controllers' client (what reaches the API server, and what comes back). */
  client?: (client: KubeClient) => KubeClient;
  /** Wraps the controllers' view of their informer cache (a cache behind). */
  cache?: (cache: Cache) => Cache;
}

/** The product's migration controllers (Machine and MachineSet) as the product's identity, on a fresh cache. */
const startMigration = async (options: MigrationOptions = {}) => {
  const connection = connect({ kubeconfigText: h.cluster.kubeconfigText, context: "controller" });
  const cache = createCache({ transport: connection.transport, logger: quiet, clock: systemClock });
  const events = createEventRecorder({
    client: connection.client,
    component: "machine-api-migration",
    clock: systemClock,
    logger: quiet,
  });
  const client = options.client ? options.client(connection.client) : connection.client;
  const view = options.cache ? options.cache(cache) : cache;
  const controllers: Controller[] = (["Machine", "MachineSet"] as const).map((kind) =>
    createMigrationController({
      kind,
      cache: view,
      client,
      events,
      registry: new Registry(),
      clock: systemClock,
      logger: quiet,
      namespaces: ns,
      waitBackoff: { initialMs: 50, maxMs: 500 },
      blockedRequeueMs: 1_000,
    }),
  );
  await cache.waitForSync(20_000);
  await Promise.all(controllers.map((c) => c.start()));
  return {
    async stop() {
      await Promise.all(controllers.map((c) => c.stop()));
      await cache.stop();
    },
  };
};

const isMapiMachine = (type: ResourceType): boolean =>
  type.group === KINDS.mapiMachine.group && type.kind === KINDS.mapiMachine.kind;

const runningFlippableMachine = async (name: string): Promise<Watched> => {
  const w = await createRunningMachine(h, name);
  // Admission lets the flip through only once the product's cache shows the CAPI twin provisioned
  // (migration-twin-not-ready); the sync mirrors that status a moment after the MAPI Machine is steady.
  await h.waitFor(
    `CAPI twin ${name} provisioned in the product's cache`,
    () =>
      getPath(h.productCache().get(KINDS.capiMachine, CAPI_NS, name), [
        "status",
        "initialization",
        "infrastructureProvisioned",
      ]) === true || undefined,
  );
  return w;
};

const machineGone = (name: string) =>
  h.waitFor(
    `Machine ${name} and its twin gone`,
    async () => {
      const e = await h.existing();
      return !e.mapi.includes(name) && !e.capi.includes(name);
    },
    60_000,
  );

/** One instance for the Machine's whole life, terminated once, for the user's deletion; I1–I4 and I6 hold. */
const assertCleanEnd = async (w: Watched): Promise<void> => {
  await machineGone(w.name);
  await h.quiesce();
  expect(w.violations).toEqual([]);
  const instances = h.ledger.snapshot().instances.filter((i) => i.machineName === w.name);
  expect(instances).toHaveLength(1);
  expect(instances[0]?.terminatedSeq).toBeDefined();
  expect(instances[0]?.terminatedFor?.deleting).toBe(true);
  expect(await h.ledgerViolations()).toEqual([]);
};

const migrating = (w: Watched): boolean => {
  const mapi = h.snapshotOf(w).mapi;
  return mapi !== undefined && statusAuthorityReading(mapi) === "Migrating";
};

describe("SPEC §3.5: a handover past step 9 is never rolled back from an incomplete view", () => {
  it("the leader dies right after step 9's write; the MAPI Machine is deleted; a standby whose AWSMachine informer is behind (no CAPA finalizer) completes to ClusterAPI and CAPA terminates the instance", async () => {
    const name = "v5-failover";
    let dead = false;
    let died: () => void = () => {};
    const death = new Promise<void>((resolve) => {
      died = resolve;
    });
    const leader = await startMigration({
      client: (client) => ({
        ...client,
        async patch(type, namespace, objectName, patch, options) {
          if (dead) throw new TransportError(0, "", "the leader's process is gone");
          const written = await client.patch(type, namespace, objectName, patch, options);
          // MachineAPI → ClusterAPI writes one JSON Patch to the MAPI Machine: step 9 (MAO's finalizer off).
          if (isMapiMachine(type) && objectName === name && patch.type === "json") {
            dead = true;
            died();
            throw new TransportError(0, "", "the leader's process died before the reply");
          }
          return written;
        },
      }),
    });
    let standby: { stop(): Promise<void> } | undefined;
    try {
      const w = await runningFlippableMachine(name);
      // What the standby's AWSMachine informer still shows: paused, without CAPA's finalizer (step 8 adds it).
      const behind = await h.admin.get(KINDS.awsMachine, CAPI_NS, name);
      expect(finalizersOf(behind)).not.toContain(FINALIZERS.awsMachine);
      await h.setSpecAuthority("Machine", name, "ClusterAPI");
      await death;
      await leader.stop();
      await h.waitFor("step 9 visible: MAO's finalizer gone, CAPI's and CAPA's on, still Migrating", () => {
        const s = h.snapshotOf(w);
        return (
          migrating(w) &&
          !finalizersOf(s.mapi).includes(FINALIZERS.mapiMachine) &&
          finalizersOf(s.capi).includes(FINALIZERS.capiMachine) &&
          finalizersOf(s.infraMachine).includes(FINALIZERS.awsMachine)
        );
      });
      await h.admin.delete(KINDS.mapiMachine, MAPI_NS, name);
      await h.waitFor(
        "the MAPI Machine's deletion seen",
        () => isDeleting(h.snapshotOf(w).mapi) || undefined,
      );

      // The standby's AWSMachine view stays behind until it has written something itself.
      let lagging = true;
      standby = await startMigration({
        cache: (cache) => ({
          ...cache,
          get: (type, namespace, objectName) =>
            lagging && type.kind === "AWSMachine" && objectName === name
              ? behind
              : cache.get(type, namespace, objectName),
        }),
        client: (client) => ({
          ...client,
          async patch(type, namespace, objectName, patch, options) {
            const written = await client.patch(type, namespace, objectName, patch, options);
            lagging = false;
            return written;
          },
        }),
      });
      await assertCleanEnd(w);
      const reasons = await h.eventReasons(w);
      expect(reasons).toContain("MigrationCompleted");
      expect(reasons).not.toContain("MigrationCancelled");
      const instance = h.ledger.snapshot().instances.find((i) => i.machineName === name);
      expect(instance?.terminatedBy).toBe("ClusterAPI");
    } finally {
      await standby?.stop();
      await leader.stop();
    }
  });

  it("a step-9 write whose reply is lost reaches the server late, after the user deleted the MAPI Machine: it is refused, the handover rolls back and MAO terminates the instance", async () => {
    const name = "v5-lost-reply";
    let armed = false;
    let late: (() => Promise<string>) | undefined;
    let lateOutcome: Promise<string> | undefined;
    let cache: Cache | undefined;
    const controller = await startMigration({
      cache: (c) => {
        cache = c;
        return c;
      },
      client: (client) => ({
        ...client,
        async patch(type, namespace, objectName, patch, options) {
          if (armed && isMapiMachine(type) && objectName === name && patch.type === "json") {
            armed = false;
            // In flight, not yet applied: it reaches the server after the controller's next write.
            late = () =>
              client.patch(type, namespace, objectName, patch, options).then(
                () => "landed",
                (e: unknown) => `refused: ${e instanceof Error ? e.name : String(e)}`,
              );
            await h.admin.delete(KINDS.mapiMachine, MAPI_NS, name);
            await h.waitFor("the controller's cache shows the deletion", () =>
              isDeleting(cache?.get(KINDS.mapiMachine, MAPI_NS, name)),
            );
            throw new TransportError(0, "", `PATCH ${objectName}: socket hang up`);
          }
          const written = await client.patch(type, namespace, objectName, patch, options);
          if (late && !lateOutcome) lateOutcome = late();
          return written;
        },
      }),
    });
    try {
      const w = await runningFlippableMachine(name);
      armed = true;
      await h.setSpecAuthority("Machine", name, "ClusterAPI");
      await h.waitFor("the step-9 write lost", () => late !== undefined, 30_000);
      await h.waitFor("status back to MachineAPI", () => {
        const mapi = h.snapshotOf(w).mapi;
        return !mapi || statusAuthorityReading(mapi) === "MachineAPI";
      });
      lateOutcome ??= late?.();
      expect(await lateOutcome).toMatch(/^refused/);
      await assertCleanEnd(w);
      const instance = h.ledger.snapshot().instances.find((i) => i.machineName === name);
      expect(instance?.terminatedBy).toBe("MachineAPI");
      expect(await h.eventReasons(w)).toContain("MigrationCancelled");
    } finally {
      await controller.stop();
    }
  });
});

describe("SPEC v5 §3.1 step 9: Cluster API keeps its finalizers on paused objects", () => {
  it("a Machine handed to ClusterAPI and back: step 9 removes CAPA's finalizer only, Cluster API's stays on the paused twin, and a delete terminates the instance once, through MAO", async () => {
    const controller = await startMigration();
    try {
      const w = await runningFlippableMachine("v5-there-and-back");
      await h.setSpecAuthority("Machine", w.name, "ClusterAPI");
      await h.steady(w, "ClusterAPI");
      await h.setSpecAuthority("Machine", w.name, "MachineAPI");
      const back = await h.steady(w, "MachineAPI");
      await h.quiesce();
      const s = h.snapshotOf(w);
      expect(back.mapi).toBeDefined();
      expect(finalizersOf(s.mapi)).toContain(FINALIZERS.mapiMachine);
      expect(isPaused(s.capi) && isPaused(s.infraMachine)).toBe(true);
      expect(finalizersOf(s.capi)).toContain(FINALIZERS.capiMachine);
      expect(finalizersOf(s.infraMachine)).not.toContain(FINALIZERS.awsMachine);
      await h.admin.delete(KINDS.mapiMachine, MAPI_NS, w.name);
      await assertCleanEnd(w);
      const instance = h.ledger.snapshot().instances.find((i) => i.machineName === w.name);
      expect(instance?.terminatedBy).toBe("MachineAPI");
    } finally {
      await controller.stop();
    }
  });

  it("a MachineSet handed to ClusterAPI and back keeps cluster.x-k8s.io/machineset on its paused CAPI copy; deleting it deletes both copies and its Machine", async () => {
    const controller = await startMigration();
    try {
      const set: KubeObject = mapiMachineSet(ns, "b", 1);
      const name = String(set.metadata?.name);
      const w = h.watch("MachineSet", name);
      await h.admin.create(KINDS.mapiMachineSet, set);
      await h.steady(w, "MachineAPI");
      await h.waitFor("its Machine Running", async () => {
        const machines = (await h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((m) =>
          ownerReferencesOf(m).some((o) => o.kind === "MachineSet" && o.name === name),
        );
        return machines.length === 1 && getPath(machines[0], ["status", "phase"]) === "Running";
      });
      await h.quiesce();
      await h.setSpecAuthority("MachineSet", name, "ClusterAPI");
      await h.steady(w, "ClusterAPI");
      await h.setSpecAuthority("MachineSet", name, "MachineAPI");
      await h.steady(w, "MachineAPI");
      await h.quiesce();
      const s = h.snapshotOf(w);
      expect(isPaused(s.capi)).toBe(true);
      expect(finalizersOf(s.capi)).toContain(FINALIZERS.capiMachineSet);
      await h.admin.delete(KINDS.mapiMachineSet, MAPI_NS, name);
      await h.waitFor(
        "both MachineSet copies gone",
        async () => {
          const mapi = (await h.admin.list(KINDS.mapiMachineSet, { namespace: MAPI_NS })).items;
          const capi = (await h.admin.list(KINDS.capiMachineSet, { namespace: CAPI_NS })).items;
          return ![...mapi, ...capi].some((o) => o.metadata?.name === name);
        },
        60_000,
      );
      await h.waitFor(
        "its Machines gone",
        async () => {
          const e = await h.existing();
          return ![...e.mapi, ...e.capi].some((m) => m.startsWith(`${name}-`));
        },
        60_000,
      );
      await h.quiesce();
      expect(w.violations).toEqual([]);
      expect(await h.ledgerViolations()).toEqual([]);
    } finally {
      await controller.stop();
    }
  });
});
