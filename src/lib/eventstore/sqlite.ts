import { Database, type Statement } from "bun:sqlite";
import { availableParallelism } from "node:os";
import { preparePrivateFile } from "../store/sqlite";
import { WalCheckpointer } from "../store/checkpointer";
import {
  type EventRow,
  type EventStore,
  type ExperimentStatsQuery,
  type ExposureCounts,
  type FirstExposure,
  type ManyExperimentsQuery,
  type ManyExperimentsResult,
  type Measure,
  type PropertyFilter,
  type SeriesQuery,
  type SeriesResult,
  type VariantStats,
  type ExposureWindow,
  SUM_COLUMNS,
  addShiftedRows,
  type VariantStatsRow,
  EXPOSURE_PREFIX,
  countsOf,
  noteExposure,
  variantStatsOf,
} from "./types";
import { manyCountsSql, manyMetricSql, mergeMany } from "./sqlite-many";
import { type ExperimentDialect, bucketRows, experimentParts, namePrefix, rollupPlan } from "./plan";

/**
 * The embedded event store: its own SQLite file (`<data>/events.db`) beside
 * `service.db`, so heavy ingest holds its own write lock and never makes a
 * toggle wait.
 *
 * Durability: WAL with synchronous=NORMAL. A committed transaction is in the
 * WAL file (written with write(2)) before `append` resolves, so it survives a
 * SIGKILL of the process; only a power cut can lose the last commits, which
 * is the trade every WAL/NORMAL database makes.
 *
 * Group commit: `append` queues its rows and one transaction per tick writes
 * everything queued, then resolves every waiting call. Under load a
 * transaction carries many requests, so the per-commit cost is shared.
 *
 * The raw index is keyed by the hour, not the exact time: within one
 * (project, name, hour) its entries follow the rowid, i.e. arrival order, so
 * new rows append at the end of their hour instead of landing on a random
 * page among the last seconds' rows (events arrive a few seconds out of
 * order). Keyed by `ts`, every row dirtied its own page: 7 KB written per
 * row and a third of the ingest throughput. Raw series narrow by hour
 * through the index and by `ts` within it.
 *
 * Roll-ups are kept in the same transaction as the raw rows: an hourly
 * count/sum per event name, and the set of units per event per UTC day.
 * Series over aligned windows read those (a 30-day hourly series reads 720
 * rows instead of millions).
 *
 * Experiments: each unit's first exposure (`$exposure:<id>`, see
 * `exposureOf`) is kept in `experiment_exposures`, upserted in the same
 * transaction, keyed (project, experiment, unit) WITHOUT ROWID. An analysis
 * needs, for every outcome event, the exposure of its unit: with that table
 * it scans only the metric's events of the window through the hour index,
 * sorts them by unit and looks each unit up in the exposures in that order,
 * then groups per unit and per variant (see experimentSql and the costs
 * below). The alternative, an index on events
 * by unit, would be one more random B-tree insert per ingested row (every
 * event, not only exposures) and would cost ingest the throughput the hour
 * key exists for; the table costs one primary-key upsert per exposure (once
 * per unit and batch; plus its variant index, which counts a variant's
 * units without a sort) and a prefix check per row. See experimentSql.
 *
 * What that costs, measured (bench/experiments.ts: 1M exposed units, 1.2M
 * purchase events in the window): SQLite has no hash join nor hash
 * aggregate. Looked up in event order, every event costs a random descent of
 * the exposures' B-tree (about 2 µs, integer keys or not: the pages are in
 * memory, the time goes to walking them) and a place in the per-unit GROUP
 * BY sort (about 1 µs): a count took 3.6 s on one thread. Sorted by unit
 * first (experimentSql), the same lookups walk the tree forward (about
 * 0.6 µs) and the rows arrive grouped: one sort per event instead, 2.6 s on
 * one thread. An index on events by unit is ruled out above, mmap gained
 * nothing measurable, and a hash join in JavaScript took 1.7 to 2.4 s and
 * 100 MB with rows pulled out of SQL. So an analysis runs in worker threads
 * (AnalysisPool), one slice of the units per CPU (up to 4): on two idle
 * cores a count takes about 1.3 s, a CUPED sum 1.6 s and a ratio over two
 * event names (2.7M events) 2.5 s; and the server's event loop (ingest
 * first) stays free for however long it takes. Slices only when no other
 * analysis is in flight; beside others (the rollout monitor's many small
 * ones) each runs whole on the least busy worker.
 *
 * Many experiments at once (the rollout monitor: a unit is in every rollout
 * of its project) use the unit-first index `experiment_exposures_by_unit`:
 * one seek finds all of a unit's exposures side by side, and the units per
 * variant that triggers keep (EXPOSURE_COUNTS_SCHEMA; sqlite-many.ts). A new
 * first exposure so costs two more B-tree writes; ingest of ordinary events
 * is untouched. A file made before them gets both when opened (one pass over
 * the exposures each).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (project_id TEXT NOT NULL, name TEXT NOT NULL, hour INTEGER NOT NULL, ts INTEGER NOT NULL, unit_id TEXT, value REAL, props TEXT) STRICT;
CREATE INDEX IF NOT EXISTS events_by_name_hour ON events (project_id, name, hour);
CREATE TABLE IF NOT EXISTS event_hourly (project_id TEXT NOT NULL, name TEXT NOT NULL, hour INTEGER NOT NULL, n INTEGER NOT NULL, total REAL NOT NULL, PRIMARY KEY (project_id, name, hour)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS event_units_daily (project_id TEXT NOT NULL, name TEXT NOT NULL, day INTEGER NOT NULL, unit_id TEXT NOT NULL, PRIMARY KEY (project_id, name, day, unit_id)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS experiment_exposures (project_id TEXT NOT NULL, experiment_id TEXT NOT NULL, unit_id TEXT NOT NULL, variant TEXT NOT NULL, first_ts INTEGER NOT NULL, PRIMARY KEY (project_id, experiment_id, unit_id)) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS experiment_exposures_by_variant ON experiment_exposures (project_id, experiment_id, variant, first_ts);
CREATE INDEX IF NOT EXISTS experiment_exposures_by_unit ON experiment_exposures (project_id, unit_id, experiment_id, first_ts, variant);
`;

/**
 * Units per experiment and variant, kept by triggers on `experiment_exposures` (a first exposure that moves to
 * another variant moves its count; pruned exposures leave it): the rollout monitor counts each rollout's groups
 * every minute, and walking the variant index for that cost about a third of its round (sqlite-many.ts).
 */
