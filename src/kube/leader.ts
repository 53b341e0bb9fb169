/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics (SPEC §7): a candidate
 * takes the Lease when it is free (no holder) or when its record has not changed for LeaseDuration as seen
 * on the candidate's own monotonic clock, from the answer that showed it (a wall-clock step or a slow GET
 * must not age a record); the leader renews every RetryPeriod with a resourceVersion precondition and
 * stops leading the moment it has not renewed within RenewDeadline — on a timer, so a hung request cannot
 * delay it. The defaults are OpenShift's (library-go's, what cluster-capi-operator uses): a kube-apiserver
 * rollout or a single-node upgrade can leave the API unreachable for a minute or more, and a leader that gave
 * up after 10 s would stop every controller for it. `release()` (the SIGTERM path) stops leading, waits for
 * the controllers to drain (`drained`) and then clears holderIdentity, so a successor takes over without
 * waiting for expiry and never beside this replica's last reconciles. Only the leader runs controllers; that
 * wiring lives in the callbacks, not here.
 */
import type { Logger } from "pino";
import type { KubeClient } from "./client.js";
import type { Clock, TimerHandle } from "./clock.js";
import { sleep } from "./clock.js";
import { KubeApiError, NotFoundError } from "./errors.js";
import { KINDS } from "./kinds.js";
import type { RuntimeMetrics } from "./metrics.js";
import type { KubeObject } from "./object.js";
import { isRecord } from "./object.js";

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  /** Unique per replica (pod name + random suffix). */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  clock: Clock;
  logger: Logger;
  metrics?: RuntimeMetrics;
  /** In [0, 1); jitter of a candidate's retry period. */
  random?: () => number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  /**
   * Resolves once the work `onStoppedLeading` stopped has finished (the controllers' in-flight reconciles).
   * `release()` waits for it before giving the Lease up. Without it, release gives the Lease up at once.
   */
  drained?(): Promise<void>;
}

export interface LeaderElector {
  start(): void;
  /** Stops campaigning without touching the Lease (as a crash would); stops leading locally. */
  stop(): Promise<void>;
  /**
   * Stops campaigning and, if leading, stops leading, waits for `drained` and then clears holderIdentity so
   * another replica takes over at its next retry.
   */
  release(): Promise<void>;
  isLeader(): boolean;
}

/** OpenShift's timings (SPEC §7); src/config.ts has the same numbers in seconds, and a test keeps them equal. */
export const LEADER_DEFAULTS = Object.freeze({
  leaseDurationMs: 137_000,
  renewDeadlineMs: 107_000,
  retryPeriodMs: 26_000,
});

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace("Z", "000Z");

/** Rejects when `signal` aborts: the loop goes on even when a client does not honour the signal. */
const cutOffOf = (signal: AbortSignal): Promise<never> =>
  new Promise((_resolve, reject) =>
    signal.addEventListener("abort", () => reject(new Error("lease request cut off")), { once: true }),
  );

const specOf = (lease: KubeObject): LeaseSpec => (isRecord(lease.spec) ? (lease.spec as LeaseSpec) : {});

/**
 * Pure: may `identity` write itself into this Lease now? `observedAtMs` (when this replica first saw the record
 * as it is, once the answer was in) and `nowMs` are on one monotonic clock, never the Lease's wall times.
 */
export function canAcquire(
  spec: LeaseSpec,
  identity: string,
  observedAtMs: number,
  nowMs: number,
  leaseDurationMs: number,
): boolean {
  const holder = spec.holderIdentity ?? "";
  if (!holder || holder === identity) return true;
  const duration = spec.leaseDurationSeconds ? spec.leaseDurationSeconds * 1000 : leaseDurationMs;
  return nowMs >= observedAtMs + duration;
}

