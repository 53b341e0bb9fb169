/**
 * The handover controller shell (SPEC §3, §3.4, §7) against a fake cluster: the planner's world of
 * ./world.ts as the live state, a cache that shows it only when the test syncs it (so a lagging cache is
 * easy to stage), a client whose patches follow the API server's rules (resourceVersion preconditions,
 * JSON Patch tests, the status subresource), the stand-in controllers of ./world.ts, a manual clock and a
 * recording event recorder. Covers: the writes of one reconcile (decision 91's chains), waits requeue with a growing delay, one
 * Event per transition, the metrics, stuck detection, 409 → error, and the watches' key mappers.
 */
import jsonpatch from "fast-json-patch";
import { Registry } from "prom-client";
import { describe, expect, it, vi } from "vitest";
import type { Cache } from "../../src/kube/cache.js";
import type { KubeClient, Patch, WriteOptions } from "../../src/kube/client.js";
import { createManualClock } from "../../src/kube/clock.js";
import { ConflictError, InvalidError, NotFoundError, TransportError } from "../../src/kube/errors.js";
import type { EventRecorder } from "../../src/kube/events.js";
import type { ResourceType, StableAuthority } from "../../src/kube/kinds.js";
import {
  CAPI_API_VERSION,
  CONDITIONS,
  FINALIZERS,
  KINDS,
  LABELS,
  MAPI_API_VERSION,
} from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { finalizersOf, getPath, isRecord, nameOf, namespaceOf } from "../../src/kube/object.js";
import type { MigrationReconciler } from "../../src/migration/controller.js";
import { createMigrationController, createMigrationReconciler } from "../../src/migration/controller.js";
import type { MigrationMetrics } from "../../src/migration/metrics.js";
import { migrationMetrics } from "../../src/migration/metrics.js";
import { planHandover } from "../../src/migration/planner.js";
import type { HandoverKind, HandoverSnapshot, Role } from "../../src/migration/snapshot.js";
import { objectOf } from "../../src/migration/snapshot.js";
import { migrationWatches } from "../../src/migration/watches.js";
import { memoryStore } from "../../src/policies/memory-store.js";
import { opposite, statusAuthorityReading } from "../../src/protocol/authority.js";
import type { FakeInformer } from "../kube/fakes.js";
import { fakeInformer, silentLogger } from "../kube/fakes.js";
import type { World } from "./world.js";
import {
  ACTORS,
  act,
  CAPI_NS,
  clone,
  edit,
  MAPI_NS,
  markDeleting,
  membersOf,
  putCondition,
  setSpecAuthority,
  stableSnapshot,
  worldOf,
} from "./world.js";

const NAMESPACES = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
const STUCK_AFTER_MS = 15 * 60_000;

interface RecordedEvent {
  /** How many patches had been sent when the Event was recorded. */
  afterCalls: number;
  name: string;
  type: string;
  reason: string;
  message: string;
}

interface Call {
  role: Role;
  verb: string;
  subresource?: string;
}

const ROLES: readonly Role[] = ["mapi", "capi", "infraMachine"];

const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isRecord(patch)) return clone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
};

const objectsOf = (s: HandoverSnapshot): KubeObject[] =>
  [s.mapi, s.capi, s.infraMachine, ...(s.members?.mapi ?? []), ...(s.members?.capi ?? [])].filter(
    (o): o is KubeObject => o !== undefined,
  );

