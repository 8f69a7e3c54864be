import { readFileSync } from "node:fs";
import { UsageError } from "../lib/config";
import { ENVS, type Env, SvcClient, normaliseUrl, type SessionOptions } from "./client";
import type { ArgValues, Command, Flag, Flags } from "./command";
import { CliError } from "./errors";

/** Flags every command that talks to the server takes. */
export const JSON_FLAG: Flag = { type: "boolean", help: "Print the result as JSON on stdout; a failure prints one JSON object {error, code, …} on stderr" };
export const URL_FLAG: Flag = {
  type: "string",
  value: "URL",
  help: "Server to call (default: SERVICE_URL, else the server you signed in to, else http://localhost:8080)",
};
export const PROJECT_FLAG: Flag = {
  type: "string",
  value: "ID",
  help: "Project to act on (default: the nearest .service file from `svc bind`, else the project chosen at login)",
};
export const CLIENT_FLAGS = { json: JSON_FLAG, url: URL_FLAG, project: PROJECT_FLAG } satisfies Flags;
export const YES_FLAG: Flag = { type: "boolean", help: "Do not ask for confirmation in a terminal (scripts and SERVICE_CLI_TOKEN never ask)" };
export const QUERY_FLAG: Flag = { type: "string", value: "TEXT", help: "Only rows whose name or description contains TEXT (case-insensitive)" };

export const str = (values: ArgValues, name: string): string | undefined => values[name] as string | undefined;
export const list = (values: ArgValues, name: string): string[] => (values[name] as string[] | undefined) ?? [];

export function openClient(values: ArgValues, options: Omit<SessionOptions, "url" | "project"> = {}): SvcClient {
  const url = str(values, "url");
  if (url !== undefined) {
    try {
      normaliseUrl(url);
    } catch (err) {
      throw new UsageError(`--url: ${(err as Error).message}`);
    }
  }
  const project = str(values, "project");
  if (project !== undefined && (project.length < 1 || project.length > 128 || /\s/.test(project))) throw new UsageError("--project must be a project id: 1-128 characters without spaces");
  return SvcClient.open({ ...options, url, project });
}

/** A value that must be one of `choices` (`what` names the flag or argument; `also` adds other spellings to the message). */
export function oneOf<T extends string>(value: unknown, choices: readonly T[], what: string, also = ""): T {
  if (!choices.includes(value as T)) throw new UsageError(`${what} must be one of ${choices.join(", ")}${also} (got "${value}")`);
  return value as T;
}

/** A list's `--q TEXT` and `--state STATE` as its query (STATE checked against `states`; a flag not given is left out). */
export function qAndStateQuery(values: ArgValues, states: readonly string[]): { q?: string; state?: string } {
  const q = str(values, "q");
  const state = str(values, "state");
  if (state !== undefined) oneOf(state, states, "--state");
  return { ...(q !== undefined ? { q } : {}), ...(state !== undefined ? { state } : {}) };
}

export function envFlag(value: unknown, flag = "--env"): Env | undefined {
  return value === undefined ? undefined : oneOf(value, ENVS, flag);
}

export function requiredEnv(value: unknown): Env {
  const env = envFlag(value);
  if (!env) throw new UsageError(`--env ${ENVS.join("|")} is required`);
  return env;
}

/** A whole number flag within bounds, or undefined when not given. */
export function intFlag(value: unknown, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(String(value)) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max} (got "${value}")`);
  return n;
}

/** The text of the file a flag's `@FILE` value names (a usage error naming the flag when it cannot be read). */
export function flagFile(text: string, flag: string): string {
  try {
    return readFileSync(text.slice(1), "utf8");
  } catch (err) {
    throw new UsageError(`--${flag} ${text}: cannot read ${text.slice(1)} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** A JSON flag: inline JSON, or `@FILE` to read it from a file. */
export function jsonFlag(text: unknown, flag: string): unknown {
  if (typeof text !== "string") throw new UsageError(`--${flag} JSON is required`);
  const source = text.startsWith("@") ? flagFile(text, flag) : text;
  try {
    return JSON.parse(source);
  } catch {
    const shown = source.length > 80 ? `${source.slice(0, 80)}…` : source;
    throw new UsageError(`--${flag} must be JSON (a string needs quotes: --${flag} '"text"'), got: ${shown}`);
  }
}

