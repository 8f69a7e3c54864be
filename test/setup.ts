import { afterAll } from "bun:test";
import { closeSharedBrowser } from "./web/shared-browser";

// Preloaded by bunfig.toml: hooks here run once for the whole `bun test` run, not per file.
afterAll(closeSharedBrowser);