/** The live world, a cache of it that moves only on `sync()`, a rule-following client, events, metrics. */
const fakeCluster = (start: HandoverSnapshot, registry = new Registry()) => {
  let world: World = worldOf(start);
  let cache = memoryStore(objectsOf(start));
  const calls: Call[] = [];
  const reads: string[] = [];
  /** The signal each request carried (a reconcile's, decision 198). */
  const signals: { call: string; signal: AbortSignal | undefined }[] = [];
  const events: RecordedEvent[] = [];
  let failNext: Error | undefined;
  let noopNext = false;
  let holdWhen: ((role: Role, patch: Patch) => boolean) | undefined;
  let held: (() => Promise<KubeObject>) | undefined;
  let loseWhen: ((role: Role, patch: Patch) => boolean) | undefined;

  const roleOf = (namespace: string, name: string, kind: string): Role => {
    const role = ROLES.find((r) => {
      const o = objectOf(world.s, r);
      return o && namespaceOf(o) === namespace && nameOf(o) === name && o.kind === kind;
    });
    if (!role) throw new NotFoundError(404, "NotFound", `${kind} ${namespace}/${name} not found`);
    return role;
  };

  const replace = (role: Role, next: KubeObject): void => {
    const rv = world.rv + 1;
    world = {
      rv,
      now: world.now + 1000,
      s: edit(world.s, role, (o) => {
        for (const k of Object.keys(o)) delete o[k];
        Object.assign(o, next, { metadata: { ...next.metadata, resourceVersion: String(rv) } });
      }),
    };
  };

  const ofType = (type: ResourceType, o: KubeObject): boolean =>
    o.kind === type.kind && String(o.apiVersion).startsWith(type.group ? `${type.group}/` : "");

  /** The API server's side of a patch: preconditions, JSON Patch tests, the status subresource. */
  const apply = (role: Role, patch: Patch, options: WriteOptions | undefined): KubeObject => {
    const current = clone(objectOf(world.s, role)!);
    let next: KubeObject;
    if (patch.type === "merge") {
      const rv = getPath(patch.body, ["metadata", "resourceVersion"]);
      if (rv !== current.metadata?.resourceVersion)
        throw new ConflictError(409, "Conflict", "the object has been modified");
      const patched = mergePatch(current, patch.body) as KubeObject;
      next =
        options?.subresource === "status"
          ? { ...current, status: patched.status ?? {} }
          : { ...patched, status: current.status };
    } else if (patch.type === "json") {
      try {
        next = jsonpatch.applyPatch(current, [...patch.body], true, false).newDocument;
      } catch {
        throw new InvalidError(422, "Invalid", "the server rejected our request");
      }
    } else throw new Error("no apply here");
    replace(role, next);
    return clone(objectOf(world.s, role)!);
  };

  const unsupported = (): never => {
    throw new Error("the migration controller only reads and patches");
  };
  const client: KubeClient = {
    async get(type, namespace, name, options) {
      reads.push(`get ${type.kind} ${namespace}/${name}`);
      signals.push({ call: `get ${type.kind} ${name}`, signal: options?.signal });
      const found = objectsOf(world.s).find(
        (o) => ofType(type, o) && namespaceOf(o) === namespace && nameOf(o) === name,
      );
      if (!found) throw new NotFoundError(404, "NotFound", `${type.kind} ${namespace}/${name} not found`);
      return clone(found);
    },
    async list(type, options) {
      reads.push(`list ${type.kind} ${options?.namespace ?? ""}`);
      signals.push({ call: `list ${type.kind}`, signal: options?.signal });
      const items = objectsOf(world.s).filter(
        (o) => ofType(type, o) && (options?.namespace === undefined || namespaceOf(o) === options.namespace),
      );
      return { items: items.map(clone), resourceVersion: String(world.rv) };
    },
    create: unsupported,
    update: unsupported,
    updateStatus: unsupported,
    delete: unsupported,
    async patch(type, namespace, name, patch, options) {
      signals.push({ call: `patch ${type.kind} ${name}`, signal: options?.signal });
      if (failNext) {
        const e = failNext;
        failNext = undefined;
        throw e;
      }
      const role = roleOf(namespace, name, type.kind);
      calls.push({
        role,
        verb: patch.type,
        ...(options?.subresource ? { subresource: options.subresource } : {}),
      });
      if (loseWhen?.(role, patch)) {
        // Applied, but the reply never comes back.
        loseWhen = undefined;
        apply(role, patch, options);
        throw new TransportError(0, "", `PATCH ${name}: connection reset after the request was sent`);
      }
      if (holdWhen?.(role, patch)) {
        // Sent, but the reply never comes: the server may still apply it later (see `releaseHeld`).
        holdWhen = undefined;
        held = async () => apply(role, patch, options);
        throw new TransportError(0, "", `PATCH ${name}: socket hang up`);
      }
      if (noopNext) {
        // The server found nothing to change: same object, same resourceVersion, no watch event.
        noopNext = false;
        return clone(objectOf(world.s, role)!);
      }
      return apply(role, patch, options);
    },
  };
  const recorder: EventRecorder = {
    async record(object, type, reason, message) {
      events.push({ afterCalls: calls.length, name: nameOf(object), type, reason, message });
    },
  };
  const store = {
    get: (t, ns, n) => cache.get(t, ns, n),
    list: (t, ns) => cache.list(t, ns),
    freshness: (t) => cache.freshness(t),
  } as ReturnType<typeof memoryStore>;
  return {
    client,
    recorder,
    registry,
    store,
    calls,
    reads,
    signals,
    events,
    world: () => world,
    /** The cache catches up with the live state. */
    sync() {
      cache = memoryStore(objectsOf(world.s));
    },
    /** The cache shows exactly `s` (a cache behind, or inconsistent across kinds). */
    cacheShows(s: HandoverSnapshot) {
      cache = memoryStore(objectsOf(s));
    },
    /** The cache catches up with everything but `role`'s object (its watch event is late). */
    syncExcept(role: Role) {
      const cached = objectOf(world.s, role);
      const old =
        cached &&
        cache.get(
          KINDS[role === "mapi" ? "mapiMachine" : role === "capi" ? "capiMachine" : "awsMachine"],
          namespaceOf(cached),
          nameOf(cached),
        );
      cache = memoryStore(
        objectsOf(
          old
            ? edit(world.s, role, (o) => {
                for (const k of Object.keys(o)) delete o[k];
                Object.assign(o, clone(old));
              })
            : world.s,
        ),
      );
    },
    /** Every stand-in reconciles once (MAO, CAPI, CAPA, the sync); returns whether anything changed. */
    actors(): boolean {
      const before = world;
      for (const a of ACTORS) world = act(world, a);
      return world !== before;
    },
    /** A change made by someone else, straight to the live state. */
    change(role: Role, fn: (o: KubeObject) => void) {
      const next = clone(objectOf(world.s, role)!);
      fn(next);
      replace(role, next);
    },
    /** A member Machine created by someone else (MachineSets), straight to the live state. */
    addMember(side: "mapi" | "capi", machine: KubeObject) {
      const members = world.s.members ?? { mapi: [], capi: [] };
      const rv = world.rv + 1;
      const created = { ...clone(machine), metadata: { ...machine.metadata, resourceVersion: String(rv) } };
      world = {
        ...world,
        rv,
        s: { ...world.s, members: { ...members, [side]: [...members[side], created] } },
      };
    },
    failNextPatch(e: Error) {
      failNext = e;
    },
    noopNextPatch() {
      noopNext = true;
    },
    /** The first patch matching `when` is sent but its reply is lost (TransportError); it is applied only on `releaseHeld`. */
    holdPatch(when: (role: Role, patch: Patch) => boolean) {
      holdWhen = when;
    },
    /** The first patch matching `when` is applied, but its reply is lost (TransportError). */
    loseReply(when: (role: Role, patch: Patch) => boolean) {
      loseWhen = when;
    },
    isHolding: () => held !== undefined,
    /** The held patch reaches the server now: resolves with the object, or rejects as the server would. */
    async releaseHeld(): Promise<KubeObject> {
      const send = held;
      held = undefined;
      if (!send) throw new Error("nothing held");
      return send();
    },
  };
};

const reconcilerFor = (
  c: ReturnType<typeof fakeCluster>,
  kind: HandoverKind,
  clock: ReturnType<typeof createManualClock>,
  metrics: MigrationMetrics,
) =>
  createMigrationReconciler({
    kind,
    store: c.store,
    client: c.client,
    events: c.recorder,
    metrics,
    clock,
    logger: silentLogger(),
    namespaces: NAMESPACES,
    migrationStuckAfterMs: STUCK_AFTER_MS,
  });

const setup = (start: HandoverSnapshot, options: { metrics?: MigrationMetrics } = {}) => {
  const c = fakeCluster(start);
  const clock = createManualClock(Date.parse("2026-11-30T10:00:00Z"));
  const metrics = options.metrics ?? migrationMetrics(c.registry);
  const reconciler = reconcilerFor(c, start.kind, clock, metrics);
  return {
    ...c,
    clock,
    metrics,
    reconciler,
    name: nameOf(start.mapi),
    /** A new leader on the same cluster: its own memory (none yet) and, until `sync()`, the cache as it is now. */
    newLeader: () => reconcilerFor(c, start.kind, clock, metrics),
  };
};

const requestHandover = (kind: HandoverKind, from: StableAuthority): HandoverSnapshot =>
  setSpecAuthority(stableSnapshot(kind, from), opposite(from));

type Env = ReturnType<typeof setup>;

/**
 * Drives the shell like the runtime would, one reconcile at a time, the cache syncing after each write and
 * the stand-ins acting after each reconcile; returns the write count of every reconcile.
 */
const driveToRest = async (env: Env, maxRounds = 200, advanceMs = 1_000): Promise<number[]> => {
  const writesPerReconcile: number[] = [];
  for (let round = 0; round < maxRounds; round++) {
    const before = env.calls.length;
    await env.reconciler.reconcile(env.name);
    const wrote = env.calls.length - before;
    writesPerReconcile.push(wrote);
    env.sync();
    const acted = env.actors();
    env.sync();
    await env.clock.advance(advanceMs);
    if (wrote === 0 && !acted) return writesPerReconcile;
  }
  throw new Error("no rest");
};

const metricValue = async (
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> => {
  const metric = registry.getSingleMetric(name);
  if (!metric) return undefined;
  const { values } = await metric.get();
  const match = values.find((v) =>
    Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want),
  );
  return match?.value;
};

