import { afterAll } from "bun:test";
import { dropTestDatabases } from "./helpers";
import { closeSharedBrowser } from "./web/shared-browser";

// Preloaded by bunfig.toml: hooks here run once for the whole `bun test` run, not per file.
afterAll(closeSharedBrowser);
// On PostgreSQL, the databases the test servers were copied from, and any drop still pending.
afterAll(dropTestDatabases);
