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
