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

/**
 * One variant's sums over its units: X always; Y and XY with two measures; the pre-period sums with `preMs`.
 *
 * First-order sums (ΣX, ΣY, ΣP) are plain; second-order ones are about the
 * variant's shifts (the mean of X, Y, P over its units with events, chosen
 * by the statement itself): sumXX = Σ(X − shiftX)², sumXY =
 * Σ(X − shiftX)(Y − shiftY), and so on, units without events counting as
 * 0. Plain ΣX² cancels catastrophically in a variance once the mean dwarfs
 * the spread (values 1e9 ± 1 gave a variance of 0); about a shift near the
 * mean nothing cancels. An absent shift is 0 (plain sums). The statistics
 * take the shifts as they are (stats/types.ts MeanStats). A sum that
 * overflows double precision is Infinity (or NaN): the statistics then
 * answer null with a warning.
 */
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
  shiftX?: number;
  shiftY?: number;
  shiftPre?: number;
};

/**
 * Exposed units per variant, and when the first and the last unit were first exposed (epoch ms). With a window,
 * only units first exposed in [from, to), the units experimentStats analyses; `outside` then counts the others.
 */
export type ExposureCounts = { variants: { variant: string; n: number }[]; firstAt: number | null; lastAt: number | null; outside?: number };

/** A window of first exposures, epoch ms: from inclusive, to exclusive (as ExperimentStatsQuery's). */
export type ExposureWindow = { from: number; to: number };

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

/**
 * ExposureCounts from per-variant rows (count, earliest and latest first exposure; with a window, `all` the count
 * in or out of it), sorted by variant already. A variant whose units are all outside the window is left out.
 */
export function countsOf(rows: { variant: string; n: number | string; lo: number | string | null; hi: number | string | null; all?: number | string }[], windowed = false): ExposureCounts {
  let firstAt: number | null = null;
  let lastAt: number | null = null;
  let outside = 0;
  const variants: ExposureCounts["variants"] = [];
  for (const r of rows) {
    const n = Number(r.n);
    outside += Number(r.all ?? n) - n;
    if (n === 0) continue;
    variants.push({ variant: r.variant, n });
    const lo = Number(r.lo);
    const hi = Number(r.hi);
    if (firstAt === null || lo < firstAt) firstAt = lo;
    if (lastAt === null || hi > lastAt) lastAt = hi;
  }
  return windowed ? { variants, firstAt, lastAt, outside } : { variants, firstAt, lastAt };
}

/** The sums' columns of a statement's row, in their order (see VariantStatsRow). */
export const SUM_COLUMNS = ["sx", "sxx", "sy", "syy", "sxy", "sp", "spp", "sxp"] as const;

/**
 * The per-variant row the engines' statements answer (numbers may come back as text from PostgreSQL): `n` units
 * in all, `m` of them with events (in `u`), the shifts kx, ky, kp (means over those m; null when m is 0), and
 * over those m units ΣX, Σ(X − kx)², ΣY, Σ(Y − ky)², Σ(X − kx)(Y − ky), ΣP, Σ(P − kp)², Σ(X − kx)(P − kp).
 * variantStatsOf adds the n − m units without events (all 0) to the second-order sums. A sum that came back
 * NULL while m > 0 was NaN (SQLite answers NaN as NULL: +∞ and −∞ in one sum), and stays NaN.
 */
export type VariantStatsRow = Record<"n" | "m" | "kx" | "ky" | "kp" | (typeof SUM_COLUMNS)[number], number | string | null> & { variant: string };

/**
 * Adds rows of the same variant over disjoint units (SQLite's slices), each about its own shifts, into one
 * about the first's: moving Σ(X − k)(Y − k') over m units to shifts K, K' adds δ'·Σ(X − k) + δ·Σ(Y − k') + m·δ·δ'
 * (δ = k − K), all small when the shifts are near each other, as means of the same variant are.
 */
