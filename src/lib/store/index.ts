export type { ChangeListener, Engine, Migration, Param, Queryable, Store, Tx } from "./types";
export { RESYNC } from "./types";
export { STORE_BOOKKEEPING_TABLES, STORE_PROCESS_TABLES } from "./core-migrations";
export { rowsByIdPrefix } from "./id-prefix";
export { LEGACY_STEP_COUNT, type ModuleMigrations, NewerSchemaError, migrate, newerSchemaProblem, stepsDone } from "./migrate";
export { type StoreTarget, StoreUrlError, describeTarget, openStore, parseStoreTarget, renewEpoch, withStoreMigrations } from "./open";
export { SqliteStore, isBusyError } from "./sqlite";
export { PostgresStore, isPostgresUnavailable, redactUrl } from "./postgres";
