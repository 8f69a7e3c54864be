// One piece: the PostgreSQL event store and the SQL it builds (series, experiment stats, partitions), beside the one class that runs it.
// A type import and Bun.SQL at run time: a value import of "bun" makes the bundle load bun:sql at every start (about 4 ms of the binary's cold start), PostgreSQL or not.
import type { SQL } from "bun";
import { isPostgresUnavailable, redactUrl } from "../store/postgres";
import { type ExperimentDialect, bucketRows, experimentParts, rollupPlan } from "./plan";
import {
  type EventRow,
  type EventStore,
  type ExperimentStatsQuery,
  type ExposureCounts,
  type FirstExposure,
  type Measure,
  type PropertyFilter,
  type SeriesQuery,
  type SeriesResult,
  type VariantStats,
  type VariantStatsRow,
  type ExposureWindow,
  type NameCounts,
  type NameCountsQuery,
  type RecentPage,
  type RecentQuery,
  EXPOSURE_PREFIX,
  propsOf,
  SUM_COLUMNS,
  UpstreamError,
  countsOf,
  noteExposure,
  variantStatsOf,
} from "./types";

/**
 * Events in PostgreSQL: the store's own database when `--store` is
 * PostgreSQL, or the analytics upstream (SERVICE_ANALYTICS_URL, `upstream:
 * true`, behind the spool of spool.ts). Its own small pool, so ingest never
 * takes the connections that toggles need.
 *
 * Why one partition per UTC day (`events_dYYYYMMDD`, range on `ts`): a series
 * only touches the days of its window (partition pruning, also for bound
 * parameters), each day's index stays small and hot, and retention becomes
 * cheap: a project's old rows go day by day in bounded DELETEs, and days past
 * every retention (400 days) are dropped whole instead of vacuumed row by
 * row. Partitions are made on demand, in their own short transaction under
 * an advisory lock with IF NOT EXISTS, so concurrent servers never race and
 * the DDL (which locks the parent) never sits inside a data transaction
 * that holds row locks (that could deadlock two servers). Tomorrow's
 * partition is made with today's, so midnight does not stall ingest.
 *
 * Why group commit: `append` only queues; one flush at a time writes
 * everything queued since the last one in ONE transaction (unnest of arrays:
 * six bound parameters whatever the row count, in chunks of 10,000 rows),
 * with the hourly roll-up upserts aggregated in memory first (one row per
 * project/name/hour) and the daily units deduplicated first. A commit (and
 * its WAL flush) costs the same for one row or ten thousand, so under load
 * many requests share it; keys are written in sorted order so two servers
 * upserting the same hours cannot deadlock.
 *
 * Text PostgreSQL cannot hold (U+0000, lone surrogates) is replaced by U+FFFD
 * in rows and in query parameters alike, so one odd row never fails the batch
 * it shares a commit with (nor blocks a spool forever).
 *
 * Experiments: each unit's first exposure is kept in `experiment_exposures`
 * (one row per project, experiment and unit; the earliest ts, see
 * `exposureOf`), upserted in the same transaction as the raw rows (deduped
 * in memory, sorted keys). Analysis is then one set-based statement: the
 * metric's events of the window (pruned to its day partitions, the hour
 * index) hash-joined to the experiment's exposures, aggregated per unit and
 * per variant (see experimentSql). No index on events by unit: that would be
 * one more random index insert for every ingested row.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const INSERT_CHUNK = 10_000;
/** Whole day partitions older than this are dropped by `prune` (longer than any retention). */
export const PARTITION_DROP_DAYS = 400;
/** Largest `ts` accepted: the end of year 9999 (a day partition needs a date). */
const MAX_TS = 253_402_300_799_999;
const DDL_LOCK = "svc:eventstore:ddl";

