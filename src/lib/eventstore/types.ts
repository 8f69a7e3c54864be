/**
 * Event storage: where ingested analytics events (and tracked-error
 * occurrences) go, and where metric and error series are read from. It is
 * its own seam beside the main `Store` so that heavy ingest never competes
 * with a toggle: an embedded SQLite file `events.db` beside `service.db`, or
 * time-partitioned tables when the store is PostgreSQL, or an analytics
 * upstream (SERVICE_ANALYTICS_URL) behind a local spool.
 *
 * Times: events carry epoch milliseconds; series speak epoch seconds (the
 * contract's `from`, `to`, `bucket`, `t`).
 */
import { EXPOSURE_PREFIX } from "../../sdk/experiments";

export { EXPOSURE_PREFIX };

/** One stored event. `props` values are scalars only (ingest drops nested values). */
export type EventRow = {
  projectId: string;
  name: string;
  /** Epoch milliseconds. */
  ts: number;
  unitId: string | null;
  value: number | null;
  props: Record<string, string | number | boolean> | null;
};

export const FILTER_OPS = ["eq", "neq", "gt", "gte", "lt", "lte"] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** A condition on one event property; compiled to a bound parameter, never spliced. */
export type PropertyFilter = { property: string; op: FilterOp; value: string | number | boolean };

/**
 * What one series measures per bucket:
 * - count: events of `event`;
 * - sum: the sum of numeric `property` (absent: the event's `value`);
 * - unique: distinct `unitId`s.
 * Ratios are two measures divided by the metrics service.
 */
export type Measure =
  | { kind: "count"; event: string; filters: PropertyFilter[] }
  | { kind: "sum"; event: string; property?: string; filters: PropertyFilter[] }
  | { kind: "unique"; event: string; filters: PropertyFilter[] };

export type SeriesQuery = {
  projectId: string;
  /** Epoch seconds, inclusive. */
  from: number;
  /** Epoch seconds, exclusive; greater than `from`. */
  to: number;
  /** Bucket width in seconds; buckets start at `from`, `from + bucket`, ... */
  bucket: number;
  measure: Measure;
};

/** Every bucket of the window, empty ones as `v: 0`; `sql` is the statement that ran (parameters bound, shown as placeholders). */
export type SeriesResult = { sql: string; rows: { t: number; v: number }[] };

/** The analytics upstream could not answer: `unreachable` is 503, `failed` (an error or a timeout) is 502. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: "unreachable" | "failed",
    message: string,
  ) {
    super(message);
  }
}

/**
 * Per-variant sufficient statistics of one experiment metric, computed in the
 * store (never by pulling rows into the server).
 *
 * Units are those with an exposure event `$exposure:<experimentId>` in
 * [from, to); each unit counts once, in the variant (`props.variant`) of its
 * first exposure, at the time of its first exposure `first`. A unit's value
 * of a measure is over that measure's events with the same `unit_id` and
 * `first <= ts < to`:
 * - count: how many events; sum: the sum of `property` (absent: `value`;
 *   a non-numeric property counts 0); unique: 1 if any event, else 0.
 * Units without such events count 0 (they are still in `n`).
 * "First exposure" is the unit's earliest kept exposure (see `exposureOf`):
 * a unit first exposed before `from` is not counted, even when it is exposed
 * again inside the window.
 *
 * `measures` holds one measure (X), or two for a ratio (X numerator, Y
 * denominator). With `preMs`, the covariate (CUPED) is X's value over
 * `first − preMs <= ts < first`.
 */
