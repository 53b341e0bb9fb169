/**
 * The HTTP transport's credentials: resolved from the kubeconfig once and reused (client-node re-reads files
 * and builds an agent on every call), and dropped on a 401 so a rotated token is used on the next request.
 * How answers are parsed: a request's own `parse`, and the client's answers without managedFields.
 */
import { getEventListeners } from "node:events";
import http from "node:http";
import https from "node:https";
import { type AddressInfo, connect } from "node:net";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createKubeClient, type KubeClient } from "../../src/kube/client.js";
import {
  ServerError,
  TooManyRequestsError,
  TransportError,
  UnauthorizedError,
} from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { DEFAULT_RETRY_BUDGET_MS, kubeConfigTransport } from "../../src/kube/transport.js";
import { createCertificateAuthority, issueServingCertificate } from "../../src/server/certs.js";

const servers: (http.Server | https.Server)[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** Starts `server` on a free loopback port (closed after the test) and returns its base URL. */
async function serve(server: http.Server | https.Server, scheme: "http" | "https"): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A kubeconfig whose one context names `server` with `cluster`'s TLS settings and `user`'s credentials. */
const kubeConfigFor = (
  server: string,
  cluster: { caData?: string; skipTLSVerify?: boolean },
  user: { token?: string; certData?: string; keyData?: string },
): KubeConfig => {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "c", server, ...cluster }],
    users: [{ name: "u", ...user }],
    contexts: [{ name: "ctx", cluster: "c", user: "u" }],
    currentContext: "ctx",
  });
  return kubeConfig;
};

/** A kubeconfig for `server` (plain HTTP, see `serve`), with a bearer `token`. */
const listening = async (server: http.Server, token: string): Promise<KubeConfig> =>
  kubeConfigFor(await serve(server, "http"), { skipTLSVerify: true }, { token });

/** A server that answers 200 to `Bearer <accepted>` and 401 to anything else, recording what it saw. */
async function tokenServer(accepted: { token: string }) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const auth = req.headers.authorization ?? "";
    seen.push(auth);
    const ok = auth === `Bearer ${accepted.token}`;
    res.writeHead(ok ? 200 : 401, { "Content-Type": "application/json" });
    res.end(
      JSON.stringify(
        ok
          ? { kind: "ConfigMap", apiVersion: "v1", metadata: { name: "x" } }
          : { kind: "Status", apiVersion: "v1", status: "Failure", code: 401, reason: "Unauthorized" },
      ),
    );
  });
  const kubeConfig = await listening(server, accepted.token);
  return { seen, kubeConfig };
}

const get = { method: "GET", path: "/api/v1/namespaces/ns/configmaps/x" } as const;

