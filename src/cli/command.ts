import { parseArgs } from "node:util";
import { UsageError } from "../lib/config";
import { editDistance, singular, typoLimit, withSuggestion } from "../lib/suggest";

/** One flag: how it parses and the one line `--help` explains it with. */
export type Flag = {
  type: "string" | "boolean";
  /** What it does and its default, in one line. */
  help: string;
  /** How help shows the value of a string flag (`--env ENV`); default VALUE. */
  value?: string;
  /** May be given several times (the values arrive as an array). */
  multiple?: boolean;
};
export type Flags = Record<string, Flag>;

export type ArgValues = Record<string, string | boolean | string[] | undefined>;
export type ParsedArgs = { values: ArgValues; positionals: string[] };

/**
 * One `svc` command, or one subcommand of a noun (`svc killswitches list`):
 * its help text, its flags and what it does. A noun has `subcommands`
 * instead of `run`; a subcommand's name is the words after the noun's
 * (`list`, or `keys list` for `svc sdk keys list`).
 */
export type Command = {
  name: string;
  summary: string;
  /** Positional arguments in order as help shows them: `<name>` is required, `[<x>]` optional. */
  args?: string[];
  /** Paragraphs of help text after the usage line. */
  details?: string[];
  examples: string[];
  flags?: Flags;
  subcommands?: Command[];
  run?(args: ParsedArgs): Promise<number> | number;
};

/** The flag every command takes; parsed by main before anything else. */
export const HELP_FLAG: Flag = { type: "boolean", help: "Show this help and exit" };

/** A command (or subcommand) as found on the command line, with its full name (`killswitches list`). */
export type Resolved = { command: Command; path: string; rest: string[]; group?: Command };

/**
 * Picks the subcommand of `command` named by the leading words of `argv`
 * (the longest match, so `sdk keys list` beats a `keys`). With no match the
 * noun itself is answered: running it is then a usage error naming its
 * subcommands, and `--help` shows them all.
 */
export function resolveSubcommand(command: Command, argv: string[]): Resolved {
  if (!command.subcommands) return { command, path: command.name, rest: argv };
  const words = leadingWords(argv);
  let best: Command | undefined;
  let bestLength = 0;
  for (const sub of command.subcommands) {
    const parts = sub.name.split(" ");
    if (parts.length > words.length || parts.length <= bestLength) continue;
    // A plural word of a subcommand takes its singular too (`svc sdk key list`), as nouns do.
    if (parts.every((p, i) => words[i] === p || words[i] === singular(p))) {
      best = sub;
      bestLength = parts.length;
    }
  }
  if (!best) return { command, path: command.name, rest: argv };
  return { command: best, path: `${command.name} ${best.name}`, rest: argv.slice(bestLength), group: command };
}

/** The words before the first flag: the subcommand's, then its positional arguments. */
function leadingWords(argv: string[]): string[] {
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith("-")) break;
    words.push(a);
  }
  return words;
}

/**
 * `message`, with "Did you mean `svc sdk keys list`?" when the words typed
 * after the noun are a typo of one of its subcommands (compared word for word
 * over as many words as the subcommand has, each word within its own typo limit).
 */
export function suggestSubcommand(message: string, command: Command, argv: string[]): string {
  const words = leadingWords(argv);
  let best: { sub: Command; distance: number } | undefined;
  for (const sub of command.subcommands ?? []) {
    const parts = sub.name.split(" ");
    if (words.length < parts.length) continue;
    // Each word a typo of its own (`templates rename` is not `templates create`).
    const distances = parts.map((p, i) => (words[i] === singular(p) ? 0 : editDistance(words[i]!, p)));
    if (distances.some((d, i) => d > typoLimit(words[i]!))) continue;
    const distance = distances.reduce((a, b) => a + b, 0);
    if (distance < (best?.distance ?? Infinity)) best = { sub, distance };
  }
  return best ? `${message}. Did you mean \`svc ${command.name} ${best.sub.name}\`?` : message;
}

/** `svc killswitches list [flags]`, `svc toggle <name> [flags]`. */
export function usageLine(path: string, command: Command): string {
  if (command.subcommands) return `svc ${path} <subcommand> [flags]`;
  return ["svc", path, ...(command.args ?? []), ...(Object.keys(command.flags ?? {}).length ? ["[flags]"] : [])].join(" ");
}

