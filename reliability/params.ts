/**
 * Campaign sizes, each overridable by an environment variable so a run can be made larger (or shorter on a
 * slow machine) without editing code. Test code, not product code: the product reads its environment only in
 * src/config.ts.
 */
const int = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback;
};

export const PARAMS = Object.freeze({
  /** Item 1: generated AdmissionReviews sent through `inject`. */
  hostileRuns: int("RELIABILITY_HOSTILE_RUNS", 100_000),
  /** Item 1: the share of them also sent over real HTTPS. */
  hostileHttpsRuns: int("RELIABILITY_HOSTILE_HTTPS_RUNS", 2_000),
  /** Items 2, 3: autocannon connections and seconds. */
  loadConnections: int("RELIABILITY_LOAD_CONNECTIONS", 20),
  loadSeconds: int("RELIABILITY_LOAD_SECONDS", 8),
  /** Item 2: how many times the certificate files are replaced under load. */
  certRotations: int("RELIABILITY_CERT_ROTATIONS", 4),
  /** Item 6: stall rounds and the silence timeout the informer is given. */
  stallRounds: int("RELIABILITY_STALL_ROUNDS", 3),
  watchSilenceMs: int("RELIABILITY_WATCH_SILENCE_MS", 1_000),
});

/** Item 5: the fault soak's size, fault period and convergence budget. */
export const SOAK = Object.freeze({
  machines: int("RELIABILITY_SOAK_MACHINES", 100),
  /** At most 3: the seed's MachineSet builder names a set after its zone (us-east-1a/b/c). */
  machineSets: Math.min(3, int("RELIABILITY_SOAK_MACHINESETS", 3)),
  faultSeconds: int("RELIABILITY_SOAK_FAULT_SECONDS", 30),
  convergeSeconds: int("RELIABILITY_SOAK_CONVERGE_SECONDS", 240),
});

/** Item 4: Machines handed over while the leader is killed, and the product's lease timings (seconds). */
export const FAILOVER = Object.freeze({
  machines: int("RELIABILITY_FAILOVER_MACHINES", 100),
  leaseDuration: int("RELIABILITY_LEASE_DURATION", 4),
  renewDeadline: int("RELIABILITY_RENEW_DEADLINE", 3),
  retryPeriod: int("RELIABILITY_RETRY_PERIOD", 1),
  convergeSeconds: int("RELIABILITY_FAILOVER_CONVERGE_SECONDS", 240),
});
