import { Database, SQLiteError, type Statement } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { unavailable } from "../errors";
import { WalCheckpointer } from "./checkpointer";
import { type ActiveTx, type Announcement, BaseStore } from "./base";
import { RESYNC, type Param } from "./types";

export type SqliteStoreOptions = {
  /**
   * How long a write waits for another process's lock before it answers 503.
   * The server keeps it short (its event loop never blocks: it retries with
   * awaited pauses); one-shot commands (init, backup) may wait longer.
   */
  busyBudgetMs?: number;
  /** How often announcements of other processes on the same file are picked up. */
  pollMs?: number;
};

/** Statements kept prepared per connection (bun:sqlite's own cache holds only 20). */
const STATEMENT_CACHE_MAX = 1000;
/** Announcements kept for other processes to read; older ones are deleted. */
const CHANGES_KEEP_MS = 5 * 60_000;

/**
 * Creates the database file 0600 (and its directory 0700) before SQLite
 * does, so that it never exists with the umask's wider mode; SQLite gives
 * the -wal and -shm files the mode of the main file. An existing file is
 * narrowed when we own it.
 */
export function preparePrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if (existsSync(file) && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    } catch {
      // Not ours to change (another user's file): SQLite will say if it cannot open it.
    }
  }
}

/** SQLite's "another connection holds the lock" (SQLITE_BUSY and its extended codes). */
export function isBusyError(err: unknown): boolean {
  return err instanceof SQLiteError && (err.code?.startsWith("SQLITE_BUSY") ?? false);
}

class Connection {
  private readonly statements = new Map<string, Statement>();
  constructor(readonly db: Database) {}

  prepare(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size >= STATEMENT_CACHE_MAX) {
        for (const old of this.statements.values()) old.finalize();
        this.statements.clear();
      }
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  one<T>(sql: string, params: Param[]): T | undefined {
    return (this.prepare(sql).get(...(params as never[])) as T | null) ?? undefined;
  }
  all<T>(sql: string, params: Param[]): T[] {
    return this.prepare(sql).all(...(params as never[])) as T[];
  }
  run(sql: string, params: Param[]): number {
    return this.prepare(sql).run(...(params as never[])).changes;
  }
  close(): void {
    for (const stmt of this.statements.values()) stmt.finalize();
    this.statements.clear();
    this.db.close();
  }
}

function openConnection(path: string, readonly: boolean): Database {
  const db = new Database(path, readonly ? { readonly: true, strict: true } : { create: true, strict: true });
  // Waits only while opening (the WAL switch); writes use busy_timeout 0 and retry with awaited pauses.
  db.exec("PRAGMA busy_timeout = 5000");
  if (!readonly) db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  return db;
}

/**
 * The default store: one SQLite file in WAL mode through bun:sqlite (its
 * synchronous calls are the fastest path on one machine; NOTES.md).
 *
 * One writer connection and one read-only reader. Writes of this process
 * queue on an in-process lock (a transaction that awaits must not let other
 * requests' statements into it), then take SQLite's write lock with
 * `BEGIN IMMEDIATE`; a lock held by another process is retried with awaited
 * pauses and answers 503 after `busyBudgetMs`. Reads outside a transaction go
 * to the reader and see committed data. Announcements are rows of
 * `store_changes`, which other processes on the same file pick up when
 * `PRAGMA data_version` says that someone else committed.
 */
export class SqliteStore extends BaseStore {
  readonly engine = "sqlite" as const;
  readonly location: string;
  private readonly writer: Connection;
  /** The read-only connection, once opened (see `reader`). */
  private readerConnection: Connection | undefined;
  private queue: Promise<void> = Promise.resolve();
  private readonly busyBudgetMs: number;
  private readonly pollMs: number;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private lastDataVersion = -1;
  private lastChangeSeq = 0;
  private lastPrune = 0;
  private closed = false;
  /** Set by checkpointInBackground (the server). */
  checkpointer: WalCheckpointer | undefined;