/** Prints `data` as JSON under --json, else the human text. */
export function emit(json: unknown, data: unknown, human: () => string): void {
  console.log(json ? JSON.stringify(data, null, 2) : human());
}

type Cell = string | number | boolean | null | undefined;

/** Longest cell of a column that may be shortened (ids, emails and names are never shortened). */
const CELL_MAX = 48;

function cellText(c: Cell): string {
  if (c === null || c === undefined || c === "") return "-";
  return String(c).replace(/\s*\n\s*/g, " ");
}

/**
 * Left-aligned columns separated by two spaces; empty cells print as "-".
 * Cells of columns not named in `full` longer than 48 characters end in "…".
 */
export function table(header: string[], rows: Cell[][], options: { full?: string[] } = {}): string {
  const full = new Set(options.full ?? ["ID", "NAME", "EMAIL"]);
  const cells = [
    header,
    ...rows.map((r) =>
      r.map((c, i) => {
        const text = cellText(c);
        return full.has(header[i]!) || text.length <= CELL_MAX ? text : `${text.slice(0, CELL_MAX - 1)}…`;
      }),
    ),
  ];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd()).join("\n");
}

/** `2026-11-23T13:25:07.123Z` → `2026-11-23 13:25` (UTC), for tables. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "";
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso;
}

/** stdin and stdout are both terminals: a person is watching and can answer. */
export function isInteractive(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}

async function ask(question: string): Promise<boolean> {
  // Imported here: the bundle's static imports of Node built-ins are loaded by every command, `svc serve` included.
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    const answer = await Promise.race([rl.question(`${question} [y/N] `), new Promise<string>((resolve) => rl.once("close", () => resolve("")))]);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
    process.stdin.pause();
  }
}

/**
 * Asks before a change to prod or a deletion when a person runs the command
 * in a terminal. Never asks with --yes, in scripts (stdin or stdout not a
 * terminal) or with SERVICE_CLI_TOKEN (CI). A "no" changes nothing: exit 1.
 * True when it asked and the person said yes.
 */
export async function confirmChange(values: ArgValues, client: SvcClient, question: string): Promise<boolean> {
  if (values.yes === true || !isInteractive() || client.credentialSource === "SERVICE_CLI_TOKEN") return false;
  if (!(await ask(question))) throw new CliError("Cancelled; nothing was changed.", "DECLINED", "answer y to go ahead, or pass --yes to skip the question");
  return true;
}

/**
 * A noun's delete subcommand (`delete <name>` by default): opens the client, reads what the arguments name when the
 * question needs more than the argument (`target`), asks first (confirmChange), deletes, and prints `done`'s JSON
 * with --json, else its line.
 */
export function deleteCommand<T = string>(spec: {
  name?: string;
  summary: string;
  args?: string[];
  details?: string[];
  examples: string[];
  target?: (client: SvcClient, positionals: string[]) => Promise<T>;
  question: (target: T) => string;
  remove: (client: SvcClient, target: T) => Promise<unknown>;
  done: (target: T) => [json: unknown, text: string];
}): Command {
  return {
    name: spec.name ?? "delete",
    summary: spec.summary,
    args: spec.args ?? ["<name>"],
    ...(spec.details ? { details: spec.details } : {}),
    examples: spec.examples,
    flags: { yes: YES_FLAG, ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const client = openClient(values);
      const target = spec.target ? await spec.target(client, positionals) : (positionals[0] as T);
      await confirmChange(values, client, spec.question(target));
      await spec.remove(client, target);
      const [json, text] = spec.done(target);
      emit(values.json, json, () => text);
      return 0;
    },
  };
}

/** A secret typed where an id belongs: refused without sending it (it would sit in a URL and a log) or echoing it. */
export function refuseSecret(id: string, what: string, listCommand: string, revokeCommand: string): void {
  const secret = /^(sdk|svc)_([a-z]+)_/i.exec(id);
  if (secret) {
    throw new UsageError(
      `that is a secret (${secret[0]}…${id.slice(-4)}), not ${what} id; it was not sent. Find the id with \`${listCommand}\` (it shows the same masked form) and run \`${revokeCommand} <id>\`.`,
    );
  }
}
