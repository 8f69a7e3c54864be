import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The environment variables that make the compiled binary start as one of the server's child processes instead of
 * the CLI: src/main.ts reads them before anything else. From source the child runs its own file directly and needs
 * no variable. In lib (not in the modules) because main.ts imports them, and `svc help` and `svc version`, which it
 * runs, load no module's code.
 */
/** The config schema checker (src/modules/configs/schema-checker.ts starts it). */
export const SCHEMA_CHECKER_ROLE_ENV = "SVC_CONFIG_SCHEMA_CHECKER";
/** The SQLite files' WAL checkpointer (src/lib/store/checkpointer.ts starts it). */
export const WAL_CHECKPOINTER_ROLE_ENV = "SVC_WAL_CHECKPOINTER";

/** What starts a child process of the server in one role: its command line and environment. */
export type RoleCommand = { cmd: string[]; env: Record<string, string | undefined> };

/**
 * How a child in `role` is started: the compiled binary runs itself with the role's variable set; from source, bun
 * runs `source` (the role's own file) directly.
 */
export function roleCommand(role: string, source: URL): RoleCommand {
  // On Linux /proc/self/exe is the executable this server started from, even once an upgrade has replaced or
  // removed the file at execPath: the child is always the server's own build until the server restarts.
  const self = process.platform === "linux" && existsSync("/proc/self/exe") ? "/proc/self/exe" : process.execPath;
  if (import.meta.url.startsWith("file:///$bunfs/")) return { cmd: [self], env: { ...process.env, [role]: "1" } };
  return { cmd: [process.execPath, fileURLToPath(source)], env: { ...process.env } };
}
