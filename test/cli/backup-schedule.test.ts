/**
 * Scheduled backups (`svc serve --backup-dir --backup-every --backup-keep`,
 * issue 16): the settings and their mistakes, the schedule itself on a real
 * store with a stepped clock (names sortable by time, the newest N kept,
 * the next one due an interval after the newest on disk, failures logged and
 * never thrown), and a spawned server backing up every second. SQLite only:
 * on PostgreSQL the flags are refused at start (backup-restore.test.ts).
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { backupScheduleOf, parseDuration, scheduledName, startScheduledBackups } from "../../src/lib/backups";
import type { Logger } from "../../src/lib/log";
import { type Store, openStore, parseStoreTarget } from "../../src/lib/store";
import { storeMigrations } from "../../src/modules";
import { TEST_ENGINE, tempDir } from "../helpers";
import { SVC_SOURCE, run, startServe } from "./process";

describe("settings", () => {
  test("durations: 6h, 30m, 1h30m, 1d, 45s", () => {
    expect(parseDuration("6h")).toBe(6 * 3600_000);
    expect(parseDuration("30m")).toBe(30 * 60_000);
    expect(parseDuration("1h30m")).toBe(90 * 60_000);
    expect(parseDuration("1d")).toBe(86_400_000);
    expect(parseDuration("45s")).toBe(45_000);
    for (const bad of ["", "6", "h", "1.5h", "-1h", "30m1h", "1w", "6 h", "PT6H"]) expect(parseDuration(bad)).toBeUndefined();
  });

  test("flags win over the environment; defaults 24h and 7; nothing without a directory", () => {
    expect(backupScheduleOf({}, {})).toBeUndefined();
    expect(backupScheduleOf({}, { SERVICE_BACKUP_DIR: "" })).toBeUndefined();
    expect(backupScheduleOf({ "backup-dir": "/b" }, {})).toEqual({ dir: "/b", everyMs: 86_400_000, keep: 7 });
    expect(backupScheduleOf({}, { SERVICE_BACKUP_DIR: "/e", SERVICE_BACKUP_EVERY: "30m", SERVICE_BACKUP_KEEP: "3" })).toEqual({ dir: "/e", everyMs: 1_800_000, keep: 3 });
    expect(backupScheduleOf({ "backup-dir": "/f", "backup-every": "6h", "backup-keep": "2" }, { SERVICE_BACKUP_DIR: "/e", SERVICE_BACKUP_EVERY: "30m", SERVICE_BACKUP_KEEP: "3" })).toEqual({
      dir: "/f",
      everyMs: 21_600_000,
      keep: 2,
    });
  });

  test("mistakes are usage errors that say what to write", () => {
    const cases: [Record<string, string>, Record<string, string>, RegExp][] = [
      [{ "backup-every": "6h" }, {}, /need --backup-dir DIR/],
      [{}, { SERVICE_BACKUP_KEEP: "3" }, /need --backup-dir DIR/],
      [{ "backup-dir": "/b", "backup-every": "6 hours" }, {}, /--backup-every: must be a duration .* \(was "6 hours"\)/],
      [{ "backup-dir": "/b", "backup-every": "0s" }, {}, /from 1s to 366d/],
      [{ "backup-dir": "/b", "backup-every": "400d" }, {}, /from 1s to 366d/],
      [{ "backup-dir": "/b", "backup-keep": "0" }, {}, /--backup-keep: must be a whole number from 1 to 10000 \(was "0"\)/],
      [{ "backup-dir": "/b" }, { SERVICE_BACKUP_KEEP: "three" }, /--backup-keep/],
    ];
    for (const [flags, env, message] of cases) expect(() => backupScheduleOf(flags, env)).toThrow(message);
  });

  test("svc serve refuses them with exit 2 before starting, and an unwritable directory too", async () => {
    const dir = tempDir();
    const bad = await run([...SVC_SOURCE, "serve", "--port", "0", "--data", dir, "--backup-dir", join(dir, "b"), "--backup-every", "often"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--backup-every: must be a duration");
    const orphan = await run([...SVC_SOURCE, "serve", "--port", "0", "--data", dir], { env: { SERVICE_BACKUP_EVERY: "1h" } });
    expect(orphan.code).toBe(2);
    expect(orphan.stderr).toContain("need --backup-dir");
    writeFileSync(join(dir, "a-file"), "");
    const unwritable = await run([...SVC_SOURCE, "serve", "--port", "0", "--data", dir, "--backup-dir", join(dir, "a-file", "sub")]);
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toContain("cannot write there");
    expect(existsSync(join(dir, "service.db"))).toBe(false);
  });
});

type Line = { level: string; msg: string; [k: string]: unknown };

function capturingLog(): { log: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, ...fields });
  return { lines, log: { info: at("info"), warn: at("warn"), error: at("error"), request: () => {}, requests: false } as Logger };
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(20);
  }
}

describe.skipIf(TEST_ENGINE !== "sqlite")("the schedule", () => {
  const stores: Store[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
  });
  async function store(): Promise<Store & { path: string }> {
    const s = await openStore(parseStoreTarget(undefined, tempDir()), { migrations: storeMigrations() });
    stores.push(s);
    await s.run("INSERT INTO store_meta (key, value) VALUES ('marker', 'backed up')");
    return s as Store & { path: string };
  }

  test("the first at once, names sortable by time, the newest N kept, other files never touched", async () => {
    const s = await store();
    const dir = tempDir();
    writeFileSync(join(dir, "notes.txt"), "mine");
    writeFileSync(join(dir, "service-latest.db"), "not one of ours");
    let now = Date.parse("2026-11-24T10:15:00.250Z");
    const { log, lines } = capturingLog();
    const backups = startScheduledBackups(s, { dir, everyMs: 3600_000, keep: 2 }, log, () => now);
    await until(() => lines.some((l) => l.msg === "backup written"));
    expect(lines[0]).toMatchObject({ msg: "scheduled backups", dir, everySeconds: 3600, keep: 2, next: "2026-11-24T10:15:00.250Z" });
    for (let i = 0; i < 3; i++) {
      now += 3600_000;
      await backups.runOnce();
    }
    await backups.stop();
    expect(readdirSync(dir).sort()).toEqual(["notes.txt", "service-20261124T121500Z.db", "service-20261124T131500Z.db", "service-latest.db"]);
    const written = lines.filter((l) => l.msg === "backup written");
    expect(written.map((l) => l.file)).toEqual(["T101500Z", "T111500Z", "T121500Z", "T131500Z"].map((t) => join(dir, `service-20261124${t}.db`)));
    expect(written[2]).toMatchObject({ kept: 2, removed: ["service-20261124T101500Z.db"] });
    expect(written[3]!.bytes).toBeGreaterThan(4096);
    // Each is a whole svc database, 0600.
    const file = join(dir, "service-20261124T131500Z.db");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const copy = new Database(file, { readonly: true });
    expect(copy.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(copy.query("SELECT value FROM store_meta WHERE key = 'marker'").get()).toEqual({ value: "backed up" });
    copy.close();
  });

  test("the next is due an interval after the newest on disk, so restarts neither skip nor repeat one", async () => {
    const s = await store();
    const dir = tempDir();
    const now = Date.parse("2026-11-24T10:15:00.000Z");
    writeFileSync(join(dir, scheduledName(new Date(now - 20 * 60_000))), "");
    const { log, lines } = capturingLog();
    const backups = startScheduledBackups(s, { dir, everyMs: 3600_000, keep: 5 }, log, () => now);
    expect(lines[0]).toMatchObject({ msg: "scheduled backups", next: "2026-11-24T10:55:00.000Z" });
    await Bun.sleep(100);
    expect(lines.some((l) => l.msg === "backup written")).toBe(false);
    await backups.stop();
    expect(scheduledName(new Date(now))).toBe("service-20261124T101500Z.db");
  });

  test("a failure is logged and retried next time; the server goes on; a dead run's partial file is cleared", async () => {
    const s = await store();
    const dir = tempDir();
    const stale = join(dir, ".service-20261101T000000Z.db.partial");
    const young = join(dir, ".service-20261124T101400Z.db.partial");
    writeFileSync(stale, "half");
    writeFileSync(young, "half");
    const longAgo = new Date(Date.parse("2026-11-01T00:00:00Z"));
    utimesSync(stale, longAgo, longAgo);
    let now = Date.now();
    const { log, lines } = capturingLog();
    // Far off: only runOnce below writes.
    const backups = startScheduledBackups(s, { dir: join(dir), everyMs: 3600_000, keep: 3 }, log, () => now);
    await until(() => lines.some((l) => l.msg === "backup written"));
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(young)).toBe(true);

    rmSync(dir, { recursive: true });
    now += 3600_000;
    await backups.runOnce();
    const failed = lines.find((l) => l.msg.startsWith("backup failed"));
    expect(failed).toMatchObject({ level: "error", error: expect.stringContaining("ENOENT") });

    mkdirSync(dir);
    now += 3600_000;
    await backups.runOnce();
    expect(lines.filter((l) => l.msg === "backup written")).toHaveLength(2);
    expect(readdirSync(dir)).toEqual([scheduledName(new Date(now))]);
    // The store is untouched by all this.
    expect(await s.one("SELECT value FROM store_meta WHERE key = 'marker'")).toEqual({ value: "backed up" });
    await backups.stop();
  });

  test("stop waits for the backup in flight and ends the timer", async () => {
    const s = await store();
    const dir = tempDir();
    const { log, lines } = capturingLog();
    const backups = startScheduledBackups(s, { dir, everyMs: 50, keep: 100 }, log, Date.now);
    await until(() => lines.some((l) => l.msg === "backup written"));
    const pending = backups.runOnce();
    await backups.stop();
    await pending;
    const count = readdirSync(dir).length;
    await Bun.sleep(300);
    expect(readdirSync(dir).length).toBe(count);
    expect(readdirSync(dir).every((n) => /^service-\d{8}T\d{6}Z\.db$/.test(n))).toBe(true);
  });
});

describe.skipIf(TEST_ENGINE !== "sqlite")("svc serve --backup-dir", () => {
  test("backs up every second, keeps the newest 2, logs each as a JSON line, stops on SIGTERM", async () => {
    const data = tempDir();
    const dir = join(tempDir(), "backups");
    expect((await run([...SVC_SOURCE, "init", "--data", data, "--json"])).code).toBe(0);
    const server = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--host", "127.0.0.1", "--data", data, "--no-request-log"], {
      env: { SERVICE_BACKUP_DIR: dir, SERVICE_BACKUP_EVERY: "1s", SERVICE_BACKUP_KEEP: "2" },
    });
    const written = () => server.lines().filter((l) => l.includes('"backup written"'));
    await until(() => written().length >= 3, 15_000);
    // Requests are answered meanwhile.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    const logged = written().map((l) => JSON.parse(l));
    expect(logged[0]).toMatchObject({ level: "info", msg: "backup written", kept: 1, removed: [] });
    expect(logged[2]).toMatchObject({ kept: 2, removed: [expect.stringMatching(/^service-\d{8}T\d{6}Z\.db$/)] });
    // The newest 2 and the server's secret key (0600), which rotation never removes (issue 27, item 18).
    const all = readdirSync(dir).sort();
    expect(all[0]).toBe("secret.key");
    expect(statSync(join(dir, "secret.key")).mode & 0o777).toBe(0o600);
    const files = all.slice(1);
    expect(files).toHaveLength(2);
    expect(files.every((n) => /^service-\d{8}T\d{6}Z\.db$/.test(n))).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    // No more after the stop.
    await Bun.sleep(1500);
    expect(readdirSync(dir).sort()).toEqual(all);
  }, 60_000);
});