  constructor(readonly path: string, options: SqliteStoreOptions = {}) {
    super();
    this.location = path;
    if (path !== ":memory:") preparePrivateFile(path);
    const writer = openConnection(path, false);
    writer.exec("PRAGMA busy_timeout = 0");
    this.writer = new Connection(writer);
    // ":memory:" has no second connection onto the same data: read through the writer.
    if (path === ":memory:") this.readerConnection = this.writer;
    this.busyBudgetMs = options.busyBudgetMs ?? 500;
    this.pollMs = options.pollMs ?? 250;
  }

  /**
   * The read-only connection, opened on first use: by the first poll for other processes' announcements, or by a
   * read while the writer holds a transaction (see `readConnection`). A server's start reads through the writer
   * and answers its first request without opening it (issue 32: about 0.6 ms of the compiled binary's cold start).
   */
  private get reader(): Connection {
    if (this.readerConnection) return this.readerConnection;
    if (this.closed) throw new Error("the store is closed");
    return (this.readerConnection = new Connection(openConnection(this.path, true)));
  }

  /**
   * Where a read outside a transaction goes: the reader, which sees only committed data. Until the reader is
   * open, the writer while it holds no transaction, which then sees exactly what the reader would: the committed
   * data. While a transaction of this process is open (it awaits between statements), its uncommitted rows
   * must not be read, so the reader opens then.
   */
  private readConnection(): Connection {
    if (this.readerConnection || this.writer.db.inTransaction) return this.reader;
    return this.writer;
  }

  /** The raw writer connection, for `svc backup` (VACUUM INTO) and tests of SQLite itself. */
  get database(): Database {
    return this.writer.db;
  }

  /** Device and inode of the file: a copied, moved or restored file has another identity. */
  async identity(): Promise<string> {
    if (this.path === ":memory:") return `memory:${this.origin}`;
    const st = statSync(this.path);
    return `${st.dev}:${st.ino}`;
  }

  /**
   * WAL checkpoints in the checkpoint process from now on (the server; a one-shot command keeps SQLite's own,
   * and no process to start).
   */
  async checkpointInBackground(onError?: (message: string) => void): Promise<void> {
    if (this.path === ":memory:" || this.checkpointer || this.closed) return;
    this.checkpointer = new WalCheckpointer(this.path, this.writer.db, { onError });
    // The process starts once there is a WAL worth its memory (see startWhenWritten).
    this.checkpointer.startWhenWritten();
  }

  /** Starts following other processes' announcements (after migrations created store_changes). */
  async start(): Promise<void> {
    // lastDataVersion stays -1, so the first poll reads store_changes past lastChangeSeq whatever the version says:
    // nothing committed from here on is missed, and the reader opens with that poll, not before the first answer.
    this.lastChangeSeq = this.writer.one<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM store_changes", [])?.seq ?? 0;
    this.pollTimer = setInterval(() => this.pollChanges(), this.pollMs);
    this.pollTimer.unref?.();
  }

  private dataVersion(): number {
    return this.reader.one<{ data_version: number }>("PRAGMA data_version", [])!.data_version;
  }

  /** Picks up what other processes on the same file announced. */
  pollChanges(): void {
    if (this.closed) return;
    try {
      const version = this.dataVersion();
      if (version === this.lastDataVersion) return;
      this.lastDataVersion = version;
      const rows = this.reader.all<{ seq: number; origin: string; channel: string; payload: string }>(
        "SELECT seq, origin, channel, payload FROM store_changes WHERE seq > ? ORDER BY seq",
        [this.lastChangeSeq],
      );
      if (rows.length === 0) return;
      // Rows were pruned before this process read them (it slept for minutes): reload everything.
      if (rows[0]!.seq > this.lastChangeSeq + 1 && this.lastChangeSeq > 0) {
        const oldest = this.reader.one<{ seq: number }>("SELECT MIN(seq) AS seq FROM store_changes", []);
        if (oldest && oldest.seq > this.lastChangeSeq + 1) this.deliverResync(RESYNC);
      }
      this.lastChangeSeq = rows[rows.length - 1]!.seq;
      for (const row of rows) if (row.origin !== this.origin) this.deliver(row.channel, row.payload);
    } catch (err) {
      // Busy (another process mid-checkpoint) or transient: the next poll tries again.
      this.onListenerError(err, "store_changes");
    }
  }

