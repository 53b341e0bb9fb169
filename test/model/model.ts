/**
 * The model-based property of issue 8 over the REAL product (SPEC §3.2, §3.5, §10): fast-check `commands`
 * drive the harness of test/integration/harness.ts — local API server, real webhook, sync and migration
 * controllers, simulated providers — from two Machines settled under MachineAPI, with random interleavings
 * of user actions (flip; cancel = flip while Migrating; label edits on either side; MAPI spec edits;
 * deletes of the MAPI or CAPI Machine), crashes (the product's controllers and cache stopped without
 * releasing anything and restarted with a new cache; one stand-in restarted), injected faults on the product's requests (409/500 on its writes, or writes carried out whose reply is lost; its watch streams
 * cut, so its cache lags and misses events until it re-lists) and waits of random length (which is what
 * puts a crash or a fault between two arbitrary writes). After every command: I1–I4 over every watch event
 * the observer saw since the last check, and the ledger (I6). At the end faults stop and the run must
 * converge within a bounded wait: spec == status for every Machine, nothing Migrating, ledger clean.
 * Shared by test/model/model.test.ts (quick, seeded) and test/model/campaign.ts (the long campaign).
 */
import fc from "fast-check";
import { KubeApiError } from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import { getPath } from "../../src/kube/object.js";
import { mapiMachine } from "../../src/local/seed.js";
import { statusAuthorityOf } from "../../src/migration/snapshot.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, PRODUCT, type StandInName } from "../integration/harness.js";

/** What the model knows: which Machines of this run were created (and not deleted by a command). */
export interface Model {
  created: Set<number>;
  deleted: Set<number>;
}

export interface Real {
  h: Harness;
  run: number;
  stats: ModelStats;
  /** One line per command, for the failure report. */
  trace: string[];
}

const MACHINES = 2;
const nameOf = (r: Real, i: number): string => `model-r${r.run}-m${i}`;

/** A user's request may be refused (admission, conflicts, gone): that is the world, not a failure. */
const tolerated = async (r: Real, what: string, f: () => Promise<unknown>): Promise<void> => {
  try {
    await f();
    r.trace.push(`${what}: ok`);
  } catch (e) {
    if (!(e instanceof KubeApiError)) throw e;
    r.trace.push(`${what}: refused (${e.constructor.name}: ${e.message.slice(0, 120)})`);
  }
};

/** I1–I4 over everything observed so far, and I6 now. */
export const checkSafety = async (r: Real, after: string): Promise<void> => {
  const v = r.h.violations();
  if (v.length > 0)
    throw new Error(
      `after ${after}: invariant violations ${JSON.stringify(v, null, 1)}\n${r.trace.join("\n")}`,
    );
  const l = await r.h.ledgerViolations();
  if (l.length > 0) {
    const mine = (n: string) => n.startsWith(`model-r${r.run}-`);
    const events = r.h.ledger.snapshot().events.filter((e) => mine(e.machineName));
    const writes = r.h.migrationWrites().filter((w) => mine(w.name));
    throw new Error(
      `after ${after}: ledger violations ${JSON.stringify(l)}\nledger: ${JSON.stringify(events)}\nmigration writes: ${JSON.stringify(writes)}\n${r.trace.join("\n")}`,
    );
  }
};

type Cmd = fc.AsyncCommand<Model, Real>;

