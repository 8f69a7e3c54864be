/**
 * `npm run docs`: writes the parts of docs/ that the code already says, so they cannot fall behind it
 * (issue 27, item 6): the CLI command table and every subcommand with its flags (docs/cli.md), and the
 * MCP tool list (docs/cli.md, "The MCP tool server"). Each goes between a pair of markers
 * `<!-- generated:NAME -->` … `<!-- /generated:NAME -->`; the text around them is written by hand.
 * The sources are the manifests: the shared commands (src/cli/commands.ts) and each module's `cli`
 * nouns, loaded for their summary, subcommands and flags; each module's `mcpTools`.
 * `bun scripts/gen-docs.ts --check` writes nothing and exits 1 when a committed page differs
 * (test/docs.test.ts runs the same comparison).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "../src/cli/command";
import { COMMANDS } from "../src/main";
import { mcpTools } from "../src/mcp/server";

const root = join(import.meta.dir, "..");

/** A table cell: pipes escaped, one line. */
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");

/** `svc gates templates list` for every leaf under `command`, with the command itself. */
function leaves(path: string, command: Command): { path: string; command: Command }[] {
  if (!command.subcommands?.length) return [{ path, command }];
  return command.subcommands.flatMap((sub) => leaves(`${path} ${sub.name}`, sub));
}

/** `list | get | templates list` */
function subcommandNames(command: Command): string {
  return leaves("", command)
    .map((l) => l.path.trim())
    .join(" | ");
}

function usage(path: string, command: Command): string {
  return [`svc ${path}`, ...(command.args ?? [])].join(" ");
}

function flagText(name: string, flag: NonNullable<Command["flags"]>[string]): string {
  const shown = flag.type === "string" ? `--${name} ${flag.value ?? "VALUE"}` : `--${name}`;
  return `\`${shown}\`${flag.multiple ? " (repeatable)" : ""}: ${flag.help}`;
}

export async function cliTable(): Promise<string> {
  const rows = ["| command | subcommands | what it does |", "|---|---|---|"];
  const loaded = await Promise.all(COMMANDS.map(async (entry) => ({ entry, command: await entry.load() })));
  for (const { entry, command } of loaded) {
    const names = [entry.name, ...(entry.aliases ?? [])].map((n) => `\`svc ${n}\``).join(", ");
    rows.push(`| ${names} | ${cell(command.subcommands?.length ? subcommandNames(command) : "")} | ${cell(command.summary)} |`);
  }
  rows.push("| `svc help` |  | every command; `svc help <command> [subcommand]` (or `--help` anywhere) explains one, with every flag and examples |");
  return rows.join("\n");
}

/** Flags most commands take, described once in docs/cli.md instead of under every subcommand. */
const COMMON_FLAGS = new Set(["json", "url", "project", "yes", "help"]);

export async function cliReference(): Promise<string> {
  const out: string[] = [];
  const loaded = await Promise.all(COMMANDS.map(async (entry) => ({ entry, command: await entry.load() })));
  for (const { entry, command } of loaded) {
    out.push(`#### svc ${entry.name}`, "");
    for (const leaf of leaves(entry.name, command)) {
      out.push(`- \`${usage(leaf.path, leaf.command)}\`: ${cell(leaf.command.summary)}`);
      for (const [name, flag] of Object.entries(leaf.command.flags ?? {})) {
        if (!COMMON_FLAGS.has(name)) out.push(`  - ${cell(flagText(name, flag))}`);
      }
    }
    out.push("");
  }
  return out.join("\n").trimEnd();
}

export function mcpTable(): string {
  const tools = mcpTools();
  const rows = [
    `${tools.length} tools, in manifest order. *reads* tools are offered to every sign-in; the others only where the credential may write. *untrusted* marks answers that carry outsiders' text (wrapped as described above).`,
    "",
    "| tool | what it does | kind |",
    "|---|---|---|",
  ];
  for (const tool of tools) {
    const kind = [tool.annotations.readOnlyHint === true ? "reads" : "writes", tool.annotations.destructiveHint === true ? "destructive" : "", tool.untrusted ? "untrusted" : ""]
      .filter(Boolean)
      .join(", ");
    rows.push(`| \`${tool.name}\` | ${cell(tool.description)} | ${kind} |`);
  }
  return rows.join("\n");
}

/** page → marker name → generated text. */
export async function generatedSections(): Promise<Record<string, Record<string, string>>> {
  return {
    "docs/cli.md": { "cli-commands": await cliTable(), "cli-reference": await cliReference(), "mcp-tools": mcpTable() },
  };
}

/** The page with each marked section replaced; throws when a marker pair is missing. */
export function fill(page: string, text: string, sections: Record<string, string>): string {
  let out = text;
  for (const [name, body] of Object.entries(sections)) {
    const open = `<!-- generated:${name} (scripts/gen-docs.ts: edit the code, then npm run docs) -->`;
    const close = `<!-- /generated:${name} -->`;
    const start = out.indexOf(open);
    const end = out.indexOf(close);
    if (start < 0 || end < start) throw new Error(`${page}: the markers of "${name}" are missing: ${open} … ${close}`);
    out = `${out.slice(0, start + open.length)}\n${body}\n${out.slice(end)}`;
  }
  return out;
}

/** Pages whose committed text differs from what the generator writes. */
export async function stalePages(write: boolean): Promise<string[]> {
  const stale: string[] = [];
  for (const [page, sections] of Object.entries(await generatedSections())) {
    const path = join(root, page);
    const before = readFileSync(path, "utf8");
    const after = fill(page, before, sections);
    if (after === before) continue;
    stale.push(page);
    if (write) writeFileSync(path, after);
  }
  return stale;
}

if (import.meta.main) {
  const check = process.argv.includes("--check");
  const stale = await stalePages(!check);
  if (check && stale.length > 0) {
    console.error(`out of date: ${stale.join(", ")}; run \`npm run docs\``);
    process.exit(1);
  }
  console.log(stale.length ? `wrote ${stale.join(", ")}` : "docs are up to date");
}
