/**
 * The thin shell every stand-in shares: its own informer cache over its own identity's transport (so the
 * API server's request counters attribute its reads and writes to the controller it stands in for, and so
 * it can be stopped — "crashed" — independently), its controllers from src/kube's runtime, and optionally
 * its own leader-election Lease, as the real controllers each have. Also the MachineSet "expectations"
 * (controller-runtime's word): names a set controller created or deleted that its cache has not shown yet,
 * so a reconcile between the write and the watch event never creates or deletes twice.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Cache } from "../kube/cache.js";
import { createCache } from "../kube/cache.js";
import type { Clock } from "../kube/clock.js";
import type { KubeConnection } from "../kube/config.js";
import type { Controller } from "../kube/controller.js";
import type { LeaderElector } from "../kube/leader.js";
import { createLeaderElector } from "../kube/leader.js";
import { leaderGatedControllers } from "../kube/manager.js";
import { childLogger } from "../logging.js";

/** Lease timings (default the runtime's 15 s / 10 s / 2 s); tests shorten them to crash and fail over quickly. */
export interface LeaseTimings {
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface StandInOptions {
  /** Short name used in logs and the Lease name (`mao`, `capi`, `capa`). */
  name: string;
  connection: KubeConnection;
  logger: Logger;
  clock: Clock;
  /** When set, the stand-in campaigns for this Lease and runs its controllers only while leading. */
  leaderElection?: ({ namespace: string; leaseName: string } & LeaseTimings) | undefined;
  /** Builds the controllers over the stand-in's own cache (creating the informers they watch). */
  controllers(cache: Cache, logger: Logger): Controller[];
}

export interface RunningStandIn {
  readonly name: string;
  readonly cache: Cache;
  /** True while this stand-in runs its controllers (always, without leader election). */
  leading(): boolean;
  /**
   * True while every controller runs with nothing queued or in flight (tests wait for quiescence with it).
   * False while not leading; keys waiting out a requeue delay do not count as queued.
   */
  idle(): boolean;
  /** Stops controllers, leader election (without releasing: as a crash would, unless `release`) and the cache. */
  stop(options?: { release?: boolean }): Promise<void>;
}

export async function startStandIn(options: StandInOptions): Promise<RunningStandIn> {
  const logger = childLogger(options.logger, options.name);
  const cache = createCache({ transport: options.connection.transport, logger, clock: options.clock });
  const controllers = options.controllers(cache, logger);
  let elector: LeaderElector | undefined;
  if (options.leaderElection) {
    const gate = leaderGatedControllers(controllers, logger);
    elector = createLeaderElector({
      client: options.connection.client,
      namespace: options.leaderElection.namespace,
      name: options.leaderElection.leaseName,
      identity: `${options.name}-${randomBytes(4).toString("hex")}`,
      clock: options.clock,
      logger,
      ...timings(options.leaderElection),
      onStartedLeading: gate.onStartedLeading,
      onStoppedLeading: gate.onStoppedLeading,
    });
    elector.start();
  } else {
    for (const c of controllers)
      c.start().catch((e) =>
        logger.error(
          { controller: c.name, err: e instanceof Error ? e.message : String(e) },
          "controller did not start",
        ),
      );
  }
  return {
    name: options.name,
    cache,
    leading: () => elector?.isLeader() ?? true,
    idle: () =>
      controllers.every((c) => {
        const q = c.queue();
        return q !== undefined && q.len() === 0 && q.processing().length === 0;
      }),
    async stop(stopOptions) {
      if (elector) await (stopOptions?.release ? elector.release() : elector.stop());
      await Promise.all(controllers.map((c) => c.stop()));
      await cache.stop();
    },
  };
}

const timings = (t: LeaseTimings): LeaseTimings => ({
  ...(t.leaseDurationMs !== undefined ? { leaseDurationMs: t.leaseDurationMs } : {}),
  ...(t.renewDeadlineMs !== undefined ? { renewDeadlineMs: t.renewDeadlineMs } : {}),
  ...(t.retryPeriodMs !== undefined ? { retryPeriodMs: t.retryPeriodMs } : {}),
});

/**
 * Per-owner record of children a set controller wrote but its cache does not yet reflect: created names
 * not yet listed, deleted names not yet shown deleting or gone. Lives in one stand-in's closure.
 */
export interface Expectations {
  created(owner: string, name: string): void;
  deleted(owner: string, name: string): void;
  /** Forgets what the cache now shows; returns names still pending creation and deletion. */
  pending(
    owner: string,
    seen: (name: string) => "absent" | "present" | "deleting",
  ): { creating: string[]; deleting: string[] };
}

export function createExpectations(clock: Clock, timeoutMs = 30_000): Expectations {
  // Like controller-runtime, an expectation that is never observed lapses, so a lost event cannot wedge a set.
  const creating = new Map<string, Map<string, number>>();
  const deleting = new Map<string, Map<string, number>>();
  const add = (m: Map<string, Map<string, number>>, owner: string, name: string): void => {
    const inner = m.get(owner) ?? new Map<string, number>();
    inner.set(name, clock.now());
    m.set(owner, inner);
  };
  return {
    created: (owner, name) => add(creating, owner, name),
    deleted: (owner, name) => add(deleting, owner, name),
    pending(owner, seen) {
      const now = clock.now();
      const sweep = (m: Map<string, Map<string, number>>, done: (s: ReturnType<typeof seen>) => boolean) => {
        const inner = m.get(owner);
        if (!inner) return [];
        for (const [name, at] of inner) if (done(seen(name)) || now - at > timeoutMs) inner.delete(name);
        return [...inner.keys()];
      };
      return {
        creating: sweep(creating, (s) => s !== "absent"),
        deleting: sweep(deleting, (s) => s !== "present"),
      };
    },
  };
}

/** Five lower-case alphanumerics, as the API server's generateName uses. */
export const randomSuffix = (): string => {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  return Array.from(randomBytes(5), (b) => alphabet[b % alphabet.length]).join("");
};