/** A patch as the tables below name it: verb, subresource, target. */
const callLabel = (c: Call): string => `${c.verb}${c.subresource ? `/${c.subresource}` : ""} ${c.role}`;

/** The writes of each reconcile that wrote, in order. */
const writeGroups = (env: Env, writesPerReconcile: readonly number[]): string[][] => {
  const labels = env.calls.map(callLabel);
  const groups: string[][] = [];
  let at = 0;
  for (const n of writesPerReconcile) {
    if (n > 0) groups.push(labels.slice(at, at + n));
    at += n;
  }
  return groups;
};

describe("the writes of one reconcile (SPEC §3.1, §3.5; decision 91: a chain only where SPEC waits for no cache)", () => {
  // Each row: the writes of every reconcile that wrote. Steps 8 → 9 and 9 → 10 are never in one reconcile
  // ("requeue until the cache shows them"); step 4's writes, 4 → 5, and step 5's and 11's objects are.
  const rows: { kind: HandoverKind; from: StableAuthority; groups: string[][] }[] = [
    {
      kind: "Machine",
      from: "MachineAPI",
      groups: [
        ["merge mapi", "merge/status mapi"], // step 4: paused-false-at, Migrating
        ["json infraMachine"], // step 8 (Cluster API's own finalizer is already on the paused CAPI Machine)
        ["json mapi"], // step 9
        ["merge/status mapi"], // step 10
        ["merge capi", "merge infraMachine"], // step 11
      ],
    },
    {
      kind: "Machine",
      from: "ClusterAPI",
      groups: [
        ["merge mapi", "merge/status mapi", "merge capi", "merge infraMachine"], // step 4, step 5
        ["json mapi"], // step 8
        ["json infraMachine"], // step 9
        ["merge/status mapi"], // step 10
      ],
    },
  ];
  for (const row of rows)
    it(`${row.kind} ${row.from} → ${opposite(row.from)}: the writes grouped by reconcile`, async () => {
      const env = setup(requestHandover(row.kind, row.from));
      const writes = await driveToRest(env);
      expect(writeGroups(env, writes)).toEqual(row.groups);
      expect(statusAuthorityReading(env.world().s.mapi!)).toBe(opposite(row.from));
    });

  for (const kind of ["Machine", "MachineSet"] as const)
    for (const from of ["MachineAPI", "ClusterAPI"] as const) {
      it(`${kind} ${from} → ${opposite(from)}: no reconcile writes a finalizer after another write, and the handover completes`, async () => {
        const env = setup(requestHandover(kind, from));
        const writes = await driveToRest(env);
        for (const group of writeGroups(env, writes)) {
          const finalizerWrites = group.filter((w) => w.startsWith("json"));
          // Finalizer writes chain only with each other (one step's objects), never after another step.
          if (finalizerWrites.length > 0) expect(finalizerWrites).toEqual(group);
        }
        expect(statusAuthorityReading(env.world().s.mapi!)).toBe(opposite(from));
        expect(env.calls.length).toBe(writes.reduce((a, b) => a + b, 0));
      });
    }

  it("Machine MachineAPI → ClusterAPI: the writes in SPEC order, each through the request requestOf builds", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await driveToRest(env);
    expect(env.calls.map((c) => `${c.verb}${c.subresource ? `/${c.subresource}` : ""} ${c.role}`)).toEqual([
      "merge mapi", // step 4: paused-false-at
      "merge/status mapi", // step 4: Migrating
      "json infraMachine", // step 8 (Cluster API's own finalizer is already on the paused CAPI Machine)
      "json mapi", // step 9
      "merge/status mapi", // step 10
      "merge capi", // step 11
      "merge infraMachine", // step 11
    ]);
  });

  it("steady state (spec == status, pauses right): no write, no requeue, no Event", async () => {
    const env = setup(stableSnapshot("Machine", "MachineAPI"));
    expect(await env.reconciler.reconcile(env.name)).toEqual({});
    expect(env.calls).toEqual([]);
    expect(env.events).toEqual([]);
  });

  it("gone (step 1): nothing to do", async () => {
    const env = setup(stableSnapshot("Machine", "MachineAPI"));
    expect(await env.reconciler.reconcile("no-such-machine")).toEqual({});
    expect(env.calls).toEqual([]);
  });

  it("a write not yet observed in the cache is not repeated: requeue until the cache shows it", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await env.reconciler.reconcile(env.name);
    expect(env.calls.map(callLabel)).toEqual(["merge mapi", "merge/status mapi"]);
    // The cache still shows the state the writes were planned from.
    const again = await env.reconciler.reconcile(env.name);
    expect(env.calls).toHaveLength(2);
    expect(again.requeueAfterMs).toBeGreaterThan(0);
    // The cache shows the first write of the chain but not the second: still nothing is planned from it.
    const between = env.reconciler.memoryOf(env.name)?.pendingWrites?.[1]?.plannedResourceVersion;
    expect(between).toBeDefined();
    env.cacheShows(
      edit(env.world().s, "mapi", (o) => {
        o.metadata = { ...o.metadata, resourceVersion: between };
        o.status = { ...(o.status as object), authoritativeAPI: "MachineAPI" };
      }),
    );
    expect((await env.reconciler.reconcile(env.name)).requeueAfterMs).toBeGreaterThan(0);
    expect(env.calls).toHaveLength(2);
    // Once the cache shows both, the handover goes on (the acknowledgement and the final sync, then step 8).
    for (let i = 0; i < 20 && env.calls.length === 2; i++) {
      env.sync();
      env.actors();
      env.sync();
      await env.reconciler.reconcile(env.name);
    }
    expect(env.calls.map(callLabel).slice(2)).toEqual(["json infraMachine"]);
  });

  it("SPEC §7 until observed in cache: nothing is planned from a cache that lacks our last write, even when another object's change arrived first", async () => {
    // MachineAPI → ClusterAPI up to step 9's write on the MAPI Machine; then the user deletes the CAPI twin and
    // that event reaches the cache before the one of our own write. Planned from that view, §3.5 would see
    // "step 9 not begun" and roll back — removing CAPA's finalizer from the AWSMachine, so nobody would
    // terminate the instance once the completion follows (found by the model campaign).
    const env = setup(requestHandover("Machine", "MachineAPI"));
    for (let i = 0; i < 100; i++) {
      await env.reconciler.reconcile(env.name);
      const last = env.calls.at(-1);
      if (last?.role === "mapi" && last.verb === "json") break;
      env.sync();
      env.actors();
      env.sync();
    }
    expect(env.calls.at(-1)).toMatchObject({ role: "mapi", verb: "json" });
    const written = env.calls.length;
    env.change("capi", (o) => markDeleting(o, Date.parse("2026-11-30T10:05:00Z")));
    env.syncExcept("mapi");
    const r = await env.reconciler.reconcile(env.name);
    expect(env.calls).toHaveLength(written);
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    env.sync();
    await env.reconciler.reconcile(env.name);
    expect(env.calls.slice(written).map((c) => c.role)).toEqual(["mapi"]);
    expect(env.calls.at(-1)).toMatchObject({ subresource: "status" });
  });

  it("every write of a chain is waited for: a cache that shows the last one but not the first plans nothing", async () => {
    // Leaving ClusterAPI, one reconcile writes step 4 (MAPI Machine) and step 5 (CAPI Machine, AWSMachine).
    const env = setup(requestHandover("Machine", "ClusterAPI"));
    await env.reconciler.reconcile(env.name);
    expect(env.calls.map(callLabel)).toEqual([
      "merge mapi",
      "merge/status mapi",
      "merge capi",
      "merge infraMachine",
    ]);
    // Both pauses reach the cache before the MAPI Machine's writes do. Planned from that view (status still
    // ClusterAPI, the twin paused), the next step would be a write: live reads, and a handover re-planned.
    env.syncExcept("mapi");
    const reads = env.reads.length;
    const r = await env.reconciler.reconcile(env.name);
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    expect(env.reads).toHaveLength(reads);
    expect(env.calls).toHaveLength(4);
    env.sync();
    await env.reconciler.reconcile(env.name);
    expect(env.reads.length).toBe(reads);
    expect(env.calls).toHaveLength(4);
  });

  it("a write the server took as a no-op (same resourceVersion) is not waited for", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    env.noopNextPatch();
    await env.reconciler.reconcile(env.name);
    // Nothing changed, so nothing follows it in that reconcile, and the next one is not held back.
    expect(env.calls).toHaveLength(1);
    await env.reconciler.reconcile(env.name);
    expect(env.calls.map(callLabel)).toEqual(["merge mapi", "merge mapi", "merge/status mapi"]);
  });

  it("SPEC §7 every live read and write of a reconcile carries its signal, so a stop ends their waits (decision 198)", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    const abort = new AbortController();
    await env.reconciler.reconcile(env.name, abort.signal);
    expect(env.calls.map(callLabel)).toEqual(["merge mapi", "merge/status mapi"]);
    expect(env.signals.some((s) => s.call.startsWith("get"))).toBe(true);
    for (const { call, signal } of env.signals) expect(signal, call).toBe(abort.signal);
  });

  it("a stopped controller (aborted signal) does not write", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    const abort = new AbortController();
    abort.abort();
    await env.reconciler.reconcile(env.name, abort.signal);
    expect(env.calls).toEqual([]);
  });
});

