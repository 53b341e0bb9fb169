/**
 * Bench child: the API server the bench measures against, in its own process, so the product's controllers
 * and the load they put on it are measured across a real process boundary — the test backend of
 * test/cluster/backend.ts: by default the local API server (src/local/cluster.ts: CRDs, namespaces, feature
 * gate, CAPA defaulter, the product's webhook configurations); with `--real` the real control plane (etcd,
 * kube-apiserver, kube-controller-manager built from Kubernetes' modules) set up the same way, its clients
 * going through the backend's counting proxy (issue 25: "run the scale benchmark against the real control
 * plane too"). Commands: `seed` (population.ts: written straight to storage locally, created through the API
 * on the real one), `register` (point the product webhooks at a URL), `counters`/`reset` (request counters),
 * `cpuMs` (this process; on the real one etcd, kube-apiserver and kube-controller-manager, without the proxy),
 * `waitFor`/`steady` (local only: whether a fleet's handover is done, read from storage).
 * argv: <state dir> <webhook CA PEM file> [--real].
 */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { pino } from "pino";
import { apiVersionOf, KINDS, type ResourceType, type StableAuthority } from "../src/kube/kinds.js";
import type { KubeObject } from "../src/kube/object.js";
import { createIfMissing } from "../src/local/cluster.js";
import { startBackend } from "../test/cluster/backend.js";
import { CONTROLLER_USERS } from "./identities.js";
import { type Handler, serveParent } from "./ipc.js";
import { NAMESPACES, population } from "./population.js";
import { type HandedOver, mapiTypeOf, steadyFrom } from "./readings.js";

const [stateDir, caFile, ...flags] = process.argv.slice(2);
if (!stateDir || !caFile) throw new Error("usage: apiserver.ts <state dir> <webhook CA file> [--real]");
const cluster = await startBackend(flags.includes("--real") ? "real" : "local", {
  stateDir,
  ...NAMESPACES,
  controllerUsers: CONTROLLER_USERS,
  webhookCaPem: await readFile(caFile, "utf8"),
  logger: pino({ level: "silent" }),
  bookmarkIntervalMs: 5_000,
});
const admin = cluster.clientAs("admin");

/** The population's objects not seeded yet (a later `seed` adds only the Machines beyond the earlier ones). */
const seeded = new Set<string>();
const unseeded = (n: number): KubeObject[] =>
  population(n).filter((o) => {
    const key = `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
    if (seeded.has(key)) return false;
    seeded.add(key);
    return true;
  });

const typeOf = (o: KubeObject): ResourceType => {
  const t = Object.values(KINDS).find((k) => k.kind === o.kind && apiVersionOf(k) === o.apiVersion);
  if (!t) throw new Error(`bench seed: no resource type for ${o.apiVersion} ${o.kind}`);
  return t;
};

/** Locally straight into storage (no request is counted); on the real one through the API, status and all. */
const seed: Handler = async ({ n }) => {
  const objects = unseeded(Number(n));
  const local = cluster.local;
  for (const o of objects) {
    if (local) {
      local.api.store.create(o);
      continue;
    }
    const type = typeOf(o);
    const made = await createIfMissing(admin, type, o);
    if (made && o.status !== undefined) await admin.updateStatus(type, { ...made, status: o.status });
  }
  return objects.length;
};

/** CPU time (user + system) of the processes running one of `binaries`, from /proc, in ms. */
const cpuOfBinaries = (binaries: readonly string[]): number => {
  const tick = 100; // USER_HZ on Linux
  let ms = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
      if (!binaries.some((b) => cmd.endsWith(`/${b}`))) continue;
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ms += ((Number(fields[11]) + Number(fields[12])) * 1000) / tick;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ms;
};

/**
 * The managedFields the API server keeps for `object` (a MAPI Machine) once it has been written as in a
 * cluster: created by an admin, its status written by MAO, its labels edited by the admin. A copy under its own
 * name, deleted after.
 */
const managedFieldsOf: Handler = async ({ object }) => {
  const o = object as KubeObject;
  const metadata = { ...o.metadata, name: "bench-managed-fields", namespace: NAMESPACES.mapiNamespace };
  for (const f of ["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"])
    delete (metadata as Record<string, unknown>)[f];
  const type = KINDS.mapiMachine;
  const mao = cluster.clientAs("mao");
  const made = await admin.create(
    type,
    { ...o, metadata, status: undefined },
    { fieldManager: "kubectl-create" },
  );
  await mao.updateStatus(type, { ...made, status: o.status }, { fieldManager: "machine-api-controllers" });
  await admin.patch(
    type,
    metadata.namespace,
    metadata.name,
    { type: "merge", body: { metadata: { labels: { "bench/edited": "true" } } } },
    { fieldManager: "kubectl-edit" },
  );
  const read = await admin.get(type, metadata.namespace, metadata.name);
  await admin.delete(type, metadata.namespace, metadata.name);
  return { managedFields: read.metadata?.managedFields ?? [] };
};

/**
 * Handovers the driver waits on, read from the local server's storage (decision 105): `waitFor` names a fleet
 * and the authority it goes to, `steady` answers whether every one of it is there yet.
 */
const waits = new Map<
  number,
  { type: ResourceType; names: string[]; authority: StableAuthority; next: number }
>();
const waitFor: Handler = async ({ kind, names, authority }) => {
  if (!cluster.local) throw new Error("bench: waitFor reads the local API server's storage");
  const id = waits.size;
  const type = mapiTypeOf(kind as HandedOver);
  waits.set(id, { type, names: names as string[], authority: authority as StableAuthority, next: 0 });
  return id;
};
const steady: Handler = async ({ id }) => {
  const wait = waits.get(Number(id));
  const store = cluster.local?.api.store;
  if (!wait || !store) throw new Error(`bench: no wait ${String(id)}`);
  const { all, next } = steadyFrom(wait.names, wait.next, wait.authority, (name) =>
    store.get(wait.type, NAMESPACES.mapiNamespace, name),
  );
  wait.next = next;
  return all;
};

serveParent(
  { kubeconfigText: cluster.kubeconfigText },
  {
    seed,
    managedFieldsOf,
    machines: async () =>
      cluster.local
        ? cluster.local.api.store.list(KINDS.mapiMachine, NAMESPACES.mapiNamespace).length
        : (await admin.list(KINDS.mapiMachine, { namespace: NAMESPACES.mapiNamespace })).items.length,
    register: ({ url }) => cluster.registerProductWebhooks(String(url)),
    counters: () => cluster.counters(),
    reset: () => cluster.resetCounters(),
    settled: () => cluster.settled(),
    waitFor,
    steady,
    // On the real one, the control plane's own processes: the counting proxy this process runs in front of
    // it is the bench's, not kube's, and is left out. Locally the server is this process (the default).
    ...(cluster.local
      ? {}
      : { cpuMs: () => cpuOfBinaries(["etcd", "kube-apiserver", "kube-controller-manager"]) }),
  },
  () => cluster.stop(),
);