const EXPOSURE_COUNTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS experiment_exposure_counts (project_id TEXT NOT NULL, experiment_id TEXT NOT NULL, variant TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (project_id, experiment_id, variant)) STRICT, WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS experiment_exposures_counted_insert AFTER INSERT ON experiment_exposures BEGIN
  INSERT INTO experiment_exposure_counts (project_id, experiment_id, variant, n) VALUES (NEW.project_id, NEW.experiment_id, NEW.variant, 1)
    ON CONFLICT (project_id, experiment_id, variant) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS experiment_exposures_counted_update AFTER UPDATE OF variant ON experiment_exposures WHEN OLD.variant IS NOT NEW.variant BEGIN
  UPDATE experiment_exposure_counts SET n = n - 1 WHERE project_id = OLD.project_id AND experiment_id = OLD.experiment_id AND variant = OLD.variant;
  INSERT INTO experiment_exposure_counts (project_id, experiment_id, variant, n) VALUES (NEW.project_id, NEW.experiment_id, NEW.variant, 1)
    ON CONFLICT (project_id, experiment_id, variant) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS experiment_exposures_counted_delete AFTER DELETE ON experiment_exposures BEGIN
  UPDATE experiment_exposure_counts SET n = n - 1 WHERE project_id = OLD.project_id AND experiment_id = OLD.experiment_id AND variant = OLD.variant;
END;
`;

/** The counts and their triggers; a file made before them gets them, its counts taken in the same transaction. */
function ensureExposureCounts(db: Database): void {
  const present = () => db.query("SELECT 1 AS yes FROM sqlite_master WHERE type = 'trigger' AND name = 'experiment_exposures_counted_delete'").get() !== null;
  if (present()) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    if (!present()) {
      db.exec(EXPOSURE_COUNTS_SCHEMA);
      db.exec("DELETE FROM experiment_exposure_counts");
      db.exec(
        "INSERT INTO experiment_exposure_counts (project_id, experiment_id, variant, n) SELECT project_id, experiment_id, variant, COUNT(*) FROM experiment_exposures GROUP BY project_id, experiment_id, variant",
      );
    }
    db.exec("COMMIT");
  } catch (err) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw err;
  }
}

type Waiter = { rows: EventRow[]; resolve: () => void; reject: (err: unknown) => void };

/** A JSON path for one property name: `$."name"` (names never hold a double quote: ingest refuses them). */
export function jsonPath(property: string): string {
  return `$."${property.replaceAll('"', "")}"`;
}

