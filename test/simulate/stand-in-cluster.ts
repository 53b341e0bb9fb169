/**
 * A local API server for the stand-in tests that drive it directly (SPEC §1.1): both namespaces, the
 * project's CRDs and the providers' real roles (src/local/providers-rbac.yaml), a token per stand-in identity,
 * and the simulated providers of one platform under those identities. `standInClusters()` registers the
 * hooks that make and stop them, so call it at the top of a test file. Also the waits and the readings of
 * the request counters and the ledger those tests share. Waits poll for state, never assert elapsed time.
 */
import { afterEach, beforeAll } from "vitest";
import { loadProjectCrds } from "../../src/apiserver/fixtures/crds.js";
import type { ApiServer, ApiServerOptions } from "../../src/apiserver/index.js";
import { startApiServer } from "../../src/apiserver/index.js";
import { flushMicrotasks } from "../../src/kube/clock.js";
import type { KubeConnection } from "../../src/kube/config.js";
import { connect } from "../../src/kube/config.js";
import { NotFoundError } from "../../src/kube/errors.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { nameOf } from "../../src/kube/object.js";
import { PROVIDERS_RBAC, rbacObjectsIn, rbacTypeOf } from "../../src/local/rbac.js";
import { createCertificateAuthority, issueServingCertificate } from "../../src/server/certs.js";
import type { SimulatedProviders } from "../../src/simulate/index.js";
import { createInstanceLedger, startSimulatedProviders } from "../../src/simulate/index.js";
import type { PlatformConverter } from "../../src/sync/conversion/platform.js";
import { silentLogger } from "../kube/fakes.js";
import { CAPI_NS, MAPI_NS } from "./builders.js";

export const IDENTITY = {
  mao: `system:serviceaccount:${MAPI_NS}:machine-api-controllers`,
  capi: `system:serviceaccount:${CAPI_NS}:capi-manager`,
  capa: `system:serviceaccount:${CAPI_NS}:capa-controller-manager`,
  capo: `system:serviceaccount:${CAPI_NS}:capo-manager`,
};
const users = [
  { token: "admin-token", username: "admin", groups: ["system:masters"] },
  ...Object.entries(IDENTITY).map(([k, username]) => ({
    token: `${k}-token`,
    username,
    groups: ["system:serviceaccounts", "system:authenticated"],
  })),
];

export interface Env {
  server: ApiServer;
  as(username: string): KubeConnection;
  admin: KubeConnection;
  providers: SimulatedProviders;
}

export interface StandInClusters {
  /** A local API server with both namespaces and the project's CRDs, as a cluster admin would set it up. */
  startCluster(): Promise<Omit<Env, "providers">>;
  /** The same, with the platform's stand-ins (default AWS) started under their identities. */
  start(options?: { requireRecordedDeletes?: boolean; platform?: PlatformConverter }): Promise<Env>;
  /** Registers something to stop after the current test (last registered, first stopped). */
  stopAfterTest(stop: () => Promise<void>): void;
}

export function standInClusters(): StandInClusters {
  let tls: ApiServerOptions["tls"];
  let crds: KubeObject[] = [];
  beforeAll(async () => {
    const ca = createCertificateAuthority("simulate test CA");
    const serving = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
    tls = { certPem: serving.certPem, keyPem: serving.keyPem, caPem: ca.certPem };
    crds = await loadProjectCrds();
  });
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const s of stops.splice(0).reverse()) await s();
  });

  const startCluster = async () => {
    const server = await startApiServer({ port: 0, users, bookmarkIntervalMs: 500, ...(tls ? { tls } : {}) });
    stops.push(() => server.stop());
    const as = (username: string) => connect({ kubeconfigText: server.kubeconfig(username) });
    const admin = as("admin");
    for (const name of [MAPI_NS, CAPI_NS]) await admin.client.create(KINDS.namespace, { metadata: { name } });
    for (const crd of crds) await admin.client.create(KINDS.customResourceDefinition, crd);
    // The server authorizes with RBAC: the stand-ins hold their real controllers' roles, as in a cluster.
    for (const o of await rbacObjectsIn(PROVIDERS_RBAC)) await admin.client.create(rbacTypeOf(o)!, o);
    return { server, as, admin };
  };

  const start: StandInClusters["start"] = async (options = {}) => {
    const { server, as, admin } = await startCluster();
    const providers = await startSimulatedProviders({
      connections: {
        mao: as(IDENTITY.mao),
        capi: as(IDENTITY.capi),
        capa: as(IDENTITY.capa),
        capo: as(IDENTITY.capo),
      },
      mapiNamespace: MAPI_NS,
      capiNamespace: CAPI_NS,
      logger: silentLogger(),
      ledger: createInstanceLedger(
        options.requireRecordedDeletes ? { requireRecordedDeletes: options.requireRecordedDeletes } : {},
      ),
      ...(options.platform ? { platform: options.platform } : {}),
    });
    stops.push(() => providers.stop());
    return { server, as, admin, providers };
  };

  return { startCluster, start, stopAfterTest: (stop) => stops.push(stop) };
}

/** Polls `check` until it returns a value other than undefined/false (or stops throwing). */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v as T;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}; last: ${last instanceof Error ? last.message : String(last)}`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until every stand-in is idle several checks in a row and the server's own controllers settled. */
export async function quiesce(env: Env): Promise<void> {
  let calm = 0;
  await eventually("the stand-ins to go idle", async () => {
    await env.server.settled();
    await flushMicrotasks();
    const idle = [env.providers.mao, env.providers.capi, env.providers.infraProvider].every((s) => s.idle());
    calm = idle ? calm + 1 : 0;
    return calm >= 5;
  });
}

export const get = (env: Env, type: ResourceType, ns: string, name: string) =>
  env.admin.client.get(type, ns, name);

export const gone = async (env: Env, type: ResourceType, ns: string, name: string): Promise<boolean> => {
  try {
    await get(env, type, ns, name);
    return false;
  } catch (e) {
    if (e instanceof NotFoundError) return true;
    throw e;
  }
};

/** The writes (`verb group/resource[/subresource]`) `user` made, sorted. */
export const writesBy = (env: Env, user: string): string[] =>
  Object.entries(env.server.counters.snapshot().byKey)
    .filter(([k]) => k.endsWith(` ${user}`) && /^(create|update|patch|delete) /.test(k))
    .map(([k]) => k.slice(0, k.length - user.length - 1))
    .sort();

export const names = async (env: Env, type: ResourceType, ns: string) =>
  (await env.admin.client.list(type, { namespace: ns })).items.map(nameOf);

/** The Machines that exist now, for the ledger's `violations`. */
export const existing = async (env: Env) => ({
  mapi: await names(env, KINDS.mapiMachine, MAPI_NS),
  capi: await names(env, KINDS.capiMachine, CAPI_NS),
});
