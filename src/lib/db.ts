import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { MIGRATIONS } from "./migrations";

export type Db = Database;

/** One ordered schema step. `version` is its 1-based position; `PRAGMA user_version` records the last applied. */
export type Migration = { name: string; sql: string };

/**
 * Opens the service database the way NOTES.md prescribes: busy_timeout first
 * (so that the WAL switch itself waits for other processes), then WAL,
 * NORMAL sync and foreign keys; then brings the schema up to date.
 */
export function openDatabase(path: string, options: { migrate?: boolean } = {}): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  if (options.migrate !== false) migrate(db);
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

/** Runs `fn` in one `BEGIN IMMEDIATE` transaction: every read-then-write goes through here. */
export function immediate<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

export function schemaVersion(db: Db): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}
