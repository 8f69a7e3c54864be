import { Database, type Statement } from "bun:sqlite";
import { preparePrivateFile } from "../store/sqlite";
import { checkRows } from "./postgres";
import type { EventRow, EventStore, ExperimentStatsQuery, ExposureCounts, ExposureWindow, NameCounts, NameCountsQuery, RecentPage, RecentQuery, SeriesQuery, SeriesResult, VariantStats } from "./types";

/**
 * An analytics upstream behind a local spool (`<data>/events-spool.db`).
 *
 * Ingest must not depend on a remote database being up: `append` only writes
 * the rows into a local SQLite file (WAL, synchronous=NORMAL: a commit is in
 * the WAL file before `append` resolves, so it survives a SIGKILL of the
 * process; only a power cut can take the last commits) and answers. Appends
 * are group-committed: one transaction per tick for every call that arrived
 * meanwhile, so a burst of requests costs one commit.
 *
 * A drainer (every `drainEveryMs`, unref'd so it never keeps the process up,
 * one drain at a time) sends the oldest spooled rows to the upstream in
 * batches of up to 5,000, and deletes a batch from the spool only after the
 * upstream's append resolved (its COMMIT is done). A failure leaves the rows
 * where they are and the next tick sends the same batch again: nothing is
 * lost and, in the normal path, nothing is sent twice.
 *
 * Delivery is at-least-once in exactly these cases, where the upstream has
 * committed and the spool does not know it: the spool's DELETE failing after
 * the upstream commit (disk full, I/O error), the process dying between the
 * two, or the upstream's answer to COMMIT itself being lost (connection cut
 * or the upstream's timer firing while COMMIT is in flight). The batch is
 * then sent again and its rows are counted twice.
 *
 * `series`, `experimentStats`, `exposureCounts` and `prune` go to the
 * upstream (rows still in the spool are not in a series yet; they are
 * seconds behind). One process per spool file: it
 * lives in the server's own data directory.
 */

const DEFAULT_BATCH = 5000;

type Waiter = { rows: EventRow[]; resolve: () => void; reject: (err: unknown) => void };
type Spooled = [projectId: string, name: string, ts: number, unitId: string | null, value: number | null, props: EventRow["props"]];

export type SpoolOptions = {
  /** How often the drainer runs (ms); default 1000. */
  drainEveryMs?: number;
  /** Rows per upstream append; default 5000. */
  batchSize?: number;
  /** Told about each failed drain (the rows stay spooled and are retried). */
  onError?: (err: unknown) => void;
};

