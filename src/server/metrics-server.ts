/**
 * The metrics listener (SPEC §2.1): its own HTTPS port (`--metrics-port`), serving only `GET /metrics` — the
 * registry every part of the process records on — to callers the authorizer lets in (in a cluster,
 * metrics-auth.ts: TokenReview + SubjectAccessReview, 401/403 otherwise). It uses the webhook's serving
 * certificate and TLS security profile (tls-reload.ts `serveTls`), so one Secret and one profile cover both
 * listeners. Nothing about admission lives here, and the webhook's port serves no metrics.
 */
import type { Server as HttpsServer } from "node:https";
import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { MetricsAuthorizer } from "./metrics-auth.js";
import { listenServing } from "./serve.js";
import type { TlsSecurityProfile } from "./tls-profile.js";
import { httpsOptionsFor, serveTls } from "./tls-reload.js";

export interface MetricsServerOptions {
  /** Undefined: every address, as Node listens with no host (serve.ts `unspecifiedAddress`). */
  host: string | undefined;
  /** 0 picks a free port (tests). */
  port: number;
  certFile: string;
  keyFile: string;
  /** The cluster's TLS security profile, as the webhook's; absent → Intermediate. */
  tlsProfile?: TlsSecurityProfile;
  registry: Registry;
  authorize: MetricsAuthorizer;
  logger: Logger;
  certificatePollIntervalMs?: number;
  certificateDebounceMs?: number;
}

export interface MetricsServer {
  /** `https://host:port`, with a wildcard listen address replaced by loopback (127.0.0.1). */
  url: string;
  /** The address listened on: as given, else `::` or `0.0.0.0`. */
  address: string;
  port: number;
  /** Stops accepting and the certificate watcher. Idempotent. */
  close(): Promise<void>;
  /** Applies a new TLS security profile to handshakes from now on, without a restart. */
  setTlsProfile(profile: TlsSecurityProfile | undefined): void;
}

/** `GET /metrics`, authorized; every other path is a 404 that asks no one. */
function buildMetricsApp(
  deps: Pick<MetricsServerOptions, "registry" | "authorize" | "logger">,
  https?: ReturnType<typeof httpsOptionsFor>,
): FastifyInstance {
  const log = deps.logger;
  const app = Fastify({
    ...(https ? { https } : {}),
    logger: false,
    // HEAD would be a second verb to authorize for no reader: Prometheus only GETs.
    exposeHeadRoutes: false,
    requestTimeout: 30_000,
  }) as unknown as FastifyInstance;
  app.get("/metrics", async (req, reply) => {
    let verdict: Awaited<ReturnType<MetricsAuthorizer>>;
    try {
      verdict = await deps.authorize({
        authorization: req.headers.authorization,
        verb: req.method.toLowerCase(),
        path: req.url.split("?")[0] ?? req.url,
      });
    } catch (err) {
      log.error(
        { err: err instanceof Error ? err.message : String(err) },
        "metrics scrape authorization failed",
      );
      return reply.code(500).type("text/plain").send("Authorization failed\n");
    }
    if (verdict.code !== 200) return reply.code(verdict.code).type("text/plain").send(`${verdict.message}\n`);
    const text = await deps.registry.metrics();
    return reply.type(deps.registry.contentType).send(text);
  });
  return app;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const log = options.logger;
  const app = buildMetricsApp(options, httpsOptionsFor(options.tlsProfile));
  const server = app.server as HttpsServer;
  const tls = serveTls(server, {
    certFile: options.certFile,
    keyFile: options.keyFile,
    ...(options.tlsProfile ? { tlsProfile: options.tlsProfile } : {}),
    logger: log,
    ...(options.certificatePollIntervalMs !== undefined
      ? { pollIntervalMs: options.certificatePollIntervalMs }
      : {}),
    ...(options.certificateDebounceMs !== undefined ? { debounceMs: options.certificateDebounceMs } : {}),
  });
  // Without a valid pair the listener refuses handshakes until the files appear, as the webhook's does.
  await tls.reloadNow();
  const { address, port, url } = await listenServing(app, tls, options.host, options.port);
  log.info({ address, port, url }, "metrics server listening");

  let closing: Promise<void> | undefined;
  return {
    url,
    address,
    port,
    close() {
      closing ??= (async () => {
        tls.stop();
        await app.close();
        log.info("metrics server closed");
      })();
      return closing;
    },
    setTlsProfile: tls.setTlsProfile,
  };
}