describe("transport credentials", () => {
  it("are resolved from the kubeconfig once and reused by the following requests", async () => {
    const { seen, kubeConfig } = await tokenServer({ token: "t1" });
    const resolve = vi.spyOn(kubeConfig, "applyToHTTPSOptions");
    const transport = kubeConfigTransport(kubeConfig);
    for (let i = 0; i < 3; i++) await transport.request(get);
    expect(seen).toEqual(["Bearer t1", "Bearer t1", "Bearer t1"]);
    expect(resolve).toHaveBeenCalledTimes(1);
  });

  it("are dropped on a 401, so the next request carries the rotated token", async () => {
    const accepted = { token: "t1" };
    const { seen, kubeConfig } = await tokenServer(accepted);
    const transport = kubeConfigTransport(kubeConfig);
    await transport.request(get);
    // The token rotates: the server now accepts only t2, and the kubeconfig's user holds t2.
    accepted.token = "t2";
    (kubeConfig.getCurrentUser() as { token?: string }).token = "t2";
    await expect(transport.request(get)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(transport.request(get)).resolves.toMatchObject({ kind: "ConfigMap" });
    expect(seen).toEqual(["Bearer t1", "Bearer t1", "Bearer t2"]);
  });
});

describe("transport cancellation", () => {
  it("a request done leaves no listener on its signal (an informer's pages share one for a whole relist)", async () => {
    const { kubeConfig } = await tokenServer({ token: "t1" });
    const transport = kubeConfigTransport(kubeConfig);
    const controller = new AbortController();
    // A relist of 5,000 Machines is ten or more pages on one signal: each page's listener used to stay on it
    // until the signal was dropped (Node warned at the eleventh).
    for (let i = 0; i < 12; i++) await transport.request({ ...get, signal: controller.signal });
    // undici lets go of the signal when the answer's body closes, in the turn after its text was read.
    await new Promise((r) => setImmediate(r));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("a closed stream leaves no listener on its signal", async () => {
    const { kubeConfig } = await tokenServer({ token: "t1" });
    const transport = kubeConfigTransport(kubeConfig);
    const controller = new AbortController();
    for (let i = 0; i < 3; i++) {
      const stream = await transport.stream({ ...get, signal: controller.signal });
      for await (const _ of stream) {
        // one JSON line, then the answer ends
      }
      stream.close();
    }
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});

describe("transport request line (decision 102)", () => {
  /** A server that records each request's method and URL as they arrive, and answers an empty ConfigMap. */
  async function recordingServer(serverPath = "") {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ kind: "ConfigMap", apiVersion: "v1", metadata: { name: "x" } }));
    });
    const base = await serve(server, "http");
    return { seen, kubeConfig: kubeConfigFor(base + serverPath, { skipTLSVerify: true }, { token: "t" }) };
  }

  it("sends a path as its caller built it: no `..` resolved into another resource's path", async () => {
    const { seen, kubeConfig } = await recordingServer();
    const transport = kubeConfigTransport(kubeConfig);
    // A name taken from a hostile object: a URL parser would have turned this into a request for the
    // namespace's secrets.
    await transport.request({ method: "GET", path: "/api/v1/namespaces/ns/configmaps/../secrets" });
    expect(seen).toEqual(["GET /api/v1/namespaces/ns/configmaps/../secrets"]);
  });

  it("puts the server URL's path before every request's, and the query after it", async () => {
    const { seen, kubeConfig } = await recordingServer("/k8s/clusters/c-1/");
    const transport = kubeConfigTransport(kubeConfig);
    await transport.request({ ...get, query: { limit: 500, continue: "a b", fieldSelector: undefined } });
    expect(seen).toEqual(["GET /k8s/clusters/c-1/api/v1/namespaces/ns/configmaps/x?limit=500&continue=a+b"]);
  });

  it("refuses a path a request line cannot carry as a TransportError naming it, sending nothing", async () => {
    const { seen, kubeConfig } = await recordingServer();
    const transport = kubeConfigTransport(kubeConfig);
    const refused = transport.request({ method: "GET", path: "/apis/a group" });
    await expect(refused).rejects.toBeInstanceOf(TransportError);
    await expect(refused).rejects.toThrow("GET /apis/a group: ");
    expect(seen).toEqual([]);
  });

  it("an answer cut short is an error, never a truncated text", async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "1000" });
      res.write('{"kind":"ConfigMap",');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const kubeConfig = kubeConfigFor(await serve(server, "http"), { skipTLSVerify: true }, { token: "t" });
    const parse = vi.fn(JSON.parse);
    await expect(kubeConfigTransport(kubeConfig).request({ ...get, parse })).rejects.toBeInstanceOf(
      TransportError,
    );
    expect(parse).not.toHaveBeenCalled();
  });
});

describe("transport parse", () => {
  it("an answer and each line of a stream go through the request's `parse` (JSON.parse without one)", async () => {
    const { kubeConfig } = await tokenServer({ token: "t1" });
    const transport = kubeConfigTransport(kubeConfig);
    const texts: string[] = [];
    const parse = (text: string): unknown => {
      texts.push(text);
      return { parsed: text.length };
    };
    expect(await transport.request({ ...get, parse })).toEqual({ parsed: texts[0]?.length });
    const lines: unknown[] = [];
    for await (const line of await transport.stream({ ...get, parse })) lines.push(line);
    expect(lines).toEqual([{ parsed: texts[1]?.length }]);
    expect(texts.map((t) => JSON.parse(t).kind)).toEqual(["ConfigMap", "ConfigMap"]);
    expect(await transport.request(get)).toMatchObject({ kind: "ConfigMap" });
  });
});