export class SpoolingEventStore implements EventStore {
  readonly kind = "upstream" as const;
  readonly location: string;
  /** The last drain failure, until a drain succeeds (logs, health). */
  lastError: unknown = undefined;
  private readonly db: Database;
  private readonly insertRow: Statement;
  private readonly selectBatch: Statement;
  private readonly deleteRange: Statement;
  private readonly countRows: Statement;
  private readonly batchSize: number;
  private readonly timer: ReturnType<typeof setInterval>;
  private queue: Waiter[] = [];
  private scheduled = false;
  private draining: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly upstream: EventStore,
    readonly spoolPath: string,
    private readonly options: SpoolOptions = {},
  ) {
    this.location = upstream.location;
    this.batchSize = options.batchSize ?? DEFAULT_BATCH;
    preparePrivateFile(spoolPath);
    this.db = new Database(spoolPath, { create: true, strict: true });
    this.db.run("PRAGMA busy_timeout = 5000");
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = NORMAL");
    // AUTOINCREMENT: ids never come back after a delete, so a batch is always one contiguous id range.
    this.db.run("CREATE TABLE IF NOT EXISTS spool (id INTEGER PRIMARY KEY AUTOINCREMENT, row TEXT NOT NULL) STRICT");
    this.insertRow = this.db.prepare("INSERT INTO spool (row) VALUES (?)");
    this.selectBatch = this.db.prepare("SELECT id, row FROM spool ORDER BY id LIMIT ?");
    this.deleteRange = this.db.prepare("DELETE FROM spool WHERE id >= ? AND id <= ?");
    // The rows are one id range (appended at the end, drained from the front): its ends are two seeks, where COUNT(*)
    // read the whole table on the server's thread at every scrape (a long outage spools millions of rows).
    this.countRows = this.db.prepare("SELECT COALESCE(MAX(id) - MIN(id) + 1, 0) AS n FROM spool");
    this.timer = setInterval(() => {
      if (this.closed || this.draining) return;
      this.drain().catch(() => {
        // Recorded in lastError and told to onError by drain(); retried at the next tick.
      });
    }, options.drainEveryMs ?? 1000);
    this.timer.unref();
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
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.commitQueued());
      }
    });
  }

  /** Spools everything queued in one transaction, then settles every waiting call. */
  private commitQueued(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    try {
      this.db.transaction(() => {
        for (const { rows } of batch) {
          for (const r of rows) {
            const spooled: Spooled = [r.projectId, r.name, r.ts, r.unitId, r.value, r.props];
            this.insertRow.run(JSON.stringify(spooled));
          }
        }
      }).immediate();
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (const w of batch) w.resolve();
  }

  /** Rows still in the spool (not yet committed upstream). */
  pending(): number {
    return (this.countRows.get() as { n: number }).n;
  }

  /** How far the upstream is behind: the age of the oldest spooled event (by its time), 0 when the spool is empty. */
  ingestLagMs(nowMs: number): number {
    const oldest = this.db.query("SELECT json_extract(row, '$[2]') AS ts FROM spool ORDER BY id LIMIT 1").get() as { ts: number } | null;
    return oldest ? Math.max(0, nowMs - Number(oldest.ts)) : 0;
  }

  /**
   * Sends everything spooled to the upstream, batch by batch (one drain at a
   * time: a second call joins the running one). Rejects with the upstream's
   * error when a batch fails; that batch and the rest stay spooled.
   */
  drain(): Promise<void> {
    this.draining ??= this.drainAll().finally(() => {
      this.draining = undefined;
    });
    return this.draining;
  }

  private async drainAll(): Promise<void> {
    try {
      for (;;) {
        const batch = this.selectBatch.all(this.batchSize) as { id: number; row: string }[];
        if (batch.length === 0) break;
        const rows = batch.map(({ row }) => {
          const [projectId, name, ts, unitId, value, props] = JSON.parse(row) as Spooled;
          return { projectId, name, ts, unitId, value, props };
        });
        await this.upstream.append(rows);
        // The upstream has committed. Should this DELETE fail (or the process die right here), the batch is
        // sent again by a later drain: the at-least-once case (see the top of this file).
        this.deleteRange.run(batch[0]!.id, batch[batch.length - 1]!.id);
        if (batch.length < this.batchSize) break;
      }
      this.lastError = undefined;
    } catch (err) {
      this.lastError = err;
      this.options.onError?.(err);
      throw err;
    }
  }

  series(query: SeriesQuery): Promise<SeriesResult> {
    return this.upstream.series(query);
  }

  experimentStats(query: ExperimentStatsQuery): Promise<{ sql: string; variants: VariantStats[] }> {
    return this.upstream.experimentStats(query);
  }

  exposureCounts(projectId: string, experimentId: string, window?: ExposureWindow): Promise<ExposureCounts> {
    return this.upstream.exposureCounts(projectId, experimentId, window);
  }

  prune(options: { projectId: string; rawBefore: number; rollupsBefore?: number }): Promise<number> {
    return this.upstream.prune(options);
  }

  countsByName(query: NameCountsQuery): Promise<NameCounts[]> {
    return this.upstream.countsByName?.(query) ?? Promise.resolve([]);
  }

  recent(query: RecentQuery): Promise<RecentPage> {
    return this.upstream.recent?.(query) ?? Promise.resolve({ events: [], next: null });
  }

  /** Stops the drainer, spools what was queued, tries one last drain (what fails stays spooled for the next start), closes both. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.commitQueued();
    await this.draining?.catch(() => {});
    await this.drain().catch(() => {});
    await this.upstream.close();
    this.db.close();
  }
}
