import { Database, constants } from "bun:sqlite";
import { accessSync, closeSync, constants as fsConstants, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Logger } from "./log";
import type { Store } from "./store";
import { UsageError } from "./usage-error";

/*
 * Backup files: the scheduled backups of `svc serve --backup-dir`, and the
 * file helpers `svc restore` shares with them. Plain checks, no arktype:
 * `svc serve` imports this file, and the server stays free of arktype's
 * resident memory (see src/cli/serve.ts).
 */

/** `service-20261124T101500Z.db`: UTC to the second, so names sort by time. */
export const SCHEDULED_NAME = /^service-(\d{8}T\d{6}Z)\.db$/;
/** Written under this name first; a crash mid-copy leaves only a dot-file that is never taken for a backup. */
const PARTIAL = /^\.service-\d{8}T\d{6}Z\.db\.partial$/;

export function scheduledName(at: Date): string {
  return `service-${at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z")}.db`;
}

function timeOfName(name: string): number | undefined {
  const m = SCHEDULED_NAME.exec(name);
  if (!m) return undefined;
  const s = m[1]!;
  return Date.parse(`${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(9, 11)}:${s.slice(11, 13)}:${s.slice(13, 15)}Z`);
}

/**
 * Opens a SQLite file read-only and `immutable`: SQLite then takes no lock and
 * creates no -wal or -shm beside it, so checking a backup never writes
 * anything next to it (it may sit on a read-only mount).
 */
export function openImmutable(path: string): Database {
  const uri = `file:${resolve(path).replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}?immutable=1`;
  return new Database(uri, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI);
}

/** Flushes a file (or a directory's entries) to disk: a backup is only a backup once it survives a power cut. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Puts a finished temporary file in place under its final name in the same
 * directory, atomically, never over an existing file: a hard link fails when
 * the name exists (a rename would replace it). Filesystems without hard links
 * fall back to a rename after a last check.
 */
export function placeFile(temp: string, final: string, dir: string): void {
  fsyncPath(temp);
  try {
    linkSync(temp, final);
    rmSync(temp, { force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw err;
    if (existsSync(final)) throw Object.assign(new Error(`${final} already exists`), { code: "EEXIST" });
    renameSync(temp, final);
  }
  fsyncPath(dir);
}

/** `keyFile`: the server's secret.key, kept in `dir` beside the backups (its credentials open with nothing else). */
export type BackupSchedule = { dir: string; everyMs: number; keep: number; keyFile?: string };

const UNITS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/** `6h`, `30m`, `1h30m`, `1d`, `45s` → milliseconds; undefined when it is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text.trim());
  if (!m || text.trim() === "") return undefined;
  let ms = 0;
  ["d", "h", "m", "s"].forEach((unit, i) => {
    if (m[i + 1] !== undefined) ms += Number(m[i + 1]) * UNITS[unit]!;
  });
  return ms;
}

const DEFAULT_EVERY = "24h";
const DEFAULT_KEEP = 7;

/**
 * `--backup-dir`, `--backup-every`, `--backup-keep` (flags win over
 * SERVICE_BACKUP_DIR / _EVERY / _KEEP). Undefined when no directory is set;
 * the other two without a directory are a mistake, not silently ignored.
 */
export function backupScheduleOf(values: Record<string, unknown>, env: Record<string, string | undefined>): BackupSchedule | undefined {
  const pick = (flag: string, name: string) => {
    const value = (values[flag] as string | undefined) ?? env[name];
    return value === undefined || value.trim() === "" ? undefined : value.trim();
  };
  const dir = pick("backup-dir", "SERVICE_BACKUP_DIR");
  const every = pick("backup-every", "SERVICE_BACKUP_EVERY");
  const keep = pick("backup-keep", "SERVICE_BACKUP_KEEP");
  if (dir === undefined) {
    if (every !== undefined || keep !== undefined) {
      throw new UsageError("--backup-every and --backup-keep need --backup-dir DIR (or SERVICE_BACKUP_DIR): where the backups go");
    }
    return undefined;
  }
  const everyMs = parseDuration(every ?? DEFAULT_EVERY);
  if (everyMs === undefined || everyMs < 1000 || everyMs > 366 * UNITS.d!) {
    throw new UsageError(`--backup-every: must be a duration from 1s to 366d such as 6h, 30m or 1h30m (was "${every}")`);
  }
  const keepN = keep === undefined ? DEFAULT_KEEP : /^\d{1,5}$/.test(keep) ? Number(keep) : Number.NaN;
  if (!(keepN >= 1 && keepN <= 10_000)) throw new UsageError(`--backup-keep: must be a whole number from 1 to 10000 (was "${keep}")`);
  return { dir: resolve(dir), everyMs, keep: keepN };
}

/** Creates the backup directory (0700) and checks that it is writable, so that a wrong path stops the start instead of failing hours later. */
export function prepareBackupDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
    accessSync(dir, fsConstants.W_OK);
  } catch (err) {
    throw new UsageError(`--backup-dir ${dir}: cannot write there (${(err as Error).message}); create it and let the server's user write to it`);
  }
}

/**
 * The copy runs on a worker thread with its own read-only connection:
 * `VACUUM INTO` reads the whole database, which on the server's thread would
 * stall every request for as long. (The store's writer connection cannot do
 * it either: VACUUM refuses to run inside the transaction it may hold.)
 */
