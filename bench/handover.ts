/**
 * Items 3 and 4 of the bench: handovers driven the way a cluster admin drives them (a merge patch of
 * `spec.authoritativeAPI`), with the product (cache, webhook, sync and migration controllers), the simulated
 * providers and the local API server each in their own process. Writes are read from the API server's
 * request counters: by the product's identity, to machine kinds only (Events and Leases are other kinds; the
 * providers write as their own users), broken down by verb and resource — the step that made them.
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import type { CounterSnapshot } from "../src/apiserver/index.js";
import { type Cache, createCache } from "../src/kube/cache.js";
import type { KubeClient } from "../src/kube/client.js";
import { systemClock } from "../src/kube/clock.js";
import { connect } from "../src/kube/config.js";
import { KINDS, type ResourceType, type StableAuthority } from "../src/kube/kinds.js";
import { type KubeObject, nameOf, ownerReferencesOf } from "../src/kube/object.js";
import { mapiMachine, mapiMachineSet } from "../src/local/seed.js";
import { ensureBinaries } from "../test/cluster/control-plane.js";
import { PRODUCT_USER, PROVIDER_USERS } from "./identities.js";
import { productNodeFlags } from "./image.js";
import { type Child, startChild } from "./ipc.js";
import type { BenchOptions } from "./options.js";
import { NAMESPACES } from "./population.js";
import { type HandedOver, mapiTypeOf, provisioned, steadyUnder } from "./readings.js";
import { sumValues, type WriteCount } from "./report.js";
import type { Workspace } from "./static.js";
import { ratio, round } from "./stats.js";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);
const MACHINE_GROUPS = new Set([
  "machine.openshift.io",
  "cluster.x-k8s.io",
  "infrastructure.cluster.x-k8s.io",
]);
const MACHINE_RESOURCES = new Set(["machines", "machinesets", "awsmachines", "awsmachinetemplates"]);

/** A write (create/update/patch/delete) to a machine kind (`group/plural[/subresource]`). */
const isMachineWrite = (verb: string, resource: string): boolean => {
  const [group, plural] = resource.split("/");
  return WRITE_VERBS.has(verb) && MACHINE_GROUPS.has(group ?? "") && MACHINE_RESOURCES.has(plural ?? "");
};

/** `verb group/resource[/sub]` → count of writes to machine kinds by `user` (counter keys are `verb resource user`). */
export function machineWrites(
  snapshot: CounterSnapshot,
  user: (u: string) => boolean,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(snapshot.byKey)) {
    const [verb, resource, who] = key.split(" ");
    if (!verb || !resource || who === undefined || !user(who) || !isMachineWrite(verb, resource)) continue;
    out[`${verb} ${resource}`] = (out[`${verb} ${resource}`] ?? 0) + n;
  }
  return out;
}

const PROVIDERS: readonly string[] = Object.values(PROVIDER_USERS);
const USER_NAMES: Readonly<Record<string, string>> = {
  [PRODUCT_USER]: "product",
  ...Object.fromEntries(Object.entries(PROVIDER_USERS).map(([short, user]) => [user, short])),
};

/**
 * Every request the API server served during the handover (reads, watches, Events and Leases too) per
 * Machine, as `who verb resource`: where the API server's work came from. Rows under 0.05 are left out.
 */
export function requestsPerMachine(snapshot: CounterSnapshot, machines: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(snapshot.byKey)) {
    const [verb, resource, who = ""] = key.split(" ");
    const row = `${USER_NAMES[who] ?? "other"} ${verb} ${resource}`;
    out[row] = (out[row] ?? 0) + n;
  }
  return Object.fromEntries(
    Object.entries(out)
      .map(([k, v]) => [k, round(v / machines, 2)] as const)
      .filter(([, v]) => v >= 0.05)
      .sort((a, b) => b[1] - a[1]),
  );
}

/** The product's machine-kind writes the API server refused, as `verb resource code` (409s are conflicts). */
function failedWrites(snapshot: CounterSnapshot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(snapshot.failures ?? {})) {
    const [verb, resource, who, code] = key.split(" ");
    if (who !== PRODUCT_USER || !verb || !resource || !isMachineWrite(verb, resource)) continue;
    out[`${verb} ${resource} ${code}`] = (out[`${verb} ${resource} ${code}`] ?? 0) + n;
  }
  return out;
}