const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS events (project_id text NOT NULL, name text NOT NULL, ts bigint NOT NULL, unit_id text, value double precision, props jsonb) PARTITION BY RANGE (ts)",
  // Keyed by the hour, not the exact time: within a key, entries follow heap order (arrival), so new rows append
  // instead of landing among the last seconds' rows on a random page (events arrive a few seconds out of order).
  "CREATE INDEX IF NOT EXISTS events_by_name_hour ON events (project_id, name, (ts / 3600000))",
  "CREATE TABLE IF NOT EXISTS event_hourly (project_id text NOT NULL, name text NOT NULL, hour bigint NOT NULL, n bigint NOT NULL, total double precision NOT NULL, PRIMARY KEY (project_id, name, hour))",
  "CREATE TABLE IF NOT EXISTS event_units_daily (project_id text NOT NULL, name text NOT NULL, day bigint NOT NULL, unit_id text NOT NULL, PRIMARY KEY (project_id, name, day, unit_id))",
  "CREATE TABLE IF NOT EXISTS experiment_exposures (project_id text NOT NULL, experiment_id text NOT NULL, unit_id text NOT NULL, variant text NOT NULL, first_ts bigint NOT NULL, PRIMARY KEY (project_id, experiment_id, unit_id))",
];

const INSERT_EVENTS =
  "INSERT INTO events (project_id, name, ts, unit_id, value, props) SELECT p, n, t, u, v, CAST(x AS jsonb) FROM unnest(CAST($1 AS text[]), CAST($2 AS text[]), CAST($3 AS bigint[]), CAST($4 AS text[]), CAST($5 AS double precision[]), CAST($6 AS text[])) AS r (p, n, t, u, v, x)";
const UPSERT_HOURLY =
  "INSERT INTO event_hourly (project_id, name, hour, n, total) SELECT * FROM unnest(CAST($1 AS text[]), CAST($2 AS text[]), CAST($3 AS bigint[]), CAST($4 AS bigint[]), CAST($5 AS double precision[])) ON CONFLICT (project_id, name, hour) DO UPDATE SET n = event_hourly.n + excluded.n, total = event_hourly.total + excluded.total";
const INSERT_UNITS =
  "INSERT INTO event_units_daily (project_id, name, day, unit_id) SELECT * FROM unnest(CAST($1 AS text[]), CAST($2 AS text[]), CAST($3 AS bigint[]), CAST($4 AS text[])) ON CONFLICT DO NOTHING";
// The first exposure wins: the earliest ts, on a tie the smaller variant (byte order, as SQLite compares).
const UPSERT_EXPOSURES =
  'INSERT INTO experiment_exposures (project_id, experiment_id, unit_id, variant, first_ts) SELECT * FROM unnest(CAST($1 AS text[]), CAST($2 AS text[]), CAST($3 AS text[]), CAST($4 AS text[]), CAST($5 AS bigint[])) ON CONFLICT (project_id, experiment_id, unit_id) DO UPDATE SET variant = excluded.variant, first_ts = excluded.first_ts WHERE excluded.first_ts < experiment_exposures.first_ts OR (excluded.first_ts = experiment_exposures.first_ts AND excluded.variant COLLATE "C" < experiment_exposures.variant COLLATE "C")';
const EXPOSURE_COUNTS =
  'SELECT variant, COUNT(*) AS n, MIN(first_ts) AS lo, MAX(first_ts) AS hi FROM experiment_exposures WHERE project_id = $1 AND experiment_id = $2 GROUP BY variant ORDER BY variant COLLATE "C"';
// The units first exposed in [$3, $4), and all of them (see ExposureCounts), in one walk.
const INSIDE = "first_ts >= CAST($3 AS bigint) AND first_ts < CAST($4 AS bigint)";
const EXPOSURE_COUNTS_IN_WINDOW = `SELECT variant, COUNT(*) FILTER (WHERE ${INSIDE}) AS n, MIN(first_ts) FILTER (WHERE ${INSIDE}) AS lo, MAX(first_ts) FILTER (WHERE ${INSIDE}) AS hi, COUNT(*) AS "all" FROM experiment_exposures WHERE project_id = $1 AND experiment_id = $2 GROUP BY variant ORDER BY variant COLLATE "C"`;
const COUNTS_BY_NAME =
  "SELECT name, SUM(CASE WHEN hour >= CAST($2 AS bigint) THEN n ELSE 0 END) AS day, SUM(n) AS week FROM event_hourly WHERE project_id = $1 AND hour >= CAST($3 AS bigint) GROUP BY name";
