/**
 * Fault injection in front of the real control plane: an HTTPS proxy between the tests' clients (the
 * product, the simulated providers, kubectl) and kube-apiserver that counts every request and fails,
 * delays, cuts or loses the reply of (forwards, then drops the answer) a seeded fraction of the matching ones — the same `FaultInjector` the local API server
 * consults, with the same answers (src/apiserver/http.ts `injected`), so a test written against one
 * backend's faults means the same on the other.
 *
 * Everything else passes through untouched: method, path, headers and body both ways, streamed (watches
 * included). The caller is identified by the bearer token it sends, from the tokens the backend issued.
 * The control plane's own controllers (garbage collector, namespace controller) and the API server's calls
 * to webhooks do not pass through here, as they do not pass through a client's network in a cluster.
 */
import { createServer, request as httpsRequest, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { FaultInjector, RequestCounters, type RequestInfo } from "../../src/apiserver/faults.js";
import { injected, parseResourcePath, verbOf } from "../../src/apiserver/http.js";

export interface FaultProxy {
  url: string;
  faults: FaultInjector;
  counters: RequestCounters;
  stop(): Promise<void>;
}

export interface FaultProxyOptions {
  /** https://127.0.0.1:PORT of kube-apiserver. */
  upstream: string;
  /** CA that signed the upstream's serving certificate. */
  upstreamCaPem: string;
  /** The proxy's own serving certificate (for 127.0.0.1). */
  serving: { certPem: string; keyPem: string };
  /** Bearer token → user name, for matching faults and counting by user. */
  users: ReadonlyMap<string, string>;
}

/** What the local server would record for this request (verb, `group/resource[/sub]`, user). */
export function requestInfoOf(method: string, rawUrl: string, user: string): RequestInfo | undefined {
  const url = new URL(rawUrl, "https://proxy");
  const p = parseResourcePath(url.pathname.replace(/\/+$/, "") || "/");
  if (!p) return undefined;
  const watch =
    p.watchPath || url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1";
  return {
    verb: verbOf(method, p, watch),
    resource: `${p.group}/${p.resource}${p.subresource ? `/${p.subresource}` : ""}`,
    user,
  };
}

export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const faults = new FaultInjector();
  const counters = new RequestCounters();
  const upstream = new URL(opts.upstream);
  const server: Server = createServer(
    { cert: opts.serving.certPem, key: opts.serving.keyPem },
    (req, res) => {
      const auth = String(req.headers.authorization ?? "");
      const user = opts.users.get(auth.replace(/^Bearer\s+/i, "")) ?? "";
      const method = req.method ?? "GET";
      const info = requestInfoOf(method, req.url ?? "/", user);
      let lost = false;
      const forward = (): void => {
        const up = httpsRequest(
          {
            protocol: "https:",
            hostname: upstream.hostname,
            port: upstream.port,
            method,
            path: req.url,
            headers: { ...req.headers, host: upstream.host },
            ca: opts.upstreamCaPem,
          },
          (upRes) => {
            if (lost) {
              // Applied upstream; the answer never reaches the client.
              upRes.resume();
              res.socket?.destroy();
              return;
            }
            if (info && (upRes.statusCode ?? 0) >= 400) counters.failed(info, upRes.statusCode ?? 0);
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            // Node holds a head until the first body write; a watch on a quiet kind has none for minutes,
            // and its client would take it for not yet open (SPEC §2.1 freshness). Send it as kube does.
            res.flushHeaders();
            upRes.pipe(res);
            const drop = info?.verb === "watch" ? faults.watchDropAfter(info) : undefined;
            if (drop !== undefined) {
              const timer = setTimeout(() => {
                upRes.unpipe(res);
                up.destroy();
                res.end();
              }, drop);
              res.on("close", () => clearTimeout(timer));
            }
          },
        );
        up.on("error", (e) => {
          if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
          res.end(`fault proxy: upstream error: ${e.message}`);
        });
        res.on("close", () => up.destroy());
        req.pipe(up);
      };
      if (!info) return forward();
      counters.record(info);
      const latency = faults.latencyFor(info);
      const decideAndForward = (): void => {
        const fault = faults.decide(info);
        if (fault.kind === "error") {
          const e = injected(fault.code);
          counters.failed(info, e.code);
          req.resume();
          res.writeHead(e.code, { "content-type": "application/json", ...e.headers });
          res.end(JSON.stringify(e.toStatus()));
          return;
        }
        lost = fault.kind === "lostReply";
        forward();
      };
      if (latency > 0) setTimeout(decideAndForward, latency);
      else decideAndForward();
    },
  );
  await new Promise<void>((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    faults,
    counters,
    stop: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}
