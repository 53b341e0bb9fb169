/**
 * Serving-certificate reload without restart (SPEC §2.1): watches the certificate and key files (fs.watch on
 * their directories, because service-ca and kubelet replace Secret volume files by swapping a symlink, plus
 * a poll because watches miss events on some volumes), validates a changed pair and hands it to `apply`
 * (the HTTPS server's `setSecureContext`). A half-written or mismatched pair is refused and the previous
 * certificate keeps serving until a valid pair appears. Runs on every replica, never gated on leadership.
 * `serveTls` ties a watcher and the cluster's TLS security profile (tls-profile.ts) to one HTTPS server, the
 * same way for every listener (the webhook's and the metrics').
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { type FSWatcher, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Server as HttpsServer, ServerOptions as HttpsServerOptions } from "node:https";
import { dirname } from "node:path";
import { createSecureContext } from "node:tls";
import type { Logger } from "pino";
import { childLogger } from "../logging.js";
import { type TlsSecurityProfile, tlsOptionsFor } from "./tls-profile.js";

export interface CertificatePair {
  cert: string;
  key: string;
}

export type PairCheck = { ok: true; fingerprint256: string; validTo: string } | { ok: false; error: string };

/**
 * Whether `pair` can serve: both PEM blocks complete, the key belongs to the certificate, and OpenSSL accepts
 * them as a context. Pure (no I/O), so the rules for "half-written" are testable without files.
 */
export function checkCertificatePair(pair: CertificatePair): PairCheck {
  if (!pair.cert.includes("-----END CERTIFICATE-----")) {
    return { ok: false, error: "certificate file holds no complete PEM certificate" };
  }
  if (!/-----END [A-Z ]*PRIVATE KEY-----/.test(pair.key)) {
    return { ok: false, error: "key file holds no complete PEM private key" };
  }
  try {
    const certificate = new X509Certificate(pair.cert);
    if (!certificate.checkPrivateKey(createPrivateKey(pair.key))) {
      return { ok: false, error: "the private key does not belong to the certificate" };
    }
    createSecureContext({ cert: pair.cert, key: pair.key });
    return { ok: true, fingerprint256: certificate.fingerprint256, validTo: certificate.validTo };
  } catch (err) {
    return { ok: false, error: `certificate or key is unreadable: ${(err as Error).message}` };
  }
}

export interface CertificateWatcherOptions {
  certFile: string;
  keyFile: string;
  /** Installs a validated pair; throwing here counts as a failed reload (the old context stays). */
  apply: (pair: CertificatePair) => void;
  logger: Logger;
  /** Poll period, a safety net under fs.watch. */
  pollIntervalMs?: number;
  /** Quiet time after a watch event before reading: writers replace cert and key one after the other. */
  debounceMs?: number;
}

export interface CertificateWatcher {
  /** True once a valid pair has been applied. */
  loaded(): boolean;
  /** SHA-256 fingerprint of the certificate in use, if any. */
  fingerprint(): string | undefined;
  /** Reads the files now and applies them if they changed and are valid. Resolves to `loaded()`. */
  reloadNow(): Promise<boolean>;
  stop(): void;
}

