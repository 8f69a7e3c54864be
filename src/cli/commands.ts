import type { CliNoun } from "./command";

/**
 * The commands that belong to no feature: the server's own (serve, init,
 * backup…), signing in and the tool server. Each feature's nouns come from
 * its manifest (`cli`); `order` places every command in `svc help`.
 * Loaded on demand so that `svc serve` carries none of the client-side code
 * (MCP SDK, arktype) and each CLI call starts quickly.
 */
export const SHARED_COMMANDS: readonly CliNoun[] = [
  { name: "serve", order: 1, load: async () => (await import("./serve")).serveCommand },
  { name: "init", order: 2, load: async () => (await import("./server-commands")).initCommand },
  { name: "backup", order: 3, load: async () => (await import("./server-commands")).backupCommand },
  { name: "restore", order: 4, load: async () => (await import("./restore")).restoreCommand },
  { name: "store", order: 5, load: async () => (await import("./store-command")).storeCommand },
  { name: "healthcheck", order: 6, load: async () => (await import("./server-commands")).healthcheckCommand },
  { name: "login", order: 7, load: async () => (await import("./login")).loginCommand },
  { name: "logout", order: 8, load: async () => (await import("./login")).logoutCommand },
  { name: "whoami", order: 9, load: async () => (await import("./account")).whoamiCommand },
  { name: "bind", order: 10, load: async () => (await import("./account")).bindCommand },
  { name: "mcp", order: 31, load: async () => (await import("./mcp-command")).mcpCommand },
  { name: "version", order: 32, load: async () => (await import("./server-commands")).versionCommand },
];