export function createLeaderElector(options: LeaderElectionOptions): LeaderElector {
  const { client, namespace, name, identity, clock } = options;
  const leaseDurationMs = options.leaseDurationMs ?? LEADER_DEFAULTS.leaseDurationMs;
  const renewDeadlineMs = options.renewDeadlineMs ?? LEADER_DEFAULTS.renewDeadlineMs;
  const retryPeriodMs = options.retryPeriodMs ?? LEADER_DEFAULTS.retryPeriodMs;
  const random = options.random ?? Math.random;
  const logger = options.logger.child({ lease: `${namespace}/${name}`, identity });
  // A standby reports 0 from the start, as client-go's elector does.
  options.metrics?.leaderElectionMasterStatus.set({ name }, 0);

  let leading = false;
  let lastLease: KubeObject | undefined;
  let observed = "";
  // When this replica first saw `observed`, on the monotonic clock: a step of the wall clock must not age a
  // record (client-go times observedTime on Go's monotonic reading). The Lease's own times are wall times.
  let observedAt = 0;
  const elapsed = (): number => (clock.monotonic ? clock.monotonic() : clock.now());
  let deadline: TimerHandle | undefined;
  let loop: Promise<void> | undefined;
  let abort: AbortController | undefined;

  const setLeading = (value: boolean, why: string): void => {
    if (leading === value) return;
    leading = value;
    options.metrics?.leaderElectionMasterStatus.set({ name }, value ? 1 : 0);
    if (value) {
      logger.info({ why }, "started leading");
      options.onStartedLeading();
    } else {
      deadline?.cancel();
      deadline = undefined;
      logger.warn({ why }, "stopped leading");
      options.onStoppedLeading();
    }
  };

  const renewed = (lease: KubeObject): void => {
    lastLease = lease;
    deadline?.cancel();
    deadline = clock.setTimeout(
      () => setLeading(false, "not renewed within the renew deadline"),
      renewDeadlineMs,
    );
    setLeading(true, "lease acquired");
  };

  const record = (now: number, previous: LeaseSpec): LeaseSpec => {
    const mine = previous.holderIdentity === identity;
    return {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: mine && previous.acquireTime ? previous.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (previous.leaseTransitions ?? 0) + (mine ? 0 : 1),
    };
  };

  /**
   * One acquire-or-renew (a GET, then a PUT or POST) ends within half the renew deadline, aborted on the clock:
   * a renewal answered after the deadline is useless, and one the server sits on (or keeps answering 429)
   * must leave the leader time to try again before it. Each request carries what is left as its timeout, which
   * also bounds its `Retry-After` waits; stopping the elector aborts it at once.
   */
  const attemptBudgetMs = Math.max(1, Math.floor(renewDeadlineMs / 2));

  const tryAcquireOrRenew = async (signal: AbortSignal): Promise<void> => {
    const endsAt = elapsed() + attemptBudgetMs;
    const request = () => ({ signal, timeoutMs: Math.max(1, Math.ceil(endsAt - elapsed())) });
    let lease: KubeObject;
    try {
      lease = await client.get(KINDS.lease, namespace, name, request());
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      const created = await client.create(
        KINDS.lease,
        {
          metadata: { name, namespace },
          spec: { ...record(clock.now(), {}), leaseTransitions: 0 },
        },
        request(),
      );
      if (signal.aborted) throw new Error("lease request cut off");
      renewed(created);
      return;
    }
    // Stamped once the answer is here, as client-go stamps it: a GET that sat out a minute of 429s shows the
    // record as it was at the answer, and timing it from the ask would age it by that minute.
    const seenAt = elapsed();
    const spec = specOf(lease);
    const fingerprint = `${spec.holderIdentity ?? ""}|${spec.renewTime ?? ""}|${lease.metadata?.resourceVersion ?? ""}`;
    if (fingerprint !== observed) {
      observed = fingerprint;
      observedAt = seenAt;
    }
    if (!canAcquire(spec, identity, observedAt, seenAt, leaseDurationMs)) {
      if (leading) setLeading(false, `lease is held by ${spec.holderIdentity}`);
      return;
    }
    const updated = await client.update(
      KINDS.lease,
      { ...lease, spec: { ...lease.spec, ...record(clock.now(), spec) } },
      request(),
    );
    // A client that ignores the signal may still answer after the cut-off: that answer leads nobody.
    if (signal.aborted) throw new Error("lease request cut off");
    renewed(updated);
  };

  const campaign = async (signal: AbortSignal): Promise<void> => {
    while (!signal.aborted) {
      const attempt = new AbortController();
      const cutOff = (): void => attempt.abort();
      signal.addEventListener("abort", cutOff, { once: true });
      const timer = clock.setTimeout(cutOff, attemptBudgetMs);
      try {
        const work = tryAcquireOrRenew(attempt.signal);
        work.catch(() => {}); // its failure after a cut-off is nobody's concern
        await Promise.race([work, cutOffOf(attempt.signal)]);
      } catch (e) {
        // Conflicts are expected when two replicas race; the renew-deadline timer handles a leader that keeps failing.
        const level = e instanceof KubeApiError && e.code === 409 ? "debug" : "warn";
        logger[level]({ err: e instanceof Error ? e.message : String(e) }, "lease acquire/renew failed");
      } finally {
        timer.cancel();
        signal.removeEventListener("abort", cutOff);
      }
      if (signal.aborted) break;
      const wait = leading ? retryPeriodMs : retryPeriodMs * (1 + 0.2 * random());
      await sleep(clock, wait, signal);
    }
  };

  const halt = async (): Promise<void> => {
    abort?.abort();
    await loop;
    loop = undefined;
  };

  return {
    start() {
      if (loop) return;
      abort = new AbortController();
      loop = campaign(abort.signal);
    },
    async stop() {
      await halt();
      setLeading(false, "elector stopped");
    },
    async release() {
      await halt();
      if (!leading || !lastLease) return setLeading(false, "released");
      setLeading(false, "releasing the lease");
      // Nobody renews from here on: a drain longer than the Lease lets a successor take it by expiry, and
      // the write below then fails on its resourceVersion, leaving the successor's record alone.
      try {
        await options.drained?.();
      } catch (e) {
        logger.warn({ err: e instanceof Error ? e.message : String(e) }, "controllers did not drain cleanly");
      }
      const now = clock.now();
      try {
        await client.update(
          KINDS.lease,
          {
            ...lastLease,
            spec: {
              ...specOf(lastLease),
              holderIdentity: "",
              leaseDurationSeconds: 1,
              acquireTime: microTime(now),
              renewTime: microTime(now),
            },
          },
          { timeoutMs: attemptBudgetMs },
        );
        logger.info("lease released");
      } catch (e) {
        // Someone else already holds it (409) or the server is gone: either way it is no longer ours.
        logger.warn({ err: e instanceof Error ? e.message : String(e) }, "could not release the lease");
      }
    },
    isLeader: () => leading,
  };
}