function watchServingCertificate(options: CertificateWatcherOptions): CertificateWatcher {
  const { certFile, keyFile, apply, logger } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 2000;
  const debounceMs = options.debounceMs ?? 100;
  const log = childLogger(logger, "serving-certificate");

  let current: (CertificatePair & { fingerprint256: string }) | undefined;
  // The last refused content, so a bad pair left in place is logged once, not at every poll.
  let lastRefused: string | undefined;
  let running: Promise<boolean> = Promise.resolve(false);
  let stopped = false;
  let debounceTimer: NodeJS.Timeout | undefined;

  const attempt = async (): Promise<boolean> => {
    let pair: CertificatePair;
    try {
      const [cert, key] = await Promise.all([readFile(certFile, "utf8"), readFile(keyFile, "utf8")]);
      pair = { cert, key };
    } catch (err) {
      const message = `cannot read ${certFile} / ${keyFile}: ${(err as Error).message}`;
      if (lastRefused !== message)
        log.error({ certFile, keyFile }, `serving certificate not (re)loaded: ${message}`);
      lastRefused = message;
      return current !== undefined;
    }
    if (current !== undefined && current.cert === pair.cert && current.key === pair.key) return true;
    const check = checkCertificatePair(pair);
    if (!check.ok) {
      const signature = pair.cert + pair.key;
      if (lastRefused !== signature) {
        log.error(
          { certFile, keyFile, keepsServing: current?.fingerprint256 },
          `serving certificate not (re)loaded, keeping the previous one: ${check.error}`,
        );
      }
      lastRefused = signature;
      return current !== undefined;
    }
    try {
      apply(pair);
    } catch (err) {
      log.error({ err, certFile }, "installing the serving certificate failed, keeping the previous one");
      return current !== undefined;
    }
    const previous = current?.fingerprint256;
    current = { ...pair, fingerprint256: check.fingerprint256 };
    lastRefused = undefined;
    log.info(
      { certFile, fingerprint256: check.fingerprint256, previous, validTo: check.validTo },
      previous ? "serving certificate reloaded" : "serving certificate loaded",
    );
    return true;
  };

  // Reloads are serialised: a watch event during a poll read waits for it instead of racing it.
  const reloadNow = (): Promise<boolean> => {
    running = running.then(attempt, attempt);
    return running;
  };

  const schedule = (): void => {
    if (stopped) return;
    if (debounceTimer !== undefined) clearTimeout(debounceTimer);
    debounceTimer = setTimeout(() => {
      debounceTimer = undefined;
      if (!stopped) void reloadNow();
    }, debounceMs);
    debounceTimer.unref();
  };

  const watchers: FSWatcher[] = [];
  for (const dir of new Set([dirname(certFile), dirname(keyFile)])) {
    try {
      const watcher = watch(dir, { persistent: false }, schedule);
      watcher.on("error", (err) => log.warn({ err, dir }, "file watch failed; relying on polling"));
      watchers.push(watcher);
    } catch (err) {
      log.warn({ err, dir }, "cannot watch the certificate directory; relying on polling");
    }
  }
  const poll = setInterval(() => {
    if (!stopped) void reloadNow();
  }, pollIntervalMs);
  poll.unref();

  return {
    loaded: () => current !== undefined,
    fingerprint: () => current?.fingerprint256,
    reloadNow,
    stop() {
      stopped = true;
      clearInterval(poll);
      if (debounceTimer !== undefined) clearTimeout(debounceTimer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** HTTPS server options for a profile: its TLS settings and HTTP/1.1 only (SPEC §2.1); no certificate yet. */
export const httpsOptionsFor = (profile: TlsSecurityProfile | undefined): HttpsServerOptions => ({
  ...tlsOptionsFor(profile),
  ALPNProtocols: ["http/1.1"],
});

export interface ServingTlsOptions {
  certFile: string;
  keyFile: string;
  /** The profile the server was created with (`httpsOptionsFor`); absent → Intermediate. */
  tlsProfile?: TlsSecurityProfile;
  logger: Logger;
  pollIntervalMs?: number;
  debounceMs?: number;
}

export interface ServingTls extends CertificateWatcher {
  /** Applies a new TLS security profile to handshakes from now on, without a restart (SPEC §2.1). */
  setTlsProfile(profile: TlsSecurityProfile | undefined): void;
}

/**
 * Keeps `server` (created with `httpsOptionsFor(options.tlsProfile)`) serving the certificate files under
 * the current profile: each reloaded pair and each profile change becomes a new secure context. Until a pair
 * is loaded there is no context to replace, and the watcher applies the profile with the first pair.
 */
export function serveTls(server: HttpsServer, options: ServingTlsOptions): ServingTls {
  let profile = tlsOptionsFor(options.tlsProfile);
  let pair: CertificatePair | undefined;
  const watcher = watchServingCertificate({
    certFile: options.certFile,
    keyFile: options.keyFile,
    logger: options.logger,
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
    apply: (next) => {
      server.setSecureContext({ ...next, ...profile });
      pair = next;
    },
  });
  return {
    ...watcher,
    setTlsProfile(next) {
      const candidate = tlsOptionsFor(next);
      // A Custom profile naming no cipher OpenSSL knows makes no context: keep serving the profile in force
      // (and keep it for the next certificate reload) rather than fail every handshake.
      try {
        createSecureContext(candidate);
      } catch (err) {
        options.logger.error(
          { tlsProfile: next?.type ?? "Intermediate", err: err instanceof Error ? err.message : String(err) },
          "TLS security profile refused: the listener keeps the profile in force",
        );
        return;
      }
      profile = candidate;
      if (pair) server.setSecureContext({ ...pair, ...profile });
      options.logger.info({ tlsProfile: next?.type ?? "Intermediate" }, "TLS security profile applied");
    },
  };
}
