/**
 * Test harness for the local API server: start a server with known users, plain HTTPS requests that
 * trust its CA, a line-by-line watch reader, and builders for the CRDs and objects tests use.
 */

import type { IncomingHttpHeaders } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import { type ApiServer, type ApiServerOptions, startApiServer } from "../../src/apiserver/index.js";
import type { AdmissionDispatcher } from "../../src/apiserver/types.js";
import type { KubeObject } from "../../src/kube/object.js";
import { createCertificateAuthority, issueServingCertificate } from "../../src/server/certs.js";

export const ADMIN_TOKEN = "admin-token";
export const USER_TOKEN = "user-token";

/** Admission that allows everything: core tests must not depend on webhooks. */
export const allowAll: AdmissionDispatcher = {
  mutate: async (a) => ({ allowed: true, object: a.object, warnings: [] }),
  validate: async (a) => ({ allowed: true, object: a.object, warnings: [] }),
};

/** One PKI per test file: key generation is the slow part of starting a server. */
const TLS: ApiServerOptions["tls"] = (() => {
  const ca = createCertificateAuthority("apiserver test CA");
  const serving = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
  return { certPem: serving.certPem, keyPem: serving.keyPem, caPem: ca.certPem };
})();

export const start = (extra: Partial<ApiServerOptions> = {}): Promise<ApiServer> =>
  startApiServer({
    tls: TLS,
    users: [
      { token: ADMIN_TOKEN, username: "kube:admin", groups: ["system:masters"] },
      { token: USER_TOKEN, username: "alice", groups: ["devs"] },
    ],
    ...extra,
  });

/**
 * Grants `username` the `rules` inside `namespace` as a cluster admin would: a Role and a RoleBinding
 * created through the API (the server authorizes with RBAC; `alice` starts with no permission at all).
 */
export const grant = async (
  server: ApiServer,
  username: string,
  ns: string,
  rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>,
): Promise<void> => {
  const name = `grant-${username}`;
  const role = await call(server, "POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name },
    rules,
  });
  const binding = await call(
    server,
    "POST",
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: username }],
    },
  );
  if (role.status !== 201 || binding.status !== 201)
    throw new Error(`grant ${username} in ${ns}: ${role.text} ${binding.text}`);
};

/** One keep-alive agent per server, as real clients reuse connections (TLS handshakes dominate otherwise). */
const agents = new WeakMap<ApiServer, Agent>();
const agentFor = (server: ApiServer): Agent => {
  let a = agents.get(server);
  if (!a) {
    a = new Agent({ keepAlive: true, ca: server.caPem, maxSockets: 64 });
    agents.set(server, a);
  }
  return a;
};

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test responses are inspected structurally
  body: any;
}

export const call = (
  server: ApiServer,
  method: string,
  path: string,
  body?: unknown,
  options: { token?: string | null; contentType?: string; accept?: string; raw?: string } = {},
): Promise<Response> =>
  new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const token = options.token === undefined ? ADMIN_TOKEN : options.token;
    const payload = options.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const req = httpsRequest(
      url,
      {
        method,
        agent: agentFor(server),
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...(payload !== undefined
            ? {
                "Content-Type": options.contentType ?? "application/json",
                "Content-Length": Buffer.byteLength(payload),
              }
            : {}),
          ...(options.accept ? { Accept: options.accept } : {}),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
      },
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });

export interface WatchEvent {
  type: string;
  // biome-ignore lint/suspicious/noExplicitAny: events are inspected structurally
  object: any;
}

export interface WatchStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The next event, waiting up to `timeoutMs`. */
  next(timeoutMs?: number): Promise<WatchEvent>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export const watch = (
  server: ApiServer,
  path: string,
  token = ADMIN_TOKEN,
  accept?: string,
): Promise<WatchStream> =>
  new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const queue: WatchEvent[] = [];
    const waiters: Array<(e: WatchEvent) => void> = [];
    let buffer = "";
    let endResolve: () => void = () => {};
    const ended = new Promise<void>((r) => {
      endResolve = r;
    });
    const req = httpsRequest(
      url,
      {
        method: "GET",
        ca: server.caPem,
        headers: { Authorization: `Bearer ${token}`, ...(accept ? { Accept: accept } : {}) },
      },
      (res) => {
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          buffer += c;
          let i = buffer.indexOf("\n");
          while (i >= 0) {
            const line = buffer.slice(0, i);
            buffer = buffer.slice(i + 1);
            if (line.trim()) {
              const e = JSON.parse(line) as WatchEvent;
              const w = waiters.shift();
              if (w) w(e);
              else queue.push(e);
            }
            i = buffer.indexOf("\n");
          }
        });
        res.on("end", () => endResolve());
        res.on("close", () => endResolve());
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          ended,
          close: () => req.destroy(),
          next: (timeoutMs = 5_000) =>
            new Promise((res2, rej2) => {
              const e = queue.shift();
              if (e) return res2(e);
              const t = setTimeout(() => {
                const i = waiters.indexOf(waiter);
                if (i >= 0) waiters.splice(i, 1);
                rej2(new Error(`no watch event within ${timeoutMs}ms`));
              }, timeoutMs);
              const waiter = (ev: WatchEvent): void => {
                clearTimeout(t);
                res2(ev);
              };
              waiters.push(waiter);
            }),
        });
      },
    );
    req.on("error", (e) => {
      endResolve();
      reject(e);
    });
    req.end();
  });

export const namespace = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, labels },
});

export const configMap = (
  name: string,
  ns: string,
  data: Record<string, string> = {},
  labels: Record<string, string> = {},
): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns, labels },
  data,
});

/** A namespaced CRD `widgets.example.com` (v1) with status and scale subresources and a small schema. */
export const widgetCrd = (
  overrides: { scope?: "Namespaced" | "Cluster"; versions?: unknown[] } = {},
): KubeObject => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: overrides.scope ?? "Namespaced",
    names: {
      plural: "widgets",
      singular: "widget",
      kind: "Widget",
      listKind: "WidgetList",
      shortNames: ["wd"],
      categories: ["all"],
    },
    versions: overrides.versions ?? [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: {
            specReplicasPath: ".spec.replicas",
            statusReplicasPath: ".status.replicas",
            labelSelectorPath: ".status.selector",
          },
        },
        additionalPrinterColumns: [
          { name: "Size", type: "string", jsonPath: ".spec.size" },
          { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
        ],
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  size: { type: "string", enum: ["small", "large"], default: "small" },
                  replicas: { type: "integer", minimum: 0 },
                  tags: { type: "array", items: { type: "string" } },
                  free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                },
              },
              status: {
                type: "object",
                properties: {
                  phase: { type: "string" },
                  replicas: { type: "integer" },
                  selector: { type: "string" },
                },
              },
            },
          },
        },
      },
    ],
  },
});

export const widget = (
  name: string,
  ns: string,
  spec: Record<string, unknown> = {},
  extra: Partial<KubeObject> = {},
): KubeObject => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  ...extra,
  metadata: { name, namespace: ns, ...(extra.metadata ?? {}) },
  spec,
});

export const WIDGETS = (ns: string): string => `/apis/example.com/v1/namespaces/${ns}/widgets`;