describe("transport onResponse", () => {
  it("tells each answer's Date header, a request's and a watch's (the cluster's clock, cluster-clock.ts)", async () => {
    const date = "Sun, 06 Dec 2026 13:00:00 GMT";
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json", Date: date });
      res.end(JSON.stringify({ kind: "ConfigMap" }));
    });
    const seen: Array<{ code: string; date?: string }> = [];
    const transport = kubeConfigTransport(await listening(server, "t"), {
      onResponse: ({ code, date }) => void seen.push({ code, ...(date ? { date } : {}) }),
    });
    await transport.request(get);
    for await (const _ of await transport.stream(get));
    expect(seen).toEqual([
      { code: "200", date },
      { code: "200", date },
    ]);
  });
});

describe("client answers without managedFields (the product's controllers read none)", () => {
  it("get, list, create, patch and delete come without them when asked; with them otherwise", async () => {
    const object = {
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: { name: "x", managedFields: [{ manager: "m", fieldsV1: { "f:data": {} } }] },
      data: { managedFields: "kept" },
    };
    const server = http.createServer((req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      const list = req.method === "GET" && !req.url?.includes("/configmaps/");
      res.end(JSON.stringify(list ? { kind: "ConfigMapList", metadata: {}, items: [object] } : object));
    });
    const kubeConfig = await listening(server, "t");
    const transport = kubeConfigTransport(kubeConfig);
    const type = KINDS.configMap;
    const answers = async (client: KubeClient) => [
      await client.get(type, "ns", "x"),
      (await client.list(type, { namespace: "ns" })).items[0],
      await client.create(type, { metadata: { name: "x", namespace: "ns" } }),
      await client.update(type, { metadata: { name: "x", namespace: "ns" } }),
      await client.patch(type, "ns", "x", { type: "merge", body: {} }),
      await client.delete(type, "ns", "x"),
    ];
    const { managedFields: _cut, ...metadata } = object.metadata;
    for (const answer of await answers(createKubeClient(transport, { dropManagedFields: true })))
      expect(answer).toMatchObject({ metadata, data: { managedFields: "kept" } });
    for (const answer of await answers(createKubeClient(transport)))
      expect(answer).toMatchObject({ metadata: { managedFields: object.metadata.managedFields } });
    const dropped = await answers(createKubeClient(transport, { dropManagedFields: true }));
    for (const answer of dropped) expect((answer as KubeObject).metadata).not.toHaveProperty("managedFields");
  });
});

