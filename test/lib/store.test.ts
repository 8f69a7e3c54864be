/**
 * The store seam itself (src/lib/store): migrations, the legacy SQLite
 * format, serialised read-then-write, announcements and leases. Every test
 * runs on SQLite, and on PostgreSQL too on the suite's PostgreSQL run (a
 * fresh database per test). "Two instances" are two Store objects on the
 * same file or database, as two servers would hold them.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Migration, type ModuleMigrations, NewerSchemaError, type Store, type StoreTarget, migrate, openStore, parseStoreTarget, withStoreMigrations } from "../../src/lib/store";
import { WalCheckpointer, checkpointProcess } from "../../src/lib/store/checkpointer";
import { childrenOf, ended, running } from "../support/children";
import { SqliteStore } from "../../src/lib/store/sqlite";
import { storeMigrations } from "../../src/modules";
import { TEST_ENGINE, dropStore, freshStoreUrl, tempDir } from "../helpers";

type Engine = "sqlite" | "postgres";
const ENGINES: Engine[] = TEST_ENGINE === "postgres" ? ["sqlite", "postgres"] : ["sqlite"];

/** Every step openStore applies: the store's own first, then the modules' (src/modules/index.ts). */
const ALL_STEPS = (): ModuleMigrations[] => withStoreMigrations(storeMigrations());

const opened: Store[] = [];
const databases: string[] = [];

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const url of databases.splice(0)) await dropStore(url);
});

/** A new empty place to keep data on `engine`: a SQLite file in a temp dir, or a new PostgreSQL database. */
async function freshTarget(engine: Engine): Promise<StoreTarget> {
  const dir = tempDir("svc-store-");
  if (engine === "sqlite") return parseStoreTarget(`sqlite:${join(dir, "service.db")}`, dir);
  const url = (await freshStoreUrl())!;
  databases.push(url);
  return parseStoreTarget(url, dir);
}

/** Opens (and migrates) a store the way the server does; closed after the test. */
async function open(target: StoreTarget): Promise<Store> {
  // A long busy budget: two instances in one process take turns on SQLite's write lock (tests of 503 live elsewhere).
  const store = await openStore(target, { migrations: storeMigrations(), busyBudgetMs: 10_000, poolSize: 4 });
  opened.push(store);
  return store;
}

async function tableExists(store: Store, table: string): Promise<boolean> {
  const sql =
    store.engine === "sqlite"
      ? "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM sqlite_master WHERE type = 'table' AND name = ?"
      : "SELECT CAST(COUNT(*) AS INTEGER) AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name = ?";
  return (await store.one<{ n: number }>(sql, table))!.n === 1;
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await Bun.sleep(10);
  }
  return true;
}