// A page of one name's newest events, walking the hour index backwards. The tie-break is the row's ctid: a ts
// lies in one day partition, so (ts, ctid) names one row; events are never updated, so a ctid does not move.
const RECENT_COLUMNS = "SELECT ts, unit_id, value, props, CAST(ctid AS text) AS tie FROM events WHERE project_id = $1 AND name = $2";
const RECENT_ORDER = "ORDER BY (ts / 3600000) DESC, ts DESC, ctid DESC LIMIT $3";
const RECENT_FIRST = `${RECENT_COLUMNS} ${RECENT_ORDER}`;
const RECENT_AFTER = `${RECENT_COLUMNS} AND (ts / 3600000) <= CAST($4 AS bigint) AND (ts < CAST($5 AS bigint) OR (ts = CAST($5 AS bigint) AND ctid < CAST($6 AS tid))) ${RECENT_ORDER}`;
const LIST_PARTITIONS = "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = CAST('events' AS regclass)";

type Waiter = { rows: EventRow[]; resolve: () => void; reject: (err: unknown) => void };
type Deadline = { expired: boolean };
const NO_DEADLINE: Deadline = { expired: false };

/** Rows a store can take: refused up front (that call only), so they never fail a shared commit. */
export function checkRows(rows: EventRow[]): void {
  for (const r of rows) {
    if (!Number.isInteger(r.ts) || r.ts < 0 || r.ts > MAX_TS) throw new RangeError(`event ts ${r.ts} is not epoch milliseconds between 1970 and 9999`);
    if (r.value !== null && typeof r.value !== "number") throw new TypeError("event value must be a number or null");
  }
}

const ODD_TEXT = /[\u0000\uD800-\uDFFF]/;
/** Text PostgreSQL can store: U+0000 and lone surrogates become U+FFFD. */
export function pgText(s: string): string {
  return ODD_TEXT.test(s) ? s.toWellFormed().replaceAll("\u0000", "\uFFFD") : s;
}
function propsJson(props: EventRow["props"]): string | null {
  if (!props) return null;
  const json = JSON.stringify(props);
  if (!/\\u0000|\\ud[89a-f]/i.test(json)) return json;
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props)) clean[pgText(k)] = typeof v === "string" ? pgText(v) : v;
  return JSON.stringify(clean);
}

/** `events_d20250131` for the UTC day starting at `dayMs`. */
export function partitionName(dayMs: number): string {
  return `events_d${new Date(dayMs).toISOString().slice(0, 10).replaceAll("-", "")}`;
}
function partitionDay(name: string): number | undefined {
  const m = /^events_d(\d{4})(\d{2})(\d{2})$/.exec(name);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : undefined;
}

