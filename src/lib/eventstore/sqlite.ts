// Over 400 lines as one piece: the embedded event store (ingest, series, analysis, recent events, pruning) is one class over one file; its SQL is in sqlite-sql.ts and sqlite-many.ts.
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
  type SeriesQuery,
  type SeriesResult,
  type VariantStats,
  type ExposureWindow,
  type NameCounts,
  type NameCountsQuery,
  type RecentPage,
  type RecentQuery,
  type VariantStatsRow,
  EXPOSURE_PREFIX,
  propsOf,
  countsOf,
  noteExposure,
  variantStatsOf,
} from "./types";
import { manyCountsSql, manyMetricSql, mergeMany } from "./sqlite-many";
import { AnalysisPool } from "./sqlite-pool";
import { SCHEMA, ensureExposureCounts } from "./sqlite-schema";
import { COUNTS_BY_NAME_SQL, UNITS_SPAN_SQL, experimentSql, mergeSlices, rawSql, recentSql, unitsAtSql, unitsOverDaysSql } from "./sqlite-sql";
import { bucketRows, rollupPlan } from "./plan";

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
type Waiter = { rows: EventRow[]; resolve: () => void; reject: (err: unknown) => void };

/** Ingest's checkpoint threshold when it checkpoints for itself (a one-shot command, or the checkpoint process failed). */
const AUTOCHECKPOINT_PAGES = 10_000;

/** Rows one pruning statement deletes at most. */
const PRUNE_BATCH = 2_000;
/** How long pruning holds the event loop before it lets requests in. */
const PRUNE_SLICE_MS = 20;
/**
 * Days of units a multi-day unique count lists at most (unitsOverDays): three years, well past the 13 months the
 * roll-up keeps, so only a store fed older days than ingest admits reads a longer span, as one range.
 */