describe.each(ENGINES)("%s", (engine) => {
  describe("migrations", () => {
    test("apply once, each step recorded in schema_migrations; opening again applies nothing", async () => {
      const target = await freshTarget(engine);
      const store = await open(target);
      const recorded = await store.all<{ module: string; step: number; name: string }>("SELECT module, step, name FROM schema_migrations ORDER BY module, step");
      const expected = ALL_STEPS()
        .flatMap(({ module, migrations }) => migrations.map((m, step) => ({ module, step, name: m.name })))
        .sort((a, b) => (a.module === b.module ? a.step - b.step : a.module < b.module ? -1 : 1));
      expect(recorded.map((r) => ({ ...r, step: Number(r.step) }))).toEqual(expected);
      // The modules' tables and the shared ones are there, empty.
      for (const table of ["projects", "sdk_keys", "env_revisions", "audit_log", "store_meta", "store_changes", "store_leases"]) {
        expect(await tableExists(store, table), table).toBe(true);
      }
      expect(await store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM projects")).toEqual({ n: 0 });

      // Another server starting on the same data: nothing to apply, nothing recorded twice.
      const again = await open(target);
      expect(await migrate(again, ALL_STEPS())).toBe(0);
      expect(await again.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM schema_migrations")).toEqual({ n: expected.length });
      // Both see the same epoch (it is the database's, not the process's).
      expect(again.epoch).toBe(store.epoch);
      expect(store.epoch).toMatch(/^[A-Za-z0-9]{10}$/);
    });

    test("a failing step leaves the schema where it was", async () => {
      const store = await open(await freshTarget(engine));
      const before = await store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM schema_migrations");
      const broken: Migration = {
        name: "broken",
        sqlite: "CREATE TABLE t_broken (a INTEGER) STRICT; SELECT nope FROM nowhere;",
        postgres: "CREATE TABLE t_broken (a integer); SELECT nope FROM nowhere;",
      };
      await expect(migrate(store, [...ALL_STEPS(), { module: "extra", migrations: [broken] }])).rejects.toThrow(/nowhere/);
      expect(await store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM schema_migrations")).toEqual(before);
      expect(await store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM schema_migrations WHERE module = 'extra'")).toEqual({ n: 0 });
      expect(await tableExists(store, "t_broken")).toBe(false);
    });

    test("a database migrated further by a newer binary is refused with NewerSchemaError, and left as it is", async () => {
      const target = await freshTarget(engine);
      const store = await open(target);
      const projects = storeMigrations().find((m) => m.module === "projects")!;
      // A newer svc added a step to a module we know...
      await store.run(
        "INSERT INTO schema_migrations (module, step, name, applied_at) VALUES ('projects', ?, 'from a newer binary', '2030-01-01T00:00:00.000Z')",
        projects.migrations.length,
      );
      await expect(openStore(target, { migrations: storeMigrations(), poolSize: 2 })).rejects.toBeInstanceOf(NewerSchemaError);
      await expect(openStore(target, { migrations: storeMigrations(), poolSize: 2 })).rejects.toThrow(/newer svc.*projects/);
      expect(await store.one("SELECT name FROM schema_migrations WHERE module = 'projects' AND step = ?", projects.migrations.length)).toEqual({
        name: "from a newer binary",
      });
      // ...or a module this binary does not have at all.
      await store.run("DELETE FROM schema_migrations WHERE name = 'from a newer binary'");
      await store.run("INSERT INTO schema_migrations (module, step, name, applied_at) VALUES ('billing', 0, 'billing', '2030-01-01T00:00:00.000Z')");
      await expect(openStore(target, { migrations: storeMigrations(), poolSize: 2 })).rejects.toBeInstanceOf(NewerSchemaError);
      // Without the foreign row it opens again.
      await store.run("DELETE FROM schema_migrations WHERE module = 'billing'");
      const reopened = await open(target);
      expect(await migrate(reopened, ALL_STEPS())).toBe(0);
    });

    test("tables refuse a wrongly typed value", async () => {
      const store = await open(await freshTarget(engine));
      await expect(store.run("INSERT INTO store_leases (name, holder, expires_at) VALUES ('typed', 'h', ?)", "seven")).rejects.toThrow(
        engine === "sqlite" ? /cannot store TEXT value in INTEGER column/ : /invalid input syntax/,
      );
      expect(await store.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM store_leases")).toEqual({ n: 0 });
    });
  });

  describe("two instances on the same data", () => {
    test("the same read-then-write under tx.lock, 200 writes at once over two instances, ends at exactly 200", async () => {
      const target = await freshTarget(engine);
      const a = await open(target);
      const b = await open(target);
      await a.exec("CREATE TABLE counter_test (id integer PRIMARY KEY, n integer NOT NULL)");
      await a.run("INSERT INTO counter_test (id, n) VALUES (1, 0)");
      const increment = (store: Store) =>
        store.write(async (tx) => {
          await tx.lock("test:counter");
          const row = await tx.one<{ n: number }>("SELECT n FROM counter_test WHERE id = 1");
          // Give every other writer the chance to read the same value: only the lock keeps their updates from being lost.
          await new Promise((resolve) => setTimeout(resolve, 0));
          await tx.run("UPDATE counter_test SET n = ? WHERE id = 1", Number(row!.n) + 1);
          return Number(row!.n);
        });
      const seen = await Promise.all(Array.from({ length: 200 }, (_, i) => increment(i % 2 === 0 ? a : b)));
      // Every write read the value the previous one wrote: 0..199, each once.
      expect([...seen].sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i));
      expect(Number((await a.one<{ n: number }>("SELECT n FROM counter_test WHERE id = 1"))!.n)).toBe(200);
      expect(Number((await b.one<{ n: number }>("SELECT n FROM counter_test WHERE id = 1"))!.n)).toBe(200);
    }, 30_000);

    test("an announcement of one instance reaches the other's listener within 1 s, and its own listener once", async () => {
      const target = await freshTarget(engine);
      const a = await open(target);
      const b = await open(target);
      const heardByA: string[] = [];
      const heardByB: string[] = [];
      a.listen("test:channel", (p) => heardByA.push(p));
      b.listen("test:channel", (p) => heardByB.push(p));
      b.listen("test:other", (p) => heardByB.push(`other:${p}`));
      const sentAt = performance.now();
      await a.write(async (tx) => {
        tx.announce("test:channel", "hello");
      });
      expect(await waitFor(() => heardByB.includes("hello"), 1000)).toBe(true);
      expect(performance.now() - sentAt).toBeLessThan(1000);
      await Bun.sleep(300);
      expect(heardByB).toEqual(["hello"]);
      expect(heardByA).toEqual(["hello"]);
    });

    test("a rolled-back write announces nothing and stores nothing", async () => {
      const target = await freshTarget(engine);
      const a = await open(target);
      const b = await open(target);
      const heardByA: string[] = [];
      const heardByB: string[] = [];
      a.listen("test:channel", (p) => heardByA.push(p));
      b.listen("test:channel", (p) => heardByB.push(p));
      await expect(
        a.write(async (tx) => {
          await tx.run("INSERT INTO store_meta (key, value) VALUES ('rolled-back', 'x')");
          tx.announce("test:channel", "rolled-back");
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      // A committed announcement after it: once that one has arrived, the rolled-back one would have too.
      await a.write(async (tx) => {
        tx.announce("test:channel", "committed");
      });
      expect(await waitFor(() => heardByB.includes("committed"), 1000)).toBe(true);
      await Bun.sleep(300);
      expect(heardByB).toEqual(["committed"]);
      expect(heardByA).toEqual(["committed"]);
      expect(await b.one("SELECT value FROM store_meta WHERE key = 'rolled-back'")).toBeUndefined();
    });

    test("a lease is held by one instance at a time, renewed by its holder, and taken over once it expires", async () => {
      const target = await freshTarget(engine);
      const a = await open(target);
      const b = await open(target);
      // Asked at the same moment: exactly one gets it.
      const both = await Promise.all([a.lease("test:race", 10_000), b.lease("test:race", 10_000)]);
      expect(both.filter(Boolean)).toHaveLength(1);

      expect(await a.lease("test:job", 400)).toBe(true);
      expect(await b.lease("test:job", 400)).toBe(false);
      // The holder renews it; the other still cannot take it.
      expect(await a.lease("test:job", 400)).toBe(true);
      expect(await b.lease("test:job", 400)).toBe(false);
      await Bun.sleep(500);
      // Expired: the other takes it, and now the first is refused.
      expect(await b.lease("test:job", 10_000)).toBe(true);
      expect(await a.lease("test:job", 10_000)).toBe(false);
      // Leases are per name.
      expect(await a.lease("test:other-job", 10_000)).toBe(true);
    });

    test("a rate window counts every hit once across instances, at the same moment too, and starts again once it ends", async () => {
      const target = await freshTarget(engine);
      const a = await open(target);
      const b = await open(target);
      const now = 1_700_000_000_000;
      const hits = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).countHit("test:key", 60_000, now + i)));
      expect(hits.map((h) => h.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      // One window: it ends a window after its first hit, whichever instance took it.
      expect(new Set(hits.map((h) => h.resetAt)).size).toBe(1);
      const resetAt = hits[0]!.resetAt;
      expect(resetAt - now).toBeGreaterThanOrEqual(60_000);
      expect(resetAt - now).toBeLessThan(60_040);
      // Keys are counted apart.
      expect(await b.countHit("test:other", 1_000, now)).toEqual({ count: 1, resetAt: now + 1_000 });
      // At its end the window starts again from one, and windows that ended are swept.
      expect(await a.countHit("test:key", 60_000, resetAt)).toEqual({ count: 1, resetAt: resetAt + 60_000 });
      expect(await b.countHit("test:key", 60_000, resetAt + 1)).toEqual({ count: 2, resetAt: resetAt + 60_000 });
      // The sweep runs beside the batch that started it (its own transactions): its end is waited for.
      const keysBecome = async (expected: string[]) => {
        let keys: string[] = [];
        for (let i = 0; i < 100; i++, await Bun.sleep(10)) {
          keys = (await a.all<{ key: string }>("SELECT key FROM store_rate_windows ORDER BY key")).map((r) => r.key);
          if (JSON.stringify(keys) === JSON.stringify(expected)) break;
        }
        return keys;
      };
      expect(await keysBecome(["test:key"])).toEqual(["test:key"]);
      await a.countHit("test:third", 60_000, now + 3 * 60_000);
      expect(await keysBecome(["test:third"])).toEqual(["test:third"]);
      // Never inside a write: the count is a write of its own, and would wait for this one's lock.
      await expect(a.write(() => a.countHit("test:key", 60_000, now))).rejects.toThrow("countHit inside a write transaction");
    });

    test("a sweep keeps a window another instance renewed while the sweep ran, and its hits count on", async () => {
      const target = await freshTarget(engine);
      const a = await open(target);
      const b = await open(target);
      const now = Date.now();
      // K's window ended a minute ago.
      await b.run("INSERT INTO store_rate_windows (key, hits, reset_at) VALUES ('K', 5, ?)", now - 60_000);
      // b renews it (a new window, one hit) in a transaction still open while a's first batch sweeps.
      let renewed!: () => void;
      const renewing = b.write(async (tx) => {
        await tx.run(
          `INSERT INTO store_rate_windows (key, hits, reset_at) VALUES ('K', 1, ?1)
           ON CONFLICT (key) DO UPDATE SET hits = 1, reset_at = ?1`,
          now + 60_000,
        );
        await new Promise<void>((resolve) => (renewed = resolve));
      });
      await Bun.sleep(50);
      const other = a.countHit("other", 60_000, now);
      await Bun.sleep(200);
      renewed();
      await renewing;
      expect((await other).count).toBe(1);
      await Bun.sleep(200);
      expect(await a.one("SELECT hits, reset_at FROM store_rate_windows WHERE key = 'K'")).toEqual({ hits: 1, reset_at: engine === "postgres" ? String(now + 60_000) : now + 60_000 });
      expect(await a.countHit("K", 60_000, now + 1)).toEqual({ count: 2, resetAt: now + 60_000 });
    });
  });
});

/**
 * Before modules had their own lists, a SQLite file counted one global list
 * of 13 steps in PRAGMA user_version (src/lib/store/migrate.ts). Files of
 * that era exist in the wild: they are adopted, never migrated again.
 */
describe("a legacy SQLite file (PRAGMA user_version)", () => {
  /** The single list's order, as (module, step): PRAGMA user_version 1..13. */
  const LEGACY_STEPS: Array<[string, number]> = [
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

  /** Writes the file an old svc would have left: its 13 steps (the released SQL, verbatim), user_version 13, some data. */
  function legacyFile(version = LEGACY_STEPS.length): { path: string; identity: string } {
    const path = join(tempDir("svc-legacy-"), "service.db");
    const steps = new Map(ALL_STEPS().map((m) => [m.module, m.migrations]));
    const db = new Database(path, { create: true, strict: true });
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA foreign_keys = ON");
    for (const [module, step] of LEGACY_STEPS) db.exec(steps.get(module)![step]!.sqlite);
    const st = statSync(path);
    const identity = `${st.dev}:${st.ino}`;
    db.query("INSERT INTO organisations (id, name, created_at) VALUES ('org_legacy', 'Legacy Ltd', '2026-01-01T00:00:00.000Z')").run();
    db.query("INSERT INTO store_meta (key, value) VALUES ('epoch', 'legacyEpoc'), ('file_identity', ?)").run(identity);
    db.exec(`PRAGMA user_version = ${version}`);
    db.close();
    return { path, identity };
  }

  test("user_version 13 with the old tables is adopted without re-running a step; only the newer steps run", async () => {
    const { path } = legacyFile();
    // Re-running any released step would fail: its CREATE TABLE finds the table there.
    const store = await open(parseStoreTarget(`sqlite:${path}`, tempDir()));
    const rows = await store.all<{ module: string; step: number; name: string }>("SELECT module, step, name FROM schema_migrations");
    const recorded = new Map(rows.map((r) => [`${r.module}/${r.step}`, r.name]));
    // Every legacy step is recorded as adopted...
    for (const [module, step] of LEGACY_STEPS) expect(recorded.get(`${module}/${step}`), `${module}/${step}`).toBe(`${module} ${step + 1} (user_version)`);
    // ...and every later step was applied under its own name.
    const legacy = new Set(LEGACY_STEPS.map(([m, s]) => `${m}/${s}`));
    const later = ALL_STEPS().flatMap(({ module, migrations }) => migrations.map((m, step) => ({ key: `${module}/${step}`, name: m.name }))).filter((s) => !legacy.has(s.key));
    expect(later.map((s) => s.key)).toContain("store/1");
    expect(later.map((s) => s.key)).toContain("audit/0");
    for (const s of later) expect(recorded.get(s.key), s.key).toBe(s.name);
    expect(rows).toHaveLength(legacy.size + later.length);

    expect(await store.one("SELECT id, name FROM organisations")).toEqual({ id: "org_legacy", name: "Legacy Ltd" });
    expect(await tableExists(store, "audit_log")).toBe(true);
    expect(await tableExists(store, "store_leases")).toBe(true);
    // The same file keeps its epoch: SDKs' ETags stay valid across the upgrade.
    expect(store.epoch).toBe("legacyEpoc");
    await store.close();
    opened.splice(opened.indexOf(store), 1);

    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.query("PRAGMA user_version").get()).toEqual({ user_version: 0 });
    } finally {
      raw.close();
    }
    // Opening it again applies nothing.
    const again = await open(parseStoreTarget(`sqlite:${path}`, tempDir()));
    expect(await migrate(again, ALL_STEPS())).toBe(0);
    expect(await again.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM schema_migrations")).toEqual({ n: rows.length });
  });

  test("a user_version beyond the single list (a newer binary of that era) is refused with NewerSchemaError", async () => {
    const { path } = legacyFile(LEGACY_STEPS.length + 1);
    await expect(openStore(parseStoreTarget(`sqlite:${path}`, tempDir()), { migrations: storeMigrations() })).rejects.toBeInstanceOf(NewerSchemaError);
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.query("PRAGMA user_version").get()).toEqual({ user_version: LEGACY_STEPS.length + 1 });
      expect(raw.query("SELECT name FROM sqlite_master WHERE name = 'schema_migrations'").get()).toBeNull();
    } finally {
      raw.close();
    }
  });
});

describe("opening a store whose schema is current (SQLite)", () => {
  test("takes no write lock: it opens while another process holds SQLite's, and finds every step recorded", async () => {
    const target = await freshTarget("sqlite");
    const first = await open(target);
    expect(await first.one("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM schema_migrations")).toEqual({ n: ALL_STEPS().reduce((n, m) => n + m.migrations.length, 0) });
    // Another process's long write: SQLite's write lock, held.
    const other = new Database((target as { path: string }).path);
    other.exec("BEGIN IMMEDIATE");
    try {
      const started = performance.now();
      const second = await openStore(target, { migrations: storeMigrations(), busyBudgetMs: 300 });
      opened.push(second);
      // A write would have waited out the budget and failed; the check is a read.
      expect(performance.now() - started).toBeLessThan(300);
      expect(second.epoch).toBe(first.epoch);
      expect(await migrate(second, ALL_STEPS())).toBe(0);
      // The lock is held indeed: a write waits out its budget and is refused.
      await expect(second.write((tx) => tx.run("DELETE FROM store_meta WHERE key = 'nothing'"))).rejects.toMatchObject({ code: "UNAVAILABLE" });
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
  });
});

describe("reads before the read-only connection opens (SQLite)", () => {
  // The server's start reads through the writer (issue 32: cold start); the reader opens with the first poll.
  test("a read while this process's write transaction is open sees only committed rows; the reader opens then", async () => {
    const store = (await open(await freshTarget("sqlite"))) as SqliteStore;
    const readerOpen = () => (store as unknown as { readerConnection?: unknown }).readerConnection !== undefined;
    expect(readerOpen()).toBe(false);
    const count = async () => (await store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM store_meta WHERE key = 'probe'"))!.n;
    // Read through the writer while it holds no transaction: the committed data.
    expect(await count()).toBe(0);
    expect(readerOpen()).toBe(false);
    const { promise: inserted, resolve: insertedNow } = Promise.withResolvers<void>();
    const { promise: commit, resolve: commitNow } = Promise.withResolvers<void>();
    const writing = store.write(async (tx) => {
      await tx.run("INSERT INTO store_meta (key, value) VALUES ('probe', 'uncommitted')");
      insertedNow();
      await commit;
    });
    await inserted;
    try {
      // The transaction awaits with its row written: a read outside it must not see that row.
      expect(await count()).toBe(0);
      expect(readerOpen()).toBe(true);
    } finally {
      commitNow();
      await writing;
    }
    expect(await count()).toBe(1);
  });

  test("another process's commit is picked up by the first poll, which opens the reader", async () => {
    const target = await freshTarget("sqlite");
    const store = (await openStore(target, { migrations: storeMigrations(), busyBudgetMs: 10_000 })) as SqliteStore;
    opened.push(store);
    const heard: string[] = [];
    store.listen("probe", (payload) => heard.push(String(payload)));
    const other = await open(target);
    await other.write(async (tx) => tx.announce("probe", "from the other"));
    expect(await waitFor(() => heard.length > 0, 2000)).toBe(true);
    expect(heard).toEqual(["from the other"]);
    expect((store as unknown as { readerConnection?: unknown }).readerConnection).toBeDefined();
  });
});

/**
 * The server's SQLite files checkpoint in a child process (src/lib/store/checkpointer.ts, checkpoint-process.ts):
 * the writer's own automatic checkpoint is off, the process folds the WAL back in, and closing leaves no WAL behind
 * and no process running.
 */
describe("background WAL checkpoints (SQLite)", () => {
  /** Whether the checkpoint process runs, and how many files it serves. */
  const checkpointing = () => ({ running: checkpointProcess().running, files: checkpointProcess().files });
  /** A WAL database of its own (no store around it): its writer's checkpoint threshold, and a burst of 500 KB of writes. */
  const walFile = (name: string) => {
    const path = join(tempDir("svc-checkpoint-"), name);
    const db = new Database(path, { create: true });
    db.run("PRAGMA journal_mode = WAL");
    db.run("CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    const threshold = () => (db.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
    const burst = (body = "x") => {
      for (let i = 0; i < 1000; i++) db.run("INSERT INTO filler (body) VALUES (?)", [body.repeat(500)]);
    };
    return { path, db, threshold, burst };
  };

  test("idle, no checkpoint process runs; written to, the writer stops checkpointing and the process folds 2,200 writes' WAL into the file, close removes the WAL", async () => {
    const dir = tempDir("svc-checkpoint-");
    const path = join(dir, "service.db");
    const store = (await open(parseStoreTarget(`sqlite:${path}`, dir))) as SqliteStore;
    const writerThreshold = () => (store.database.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
    expect(writerThreshold()).toBe(1000);
    await store.checkpointInBackground();
    // Idle, no process runs (issue 32: it is a whole VM): the WAL was reset, and the writer keeps its own checkpoint.
    await Bun.sleep(1500);
    expect(store.checkpointer!.running).toBe(false);
    expect(checkpointProcess().running).toBe(false);
    expect(writerThreshold()).toBe(1000);
    expect(statSync(`${path}-wal`).size).toBe(0);

    await store.exec("CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    for (let i = 0; i < 2000; i++) await store.write((tx) => tx.run("INSERT INTO filler (body) VALUES (?)", "x".repeat(500)));
    // Written to, the process takes over: the writer stops checkpointing.
    expect(await waitFor(() => writerThreshold() === 0, 5000)).toBe(true);
    for (let i = 0; i < 200; i++) await store.write((tx) => tx.run("INSERT INTO filler (body) VALUES (?)", "x".repeat(500)));
    // Every frame the writer wrote is copied back by the process within a few of its 1 s turns.
    expect(await waitFor(() => (store.checkpointer?.lastTurn?.log ?? 0) > 0 && store.checkpointer!.lastTurn!.checkpointed === store.checkpointer!.lastTurn!.log, 5000)).toBe(true);
    const raw = new Database(path, { readonly: true });
    try {
      expect((raw.query("SELECT COUNT(*) AS n FROM filler").get() as { n: number }).n).toBe(2200);
    } finally {
      raw.close();
    }

    await store.close();
    opened.splice(opened.indexOf(store), 1);
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = new Database(path, { readonly: true });
    try {
      expect((reopened.query("SELECT COUNT(*) AS n FROM filler").get() as { n: number }).n).toBe(2200);
    } finally {
      reopened.close();
    }
  });

  test("the server's two files share one checkpoint process, a child of the server's, ended with the last (issue 32: it is a whole VM)", async () => {
    const dir = tempDir("svc-checkpoint-");
    const a = (await open(parseStoreTarget(`sqlite:${join(dir, "a.db")}`, dir))) as SqliteStore;
    const b = (await open(parseStoreTarget(`sqlite:${join(dir, "b.db")}`, dir))) as SqliteStore;
    expect(checkpointing()).toEqual({ running: false, files: 0 });
    await a.checkpointInBackground();
    await b.checkpointInBackground();
    // Both are checkpointed by it.
    for (const s of [a, b]) {
      await s.exec("CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
      for (let i = 0; i < 1500; i++) await s.write((tx) => tx.run("INSERT INTO filler (body) VALUES (?)", "x".repeat(500)));
    }
    expect(await waitFor(() => a.checkpointer!.running && b.checkpointer!.running, 5000)).toBe(true);
    expect(checkpointing()).toEqual({ running: true, files: 2 });
    // One child process of this one serves both (a process, not a thread: issue 32).
    const pid = checkpointProcess().pid!;
    expect(pid).not.toBe(process.pid);
    expect(childrenOf(process.pid)).toContain(pid);
    expect(running(pid)).toBe(true);
    for (let i = 0; i < 50; i++) for (const s of [a, b]) await s.write((tx) => tx.run("INSERT INTO filler (body) VALUES (?)", "y"));
    for (const s of [a, b]) expect(await waitFor(() => (s.checkpointer?.lastTurn?.log ?? 0) > 0, 5000)).toBe(true);
    await a.close();
    opened.splice(opened.indexOf(a), 1);
    expect(checkpointing()).toEqual({ running: true, files: 1 });
    await b.close();
    opened.splice(opened.indexOf(b), 1);
    expect(checkpointing()).toEqual({ running: false, files: 0 });
    expect(await ended(pid)).toBe(true);
    expect(existsSync(join(dir, "a.db-wal")) || existsSync(join(dir, "b.db-wal"))).toBe(false);
  });

  test("quiet for its idle turns, a file goes back to its writer with its WAL emptied, the process ends, and the next burst starts it again", async () => {
    const { path, db, threshold, burst } = walFile("quiet.db");
    const checkpointer = new WalCheckpointer(path, db, { everyMs: 50, idleTurns: 4 });
    try {
      checkpointer.startWhenWritten();
      burst();
      expect(await waitFor(() => checkpointer.running && threshold() === 0, 5000)).toBe(true);
      expect(checkpointing()).toEqual({ running: true, files: 1 });
      const pid = checkpointProcess().pid!;

      // Nothing more is written: after four quiet turns the file is handed back, the WAL emptied, the process ended.
      expect(await waitFor(() => checkpointer.idleStops === 1, 5000)).toBe(true);
      expect(checkpointer.running).toBe(false);
      expect(checkpointing()).toEqual({ running: false, files: 0 });
      expect(await ended(pid)).toBe(true);
      expect(threshold()).toBe(1000);
      expect(statSync(`${path}-wal`).size).toBe(0);

      // The next burst grows the WAL past the lazy start and the process takes the file again.
      burst();
      expect(await waitFor(() => checkpointer.running && threshold() === 0, 5000)).toBe(true);
      expect(checkpointing()).toEqual({ running: true, files: 1 });
      expect((db.query("SELECT COUNT(*) AS n FROM filler").get() as { n: number }).n).toBe(2000);
    } finally {
      await checkpointer.stop();
      db.close();
    }
    expect(checkpointing()).toEqual({ running: false, files: 0 });
  });

  test("a checkpoint process that dies gives every file's writer its automatic checkpoint back and says why; the next burst starts a fresh one", async () => {
    const { db, path, threshold, burst } = walFile("killed.db");
    const errors: string[] = [];
    const checkpointer = new WalCheckpointer(path, db, { everyMs: 50, onError: (m) => errors.push(m) });
    try {
      checkpointer.startWhenWritten();
      burst();
      expect(await waitFor(() => checkpointer.running && threshold() === 0, 5000)).toBe(true);
      const pid = checkpointProcess().pid!;
      process.kill(pid, "SIGKILL");
      expect(await waitFor(() => errors.length > 0, 5000)).toBe(true);
      expect(errors[0]).toContain("the checkpoint process ended");
      expect(threshold()).toBe(1000);
      expect(checkpointer.running).toBe(false);
      expect(checkpointing()).toEqual({ running: false, files: 0 });
      // As after an idle hand-back: the next burst grows the WAL again, and a new process takes the file.
      burst();
      expect(await waitFor(() => checkpointer.running && threshold() === 0, 5000)).toBe(true);
      expect(checkpointProcess().pid).not.toBe(pid);
      // ... and folds what is written from then on into the file.
      const turns = checkpointer.turns;
      burst("y");
      expect(await waitFor(() => checkpointer.turns > turns && checkpointer.lastTurn!.log > 0 && checkpointer.lastTurn!.checkpointed === checkpointer.lastTurn!.log, 5000)).toBe(true);
      expect(errors.length).toBe(1);
    } finally {
      await checkpointer.stop();
      db.close();
    }
    expect(checkpointing()).toEqual({ running: false, files: 0 });
  });

  test("Ctrl-C or systemctl stop (SIGINT, SIGTERM to the process group) do not end the checkpoint process: the server closes its files, then ends it", async () => {
    const { path, db } = walFile("signalled.db");
    const errors: string[] = [];
    const checkpointer = new WalCheckpointer(path, db, { everyMs: 50, onError: (m) => errors.push(m) });
    let pid = 0;
    try {
      await checkpointer.start();
      pid = checkpointProcess().pid!;
      process.kill(pid, "SIGINT");
      process.kill(pid, "SIGTERM");
      await Bun.sleep(300);
      expect(running(pid)).toBe(true);
      expect(checkpointer.running).toBe(true);
      expect(errors).toEqual([]);
      const started = performance.now();
      await checkpointer.stop();
      // Closed at its request (no 2 s give-up), then ended.
      expect(performance.now() - started).toBeLessThan(1500);
    } finally {
      await checkpointer.stop();
      db.close();
    }
    expect(await ended(pid)).toBe(true);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  test("a checkpoint process that cannot open the file gives the writer its automatic checkpoint back and says why", async () => {
    const dir = tempDir("svc-checkpoint-");
    const path = join(dir, "service.db");
    const store = await open(parseStoreTarget(`sqlite:${path}`, dir));
    const raw = (store as SqliteStore).database;
    const errors: string[] = [];
    // The process opens the file by this path without creating it: gone, it fails to start.
    const checkpointer = new WalCheckpointer(join(dir, "missing.db"), raw, { onError: (m) => errors.push(m) });
    await checkpointer.start();
    expect(errors.length).toBe(1);
    expect((raw.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint).toBe(1000);
    await checkpointer.stop();
  });
});