const OPS = { eq: "=", neq: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/** One filter, typed by its value: a property of another type (or absent) never matches, and never fails the query. */
function filterSql(f: PropertyFilter, params: unknown[]): string {
  params.push(pgText(f.property));
  const p = `$${params.length}`;
  const op = OPS[f.op];
  if (typeof f.value === "number") {
    params.push(f.value);
    return `CASE WHEN jsonb_typeof(props -> CAST(${p} AS text)) = 'number' THEN CAST(props ->> CAST(${p} AS text) AS double precision) END ${op} CAST($${params.length} AS double precision)`;
  }
  // Booleans compare as the text 'true'/'false' (which orders false < true, as SQLite's 0/1 do); strings byte-wise (COLLATE "C", as SQLite).
  const type = typeof f.value === "boolean" ? "boolean" : "string";
  params.push(typeof f.value === "boolean" ? String(f.value) : pgText(f.value));
  return `CASE WHEN jsonb_typeof(props -> CAST(${p} AS text)) = '${type}' THEN props ->> CAST(${p} AS text) END COLLATE "C" ${op} CAST($${params.length} AS text)`;
}

/** The statement of one series (fixed text per shape: names and values are bound) and its parameters. */
export function seriesSql(q: SeriesQuery): { sql: string; params: unknown[] } {
  const m: Measure = q.measure;
  const plan = rollupPlan(q);
  const params: unknown[] = [q.from, q.bucket, pgText(q.projectId), pgText(m.event)];
  // $5: the end of the window, in seconds for the roll-ups; the raw plan binds both ends in milliseconds as $5 and $6.
  if (plan !== "raw") params.push(q.to);
  if (plan === "hourly") {
    const v = m.kind === "count" ? "CAST(SUM(n) AS double precision)" : "SUM(total)";
    const sql = `SELECT (hour - CAST($1 AS bigint)) / CAST($2 AS bigint) AS b, ${v} AS v FROM event_hourly WHERE project_id = $3 AND name = $4 AND hour >= CAST($1 AS bigint) AND hour < CAST($5 AS bigint) GROUP BY ${q.bucket === 3600 ? "hour" : "b"}`;
    return { sql, params };
  }
  if (plan === "daily-units") {
    const v = q.bucket === 86400 ? "COUNT(*)" : "COUNT(DISTINCT unit_id)";
    const sql = `SELECT (day - CAST($1 AS bigint)) / CAST($2 AS bigint) AS b, CAST(${v} AS double precision) AS v FROM event_units_daily WHERE project_id = $3 AND name = $4 AND day >= CAST($1 AS bigint) AND day < CAST($5 AS bigint) GROUP BY ${q.bucket === 86400 ? "day" : "b"}`;
    return { sql, params };
  }
  params.push(q.from * 1000, q.to * 1000, Math.floor(q.from / 3600), Math.floor((q.to * 1000 - 1) / 3_600_000));
  let aggregate: string;
  if (m.kind === "count") aggregate = "CAST(COUNT(*) AS double precision)";
  else if (m.kind === "unique") aggregate = "CAST(COUNT(DISTINCT unit_id) AS double precision)";
  else if (m.property === undefined) aggregate = "SUM(value)";
  else {
    params.push(pgText(m.property));
    const p = `CAST($${params.length} AS text)`;
    aggregate = `SUM(CASE WHEN jsonb_typeof(props -> ${p}) = 'number' THEN CAST(props ->> ${p} AS double precision) END)`;
  }
  const where = m.filters.map((f) => ` AND ${filterSql(f, params)}`).join("");
  const sql = `SELECT (ts / 1000 - CAST($1 AS bigint)) / CAST($2 AS bigint) AS b, ${aggregate} AS v FROM events WHERE project_id = $3 AND name = $4 AND ts / 3600000 BETWEEN CAST($7 AS bigint) AND CAST($8 AS bigint) AND ts >= CAST($5 AS bigint) AND ts < CAST($6 AS bigint)${where} GROUP BY b`;
  return { sql, params };
}

/** One measure's value per unit (double precision) over the rows where `cond` holds (all rows when empty). */
function unitValue(m: Measure, cond: string[], params: unknown[], exact = false): string {
  const filter = cond.length ? ` FILTER (WHERE ${cond.join(" AND ")})` : "";
  if (m.kind === "count") return `CAST(COUNT(*)${filter} AS ${exact ? "numeric" : "double precision"})`;
  if (m.kind === "unique") return cond.length ? `CASE WHEN COUNT(*)${filter} > 0 THEN 1.0 ELSE 0.0 END` : "1.0";
  let v = "e.value";
  if (m.property !== undefined) {
    params.push(pgText(m.property));
    const p = `CAST($${params.length} AS text)`;
    v = `CASE WHEN jsonb_typeof(e.props -> ${p}) = 'number' THEN CAST(e.props ->> ${p} AS double precision) END`;
  }
  return `COALESCE(SUM(${exact ? `CAST(${v} AS numeric)` : v})${filter}, 0)`;
}

const PG_DIALECT: ExperimentDialect = {
  param: (n) => `$${n}`,
  text: pgText,
  filter: (f, params) => `(${filterSql(f, params)})`,
  unitValue,
  // Not a range: under a database's linguistic collation punctuation may not order bytewise. `end` stays bound, unused.
  namePrefix: (prefix, end) => `starts_with(e.name, ${prefix}) AND ${end}::text IS NOT NULL`,
  sum: "SUM",
};

/** The same, in exact arithmetic (numeric): what experimentStats falls back on when double precision overflows. */
const PG_EXACT_DIALECT: ExperimentDialect = { ...PG_DIALECT, unitValue: (m, cond, params) => unitValue(m, cond, params as unknown[], true) };

/**
 * The statement of an experiment's per-variant sums, everything bound:
 * 1. `u`: the metric's events of the window (from `from − preMs` with a
 *    pre-period; partition pruning and the hour index), joined to the
 *    experiment's first exposures (a hash join: the planner builds the hash
 *    from the smaller side), kept from `first − preMs` (or `first`), one row
 *    per unit: X (and Y, and the pre-period X);
 * 2. `k`: per variant, the means of u's columns, the shifts the
 *    second-order sums are about (VariantStats says why; `u` is
 *    materialized, so computed once for both);
 * 3. per variant: `n` from the exposures themselves (units without outcome
 *    events count, as 0), joined to the sums from `u` about `k`.
 * `exact` computes in numeric: double precision arithmetic in PostgreSQL
 * raises an error on overflow (values from about 1.3e154 square past it)
 * where SQLite answers Infinity, and the analysis must answer null with a
 * warning, not fail.
 */
export function experimentSql(q: ExperimentStatsQuery, exact = false): { sql: string; params: unknown[] } {
  const { params, names, where, columns, shifts, sums } = experimentParts(q, exact ? PG_EXACT_DIALECT : PG_DIALECT);
  const sql =
    `WITH u AS MATERIALIZED (SELECT x.variant AS variant, ${columns.join(", ")} FROM events AS e JOIN experiment_exposures AS x ON x.unit_id = e.unit_id` +
    ` WHERE e.project_id = $1 AND ${names} AND e.ts / 3600000 BETWEEN CAST($6 AS bigint) AND CAST($7 AS bigint) AND e.ts >= CAST($5 AS bigint) AND e.ts < CAST($4 AS bigint)` +
    where.map((w) => ` AND ${w}`).join("") +
    " AND x.project_id = $1 AND x.experiment_id = $2 AND x.first_ts >= CAST($3 AS bigint) AND x.first_ts < CAST($4 AS bigint) AND e.ts >= x.first_ts - CAST($8 AS bigint) GROUP BY x.unit_id, x.variant), " +
    `k AS (SELECT variant, ${shifts.join(", ")} FROM u GROUP BY variant)` +
    ` SELECT c.variant AS variant, c.n AS n, ${["m", "kx", "ky", "kp", ...SUM_COLUMNS].map((col) => `a.${col} AS ${col}`).join(", ")} FROM (` +
    "SELECT variant, COUNT(*) AS n FROM experiment_exposures WHERE project_id = $1 AND experiment_id = $2 AND first_ts >= CAST($3 AS bigint) AND first_ts < CAST($4 AS bigint) GROUP BY variant" +
    `) AS c LEFT JOIN (SELECT u.variant AS variant, ${sums.join(", ")} FROM u JOIN k ON k.variant = u.variant GROUP BY u.variant) AS a ON a.variant = c.variant ORDER BY c.variant COLLATE "C"`;
  return { sql, params };
}

/** Could not reach the server at all (refused, DNS, TLS, authentication, no such database): 503 rather than 502. */
export function isUnreachable(err: unknown): boolean {
  if (isPostgresUnavailable(err)) return true;
  const e = err as { code?: unknown; errno?: unknown } | null;
  if (typeof e?.code === "string" && /^(ERR_POSTGRES_(CONNECTION|TLS|AUTHENTICATION|UNSUPPORTED_AUTHENTICATION|SASL|INVALID_SERVER)|ECONN|ENOTFOUND|EHOSTUNREACH|ENETUNREACH)/.test(e.code)) return true;
  return typeof e?.errno === "string" && (e.errno.startsWith("28") || e.errno === "3D000");
}

export type PostgresEventStoreOptions = { upstream?: boolean; poolSize?: number; timeoutMs?: number };

export class PostgresEventStore implements EventStore {
  readonly kind: "postgres" | "upstream";
  readonly location: string;
  private readonly sql: SQL;
  private readonly upstream: boolean;
  private readonly timeoutMs: number;
  private readonly connectMs: number;
  private readyPromise: Promise<void> | undefined;
  /** Day starts (ms) whose partition is known to exist. */
  private readonly partitions = new Set<number>();
  private queue: Waiter[] = [];
  private scheduled = false;
  private flushing: Promise<void> | undefined;
  private closed = false;

  constructor(url: string, options: PostgresEventStoreOptions = {}) {
    this.upstream = options.upstream ?? false;
    this.kind = this.upstream ? "upstream" : "postgres";
    this.location = redactUrl(url);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.connectMs = Math.min(this.timeoutMs, 5000);
    this.sql = new Bun.SQL({
      url,
      max: options.poolSize ?? 4,
      idleTimeout: 60,
      connectionTimeout: this.upstream ? Math.max(1, Math.ceil(this.connectMs / 1000)) : 10,
      // An upstream answers within timeoutMs or the server cancels the statement (and rolls its transaction back).
      ...(this.upstream ? { connection: { statement_timeout: this.timeoutMs, idle_in_transaction_session_timeout: this.timeoutMs } } : {}),
    });
  }

  /** Creates the tables if missing (once; retried by the next call after a failure) and learns the partitions. */
  ready(): Promise<void> {
    this.readyPromise ??= this.init().catch((err) => {
      this.readyPromise = undefined;
      throw err;
    });
    return this.readyPromise;
  }

  private async init(): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [DDL_LOCK]);
      for (const ddl of SCHEMA) await tx.unsafe(ddl);
    });
    await this.loadPartitions();
  }

  private async loadPartitions(): Promise<{ name: string; day: number }[]> {
    const found: { name: string; day: number }[] = [];
    this.partitions.clear();
    for (const { name } of (await this.sql.unsafe(LIST_PARTITIONS)) as { name: string }[]) {
      const day = partitionDay(name);
      if (day === undefined) continue;
      this.partitions.add(day);
      found.push({ name, day });
    }
    return found.sort((a, b) => a.day - b.day);
  }

  /** Makes the missing day partitions (and tomorrow's, with today's) in a short DDL transaction of their own. */
  private async ensurePartitions(days: Set<number>): Promise<void> {
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    if (days.has(today)) days.add(today + DAY_MS);
    const missing = [...days].filter((d) => !this.partitions.has(d)).sort((a, b) => a - b);
    if (missing.length === 0) return;
    await this.sql.begin(async (tx) => {
      await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [DDL_LOCK]);
      for (const day of missing) {
        // Integers and a name made of digits: nothing here comes from a request as text.
        await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF events FOR VALUES FROM (${day}) TO (${day + DAY_MS})`);
      }
    });
    for (const day of missing) this.partitions.add(day);
  }

  append(rows: EventRow[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error("event store closed"));
    try {
      checkRows(rows);
    } catch (err) {
      return Promise.reject(err);
    }
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ rows, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = undefined;
        if (this.queue.length > 0) this.schedule();
      });
    });
  }

  /** Writes everything queued in one transaction; every waiting call resolves after COMMIT, or all reject. */
  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    try {
      await this.guard("append", (deadline) => this.write(batch, deadline));
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (const w of batch) w.resolve();
  }

  private async write(batch: Waiter[], deadline: Deadline): Promise<void> {
    await this.ready();
    const cols: unknown[][] = [[], [], [], [], [], []];
    const hours = new Map<string, [string, string, number, number, number]>();
    const units = new Map<string, [string, string, number, string]>();
    const exposures = new Map<string, FirstExposure>();
    const days = new Set<number>();
    for (const { rows } of batch) {
      for (const r of rows) {
        const p = pgText(r.projectId);
        const n = pgText(r.name);
        const u = r.unitId === null ? null : pgText(r.unitId);
        const row = [p, n, r.ts, u, r.value, propsJson(r.props)];
        for (let c = 0; c < 6; c++) cols[c]!.push(row[c]);
        days.add(Math.floor(r.ts / DAY_MS) * DAY_MS);
        const hour = Math.floor(r.ts / HOUR_MS) * 3600;
        const hk = `${p}\u0000${n}\u0000${hour}`;
        const agg = hours.get(hk) ?? hours.set(hk, [p, n, hour, 0, 0]).get(hk)!;
        agg[3]++;
        agg[4] += r.value ?? 0;
        if (u !== null) {
          const day = Math.floor(r.ts / DAY_MS) * 86400;
          units.set(`${p}\u0000${n}\u0000${day}\u0000${u}`, [p, n, day, u]);
        }
        if (r.name.startsWith(EXPOSURE_PREFIX)) noteExposure(exposures, r, pgText);
      }
    }
    // Sorted keys: two servers upserting the same roll-up rows lock them in the same order (no deadlock).
    const hourRows = [...hours.keys()].sort().map((k) => hours.get(k)!);
    const hourCols = [hourRows.map((x) => x[0]), hourRows.map((x) => x[1]), hourRows.map((x) => x[2]), hourRows.map((x) => x[3]), hourRows.map((x) => x[4])];
    const unitRows = [...units.keys()].sort().map((k) => units.get(k)!);
    const unitCols = [unitRows.map((u) => u[0]), unitRows.map((u) => u[1]), unitRows.map((u) => u[2]), unitRows.map((u) => u[3])];
    const exposureRows = [...exposures.keys()].sort().map((k) => exposures.get(k)!);
    const exposureCols = [0, 1, 2, 3, 4].map((c) => exposureRows.map((x) => x[c]));

    for (let attempt = 0; ; attempt++) {
      await this.ensurePartitions(new Set(days));
      try {
        await this.sql.begin(async (tx) => {
          for (let i = 0; i < cols[0].length; i += INSERT_CHUNK) {
            if (deadline.expired) throw new Error("timed out");
            await tx.unsafe(INSERT_EVENTS, cols.map((c) => (cols[0].length <= INSERT_CHUNK ? c : c.slice(i, i + INSERT_CHUNK))));
          }
          await tx.unsafe(UPSERT_HOURLY, hourCols);
          if (unitRows.length > 0) await tx.unsafe(INSERT_UNITS, unitCols);
          if (exposureRows.length > 0) await tx.unsafe(UPSERT_EXPOSURES, exposureCols);
          // Past the deadline the caller has been told "failed": roll back rather than commit behind its back.
          if (deadline.expired) throw new Error("timed out");
        });
        return;
      } catch (err) {
        const code = (err as { errno?: unknown }).errno;
        // 23514: a partition we thought existed was dropped (by another server's prune): learn again, retry once.
        if (code === "23514" && attempt === 0) {
          await this.loadPartitions();
          continue;
        }
        if (code === "40P01" && attempt < 3) continue;
        throw err;
      }
    }
  }

  series(q: SeriesQuery): Promise<SeriesResult> {
    return this.guard("series", async () => {
      await this.ready();
      const { sql, params } = seriesSql(q);
      const found = (await this.sql.unsafe(sql, params)) as { b: number | string; v: number | string | null }[];
      return { sql, rows: bucketRows(q, found) };
    });
  }

  experimentStats(q: ExperimentStatsQuery): Promise<{ sql: string; variants: VariantStats[] }> {
    return this.guard("experiment stats", async () => {
      await this.ready();
      const run = (exact: boolean) => {
        const { sql, params } = experimentSql(q, exact);
        return this.sql
          .begin(async (tx) => {
            // Settings of this transaction only. A plan for these values: a generic plan (what a prepared statement
            // switches to after five runs) cannot prune partitions by the window nor size the join, and took 9 s instead
            // of 1.4. No nested loop: a property filter's selectivity is a guess (0.5%), and on 400k matching events the
            // per-event index lookups took twice the hash join's time; with few events both are instant. No JIT:
            // compiling cost more than it saved.
            await tx.unsafe("SELECT set_config('plan_cache_mode', 'force_custom_plan', true), set_config('enable_nestloop', 'off', true), set_config('jit', 'off', true)");
            return (await tx.unsafe(sql, params)) as VariantStatsRow[];
          })
          .then((found) => ({ sql, found }));
      };
      let answer: { sql: string; found: VariantStatsRow[] };
      try {
        answer = await run(false);
      } catch (err) {
        // 22003 numeric_value_out_of_range: a sum or square past double precision. Once more in numeric, whose sums
        // come back as text, and past a double's range as Infinity: the statistics then answer null with a warning.
        if ((err as { errno?: unknown } | null)?.errno !== "22003") throw err;
        answer = await run(true);
      }
      return { sql: answer.sql, variants: answer.found.map((row) => variantStatsOf(row, q.measures.length === 2, q.preMs !== undefined)) };
    });
  }

  exposureCounts(projectId: string, experimentId: string, window?: ExposureWindow): Promise<ExposureCounts> {
    return this.guard("exposure counts", async () => {
      await this.ready();
      if (!window) return countsOf(await this.sql.unsafe(EXPOSURE_COUNTS, [pgText(projectId), pgText(experimentId)]));
      return countsOf(await this.sql.unsafe(EXPOSURE_COUNTS_IN_WINDOW, [pgText(projectId), pgText(experimentId), window.from, window.to]), true);
    });
  }

  countsByName(q: NameCountsQuery): Promise<NameCounts[]> {
    return this.guard("event counts", async () => {
      await this.ready();
      const found = (await this.sql.unsafe(COUNTS_BY_NAME, [pgText(q.projectId), q.daySince, q.weekSince])) as { name: string; day: number | string; week: number | string }[];
      return found.map((r) => ({ name: r.name, day: Number(r.day), week: Number(r.week) }));
    });
  }

  recent(q: RecentQuery): Promise<RecentPage> {
    return this.guard("recent events", async () => {
      await this.ready();
      // One more than the page: whether an older page exists.
      const base = [pgText(q.projectId), pgText(q.name), q.limit + 1];
      const found = (await (q.before
        ? this.sql.unsafe(RECENT_AFTER, [...base, Math.floor(q.before.ts / HOUR_MS), q.before.ts, q.before.tie])
        : this.sql.unsafe(RECENT_FIRST, base))) as { ts: number | string; unit_id: string | null; value: number | null; props: unknown; tie: string }[];
      const more = found.length > q.limit;
      if (more) found.length = q.limit;
      const events = found.map((r) => ({ ts: Number(r.ts), unitId: r.unit_id, value: r.value === null ? null : Number(r.value), props: propsOf(r.props) }));
      const last = found.at(-1);
      return { events, next: last && more ? { ts: Number(last.ts), tie: last.tie } : null };
    });
  }

  prune(options: { projectId: string; rawBefore: number; rollupsBefore?: number }): Promise<number> {
    // Each statement is bounded (one day of one project); the whole may take longer than one query's budget.
    return this.guard(
      "prune",
      async () => {
        await this.ready();
        const parts = await this.loadPartitions();
        let removed = 0;
        for (const { name, day } of parts) {
          if (day >= options.rawBefore) break;
          const res = await this.sql.unsafe(`DELETE FROM ${name} WHERE project_id = $1 AND ts < CAST($2 AS bigint)`, [pgText(options.projectId), options.rawBefore]);
          removed += res.count ?? 0;
        }
        const rawDay = Math.floor(options.rawBefore / DAY_MS) * 86400;
        await this.sql.unsafe("DELETE FROM event_units_daily WHERE project_id = $1 AND day < CAST($2 AS bigint)", [pgText(options.projectId), rawDay]);
        // First exposures past retention go with their raw events (a unit exposed again later then counts from then), in bounded slices.
        for (;;) {
          const res = await this.sql.unsafe(
            "DELETE FROM experiment_exposures WHERE ctid = ANY (ARRAY (SELECT ctid FROM experiment_exposures WHERE project_id = $1 AND first_ts < CAST($2 AS bigint) LIMIT 20000))",
            [pgText(options.projectId), options.rawBefore],
          );
          if ((res.count ?? 0) < 20000) break;
        }
        if (options.rollupsBefore !== undefined) {
          await this.sql.unsafe("DELETE FROM event_hourly WHERE hour < CAST($1 AS bigint)", [Math.floor(options.rollupsBefore / 1000)]);
        }
        const dropBefore = Math.floor(Date.now() / DAY_MS) * DAY_MS - PARTITION_DROP_DAYS * DAY_MS;
        const old = parts.filter((p) => p.day + DAY_MS <= dropBefore);
        if (old.length > 0) {
          await this.sql.begin(async (tx) => {
            await tx.unsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [DDL_LOCK]);
            for (const p of old) await tx.unsafe(`DROP TABLE IF EXISTS ${p.name}`);
          });
          for (const p of old) this.partitions.delete(p.day);
        }
        return removed;
      },
      this.timeoutMs * 30,
    );
  }

  /**
   * Upstream only: races `fn` with a timer (a backstop for a silent network;
   * the server's statement_timeout cancels slow statements) and maps every
   * failure to UpstreamError. Otherwise errors pass through untouched.
   */
  private async guard<T>(what: string, fn: (deadline: Deadline) => Promise<T>, budgetMs = this.timeoutMs + this.connectMs): Promise<T> {
    if (!this.upstream) return fn(NO_DEADLINE);
    const deadline: Deadline = { expired: false };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        deadline.expired = true;
        reject(new UpstreamError("failed", `analytics upstream ${this.location}: ${what} got no answer within ${budgetMs} ms`));
      }, budgetMs);
    });
    try {
      return await Promise.race([fn(deadline), timeout]);
    } catch (err) {
      if (err instanceof UpstreamError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      if (isUnreachable(err)) throw new UpstreamError("unreachable", `analytics upstream ${this.location} is unreachable: ${message}`);
      throw new UpstreamError("failed", `analytics upstream ${this.location}: ${what} failed: ${message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // What was queued before close is still written.
    while (this.flushing || this.scheduled || this.queue.length > 0) {
      if (this.flushing) await this.flushing;
      else if (this.queue.length > 0 && !this.scheduled) this.schedule();
      else await new Promise((r) => setImmediate(r));
    }
    await this.sql.close({ timeout: 5 });
  }
}