function filterSql(filter: PropertyFilter, params: (string | number)[]): string {
  const ops = { eq: "=", neq: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;
  params.push(jsonPath(filter.property));
  const value = typeof filter.value === "boolean" ? (filter.value ? 1 : 0) : filter.value;
  params.push(value);
  // json_extract answers numbers as numbers and strings as text; SQLite orders a number below any text, so a
  // string stored where a number is compared never matches `>`-style filters by accident: the type check makes it explicit.
  const typeCheck =
    typeof filter.value === "number"
      ? `json_type(props, ?${params.length - 1}) IN ('integer', 'real')`
      : typeof filter.value === "boolean"
        ? `json_type(props, ?${params.length - 1}) IN ('true', 'false')`
        : `json_type(props, ?${params.length - 1}) = 'text'`;
  if (filter.op === "neq") return `(${typeCheck} AND json_extract(props, ?${params.length - 1}) <> ?${params.length})`;
  return `(${typeCheck} AND json_extract(props, ?${params.length - 1}) ${ops[filter.op]} ?${params.length})`;
}

/** The raw-table statement of a measure: bucket index and value per group, everything bound. */
function rawSql(q: SeriesQuery, measure: Measure): { sql: string; params: (string | number)[] } {
  // ?1 from (s), ?2 bucket (s), ?3 project, ?4 event, ?5 from (ms), ?6 to (ms), ?7 and ?8 the hours they fall in, then the measure's own.
  const params: (string | number)[] = [q.from, q.bucket, q.projectId, measure.event, q.from * 1000, q.to * 1000, Math.floor(q.from / 3600), Math.floor((q.to * 1000 - 1) / 3_600_000)];
  let aggregate: string;
  const where: string[] = [];
  if (measure.kind === "count") aggregate = "COUNT(*)";
  else if (measure.kind === "unique") {
    aggregate = "COUNT(DISTINCT unit_id)";
  } else if (measure.property === undefined) aggregate = "TOTAL(value)";
  else {
    params.push(jsonPath(measure.property));
    const p = params.length;
    aggregate = `TOTAL(CASE WHEN json_type(props, ?${p}) IN ('integer', 'real') THEN json_extract(props, ?${p}) END)`;
  }
  for (const f of measure.filters) where.push(filterSql(f, params));
  const sql =
    `SELECT (ts / 1000 - ?1) / ?2 AS b, ${aggregate} AS v FROM events WHERE project_id = ?3 AND name = ?4 AND hour BETWEEN ?7 AND ?8 AND ts >= ?5 AND ts < ?6` +
    (where.length ? ` AND ${where.join(" AND ")}` : "") +
    " GROUP BY b";
  return { sql, params };
}

/** One measure's value per unit over the rows where `cond` holds (all rows when empty): count, sum (non-numeric as 0) or 0/1. */
function unitValue(m: Measure, cond: string[], params: (string | number)[]): string {
  const c = cond.join(" AND ");
  if (m.kind === "count") return c ? `SUM(CASE WHEN ${c} THEN 1 ELSE 0 END)` : "COUNT(*)";
  if (m.kind === "unique") return c ? `MAX(CASE WHEN ${c} THEN 1 ELSE 0 END)` : "1";
  let v = "e.value";
  if (m.property !== undefined) {
    params.push(jsonPath(m.property));
    const p = params.length;
    v = `CASE WHEN json_type(e.props, ?${p}) IN ('integer', 'real') THEN json_extract(e.props, ?${p}) END`;
  }
  return c ? `TOTAL(CASE WHEN ${c} THEN ${v} END)` : `TOTAL(${v})`;
}

export const SQLITE_DIALECT: ExperimentDialect = {
  param: (n) => `?${n}`,
  text: (t) => t,
  filter: filterSql,
  unitValue,
  // The names themselves come from prefixNamesCte (a range on the name would read the hour index over all time).
  namePrefix: () => "e.name IN (SELECT name FROM prefix_names WHERE name IS NOT NULL)",
  sum: "TOTAL",
};

/**
 * `prefix_names`: the distinct event names of the project in [?9, ?10) (a
 * name prefix, see namePrefix in plan.ts), found by a skip scan of `table`'s
 * (project_id, name, ...) key: one seek per name, then a NULL row. Names
 * compare bytewise (BINARY). Without it a prefix is a range on the index's
 * second column, where the hour (the third) no longer narrows the scan:
 * `$error:*` over the last hour read the index entries of every error the
 * project kept (bench/rollouts.ts: 62,000 entries, 3 ms, per rollout and
 * round, for one day of errors; a month of them, 30 times that). With the
 * names, each is one range on (project, name, hour).
 */
export const prefixNamesCte = (table: string) =>
  `prefix_names(name) AS (SELECT (SELECT MIN(name) FROM ${table} WHERE project_id = ?1 AND name >= ?9 AND name < ?10)` +
  ` UNION ALL SELECT (SELECT MIN(name) FROM ${table} WHERE project_id = ?1 AND name > p.name AND name < ?10) FROM prefix_names AS p WHERE p.name IS NOT NULL)`;

/**
 * Which slice of the units a unit falls in: the code points of its last two
 * characters (0 for none), modulo the slice count. Cheap per row and spread
 * well for the ids units have (digits, hex, base62); a skewed set only makes
 * one slice bigger, never a wrong answer: every unit is in exactly one slice.
 */
const unitSlice = (column: string, count: string, index: string) =>
  `(ifnull(unicode(substr(${column}, -1)), 0) + ifnull(unicode(substr(${column}, -2)), 0)) % ${count} = ${index}`;

/**
 * What `u`'s columns read of each sorted event (the rest goes as NULL):
 * every column carried makes the sort slower (a sixth for a count, which
 * needs only the unit and the time). Read off the columns' own text
 * (experimentParts), so a column that starts reading another field carries
 * it: `e.name`, `e.value`, and `props` (filters name it bare, properties as
 * `e.props`).
 */
function sortedColumns(columns: string[]): string[] {
  const text = columns.join(" ");
  const reads = { name: /\be\.name\b/.test(text), value: /\be\.value\b/.test(text), props: /\bprops\b/.test(text) };
  return ["unit_id", "ts", ...(["name", "value", "props"] as const).map((c) => (reads[c] ? c : `NULL AS ${c}`))];
}

/**
 * The statement of an experiment's per-variant sums over one slice of the
 * units (`slices` > 1; see unitSlice), everything bound:
 * 1. `s`: the metric's events of the window (hour index; from `from − preMs`
 *    with a pre-period), of the slice's units, sorted by unit into a
 *    temporary table;
 * 2. `u`: each of those joined to its unit's first exposure (the covering
 *    index by unit; CROSS JOIN keeps `s` outside: the other way round would
 *    need an index on events by unit), kept from `first − preMs` (or
 *    `first`), then one row per unit: X (and Y, and the pre-period X). In
 *    unit order the lookups walk the index forward instead of jumping
 *    around it, and the rows come grouped already: one sort of the events
 *    instead of a random lookup and a sort per event (a quarter less time);
 * 3. `k`: per variant, the means of u's columns, the shifts the
 *    second-order sums are about (`u` is materialized so it is computed once
 *    for both; VariantStats says why the shifts);
 * 4. per variant: `n` from the exposures themselves (units without outcome
 *    events count, as 0; the variant index walks them in order), joined to
 *    the sums from `u` about `k` (a join, not a UNION summed up, so that a
 *    sum SQLite answers as NULL, a NaN, stays NULL: see variantStatsOf).
 * The slices' answers add up to the whole (sums of disjoint sets of units; addShiftedRows).
 */
export function experimentSql(q: ExperimentStatsQuery, slices = 1): { sql: string; params: (string | number)[]; sliceParam: number } {
  const { params, names, where, columns, shifts, sums } = experimentParts(q, SQLITE_DIALECT);
  // The slice (its count, then its index: bound last, replaced per slice).
  let slice = (_column: string) => "";
  const sliceParam = params.length + 1;
  if (slices > 1) {
    params.push(slices, 0);
    slice = (column) => ` AND ${unitSlice(column, `?${sliceParam}`, `?${sliceParam + 1}`)}`;
  }
  const prefix = namePrefix(q.measures[0].event) !== null;
  const sql =
    (prefix ? `WITH RECURSIVE ${prefixNamesCte("events")}, ` : "WITH ") +
    `s AS MATERIALIZED (SELECT ${sortedColumns(columns).join(", ")} FROM events AS e` +
    ` WHERE e.project_id = ?1 AND ${names} AND e.hour BETWEEN ?6 AND ?7 AND e.ts >= ?5 AND e.ts < ?4 AND e.unit_id IS NOT NULL` +
    where.map((w) => ` AND ${w}`).join("") +
    slice("e.unit_id") +
    " ORDER BY unit_id), " +
    `u AS MATERIALIZED (SELECT x.variant AS variant, ${columns.join(", ")} FROM (SELECT * FROM s) AS e CROSS JOIN experiment_exposures AS x` +
    ` WHERE x.project_id = ?1 AND x.experiment_id = ?2 AND x.unit_id = e.unit_id AND x.first_ts >= ?3 AND x.first_ts < ?4 AND e.ts >= x.first_ts - ?8 GROUP BY e.unit_id), ` +
    `k AS (SELECT variant, ${shifts.join(", ")} FROM u GROUP BY variant)` +
    ` SELECT c.variant AS variant, c.n AS n, ${["m", "kx", "ky", "kp", ...SUM_COLUMNS].map((col) => `a.${col} AS ${col}`).join(", ")} FROM (` +
    "SELECT variant, COUNT(*) AS n FROM experiment_exposures WHERE project_id = ?1 AND experiment_id = ?2 AND first_ts >= ?3 AND first_ts < ?4" +
    // Each slice counts its own units, in the same statement (one read snapshot) as their sums: counted once for
    // all slices, by one of them, an exposure committed between two slices' starts could be in the sums, not in n.
    slice("unit_id") +
    ` GROUP BY variant) AS c LEFT JOIN (SELECT u.variant AS variant, ${sums.join(", ")} FROM u CROSS JOIN k WHERE k.variant = u.variant GROUP BY u.variant) AS a ON a.variant = c.variant ORDER BY c.variant`;
  return { sql, params, sliceParam };
}

/** SQLite's order of variant names (bytewise, BINARY), for rows put together in JavaScript. */
export const byVariantBytes = (a: { variant: string }, b: { variant: string }): number => Buffer.compare(Buffer.from(a.variant), Buffer.from(b.variant));

/** Adds the slices' per-variant rows (each sorted by variant) into one list sorted by variant (byte order, as SQLite's). */
function mergeSlices(slices: VariantStatsRow[][]): VariantStatsRow[] {
  const byVariant = new Map<string, VariantStatsRow>();
  for (const rows of slices) {
    for (const row of rows) {
      const seen = byVariant.get(row.variant);
      byVariant.set(row.variant, seen ? addShiftedRows(seen, row) : { ...row });
    }
  }
  return [...byVariant.values()].sort(byVariantBytes);
}

/**
 * The analysis workers' code (a Blob URL: no file to ship beside the
 * binary). Each holds one connection to events.db that only reads
 * (query_only). Not memory-mapped: mmap_size = 1 GiB made an analysis about
 * a fifth faster, but every page it touched then counted in the server's
 * RSS (over 1 GB after one analysis of the bench's experiment).
 */
const ANALYSIS_WORKER = `
const { Database } = require("bun:sqlite");
let db;
const statements = new Map();
self.onmessage = ({ data }) => {
  if (data.close) {
    for (const s of statements.values()) s.finalize();
    statements.clear();
    db?.close();
    db = undefined;
    postMessage({ id: data.id, rows: [] });
    return;
  }
  try {
    if (!db) {
      db = new Database(data.path, { create: false });
      db.run("PRAGMA busy_timeout = 5000");
      db.run("PRAGMA query_only = 1");
    }
    let st = statements.get(data.sql);
    if (!st) {
      if (statements.size > 50) {
        for (const s of statements.values()) s.finalize();
        statements.clear();
      }
      st = db.prepare(data.sql);
      statements.set(data.sql, st);
    }
    postMessage({ id: data.id, rows: st.all(...data.params) });
  } catch (err) {
    postMessage({ id: data.id, error: err instanceof Error ? err.message : String(err) });
  }
};
`;

/** Ingest's checkpoint threshold when it checkpoints for itself (a one-shot command, or the worker failed). */
const AUTOCHECKPOINT_PAGES = 10_000;

/** Rows one pruning statement deletes at most. */
const PRUNE_BATCH = 2_000;
/** How long pruning holds the event loop before it lets requests in. */
const PRUNE_SLICE_MS = 20;

/** How long analysis workers stay up after their last query (their connections and heaps go with them). */
const ANALYSIS_IDLE_MS = 60_000;

type RefWorker = Worker & { ref?: () => void; unref?: () => void };

type WorkerCall = { resolve: (rows: unknown[]) => void; reject: (err: unknown) => void; worker?: number };

/**
 * Worker threads that run every read of events (analyses, series, counts)
 * on their own connections: an analysis takes seconds of CPU, and a raw
 * series over a million events as much, which on the server's thread would
 * stall every request (ingest first) for as long; here the event loop stays
 * free and the slices of one analysis run on as many cores as there are
 * workers. Started on first use, stopped after a minute idle. Idle, the
 * workers are unref'd (they never keep the process up); while any statement
 * runs they are ref'd: with only unref'd workers to wait for, Bun's event loop spins on
 * the main thread, which took a core from two busy slices (a count took
 * 1.9 s instead of 1.3 s where nothing else, like a listening server, held
 * the loop).
 */
class AnalysisPool {
  private workers: Worker[] = [];
  /** Statements sent to each worker and not answered yet. */
  private queued: number[] = [];
  /** Statements (run) not answered yet, on any worker; a stop's close calls are not counted. */
  private busy = 0;
  private readonly calls = new Map<number, WorkerCall>();
  private nextId = 0;
  private idle: ReturnType<typeof setTimeout> | undefined;
  private url: string | undefined;

  constructor(
    private readonly path: string,
    readonly size: number,
  ) {}

  /** Statements in flight (none: an analysis may have every worker). */
  get pending(): number {
    return this.calls.size;
  }

  /**
   * Runs `sql` on worker `index` (its own queue: one statement at a time), or with `null` on the worker with the
   * fewest statements queued (small analyses side by side: one per core).
   */
  run(index: number | null, sql: string, params: (string | number)[]): Promise<unknown[]> {
    if (this.workers.length === 0) this.start();
    clearTimeout(this.idle);
    this.busy++;
    this.setRef(true);
    const id = ++this.nextId;
    const worker = index === null ? this.queued.indexOf(Math.min(...this.queued)) : index % this.workers.length;
    this.queued[worker]!++;
    return new Promise<unknown[]>((resolve, reject) => {
      this.calls.set(id, { resolve, reject, worker });
      this.workers[worker]!.postMessage({ id, path: this.path, sql, params });
    }).finally(() => {
      if (--this.busy === 0 && this.workers.length > 0) {
        this.setRef(false);
        this.idle = setTimeout(() => void this.stop(), ANALYSIS_IDLE_MS);
        this.idle.unref?.();
      }
    });
  }

  /** While any statement runs the workers hold the event loop (see the class comment); idle, they never do. */
  private setRef(busy: boolean): void {
    for (const worker of this.workers as RefWorker[]) {
      if (busy) worker.ref?.();
      else worker.unref?.();
    }
  }

  private start(): void {
    this.url ??= URL.createObjectURL(new Blob([ANALYSIS_WORKER], { type: "application/javascript" }));
    for (let i = 0; i < this.size; i++) {
      const worker = new Worker(this.url);
      (worker as RefWorker).unref?.();
      worker.onmessage = ({ data }: MessageEvent<{ id: number; rows?: unknown[]; error?: string }>) => {
        const call = this.calls.get(data.id);
        if (!call) return;
        this.calls.delete(data.id);
        if (call.worker !== undefined && this.queued[call.worker]! > 0) this.queued[call.worker]!--;
        if (data.error !== undefined) call.reject(new Error(data.error));
        else call.resolve(data.rows ?? []);
      };
      worker.onerror = (event) => this.fail(new Error(`analysis worker failed: ${event.message}`));
      this.workers.push(worker);
    }
    this.queued = this.workers.map(() => 0);
  }

  /** A worker died: every call in flight fails, and the next call starts fresh workers. */
  private fail(err: Error): void {
    for (const w of this.workers) w.terminate();
    this.workers = [];
    for (const call of this.calls.values()) call.reject(err);
    this.calls.clear();
  }

  /** Closes the workers' connections, then the workers; calls still in flight fail. */
  async stop(): Promise<void> {
    clearTimeout(this.idle);
    const workers = this.workers;
    this.workers = [];
    if (workers.length === 0) return;
    // What this stop ends: the calls in flight on these workers and its own close calls. A call made meanwhile
    // starts new workers and is not this stop's to fail.
    const ending = new Set(this.calls.keys());
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            const id = ++this.nextId;
            ending.add(id);
            const timer = setTimeout(resolve, 2000);
            this.calls.set(id, {
              resolve: () => {
                clearTimeout(timer);
                resolve();
              },
              reject: () => resolve(),
            });
            worker.postMessage({ id, close: true });
          }),
      ),
    );
    for (const w of workers) w.terminate();
    for (const id of ending) {
      const call = this.calls.get(id);
      this.calls.delete(id);
      call?.reject(new Error("event store closed"));
    }
  }
}

