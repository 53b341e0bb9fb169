/**
 * The local Kubernetes API server (SPEC §8): `startApiServer` wires storage, the type registry, the REST
 * write path, RBAC authorization over the roles and bindings it stores (rbac.ts; it starts with kube's
 * bootstrap roles, so `system:masters` and cluster-admin are all-powerful and everyone may discover the API),
 * admission (src/apiserver/admission), CRD schemas (src/apiserver/schema), the in-process controllers
 * (garbage collector, namespace and CRD cleanup) and the HTTPS listener, and hands back the handles tests
 * and local mode use: URL, CA, kubeconfig, counters, fault injection and direct store access. Nothing
 * listens at import time.
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type pino from "pino";
import YAML from "yaml";
import type { KubeObject } from "../kube/object.js";
import { childLogger } from "../logging.js";
import { createCertificateAuthority, issueServingCertificate } from "../server/certs.js";
import { createAdmissionDispatcher } from "./admission/index.js";
import { Controllers } from "./controllers.js";
import {
  CORE_EVENTS_KEY,
  coreEventToEventsV1,
  EVENTS_V1_KEY,
  eventsV1EventToCore,
} from "./event-versions.js";
import { FaultInjector, type FaultOptions, RequestCounters } from "./faults.js";
import { HttpApi } from "./http.js";
import { type Authorizer, bootstrapPolicy, cachingAuthorizer, type PolicyView, RBAC_KEYS } from "./rbac.js";
import { Registry } from "./registry.js";
import { Rest } from "./rest/index.js";
import { compileCrd } from "./schema/index.js";
import { Storage } from "./storage.js";
import type { AdmissionDispatcher, ResourceInfo, UserInfo } from "./types.js";
import { resourceKey } from "./types.js";

export type { CounterSnapshot, FaultMatch, FaultOptions } from "./faults.js";
export { FaultInjector, RequestCounters } from "./faults.js";
export type { ResourceInfo, UserInfo } from "./types.js";

export interface ApiServerOptions {
  host?: string;
  /** 0 (the default) = ephemeral. */
  port?: number;
  /** Absent → a fresh CA and a serving certificate for localhost/127.0.0.1. */
  tls?: { certPem: string; keyPem: string; caPem: string };
  /**
   * Bearer tokens; any other credential is answered 401. What each user may do is RBAC's answer: put a user
   * in `system:masters` to allow everything, or store roles and bindings for it.
   */
  users: Array<{ token: string; username: string; groups: string[]; uid?: string }>;
  /** Default 60 000. */
  bookmarkIntervalMs?: number;
  faults?: FaultOptions;
  logger?: pino.Logger;
  /** How many change events watches can resume from (older resourceVersions get 410). Default 10 000. */
  watchHistorySize?: number;
  /** CRD groups listed first in /apis (kubectl resolves ambiguous plurals to the first). Default MAPI. */
  preferredGroups?: string[];
  /** Replaces the webhook dispatcher (tests of the core that must not depend on webhooks). */
  admission?: AdmissionDispatcher;
  /** Resolves `clientConfig.service` of webhook configurations to an address (local mode). */
  resolveService?: Parameters<typeof createAdmissionDispatcher>[0]["resolveService"];
  clock?: () => number;
}

/** A type by group + plural (or a src/kube/kinds ResourceType). */
export interface TypeRef {
  group: string;
  plural: string;
}

export interface DirectStore {
  /** Stores an object as given (admission bypassed), assigning uid, resourceVersion, creationTimestamp, generation. */
  create(obj: KubeObject): KubeObject;
  get(type: TypeRef, namespace: string, name: string): KubeObject | undefined;
  list(type: TypeRef, namespace?: string): KubeObject[];
  /** The current global resourceVersion. */
  resourceVersion(): string;
}

export interface ApiServer {
  url: string;
  caPem: string;
  stop(): Promise<void>;
  counters: RequestCounters;
  faults: FaultInjector;
  kubeconfig(username: string, context?: string, namespace?: string): string;
  store: DirectStore;
  /** Resolves when the in-process controllers (GC, namespace, CRD cleanup) have nothing queued. */
  settled(): Promise<void>;
  /** Number of open watch streams (tests check cleanup). */
  watchCount(): number;
}

