import { afterAll } from "bun:test";
import { closeSharedBrowser } from "./web/shared-browser";

// Preloaded by bunfig.toml: hooks here run once for the whole `bun test` run, not per file.
afterAll(closeSharedBrowser);
// On PostgreSQL, the databases the test servers were copied from, and any drop still pending.
// Imported only then: the helpers load the whole server, which a SQLite run's preload need not.
afterAll(async () => {
  if (process.env.SVC_TEST_STORE) await (await import("./helpers")).dropTestDatabases();
});