const MAX_LISTED_DAYS = 1100;

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

  /** `analysisWorkers`: the analysis pool's size (one per core, at most four, unless said: tests ask for more). */
  constructor(
    private readonly path: string,
    options: { analysisWorkers?: number } = {},
  ) {
    this.location = `sqlite:${path}`;
    if (path !== ":memory:") preparePrivateFile(path);
    if (path !== ":memory:" && path !== "" && !path.startsWith("file:")) {
      this.analysis = new AnalysisPool(path, options.analysisWorkers ?? Math.max(1, Math.min(4, availableParallelism())));
    }
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
    } else if (plan === "daily-units" && q.bucket === 86400) {
      // A day's rows are its distinct units: counted in the primary key's order, nothing sorted.
      sql = "SELECT (day - ?1) / ?2 AS b, COUNT(*) AS v FROM event_units_daily WHERE project_id = ?3 AND name = ?4 AND day >= ?1 AND day < ?5 GROUP BY day";
      params = [q.from, q.bucket, q.projectId, q.measure.event, q.to];
    } else if (plan === "daily-units") return this.unitsOverDays(q);
    else ({ sql, params } = rawSql(q, q.measure));
    // On a worker like every query over events (DECISIONS): a raw series over a million events takes seconds of
    // CPU (2.4 s for 1.35M), which on this thread stalled every request; even a roll-up's read grows with the window.
    const found = (await this.analyse(null, sql, params)) as { b: number; v: number | null }[];
    return { sql, rows: bucketRows(q, found) };
  }

  /**
   * Unique units over buckets of several days (unitsOverDaysSql). A unit counts once per bucket, so its rows of
   * the window's days are sorted by unit: 1.3 s for 2.9M rows (1M units over 30 days) on one worker. On an idle
   * pool the units are cut into one slice per worker at once (boundaries: evenly spaced units of the window's
   * last day with units, so a skewed day only makes one slice bigger, never a wrong answer); slices read
   * disjoint rows and their counts add up (measured on those rows: 0.85 s on one worker, 0.4 s each on two).
   * Only the days that have units are listed (the roll-up keeps 13 months, so a window reaching back to 1970
   * lists at most those); a span longer than MAX_LISTED_DAYS is read as one range, unsliced.
   */
  private async unitsOverDays(q: SeriesQuery): Promise<SeriesResult> {
    const single = q.bucket >= q.to - q.from;
    const [span] = (await this.analyse(null, UNITS_SPAN_SQL, [q.projectId, q.measure.event, q.from, q.to])) as { first: number | null; last: number | null; n: number }[];
    if (!span || span.first === null || span.last === null) return { sql: UNITS_SPAN_SQL, rows: bucketRows(q, []) };
    const days: number[] = [];
    const listed = (span.last - span.first) / 86400 < MAX_LISTED_DAYS;
    if (listed) for (let day = span.first; day <= span.last; day += 86400) days.push(day);
    const params: (string | number | null)[] = [q.from, q.bucket, q.projectId, q.measure.event, listed ? JSON.stringify(days) : q.to];
    const slices = listed ? this.idleSlices() : 1;
    // Slicing only speeds the count up: should cutting fail, the units are counted whole.
    const bounds = slices > 1 && span.n >= slices ? await this.unitBounds(q, span.last, span.n, slices).catch(() => []) : [];
    const statements = Array.from({ length: bounds.length + 1 }, (_, k) => {
      const lower = bounds[k - 1];
      const upper = bounds[k];
      const sql = unitsOverDaysSql(single, listed ? "listed" : "range", { lower: lower !== undefined, upper: upper !== undefined });
      // ?6 and ?7 are bound as far as the statement numbers them (the first slice's unused ?6 as NULL).
      return { sql, params: upper !== undefined ? [...params, lower ?? null, upper] : lower !== undefined ? [...params, lower] : params };
    });
    const parts = await Promise.all(statements.map((s, k) => this.analyse(statements.length > 1 ? k : null, s.sql, s.params) as Promise<{ b: number; v: number }[]>));
    const counts = new Map<number, number>();
    for (const rows of parts) for (const row of rows) counts.set(row.b, (counts.get(row.b) ?? 0) + row.v);
    return { sql: statements[0]!.sql, rows: bucketRows(q, [...counts].map(([b, v]) => ({ b, v }))) };
  }

  /** Up to `slices - 1` units cutting day `day` (of `n` units) into even parts, each above the one before in byte order. */
  private async unitBounds(q: SeriesQuery, day: number, n: number, slices: number): Promise<string[]> {
    const positions = Array.from({ length: slices - 1 }, (_, k) => Math.floor((n * (k + 1)) / slices));
    const [row] = (await this.analyse(0, unitsAtSql(positions.length), [q.projectId, q.measure.event, day, ...positions])) as Record<string, string | null>[];
    const bounds: string[] = [];
    // In order by construction (one statement); kept strictly increasing all the same, as SQLite orders text (UTF-8 bytes).
    for (const unit of Object.values(row ?? {})) if (unit !== null && (bounds.length === 0 || Buffer.compare(Buffer.from(unit), Buffer.from(bounds.at(-1)!)) > 0)) bounds.push(unit);
    return bounds;
  }

  /** How many slices an analysis may take: every worker when none is busy, else one (see experimentStats). */
  private idleSlices(): number {
    const pool = this.analysis;
    return pool && pool.pending === 0 ? pool.size : 1;
  }

  /** An analysis statement on worker `worker` (null: the least busy; see AnalysisPool.run), or here for a store with no workers. */
  private analyse(worker: number | null, sql: string, params: (string | number | null)[]): Promise<unknown[]> {
    return this.analysis ? this.analysis.run(worker, sql, params) : Promise.resolve(this.prepared(sql).all(...params));
  }

  async experimentStats(q: ExperimentStatsQuery): Promise<{ sql: string; variants: VariantStats[] }> {
    if (this.closed) throw new Error("event store closed");
    const pool = this.analysis;
    // Slices only on an idle pool: every slice reads all the window's events again (only the sort and the lookups
    // divide), so beside other analyses they only add CPU. The rollout monitor runs a
    // hundred small ones a minute, four at a time: sliced, a round cost 2.5 times the CPU (bench/rollouts.ts).
    const slices = this.idleSlices();
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

  async countsByName(q: NameCountsQuery): Promise<NameCounts[]> {
    if (this.closed) throw new Error("event store closed");
    const found = (await this.analyse(null, COUNTS_BY_NAME_SQL, [q.projectId, q.daySince, q.weekSince])) as { name: string; day: number; week: number }[];
    return found.map((r) => ({ name: r.name, day: Number(r.day), week: Number(r.week) }));
  }

  async recent(q: RecentQuery): Promise<RecentPage> {
    if (this.closed) throw new Error("event store closed");
    // One more than the page: whether an older page exists.
    const { sql, params } = recentSql({ ...q, limit: q.limit + 1 });
    const found = (await this.analyse(null, sql, params)) as { tie: number; ts: number; unit_id: string | null; value: number | null; props: string | null }[];
    const more = found.length > q.limit;
    if (more) found.length = q.limit;
    const events = found.map((r) => ({ ts: Number(r.ts), unitId: r.unit_id, value: r.value, props: propsOf(r.props) }));
    const last = found.at(-1);
    return { events, next: last && more ? { ts: Number(last.ts), tie: String(last.tie) } : null };
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

  /** WAL checkpoints in the checkpoint process (see WalCheckpointer); ingest's commits stop paying for them. */
  async checkpointInBackground(onError?: (message: string) => void): Promise<void> {
    if (this.analysis === undefined || this.checkpointer || this.closed) return;
    this.checkpointer = new WalCheckpointer(this.path, this.db, { onError, restoredPages: AUTOCHECKPOINT_PAGES });
    // The process starts once there is a WAL worth its memory (see startWhenWritten).
    this.checkpointer.startWhenWritten();
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