const VACUUM_WORKER = `
const { Database } = require("bun:sqlite");
self.onmessage = ({ data }) => {
  let db;
  try {
    db = new Database(data.source, { readonly: true });
    db.run("PRAGMA busy_timeout = 5000");
    db.query("VACUUM INTO ?").run(data.target);
    postMessage({ ok: true });
  } catch (err) {
    postMessage({ error: err instanceof Error ? err.message : String(err) });
  } finally {
    db?.close();
  }
};
`;
let workerUrl: string | undefined;

/** `VACUUM INTO target` of the SQLite file `source`, off the event loop. `target` must exist and be empty. */
export function vacuumInto(source: string, target: string): Promise<void> {
  workerUrl ??= URL.createObjectURL(new Blob([VACUUM_WORKER], { type: "application/javascript" }));
  const worker = new Worker(workerUrl);
  return new Promise<void>((done, fail) => {
    worker.onmessage = ({ data }: MessageEvent<{ ok?: true; error?: string }>) => (data.error === undefined ? done() : fail(new Error(data.error)));
    worker.onerror = (event) => fail(new Error(event.message));
    worker.postMessage({ source, target });
  }).finally(() => worker.terminate());
}

/**
 * Copies the server's secret.key into the backup directory (0600) when it is not there yet or differs,
 * so `svc restore --from DIR/service-….db` finds it beside the file (issue 27, item 18).
 */
function keepKeyBeside(keyFile: string | undefined, dir: string): void {
  if (!keyFile || !existsSync(keyFile)) return;
  const text = readFileSync(keyFile, "utf8");
  const dest = join(dir, "secret.key");
  if (existsSync(dest) && readFileSync(dest, "utf8") === text) return;
  const temp = join(dir, `.secret.key.${process.pid}.partial`);
  writeFileSync(temp, text, { mode: 0o600 });
  fsyncPath(temp);
  renameSync(temp, dest);
}

export type ScheduledBackups = {
  /** Writes one backup now (the timer's job; tests call it). Never throws: failures are logged. */
  runOnce(): Promise<void>;
  /** Stops the timer and waits for a backup in flight. */
  stop(): Promise<void>;
};

/**
 * Backs the SQLite store up into `schedule.dir` every `everyMs`, keeping the
 * newest `keep` files. The next backup is due `everyMs` after the newest one
 * in the directory, so restarts neither skip nor repeat one (at once when
 * there is none). With several processes on one file, a lease lets one of
 * them write each backup. Failures are logged and retried at the next turn;
 * they never stop the server.
 */
export function startScheduledBackups(
  store: Store & { path: string },
  schedule: BackupSchedule,
  log: Logger,
  clock: () => number = Date.now,
): ScheduledBackups {
  const { dir, everyMs, keep } = schedule;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const ours = () => readdirSync(dir).filter((n) => SCHEDULED_NAME.test(n)).sort();

  // A partial file older than an hour belongs to a run that died (a younger one may be another process's).
  try {
    for (const name of readdirSync(dir)) {
      if (!PARTIAL.test(name)) continue;
      const path = join(dir, name);
      if (clock() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { force: true });
    }
  } catch (err) {
    log.warn("could not clear old partial backups", { dir, error: (err as Error).message });
  }

  const backup = async (): Promise<void> => {
    const started = clock();
    const name = scheduledName(new Date(started));
    const final = join(dir, name);
    const partial = join(dir, `.${name}.partial`);
    let created = false;
    try {
      if (!(await store.lease("backup:scheduled", Math.max(500, everyMs * 0.9)))) return;
      if (existsSync(final)) return; // Another process on the same file wrote this second's backup.
      // Created 0600 before SQLite writes into it: the copy holds every key hash and session.
      closeSync(openSync(partial, "wx", 0o600));
      created = true;
      await vacuumInto(store.path, partial);
      placeFile(partial, final, dir);
      keepKeyBeside(schedule.keyFile, dir);
      const names = ours();
      const removed = names.slice(0, Math.max(0, names.length - keep));
      for (const old of removed) rmSync(join(dir, old), { force: true });
      log.info("backup written", { file: final, bytes: statSync(final).size, durationMs: clock() - started, kept: names.length - removed.length, removed });
    } catch (err) {
      if (created) rmSync(partial, { force: true });
      log.error("backup failed; the next one is tried at the next interval", { file: final, error: (err as Error).message ?? String(err) });
    }
  };

  const runOnce = (): Promise<void> => {
    running ??= backup().finally(() => (running = undefined));
    return running;
  };

  const arm = (delay: number) => {
    if (stopped) return;
    timer = setTimeout(async () => {
      await runOnce();
      arm(everyMs);
    }, delay);
    timer.unref?.();
  };

  let newest: number | undefined;
  try {
    newest = ours().map(timeOfName).at(-1);
  } catch {}
  // Never later than one interval from now, even when the newest name lies in the future (the clock went back).
  const firstDelay = newest === undefined ? 0 : Math.min(everyMs, Math.max(0, newest + everyMs - clock()));
  arm(firstDelay);
  log.info("scheduled backups", { dir, everySeconds: everyMs / 1000, keep, next: new Date(clock() + firstDelay).toISOString() });

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
