import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { UsageError } from "../../lib/config";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, emit, openClient, str, table, when } from "../../cli/client-command";
import type { ArgValues, Command, Flags } from "../../cli/command";
import { CliError } from "../../cli/errors";
import type { configRoutes } from "../configs/routes";
import type { experimentRoutes } from "../experiments/routes";
import type { gateRoutes } from "../gates/routes";
import type { killswitchRoutes } from "../killswitches/routes";
import type { refRoutes } from "./routes";
import { MAX_FILES, MAX_REFS, type ScanResult, scanDirectory } from "./scan";
import { PUSH_MAX_REFS } from "./types";

const refsApi = (client: SvcClient) => client.api<ReturnType<typeof refRoutes>>().api.admin.refs;

const NAME_FLAGS = {
  names: { type: "string", value: "LIST", help: "Look for these names only, comma-separated (nothing is asked of the server)" },
  "names-file": { type: "string", value: "FILE", help: "Look for the names in FILE: one a line, or a JSON array (nothing is asked of the server)" },
  offline: { type: "boolean", help: "Do not ask the server for the project's flag names: --names or --names-file must give them" },
} satisfies Flags;

/** The project's flag names: killswitches, gates, configs and experiments, through the typed client. */
async function projectNames(client: SvcClient): Promise<string[]> {
  const [ks, gates, configs, experiments] = await Promise.all([
    dataOf(client.api<ReturnType<typeof killswitchRoutes>>().api.admin.killswitches.get({ query: {} })),
    dataOf(client.api<ReturnType<typeof gateRoutes>>().api.admin.gates.get({ query: {} })),
    dataOf(client.api<ReturnType<typeof configRoutes>>().api.admin.configs.get({ query: {} })),
    dataOf(client.api<ReturnType<typeof experimentRoutes>>().api.admin.experiments.get({ query: {} })),
  ]);
  return [...new Set([...ks, ...gates, ...configs, ...experiments].map((x) => x.name))];
}

function namesFromFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`--names-file: cannot read ${path}: ${(err as Error).message}`);
  }
  if (text.trimStart().startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UsageError("--names-file: not a JSON array of strings");
    }
    if (!Array.isArray(parsed) || parsed.some((n) => typeof n !== "string")) throw new UsageError("--names-file: not a JSON array of strings");
    return parsed as string[];
  }
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}

/** The names to look for: --names, --names-file, else the server's (unless --offline). */
async function namesOf(values: ArgValues): Promise<string[]> {
  const given = str(values, "names");
  const file = str(values, "names-file");
  if (given !== undefined || file !== undefined) {
    const names = [...(given ?? "").split(",").map((n) => n.trim()), ...(file !== undefined ? namesFromFile(file) : [])].filter((n) => n !== "");
    if (names.length === 0) throw new UsageError("--names / --names-file: no names given");
    return names;
  }
  if (values.offline) throw new UsageError("--offline needs the names: --names a,b or --names-file FILE");
  return projectNames(openClient(values));
}

function dirOf(positionals: string[]): string {
  const dir = resolve(positionals[0] ?? ".");
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`not a directory: ${positionals[0] ?? "."}`);
  return dir;
}

/** A file name for the terminal: control characters (escape sequences) as U+FFFD. */
const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "\ufffd");

function scanText(result: ScanResult): string {
  if (result.refs.length === 0) return `No references in ${result.files} files.`;
  const lines: string[] = [];
  let flag = "";
  for (const r of result.refs) {
    if (r.flag !== flag) {
      flag = r.flag;
      const n = result.refs.filter((x) => x.flag === flag).length;
      lines.push(`${flag} (${n} reference${n === 1 ? "" : "s"})`);
    }
    lines.push(`  ${printable(r.file)}:${r.line}  ${r.kind}  ${r.text}`);
  }
  const flags = new Set(result.refs.map((r) => r.flag)).size;
  lines.push(`${result.refs.length} references to ${flags} flags in ${result.files} files${result.truncated ? ` (stopped at ${MAX_FILES} files or ${MAX_REFS} references)` : ""}.`);
  return lines.join("\n");
}

/** `git` in `dir`: its trimmed output, or undefined when it fails (not a repository, no remote, no commit). */
function git(dir: string, args: string[]): string | undefined {
  try {
    const run = Bun.spawnSync(["git", "-C", dir, ...args], { stdout: "pipe", stderr: "ignore" });
    const out = run.stdout.toString().trim();
    return run.exitCode === 0 && out !== "" ? out : undefined;
  } catch {
    return undefined;
  }
}

