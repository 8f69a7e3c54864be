import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../lib/config";

export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** One `svc` subcommand: its help text, its flags and what it does. */
export type Command = {
  name: string;
  summary: string;
  usage: string;
  examples: string[];
  options: OptionSpec;
  /** Positional arguments allowed (default none). */
  positionals?: boolean;
  run(args: { values: Record<string, string | boolean | undefined>; positionals: string[] }): Promise<number> | number;
};

/** Strict flag parsing: an unknown flag or a missing value is a UsageError (exit 2). */
export function parseCommandArgs(command: Command, argv: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: command.options,
      strict: true,
      allowPositionals: command.positionals ?? false,
    });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (err) {
    const message = (err as Error).message.split("\n")[0]!.replace(/\. To specify a positional argument.*$/, "");
    throw new UsageError(`${message}\nRun \`svc help ${command.name}\` for usage.`);
  }
}
