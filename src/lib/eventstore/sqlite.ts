import { Database, type Statement } from "bun:sqlite";
import { preparePrivateFile } from "../store/sqlite";
import { type EventRow, type EventStore, type Measure, type PropertyFilter, type SeriesQuery, type SeriesResult } from "./types";
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
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (project_id TEXT NOT NULL, name TEXT NOT NULL, hour INTEGER NOT NULL, ts INTEGER NOT NULL, unit_id TEXT, value REAL, props TEXT) STRICT;
CREATE INDEX IF NOT EXISTS events_by_name_hour ON events (project_id, name, hour);
CREATE TABLE IF NOT EXISTS event_hourly (project_id TEXT NOT NULL, name TEXT NOT NULL, hour INTEGER NOT NULL, n INTEGER NOT NULL, total REAL NOT NULL, PRIMARY KEY (project_id, name, hour)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS event_units_daily (project_id TEXT NOT NULL, name TEXT NOT NULL, day INTEGER NOT NULL, unit_id TEXT NOT NULL, PRIMARY KEY (project_id, name, day, unit_id)) STRICT, WITHOUT ROWID;
`;

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
  private readonly statements = new Map<string, Statement>();

  constructor(path: string) {
    this.location = `sqlite:${path}`;
    if (path !== ":memory:") preparePrivateFile(path);
    this.db = new Database(path, { create: true, strict: true });
    this.db.run("PRAGMA busy_timeout = 5000");
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = NORMAL");
    // Ingest dirties the same hot pages commit after commit: a bigger cache and fewer checkpoints write them less often.
    this.db.run("PRAGMA cache_size = -65536");
    this.db.run("PRAGMA wal_autocheckpoint = 10000");
    this.db.exec(SCHEMA);
    this.insertEvent = this.db.prepare("INSERT INTO events (project_id, name, hour, ts, unit_id, value, props) VALUES (?, ?, ?, ?, ?, ?, ?)");
    this.upsertHour = this.db.prepare(
      "INSERT INTO event_hourly (project_id, name, hour, n, total) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (project_id, name, hour) DO UPDATE SET n = n + ?4, total = total + ?5",
    );
    this.insertUnit = this.db.prepare("INSERT OR IGNORE INTO event_units_daily (project_id, name, day, unit_id) VALUES (?, ?, ?, ?)");
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
        }
      }
      for (const h of hours.values()) this.upsertHour.run(...h);
      for (const u of unitRows) this.insertUnit.run(...u);
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
    const found = this.prepared(sql).all(...params) as { b: number; v: number | null }[];
    return { sql, rows: bucketRows(q, found) };
  }

  async prune(options: { projectId: string; rawBefore: number; rollupsBefore?: number }): Promise<number> {
    let removed = 0;
    // In slices: one huge DELETE would hold the write lock (and the event loop) for seconds.
    for (;;) {
      const n = this.db
        .prepare("DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE project_id = ? AND ts < ? LIMIT 20000)")
        .run(options.projectId, options.rawBefore).changes;
      removed += n;
      if (n < 20000) break;
      await new Promise((r) => setImmediate(r));
    }
    const rawDay = Math.floor(options.rawBefore / 86_400_000) * 86400;
    this.db.prepare("DELETE FROM event_units_daily WHERE project_id = ? AND day < ?").run(options.projectId, rawDay);
    if (options.rollupsBefore !== undefined) {
      this.db.prepare("DELETE FROM event_hourly WHERE hour < ?").run(Math.floor(options.rollupsBefore / 1000));
    }
    return removed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.commitQueued();
    this.closed = true;
    for (const s of this.statements.values()) s.finalize();
    this.db.close();
  }
}