/** `https://user:pw@github.com/acme/shop.git` and `git@github.com:acme/shop.git` → `github.com/acme/shop` (no credentials ever leave). */
export function repoName(remote: string): string {
  const scp = /^[^@/]+@([^:/]+):(.+)$/.exec(remote);
  const path = scp ? `${scp[1]}/${scp[2]}` : remote.replace(/^[a-z+]+:\/\//i, "").replace(/^[^@/]*@/, "");
  return path.replace(/\.git$/, "").replace(/\/+$/, "");
}

export const refsCommand: Command = {
  name: "refs",
  summary: "Code references: scan a directory for flag names, push them, list where a flag is used",
  details: [
    "`svc refs scan` reads the files on this machine (git ls-files in a git work tree, else a walk that skips node_modules, .git, vendor, dist, build and what the root .gitignore names; binary files and files over 1 MiB are skipped) and finds the project's killswitch, gate, config and experiment names: in SDK calls of the GrowthBook and OpenFeature SDKs' languages and svc's own (sdk), and as exact quoted strings elsewhere (string).",
    "`svc refs push` sends the scan of one commit; it replaces what that repository pushed before. Each flag's page in the dashboard shows where it is used.",
  ],
  examples: ["svc refs scan", "svc refs scan ./services/api --json", "svc refs scan . --names checkout,new-search", "svc refs push --repo github.com/acme/shop", "svc refs list checkout"],
  subcommands: [
    {
      name: "scan",
      summary: "Find flag names in a directory (file:line, sdk or string); nothing is sent",
      args: ["[<dir>]"],
      examples: ["svc refs scan", "svc refs scan ./web --json", "svc refs scan . --offline --names-file flags.txt"],
      flags: { ...NAME_FLAGS, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const dir = dirOf(positionals);
        const result = scanDirectory(dir, await namesOf(values));
        emit(values.json, result, () => scanText(result));
        return 0;
      },
    },
    {
      name: "push",
      summary: "Scan a directory and replace its repository's references on the server",
      args: ["[<dir>]"],
      details: ["In a git work tree --repo defaults to the origin remote (github.com/acme/shop), --commit to HEAD and --branch to the current branch; files are named from the repository's root."],
      examples: ["svc refs push", "svc refs push ./shop --repo github.com/acme/shop --commit $CI_COMMIT_SHA --branch main"],
      flags: {
        repo: { type: "string", value: "NAME", help: "The repository's name (default: the git origin remote, else the top folder's name)" },
        commit: { type: "string", value: "SHA", help: "The commit scanned (default: git rev-parse HEAD)" },
        branch: { type: "string", value: "B", help: "The branch (default: the current git branch)" },
        ...NAME_FLAGS,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const dir = dirOf(positionals);
        const top = git(dir, ["rev-parse", "--show-toplevel"]);
        const remote = git(dir, ["remote", "get-url", "origin"]);
        const repo = str(values, "repo") ?? (remote ? repoName(remote) : top ? basename(top) : undefined);
        const commit = str(values, "commit") ?? git(dir, ["rev-parse", "HEAD"]);
        const current = git(dir, ["rev-parse", "--abbrev-ref", "HEAD"]);
        const branch = str(values, "branch") ?? (current && current !== "HEAD" ? current : undefined);
        if (!repo) throw new UsageError("--repo is required outside a git work tree");
        if (!commit) throw new UsageError("--commit is required outside a git work tree (or before its first commit)");
        const client = openClient(values);
        const result = scanDirectory(dir, str(values, "names") !== undefined || str(values, "names-file") !== undefined || values.offline ? await namesOf(values) : await projectNames(client));
        if (result.refs.length > PUSH_MAX_REFS) throw new CliError(`${result.refs.length} references: a push carries at most ${PUSH_MAX_REFS}`, "USAGE", "push a smaller folder, or fewer names with --names");
        // Files from the repository's root when a sub-folder was scanned.
        const prefix = top ? (git(dir, ["rev-parse", "--show-prefix"]) ?? "") : "";
        const refs = result.refs.map((r) => ({ flag: r.flag, file: prefix + r.file, line: r.line, kind: r.kind }));
        const pushed = await dataOf(refsApi(client).post({ repo, commit, ...(branch ? { branch } : {}), refs }));
        emit(values.json, pushed, () => `Pushed ${pushed.refs} references to ${pushed.flags} flags of ${pushed.repo} at ${pushed.commit.slice(0, 12)}${pushed.branch ? ` (${pushed.branch})` : ""}; they replace its earlier push.`);
        return 0;
      },
    },
    {
      name: "list",
      summary: "Where a flag is used, in every pushed repository",
      args: ["<flag>"],
      examples: ["svc refs list checkout", "svc refs list checkout --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const found = await dataOf(refsApi(openClient(values)).get({ query: { flag: positionals[0]! } }));
        emit(values.json, found, () => {
          if (found.reposPushed === 0) return "No repository has pushed references yet: run `svc refs push` in one.";
          if (found.total === 0) return `No references to ${found.flag} in ${found.reposPushed} pushed repositor${found.reposPushed === 1 ? "y" : "ies"}.`;
          const rows = table(["REPO", "FILE", "LINE", "KIND", "COMMIT"], found.refs.map((r) => [r.repo, printable(r.file), String(r.line), r.kind, r.commit.slice(0, 12)]));
          return `${rows}${found.truncated ? `\n(first ${found.refs.length} of ${found.total})` : ""}`;
        });
        return 0;
      },
    },
    {
      name: "repos",
      summary: "Repositories with pushed references: commit, branch, counts, when",
      examples: ["svc refs repos", "svc refs repos --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values }) {
        const repos = await dataOf(refsApi(openClient(values)).repos.get());
        emit(values.json, repos, () =>
          repos.length === 0 ? "No repository has pushed references yet: run `svc refs push` in one." : table(["REPO", "BRANCH", "COMMIT", "REFS", "FLAGS", "PUSHED"], repos.map((r) => [r.repo, r.branch ?? "-", r.commit.slice(0, 12), String(r.refs), String(r.flags), when(r.pushedAt)])),
        );
        return 0;
      },
    },
    {
      name: "forget",
      summary: "Delete a repository's pushed references",
      args: ["<repo>"],
      examples: ["svc refs forget github.com/acme/old-shop"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const repo = positionals[0]!;
        await dataOf(refsApi(openClient(values)).repos({ repo: seg(repo) }).delete());
        emit(values.json, { repo, deleted: true }, () => `Forgot the references of ${repo}.`);
        return 0;
      },
    },
  ],
};
