import { afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { immediate, migrate, openDatabase, schemaVersion } from "../../src/lib/db";
import { MIGRATIONS } from "../../src/lib/migrations";
import { tempDir } from "../helpers";

const opened: Database[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});
function open(path: string) {
  const db = openDatabase(path);
  opened.push(db);
  return db;
}

test("opens in WAL mode with foreign keys and a busy timeout, migrated to the last step", () => {
  const db = open(join(tempDir(), "service.db"));
  expect((db.query("PRAGMA journal_mode").get() as any).journal_mode).toBe("wal");
  expect((db.query("PRAGMA foreign_keys").get() as any).foreign_keys).toBe(1);
  expect((db.query("PRAGMA busy_timeout").get() as any).timeout).toBe(5000);
  expect(schemaVersion(db)).toBe(MIGRATIONS.length);
});

test("migrating again is a no-op and a newer schema is refused", () => {
  const path = join(tempDir(), "service.db");
  const db = open(path);
  expect(migrate(db)).toBe(0);
  db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
  expect(() => migrate(db)).toThrow(/newer than this binary/);
});

test("tables are STRICT: a wrongly typed value is refused", () => {
  const db = open(join(tempDir(), "service.db"));
  db.exec("PRAGMA foreign_keys = OFF");
  expect(() =>
    db.query("INSERT INTO env_revisions (project_id, env, revision, updated_at) VALUES ('p', 'prod', ?, 'now')").run("seven" as never),
  ).toThrow(/cannot store TEXT value in INTEGER column/);
  expect((db.query("SELECT COUNT(*) AS n FROM env_revisions").get() as any).n).toBe(0);
});

test("a failing step leaves the schema where it was", () => {
  const db = open(join(tempDir(), "service.db"));
  const before = schemaVersion(db);
  expect(() => migrate(db, [...MIGRATIONS, { name: "broken", sql: "CREATE TABLE t (a INTEGER) STRICT; SELECT nope FROM nowhere;" }])).toThrow();
  expect(schemaVersion(db)).toBe(before);
  expect(db.query("SELECT name FROM sqlite_master WHERE name = 't'").get()).toBeNull();
});

test("immediate() rolls back everything when the function throws", () => {
  const db = open(join(tempDir(), "service.db"));
  expect(() =>
    immediate(db, () => {
      db.query("INSERT INTO organisations (id, name, created_at) VALUES ('org_a', 'a', 'now')").run();
      throw new Error("boom");
    }),
  ).toThrow("boom");
  expect((db.query("SELECT COUNT(*) AS n FROM organisations").get() as any).n).toBe(0);
});
