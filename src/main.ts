#!/usr/bin/env bun
import { UsageError } from "./lib/config";
import { type Command, parseCommandArgs } from "./cli/command";

/**
 * Every subcommand, in the order `svc help` lists them. Loaded on demand so
 * that `svc serve` carries none of the client-side code (MCP SDK, arktype)
 * and each CLI call starts quickly.
 */
const COMMANDS: { name: string; load: () => Promise<Command> }[] = [
  { name: "serve", load: async () => (await import("./cli/serve")).serveCommand },
  { name: "init", load: async () => (await import("./cli/server-commands")).initCommand },
  { name: "backup", load: async () => (await import("./cli/server-commands")).backupCommand },
  { name: "healthcheck", load: async () => (await import("./cli/server-commands")).healthcheckCommand },
  { name: "login", load: async () => (await import("./cli/login")).loginCommand },
  { name: "logout", load: async () => (await import("./cli/login")).logoutCommand },
  { name: "whoami", load: async () => (await import("./cli/account")).whoamiCommand },
  { name: "bind", load: async () => (await import("./cli/account")).bindCommand },
  { name: "toggle", load: async () => (await import("./cli/resources")).toggleCommand },
  { name: "config", load: async () => (await import("./cli/resources")).configCommand },
  { name: "sdk", load: async () => (await import("./cli/resources")).sdkCommand },
  { name: "mcp", load: async () => (await import("./cli/mcp-command")).mcpCommand },
  { name: "version", load: async () => (await import("./cli/server-commands")).versionCommand },
];

async function helpText(): Promise<string> {
  const commands = await Promise.all(COMMANDS.map((c) => c.load()));
  const width = Math.max(...commands.map((c) => c.name.length), 4) + 2;
  const lines = ["svc: feature flags, dynamic configs and experimentation in one binary", "", "Usage: svc <command> [flags]", "", "Commands:"];
  for (const c of commands) lines.push(`  ${c.name.padEnd(width)}${c.summary}`);
  lines.push(`  ${"help".padEnd(width)}Show this help, or \`svc help <command>\` for one command`);
  lines.push("", "Examples:");
  for (const c of commands) lines.push(`  ${c.examples[0]}`);
  return lines.join("\n");
}
function commandHelp(c: Command): string {
  return [`svc ${c.name}: ${c.summary}`, "", `Usage: ${c.usage}`, "", "Examples:", ...c.examples.map((e) => `  ${e}`)].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const topic = name === "help" ? rest[0] : undefined;
    if (!topic) {
      console.log(await helpText());
      return 0;
    }
    const entry = COMMANDS.find((x) => x.name === topic);
    if (!entry) {
      console.error(`svc: unknown command "${topic}"\nRun \`svc help\` for the list.`);
      return 2;
    }
    console.log(commandHelp(await entry.load()));
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === (name === "--version" || name === "-v" ? "version" : name));
  if (!entry) {
    console.error(`svc: unknown command "${name}"\nRun \`svc help\` for the list of commands.`);
    return 2;
  }
  const command = await entry.load();
  try {
    if (rest.includes("--help") || rest.includes("-h")) {
      console.log(commandHelp(command));
      return 0;
    }
    return await command.run(parseCommandArgs(command, rest));
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`svc ${command.name}: ${err.message}`);
      return 2;
    }
    console.error(`svc ${command.name}: ${(err as Error).message}`);
    return 1;
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
