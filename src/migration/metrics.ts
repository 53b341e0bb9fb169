/**
 * The handover metrics of SPEC §3.4 on a Registry the caller passes in (never the global one), under the
 * product's `machine_api_migration_` prefix (SPEC §3.4, §7; the names below without it):
 * `migrations_total{kind,direction,result}` and `migration_duration_seconds{kind,direction}` are counted
 * by the controller when a handover ends; the gauges `migrations_in_progress{kind,step}`,
 * `migration_stuck{kind,name,step}` and `synchronized_false{kind,reason}` are recomputed at every scrape
 * from the sources the controllers register (one per kind, reading the cache), never incremented blindly.
 * Asking twice for the same registry returns the metrics already there, so both controllers share them.
 */
import type { Registry } from "prom-client";
import { Counter, Gauge, Histogram } from "prom-client";
import type { GaugeRow, GaugeRows } from "./reporting.js";

export interface MigrationMetrics {
  migrationsTotal: Counter<"kind" | "direction" | "result">;
  migrationDuration: Histogram<"kind" | "direction">;
  /**
   * Registers the gauge rows of one source (one controller) under `id`, replacing an earlier source of
   * that id; the returned function removes it.
   */
  addGaugeSource(id: string, source: () => GaugeRows): () => void;
}

/** The product's own metrics are prefixed, so they never collide with another component's series. */
const METRIC_PREFIX = "machine_api_migration_";

export const METRIC_NAMES = Object.freeze({
  migrationsTotal: `${METRIC_PREFIX}migrations_total`,
  migrationDuration: `${METRIC_PREFIX}migration_duration_seconds`,
  migrationsInProgress: `${METRIC_PREFIX}migrations_in_progress`,
  migrationStuck: `${METRIC_PREFIX}migration_stuck`,
  synchronizedFalse: `${METRIC_PREFIX}synchronized_false`,
});

/**
 * A gauge whose series are the rows of its sources at scrape time. The sources live on the gauge (not in
 * module state) so a second `migrationMetrics(registry)` finds them through the registry.
 */
class SourcedGauge<L extends string> extends Gauge<L> {
  readonly sources = new Map<string, () => readonly GaugeRow<L>[]>();
}

const sourcedGauge = <L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): SourcedGauge<L> => {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof SourcedGauge) return existing as SourcedGauge<L>;
  if (existing) throw new Error(`metric ${name} is already registered by something else`);
  return new SourcedGauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect(this: Gauge<L>) {
      this.reset();
      for (const source of (this as SourcedGauge<L>).sources.values())
        for (const row of source()) this.inc(row.labels as Partial<Record<L, string>>, row.value);
    },
  });
};

const reuse = <T>(registry: Registry, name: string, make: () => T): T =>
  (registry.getSingleMetric(name) as T | undefined) ?? make();

export function migrationMetrics(registry: Registry): MigrationMetrics {
  const registers = [registry];
  const inProgress = sourcedGauge(
    registry,
    METRIC_NAMES.migrationsInProgress,
    "Handovers in progress (status Migrating, or spec asking for the other authority), by the step they are at.",
    ["kind", "step"] as const,
  );
  const stuck = sourcedGauge(
    registry,
    METRIC_NAMES.migrationStuck,
    "1 when a handover has been at one step longer than migrationStuckAfter (never cancelled automatically).",
    ["kind", "name", "step"] as const,
  );
  const synchronizedFalse = sourcedGauge(
    registry,
    METRIC_NAMES.synchronizedFalse,
    "MAPI objects whose Synchronized condition is False, by reason.",
    ["kind", "reason"] as const,
  );
  return {
    migrationsTotal: reuse(
      registry,
      METRIC_NAMES.migrationsTotal,
      () =>
        new Counter({
          name: METRIC_NAMES.migrationsTotal,
          help: "Handovers that ended, by kind, direction and result (completed, cancelled).",
          labelNames: ["kind", "direction", "result"] as const,
          registers,
        }),
    ),
    migrationDuration: reuse(
      registry,
      METRIC_NAMES.migrationDuration,
      () =>
        new Histogram({
          name: METRIC_NAMES.migrationDuration,
          help: "Seconds from the write that started a handover (status Migrating) to the write that completed it.",
          labelNames: ["kind", "direction"] as const,
          buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200],
          registers,
        }),
    ),
    addGaugeSource(id, source) {
      inProgress.sources.set(id, () => source().inProgress);
      stuck.sources.set(id, () => source().stuck);
      synchronizedFalse.sources.set(id, () => source().synchronizedFalse);
      return () => {
        inProgress.sources.delete(id);
        stuck.sources.delete(id);
        synchronizedFalse.sources.delete(id);
      };
    },
  };
}