  protected async readOne<T>(sql: string, params: Param[]): Promise<T | undefined> {
    return this.readConnection().one<T>(sql, params);
  }
  protected async readAll<T>(sql: string, params: Param[]): Promise<T[]> {
    return this.readConnection().all<T>(sql, params);
  }
  protected runOutside(sql: string, params: Param[]): Promise<number> {
    return this.write((tx) => tx.run(sql, ...params));
  }

  async exec(sql: string): Promise<void> {
    const tx = this.scope.getStore();
    if (tx) {
      this.writer.db.exec(sql);
      return;
    }
    await this.write(async () => {
      this.writer.db.exec(sql);
    });
  }

  isUniqueViolation(err: unknown): boolean {
    return err instanceof SQLiteError && (err.code === "SQLITE_CONSTRAINT_UNIQUE" || err.code === "SQLITE_CONSTRAINT_PRIMARYKEY");
  }

  protected async transaction<T>(fn: (tx: ActiveTx) => Promise<T>): Promise<T> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((done) => (release = done));
    await previous;
    try {
      await this.begin();
      const announcements: Announcement[] = [];
      const writer = this.writer;
      const origin = this.origin;
      const tx: ActiveTx = {
        announcements,
        one: async <R>(sql: string, ...params: Param[]) => writer.one<R>(sql, params),
        all: async <R>(sql: string, ...params: Param[]) => writer.all<R>(sql, params),
        run: async (sql: string, ...params: Param[]) => writer.run(sql, params),
        lock: async () => {},
        announce: (channel, payload) => {
          announcements.push({ channel, payload });
          writer.run("INSERT INTO store_changes (origin, channel, payload, at) VALUES (?, ?, ?, ?)", [origin, channel, payload, Date.now()]);
        },
      };
      let result: T;
      try {
        result = await fn(tx);
        if (announcements.length > 0) this.pruneChanges();
        writer.db.exec("COMMIT");
      } catch (err) {
        if (writer.db.inTransaction) writer.db.exec("ROLLBACK");
        throw err;
      }
      return result;
    } finally {
      release();
    }
  }

  /** Old announcements go once a minute, inside a write that announces anyway. */
  private pruneChanges(): void {
    const now = Date.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    this.writer.run("DELETE FROM store_changes WHERE at < ?", [now - CHANGES_KEEP_MS]);
  }

  /** `BEGIN IMMEDIATE`, retried without blocking while another process writes; 503 after the budget. */
  private async begin(): Promise<void> {
    const deadline = performance.now() + this.busyBudgetMs;
    let pause = 1;
    for (;;) {
      try {
        this.writer.db.exec("BEGIN IMMEDIATE");
        return;
      } catch (err) {
        if (!isBusyError(err)) throw err;
        if (performance.now() + pause > deadline) throw unavailable(1);
        await Bun.sleep(pause);
        // A busy writer in another process commits in well under a millisecond: try again soon.
        pause = Math.min(pause * 2, 16);
      }
    }
  }

  /** A consistent copy of the whole database while others keep writing (`VACUUM INTO`), created 0600. */
  backupTo(target: string): void {
    closeSync(openSync(target, "wx", 0o600));
    this.writer.db.query("VACUUM INTO ?").run(target);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    // Wait for a write in flight, then close.
    await this.queue;
    await this.checkpointer?.stop();
    if (this.readerConnection && this.readerConnection !== this.writer) this.readerConnection.close();
    this.writer.close();
  }
}
