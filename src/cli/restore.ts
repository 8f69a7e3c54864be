import { Database, SQLiteError } from "bun:sqlite";
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { UsageError } from "../lib/config";
import { openImmutable, placeFile } from "../lib/backups";
import { randomBase62 } from "../lib/ids";
import { LEGACY_STEP_COUNT, STORE_BOOKKEEPING_TABLES, STORE_PROCESS_TABLES, newerSchemaProblem, stepsDone, withStoreMigrations } from "../lib/store";
import { storeMigrations } from "../modules";
import { planKeyRestore, placeKey, sealedKeyIds } from "./backup-key";
import type { Command } from "./command";
import { CliError } from "./errors";
import { DATA_FLAG, STORE_FLAG, dataDirOf, storeTargetOf } from "./store-option";

const tableNames = (db: Database): string[] =>
  (db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((r) => r.name);

const countOf = (db: Database, table: string): number => (db.query(`SELECT COUNT(*) AS n FROM "${table}"`).get() as { n: number }).n;

type Kind = "service" | "events";

/**
 * Checks a backup before anything is written: a SQLite file whose pages are
 * all sound (`PRAGMA integrity_check`), holding an svc database (or an svc
 * events database) whose schema this binary knows. Answers the open,
 * read-only connection; every refusal is a CliError saying what is wrong.
 */
function inspect(path: string, kind: Kind, flag: string): Database {
  let db: Database | undefined;
  try {
    db = openImmutable(path);
    const problems = (db.query("PRAGMA integrity_check(20)").all() as { integrity_check: string }[]).map((r) => r.integrity_check);
    if (problems.length !== 1 || problems[0] !== "ok") {
      throw new CliError(`${path} failed SQLite's integrity check: ${problems.slice(0, 3).join("; ")}`, "CORRUPT", "restore another (older) backup; this one is damaged");
    }
    const tables = new Set(tableNames(db));
    if (kind === "events") {
      if (!tables.has("events") || !tables.has("event_hourly")) {
        throw new CliError(`${path} is a SQLite database but not svc's analytics events (it has no events table)`, "NOT_A_BACKUP", `${flag} takes a file written by \`svc backup --events-out FILE\` (a copy of <data>/events.db)`);
      }
      return db;
    }
    if (!tables.has("projects")) {
      throw new CliError(`${path} is a SQLite database but not an svc database (it has no projects table)`, "NOT_A_BACKUP", `${flag} takes a file written by \`svc backup --out FILE\` or by \`svc serve --backup-dir\``);
    }
    const modules = withStoreMigrations(storeMigrations());
    let newer: string | undefined;
    if (tables.has("schema_migrations")) {
      const rows = db.query("SELECT module, step FROM schema_migrations").all() as { module: string; step: number }[];
      newer = newerSchemaProblem(stepsDone(rows), modules);
    } else {
      // A file of the single-list era (PRAGMA user_version); the server adopts it at start.
      const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
      if (version === 0) throw new CliError(`${path} is a SQLite database but not an svc database (no schema_migrations table)`, "NOT_A_BACKUP", `${flag} takes a file written by \`svc backup --out FILE\``);
      if (version > LEGACY_STEP_COUNT) newer = `its schema version ${version} is newer than this binary knows`;
    }
    if (newer) {
      throw new CliError(`${path}: ${newer}`, "SCHEMA_TOO_NEW", "restore it with the svc release that wrote the backup, or a later one (`svc version` shows this one)");
    }
    return db;
  } catch (err) {
    db?.close();
    if (err instanceof CliError) throw err;
    const code = err instanceof SQLiteError ? err.code : undefined;
    if (code === "SQLITE_NOTADB") throw new CliError(`${path} is not a SQLite database`, "NOT_A_BACKUP", `${flag} takes a file written by \`svc backup\``);
    if (code?.startsWith("SQLITE_CORRUPT")) throw new CliError(`${path} failed SQLite's integrity check: ${(err as Error).message}`, "CORRUPT", "restore another (older) backup; this one is damaged");
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`, "ERROR");
  }
}

/** A file to restore: present, a regular file, and not a live database (whose -wal would be left behind). */
function sourceFile(value: string, flag: string): string {
  const path = resolve(value);
  if (!existsSync(path)) throw new CliError(`no backup at ${path}`, "NOT_FOUND", `${flag} names the file \`svc backup\` wrote`);
  if (!statSync(path).isFile()) throw new CliError(`${path} is not a file`, "NOT_FOUND", `${flag} names the file \`svc backup\` wrote`);
  if (existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0) {
    throw new CliError(
      `${path} has a write-ahead log beside it: it is a live database, not a backup`,
      "NOT_A_BACKUP",
      "make a backup with `svc backup --out FILE` (it runs beside the server) and restore that",
    );
  }
  return path;
}

/** A destination that holds nothing yet: a restore never replaces a database. */
function freeDestination(path: string, what: string): void {
  if (existsSync(path) || existsSync(`${path}-wal`)) {
    throw new CliError(
      `${dirname(path)} already holds ${what} (${basename(path)})`,
      "ALREADY_EXISTS",
      `restore into an empty data directory (\`svc restore --from FILE --data NEW_DIR\`, then \`svc serve --data NEW_DIR\`), or stop the server and move ${basename(path)}, ${basename(path)}-wal and ${basename(path)}-shm out of ${dirname(path)} first`,
    );
  }
}

/**
 * Copies the checked backup to a temporary name beside the destination
 * (0600, by `VACUUM INTO`, which reads every page once more), lets `prepare`
 * adjust the copy, then links it into place. Nothing is left behind on failure.
 */
function writeInPlace(source: Database, dest: string, prepare: (db: Database) => void): void {
  const dir = dirname(dest);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${basename(dest)}.restore-${randomBase62(8)}`);
  closeSync(openSync(temp, "wx", 0o600));
  try {
    source.query("VACUUM INTO ?").run(temp);
    const db = new Database(temp, { readwrite: true, create: false, strict: true });
    try {
      prepare(db);
    } finally {
      db.close();
    }
    placeFile(temp, dest, dir);
  } catch (err) {
    rmSync(temp, { force: true });
    if ((err as NodeJS.ErrnoException).code === "EEXIST") freeDestination(dest, basename(dest));
    throw err;
  }
}

export const restoreCommand: Command = {
  name: "restore",
  summary: "Put a backup in place as the database of an empty data directory (integrity check first; never overwrites)",
  details: [
    "Checks FILE first (SQLite's integrity check, an svc database, a schema this binary knows), refuses a data directory that already holds service.db, then copies the backup in as service.db (mode 0600, under a temporary name, then moved into place) and prints what came back. Start the server on that directory afterwards; SDKs get fresh snapshots (the restored database gets a new epoch, so no old ETag matches).",
    "The backup holds service.db only. Analytics events (<data>/events.db) are backed up with `svc backup --events-out FILE` and restored with --events-from.",
    "Connector credentials are sealed with <data>/secret.key (or SERVICE_SECRET_KEY). The key `svc backup` wrote beside the backup (FILE.secret.key), or a secret.key beside FILE (a --backup-dir), or --secret-key PATH, is put back as <data>/secret.key (mode 0600). A backup whose sealed credentials no available key opens is refused, unless --without-secret-key (then enter those connectors' credentials again).",
    "On PostgreSQL restore with pg_restore into an empty database: `pg_restore --no-owner --dbname postgres://USER@HOST/NEW_DB svc.dump` (from `pg_dump --format=custom`).",
  ],
  examples: [
    "svc restore --from /backups/svc-2026-11-21.db --data /var/lib/svc-restored --json",
    "svc restore --from /backups/service-20261124T101500Z.db --data ./data",
    "svc restore --from svc.db --events-from svc-events.db --data ./data",
    "svc restore --from /backups/svc.db --secret-key /old/data/secret.key --data ./data",
  ],
  flags: {
    from: { type: "string", value: "FILE", help: "The backup to restore (from `svc backup --out`, or `svc serve --backup-dir`); required" },
    "events-from": { type: "string", value: "FILE", help: "Also restore analytics events from this file (from `svc backup --events-out`) as <data>/events.db" },
    "secret-key": { type: "string", value: "PATH", help: "The secret.key that sealed the backup's connector credentials (default FILE.secret.key, else a secret.key beside FILE)" },
    "without-secret-key": { type: "boolean", help: "Restore even though no key opens the backup's connector credentials (enter them again afterwards)" },
    data: DATA_FLAG,
    store: STORE_FLAG,
    json: { type: "boolean", help: "Print {restored, from, projects, tables, rows, events?, secretKey?, warnings} as JSON (failures as one JSON object on stderr)" },
  },
  async run({ values }) {
    const from = values.from as string | undefined;
    if (!from) throw new UsageError("--from FILE is required: the backup to restore");
    const target = storeTargetOf(values);
    if (target.engine === "postgres") {
      throw new CliError(
        "svc restore writes SQLite files; this store is PostgreSQL",
        "USAGE",
        `use pg_restore into an empty database: pg_restore --no-owner --dbname "<the new database's URL>" ${from} (a pg_dump --format=custom file), then svc serve --store with that URL`,
        2,
      );
    }
    const dataDir = dataDirOf(values);
    const eventsFrom = values["events-from"] as string | undefined;
    const eventsDest = join(dataDir, "events.db");

    // Every check before the first write: a refusal leaves the disk as it was.
    const source = sourceFile(from, "--from");
    const eventsSource = eventsFrom === undefined ? undefined : sourceFile(eventsFrom, "--events-from");
    freeDestination(target.path, "a database");
    if (eventsSource) freeDestination(eventsDest, "analytics events");
    const db = inspect(source, "service", "--from");
    const eventsDb = eventsSource ? inspect(eventsSource, "events", "--events-from") : undefined;
    let key: ReturnType<typeof planKeyRestore>;
    try {
      const sealed = sealedKeyIds(db);
      key = planKeyRestore({ from: source, dataDir, secretKey: values["secret-key"] as string | undefined, withoutKey: values["without-secret-key"] === true, sealed, envKey: process.env.SERVICE_SECRET_KEY });
    } catch (err) {
      db.close();
      eventsDb?.close();
      throw err;
    }

    try {
      writeInPlace(db, target.path, (copy) => {
        const tables = new Set(tableNames(copy));
        // No epoch: the first start mints a new one, so an SDK's old ETag never matches (even if the file's inode number is reused).
        if (tables.has("store_meta")) copy.run("DELETE FROM store_meta WHERE key IN ('epoch', 'file_identity')");
        // Announcements, leases and rate windows of processes that served the old file.
        for (const table of STORE_PROCESS_TABLES) if (tables.has(table)) copy.run(`DELETE FROM ${table}`);
      });
      if (eventsDb) writeInPlace(eventsDb, eventsDest, () => {});
      placeKey(key);
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`cannot write ${target.path}: ${(err as Error).message}`, "ERROR", "check that the data directory is writable by you");
    } finally {
      db.close();
      eventsDb?.close();
    }

    // What came back, read from the file now in place.
    const restored = openImmutable(target.path);
    let report: { projects: { id: string; name: string }[]; tables: Record<string, number>; rows: number; sealedConnectors: number };
    try {
      const tables: Record<string, number> = {};
      for (const name of tableNames(restored)) if (!STORE_BOOKKEEPING_TABLES.has(name)) tables[name] = countOf(restored, name);
      const sealed = tables.connectors ? (restored.query("SELECT COUNT(*) AS n FROM connectors WHERE credentials IS NOT NULL").get() as { n: number }).n : 0;
      report = {
        projects: restored.query("SELECT id, name FROM projects ORDER BY created_at, id").all() as { id: string; name: string }[],
        tables,
        rows: Object.values(tables).reduce((a, b) => a + b, 0),
        sealedConnectors: sealed,
      };
    } finally {
      restored.close();
    }
    let events: { restored: string; rows: number } | undefined;
    if (eventsSource) {
      const edb = openImmutable(eventsDest);
      try {
        events = { restored: eventsDest, rows: countOf(edb, "events") };
      } finally {
        edb.close();
      }
    }
    const warnings: string[] = [];
    if (report.sealedConnectors > 0 && key.kind === "none") {
      warnings.push(`${report.sealedConnectors} connector(s) hold credentials sealed with a secret key that was not restored (--without-secret-key): enter their credentials again`);
    }
    const secretKey = key.kind === "copy" ? { restored: key.to, from: key.from, keyId: key.keyId } : key.kind === "kept" ? { kept: key.path, keyId: key.keyId } : key.kind === "env" ? { env: "SERVICE_SECRET_KEY", keyId: key.keyId } : undefined;

    if (values.json) {
      console.log(JSON.stringify({ restored: target.path, from: source, projects: report.projects, tables: report.tables, rows: report.rows, ...(events ? { events } : {}), ...(secretKey ? { secretKey } : {}), warnings }));
    } else {
      const names = report.projects.map((p) => p.name).join(", ");
      console.log(`Restored ${target.path} from ${source}: ${report.projects.length} project(s) (${names}), ${report.rows} rows in ${Object.keys(report.tables).length} tables.`);
      if (events) console.log(`Restored ${events.restored} from ${eventsSource}: ${events.rows} events.`);
      if (key.kind === "copy") console.log(`Restored ${key.to} (mode 0600) from ${key.from}: connector credentials open with key ${key.keyId}.`);
      for (const w of warnings) console.log(`warning: ${w}`);
      const storeFlag = target.path === join(dataDir, "service.db") ? "" : ` --store sqlite:${target.path}`;
      console.log(`Start it with: svc serve --data ${dataDir}${storeFlag}`);
    }
    return 0;
  },
};