export type ExperimentStatsQuery = {
  projectId: string;
  experimentId: string;
  /** Epoch ms, inclusive. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
  measures: [Measure] | [Measure, Measure];
  preMs?: number;
};

/**
 * Several experiments of one project at once, each over its own window
 * [from, to), on several metrics: the rollout monitor's round, where a
 * project's rollouts all watch the error rate and often the same metrics.
 * An engine that has `experimentStatsMany` reads each metric's events once
 * for all of its experiments, and counts each experiment's units once.
 */
export type ManyExperimentsQuery = {
  projectId: string;
  /** Epoch ms, exclusive: the same end for every window. */
  to: number;
  experiments: { experimentId: string; from: number }[];
  /** Each metric with the experiments it is judged on (ids of `experiments`). No pre-period. */
  metrics: { measures: [Measure] | [Measure, Measure]; experimentIds: string[] }[];
};

/** Per metric of the query (same order): each of its experiments' variants, as experimentStats answers them; or why that metric failed. */
export type ManyExperimentsResult = (Map<string, VariantStats[]> | Error)[];

/** One variant's sums over its units: X always; Y and XY with two measures; the pre-period sums with `preMs`. */
export type VariantStats = {
  variant: string;
  /** Exposed units. */
  n: number;
  sumX: number;
  sumXX: number;
  sumY?: number;
  sumYY?: number;
  sumXY?: number;
  sumPre?: number;
  sumPreSq?: number;
  sumXPre?: number;
};

/** Exposed units per variant, and when the first and the last unit were first exposed (epoch ms). */
export type ExposureCounts = { variants: { variant: string; n: number }[]; firstAt: number | null; lastAt: number | null };

/**
 * What an appended row says about an experiment: its name is
 * `$exposure:<experimentId>`, it has a unit and a string `props.variant`.
 * Other rows (also exposures without a unit or a variant) are ordinary
 * events only. Every engine keeps, per (project, experiment, unit), the
 * first exposure: the earliest `ts`, and on a tie the smaller variant (so
 * the answer never depends on arrival order or on which server wrote it).
 */
export function exposureOf(r: EventRow): { experimentId: string; unitId: string; variant: string } | undefined {
  if (r.unitId === null || r.name.length <= EXPOSURE_PREFIX.length || !r.name.startsWith(EXPOSURE_PREFIX)) return undefined;
  const variant = r.props?.variant;
  if (typeof variant !== "string") return undefined;
  return { experimentId: r.name.slice(EXPOSURE_PREFIX.length), unitId: r.unitId, variant };
}

/** A first exposure as an append upserts it: project, experiment, unit, variant, ts. */
export type FirstExposure = [projectId: string, experimentId: string, unitId: string, variant: string, firstTs: number];

/**
 * Notes `r` in `firsts` (one entry per project, experiment and unit) when it
 * is an exposure (see exposureOf) before the one noted there: earlier, or as
 * early with the smaller variant. `text` is the engine's form of stored text.
 */
export function noteExposure(firsts: Map<string, FirstExposure>, r: EventRow, text: (s: string) => string = (s) => s): void {
  const x = exposureOf(r);
  if (!x) return;
  const variant = text(x.variant);
  const row: FirstExposure = [text(r.projectId), text(x.experimentId), text(x.unitId), variant, r.ts];
  const key = `${row[0]}\u0000${row[1]}\u0000${row[2]}`;
  const seen = firsts.get(key);
  if (!seen) firsts.set(key, row);
  else if (r.ts < seen[4] || (r.ts === seen[4] && variant < seen[3])) {
    seen[3] = variant;
    seen[4] = r.ts;
  }
}

/** ExposureCounts from per-variant rows (count, earliest and latest first exposure), sorted by variant already. */
export function countsOf(rows: { variant: string; n: number | string; lo: number | string; hi: number | string }[]): ExposureCounts {
  let firstAt: number | null = null;
  let lastAt: number | null = null;
  for (const r of rows) {
    const lo = Number(r.lo);
    const hi = Number(r.hi);
    if (firstAt === null || lo < firstAt) firstAt = lo;
    if (lastAt === null || hi > lastAt) lastAt = hi;
  }
  return { variants: rows.map((r) => ({ variant: r.variant, n: Number(r.n) })), firstAt, lastAt };
}

/** The per-variant row both engines' statements answer (numbers may come back as text from PostgreSQL). */
export type VariantStatsRow = Record<"n" | "sx" | "sxx" | "sy" | "syy" | "sxy" | "sp" | "spp" | "sxp", number | string | null> & { variant: string };

/** A statement's row as VariantStats: Y sums with two measures, the pre-period sums with `preMs`. */
export function variantStatsOf(row: VariantStatsRow, ratio: boolean, pre: boolean): VariantStats {
  const num = (v: number | string | null) => Number(v ?? 0);
  const out: VariantStats = { variant: row.variant, n: num(row.n), sumX: num(row.sx), sumXX: num(row.sxx) };
  if (ratio) {
    out.sumY = num(row.sy);
    out.sumYY = num(row.syy);
    out.sumXY = num(row.sxy);
  }
  if (pre) {
    out.sumPre = num(row.sp);
    out.sumPreSq = num(row.spp);
    out.sumXPre = num(row.sxp);
  }
  return out;
}

export interface EventStore {
  readonly kind: "sqlite" | "postgres" | "upstream";
  /** Where events live, without credentials (logs). */
  readonly location: string;
  /**
   * Appends rows; resolves once they are durable (survive a SIGKILL of the
   * process). Concurrent calls are committed together (group commit): one
   * transaction per tick, however many requests wait.
   */
  append(rows: EventRow[]): Promise<void>;
  /** One series; throws `UpstreamError` when an upstream fails. */
  series(query: SeriesQuery): Promise<SeriesResult>;
  /** Per-variant sums of one metric over an experiment's exposed units (see ExperimentStatsQuery); sorted by variant. */
  experimentStats(query: ExperimentStatsQuery): Promise<{ sql: string; variants: VariantStats[] }>;
  /** experimentStats of many experiments of a project in few statements (see ManyExperimentsQuery; statsOfMany falls back without it). */
  experimentStatsMany?(query: ManyExperimentsQuery): Promise<ManyExperimentsResult>;
  /**
   * How far behind the readable events are (ms): what waits in a spool for
   * the upstream. Stores that answer only once events are readable have none.
   */
  ingestLagMs?(nowMs: number): number;
  /** Exposed units per variant of one experiment (first exposure per unit), sorted by variant. */
  exposureCounts(projectId: string, experimentId: string): Promise<ExposureCounts>;
  /**
   * Deletes raw events of `projectId` older than `rawBefore` (epoch ms), and
   * (when given) roll-ups of every project older than `rollupsBefore`.
   * Answers how many raw rows went.
   */
  prune(options: { projectId: string; rawBefore: number; rollupsBefore?: number }): Promise<number>;
  close(): Promise<void>;
}

/** Raw events are kept this long unless the project says otherwise. */
export const DEFAULT_RAW_RETENTION_DAYS = 30;
/** Hourly roll-ups are kept 13 months. */
export const ROLLUP_RETENTION_DAYS = 396;
/** A series answers at most this many buckets. */
export const MAX_SERIES_BUCKETS = 10_000;

/**
 * The stats of many experiments (ManyExperimentsQuery): in one pass per
 * metric where the engine can (SQLite), else one experimentStats each, all
 * at once (the engine's pool queues them).
 */
export async function statsOfMany(store: EventStore, q: ManyExperimentsQuery): Promise<ManyExperimentsResult> {
  if (store.experimentStatsMany) return store.experimentStatsMany(q);
  const from = new Map(q.experiments.map((e) => [e.experimentId, e.from]));
  return Promise.all(
    q.metrics.map(async (m): Promise<Map<string, VariantStats[]> | Error> => {
      try {
        const answers = await Promise.all(
          m.experimentIds.map((experimentId) => store.experimentStats({ projectId: q.projectId, experimentId, from: from.get(experimentId)!, to: q.to, measures: m.measures })),
        );
        return new Map(m.experimentIds.map((id, i) => [id, answers[i]!.variants]));
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    }),
  );
}
