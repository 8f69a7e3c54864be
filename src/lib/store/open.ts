import { join } from "node:path";
import { randomBase62 } from "../ids";
import { STORE_MIGRATIONS } from "./core-migrations";
import { type ModuleMigrations, migrate } from "./migrate";
import { PostgresStore, redactUrl } from "./postgres";
import { SqliteStore } from "./sqlite";
import type { Store } from "./types";

export type StoreTarget = { engine: "sqlite"; path: string } | { engine: "postgres"; url: string };

/** A `--store` value (or SERVICE_STORE_URL) the user must fix; the message says how. */
export class StoreUrlError extends Error {}

/**
 * `--store`: empty for `<data>/service.db`; `sqlite:PATH`, `sqlite://PATH`
 * or `file:PATH` for another SQLite file; `postgres://…` or
 * `postgresql://…` for PostgreSQL.
 */
export function parseStoreTarget(value: string | undefined, dataDir: string): StoreTarget {
  const text = value?.trim() ?? "";
  if (text === "") return { engine: "sqlite", path: join(dataDir, "service.db") };
  if (/^postgres(ql)?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new StoreUrlError(`--store: ${redactUrl(text)} is not a valid URL (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)`);
    }
    if (!url.hostname && !url.searchParams.get("host")) throw new StoreUrlError("--store: the PostgreSQL URL has no host (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)");
    return { engine: "postgres", url: text };
  }
  const sqlite = /^(?:sqlite:(?:\/\/)?|file:)(.+)$/i.exec(text);
  if (sqlite) return { engine: "sqlite", path: sqlite[1]! };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw new StoreUrlError(`--store: unsupported scheme in ${redactUrl(text)}; use postgres://… for PostgreSQL or sqlite:PATH for a SQLite file`);
  }
  throw new StoreUrlError(`--store: ${text} is not a store URL; use postgres://USER@HOST:PORT/DATABASE or sqlite:PATH`);
}

export function describeTarget(target: StoreTarget): string {
  return target.engine === "sqlite" ? `sqlite:${target.path}` : redactUrl(target.url);
}

export type OpenStoreOptions = {
  /** Every module's schema steps, in dependency order (the store's own come first by themselves). */
  migrations: ModuleMigrations[];
  /** SQLite: how long a write waits for another process (the server: 500 ms; one-shot commands longer). */
  busyBudgetMs?: number;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** Skip migrations (backup of a file as it is). */
  migrate?: boolean;
};

/** Every schema step in the order they apply: the store's own tables first, then the modules' (`modules`). */
export function withStoreMigrations(modules: ModuleMigrations[]): ModuleMigrations[] {
  return [{ module: "store", migrations: STORE_MIGRATIONS }, ...modules];
}

/** Opens the store, applies migrations under a lock, makes sure it has an epoch, and starts following announcements. */
export async function openStore(target: StoreTarget, options: OpenStoreOptions): Promise<Store> {
  const store = target.engine === "sqlite" ? new SqliteStore(target.path, { busyBudgetMs: options.busyBudgetMs }) : new PostgresStore(target.url, { max: options.poolSize });
  try {
    if (store instanceof PostgresStore) await store.connect();
    if (options.migrate === false) return store;
    await migrate(store, withStoreMigrations(options.migrations));
    store.epoch = await ensureEpoch(store, await store.identity());
    await store.start();
    return store;
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}

/**
 * The database's epoch: a new one when it has none, or when it is not the
 * file or database the epoch was made for (copied, moved or restored).
 */
async function ensureEpoch(store: Store, identity: string): Promise<string> {
  // Every start on the same file or database finds its epoch: a read, without the write lock (a start waited on
  // another process's write for it, issue 32). Only a new, copied or moved one is given an epoch, under the lock.
  const current = storedEpoch(await store.all<{ key: string; value: string }>(EPOCH_ROWS), identity);
  if (current) return current;
  return store.write(async (tx) => {
    await tx.lock("svc:store_meta");
    return storedEpoch(await tx.all<{ key: string; value: string }>(EPOCH_ROWS), identity) ?? renewEpochIn(tx, identity);
  });
}

const EPOCH_ROWS = "SELECT key, value FROM store_meta WHERE key IN ('epoch', 'file_identity')";

/** The epoch recorded for this very file or database (`identity`), if there is one. */
function storedEpoch(rows: Array<{ key: string; value: string }>, identity: string): string | undefined {
  const stored = Object.fromEntries(rows.map((r) => [r.key, r.value]));
  return stored.epoch && stored.file_identity === identity ? stored.epoch : undefined;
}

async function renewEpochIn(tx: { run: Store["run"] }, identity: string): Promise<string> {
  const epoch = randomBase62(10);
  const upsert = "INSERT INTO store_meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2";
  await tx.run(upsert, "epoch", epoch);
  await tx.run(upsert, "file_identity", identity);
  return epoch;
}

/** Gives the database a new epoch now (a backup or a copy must never share ETags with its source). */
export async function renewEpoch(store: Store, identity: string): Promise<string> {
  return store.write((tx) => renewEpochIn(tx, identity));
}
