import type { CliNoun } from "./command";

/**
 * The commands that belong to no feature: the server's own (serve, init,
 * backup…), signing in and the tool server. Each feature's nouns come from
 * its manifest (`cli`); `order` places every command in `svc help`.
 * Loaded on demand so that `svc serve` carries none of the client-side code
 * (MCP SDK, arktype) and each CLI call starts quickly.
 */
export const SHARED_COMMANDS: readonly CliNoun[] = [
  { name: "serve", order: 1, summary: "Run the HTTP server (admin API, SDK paths, device sign-in, intake) on one port", example: "svc serve", load: async () => (await import("./serve")).serveCommand },
  { name: "init", order: 2, summary: "Create an organisation, a project, its owner and one admin, client and server key", example: "svc init --json", load: async () => (await import("./server-commands")).initCommand },
  { name: "backup", order: 3, summary: "Write a consistent copy of the SQLite database while the server runs (VACUUM INTO)", example: "svc backup --out backup-2026-11-21.db", load: async () => (await import("./server-commands")).backupCommand },
  { name: "restore", order: 4, summary: "Put a backup in place as the database of an empty data directory (integrity check first; never overwrites)", example: "svc restore --from /backups/svc-2026-11-21.db --data /var/lib/svc-restored --json", load: async () => (await import("./restore")).restoreCommand },
  { name: "store", order: 5, summary: "Move an installation between stores (SQLite and PostgreSQL)", example: "svc store copy --from sqlite:./data/service.db --to postgres://svc:secret@db:5432/svc", load: async () => (await import("./store-command")).storeCommand },
  { name: "healthcheck", order: 6, summary: "Exit 0 when the local server answers GET /healthz (for Docker HEALTHCHECK)", example: "svc healthcheck", load: async () => (await import("./server-commands")).healthcheckCommand },
  { name: "login", order: 7, summary: "Sign in through the browser (device flow) and store the credentials", example: "svc login", load: async () => (await import("./login")).loginCommand },
  { name: "logout", order: 8, summary: "Revoke the session at the server that issued it and delete the local credentials", example: "svc logout", load: async () => (await import("./login")).logoutCommand },
  { name: "whoami", order: 9, summary: "Show who you are signed in as, the active project and every project you can reach", example: "svc whoami", load: async () => (await import("./account")).whoamiCommand },
  { name: "bind", order: 10, summary: "Bind the current directory to one of your projects (writes ./.service)", example: "svc bind 6f1c2d3e-…", load: async () => (await import("./account")).bindCommand },
  { name: "mcp", order: 31, summary: "Serve the MCP tools (killswitches, configs, gates, events, metrics, errors, alert rules, SDK keys, members, projects) on stdio for AI assistants", example: "svc mcp", load: async () => (await import("./mcp-command")).mcpCommand },
  { name: "version", order: 32, summary: "Print the version", example: "svc version", load: async () => (await import("./version-command")).versionCommand },
];