export class SqliteEventStore implements EventStore {
  readonly kind = "sqlite" as const;
  readonly location: string;
  private readonly db: Database;
  private queue: Waiter[] = [];
  private scheduled = false;
  private closed = false;
  private readonly insertEvent: Statement;
  private readonly upsertHour: Statement;
  private readonly insertUnit: Statement;
  private readonly upsertExposure: Statement;
  /** Analysis off the server's thread, on a file database (an in-memory one is visible to this connection only). */
  private readonly analysis: AnalysisPool | undefined;
  private readonly statements = new Map<string, Statement>();

  /** Set by checkpointInBackground (the server). */
  private checkpointer: WalCheckpointer | undefined;

  constructor(private readonly path: string) {
    this.location = `sqlite:${path}`;
    if (path !== ":memory:") preparePrivateFile(path);
    if (path !== ":memory:" && path !== "" && !path.startsWith("file:")) this.analysis = new AnalysisPool(path, Math.max(1, Math.min(4, availableParallelism())));
    this.db = new Database(path, { create: true, strict: true });
    this.db.run("PRAGMA busy_timeout = 5000");
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = NORMAL");
    // Ingest dirties the same hot pages commit after commit: a bigger cache and fewer checkpoints write them less often.
    this.db.run("PRAGMA cache_size = -65536");
    this.db.run(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    this.db.exec(SCHEMA);
    ensureExposureCounts(this.db);
    this.insertEvent = this.db.prepare("INSERT INTO events (project_id, name, hour, ts, unit_id, value, props) VALUES (?, ?, ?, ?, ?, ?, ?)");
    this.upsertHour = this.db.prepare(
      "INSERT INTO event_hourly (project_id, name, hour, n, total) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (project_id, name, hour) DO UPDATE SET n = n + ?4, total = total + ?5",
    );
    this.insertUnit = this.db.prepare("INSERT OR IGNORE INTO event_units_daily (project_id, name, day, unit_id) VALUES (?, ?, ?, ?)");
    // The first exposure wins: the earliest ts, on a tie the smaller variant (see exposureOf).
    this.upsertExposure = this.db.prepare(
      "INSERT INTO experiment_exposures (project_id, experiment_id, unit_id, variant, first_ts) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (project_id, experiment_id, unit_id) DO UPDATE SET variant = excluded.variant, first_ts = excluded.first_ts WHERE excluded.first_ts < first_ts OR (excluded.first_ts = first_ts AND excluded.variant < variant)",
    );
  }

  append(rows: EventRow[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error("event store closed"));
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ rows, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.commitQueued());
      }
    });
  }

  /** Writes everything queued in one transaction, then settles every waiting call. */
  private commitQueued(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    try {
      this.writeBatch(batch);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (const w of batch) w.resolve();
  }

  private writeBatch(batch: Waiter[]): void {
    const hours = new Map<string, [string, string, number, number, number]>();
    const units = new Set<string>();
    const unitRows: [string, string, number, string][] = [];
    const exposures = new Map<string, FirstExposure>();
    this.db.transaction(() => {
      for (const { rows } of batch) {
        for (const r of rows) {
          const hourIndex = Math.floor(r.ts / 3_600_000);
          this.insertEvent.run(r.projectId, r.name, hourIndex, r.ts, r.unitId, r.value, r.props ? JSON.stringify(r.props) : null);
          const hour = hourIndex * 3600;
          const hk = `${r.projectId}\u0000${r.name}\u0000${hour}`;
          const h = hours.get(hk);
          if (h) {
            h[3]++;
            h[4] += r.value ?? 0;
          } else hours.set(hk, [r.projectId, r.name, hour, 1, r.value ?? 0]);
          if (r.unitId !== null) {
            const day = Math.floor(r.ts / 86_400_000) * 86400;
            const uk = `${hk}\u0000${day}\u0000${r.unitId}`;
            if (!units.has(uk)) {
              units.add(uk);
              unitRows.push([r.projectId, r.name, day, r.unitId]);
            }
          }
          if (r.name.startsWith(EXPOSURE_PREFIX)) noteExposure(exposures, r);
        }
      }
      for (const h of hours.values()) this.upsertHour.run(...h);
      for (const u of unitRows) this.insertUnit.run(...u);
      for (const x of exposures.values()) this.upsertExposure.run(...x);
    }).immediate();
  }

  private prepared(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size > 200) {
        for (const s of this.statements.values()) s.finalize();
        this.statements.clear();
      }
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  async series(q: SeriesQuery): Promise<SeriesResult> {
    if (this.closed) throw new Error("event store closed");
    const plan = rollupPlan(q);
    let sql: string;
    let params: (string | number)[];
    if (plan === "hourly") {
      const column = q.measure.kind === "count" ? "SUM(n)" : "TOTAL(total)";
      // One bucket per hour: grouping by the column itself walks the index in order (no temporary B-tree).
      sql = `SELECT (hour - ?1) / ?2 AS b, ${column} AS v FROM event_hourly WHERE project_id = ?3 AND name = ?4 AND hour >= ?1 AND hour < ?5 GROUP BY ${q.bucket === 3600 ? "hour" : "b"}`;
      params = [q.from, q.bucket, q.projectId, q.measure.event, q.to];
    } else if (plan === "daily-units") {
      const column = q.bucket === 86400 ? "COUNT(*)" : "COUNT(DISTINCT unit_id)";
      sql = `SELECT (day - ?1) / ?2 AS b, ${column} AS v FROM event_units_daily WHERE project_id = ?3 AND name = ?4 AND day >= ?1 AND day < ?5 GROUP BY ${q.bucket === 86400 ? "day" : "b"}`;
      params = [q.from, q.bucket, q.projectId, q.measure.event, q.to];
    } else ({ sql, params } = rawSql(q, q.measure));
    // On a worker like every query over events (DECISIONS): a raw series over a million events takes seconds of
    // CPU (2.4 s for 1.35M), which on this thread stalled every request; even a roll-up's read grows with the window.
    const found = (await this.analyse(null, sql, params)) as { b: number; v: number | null }[];
    return { sql, rows: bucketRows(q, found) };
  }

  /** An analysis statement on worker `worker` (null: the least busy; see AnalysisPool.run), or here for a store with no workers. */
  private analyse(worker: number | null, sql: string, params: (string | number)[]): Promise<unknown[]> {
    return this.analysis ? this.analysis.run(worker, sql, params) : Promise.resolve(this.prepared(sql).all(...params));
  }

  async experimentStats(q: ExperimentStatsQuery): Promise<{ sql: string; variants: VariantStats[] }> {
    if (this.closed) throw new Error("event store closed");
    const pool = this.analysis;
    // Slices only on an idle pool: every slice reads all the window's events again (only the sort and the lookups
    // divide), so beside other analyses they only add CPU. The rollout monitor runs a
    // hundred small ones a minute, four at a time: sliced, a round cost 2.5 times the CPU (bench/rollouts.ts).
    const slices = pool && pool.pending === 0 ? pool.size : 1;
    const { sql, params, sliceParam } = experimentSql(q, slices);
    let found: VariantStatsRow[];
    if (!pool || slices === 1) found = (await this.analyse(null, sql, params)) as VariantStatsRow[];
    else {
      // One slice of the units per worker, at the same time; their sums add up.
      const parts = Array.from({ length: slices }, (_, k) => {
        const bound = [...params];
        bound[sliceParam] = k;
        return pool.run(k, sql, bound) as Promise<VariantStatsRow[]>;
      });
      found = mergeSlices(await Promise.all(parts));
    }
    return { sql, variants: found.map((row) => variantStatsOf(row, q.measures.length === 2, q.preMs !== undefined)) };
  }

  /** See sqlite-many.ts: the counts and each metric's sums at once, each statement on the least busy worker. */
  async experimentStatsMany(q: ManyExperimentsQuery): Promise<ManyExperimentsResult> {
    if (this.closed) throw new Error("event store closed");
    if (q.experiments.length === 0) return q.metrics.map(() => new Map());
    const run = (statement: { sql: string; params: (string | number)[] }) => this.analyse(null, statement.sql, statement.params);
    const [counts, ...sums] = await Promise.all([
      run(manyCountsSql(q)),
      ...q.metrics.map((m) => (m.experimentIds.length === 0 ? Promise.resolve([]) : run(manyMetricSql(q, m)).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))))),
    ]);
    return q.metrics.map((m, i) => {
      const found = sums[i]!;
      return found instanceof Error ? found : mergeMany(counts as Parameters<typeof mergeMany>[0], found as Parameters<typeof mergeMany>[1], m);
    });
  }

  async exposureCounts(projectId: string, experimentId: string, window?: ExposureWindow): Promise<ExposureCounts> {
    if (this.closed) throw new Error("event store closed");
    // The variant index: one walk in variant order, no sort (a million units take about a tenth of a second). With a
    // window, the same walk counts the units in it and all of them (those outside are what the caller may report).
    const inside = "first_ts >= ?3 AND first_ts < ?4";
    const sql = window
      ? `SELECT variant, TOTAL(${inside}) AS n, MIN(CASE WHEN ${inside} THEN first_ts END) AS lo, MAX(CASE WHEN ${inside} THEN first_ts END) AS hi, COUNT(*) AS "all" FROM experiment_exposures WHERE project_id = ?1 AND experiment_id = ?2 GROUP BY variant ORDER BY variant`
      : "SELECT variant, COUNT(*) AS n, MIN(first_ts) AS lo, MAX(first_ts) AS hi FROM experiment_exposures WHERE project_id = ?1 AND experiment_id = ?2 GROUP BY variant ORDER BY variant";
    const found = await this.analyse(0, sql, window ? [projectId, experimentId, window.from, window.to] : [projectId, experimentId]);
    return countsOf(found as Parameters<typeof countsOf>[0], window !== undefined);
  }

  /**
   * Deletes on this thread (the workers only read), in small statements that each walk one range of an index:
   * per event name its hours before the cutoff's (then the cutoff's hour by `ts`), per name its days of units,
   * per experiment and variant its exposures by `first_ts`, per project and name its old roll-ups; and between
   * them the event loop gets a turn every PRUNE_SLICE_MS. A condition on `ts` or `first_ts` alone read every row of
   * the project instead, through the index and the table: with a million events an hourly run that deleted
   * nothing held the loop for 1.9 s.
   */
  async prune(options: { projectId: string; rawBefore: number; rollupsBefore?: number }): Promise<number> {
    const { projectId, rawBefore } = options;
    let since = performance.now();
    const drain = async (sql: string, ...params: (string | number)[]): Promise<number> => {
      let total = 0;
      for (;;) {
        const n = this.db.prepare(sql).run(...params).changes;
        total += n;
        if (performance.now() - since >= PRUNE_SLICE_MS) {
          await new Promise((r) => setImmediate(r));
          since = performance.now();
        }
        if (n < PRUNE_BATCH) return total;
      }
    };
    let removed = 0;
    const hour = Math.floor(rawBefore / 3_600_000);
    for (const name of this.namesOf("events", projectId)) {
      removed += await drain(`DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE project_id = ?1 AND name = ?2 AND hour < ?3 LIMIT ${PRUNE_BATCH})`, projectId, name, hour);
      removed += await drain(
        `DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE project_id = ?1 AND name = ?2 AND hour = ?3 AND ts < ?4 LIMIT ${PRUNE_BATCH})`,
        projectId,
        name,
        hour,
        rawBefore,
      );
    }
    const rawDay = Math.floor(rawBefore / 86_400_000) * 86400;
    for (const name of this.namesOf("event_units_daily", projectId)) {
      await drain(
        `DELETE FROM event_units_daily WHERE (project_id, name, day, unit_id) IN (SELECT project_id, name, day, unit_id FROM event_units_daily WHERE project_id = ?1 AND name = ?2 AND day < ?3 LIMIT ${PRUNE_BATCH})`,
        projectId,
        name,
        rawDay,
      );
    }
    // First exposures past retention go with their raw events (a unit exposed again later then counts from then).
    // The kept counts name every experiment and variant with exposures (their triggers keep them with the rows).
    const groups = this.db.query("SELECT experiment_id, variant FROM experiment_exposure_counts WHERE project_id = ?1").all(projectId) as { experiment_id: string; variant: string }[];
    for (const g of groups) {
      await drain(
        "DELETE FROM experiment_exposures WHERE (project_id, experiment_id, unit_id) IN (SELECT project_id, experiment_id, unit_id FROM experiment_exposures INDEXED BY experiment_exposures_by_variant" +
          ` WHERE project_id = ?1 AND experiment_id = ?2 AND variant = ?3 AND first_ts < ?4 LIMIT ${PRUNE_BATCH})`,
        projectId,
        g.experiment_id,
        g.variant,
        rawBefore,
      );
    }
    if (options.rollupsBefore !== undefined) {
      const before = Math.floor(options.rollupsBefore / 1000);
      for (const project of this.hourlyProjects()) {
        for (const name of this.namesOf("event_hourly", project)) {
          await drain(
            `DELETE FROM event_hourly WHERE (project_id, name, hour) IN (SELECT project_id, name, hour FROM event_hourly WHERE project_id = ?1 AND name = ?2 AND hour < ?3 LIMIT ${PRUNE_BATCH})`,
            project,
            name,
            before,
          );
        }
      }
    }
    return removed;
  }

  /** The event names of a project in `table` (keyed by project, name, ...): one index seek per name. */
  private namesOf(table: "events" | "event_units_daily" | "event_hourly", projectId: string): string[] {
    const sql =
      `WITH RECURSIVE n(name) AS (SELECT (SELECT MIN(name) FROM ${table} WHERE project_id = ?1)` +
      ` UNION ALL SELECT (SELECT MIN(name) FROM ${table} WHERE project_id = ?1 AND name > n.name) FROM n WHERE n.name IS NOT NULL)` +
      " SELECT name FROM n WHERE name IS NOT NULL";
    return (this.db.query(sql).all(projectId) as { name: string }[]).map((r) => r.name);
  }

  /** Every project with hourly roll-ups, one index seek each. */
  private hourlyProjects(): string[] {
    const sql =
      "WITH RECURSIVE p(id) AS (SELECT (SELECT MIN(project_id) FROM event_hourly)" +
      " UNION ALL SELECT (SELECT MIN(project_id) FROM event_hourly WHERE project_id > p.id) FROM p WHERE p.id IS NOT NULL)" +
      " SELECT id FROM p WHERE id IS NOT NULL";
    return (this.db.query(sql).all() as { id: string }[]).map((r) => r.id);
  }

  /** WAL checkpoints on a worker thread (see WalCheckpointer); ingest's commits stop paying for them. */
  async checkpointInBackground(onError?: (message: string) => void): Promise<void> {
    if (this.analysis === undefined || this.checkpointer || this.closed) return;
    this.checkpointer = new WalCheckpointer(this.path, this.db, { onError, restoredPages: AUTOCHECKPOINT_PAGES });
    await this.checkpointer.start();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.commitQueued();
    this.closed = true;
    await this.analysis?.stop();
    await this.checkpointer?.stop();
    for (const s of this.statements.values()) s.finalize();
    this.db.close();
  }
}
