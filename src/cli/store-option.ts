import { resolve } from "node:path";
import { DEFAULT_DATA_DIR, UsageError } from "../lib/config";
import { NewerSchemaError, type Store, type StoreTarget, StoreUrlError, describeTarget, openStore, parseStoreTarget } from "../lib/store";
import { storeMigrations } from "../modules";
import { CliError } from "./errors";

/** The `--store` flag every command that opens the database takes. */
export const STORE_FLAG = {
  type: "string",
  value: "URL",
  help: "postgres://USER:PASSWORD@HOST:PORT/DB for PostgreSQL 13+, or sqlite:FILE (default: SERVICE_STORE_URL, else DIR/service.db)",
} as const;

export const DATA_FLAG = { type: "string", value: "DIR", help: "Directory of service.db and the outbox (default: SERVICE_DATA_DIR, else ./data)" } as const;

export function dataDirOf(values: Record<string, unknown>): string {
  return resolve((values.data as string | undefined) ?? process.env.SERVICE_DATA_DIR ?? DEFAULT_DATA_DIR);
}

/** `--store`, else SERVICE_STORE_URL, else the data directory's SQLite file; a bad URL is a usage error. */
export function storeTargetOf(values: Record<string, unknown>): StoreTarget {
  const raw = (values.store as string | undefined) ?? process.env.SERVICE_STORE_URL;
  try {
    return parseStoreTarget(raw, dataDirOf(values));
  } catch (err) {
    if (err instanceof StoreUrlError) throw new UsageError(err.message);
    throw err;
  }
}

/** Why a store could not be opened, as one line that says what to check. */
export function storeOpenFailure(target: StoreTarget, err: unknown): CliError {
  const where = describeTarget(target);
  if (err instanceof NewerSchemaError) return new CliError(`${where}: ${err.message}`, "SCHEMA_TOO_NEW", "run the newer svc binary that migrated it");
  const message = (err as Error)?.message ?? String(err);
  const hint =
    target.engine === "postgres"
      ? "check that PostgreSQL 13+ runs there, that the user, password and database in the URL exist, and that this machine may connect"
      : "check that the directory exists and is writable, and that the file is an svc database";
  return new CliError(`cannot open the store ${where}: ${message.split("\n")[0]}`, "STORE_UNAVAILABLE", hint);
}

/** Opens (and migrates) the store for a one-shot command; failures become one clear CLI error. */
export async function openCommandStore(target: StoreTarget, options: { migrate?: boolean } = {}): Promise<Store> {
  try {
    // One-shot commands may wait for a busy server's write lock longer than a request would.
    return await openStore(target, { migrations: storeMigrations(), busyBudgetMs: 5000, poolSize: 4, migrate: options.migrate });
  } catch (err) {
    throw storeOpenFailure(target, err);
  }
}
