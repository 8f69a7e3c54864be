/**
 * The one seam between the modules and the database. Every module reaches
 * storage only through a `Store`: SQLite (bun:sqlite, the default) or
 * PostgreSQL (Bun.SQL), with the same calls and the same guarantees.
 *
 * Queries are SQL text with positional parameters (`?`, or `?1`, `?2` to
 * reuse one); the PostgreSQL store rewrites them to `$n` once per text.
 * Write SQL both engines accept (ANSI plus `ON CONFLICT`, `RETURNING`,
 * `CAST(COUNT(*) AS INTEGER)`); only the migrations differ per engine.
 */
export type Engine = "sqlite" | "postgres";

export type Param = string | number | boolean | null | Uint8Array;

export interface Queryable {
  /** The first row, or undefined. */
  one<T>(sql: string, ...params: Param[]): Promise<T | undefined>;
  all<T>(sql: string, ...params: Param[]): Promise<T[]>;
  /** Runs a statement; answers how many rows it changed. */
  run(sql: string, ...params: Param[]): Promise<number>;
}

/** One write transaction (see `Store.write`). */
export interface Tx extends Queryable {
  /**
   * Serialises this transaction with every other one that locks the same
   * scope, on every server: a PostgreSQL advisory transaction lock. On
   * SQLite the write lock (`BEGIN IMMEDIATE`) already serialises all writers.
   * Take it first in every read-then-write, before the read.
   */
  lock(scope: string): Promise<void>;
  /**
   * Tells every server (this one included) once the transaction commits;
   * nothing is said when it rolls back. Payloads are short strings.
   */
  announce(channel: string, payload: string): void;
}

export type ChangeListener = (payload: string) => void;
/** A check may answer what to run once its transaction has committed (before the announcements are heard): nothing runs after a rollback. */
export type CommitCheck = (payloads: string[]) => Promise<void | (() => void)>;

export interface Store extends Queryable {
  readonly engine: Engine;
  /** Where the data lives, without credentials (for logs and errors). */
  readonly location: string;
  /**
   * A random tag of this database, renewed when it is restored or copied:
   * snapshot ETags carry it so that an old tag never matches other content.
   */
  readonly epoch: string;
  /**
   * Runs `fn` in one write transaction and commits it, or rolls it back when
   * `fn` throws. A `write` inside another (in the same async flow) joins it.
   * Reads outside a transaction see committed data only.
   */
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Hears what any server announced on `channel` after commit. After a lost
   * connection (PostgreSQL) the listener is called with `RESYNC`: reload.
   */
  listen(channel: string, fn: ChangeListener): () => void;
  /**
   * Runs `check` at the end of every write transaction that announced on
   * `channel` (its payloads, in order), inside that transaction: reads see
   * its writes, and a throw rolls it back (the caller gets the error).
   * What a check answers runs after the commit, before this server's
   * listeners hear the payloads. Returns the removal.
   */
  checkBeforeCommit(channel: string, check: CommitCheck): () => void;
  /** Runs `fn` outside any transaction of the current async flow: its reads see committed data only. */
  committed<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Background work that must run once across all servers: true when this
   * server holds the named lease for the next `ttlMs` (renewing its own).
   */
  lease(name: string, ttlMs: number): Promise<boolean>;
  /**
   * Counts one hit (or `hits`) on `key`'s rate window, shared by every server: a window starts with the first hits (at the
   * latest `now`, epoch ms, of the batch they came in) and lasts `windowMs`; a hit at or after its end starts a
   * new one. Answers the window's hits so far, this one included, and when it ends. The hits of one turn of the
   * event loop are counted together, in one write transaction, so hits at the same moment on any server are each
   * counted once. Each server's clock sets its windows (keep the servers' clocks in time, as for sessions).
   * Never inside a write transaction: refused there (the count is a write of its own).
   */
  countHit(key: string, windowMs: number, now: number, hits?: number): Promise<{ count: number; resetAt: number }>;
  /** Where a failing listener is reported (the server's log). */
  setListenerErrorHandler(fn: (err: unknown, channel: string) => void): void;
  /** Runs DDL (migrations and tests only). */
  exec(sql: string): Promise<void>;
  /** Unique-constraint violation, on either engine. */
  isUniqueViolation(err: unknown): boolean;
  close(): Promise<void>;
}

/** The payload listeners get when they may have missed announcements. */
export const RESYNC = "\u0000resync";

/** One schema step, written for each engine. */
export type Migration = { name: string; sqlite: string; postgres: string };
