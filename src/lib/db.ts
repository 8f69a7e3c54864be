import { Database, SQLiteError } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { unavailable } from "./errors";
import { randomBase62 } from "./ids";
import { MIGRATIONS } from "./migrations";

export type Db = Database;

/** One ordered schema step. `version` is its 1-based position; `PRAGMA user_version` records the last applied. */
export type Migration = { name: string; sql: string };

export type OpenOptions = {
  migrate?: boolean;
  /**
   * How long one statement waits for another process's write lock. One-shot
   * commands (init, backup, fixtures) may wait; the server passes 0 so that
   * a held lock never blocks its event loop: its writes go through
   * `writeTransaction`, which retries without blocking and then answers 503.
   */
  busyTimeoutMs?: number;
};

/** How long opening (the WAL switch, migrations) waits for another process. */
const OPEN_BUSY_TIMEOUT_MS = 5000;
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Creates the database file 0600 (and its directory 0700) before SQLite
 * does, so that it never exists with the umask's wider mode; SQLite gives
 * the -wal and -shm files the mode of the main file. An existing file is
 * narrowed when we own it.
 */
function preparePrivateFile(path: string): void {
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

/**
 * Opens the service database the way NOTES.md prescribes: busy_timeout first
 * (so that the WAL switch itself waits for other processes), then WAL,
 * NORMAL sync and foreign keys; then brings the schema up to date and makes
 * sure the database has its epoch.
 */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  if (path !== ":memory:") preparePrivateFile(path);
  const db = new Database(path, { create: true, strict: true });
  db.exec(`PRAGMA busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  if (options.migrate !== false) {
    migrate(db);
    ensureEpoch(db, path);
  }
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))}`);
  return db;
}

/** Applies every migration past `user_version`, each in its own immediate transaction. */
export function migrate(db: Db, migrations: Migration[] = MIGRATIONS): number {
  let applied = 0;
  for (;;) {
    const done = immediate(db, () => {
      const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
      if (current > migrations.length) {
        throw new Error(
          `database schema version ${current} is newer than this binary knows (${migrations.length}); upgrade svc`,
        );
      }
      if (current === migrations.length) return true;
      db.exec(migrations[current]!.sql);
      db.exec(`PRAGMA user_version = ${current + 1}`);
      return false;
    });
    if (done) return applied;
    applied++;
  }
}

/** Runs `fn` in one `BEGIN IMMEDIATE` transaction, synchronously: for one-shot commands and nesting inside a transaction. */
export function immediate<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/** SQLite's "another connection holds the lock" (SQLITE_BUSY and its extended codes). */
export function isBusyError(err: unknown): boolean {
  return err instanceof SQLiteError && (err.code?.startsWith("SQLITE_BUSY") ?? false);
}

/** How long a write keeps retrying a locked database before it answers 503. */
const BUSY_RETRY_BUDGET_MS = 500;

/**
 * Every read-then-write of the server: `fn` runs synchronously in one
 * `BEGIN IMMEDIATE` transaction. When another process holds the write lock
 * the attempt fails at once (the server's busy_timeout is 0), and is retried
 * after a growing pause that awaits instead of blocking, so polls, streams and
 * health checks keep being answered meanwhile. After BUSY_RETRY_BUDGET_MS it
 * gives up with 503 Unavailable (Retry-After). `fn` must not await: code
 * after an await would run outside the transaction.
 */
export async function writeTransaction<T>(db: Db, fn: () => T): Promise<T> {
  const deadline = performance.now() + BUSY_RETRY_BUDGET_MS;
  let pause = 1;
  for (;;) {
    try {
      return db.transaction(fn).immediate();
    } catch (err) {
      if (!isBusyError(err)) throw err;
      if (performance.now() + pause > deadline) throw unavailable(1);
      await Bun.sleep(pause);
      // Short pauses: a busy writer in another process commits in well under a millisecond, so try again soon.
      pause = Math.min(pause * 2, 16);
    }
  }
}

export function schemaVersion(db: Db): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

function fileIdentity(path: string): string {
  if (path === ":memory:") return `memory:${randomBase62(8)}`;
  const st = statSync(path);
  return `${st.dev}:${st.ino}`;
}

/**
 * Gives the database a new epoch when it has none, or when its file is not
 * the one the epoch was made for (copied, moved or restored).
 */
function ensureEpoch(db: Db, path: string): void {
  const identity = fileIdentity(path);
  immediate(db, () => {
    const rows = db.query<{ key: string; value: string }, []>("SELECT key, value FROM store_meta WHERE key IN ('epoch', 'file_identity')").all();
    const stored = Object.fromEntries(rows.map((r) => [r.key, r.value]));
    if (stored.epoch && stored.file_identity === identity) return;
    const upsert = db.query("INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    upsert.run("epoch", randomBase62(10));
    upsert.run("file_identity", identity);
  });
}

/** Gives the database a new epoch now (a backup copy gets one, so that it never shares ETags with its source). */
export function renewEpoch(db: Db, path: string): void {
  immediate(db, () => {
    const upsert = db.query("INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    upsert.run("epoch", randomBase62(10));
    upsert.run("file_identity", fileIdentity(path));
  });
}

/** The database's epoch (see store-meta.ts). */
export function storeEpoch(db: Db): string {
  const row = db.query<{ value: string }, []>("SELECT value FROM store_meta WHERE key = 'epoch'").get();
  if (!row) throw new Error("the database has no epoch; open it with openDatabase");
  return row.value;
}
