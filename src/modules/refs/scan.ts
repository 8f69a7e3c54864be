import { closeSync, openSync, readFileSync, readSync, readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { RefKind } from "./types";

/**
 * `svc refs scan`: finds known flag names in a directory, on this machine, reading no more than
 * MAX_FILES files of at most MAX_FILE_BYTES each and keeping at most MAX_REFS references. A line
 * where an SDK call of one of the GrowthBook or OpenFeature SDKs' languages (or svc's own) names
 * the flag is `sdk`; the name as an exact quoted string literal anywhere else is `string`. A name
 * in a comment or inside a longer identifier or string is not a reference.
 */
export const MAX_FILES = 100_000;
export const MAX_REFS = 100_000;
export const MAX_FILE_BYTES = 1024 * 1024;
const TEXT_MAX = 200;
/** Folders of other people's code or build output, skipped in a walk and in `git ls-files` alike. */
const SKIP_DIRS = new Set(["node_modules", ".git", "vendor", "dist", "build"]);

export type ScanRef = { flag: string; file: string; line: number; kind: RefKind; text: string };
export type ScanResult = { dir: string; source: "git" | "walk"; files: number; refs: ScanRef[]; truncated: boolean };

const TYPES = ["Boolean", "String", "Number", "Integer", "Double", "Float", "Object", "Bool", "Int", "Struct"];
const snake = (s: string) => s.toLowerCase();

/**
 * The evaluation calls of the GrowthBook and OpenFeature SDKs: JS/TS, Java, Kotlin, PHP, Swift and
 * Dart (camelCase), Go and C# (PascalCase, C#'s …Async), Python, Ruby, Rust and Elixir (snake_case,
 * Ruby's and Elixir's `on?`), and svc's own SDK.
 */
export const SDK_METHODS: readonly string[] = [
  ...new Set([
    // GrowthBook
    "isOn", "isOff", "getFeatureValue", "feature", "evalFeature", "getFeature",
    "IsOn", "IsOff", "GetFeatureValue", "Feature", "EvalFeature", "GetFeature",
    "is_on", "is_off", "on?", "off?", "get_feature_value", "feature_value", "eval_feature", "feature_on?", "feature_off?", "feature_result",
    // svc
    "isEnabled", "isKilled", "getConfig", "getVariant", "IsEnabled", "IsKilled", "GetConfig", "GetVariant", "is_enabled", "is_killed", "get_config", "get_variant",
    // OpenFeature
    ...TYPES.flatMap((T) => [
      `get${T}Value`, `get${T}Details`, `get${T}Flag`,
      `Get${T}Value`, `Get${T}ValueAsync`, `Get${T}Details`, `Get${T}DetailsAsync`, `${T}Value`, `${T}ValueDetails`,
      `get_${snake(T)}_value`, `get_${snake(T)}_details`, `fetch_${snake(T)}_value`, `fetch_${snake(T)}_details`,
    ]),
  ]),
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/**
 * A call, then its flag argument: `(` with an optional label (`key:` in Swift, Dart, Kotlin) or one
 * plain argument before it (Go's ctx, Elixir's context), or Ruby's and Elixir's call without
 * parentheses; then a quoted string, or a Ruby symbol or Elixir atom.
 */
const SDK_CALL = new RegExp(
  `(?<![\\w?])(?:${[...SDK_METHODS].sort((a, b) => b.length - a.length).map(escape).join("|")})(?![\\w?])` +
    `(?:\\s*\\(\\s*(?:[A-Za-z_]\\w*\\s*:\\s*|[A-Za-z_][\\w.]*\\s*,\\s*)?|[ \\t]+)` +
    `(?:"([^"\\\\\\n]{1,256})"|'([^'\\\\\\n]{1,256})'|\`([^\`\\\\\\n]{1,256})\`|:([A-Za-z_]\\w*))`,
  "g",
);
/** Every quoted string literal of a line. */
const STRING = /"([^"\\\n]{1,256})"|'([^'\\\n]{1,256})'|`([^`\\\n]{1,256})`/g;

/** The references in one file's text. */
export function scanText(text: string, file: string, names: ReadonlySet<string>, max = MAX_REFS): ScanRef[] {
  const out: ScanRef[] = [];
  const lines = text.split(/\r\n|\n|\r/);
  for (let i = 0; i < lines.length && out.length < max; i++) {
    const line = lines[i]!;
    if (line.length === 0) continue;
    const found = new Map<string, RefKind>();
    for (const m of line.matchAll(SDK_CALL)) {
      const name = m[1] ?? m[2] ?? m[3] ?? m[4]!;
      if (names.has(name)) found.set(name, "sdk");
    }
    for (const m of line.matchAll(STRING)) {
      const name = m[1] ?? m[2] ?? m[3]!;
      if (names.has(name) && !found.has(name)) found.set(name, "string");
    }
    if (found.size === 0) continue;
    // Text from someone's file goes to a terminal: tabs become spaces, other control characters U+FFFD (no escape sequences).
    const shown = line.trim().slice(0, TEXT_MAX).replace(/\t/g, " ").replace(/[\u0000-\u001f\u007f-\u009f]/g, "\ufffd");
    for (const [flag, kind] of found) {
      out.push({ flag, file, line: i + 1, kind, text: shown });
      if (out.length >= max) break;
    }
  }
  return out;
}

