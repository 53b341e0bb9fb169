/**
 * The serving shell around `buildServer`: HTTPS (HTTP/1.1 only) with the cluster's TLS security profile
 * (tls-profile.ts; Intermediate unless told otherwise, re-applied in place by `setTlsProfile`) and the
 * certificate read from files and reloaded in place, listening, and the graceful shutdown of SPEC §7 (readyz
 * false → keep serving for `shutdownDelayMs` → stop accepting → drain in-flight requests). The composition
 * root (src/main.ts) calls `startWebhookServer`; signal handling and watching the profile stay there.
 */

import type { Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type BuildOptions, buildServer, type ServerDeps, type WebhookApp } from "./app.js";
import { type TlsSecurityProfile, tlsOptionsFor } from "./tls-profile.js";
import { watchServingCertificate } from "./tls-reload.js";

export interface WebhookServerOptions {
  host: string;
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
  /** `https://host:port`, with a wildcard listen address replaced by loopback. */
  url: string;
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

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const { deps } = options;
  const log = deps.logger;
  let shuttingDown = false;
  // Assigned right below; the serving state reads it lazily, only once requests can arrive.
  let certificateLoaded = (): boolean => false;

  let profile = tlsOptionsFor(options.tlsProfile);
  let pair: { cert: string | Buffer; key: string | Buffer } | undefined;
  const app = buildServer(deps, {
    // No key/cert yet: the watcher installs them through setSecureContext before the first handshake. Without
    // a valid pair the server still starts, refuses handshakes and is not ready, and picks the pair up when
    // it appears (service-ca may write the Secret after the pod started).
    https: { ...profile, ALPNProtocols: ["http/1.1"] },
    servingState: { certificateLoaded: () => certificateLoaded(), shuttingDown: () => shuttingDown },
    fallback: options.fallback,
  });
  const server = app.server as HttpsServer;
  const watcher = watchServingCertificate({
    certFile: options.certFile,
    keyFile: options.keyFile,
    logger: log,
    pollIntervalMs: options.certificatePollIntervalMs,
    debounceMs: options.certificateDebounceMs,
    apply: ({ cert, key }) => {
      server.setSecureContext({ cert, key, ...profile });
      pair = { cert, key };
    },
  });
  const setTlsProfile = (next: TlsSecurityProfile | undefined): void => {
    profile = tlsOptionsFor(next);
    // Until a certificate is loaded there is no context to replace: the watcher applies `profile` with it.
    if (pair) server.setSecureContext({ ...pair, ...profile });
    log.info({ tlsProfile: next?.type ?? "Intermediate" }, "TLS security profile applied");
  };
  certificateLoaded = watcher.loaded;
  if (!(await watcher.reloadNow())) {
    log.error(
      { certFile: options.certFile, keyFile: options.keyFile },
      "no valid serving certificate yet: serving starts not ready and picks the files up when they appear",
    );
  }

  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (err) {
    watcher.stop();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const url = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  log.info({ url }, "admission server listening");

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      watcher.stop();
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
    port,
    app,
    close,
    beginShutdown,
    reloadNow: watcher.reloadNow,
    certificateFingerprint: watcher.fingerprint,
    setTlsProfile,
  };
}
