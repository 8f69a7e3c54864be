import { nowIso } from "../ids";
import type { SqliteStore } from "./sqlite";
import type { Migration, Store } from "./types";

/** One module's schema steps, in the order they were released. Append only: never edit a released step. */
export type ModuleMigrations = { module: string; migrations: Migration[] };

/**
 * Before modules had their own lists, SQLite files counted one global list
 * in `PRAGMA user_version`. Its steps, in order, as (module, step index).
 */
const LEGACY_SQLITE_STEPS: Array<[string, number]> = [
  ["projects", 0],
  ["keys", 0],
  ["revisions", 0],
  ["killswitches", 0],
  ["configs", 0],
  ["identity", 0],
  ["device", 0],
  ["tokens", 0],
  ["projects", 1],
  ["store", 0],
  ["identity", 1],
  ["device", 1],
  ["configs", 1],
];

const TRACKING_TABLE = {
  sqlite: `CREATE TABLE IF NOT EXISTS schema_migrations (
  module TEXT NOT NULL,
  step INTEGER NOT NULL,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  PRIMARY KEY (module, step)
) STRICT`,
  postgres: `CREATE TABLE IF NOT EXISTS schema_migrations (
  module text NOT NULL,
  step integer NOT NULL,
  name text NOT NULL,
  applied_at text NOT NULL,
  PRIMARY KEY (module, step)
)`,
};

export class NewerSchemaError extends Error {}

/**
 * Brings the schema up to date: every module's steps past the last one
 * recorded, modules in the order given (a module's tables may reference an
 * earlier module's). One transaction under a lock (the SQLite write lock; an
 * advisory lock on PostgreSQL), so that servers starting together apply each
 * step once. Refuses a database that a newer binary has migrated further.
 * Answers how many steps it applied.
 *
 * Every start after the first finds nothing to do: a read says so without the lock and the write transaction
 * (about 1 ms of a cold start, issue 32). Whatever the read cannot vouch for (no table yet, a file of the
 * single-list era, steps of a newer binary, a failed read) goes the locked way, which decides.
 */
export async function migrate(store: Store, modules: ModuleMigrations[]): Promise<number> {
  if (await upToDate(store, modules)) return 0;
  return store.write(async (tx) => {
    await tx.lock("svc:schema_migrations");
    if (store.engine === "sqlite") await adoptLegacyVersion(store as SqliteStore);
    await store.exec(TRACKING_TABLE[store.engine]);
    const rows = await tx.all<{ module: string; step: number }>("SELECT module, step FROM schema_migrations");
    const done = stepsDone(rows);
    const newer = newerSchemaProblem(done, modules);
    if (newer) throw new NewerSchemaError(newer);
    let applied = 0;
    for (const { module, migrations } of modules) {
      for (let step = done.get(module) ?? 0; step < migrations.length; step++) {
        const migration = migrations[step]!;
        await store.exec(migration[store.engine]);
        await tx.run("INSERT INTO schema_migrations (module, step, name, applied_at) VALUES (?, ?, ?, ?)", module, step, migration.name, nowIso());
        applied++;
      }
    }
    return applied;
  });
}

/** Whether every step of `modules` is recorded and none past them, by a read outside any transaction. */
async function upToDate(store: Store, modules: ModuleMigrations[]): Promise<boolean> {
  try {
    if (store.engine === "sqlite" && legacyVersion(store as SqliteStore) !== 0) return false;
    const done = stepsDone(await store.all<{ module: string; step: number }>("SELECT module, step FROM schema_migrations"));
    return !newerSchemaProblem(done, modules) && modules.every(({ module, migrations }) => (done.get(module) ?? 0) >= migrations.length);
  } catch {
    return false;
  }
}

/** Steps applied per module (the next step's index), from the rows of `schema_migrations`. */
export function stepsDone(rows: Array<{ module: string; step: number }>): Map<string, number> {
  const done = new Map<string, number>();
  for (const row of rows) done.set(row.module, Math.max(done.get(row.module) ?? 0, Number(row.step) + 1));
  return done;
}

/**
 * Why a database is ahead of this binary (a module it does not know, or more
 * steps of one than it has), or undefined. Migrations only go forward: an
 * older binary must not serve tables it does not understand. Shared by the
 * start (`migrate`) and `svc restore`, which checks a backup before copying it.
 */
export function newerSchemaProblem(done: Map<string, number>, modules: ModuleMigrations[]): string | undefined {
  const known = new Map(modules.map((m) => [m.module, m.migrations.length]));
  for (const [module, count] of done) {
    const ours = known.get(module);
    if (ours === undefined || count > ours) {
      return `the database was migrated by a newer svc (${module}: ${count} steps, this binary knows ${ours ?? 0}); use that svc release or a later one, migrations only go forward`;
    }
  }
  return undefined;
}

/** How many `user_version` steps the single-list era had: a larger value was written by a newer binary. */
export const LEGACY_STEP_COUNT = LEGACY_SQLITE_STEPS.length;

/** The `user_version` of a file of the single-list era (0 once adopted, and on every file made since). */
function legacyVersion(store: SqliteStore): number {
  return (store.database.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

/** A file of the single-list era: records its `user_version` steps per module, once. */
async function adoptLegacyVersion(store: SqliteStore): Promise<void> {
  const db = store.database;
  const version = legacyVersion(store);
  if (version === 0) return;
  if (version > LEGACY_SQLITE_STEPS.length) {
    throw new NewerSchemaError(`database schema version ${version} is newer than this binary knows; upgrade svc`);
  }
  db.exec(TRACKING_TABLE.sqlite);
  const insert = db.query("INSERT OR IGNORE INTO schema_migrations (module, step, name, applied_at) VALUES (?, ?, ?, ?)");
  for (const [module, step] of LEGACY_SQLITE_STEPS.slice(0, version)) insert.run(module, step, `${module} ${step + 1} (user_version)`, nowIso());
  db.exec("PRAGMA user_version = 0");
}