export function writeCount(snapshot: CounterSnapshot, machines: number): WriteCount {
  const byStep = machineWrites(snapshot, (u) => u === PRODUCT_USER);
  const productWrites = sumValues(byStep);
  return {
    machines,
    productWrites,
    perMachine: round(productWrites / machines, 2),
    byStep,
    failed: failedWrites(snapshot),
    providerWrites: sumValues(machineWrites(snapshot, (u) => PROVIDERS.includes(u))),
  };
}

interface Stack {
  api: Child;
  product: Child;
  providers: Child;
  admin: KubeClient;
  /**
   * The admin's watch of MAPI Machines and MachineSets (as `kubectl get -w` would): the bench waits on it
   * instead of LISTing the whole fleet over and over, which at 1,000 Machines made the bench itself the
   * API server's biggest load (every poll serialised the fleet). On the local server a handover's end is read
   * from storage instead, and the scale bench stops this watch before the timed handovers (decision 105).
   */
  watching: Cache;
  /** Whether the stack's API server is the local one, whose storage the API server's child can read. */
  local: boolean;
  stop(): Promise<void>;
}

async function startStack(
  ws: Workspace,
  name: string,
  o: BenchOptions,
  log: (line: string) => void,
): Promise<Stack> {
  // The real control plane is built here, not in the API server's child: its first build takes minutes, longer
  // than a child is given to get ready (bench/ipc.ts), and the driver can say what it is doing.
  if (o.apiServer === "real") await ensureBinaries(log);
  // With --cpu-prof every process of the stack writes its profile (named by pid) when it stops.
  const prof = o.cpuProfDir ? { execArgv: ["--cpu-prof", "--cpu-prof-dir", o.cpuProfDir] } : {};
  const api = await startChild(
    join(HERE, "apiserver.ts"),
    [join(ws.dir, name), ws.caFile, ...(o.apiServer === "real" ? ["--real"] : [])],
    prof,
  );
  const children: Child[] = [api];
  let watching: Cache | undefined;
  const stop = async (): Promise<void> => {
    await watching?.stop();
    for (const c of [...children].reverse()) await c.stop();
  };
  try {
    await api.ask("seed", { n: 0 });
    const kubeconfigPath = join(ws.dir, name, "kubeconfig");
    const product = await startChild(
      join(HERE, "product.ts"),
      [kubeconfigPath, ws.certDir, "--controllers", ...(o.workers ? [`--workers=${o.workers}`] : [])],
      { execArgv: [...productNodeFlags(o), ...(prof.execArgv ?? [])] },
    );
    children.push(product);
    await api.ask("register", { url: (product.ready as { url: string }).url });
    const providers = await startChild(join(HERE, "providers.ts"), [kubeconfigPath], prof);
    children.push(providers);
    const adminConnection = connect({ kubeconfigPath, context: "admin" });
    watching = createCache({
      transport: adminConnection.transport,
      logger: pino({ level: "silent" }),
      clock: systemClock,
    });
    watching.informerFor(KINDS.mapiMachine, NAMESPACES.mapiNamespace);
    watching.informerFor(KINDS.mapiMachineSet, NAMESPACES.mapiNamespace);
    await watching.waitForSync(60_000);
    const local = o.apiServer !== "real";
    return { api, product, providers, admin: adminConnection.client, watching, local, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` over `items` with at most `limit` in flight (a client-side burst as a script would send). */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (t: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number, everyMs = 200) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Nothing queued in the product, the providers idle and the API server's own controllers settled, 5× in a row. */
async function quiesce(s: Stack, timeoutMs = 120_000): Promise<void> {
  let calm = 0;
  await waitUntil(
    "the product and the providers to go idle",
    async () => {
      await s.api.ask("settled");
      const idle = (await s.product.ask<boolean>("idle")) && (await s.providers.ask<boolean>("idle"));
      calm = idle ? calm + 1 : 0;
      return calm >= 5;
    },
    timeoutMs,
    100,
  );
}

/** True when every one of `names` is in the admin's watch of `type` and satisfies `pred`. */
const all = (
  s: Stack,
  type: ResourceType,
  names: ReadonlySet<string>,
  pred: (o: KubeObject) => boolean,
): boolean => {
  for (const name of names) {
    const o = s.watching.get(type, NAMESPACES.mapiNamespace, name);
    if (!o || !pred(o)) return false;
  }
  return true;
};

/** How long provisioning or a handover of `n` may take before the bench gives up on that fleet size. */
const waitBudgetMs = (n: number): number => Math.min(60_000 + n * 200, 240_000);

async function createMachines(s: Stack, prefix: string, n: number): Promise<Set<string>> {
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  await eachLimited(names, 20, (name) =>
    s.admin.create(
      KINDS.mapiMachine,
      mapiMachine(NAMESPACES, name, String.fromCharCode(97 + (name.length % 3))),
    ),
  );
  const set = new Set(names);
  await waitUntil(
    "Machines Running and synchronized",
    async () => all(s, KINDS.mapiMachine, set, provisioned),
    waitBudgetMs(n),
    20,
  );
  return set;
}

/**
 * `n` Machines owned by `k` MAPI MachineSets (replicas split as evenly as they go, one set per zone letter),
 * created by the MAO stand-in's MachineSet controller as MAO creates them; resolves with the sets' and the
 * Machines' names once every Machine is Running and synchronized.
 */
async function createMachineSets(
  s: Stack,
  n: number,
  k: number,
): Promise<{ sets: Set<string>; machines: Set<string> }> {
  const sets = Array.from({ length: k }, (_, i) =>
    mapiMachineSet(NAMESPACES, String.fromCharCode(97 + i), Math.floor(n / k) + (i < n % k ? 1 : 0)),
  );
  await eachLimited(sets, 20, (set) => s.admin.create(KINDS.mapiMachineSet, set));
  const setNames = new Set(sets.map(nameOf));
  const members = (): KubeObject[] =>
    s.watching
      .list(KINDS.mapiMachine, NAMESPACES.mapiNamespace)
      .filter((m) => ownerReferencesOf(m).some((r) => r.kind === "MachineSet" && setNames.has(r.name)));
  await waitUntil(
    "the MachineSets' Machines Running and synchronized",
    async () =>
      members().length === n &&
      members().every(provisioned) &&
      all(s, KINDS.mapiMachineSet, setNames, (o) => steadyUnder(o, "MachineAPI")),
    waitBudgetMs(n),
    50,
  );
  return { sets: setNames, machines: new Set(members().map(nameOf)) };
}

async function handOver(s: Stack, kind: HandedOver, names: ReadonlySet<string>, to: StableAuthority) {
  const type = mapiTypeOf(kind);
  const steady = await steadyProbe(s, kind, names, to);
  await eachLimited([...names], 20, (name) =>
    s.admin.patch(type, NAMESPACES.mapiNamespace, name, {
      type: "merge",
      body: { spec: { authoritativeAPI: to } },
    }),
  );
  await waitUntil(`${names.size} ${kind}(s) steady under ${to}`, steady, waitBudgetMs(names.size), 20);
}

/**
 * Whether every one of `names` is steady under `to`: on the local API server read from its storage by the API
 * server's child, otherwise from the admin's watch (decision 105).
 */
async function steadyProbe(
  s: Stack,
  kind: HandedOver,
  names: ReadonlySet<string>,
  to: StableAuthority,
): Promise<() => Promise<boolean>> {
  if (!s.local) return async () => all(s, mapiTypeOf(kind), names, (o) => steadyUnder(o, to));
  const id = await s.api.ask<number>("waitFor", { kind, names: [...names], authority: to });
  return () => s.api.ask<boolean>("steady", { id });
}

/** Item 3: writes per Machine and per MachineSet handover in each direction, and during a quiet interval. */
export async function runHandover(ws: Workspace, o: BenchOptions, log: (line: string) => void) {
  const s = await startStack(ws, "handover", o, log);
  try {
    const n = o.handoverMachines;
    log(`handover: provisioning ${n} Machines and a MachineSet`);
    const machines = await createMachines(s, "bench-h", n);
    const set = mapiMachineSet(NAMESPACES, "b", 1);
    await s.admin.create(KINDS.mapiMachineSet, set);
    const setNames = new Set([nameOf(set)]);
    await waitUntil(
      "the MachineSet and its Machine steady",
      async () => {
        const sets = s.watching.list(KINDS.mapiMachineSet, NAMESPACES.mapiNamespace);
        const members = s.watching
          .list(KINDS.mapiMachine, NAMESPACES.mapiNamespace)
          .filter((m) => nameOf(m).startsWith(`${nameOf(set)}-`));
        return (
          sets.some((x) => setNames.has(nameOf(x)) && steadyUnder(x, "MachineAPI")) &&
          members.length === 1 &&
          members.every(provisioned)
        );
      },
      waitBudgetMs(1),
      250,
    );
    await quiesce(s);

    const measure = async (what: string, fn: () => Promise<void>, count: number): Promise<WriteCount> => {
      log(`handover: ${what}`);
      await s.api.ask("reset");
      await fn();
      await quiesce(s);
      return writeCount(await s.api.ask<CounterSnapshot>("counters"), count);
    };
    await s.api.ask("reset");
    await sleep(o.quietMs);
    const quietSnapshot = await s.api.ask<CounterSnapshot>("counters");
    const quietWrites = machineWrites(quietSnapshot, (u) => u === PRODUCT_USER);
    return {
      quiet: { ms: o.quietMs, productWrites: sumValues(quietWrites), byStep: quietWrites },
      machineToClusterAPI: await measure(
        "Machines → ClusterAPI",
        () => handOver(s, "Machine", machines, "ClusterAPI"),
        n,
      ),
      machineToMachineAPI: await measure(
        "Machines → MachineAPI",
        () => handOver(s, "Machine", machines, "MachineAPI"),
        n,
      ),
      machineSetToClusterAPI: await measure(
        "MachineSet → ClusterAPI",
        () => handOver(s, "MachineSet", setNames, "ClusterAPI"),
        1,
      ),
      machineSetToMachineAPI: await measure(
        "MachineSet → MachineAPI",
        () => handOver(s, "MachineSet", setNames, "MachineAPI"),
        1,
      ),
    };
  } finally {
    await s.stop();
  }
}

/** Item 4: N Machines handed over MAPI → CAPI at once, per N on a fresh stack; provisioning time is the baseline. */
export async function runScale(ws: Workspace, o: BenchOptions, log: (line: string) => void) {
  const rows: Array<Record<string, unknown> & { machines: number }> = [];
  for (const n of o.scale) {
    const s = await startStack(ws, `scale-${n}`, o, log);
    try {
      if (rows.some((r) => "error" in r)) {
        rows.push({ machines: n, error: "skipped: a smaller fleet already ran out of time" });
        continue;
      }
      const sets = o.scaleSets;
      log(`scale: provisioning ${n} Machines${sets ? ` in ${sets} MachineSets` : ""}`);
      const t0 = performance.now();
      const fleet = sets
        ? await createMachineSets(s, n, sets)
        : { sets: new Set<string>(), machines: await createMachines(s, "bench-s", n) };
      const names = fleet.machines;
      const provisionMs = performance.now() - t0;
      await quiesce(s);
      // On the local server the handovers are observed in its storage: the admin's watch would parse every
      // event of the fleet on the cores the processes measured share (decision 105).
      if (s.local) await s.watching.stop();
      // SPEC §12: the MachineSets go first, then their Machines (the part timed below).
      let setHandoverMs: number | undefined;
      if (fleet.sets.size > 0) {
        log(`scale: handing ${fleet.sets.size} MachineSets over to ClusterAPI`);
        const ts = performance.now();
        await handOver(s, "MachineSet", fleet.sets, "ClusterAPI");
        setHandoverMs = performance.now() - ts;
        await quiesce(s);
      }
      await s.api.ask("reset");
      log(`scale: handing ${n} Machines over to ClusterAPI`);
      const cpu = async () => ({
        apiserver: await s.api.ask<number>("cpuMs"),
        product: await s.product.ask<number>("cpuMs"),
        providers: await s.providers.ask<number>("cpuMs"),
      });
      const reconciles = () => s.product.ask<Record<string, number>>("reconciles");
      const cpuBefore = await cpu();
      const reconcilesBefore = await reconciles();
      const t1 = performance.now();
      await handOver(s, "Machine", names, "ClusterAPI");
      const handoverMs = performance.now() - t1;
      const cpuAfter = await cpu();
      const reconcilesAfter = await reconciles();
      // Share of one core each process used while the handover ran: who the wall-clock time went to.
      const cpuShare = Object.fromEntries(
        (Object.keys(cpuAfter) as (keyof typeof cpuAfter)[]).map((k) => [
          k,
          round((cpuAfter[k] - cpuBefore[k]) / handoverMs, 2),
        ]),
      );
      await quiesce(s);
      const counters = await s.api.ask<CounterSnapshot>("counters");
      const writes = writeCount(counters, n);
      // What parsing these objects costs the product, plain and its own way (issue 25).
      const decode = await s.product.ask<{
        events: number;
        bytesPerEvent: number;
        jsonParseUs: number;
        withoutManagedFieldsUs: number;
        bytesPerReview: number;
        reviewJsonParseUs: number;
        reviewParseUs: number;
      }>("decode", { rounds: 5 });
      // What converting these Machines costs the sync, plain and when its memo meets new objects (issue 25).
      const convert = await s.product.ask<{ machines: number; plainUs: number; memoMissUs: number }>(
        "convert",
        { rounds: 6 },
      );
      rows.push({
        machines: n,
        ...(sets ? { machineSets: sets, setHandoverMs: round(setHandoverMs ?? 0) } : {}),
        provisionMs: round(provisionMs),
        handoverMs: round(handoverMs),
        msPerMachine: round(handoverMs / n, 3),
        handoverToProvision: ratio(handoverMs, provisionMs),
        writesPerMachine: writes.perMachine,
        cpuShareOfOneCore: cpuShare,
        // CPU each process spent per Machine handed over, and the reconciles the product ran per Machine.
        cpuMsPerMachine: Object.fromEntries(
          (Object.keys(cpuAfter) as (keyof typeof cpuAfter)[]).map((k) => [
            k,
            round((cpuAfter[k] - cpuBefore[k]) / n, 2),
          ]),
        ),
        reconcilesPerMachine: Object.fromEntries(
          Object.entries(reconcilesAfter).map(([c, v]) => [
            c,
            round((v - (reconcilesBefore[c] ?? 0)) / n, 2),
          ]),
        ),
        byStep: writes.byStep,
        requestsPerMachine: requestsPerMachine(counters, n),
        // What parsing these objects costs the product: a watch event (the informer) and a review of one
        // of its MAPI Machines as kube-apiserver sends it (the webhook), each against plain JSON.parse.
        watchEventParse: {
          events: decode.events,
          bytesPerEvent: decode.bytesPerEvent,
          jsonParseUs: round(decode.jsonParseUs, 2),
          withoutManagedFieldsUs: round(decode.withoutManagedFieldsUs, 2),
          ratio: ratio(decode.withoutManagedFieldsUs, decode.jsonParseUs),
        },
        reviewParse: {
          bytesPerReview: decode.bytesPerReview,
          jsonParseUs: round(decode.reviewJsonParseUs, 2),
          webhookParseUs: round(decode.reviewParseUs, 2),
          ratio: ratio(decode.reviewParseUs, decode.reviewJsonParseUs),
        },
        // A Machine's four conversions (spec and status, both ways): plain, and the sync's memo on a miss.
        conversion: {
          machines: convert.machines,
          plainUs: round(convert.plainUs, 2),
          memoMissUs: round(convert.memoMissUs, 2),
          ratio: ratio(convert.memoMissUs, convert.plainUs),
        },
      });
    } catch (e) {
      // The bench stays bounded: a fleet that does not finish in its budget is a result, not a crash.
      log(`scale: ${n} Machines did not finish: ${e instanceof Error ? e.message : String(e)}`);
      rows.push({ machines: n, error: e instanceof Error ? e.message : String(e) });
    } finally {
      await s.stop();
    }
  }
  return rows;
}
