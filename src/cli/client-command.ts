import { UsageError } from "../lib/config";
import { ApiRequestError, ENVS, type Env, NetworkError, NotSignedInError, SvcClient, normaliseUrl } from "./client";
import type { Command, OptionSpec } from "./command";

/** Flags every command that talks to the server takes. */
export const CLIENT_OPTIONS = {
  json: { type: "boolean" },
  url: { type: "string" },
  project: { type: "string" },
} satisfies OptionSpec;

export type ClientArgs = { values: Record<string, string | boolean | undefined>; positionals: string[] };

/** Exit status of a failure: 3 not signed in, 1 the server said no or could not be reached. */
export function exitCodeOf(err: unknown): number | null {
  if (err instanceof NotSignedInError) return 3;
  if (err instanceof ApiRequestError || err instanceof NetworkError) return 1;
  return null;
}

function describeError(err: Error): string {
  if (err instanceof ApiRequestError) return `${err.message} (${err.code}, HTTP ${err.status})${err.detail ? `\n  ${err.detail}` : ""}`;
  return err.message;
}

/**
 * A command that talks to the server: maps our failures to the CLI's exit
 * statuses and prints them on stderr (as one JSON object under --json).
 * Usage errors go on to main (exit 2).
 */
export function clientCommand(spec: Omit<Command, "run"> & { run(args: ClientArgs): Promise<number> }): Command {
  return {
    ...spec,
    async run(args) {
      try {
        return await spec.run(args);
      } catch (err) {
        const code = exitCodeOf(err);
        if (code === null) throw err;
        const e = err as Error;
        if (args.values.json) {
          const body = e instanceof ApiRequestError ? { error: e.message, code: e.code, status: e.status, detail: e.detail } : { error: e.message, code: code === 3 ? "NOT_SIGNED_IN" : "NETWORK" };
          console.error(JSON.stringify(body));
        } else {
          console.error(`svc ${spec.name}: ${describeError(e)}`);
        }
        return code;
      }
    },
  };
}

export function openClient(values: ClientArgs["values"]): SvcClient {
  const url = values.url as string | undefined;
  if (url !== undefined) {
    try {
      normaliseUrl(url);
    } catch (err) {
      throw new UsageError(`--url: ${(err as Error).message}`);
    }
  }
  return SvcClient.open({ url, project: values.project as string | undefined });
}

export function envFlag(value: unknown): Env | undefined {
  if (value === undefined) return undefined;
  if (!ENVS.includes(value as Env)) throw new UsageError(`--env must be one of ${ENVS.join(", ")}`);
  return value as Env;
}

/** Prints `data` as JSON under --json, else the human text. */
export function emit(json: unknown, data: unknown, human: () => string): void {
  console.log(json ? JSON.stringify(data, null, 2) : human());
}

/** Left-aligned columns; empty cells print as "-". */
export function table(header: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null || c === undefined || c === "" ? "-" : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n");
}

/** Exactly `count` positionals after the subcommand words, else a usage error naming the usage line. */
export function expectPositionals(positionals: string[], count: number, usage: string): string[] {
  if (positionals.length !== count) throw new UsageError(`expected: ${usage}`);
  return positionals;
}

/** Flags that only some subcommands take: any other given one is a usage error. */
export function rejectFlags(values: ClientArgs["values"], flags: string[], subcommand: string): void {
  for (const f of flags) if (values[f] !== undefined) throw new UsageError(`--${f} does not apply to \`${subcommand}\``);
}