describe("409 and other API errors are thrown for the runtime to back off (SPEC §7)", () => {
  it("a stale cache: the write is planned again from a live read and carries the live resourceVersion (SPEC §3.5)", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    // Someone else changes the MAPI Machine; the cache has not seen it.
    env.change("mapi", (o) => {
      o.metadata = { ...o.metadata, labels: { ...o.metadata?.labels, team: "a" } };
    });
    const live = env.world().s.mapi?.metadata?.resourceVersion;
    await env.reconciler.reconcile(env.name);
    expect(env.calls[0]).toEqual({ role: "mapi", verb: "merge" });
    expect(env.reads).toContain(`get Machine ${MAPI_NS}/${env.name}`);
    expect(env.reconciler.memoryOf(env.name)?.pendingWrites?.[0]?.plannedResourceVersion).toBe(live);
  });

  it("a change between the live read and the write: the precondition fails with 409 and the reconcile throws", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    env.failNextPatch(new ConflictError(409, "Conflict", "the object has been modified"));
    await expect(env.reconciler.reconcile(env.name)).rejects.toBeInstanceOf(ConflictError);
    expect(env.events).toEqual([]);
  });

  it("a 409 from the server is rethrown as is; the next reconcile tries again", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    env.failNextPatch(new ConflictError(409, "Conflict", "the object has been modified"));
    await expect(env.reconciler.reconcile(env.name)).rejects.toBeInstanceOf(ConflictError);
    await env.reconciler.reconcile(env.name);
    expect(env.calls.map(callLabel)).toEqual(["merge mapi", "merge/status mapi"]);
  });
});

/**
 * Runs `reconciler` like the runtime would (errors retried), the cache syncing and the stand-ins acting after
 * each reconcile, until a round changes nothing. `afterReconcile` sees every round (a late write lands there).
 */
const settle = async (
  env: Env,
  reconciler: MigrationReconciler = env.reconciler,
  afterReconcile: () => Promise<void> = async () => {},
): Promise<void> => {
  let quiet = 0;
  for (let round = 0; round < 200; round++) {
    const before = env.world();
    await reconciler.reconcile(env.name).catch(() => undefined);
    await afterReconcile();
    env.sync();
    env.actors();
    env.sync();
    await env.clock.advance(1_000);
    quiet = env.world() === before ? quiet + 1 : 0;
    if (quiet >= 3) return;
  }
  throw new Error("no rest");
};

/** The live world's MAPI Machine, CAPI Machine and AWSMachine finalizers, for the assertions of §3.5. */
const holders = (env: Env) => {
  const { mapi, capi, infraMachine } = env.world().s;
  return {
    status: statusAuthorityReading(mapi!),
    mao: finalizersOf(mapi).includes(FINALIZERS.mapiMachine),
    capi: finalizersOf(capi).includes(FINALIZERS.capiMachine),
    capa: finalizersOf(infraMachine).includes(FINALIZERS.awsMachine),
  };
};

/**
 * Holds the MAPI Machine's next JSON patch in flight (its reply lost) and reconciles, the cache syncing and the
 * stand-ins acting after each round, until one is held (at most 100 rounds).
 */
const reconcileUntilMapiPatchHeld = async (env: Env): Promise<void> => {
  env.holdPatch((role, patch) => role === "mapi" && patch.type === "json");
  for (let i = 0; i < 100 && !env.isHolding(); i++) {
    await env.reconciler.reconcile(env.name).catch(() => undefined);
    env.sync();
    env.actors();
    env.sync();
  }
};