describe("transport TLS material (the kubeconfig's CA, client certificate and skip-verify)", () => {
  const authority = createCertificateAuthority("transport test CA");
  const serving = issueServingCertificate(authority, ["127.0.0.1"]);
  // Client certificates as the server sees them: it asks for one and reads it without verifying it.
  const clientOne = issueServingCertificate(authority, ["client-one"]);
  const clientTwo = issueServingCertificate(authority, ["client-two"]);
  const b64 = (pem: string): string => Buffer.from(pem).toString("base64");

  /** An HTTPS server that answers 200 to the client certificate named `accepted.name`, 401 to any other. */
  async function tlsServer(accepted: { name: string }) {
    const seen: string[] = [];
    const server = https.createServer(
      { cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const name = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? "");
        seen.push(name);
        const ok = name === accepted.name;
        res.writeHead(ok ? 200 : 401, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify(ok ? { kind: "ConfigMap", metadata: { name: "x" } } : { kind: "Status", code: 401 }),
        );
      },
    );
    return { seen, url: await serve(server, "https") };
  }

  const certificateOf = (pair: { certPem: string; keyPem: string }) => ({
    certData: b64(pair.certPem),
    keyData: b64(pair.keyPem),
  });

  it("trusts the kubeconfig's CA and presents its client certificate", async () => {
    const { seen, url } = await tlsServer({ name: "client-one" });
    const kubeConfig = kubeConfigFor(url, { caData: b64(authority.certPem) }, certificateOf(clientOne));
    await expect(kubeConfigTransport(kubeConfig).request(get)).resolves.toMatchObject({ kind: "ConfigMap" });
    expect(seen).toEqual(["client-one"]);
  });

  it("refuses a server its CA did not sign, and connects to it with skip-verify", async () => {
    const { seen, url } = await tlsServer({ name: "client-one" });
    const other = createCertificateAuthority("another CA");
    const refusing = kubeConfigFor(url, { caData: b64(other.certPem) }, certificateOf(clientOne));
    await expect(kubeConfigTransport(refusing).request(get)).rejects.toBeInstanceOf(TransportError);
    expect(seen).toEqual([]);
    const skipping = kubeConfigFor(url, { skipTLSVerify: true }, certificateOf(clientOne));
    await expect(kubeConfigTransport(skipping).request(get)).resolves.toMatchObject({ kind: "ConfigMap" });
    expect(seen).toEqual(["client-one"]);
  });

  it("a rotated client certificate is presented from the request after a 401", async () => {
    const accepted = { name: "client-one" };
    const { seen, url } = await tlsServer(accepted);
    const kubeConfig = kubeConfigFor(url, { caData: b64(authority.certPem) }, certificateOf(clientOne));
    const transport = kubeConfigTransport(kubeConfig);
    await transport.request(get);
    // The certificate rotates: the server now accepts only client-two, and the kubeconfig's user holds it.
    accepted.name = "client-two";
    Object.assign(kubeConfig.getCurrentUser() as object, certificateOf(clientTwo));
    await expect(transport.request(get)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(transport.request(get)).resolves.toMatchObject({ kind: "ConfigMap" });
    expect(seen).toEqual(["client-one", "client-one", "client-two"]);
  });
});

describe("transport connections (decision 107: requests through undici's pool, watches through Node's client)", () => {
  const configMap = JSON.stringify({ kind: "ConfigMap", apiVersion: "v1", metadata: { name: "x" } });

  it("requests one after another reuse kept-alive connections, not one each", async () => {
    let connections = 0;
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(configMap);
    });
    server.on("connection", () => void connections++);
    const transport = kubeConfigTransport(await listening(server, "t"));
    for (let i = 0; i < 10; i++) await transport.request(get);
    // undici's pool opens a second connection for the second request, while it still counts the first one
    // busy with the answer just read; from then on the two are reused.
    expect(connections).toBeLessThanOrEqual(2);
  });

  it("a DELETE with its options in the body keeps its connection, as kube-apiserver reads that body (decision 110)", async () => {
    // undici closes a connection after any request with a body whose method "does not expect one" (DELETE),
    // unless told the server reads it: every deletion would cost the next request a new TLS handshake.
    let connections = 0;
    const bodies: string[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => {
        body += c;
      });
      req.on("end", () => {
        bodies.push(`${req.method} ${body}`);
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(configMap);
      });
    });
    server.on("connection", () => void connections++);
    const transport = kubeConfigTransport(await listening(server, "t"));
    const options = { kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid: "u-1" } };
    for (let i = 0; i < 5; i++) {
      await transport.request({ method: "DELETE", path: get.path, body: options });
      await transport.request(get);
    }
    expect(bodies.filter((b) => b.startsWith("DELETE"))).toEqual(
      Array.from({ length: 5 }, () => `DELETE ${JSON.stringify(options)}`),
    );
    expect(connections).toBeLessThanOrEqual(2);
  });

  it("a request with no answer in its timeoutMs is a TransportError saying so, counted as <error>", async () => {
    const server = http.createServer(() => {
      // never answers
    });
    const codes: string[] = [];
    const transport = kubeConfigTransport(await listening(server, "t"), {
      onResponse: (r) => void codes.push(r.code),
    });
    const late = transport.request({ ...get, timeoutMs: 50 });
    await expect(late).rejects.toBeInstanceOf(TransportError);
    await expect(late).rejects.toThrow(`GET ${get.path}: timed out`);
    expect(codes).toEqual(["<error>"]);
    server.closeAllConnections();
  });

  it("an aborted request is a TransportError saying so", async () => {
    const server = http.createServer(() => {
      // never answers
    });
    const transport = kubeConfigTransport(await listening(server, "t"));
    const controller = new AbortController();
    const aborted = transport.request({ ...get, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(aborted).rejects.toThrow(`GET ${get.path}: aborted`);
    server.closeAllConnections();
  });

  it("a request behind the kubeconfig's proxy goes through the proxy", async () => {
    const target = await serve(
      http.createServer((_req, res) => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(configMap);
      }),
      "http",
    );
    // client-node's proxy agent tunnels with CONNECT, to an http server too.
    const tunnels: string[] = [];
    const proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on("connect", (req: http.IncomingMessage, client: Duplex) => {
      tunnels.push(req.url ?? "");
      const [host, port] = (req.url ?? "").split(":");
      const upstream = connect(Number(port), host, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.pipe(client).pipe(upstream);
      });
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
    const kubeConfig = kubeConfigFor(target, { skipTLSVerify: true }, { token: "t" });
    (kubeConfig.getCurrentCluster() as { proxyUrl?: string }).proxyUrl = await serve(proxy, "http");
    await expect(kubeConfigTransport(kubeConfig).request(get)).resolves.toMatchObject({ kind: "ConfigMap" });
    expect(tunnels).toEqual([target.replace("http://", "")]);
    proxy.closeAllConnections();
  });

  it("a server URL's user info is sent as basic credentials", async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers.authorization ?? "");
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(configMap);
    });
    const base = await serve(server, "http");
    const kubeConfig = kubeConfigFor(
      base.replace("http://", "http://ad%40min:pw@"),
      { skipTLSVerify: true },
      {},
    );
    await kubeConfigTransport(kubeConfig).request(get);
    expect(seen).toEqual([`Basic ${Buffer.from("ad@min:pw").toString("base64")}`]);
  });
});