const command = (
  name: string,
  check: (m: Readonly<Model>) => boolean,
  run: (m: Model, r: Real) => Promise<void>,
): Cmd => ({
  check,
  async run(m, r) {
    const kind = name.replace(/\(.*$/, "");
    r.stats.commands[kind] = (r.stats.commands[kind] ?? 0) + 1;
    await run(m, r);
    await checkSafety(r, name);
  },
  toString: () => name,
});

const live = (m: Readonly<Model>, i: number) => m.created.has(i) && !m.deleted.has(i);

/** Every run starts from its Machines created and settled under MachineAPI (MAO's instance Running). */
const setUp = async (r: Real, timeoutMs: number): Promise<Model> => {
  const m: Model = { created: new Set(), deleted: new Set() };
  for (let i = 0; i < MACHINES; i++) {
    await r.h.admin.create(KINDS.mapiMachine, mapiMachine(ns, nameOf(r, i), "a"));
    r.h.watch("Machine", nameOf(r, i));
    m.created.add(i);
  }
  for (let i = 0; i < MACHINES; i++)
    await r.h.steady({ kind: "Machine", name: nameOf(r, i) }, "MachineAPI", timeoutMs);
  r.trace.push(`created ${MACHINES} Machines, steady under MachineAPI`);
  return m;
};

/** Flip spec.authoritativeAPI to the other value: a new handover, or a cancel while Migrating. */
const flip = (i: number): Cmd =>
  command(
    `flip(${i})`,
    (m) => live(m, i),
    async (_m, r) => {
      const name = nameOf(r, i);
      await tolerated(r, `flip ${name}`, async () => {
        const o = await r.h.admin.get(KINDS.mapiMachine, MAPI_NS, name);
        const spec = getPath(o, ["spec", "authoritativeAPI"]);
        const to = spec === "ClusterAPI" ? "MachineAPI" : "ClusterAPI";
        r.trace.push(`flip ${name}: spec ${String(spec)} → ${to}, status ${String(statusAuthorityOf(o))}`);
        await r.h.setSpecAuthority("Machine", name, to);
      });
    },
  );

const editLabel = (i: number, side: "mapi" | "capi", value: string): Cmd =>
  command(
    `editLabel(${i}, ${side}, ${value})`,
    (m) => live(m, i),
    async (_m, r) => {
      const name = nameOf(r, i);
      const body = { metadata: { labels: { "model.test/edit": value } } };
      await tolerated(r, `label ${side} ${name}=${value}`, () =>
        side === "mapi"
          ? r.h.admin.patch(KINDS.mapiMachine, MAPI_NS, name, { type: "merge", body })
          : r.h.admin.patch(KINDS.capiMachine, CAPI_NS, name, { type: "merge", body }),
      );
    },
  );

/** A spec edit on the MAPI Machine (node labels, convertible): admitted only while MAPI is authoritative. */
const editSpec = (i: number, value: string): Cmd =>
  command(
    `editSpec(${i}, ${value})`,
    (m) => live(m, i),
    async (_m, r) => {
      const name = nameOf(r, i);
      const body = { spec: { metadata: { labels: { "model.test/spec": value } } } };
      await tolerated(r, `spec ${name} node label=${value}`, () =>
        r.h.admin.patch(KINDS.mapiMachine, MAPI_NS, name, { type: "merge", body }),
      );
    },
  );

const remove = (i: number, side: "mapi" | "capi"): Cmd =>
  command(
    `delete(${i}, ${side})`,
    (m) => live(m, i),
    async (m, r) => {
      m.deleted.add(i);
      const name = nameOf(r, i);
      await tolerated(r, `delete ${side} ${name}`, () =>
        side === "mapi"
          ? r.h.admin.delete(KINDS.mapiMachine, MAPI_NS, name)
          : r.h.admin.delete(KINDS.capiMachine, CAPI_NS, name),
      );
    },
  );

const crashProduct = (): Cmd =>
  command(
    "crashProduct",
    () => true,
    async (_m, r) => {
      await r.h.restartProduct();
      r.trace.push("product crashed and restarted with a new cache");
    },
  );

const crashStandIn = (which: StandInName): Cmd =>
  command(
    `crashStandIn(${which})`,
    () => true,
    async (_m, r) => {
      await r.h.restartStandIn(which);
      r.trace.push(`stand-in ${which} crashed and restarted`);
    },
  );

type Faults =
  | { type: "errors"; rate409: number; rate500: number; rateLostReply: number; seed: number }
  | { type: "drops"; everyMs: number }
  | { type: "off" };

const faults = (f: Faults): Cmd =>
  command(
    `faults(${JSON.stringify(f)})`,
    () => true,
    async (_m, r) => {
      const api = r.h.cluster.faults;
      if (f.type === "off") api.clear();
      else if (f.type === "errors")
        // Only the product's writes fail: the world around it (users, providers) is not under test here.
        api.set({
          rate409: f.rate409,
          rate500: f.rate500,
          // A write the server carried out whose reply never arrived (SPEC §3.5, §10).
          rateLostReply: f.rateLostReply,
          seed: f.seed,
          match: { users: [PRODUCT], verbs: ["create", "update", "patch", "delete"] },
        });
      // The product's watch streams are cut: its cache lags and misses events until it resumes or re-lists.
      else api.set({ dropWatchesEveryMs: f.everyMs, match: { users: [PRODUCT] } });
      r.trace.push(`faults ${JSON.stringify(f)}`);
    },
  );

const wait = (ms: number): Cmd =>
  command(
    `wait(${ms})`,
    () => true,
    async (_m, r) => {
      await new Promise((res) => setTimeout(res, ms));
      r.trace.push(`waited ${ms} ms`);
    },
  );

const index = fc.nat(MACHINES - 1);

export const commandArbitraries: fc.Arbitrary<Cmd>[] = [
  index.map(flip),
  index.map(flip),
  index.map(flip),
  fc
    .tuple(index, fc.constantFrom("mapi" as const, "capi" as const), fc.constantFrom("x", "y"))
    .map(([i, s, v]) => editLabel(i, s, v)),
  fc.tuple(index, fc.constantFrom("x", "y")).map(([i, v]) => editSpec(i, v)),
  fc.tuple(index, fc.constantFrom("mapi" as const, "capi" as const)).map(([i, s]) => remove(i, s)),
  fc.constant(null).map(crashProduct),
  fc.constantFrom<StandInName>("mao", "capi", "capa").map(crashStandIn),
  fc
    .oneof(
      fc.record({
        type: fc.constant("errors" as const),
        rate409: fc.constantFrom(0, 0.2, 0.5),
        rate500: fc.constantFrom(0, 0.2, 0.5),
        rateLostReply: fc.constantFrom(0, 0.1, 0.3),
        seed: fc.nat(1_000_000),
      }),
      fc.record({ type: fc.constant("drops" as const), everyMs: fc.constantFrom(100, 300, 1_000) }),
      fc.constant({ type: "off" as const }),
    )
    .map(faults),
  fc.constantFrom(0, 50, 200, 600).map(wait),
  fc.constantFrom(0, 50, 200, 600).map(wait),
];

/**
 * Faults off, every stand-in running; then every Machine of this run must come to rest within
 * `timeoutMs`: spec == status, nothing Migrating, deleted ones gone; I1–I4 and the ledger clean.
 */
export const converge = async (r: Real, m: Readonly<Model>, timeoutMs: number): Promise<void> => {
  r.h.cluster.faults.clear();
  for (const s of ["mao", "capi", "capa"] as const) await r.h.startStandIn(s);
  const prefix = `model-r${r.run}-`;
  let last = "";
  try {
    await r.h.waitFor(
      "convergence",
      async () => {
        const mapi = (await r.h.admin.list(KINDS.mapiMachine, { namespace: MAPI_NS })).items.filter((o) =>
          String(o.metadata?.name).startsWith(prefix),
        );
        const capi = (await r.h.admin.list(KINDS.capiMachine, { namespace: CAPI_NS })).items.filter((o) =>
          String(o.metadata?.name).startsWith(prefix),
        );
        // A deleted Machine is gone on both sides; a surviving one has its twin and nothing else remains.
        const mapiNames = new Set(mapi.map((o) => String(o.metadata?.name)));
        const expected = [...m.created].filter((i) => !m.deleted.has(i)).map((i) => nameOf(r, i));
        const wrongSet =
          mapi.length !== expected.length ||
          !expected.every((n) => mapiNames.has(n)) ||
          capi.length !== expected.length ||
          !capi.every((o) => mapiNames.has(String(o.metadata?.name)));
        if (wrongSet) {
          last = `expected Machines ${expected.join(",")}; MAPI ${[...mapiNames].join(",")}; CAPI ${capi.map((o) => o.metadata?.name).join(",")}`;
          return false;
        }
        const unsettled = mapi.filter((o) => {
          const status = statusAuthorityOf(o);
          return (
            o.metadata?.deletionTimestamp !== undefined ||
            status === "Migrating" ||
            status !== getPath(o, ["spec", "authoritativeAPI"])
          );
        });
        last = unsettled
          .map(
            (o) =>
              `${o.metadata?.name}: spec=${String(getPath(o, ["spec", "authoritativeAPI"]))} status=${String(statusAuthorityOf(o))} deleting=${o.metadata?.deletionTimestamp !== undefined}`,
          )
          .join("; ");
        return unsettled.length === 0;
      },
      timeoutMs,
    );
    await r.h.quiesce(timeoutMs);
  } catch (e) {
    throw new Error(`did not converge: ${last} (${String(e)})\n${r.trace.join("\n")}`);
  }
  await checkSafety(r, "convergence");
};

/** What the runs did, for the summary and for the quick test's check that the property exercised anything. */
export interface ModelStats {
  runs: number;
  commands: Record<string, number>;
}

export interface ModelPropertyOptions {
  maxCommands: number;
  convergeTimeoutMs: number;
  /** Called after each run that converged (the campaign's progress line). */
  progress?: (r: Real) => void;
}

/** The property over one shared harness: each run uses its own Machine names. */
export const modelProperty = (h: Harness, o: ModelPropertyOptions, stats: ModelStats) => {
  let run = 0;
  return fc.asyncProperty(
    fc.commands(commandArbitraries, { maxCommands: o.maxCommands, size: "max" }),
    async (cmds) => {
      const real: Real = { h, run: run++, stats, trace: [] };
      stats.runs++;
      try {
        const model = await setUp(real, o.convergeTimeoutMs);
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        await converge(real, model, o.convergeTimeoutMs);
        o.progress?.(real);
      } finally {
        h.cluster.faults.clear();
      }
    },
  );
};
