/**
 * Watches the cluster's TLS security profile (SPEC §2.1: `apiservers.config.openshift.io/cluster
 * .spec.tlsSecurityProfile`) with the product's own informer (src/kube/informer.ts) and hands each change to
 * `apply` — the composition root applies it to every listener (`setTlsProfile`), without a restart. Where the
 * API server does not serve `apiservers.config.openshift.io` (plain Kubernetes), nothing is watched and the
 * listeners keep Intermediate. The informer is its own, outside the shared cache: a cluster without the
 * resource must not hold the caches' readiness. `tlsProfileOf` is the pure part (decision 60).
 */
import type { Logger } from "pino";
import type { Clock } from "../kube/clock.js";
import { createResourceResolver } from "../kube/discovery.js";
import { NotFoundError } from "../kube/errors.js";
import { createInformer, type Informer } from "../kube/informer.js";
import { CONFIG_API_VERSION, CONFIG_GROUP, type ResourceType } from "../kube/kinds.js";
import { canonicalJson, isRecord, type KubeObject } from "../kube/object.js";
import type { Transport } from "../kube/transport.js";
import type { TlsProfileType, TlsProtocolVersion, TlsSecurityProfile } from "./tls-profile.js";

const API_SERVER_TYPE: ResourceType = Object.freeze({
  group: CONFIG_GROUP,
  version: "v1",
  kind: "APIServer",
  plural: "apiservers",
  namespaced: false,
});

/** The one APIServer object OpenShift reads. */
const CLUSTER_API_SERVER = "cluster";

const TYPES: ReadonlySet<string> = new Set<TlsProfileType>(["Old", "Intermediate", "Modern", "Custom"]);
const VERSIONS: ReadonlySet<string> = new Set<TlsProtocolVersion>([
  "VersionTLS10",
  "VersionTLS11",
  "VersionTLS12",
  "VersionTLS13",
]);

/**
 * The profile an APIServer object asks for, keeping only fields of the API's shape: no object, no profile or
 * an unknown type → undefined (Intermediate); Custom keeps its string ciphers and a known minimum version.
 */
export function tlsProfileOf(apiServer: KubeObject | undefined): TlsSecurityProfile | undefined {
  const spec = apiServer?.spec;
  const profile = isRecord(spec) ? spec.tlsSecurityProfile : undefined;
  if (!isRecord(profile) || typeof profile.type !== "string" || !TYPES.has(profile.type)) return undefined;
  const type = profile.type as TlsProfileType;
  if (type !== "Custom") return { type };
  const custom = isRecord(profile.custom) ? profile.custom : {};
  const ciphers = Array.isArray(custom.ciphers)
    ? custom.ciphers.filter((c): c is string => typeof c === "string")
    : undefined;
  const min =
    typeof custom.minTLSVersion === "string" && VERSIONS.has(custom.minTLSVersion)
      ? (custom.minTLSVersion as TlsProtocolVersion)
      : undefined;
  return {
    type,
    custom: { ...(ciphers ? { ciphers } : {}), ...(min ? { minTLSVersion: min } : {}) },
  };
}

export interface TlsProfileWatchOptions {
  transport: Transport;
  clock: Clock;
  logger: Logger;
  /** Called with each new profile (undefined: Intermediate), never twice in a row with the same one. */
  apply: (profile: TlsSecurityProfile | undefined) => void;
  watchSilenceTimeoutMs?: number;
}

export interface TlsProfileWatch {
  /** True once the profile is known: the APIServer list arrived, or the resource is not served. */
  synced(): boolean;
  /** Resolves when `synced()` becomes true. */
  readonly ready: Promise<void>;
  /** The profile last applied (undefined: Intermediate). */
  current(): TlsSecurityProfile | undefined;
  stop(): Promise<void>;
}

export function watchTlsProfile(options: TlsProfileWatchOptions): TlsProfileWatch {
  const { logger } = options;
  let applied: TlsSecurityProfile | undefined;
  let appliedKey = canonicalJson(null);
  let synced = false;
  let stopped = false;
  let informer: Informer | undefined;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const settle = (): void => {
    synced = true;
    markReady();
  };

  const refresh = (): void => {
    if (!informer?.hasSynced()) return;
    const next = tlsProfileOf(informer.get("", CLUSTER_API_SERVER));
    const key = canonicalJson(next ?? null);
    if (key === appliedKey) return;
    applied = next;
    appliedKey = key;
    options.apply(next);
  };

  const start = async (): Promise<void> => {
    try {
      await createResourceResolver(options.transport, []).resolve(CONFIG_API_VERSION, API_SERVER_TYPE.kind);
    } catch (err) {
      if (err instanceof NotFoundError) {
        logger.info(
          "apiservers.config.openshift.io is not served: the listeners keep the Intermediate profile",
        );
        settle();
        return;
      }
      // Anything else (the API server unreachable for a moment): the informer retries until it lists.
      logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "discovery of apiservers failed",
      );
    }
    if (stopped) return;
    informer = createInformer({
      type: API_SERVER_TYPE,
      transport: options.transport,
      clock: options.clock,
      logger,
      ...(options.watchSilenceTimeoutMs !== undefined
        ? { watchSilenceTimeoutMs: options.watchSilenceTimeoutMs }
        : {}),
    });
    informer.addHandlers({ onAdd: refresh, onUpdate: refresh, onDelete: refresh });
    informer.start();
    await informer.synced;
    refresh();
    settle();
  };
  void start().catch((err: unknown) => {
    logger.error({ err: err instanceof Error ? err.message : String(err) }, "TLS profile watch failed");
  });

  return {
    synced: () => synced,
    ready,
    current: () => applied,
    async stop() {
      stopped = true;
      await informer?.stop();
    },
  };
}