describe("SPEC §3.5: a roll-back or a completion is decided from live reads, never from the cache alone", () => {
  /** The first leader drives MachineAPI → ClusterAPI up to and including step 9's write; returns the world just before it. */
  const throughStepNine = async (env: Env): Promise<HandoverSnapshot> => {
    for (let i = 0; i < 100; i++) {
      const before = clone(env.world().s);
      await env.reconciler.reconcile(env.name);
      const last = env.calls.at(-1);
      if (last?.role === "mapi" && last.verb === "json") return before;
      env.sync();
      env.actors();
      env.sync();
    }
    throw new Error("step 9 never written");
  };

  it("leader failover onto a standby whose cache still shows the MAPI Machine before step 9 (CAPI twin deleted): completes to ClusterAPI, CAPA's finalizer never removed", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    const beforeStepNine = await throughStepNine(env);
    // The old leader is gone; the user deletes the CAPI Machine. The standby's MAPI Machine informer is behind.
    env.change("capi", (o) => markDeleting(o, Date.parse("2026-11-30T10:05:00Z")));
    env.cacheShows(
      edit(env.world().s, "mapi", (o) => {
        for (const k of Object.keys(o)) delete o[k];
        Object.assign(o, clone(beforeStepNine.mapi));
      }),
    );
    const standby = env.newLeader();
    await standby.reconcile(env.name).catch(() => undefined);
    expect(holders(env)).toMatchObject({ mao: false, capi: true, capa: true });
    await settle(env, standby);
    expect(holders(env)).toEqual({ status: "ClusterAPI", mao: false, capi: true, capa: true });
  });

  it("leader failover onto a standby whose cache still shows the AWSMachine before step 8 (MAPI Machine deleted): completes to ClusterAPI", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    const beforeStepNine = await throughStepNine(env);
    // The AWSMachine as the handover found it: paused, without CAPA's finalizer (step 8 adds it).
    const stale = {
      ...env.world().s,
      infraMachine: clone(requestHandover("Machine", "MachineAPI").infraMachine),
    };
    expect(finalizersOf(stale.infraMachine)).not.toContain(FINALIZERS.awsMachine);
    expect(finalizersOf(beforeStepNine.infraMachine)).toContain(FINALIZERS.awsMachine);
    env.change("mapi", (o) => markDeleting(o, Date.parse("2026-11-30T10:05:00Z")));
    env.cacheShows({ ...env.world().s, infraMachine: stale.infraMachine });
    const standby = env.newLeader();
    await standby.reconcile(env.name).catch(() => undefined);
    expect(holders(env)).toMatchObject({ capi: true, capa: true });
    await settle(env, standby);
    expect(holders(env)).toEqual({ status: "ClusterAPI", mao: false, capi: true, capa: true });
  });

  it("a step-9 write whose reply was lost and that reaches the server late, after the MAPI Machine's deletion: refused; rolled back to MachineAPI with MAO's finalizer on", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await reconcileUntilMapiPatchHeld(env);
    expect(env.isHolding()).toBe(true);
    env.change("mapi", (o) => markDeleting(o, Date.parse("2026-11-30T10:05:00Z")));
    env.sync();
    const callsAtLoss = env.calls.length;
    let late: unknown = "never sent";
    const releaseAfterNextWrite = async () => {
      if (env.isHolding() && env.calls.length > callsAtLoss)
        late = await env.releaseHeld().then(
          () => "landed",
          (e: unknown) => e,
        );
    };
    await settle(env, env.reconciler, releaseAfterNextWrite);
    if (env.isHolding()) await releaseAfterNextWrite();
    expect(late).toBeInstanceOf(InvalidError);
    expect(holders(env)).toMatchObject({ status: "MachineAPI", mao: true });
  });

  it("a finalizer write held in flight is refused once the name holds a new object (another uid, the same finalizers)", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await reconcileUntilMapiPatchHeld(env);
    expect(env.isHolding()).toBe(true);
    const before = clone(env.world().s.mapi!);
    // Deleted and created again under the same name with the same finalizers: another object.
    env.change("mapi", (o) => {
      o.metadata = { ...o.metadata, uid: "uid-mapi-recreated" };
    });
    const recreated = clone(env.world().s.mapi!);
    expect(finalizersOf(recreated)).toEqual(finalizersOf(before));
    await expect(env.releaseHeld()).rejects.toBeInstanceOf(InvalidError);
    expect(env.world().s.mapi).toEqual(recreated);
  });

  it("a write whose reply was lost is sent again before anything else is decided (CAPI twin deleted meanwhile): completes to ClusterAPI", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await reconcileUntilMapiPatchHeld(env);
    const lost = env.calls.at(-1);
    env.change("capi", (o) => markDeleting(o, Date.parse("2026-11-30T10:05:00Z")));
    env.sync();
    const callsAtLoss = env.calls.length;
    await env.reconciler.reconcile(env.name).catch(() => undefined);
    // The same request again: whichever copy reaches the server first lands, the other fails its precondition.
    expect(env.calls.slice(callsAtLoss)).toEqual([lost]);
    await expect(env.releaseHeld()).rejects.toBeInstanceOf(InvalidError);
    await settle(env);
    expect(holders(env)).toEqual({ status: "ClusterAPI", mao: false, capi: true, capa: true });
  });

  it("a write that landed but whose reply was lost is not sent again, and its transition is still reported once", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    env.loseReply((role, patch) => role === "mapi" && patch.type === "merge" && env.calls.length === 2);
    // Step 4: paused-false-at, then the status write, whose reply is lost.
    await expect(env.reconciler.reconcile(env.name)).rejects.toBeInstanceOf(TransportError);
    expect(statusAuthorityReading(env.world().s.mapi!)).toBe("Migrating");
    env.sync();
    await settle(env);
    expect(statusAuthorityReading(env.world().s.mapi!)).toBe("ClusterAPI");
    // Two status writes in all: the start (whose reply was lost) and the completion; nothing was sent twice.
    expect(env.calls.filter((c) => c.role === "mapi" && c.subresource === "status")).toHaveLength(2);
    expect(env.events.filter((e) => e.reason === "MigrationStarted")).toHaveLength(1);
    expect(env.events.filter((e) => e.reason === "MigrationCompleted")).toHaveLength(1);
  });

  it("a copy sent again that the server refuses for good settles the lost write: the next reconcile plans afresh", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    env.failNextPatch(new TransportError(0, "", "socket hang up"));
    await expect(env.reconciler.reconcile(env.name)).rejects.toBeInstanceOf(TransportError);
    expect(env.reconciler.memoryOf(env.name)?.unconfirmedWrite).toBeDefined();
    env.failNextPatch(new InvalidError(422, "Invalid", "denied by an admission webhook", [{ field: "x" }]));
    await expect(env.reconciler.reconcile(env.name)).rejects.toBeInstanceOf(InvalidError);
    expect(env.reconciler.memoryOf(env.name)?.unconfirmedWrite).toBeUndefined();
    await settle(env);
    expect(statusAuthorityReading(env.world().s.mapi!)).toBe("ClusterAPI");
  });

  it("MachineSet: a new leader whose Machine list is behind does not complete while a member has no twin on the new side (an extra instance)", async () => {
    const env = setup(requestHandover("MachineSet", "MachineAPI"));
    const name = env.name;
    for (let i = 0; i < 100; i++) {
      if (planHandover(env.world().s, new Date(env.world().now)).kind === "completeMigration") break;
      await env.reconciler.reconcile(name);
      env.sync();
      env.actors();
      env.sync();
    }
    expect(planHandover(env.world().s, new Date(env.world().now)).kind).toBe("completeMigration");
    // MAO scaled the MAPI MachineSet up just before it stopped; the sync has not made the CAPI twin yet, and
    // the new leader's Machine informer has not seen the new Machine either.
    const extra = membersOf(name, 3).mapi[2]!;
    env.addMember("mapi", extra);
    const standby = env.newLeader();
    const before = env.calls.length;
    await standby.reconcile(name);
    expect(env.calls.length).toBe(before);
    expect(statusAuthorityReading(env.world().s.mapi!)).toBe("Migrating");
    expect(env.events.at(-1)).toMatchObject({ reason: "WaitingForSync" });
    expect(env.events.at(-1)?.message).toContain(nameOf(extra));
  });

  it("nothing is read live for a step that writes nothing (waits, steady state)", async () => {
    const env = await startedWithoutFinalSync();
    const reads = env.reads.length;
    await env.reconciler.reconcile(env.name);
    await env.reconciler.reconcile(env.name);
    expect(env.reads.length).toBe(reads);
  });
});