export function addShiftedRows(a: VariantStatsRow, b: VariantStatsRow): VariantStatsRow {
  const num = (v: number | string | null) => (v === null ? NaN : Number(v));
  const ma = Number(a.m ?? 0);
  const mb = Number(b.m ?? 0);
  if (mb === 0) return { ...a, n: Number(a.n) + Number(b.n) };
  if (ma === 0) return { ...b, n: Number(a.n) + Number(b.n) };
  const K = { x: num(a.kx), y: num(a.ky), p: num(a.kp) };
  const k = { x: num(b.kx), y: num(b.ky), p: num(b.kp) };
  const d = { x: k.x - K.x, y: k.y - K.y, p: k.p - K.p };
  // Σ(V − k) over b's units, from its plain sums.
  const c = { x: num(b.sx) - mb * k.x, y: num(b.sy) - mb * k.y, p: num(b.sp) - mb * k.p };
  const moved = (s: number | string | null, u: "x" | "y" | "p", v: "x" | "y" | "p") => num(s) + d[v] * c[u] + d[u] * c[v] + mb * d[u] * d[v];
  const add = (x: number | string | null, y: number) => num(x) + y;
  return {
    variant: a.variant,
    n: Number(a.n) + Number(b.n),
    m: ma + mb,
    kx: K.x,
    ky: K.y,
    kp: K.p,
    sx: add(a.sx, num(b.sx)),
    sxx: add(a.sxx, moved(b.sxx, "x", "x")),
    sy: add(a.sy, num(b.sy)),
    syy: add(a.syy, moved(b.syy, "y", "y")),
    sxy: add(a.sxy, moved(b.sxy, "x", "y")),
    sp: add(a.sp, num(b.sp)),
    spp: add(a.spp, moved(b.spp, "p", "p")),
    sxp: add(a.sxp, moved(b.sxp, "x", "p")),
  };
}

/** A statement's row as VariantStats: Y sums with two measures, the pre-period sums with `preMs` (see VariantStatsRow). */
export function variantStatsOf(row: VariantStatsRow, ratio: boolean, pre: boolean): VariantStats {
  const n = Number(row.n ?? 0);
  const m = Number(row.m ?? 0);
  // A NULL sum over units with events was NaN; with no such units every sum is 0.
  const num = (v: number | string | null) => (v === null ? (m > 0 ? NaN : 0) : Number(v));
  const shift = (v: number | string | null) => (m > 0 ? num(v) : 0);
  const zeros = n - m;
  const [kx, ky, kp] = [shift(row.kx), shift(row.ky), shift(row.kp)];
  // The units without events have X = Y = P = 0: (0 − kx)(0 − ky) = kx·ky each.
  const out: VariantStats = { variant: row.variant, n, sumX: num(row.sx), sumXX: num(row.sxx) + zeros * kx * kx, shiftX: kx };
  if (ratio) {
    out.sumY = num(row.sy);
    out.sumYY = num(row.syy) + zeros * ky * ky;
    out.sumXY = num(row.sxy) + zeros * kx * ky;
    out.shiftY = ky;
  }
  if (pre) {
    out.sumPre = num(row.sp);
    out.sumPreSq = num(row.spp) + zeros * kp * kp;
    out.sumXPre = num(row.sxp) + zeros * kx * kp;
    out.shiftPre = kp;
  }
  return out;
}

/** Events per name over two trailing windows (epoch seconds, hour-aligned starts), read from the hourly roll-ups. */
export type NameCountsQuery = { projectId: string; daySince: number; weekSince: number };
export type NameCounts = { name: string; day: number; week: number };

/**
 * The newest raw events of one name, newest first (by `ts`, then arrival).
 * `before` is the `next` of the page before: an engine's own position,
 * opaque to callers.
 */
export type RecentQuery = { projectId: string; name: string; limit: number; before?: RecentCursor };
export type RecentCursor = { ts: number; tie: string };
export type RecentEvent = { ts: number; unitId: string | null; value: number | null; props: Record<string, string | number | boolean> | null };
export type RecentPage = { events: RecentEvent[]; next: RecentCursor | null };

/** A stored `props` column as the row's properties (SQLite gives JSON text, PostgreSQL's jsonb may arrive parsed). */
export function propsOf(raw: unknown): RecentEvent["props"] {
  if (raw === null || raw === undefined) return null;
  return (typeof raw === "string" ? JSON.parse(raw) : raw) as RecentEvent["props"];
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
  /**
   * Exposed units per variant of one experiment (first exposure per unit), sorted by variant: all of them, or
   * (with `window`) those first exposed in it, the same units experimentStats counts over the same window.
   */
  exposureCounts(projectId: string, experimentId: string, window?: ExposureWindow): Promise<ExposureCounts>;
  /** Events per name in the trailing day and week (NameCountsQuery), off the request loop; names with none are absent. */
  countsByName?(query: NameCountsQuery): Promise<NameCounts[]>;
  /** One page of a name's newest raw events (RecentQuery), off the request loop. */
  recent?(query: RecentQuery): Promise<RecentPage>;
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
