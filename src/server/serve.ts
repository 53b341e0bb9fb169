/**
 * The serving shell around `buildServer`: HTTPS (HTTP/1.1 only) with the cluster's TLS security profile
 * (tls-profile.ts; Intermediate unless told otherwise, re-applied in place by `setTlsProfile`) and the
 * certificate read from files and reloaded in place, listening, and the graceful shutdown of SPEC §7 (readyz
 * false → keep serving for `shutdownDelayMs` → stop accepting → drain in-flight requests). The composition
 * root (src/main.ts) calls `startWebhookServer`; signal handling and watching the profile stay there.
 */

import type { Server as HttpsServer } from "node:https";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type BuildOptions, buildServer, type ServerDeps, type WebhookApp } from "./app.js";
import type { TlsSecurityProfile } from "./tls-profile.js";
import { httpsOptionsFor, type ServingTls, serveTls } from "./tls-reload.js";

export interface WebhookServerOptions {
  /** Undefined: every address, as Node listens with no host (`unspecifiedAddress`). */
  host: string | undefined;
  /** 0 picks a free port (tests). */
  port: number;
  certFile: string;
  keyFile: string;
  /** How long /readyz reports false before the listener closes (SPEC §7, default 5 s in config). */
  shutdownDelayMs: number;
  deps: ServerDeps;
  fallback?: BuildOptions["fallback"];
  /** Certificate poll period (default 2 s) and watch debounce (default 100 ms). */
  certificatePollIntervalMs?: number;
  certificateDebounceMs?: number;
  /** The cluster's TLS security profile; absent → Intermediate (SPEC §2.1). */
  tlsProfile?: TlsSecurityProfile;
}

export interface WebhookServer {
  /** `https://host:port`, with a wildcard listen address replaced by loopback (127.0.0.1). */
  url: string;
  /** The address listened on: as given, else `::` or `0.0.0.0` (`unspecifiedAddress`). */
  address: string;
  port: number;
  app: WebhookApp;
  /** Stops accepting, drains in-flight requests and stops the certificate watcher. Idempotent. */
  close(): Promise<void>;
  /** SIGTERM path: readyz false now, serve `shutdownDelayMs` more, then `close()`. Idempotent. */
  beginShutdown(): Promise<void>;
  /** Re-reads the certificate files now (the watcher does this on change); resolves to "a cert is loaded". */
  reloadNow(): Promise<boolean>;
  /** SHA-256 fingerprint of the serving certificate in use. */
  certificateFingerprint(): string | undefined;
  /** Applies a new TLS security profile to handshakes from now on, without a restart (SPEC §2.1). */
  setTlsProfile(profile: TlsSecurityProfile | undefined): void;
}

/**
 * `https://host:port` for a listener, with a wildcard listen address replaced by 127.0.0.1: `::` accepts IPv4
 * too, and the development certificate names 127.0.0.1 (certs.ts `webhookSans`), not ::1.
 */
const listenUrl = (listenHost: string, port: number): string => {
  const host = listenHost === "0.0.0.0" || listenHost === "::" ? "127.0.0.1" : listenHost;
  return `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
};

/**
 * The address Node listens on when given no host: `::` where the host has IPv6 (on Linux it accepts IPv4
 * too, as IPv4-mapped addresses), else `0.0.0.0` — Node tries the first and falls back to the second. Asked
 * of Node itself, on a throwaway port, because Fastify turns a missing host into `localhost` (decision 188).
 */
export async function unspecifiedAddress(): Promise<string> {
  const probe = createNetServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(0, resolve);
  });
  const { address } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return address;
}

/**
 * Listens on `host:port` (0: a free port; no host: every address, `unspecifiedAddress`) and says where; if
 * it cannot, stops the certificate watcher so nothing outlives the failed start. Shared by the webhook and
 * the metrics listener.
 */
export async function listenServing(
  app: { listen(o: { host: string; port: number }): Promise<unknown>; server: unknown },
  tls: { stop(): void },
  host: string | undefined,
  port: number,
): Promise<{ address: string; port: number; url: string }> {
  let address = host;
  try {
    address ??= await unspecifiedAddress();
    await app.listen({ host: address, port });
  } catch (err) {
    tls.stop();
    throw err;
  }
  const bound = ((app.server as HttpsServer).address() as AddressInfo).port;
  return { address, port: bound, url: listenUrl(address, bound) };
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const { deps } = options;
  const log = deps.logger;
  let shuttingDown = false;

  const app = buildServer(deps, {
    // No key/cert yet: serveTls installs them through setSecureContext before the first handshake. Without
    // a valid pair the server still starts, refuses handshakes and is not ready, and picks the pair up when
    // it appears (service-ca may write the Secret after the pod started).
    https: httpsOptionsFor(options.tlsProfile),
    // Read lazily, once requests can arrive: `tls` is assigned right below.
    servingState: { certificateLoaded: () => tls.loaded(), shuttingDown: () => shuttingDown },
    fallback: options.fallback,
  });
  const server = app.server as HttpsServer;
  const tls: ServingTls = serveTls(server, {
    certFile: options.certFile,
    keyFile: options.keyFile,
    ...(options.tlsProfile ? { tlsProfile: options.tlsProfile } : {}),
    logger: log,
    ...(options.certificatePollIntervalMs !== undefined
      ? { pollIntervalMs: options.certificatePollIntervalMs }
      : {}),
    ...(options.certificateDebounceMs !== undefined ? { debounceMs: options.certificateDebounceMs } : {}),
  });
  if (!(await tls.reloadNow())) {
    log.error(
      { certFile: options.certFile, keyFile: options.keyFile },
      "no valid serving certificate yet: serving starts not ready and picks the files up when they appear",
    );
  }

  const { address, port, url } = await listenServing(app, tls, options.host, options.port);
  log.info({ address, port, url }, "admission server listening");

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      tls.stop();
      await app.close();
      log.info("admission server closed");
    })();
    return closing;
  };

  let shutdown: Promise<void> | undefined;
  const beginShutdown = (): Promise<void> => {
    shutdown ??= (async () => {
      shuttingDown = true;
      log.info({ delayMs: options.shutdownDelayMs }, "shutting down: readyz false, still serving");
      if (options.shutdownDelayMs > 0) await sleep(options.shutdownDelayMs);
      await close();
    })();
    return shutdown;
  };

  return {
    url,
    address,
    port,
    app,
    close,
    beginShutdown,
    reloadNow: tls.reloadNow,
    certificateFingerprint: tls.fingerprint,
    setTlsProfile: tls.setTlsProfile,
  };
}