describe("waits requeue with a growing per-key delay (SPEC §3.1 step 7)", () => {
  it("wait: 1 s doubling to 60 s while the same wait repeats; no write", async () => {
    const env = setup(
      edit(requestHandover("Machine", "MachineAPI"), "mapi", (o) =>
        putCondition(o, {
          type: CONDITIONS.synchronized,
          status: "False",
          reason: "ConversionFailed",
          message: "spec.providerSpec.value.instanceType: Required value",
        }),
      ),
    );
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 9; i++) {
      delays.push((await env.reconciler.reconcile(env.name)).requeueAfterMs);
      await env.clock.advance(delays.at(-1) ?? 0);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect(env.calls).toEqual([]);
  });

  it("progress resets the delay: a new step starts again at 1 s", async () => {
    const start = edit(requestHandover("Machine", "MachineAPI"), "mapi", (o) =>
      putCondition(o, { type: CONDITIONS.synchronized, status: "False", reason: "ConversionFailed" }),
    );
    const env = setup(start);
    await env.reconciler.reconcile(env.name);
    expect((await env.reconciler.reconcile(env.name)).requeueAfterMs).toBe(2_000);
    // The sync catches up: the preconditions hold, the shell writes (step 4), the delay memory is gone.
    env.actors();
    env.sync();
    await env.reconciler.reconcile(env.name);
    expect(env.calls.map(callLabel)).toEqual(["merge mapi", "merge/status mapi"]);
    expect(env.reconciler.memoryOf(env.name)?.waitDelayMs).toBeUndefined();
  });

  it("blocked: a Warning MigrationBlocked, a slow requeue, no write", async () => {
    const env = setup(
      edit(requestHandover("Machine", "MachineAPI"), "mapi", (o) => {
        o.metadata = {
          ...o.metadata,
          ownerReferences: [
            {
              apiVersion: "machine.openshift.io/v1",
              kind: "ControlPlaneMachineSet",
              name: "cluster",
              uid: "u",
            },
          ],
        };
      }),
    );
    const result = await env.reconciler.reconcile(env.name);
    expect(result.requeueAfterMs).toBe(5 * 60_000);
    expect(env.calls).toEqual([]);
    expect(env.events).toEqual([
      expect.objectContaining({ type: "Warning", reason: "MigrationBlocked", name: env.name }),
    ]);
    expect(env.events[0]?.message).toContain("ControlPlaneMachineSet");
  });
});

describe("one Event per transition, not per reconcile (SPEC §3.4)", () => {
  it("a repeated wait emits one Event; a different wait emits the next", async () => {
    const start = edit(requestHandover("Machine", "MachineAPI"), "mapi", (o) =>
      putCondition(o, { type: CONDITIONS.synchronized, status: "False", reason: "ConversionFailed" }),
    );
    const env = setup(start);
    for (let i = 0; i < 5; i++) await env.reconciler.reconcile(env.name);
    expect(env.events.map((e) => e.reason)).toEqual(["WaitingForSync"]);
    // Now the Machine is provisioning instead: another wait, another Event.
    env.change("mapi", (o) => {
      putCondition(o, { type: CONDITIONS.synchronized, status: "True", reason: "ResourceSynchronized" });
      o.status = { ...o.status, phase: "Provisioning" };
    });
    env.sync();
    for (let i = 0; i < 3; i++) await env.reconciler.reconcile(env.name);
    expect(env.events.map((e) => e.reason)).toEqual(["WaitingForSync", "WaitingForProvisioning"]);
  });

  it("a whole handover: MigrationStarted once, MigrationCompleted once, never the same Event twice in a row", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await driveToRest(env);
    const reasons = env.events.map((e) => e.reason);
    expect(reasons.filter((r) => r === "MigrationStarted")).toHaveLength(1);
    expect(reasons.filter((r) => r === "MigrationCompleted")).toHaveLength(1);
    expect(reasons.indexOf("MigrationStarted")).toBeLessThan(reasons.indexOf("MigrationCompleted"));
    const said = env.events.map((e) => `${e.reason}: ${e.message}`);
    for (let i = 1; i < said.length; i++) expect(said[i], `event ${i}`).not.toBe(said[i - 1]);
    expect(env.events.find((e) => e.reason === "MigrationCompleted")?.message).toBe(
      `Migration of MAPI Machine ${MAPI_NS}/worker-a from MachineAPI to ClusterAPI completed`,
    );
  });

  it("MigrationCompleted waits for step 11: after both unpause writes, not at the step-10 write", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await driveToRest(env);
    // The step-10 write is the last status write; two unpause writes (step 11) follow it.
    const completeAt = env.calls.map((c) => c.subresource).lastIndexOf("status") + 1;
    expect(env.calls.length - completeAt).toBe(2);
    expect(env.calls.slice(-2).map((c) => c.role)).toEqual(["capi", "infraMachine"]);
    const completed = env.events.find((e) => e.reason === "MigrationCompleted");
    expect(completed?.afterCalls).toBe(env.calls.length);
    expect(completed?.afterCalls).toBeGreaterThan(completeAt);
  });

  it("MigrationCompleted to MachineAPI (no step 11) once the cache shows the step-10 write", async () => {
    const env = setup(requestHandover("Machine", "ClusterAPI"));
    await driveToRest(env);
    const lastStatusWrite = env.calls.map((c) => c.subresource).lastIndexOf("status") + 1;
    expect(env.events.find((e) => e.reason === "MigrationCompleted")?.afterCalls).toBe(lastStatusWrite);
    expect(env.events.map((e) => e.reason)).toContain("MigrationCompleted");
  });

  it("a second handover of the same object reports its start and completion again", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await driveToRest(env);
    env.change("mapi", (o) => {
      o.spec = { ...o.spec, authoritativeAPI: "MachineAPI" };
    });
    env.sync();
    await driveToRest(env);
    expect(statusAuthorityReading(env.world().s.mapi!)).toBe("MachineAPI");
    const reasons = env.events.map((e) => e.reason);
    expect(reasons.filter((r) => r === "MigrationStarted")).toHaveLength(2);
    expect(reasons.filter((r) => r === "MigrationCompleted")).toHaveLength(2);
  });

  it("a cancel (SPEC §3.3) emits MigrationCancelled", async () => {
    const env = await startedWithoutFinalSync();
    env.change("mapi", (o) => {
      o.spec = { ...o.spec, authoritativeAPI: "MachineAPI" };
    });
    env.sync();
    await driveToRest(env);
    expect(statusAuthorityReading(env.world().s.mapi!)).toBe("MachineAPI");
    expect(env.events.map((e) => e.reason)).toContain("MigrationCancelled");
  });
});

