#!/usr/bin/env bun
import { UsageError } from "./lib/config";
import { type Command, commandHelp, parseCommandArgs, resolveSubcommand } from "./cli/command";
import { type Failure, classify, reportFailure } from "./cli/errors";

/**
 * Every subcommand, in the order `svc help` lists them. Loaded on demand so
 * that `svc serve` carries none of the client-side code (MCP SDK, arktype)
 * and each CLI call starts quickly.
 */
export const COMMANDS: { name: string; aliases?: string[]; load: () => Promise<Command> }[] = [
  { name: "serve", load: async () => (await import("./cli/serve")).serveCommand },
  { name: "init", load: async () => (await import("./cli/server-commands")).initCommand },
  { name: "backup", load: async () => (await import("./cli/server-commands")).backupCommand },
  { name: "restore", load: async () => (await import("./cli/restore")).restoreCommand },
  { name: "store", load: async () => (await import("./cli/store-command")).storeCommand },
  { name: "healthcheck", load: async () => (await import("./cli/server-commands")).healthcheckCommand },
  { name: "login", load: async () => (await import("./cli/login")).loginCommand },
  { name: "logout", load: async () => (await import("./cli/login")).logoutCommand },
  { name: "whoami", load: async () => (await import("./cli/account")).whoamiCommand },
  { name: "bind", load: async () => (await import("./cli/account")).bindCommand },
  { name: "projects", load: async () => (await import("./cli/account")).projectsCommand },
  { name: "toggle", load: async () => (await import("./modules/killswitches/cli")).toggleCommand },
  { name: "killswitches", load: async () => (await import("./modules/killswitches/cli")).killswitchesCommand },
  { name: "gates", load: async () => (await import("./modules/gates/cli")).gatesCommand },
  { name: "attributes", load: async () => (await import("./modules/attributes/cli")).attributesCommand },
  { name: "events", load: async () => (await import("./modules/events/cli")).eventsCommand },
  { name: "metrics", load: async () => (await import("./modules/metrics/cli")).metricsCommand },
  { name: "errors", load: async () => (await import("./modules/errors/cli")).trackedErrorsCommand },
  { name: "alerts", load: async () => (await import("./modules/alerts/cli")).alertsCommand },
  { name: "universes", load: async () => (await import("./modules/universes/cli")).universesCommand },
  { name: "experiments", load: async () => (await import("./modules/experiments/cli")).experimentsCommand },
  { name: "rollouts", load: async () => (await import("./modules/rollouts/cli")).rolloutsCommand },
  { name: "connectors", load: async () => (await import("./modules/connectors/cli")).connectorsCommand },
  { name: "ops", load: async () => (await import("./modules/ops/cli")).opsCommand },
  { name: "i18n", load: async () => (await import("./modules/i18n/cli")).i18nCommand },
  { name: "configs", aliases: ["config"], load: async () => (await import("./modules/configs/cli")).configsCommand },
  { name: "tokens", load: async () => (await import("./cli/people")).tokensCommand },
  { name: "members", load: async () => (await import("./cli/people")).membersCommand },
  { name: "sdk", load: async () => (await import("./modules/keys/cli")).sdkCommand },
  { name: "audit", load: async () => (await import("./modules/audit/cli")).auditCommand },
  { name: "mcp", load: async () => (await import("./cli/mcp-command")).mcpCommand },
  { name: "version", load: async () => (await import("./cli/server-commands")).versionCommand },
];

const findEntry = (name: string) => COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));

async function helpText(): Promise<string> {
  const commands = await Promise.all(COMMANDS.map((c) => c.load()));
  const width = Math.max(...commands.map((c) => c.name.length), 4) + 2;
  const lines = [
    "svc: feature flags, dynamic configs and experimentation in one binary",
    "",
    "Usage: svc <command> [subcommand] [flags]",
    "",
    "Exit status: 0 ok, 1 the server said no (or could not be reached, or you answered no), 2 a usage mistake, 3 not signed in.",
    "With --json, results are JSON on stdout and any failure is one JSON object {error, code, …} on stderr (code USAGE for usage mistakes).",
    "",
    "Commands:",
  ];
  for (const c of commands) lines.push(`  ${c.name.padEnd(width)}${c.summary}`);
  lines.push(`  ${"help".padEnd(width)}Show this help, or \`svc help <command> [subcommand]\` for one command and every flag it takes`);
  lines.push("", "Examples:");
  for (const c of commands) lines.push(`  ${c.examples[0]}`);
  return lines.join("\n");
}

const usageFailure = (error: string, detail: string): Failure => ({ exitCode: 2, body: { error, code: "USAGE", detail } });

/** `svc help <command> [subcommand]`. */
async function helpFor(topic: string[], json: boolean): Promise<number> {
  const entry = findEntry(topic[0]!);
  if (!entry) return reportFailure(usageFailure(`unknown command "${topic[0]}"`, "Run `svc help` for the list."), json);
  const resolved = resolveSubcommand(await entry.load(), topic.slice(1));
  if (resolved.rest.length > 0) {
    return reportFailure(usageFailure(`\`svc ${resolved.path}\` has no subcommand "${resolved.rest.join(" ")}"`, `Run \`svc help ${resolved.path}\` for its subcommands.`), json);
  }
  console.log(commandHelp(resolved.path, resolved.command));
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes("--json");
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const topic = name === "help" ? rest.filter((a) => a !== "--json") : [];
    if (topic.length === 0) {
      console.log(await helpText());
      return 0;
    }
    return helpFor(topic, json);
  }
  const entry = findEntry(name === "--version" || name === "-v" ? "version" : name);
  if (!entry) return reportFailure(usageFailure(`unknown command "${name}"`, "Run `svc help` for the list of commands."), json);
  const command = await entry.load();
  const resolved = resolveSubcommand(command, rest);
  try {
    if (rest.includes("--help") || rest.includes("-h")) {
      console.log(commandHelp(resolved.path, resolved.command));
      return 0;
    }
    if (resolved.command.subcommands) {
      const word = resolved.rest.find((a) => !a.startsWith("-"));
      const names = resolved.command.subcommands.map((s) => s.name).join(", ");
      throw new UsageError(word === undefined ? `\`svc ${resolved.path}\` needs a subcommand: ${names}` : `unknown subcommand "${word}" of \`svc ${resolved.path}\`; one of: ${names}`);
    }
    return await resolved.command.run!(parseCommandArgs(resolved.path, resolved.command, resolved.rest));
  } catch (err) {
    return reportFailure(classify(err, resolved.path), json, resolved.path);
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