describe("transport Retry-After (decision 162: client-go's retries of a server that asks for them)", () => {
  const REASONS: Record<number, string> = {
    429: "TooManyRequests",
    503: "ServiceUnavailable",
    504: "Timeout",
  };
  /** A server answering each request with the next of `answers` (the last one repeated), recording methods. */
  async function scripted(answers: Array<{ code: number; retryAfter?: string }>) {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      const a = answers[Math.min(seen.length, answers.length - 1)]!;
      seen.push(req.method ?? "");
      res.writeHead(a.code, {
        "Content-Type": "application/json",
        ...(a.retryAfter !== undefined ? { "Retry-After": a.retryAfter } : {}),
      });
      res.end(
        JSON.stringify(
          a.code === 200
            ? { kind: "ConfigMap", apiVersion: "v1", metadata: { name: "x" } }
            : {
                kind: "Status",
                apiVersion: "v1",
                status: "Failure",
                code: a.code,
                reason: REASONS[a.code] ?? "InternalError",
              },
        ),
      );
    });
    const waits: number[] = [];
    const codes: string[] = [];
    const signals: (AbortSignal | undefined)[] = [];
    const transport = kubeConfigTransport(await listening(server, "t"), {
      onResponse: ({ code }) => void codes.push(code),
      sleep: async (ms, signal) => {
        waits.push(ms);
        signals.push(signal);
        if (signal?.aborted) throw new Error("aborted");
      },
    });
    return { seen, waits, codes, signals, transport };
  }
  const post = {
    method: "POST",
    path: "/api/v1/namespaces/ns/configmaps",
    body: { kind: "ConfigMap" },
  } as const;

  it("a 429 with Retry-After is waited out and sent again, whatever the verb; each answer is counted", async () => {
    const s = await scripted([{ code: 429, retryAfter: "1" }, { code: 429, retryAfter: "2" }, { code: 200 }]);
    await expect(s.transport.request(post)).resolves.toMatchObject({ kind: "ConfigMap" });
    expect(s.seen).toEqual(["POST", "POST", "POST"]);
    expect(s.waits).toEqual([1_000, 2_000]);
    expect(s.codes).toEqual(["429", "429", "200"]);
  });

  it("ten times, then the 429 is the answer", async () => {
    const s = await scripted([{ code: 429, retryAfter: "0" }]);
    await expect(s.transport.request(get)).rejects.toBeInstanceOf(TooManyRequestsError);
    expect(s.seen).toHaveLength(11);
  });

  it("a 5xx with Retry-After is sent again for a GET, never for a write that may still be processing", async () => {
    const read = await scripted([{ code: 503, retryAfter: "1" }, { code: 200 }]);
    await expect(read.transport.request(get)).resolves.toMatchObject({ kind: "ConfigMap" });
    expect(read.seen).toEqual(["GET", "GET"]);
    const write = await scripted([{ code: 504, retryAfter: "1" }, { code: 200 }]);
    await expect(write.transport.request(post)).rejects.toBeInstanceOf(ServerError);
    expect(write.seen).toEqual(["POST"]);
  });

  it("a 429 without Retry-After (an eviction a disruption budget refuses) is the answer at once", async () => {
    const s = await scripted([{ code: 429 }, { code: 200 }]);
    await expect(s.transport.request(post)).rejects.toBeInstanceOf(TooManyRequestsError);
    expect(s.seen).toEqual(["POST"]);
  });

  it("the waits stay within the request's own timeout", async () => {
    const s = await scripted([{ code: 429, retryAfter: "2" }]);
    await expect(s.transport.request({ ...get, timeoutMs: 5_000 })).rejects.toBeInstanceOf(
      TooManyRequestsError,
    );
    // 2 s + 2 s fit in 5 s; a third wait would not.
    expect(s.waits).toEqual([2_000, 2_000]);
    expect(s.seen).toHaveLength(3);
  });

  it("a request without its own timeout waits 30 s in all (DEFAULT_RETRY_BUDGET_MS), not ten waits of 10 s", async () => {
    const s = await scripted([{ code: 429, retryAfter: "10" }]);
    const client = createKubeClient(s.transport);
    await expect(
      client.update(KINDS.lease, {
        metadata: { name: "l", namespace: "ns", resourceVersion: "1" },
        spec: {},
      }),
    ).rejects.toBeInstanceOf(TooManyRequestsError);
    expect(s.waits).toEqual([10_000, 10_000, 10_000]);
    expect(s.seen).toEqual(["PUT", "PUT", "PUT", "PUT"]);
    expect(DEFAULT_RETRY_BUDGET_MS).toBe(30_000);
  });

  it("a client call's timeoutMs is its request's budget, and its signal ends the wait (a stopped controller's write)", async () => {
    const s = await scripted([{ code: 429, retryAfter: "2" }]);
    const client = createKubeClient(s.transport);
    await expect(client.get(KINDS.configMap, "ns", "x", { timeoutMs: 5_000 })).rejects.toBeInstanceOf(
      TooManyRequestsError,
    );
    expect(s.waits).toEqual([2_000, 2_000]);

    const stopped = new AbortController();
    stopped.abort();
    const w = await scripted([{ code: 429, retryAfter: "1" }, { code: 200 }]);
    const writer = createKubeClient(w.transport);
    await expect(
      writer.patch(KINDS.configMap, "ns", "x", { type: "merge", body: {} }, { signal: stopped.signal }),
    ).rejects.toBeInstanceOf(TransportError);
    expect(w.seen.length).toBeLessThanOrEqual(1);
  });

  it("an abort during the wait ends the request at once, not sent again", async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      seen.push(req.method ?? "");
      res.writeHead(429, { "Content-Type": "application/json", "Retry-After": "5" });
      res.end("{}");
    });
    const transport = kubeConfigTransport(await listening(server, "t"));
    const controller = new AbortController();
    const pending = transport.request({ ...get, signal: controller.signal });
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(TransportError);
    expect(seen).toEqual(["GET"]);
  });
});