const typeOfObject = (registry: Registry, obj: KubeObject): ResourceInfo => {
  const apiVersion = String(obj.apiVersion ?? "");
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const t = registry.byGroupKind(group ?? "", String(obj.kind ?? ""));
  if (!t?.versions.includes(version ?? ""))
    throw new Error(`no type serves ${apiVersion} ${String(obj.kind)}`);
  return t;
};

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const clock = opts.clock ?? Date.now;
  const storage = new Storage(opts.watchHistorySize ?? 10_000);
  // One store for both Event groups, as kube-apiserver keeps them (decision 157).
  storage.alias(EVENTS_V1_KEY, {
    bucket: CORE_EVENTS_KEY,
    read: coreEventToEventsV1,
    write: eventsV1EventToCore,
  });
  const registry = new Registry(opts.preferredGroups);
  const webhookConfigurations = (): {
    mutating: readonly KubeObject[];
    validating: readonly KubeObject[];
  } => ({
    mutating: storage.list("admissionregistration.k8s.io/mutatingwebhookconfigurations"),
    validating: storage.list("admissionregistration.k8s.io/validatingwebhookconfigurations"),
  });
  const admission =
    opts.admission ??
    createAdmissionDispatcher({
      configurations: webhookConfigurations,
      ...(opts.logger ? { logger: childLogger(opts.logger, "admission") } : {}),
      ...(opts.resolveService ? { resolveService: opts.resolveService } : {}),
    });
  const policy: PolicyView = {
    clusterRoleBindings: () => storage.list(RBAC_KEYS.clusterRoleBindings),
    roleBindings: (namespace) => storage.list(RBAC_KEYS.roleBindings, namespace),
    clusterRole: (name) => storage.get(RBAC_KEYS.clusterRoles, "", name),
    role: (namespace, name) => storage.get(RBAC_KEYS.roles, namespace, name),
  };
  // Each user's grants are walked once per change of the roles and bindings, not on every request.
  const rbac = cachingAuthorizer(policy);
  const rbacKeys = new Set<string>(Object.values(RBAC_KEYS));
  storage.onEvent((e) => {
    if (rbacKeys.has(e.key)) rbac.invalidate();
  });
  const authorizer: Authorizer = rbac.authorize;
  const rest = new Rest({
    storage,
    registry,
    admission,
    authorize: authorizer,
    policy,
    compileCrd,
    clock,
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  // Every real cluster starts with these; product code may rely on `default` or `kube-system` existing.
  const namespaces = registry.byKey("/namespaces")!;
  for (const name of ["default", "kube-system", "kube-public", "kube-node-lease"])
    rest.createDirect(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  // …and with kube-apiserver's bootstrap roles, which it keeps in storage like any other.
  const bootstrap = bootstrapPolicy();
  const clusterRoles = registry.byKey(RBAC_KEYS.clusterRoles)!;
  const clusterRoleBindings = registry.byKey(RBAC_KEYS.clusterRoleBindings)!;
  for (const role of bootstrap.clusterRoles) rest.createDirect(clusterRoles, role);
  for (const binding of bootstrap.clusterRoleBindings) rest.createDirect(clusterRoleBindings, binding);
  const controllers = new Controllers({
    storage,
    registry,
    rest,
    clock,
    ...(opts.logger ? { logger: childLogger(opts.logger, "controllers") } : {}),
  });
  const counters = new RequestCounters();
  const faults = new FaultInjector(opts.faults);
  const users = new Map<string, UserInfo>();
  for (const u of opts.users) {
    const groups = u.groups.includes("system:authenticated")
      ? [...u.groups]
      : [...u.groups, "system:authenticated"];
    users.set(u.token, { username: u.username, groups, ...(u.uid ? { uid: u.uid } : {}) });
  }
  const http = new HttpApi({
    rest,
    storage,
    registry,
    users,
    authorize: authorizer,
    policy,
    counters,
    faults,
    clock,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    ...(opts.logger ? { logger: opts.logger } : {}),
  });

  let tls = opts.tls;
  if (!tls) {
    const ca = createCertificateAuthority("local kube-apiserver CA");
    const sans = ["localhost", "127.0.0.1", "kubernetes.default.svc"];
    if (opts.host && !["0.0.0.0", "::"].includes(opts.host) && !sans.includes(opts.host))
      sans.push(opts.host);
    const serving = issueServingCertificate(ca, sans);
    tls = { certPem: serving.certPem, keyPem: serving.keyPem, caPem: ca.certPem };
  }
  const server: Server = createServer(
    { cert: tls.certPem, key: tls.keyPem, keepAliveTimeout: 30_000 },
    http.handle,
  );
  server.headersTimeout = 0;
  server.requestTimeout = 0;
  // Every TCP socket, from accept on: `closeAllConnections` knows only sockets that reached HTTP, so one still
  // in its TLS handshake at stop (an informer reconnecting after its watch was cut) could open a new watch
  // after it and hold `server.close()` open for good.
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const host = opts.host ?? "127.0.0.1";
  // A wildcard listen address is reached through loopback, which the generated certificate names.
  const dialHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `https://${dialHost.includes(":") ? `[${dialHost}]` : dialHost}:${port}`;
  const caPem = tls.caPem;

  const store: DirectStore = {
    create: (obj) => rest.createDirect(typeOfObject(registry, obj), obj),
    get: (type, namespace, name) => storage.get(resourceKey(type), namespace, name),
    list: (type, namespace) => storage.list(resourceKey(type), namespace),
    resourceVersion: () => String(storage.currentRv()),
  };

  return {
    url,
    caPem,
    counters,
    faults,
    store,
    settled: () => controllers.idle(),
    watchCount: () => storage.watcherCount(),
    kubeconfig(username, context = "local", namespace) {
      const user = opts.users.find((u) => u.username === username);
      if (!user) throw new Error(`no configured user ${username}`);
      const userName = username.replace(/[^A-Za-z0-9_.-]/g, "-");
      return YAML.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "local",
            cluster: { server: url, "certificate-authority-data": Buffer.from(caPem).toString("base64") },
          },
        ],
        users: [{ name: userName, user: { token: user.token } }],
        contexts: [
          {
            name: context,
            context: { cluster: "local", user: userName, ...(namespace ? { namespace } : {}) },
          },
        ],
        "current-context": context,
        preferences: {},
      });
    },
    async stop() {
      controllers.stop();
      // Stop accepting first, then cut what is open: a client reconnecting in between (an informer after a cut
      // watch) would otherwise hold a fresh keep-alive connection that server.close() waits for.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      http.closeWatches();
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
