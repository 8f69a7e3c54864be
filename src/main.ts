#!/usr/bin/env bun
import { UsageError } from "./lib/config";
import { type CliNoun, commandHelp, parseCommandArgs, resolveSubcommand, suggestSubcommand } from "./cli/command";
import { SHARED_COMMANDS } from "./cli/commands";
import { MODULES } from "./modules";
import { type Failure, classify, reportFailure } from "./cli/errors";
import { singular, withSuggestion } from "./lib/suggest";
import { SCHEMA_CHECKER_ROLE_ENV, WAL_CHECKPOINTER_ROLE_ENV } from "./lib/process-roles";

/**
 * A noun two modules declare is one command with the subcommands of both, in manifest order: `svc sdk` is the keys'
 * `sdk keys …` and the SDK package's `sdk install`. The first declaration gives its place in `svc help`.
 */
function mergedNouns(nouns: CliNoun[]): CliNoun[] {
  const byName = new Map<string, CliNoun>();
  for (const noun of nouns) {
    const first = byName.get(noun.name);
    if (!first) {
      byName.set(noun.name, noun);
      continue;
    }
    const summary = `${first.summary}; ${noun.summary}`;
    byName.set(noun.name, {
      ...first,
      summary,
      load: async () => {
        const [a, b] = await Promise.all([first.load(), noun.load()]);
        return { ...a, summary, details: [...(a.details ?? []), ...(b.details ?? [])], examples: [...a.examples, ...b.examples], subcommands: [...(a.subcommands ?? []), ...(b.subcommands ?? [])] };
      },
    });
  }
  return [...byName.values()];
}

/** Every command, in the order `svc help` lists them: the shared ones and each module's nouns. */
export const COMMANDS: readonly CliNoun[] = mergedNouns([...SHARED_COMMANDS, ...MODULES.flatMap((m) => m.cli ?? [])]).sort((a, b) => a.order - b.order);

/** Every noun answers to its singular too (`svc killswitch list`), as people type it. */
const namesOf = (c: CliNoun): string[] => [c.name, ...(c.aliases ?? []), ...[singular(c.name)].filter((s) => s !== undefined)];
const findEntry = (name: string) => COMMANDS.find((c) => namesOf(c).includes(name));

/** `unknown command "killswich". Did you mean "killswitch"?` */
const unknownCommand = (name: string) => withSuggestion(`unknown command "${name}"`, name, [...COMMANDS.flatMap(namesOf), "help"]);

/** `svc help`: from the nouns' declared summaries and examples, loading no command. */
function helpText(): string {
  const commands = COMMANDS;
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
  for (const c of commands) lines.push(`  ${c.example}`);
  return lines.join("\n");
}

const usageFailure = (error: string, detail: string): Failure => ({ exitCode: 2, body: { error, code: "USAGE", detail } });

/** `svc help <command> [subcommand]`. */
async function helpFor(topic: string[], json: boolean): Promise<number> {
  const entry = findEntry(topic[0]!);
  if (!entry) return reportFailure(usageFailure(unknownCommand(topic[0]!), "Run `svc help` for the list."), json);
  const resolved = resolveSubcommand(await entry.load(), topic.slice(1));
  if (resolved.rest.length > 0) {
    const message = suggestSubcommand(`\`svc ${resolved.path}\` has no subcommand "${resolved.rest.join(" ")}"`, resolved.command, resolved.rest);
    return reportFailure(usageFailure(message, `Run \`svc help ${resolved.path}\` for its subcommands.`), json);
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
      console.log(helpText());
      return 0;
    }
    return helpFor(topic, json);
  }
  const entry = findEntry(name === "--version" || name === "-v" ? "version" : name);
  if (!entry) return reportFailure(usageFailure(unknownCommand(name), "Run `svc help` for the list of commands."), json);
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
      throw new UsageError(
        word === undefined
          ? `\`svc ${resolved.path}\` needs a subcommand: ${names}`
          : suggestSubcommand(`unknown subcommand "${word}" of \`svc ${resolved.path}\`; one of: ${names}`, resolved.command, resolved.rest),
      );
    }
    return await resolved.command.run!(parseCommandArgs(resolved.path, resolved.command, resolved.rest));
  } catch (err) {
    return reportFailure(classify(err, resolved.path), json, resolved.path);
  }
}

if (import.meta.main) {
  // The compiled binary started by a server as one of its child processes (src/lib/process-roles.ts): the config
  // schema checker (src/modules/configs/schema-checker.ts) or the WAL checkpointer (src/lib/store/checkpointer.ts).
  if (process.env[SCHEMA_CHECKER_ROLE_ENV] === "1") await import("./modules/configs/schema-check-process");
  else if (process.env[WAL_CHECKPOINTER_ROLE_ENV] === "1") await import("./lib/store/checkpoint-process");
  else process.exitCode = await main(process.argv.slice(2));
}