function flagLabel(name: string, flag: Flag): string {
  return flag.type === "string" ? `--${name} ${flag.value ?? "VALUE"}` : `--${name}`;
}

/** Flag lines, aligned: `  --env ENV      Env to act on ...`. */
export function flagLines(flags: Flags, indent = "  ", withHelp = true): string[] {
  const entries: [string, string][] = Object.entries(flags).map(([name, f]) => [flagLabel(name, f), f.help + (f.multiple ? " (repeatable)" : "")]);
  if (withHelp) entries.push(["-h, --help", HELP_FLAG.help]);
  const width = Math.max(...entries.map(([label]) => label.length)) + 2;
  return entries.map(([label, help]) => `${indent}${label.padEnd(width)}${help}`);
}

/** The help page of one command or subcommand: summary, usage, details, every flag with its explanation, examples. */
export function commandHelp(path: string, command: Command): string {
  const lines = [`svc ${path}: ${command.summary}`, "", `Usage: ${usageLine(path, command)}`];
  for (const d of command.details ?? []) lines.push("", d);
  if (command.subcommands) {
    // Flags every subcommand shares are explained once, at the end.
    const shared = Object.entries(command.subcommands[0]!.flags ?? {}).filter(([name, f]) => command.subcommands!.every((s) => s.flags?.[name]?.help === f.help));
    const sharedNames = new Set(shared.map(([name]) => name));
    lines.push("", "Subcommands:");
    for (const sub of command.subcommands) {
      lines.push(`  ${usageLine(`${path} ${sub.name}`, sub)}`, `      ${sub.summary}`);
      const own = Object.fromEntries(Object.entries(sub.flags ?? {}).filter(([name]) => !sharedNames.has(name)));
      if (Object.keys(own).length) lines.push(...flagLines(own, "      ", false));
    }
    lines.push("", "Flags of every subcommand:", ...flagLines(Object.fromEntries(shared)));
    lines.push("", `\`svc help ${path} <subcommand>\` shows one subcommand with its examples.`);
  } else {
    lines.push("", "Flags:", ...flagLines(command.flags ?? {}));
  }
  lines.push("", "Examples:", ...command.examples.map((e) => `  ${e}`));
  return lines.join("\n");
}

/**
 * Strict flag parsing: an unknown flag, a missing value or the wrong number
 * of positional arguments is a UsageError (exit 2).
 */
export function parseCommandArgs(path: string, command: Command, argv: string[]): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {};
  for (const [name, f] of Object.entries(command.flags ?? {})) options[name] = f.multiple ? { type: f.type, multiple: true } : { type: f.type };
  let parsed: ParsedArgs;
  try {
    const { values, positionals } = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
    parsed = { values: values as ArgValues, positionals };
  } catch (err) {
    const message = (err as Error).message.split("\n")[0]!.replace(/\. To specify a positional argument.*$/, "");
    // `Unknown option '--jsn'`: name the flag that was meant.
    const unknown = /^Unknown option '--([^'=]+)'/.exec(message)?.[1];
    throw new UsageError(unknown === undefined ? message : withSuggestion(message, unknown, [...Object.keys(command.flags ?? {}), "help"], (f) => `--${f}`));
  }
  const args = command.args ?? [];
  const required = args.filter((a) => a.startsWith("<")).length;
  if (parsed.positionals.length < required || parsed.positionals.length > args.length) {
    const got = parsed.positionals.length;
    if (args.length === 0) throw new UsageError(`\`svc ${path}\` takes no arguments (got "${parsed.positionals.join(" ")}")`);
    throw new UsageError(`expected: ${usageLine(path, command)} (got ${got} argument${got === 1 ? "" : "s"})`);
  }
  return parsed;
}

/**
 * A feature's noun as its manifest declares it (`cli` in src/lib/module.ts):
 * the command loads only when it is run or its own help is read. `order` places
 * it in `svc help` among the shared commands of src/cli/commands.ts; `summary`
 * and `example` are its line and first example there, declared here so that
 * `svc help` loads no command (issue 32: each loaded one's imports cost start-up
 * time). They equal the command's own `summary` and `examples[0]` (test/cli/cli-nouns.test.ts).
 */
export type CliNoun = { name: string; aliases?: readonly string[]; order: number; summary: string; example: string; load(): Promise<Command> };
