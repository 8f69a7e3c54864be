import type { Subprocess } from "bun";
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

/**
 * The server's side: starts a child, its replies to `onReply` over an IPC channel (JSON), its stderr the server's.
 * Unref'd: idle or busy, it never keeps the server's process up by itself (a caller may ref it while it waits on it).
 */
export function spawnRole<Reply>(command: RoleCommand, onReply: (reply: Reply) => void, onExit: (code: number | null, signal: number | string | null) => void): Subprocess {
  const child = Bun.spawn(command.cmd, {
    env: command.env,
    stdio: ["ignore", "ignore", "inherit"],
    serialization: "json",
    ipc: (reply: Reply) => onReply(reply),
    onExit: (_, code, signal) => onExit(code, signal),
  });
  child.unref();
  return child;
}

/**
 * The child's side, its entry's first call: how it answers the server. It ends when the server's channel closes
 * (the server ended, crashed or was killed), and it ignores SIGINT and SIGTERM: Ctrl-C in a terminal and
 * `systemctl stop` signal the server's whole process group (or cgroup), and the server, which closes the child's
 * work and then ends it, should not find it gone first. Run by hand there is no channel: `name` says what it is.
 */
export function serverChannel<Reply>(name: string): (reply: Reply) => void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => {});
  if (!process.send) throw new Error(`${name} runs only as the server's child process`);
  process.on("disconnect", () => process.exit(0));
  return (reply) => process.send!(reply);
}