/** A Machine handover MachineAPI → ClusterAPI started (status Migrating) whose final sync has not come. */
async function startedWithoutFinalSync(): Promise<Env> {
  const env = setup(requestHandover("Machine", "MachineAPI"));
  for (let i = 0; i < 2; i++) {
    await env.reconciler.reconcile(env.name);
    env.sync();
  }
  expect(statusAuthorityReading(env.world().s.mapi!)).toBe("Migrating");
  return env;
}

describe("metrics (SPEC §3.4)", () => {
  it("migrations_total and migration_duration_seconds count a completed handover from its start write", async () => {
    const env = setup(requestHandover("Machine", "MachineAPI"));
    await driveToRest(env, 200, 10_000);
    const labels = { kind: "Machine", direction: "MachineAPIToClusterAPI" };
    expect(
      await metricValue(env.registry, "machine_api_migration_migrations_total", {
        ...labels,
        result: "completed",
      }),
    ).toBe(1);
    const duration = await env.registry
      .getSingleMetric("machine_api_migration_migration_duration_seconds")!
      .get();
    const count = duration.values.find(
      (v) =>
        (v as { metricName?: string }).metricName ===
        "machine_api_migration_migration_duration_seconds_count",
    );
    const sum = duration.values.find(
      (v) =>
        (v as { metricName?: string }).metricName === "machine_api_migration_migration_duration_seconds_sum",
    );
    expect(count?.value).toBe(1);
    // The start write came in the 2nd reconcile, the completion in the 5th (step 8 adds CAPA's finalizer only:
    // Cluster API's own is already on the paused twin), 10 s of manual time apart each.
    expect(sum?.value).toBe(30);
  });

  it("migrations_total counts a cancel with the direction that was cancelled", async () => {
    const env = await startedWithoutFinalSync();
    env.change("mapi", (o) => {
      o.spec = { ...o.spec, authoritativeAPI: "MachineAPI" };
    });
    env.sync();
    await driveToRest(env);
    expect(
      await metricValue(env.registry, "machine_api_migration_migrations_total", {
        kind: "Machine",
        direction: "MachineAPIToClusterAPI",
        result: "cancelled",
      }),
    ).toBe(1);
    expect(
      await metricValue(env.registry, "machine_api_migration_migrations_total", {
        kind: "Machine",
        result: "completed",
      }),
    ).toBeUndefined();
  });

  it("migrations_in_progress is recomputed from the cache: the step of each handover, gone once steady", async () => {
    const env = await startedWithoutFinalSync();
    const source = env.registry;
    const remove = migrationMetrics(source).addGaugeSource("test", () => env.reconciler.gaugeRows());
    // MAO has not acknowledged the stop yet: the planner waits for the pause (step 6).
    expect(
      await metricValue(source, "machine_api_migration_migrations_in_progress", {
        kind: "Machine",
        step: "wait:pauseAck",
      }),
    ).toBe(1);
    await driveToRest(env);
    const after = await source.getSingleMetric("machine_api_migration_migrations_in_progress")!.get();
    expect(after.values.filter((v) => v.value > 0)).toEqual([]);
    remove();
  });

  it("synchronized_false counts MAPI objects whose Synchronized is False, by reason", async () => {
    const start = edit(stableSnapshot("Machine", "MachineAPI"), "mapi", (o) =>
      putCondition(o, { type: CONDITIONS.synchronized, status: "False", reason: "ConversionFailed" }),
    );
    const env = setup(start);
    expect(env.reconciler.gaugeRows().synchronizedFalse).toEqual([
      { labels: { kind: "Machine", reason: "ConversionFailed" }, value: 1 },
    ]);
    migrationMetrics(env.registry).addGaugeSource("test", () => env.reconciler.gaugeRows());
    expect(
      await metricValue(env.registry, "machine_api_migration_synchronized_false", {
        kind: "Machine",
        reason: "ConversionFailed",
      }),
    ).toBe(1);
    env.change("mapi", (o) =>
      putCondition(o, { type: CONDITIONS.synchronized, status: "True", reason: "ResourceSynchronized" }),
    );
    env.sync();
    expect(env.reconciler.gaugeRows().synchronizedFalse).toEqual([]);
  });

  it("two controllers share one set of metrics on one registry; each source reports its own kind", async () => {
    const registry = new Registry();
    const a = migrationMetrics(registry);
    const b = migrationMetrics(registry);
    expect(b.migrationsTotal).toBe(a.migrationsTotal);
    a.addGaugeSource("machine", () => ({
      inProgress: [{ labels: { kind: "Machine", step: "wait:sync" }, value: 2 }],
      stuck: [],
      synchronizedFalse: [],
    }));
    b.addGaugeSource("machineset", () => ({
      inProgress: [{ labels: { kind: "MachineSet", step: "pause" }, value: 1 }],
      stuck: [],
      synchronizedFalse: [],
    }));
    expect(
      await metricValue(registry, "machine_api_migration_migrations_in_progress", { kind: "Machine" }),
    ).toBe(2);
    expect(
      await metricValue(registry, "machine_api_migration_migrations_in_progress", { kind: "MachineSet" }),
    ).toBe(1);
  });
});

describe("migration_stuck (SPEC §3.4: reported, never cancelled)", () => {
  it("0 while a handover waits at one step less than migrationStuckAfter, 1 after; nothing is written", async () => {
    const env = await startedWithoutFinalSync();
    // No stand-in acts: MAO never acknowledges the stop, so the handover waits at step 6 for good.
    const writesBefore = env.calls.length;
    const stuck = () => env.reconciler.gaugeRows().stuck;
    const wait = async (ms: number) => {
      await env.clock.advance(ms);
      await env.reconciler.reconcile(env.name);
    };
    await wait(0);
    const step = stuck()[0]?.labels.step;
    expect(stuck()).toEqual([{ labels: { kind: "Machine", name: env.name, step }, value: 0 }]);
    await wait(STUCK_AFTER_MS - 1_000);
    expect(stuck()[0]?.value).toBe(0);
    await wait(1_000);
    expect(stuck()).toEqual([{ labels: { kind: "Machine", name: env.name, step }, value: 1 }]);
    expect(env.calls.length).toBe(writesBefore);
    expect(statusAuthorityReading(env.world().s.mapi!)).toBe("Migrating");
  });

  it("a new step restarts the clock", async () => {
    const env = await startedWithoutFinalSync();
    await env.reconciler.reconcile(env.name);
    await env.clock.advance(STUCK_AFTER_MS);
    await env.reconciler.reconcile(env.name);
    expect(env.reconciler.gaugeRows().stuck[0]?.value).toBe(1);
    // The acknowledgements arrive: the handover moves on to another step.
    env.actors();
    env.sync();
    await env.reconciler.reconcile(env.name);
    expect(env.reconciler.gaugeRows().stuck.every((r) => r.value === 0)).toBe(true);
  });
});