const skipped = (path: string) => path.split(/[\\/]/).some((part) => SKIP_DIRS.has(part));

/** The files of a git work tree (tracked, and untracked ones .gitignore does not ignore), relative to dir; null when dir is not in one. */
function gitFiles(dir: string): string[] | null {
  try {
    const inside = Bun.spawnSync(["git", "-C", dir, "rev-parse", "--is-inside-work-tree"], { stdout: "pipe", stderr: "ignore" });
    if (inside.exitCode !== 0 || inside.stdout.toString().trim() !== "true") return null;
    const listed = Bun.spawnSync(["git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], { stdout: "pipe", stderr: "ignore", maxBuffer: 256 * 1024 * 1024 });
    if (listed.exitCode !== 0) return null;
    return [...new Set(listed.stdout.toString().split("\0").filter((f) => f !== ""))];
  } catch {
    return null;
  }
}

/**
 * The root .gitignore of a folder outside git, for the walk: names, `dir/`, anchored paths and
 * `*`, `?`, `**` globs (negations are not undone). In a work tree git itself applies every rule.
 */
function gitignoreOf(dir: string): (path: string, isDir: boolean) => boolean {
  let text: string;
  try {
    text = readFileSync(join(dir, ".gitignore"), "utf8");
  } catch {
    return () => false;
  }
  const rules = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#") && !l.startsWith("!"))
    .slice(0, 1000)
    .map((line) => {
      const dirOnly = line.endsWith("/");
      let p = dirOnly ? line.slice(0, -1) : line;
      const anchored = p.includes("/");
      if (p.startsWith("/")) p = p.slice(1);
      const body = p
        .split("/")
        .map((seg) => (seg === "**" ? "\u0000" : seg.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")))
        .join("/")
        .replace(/\u0000\//g, "(?:.*/)?")
        .replace(/\/\u0000/g, "(?:/.*)?")
        .replace(/\u0000/g, ".*");
      return { dirOnly, re: new RegExp(anchored ? `^${body}$` : `(?:^|/)${body}$`) };
    });
  return (path, isDir) => rules.some((r) => (!r.dirOnly || isDir) && r.re.test(path));
}

/** A walk that skips SKIP_DIRS, what the root .gitignore names, and symbolic links, stopping after `max` files. */
function walkFiles(dir: string, max: number): string[] {
  const ignored = gitignoreOf(dir);
  const out: string[] = [];
  const stack = [dir];
  while (stack.length && out.length < max) {
    const current = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? 1 : -1));
    for (const e of entries) {
      const path = relative(dir, join(current, e.name)).split(sep).join("/");
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name) && !ignored(path, true)) stack.push(join(current, e.name));
      } else if (e.isFile() && !ignored(path, false)) {
        out.push(path);
        if (out.length >= max) break;
      }
    }
  }
  return out;
}

/** The file's text, or null for a binary file (a NUL byte in its first 8 KiB), one over MAX_FILE_BYTES, or one that cannot be read. */
function readText(path: string): string | null {
  try {
    const st = statSync(path);
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return null;
    const fd = openSync(path, "r");
    try {
      const buf = Buffer.alloc(st.size);
      let read = 0;
      while (read < st.size) {
        const n = readSync(fd, buf, read, st.size - read, read);
        if (n <= 0) break;
        read += n;
      }
      const bytes = buf.subarray(0, read);
      if (bytes.subarray(0, 8192).includes(0)) return null;
      return bytes.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

/** Scans `dir` for `names`: `git ls-files` in a git work tree, else a walk; sorted by flag, file and line. */
export function scanDirectory(dir: string, names: Iterable<string>, limits: { maxFiles?: number; maxRefs?: number } = {}): ScanResult {
  const maxFiles = limits.maxFiles ?? MAX_FILES;
  const maxRefs = limits.maxRefs ?? MAX_REFS;
  const wanted = new Set([...names].filter((n) => n !== ""));
  const fromGit = gitFiles(dir);
  let files = (fromGit ?? walkFiles(dir, maxFiles + 1)).filter((f) => !skipped(f)).sort();
  let truncated = files.length > maxFiles;
  files = files.slice(0, maxFiles);
  const refs: ScanRef[] = [];
  for (const file of files) {
    if (refs.length >= maxRefs) {
      truncated = true;
      break;
    }
    const text = readText(join(dir, file));
    if (text === null) continue;
    refs.push(...scanText(text, file, wanted, maxRefs - refs.length));
  }
  refs.sort((a, b) => (a.flag !== b.flag ? (a.flag < b.flag ? -1 : 1) : a.file !== b.file ? (a.file < b.file ? -1 : 1) : a.line - b.line));
  return { dir, source: fromGit ? "git" : "walk", files: files.length, refs, truncated };
}
