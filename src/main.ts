#!/usr/bin/env bun
import { UsageError } from "./lib/config";
import { type Command, parseCommandArgs } from "./cli/command";
import { backupCommand, healthcheckCommand, initCommand, serveCommand, versionCommand } from "./cli/server-commands";
import { loginCommand, logoutCommand } from "./cli/login";
import { bindCommand, whoamiCommand } from "./cli/account";
import { configCommand, sdkCommand, toggleCommand } from "./cli/resources";
import { mcpCommand } from "./cli/mcp-command";

/** Every subcommand, in the order `svc help` lists them. */
const COMMANDS: Command[] = [
  serveCommand,
  initCommand,
  backupCommand,
  healthcheckCommand,
  loginCommand,
  logoutCommand,
  whoamiCommand,
  bindCommand,
  toggleCommand,
  configCommand,
  sdkCommand,
  mcpCommand,
  versionCommand,
];

function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 4) + 2;
  const lines = ["svc: feature flags, dynamic configs and experimentation in one binary", "", "Usage: svc <command> [flags]", "", "Commands:"];
  for (const c of COMMANDS) lines.push(`  ${c.name.padEnd(width)}${c.summary}`);
  lines.push(`  ${"help".padEnd(width)}Show this help, or \`svc help <command>\` for one command`);
  lines.push("", "Examples:");
  for (const c of COMMANDS) lines.push(`  ${c.examples[0]}`);
  return lines.join("\n");
}

function commandHelp(c: Command): string {
  return [`svc ${c.name}: ${c.summary}`, "", `Usage: ${c.usage}`, "", "Examples:", ...c.examples.map((e) => `  ${e}`)].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const topic = name === "help" ? rest[0] : undefined;
    if (topic) {
      const c = COMMANDS.find((x) => x.name === topic);
      if (!c) {
        console.error(`svc: unknown command "${topic}"\nRun \`svc help\` for the list.`);
        return 2;
      }
      console.log(commandHelp(c));
      return 0;
    }
    console.log(helpText());
    return 0;
  }
  if (name === "--version" || name === "-v") return versionCommand.run({ values: {}, positionals: [] });
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(`svc: unknown command "${name}"\nRun \`svc help\` for the list of commands.`);
    return 2;
  }
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