describe("watches map every related object to the MAPI name (SPEC §3)", () => {
  // Every set mid-handover (spec ClusterAPI, status MachineAPI): members wake only open sets (watches.test.ts).
  const openSets = {
    get: (type: ResourceType, namespace: string, name: string): KubeObject | undefined =>
      type === KINDS.mapiMachineSet
        ? {
            metadata: { name, namespace },
            spec: { authoritativeAPI: "ClusterAPI" },
            status: { authoritativeAPI: "MachineAPI" },
          }
        : undefined,
  };
  const watches = (kind: HandoverKind) => migrationWatches(kind, NAMESPACES, [KINDS.awsMachine], openSets);
  const mapperFor = (kind: HandoverKind, group: string, k: string) => {
    const w = watches(kind).find((x) => x.type.group === group && x.type.kind === k);
    if (!w) throw new Error(`no watch of ${k}.${group}`);
    return w.mapper;
  };

  it("Machine: the MAPI Machine, its CAPI twin and the AWSMachine (owner, or same name)", () => {
    const m = (g: string, k: string) => mapperFor("Machine", g, k);
    expect(m("machine.openshift.io", "Machine")({ metadata: { name: "w-1" } })).toEqual(["w-1"]);
    expect(m("cluster.x-k8s.io", "Machine")({ metadata: { name: "w-1" } })).toEqual(["w-1"]);
    expect(
      m(
        "infrastructure.cluster.x-k8s.io",
        "AWSMachine",
      )({
        metadata: {
          name: "w-1-aws",
          ownerReferences: [{ apiVersion: CAPI_API_VERSION, kind: "Machine", name: "w-1", uid: "u" }],
        },
      }),
    ).toEqual(["w-1", "w-1-aws"]);
  });

  it("MachineSet: the sets and their member Machines on both sides (owner or label)", () => {
    const m = (g: string, k: string) => mapperFor("MachineSet", g, k);
    expect(m("machine.openshift.io", "MachineSet")({ metadata: { name: "s" } })).toEqual(["s"]);
    expect(m("cluster.x-k8s.io", "MachineSet")({ metadata: { name: "s" } })).toEqual(["s"]);
    expect(
      m(
        "machine.openshift.io",
        "Machine",
      )({
        metadata: {
          name: "s-1",
          ownerReferences: [{ apiVersion: MAPI_API_VERSION, kind: "MachineSet", name: "s", uid: "u" }],
        },
      }),
    ).toEqual(["s"]);
    expect(
      m(
        "machine.openshift.io",
        "Machine",
      )({ metadata: { name: "s-2", labels: { [LABELS.templateMachineSet]: "t" } } }),
    ).toEqual(["t"]);
    expect(
      m("cluster.x-k8s.io", "Machine")({ metadata: { name: "s-3", labels: { [LABELS.capiSetName]: "c" } } }),
    ).toEqual(["c"]);
    expect(
      m(
        "cluster.x-k8s.io",
        "Machine",
      )({
        metadata: {
          name: "s-4",
          ownerReferences: [{ apiVersion: CAPI_API_VERSION, kind: "MachineSet", name: "o", uid: "u" }],
        },
      }),
    ).toEqual(["o"]);
    expect(m("cluster.x-k8s.io", "Machine")({ metadata: { name: "lonely" } })).toEqual([]);
  });
});

describe("createMigrationController: watches, queue and gauges under the runtime (SPEC §3, §7)", () => {
  /** A Cache over fake informers, one per type, fed from the fake cluster's live state on `feed()`. */
  const fakeCache = (env: ReturnType<typeof fakeCluster>): Cache & { feed(): void } => {
    const informers = new Map<string, FakeInformer>();
    const informerOf = (type: ResourceType): FakeInformer => {
      const key = `${type.group}/${type.kind}`;
      let i = informers.get(key);
      if (!i) {
        i = fakeInformer(type);
        informers.set(key, i);
      }
      return i;
    };
    const typeOfObject = (o: KubeObject): ResourceType | undefined =>
      Object.values(KINDS).find(
        (t) => o.kind === t.kind && String(o.apiVersion).startsWith(t.group ? `${t.group}/` : ""),
      );
    return {
      informerFor: (type) => informerOf(type),
      informers: () => [...informers.values()],
      synced: () => true,
      waitForSync: async () => {},
      stop: async () => {},
      get: (t, ns, n) => informerOf(t).get(ns, n),
      list: (t, ns) => informerOf(t).list(ns),
      byIndex: (t, ns, index, value) =>
        informerOf(t)
          .byIndex(index, value)
          .filter((o) => namespaceOf(o) === ns),
      freshness: () => ({ synced: true, disconnectedForMs: 0 }),
      feed() {
        for (const o of objectsOf(env.world().s)) {
          const type = typeOfObject(o);
          if (!type) continue;
          const informer = informerOf(type);
          if (informer.get(namespaceOf(o), nameOf(o))) informer.update(clone(o));
          else informer.add(clone(o));
        }
      },
    };
  };

  it("the initial replay and watched changes drive the handover; gauges report only while it runs", async () => {
    const env = fakeCluster(requestHandover("Machine", "MachineAPI"));
    const cache = fakeCache(env);
    cache.feed();
    const controller = createMigrationController({
      kind: "Machine",
      cache,
      client: env.client,
      events: env.recorder,
      registry: env.registry,
      clock: createManualClock(),
      logger: silentLogger(),
      namespaces: NAMESPACES,
    });
    expect(
      await metricValue(env.registry, "machine_api_migration_migrations_in_progress", { kind: "Machine" }),
    ).toBeUndefined();
    await controller.start();
    // The initial replay reconciles the key: step 4's two writes.
    await vi.waitFor(() => expect(env.calls).toHaveLength(2));
    expect(statusAuthorityReading(env.world().s.mapi!)).toBe("Migrating");
    cache.feed();
    await vi.waitFor(async () =>
      expect(
        await metricValue(env.registry, "machine_api_migration_migrations_in_progress", { kind: "Machine" }),
      ).toBe(1),
    );
    expect(
      await metricValue(env.registry, "controller_runtime_reconcile_total", {
        controller: "migration-machine",
      }),
    ).toBeGreaterThan(0);
    await controller.stop();
    expect(
      await metricValue(env.registry, "machine_api_migration_migrations_in_progress", { kind: "Machine" }),
    ).toBeUndefined();
  });
});
