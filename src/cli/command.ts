import { parseArgs } from "node:util";
import { UsageError } from "../lib/config";

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
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith("-")) break;
    words.push(a);
  }
  let best: Command | undefined;
  let bestLength = 0;
  for (const sub of command.subcommands) {
    const parts = sub.name.split(" ");
    if (parts.length > words.length || parts.length <= bestLength) continue;
    if (parts.every((p, i) => words[i] === p)) {
      best = sub;
      bestLength = parts.length;
    }
  }
  if (!best) return { command, path: command.name, rest: argv };
  return { command: best, path: `${command.name} ${best.name}`, rest: argv.slice(bestLength), group: command };
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
    throw new UsageError((err as Error).message.split("\n")[0]!.replace(/\. To specify a positional argument.*$/, ""));
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
 * the command loads only when it is run or its help is read. `order` places
 * it in `svc help` among the shared commands of src/cli/commands.ts.
 */
export type CliNoun = { name: string; aliases?: readonly string[]; order: number; load(): Promise<Command> };
