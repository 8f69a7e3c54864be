import { sha256Hex } from "../../lib/ids";

// Grouping of error occurrences into tracked errors (NOTES.md "Error ingest that existing SDKs speak").
// Pure: no clock, no store. Frames are listed top first (the frame that threw is frames[0]).

/** One stack frame, from a JS stack string or a Sentry event. */
export type Frame = {
  function?: string;
  module?: string;
  filename?: string;
  lineno?: number;
  colno?: number;
  /** Our code (true), a dependency or the runtime (false), or not said. */
  inApp?: boolean;
  /** What Sentry SDKs send besides (kept with occurrences, never grouped by). */
  absPath?: string;
  preContext?: string[];
  contextLine?: string;
  postContext?: string[];
};

/** Frames that make a fingerprint: the top in-app ones (all frames when none is in-app). */
export const FINGERPRINT_FRAMES = 5;
/** Stack lines read from a stack string (the rest is the same call chain deeper down). */
export const MAX_STACK_LINES = 200;
export const TYPE_MAX = 128;
export const MESSAGE_MAX = 1000;
export const CULPRIT_MAX = 512;
/** Sentry's marker, in a client fingerprint, for "the grouping svc would have made". */
const DEFAULT_MARKERS = new Set(["{{ default }}", "{{default}}"]);

// Control characters, line separators, bidi overrides and BOMs (they reorder or hide text where it is shown).
// biome-ignore lint: control characters are what it matches.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]+/g;

/** Text of a sample (type, message, culprit): no control characters, whitespace collapsed, at most `max` characters. */
export function cleanText(text: string, max: number): string {
  const flat = text.slice(0, max * 4).replace(CONTROLS, " ").replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  // Never cut a surrogate pair in half.
  let cut = max - 1;
  const code = flat.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return `${flat.slice(0, cut)}…`;
}

/** The exception type as grouped and shown: trimmed, one line, `Error` when there is none. */
export function normaliseType(type: string | undefined | null): string {
  const clean = typeof type === "string" ? cleanText(type, TYPE_MAX) : "";
  return clean === "" ? "Error" : clean;
}

/**
 * The message as grouped when there are no frames: the parts that vary per
 * occurrence become placeholders (URLs, emails, UUIDs, hex, numbers), so
 * `User 42 not found` and `User 43 not found` are one error.
 */
export function normaliseMessage(message: string): string {
  // Only the start groups: the rest is usually the same detail at greater length (and every pattern stays cheap).
  return message
    .slice(0, 1000)
    .replace(CONTROLS, " ")
    .replace(/\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s"'<>()[\]{}]+/gi, "<url>")
    // The lookbehind starts a match only where a run of address characters starts: linear, whatever the text.
    .replace(/(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b/g, "<email>")
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>")
    .replace(/\b0x[0-9a-f]+\b/gi, "<hex>")
    // A run of 8+ hex digits with a digit and a letter in it (ids, hashes); plain words such as "deadbeef" or "facade" stay.
    .replace(/\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, "<hex>")
    .replace(/\d+(?:[.,]\d+)*/g, "<n>")
    .replace(/\s+/g, " ")
    .trim();
}

/** `https://cdn.example.com/assets/main.3f2a1b9c.js?v=2` → `main.js`: the file's name, without a build's content hash. */
export function fileBasename(filename: string): string {
  const path = filename.slice(0, 1000).replace(/[?#].*$/, "").replaceAll("\\", "/");
  const base = path.slice(path.lastIndexOf("/") + 1);
  return (
    base
      // webpack-style `main.3f2a1b9c.js`, `chunk-5d41402a.js`
      .replace(/[.-](?=[0-9a-f]*[0-9])[0-9a-f]{8,}(?=\.)/gi, "")
      // vite/rollup-style `index-DiwrgT2a.js` (8 characters with a digit and an upper-case letter)
      .replace(/-(?=[A-Za-z0-9_]*[0-9])(?=[A-Za-z0-9_]*[A-Z])[A-Za-z0-9_]{8}(?=\.[cm]?js$)/, "")
  );
}

/** The function's name as grouped: without `async `/`new ` and V8's ` [as alias]`. */
function functionName(name: string | undefined): string {
  if (!name) return "?";
  const clean = name
    .replace(/^(?:async|new)\s+/, "")
    .replace(/\s+\[as [^\]]*\]$/, "")
    .trim();
  return clean === "" ? "?" : clean;
}

/** What identifies a frame across deploys: its module (else file basename) and function; never its line or column. */
export function frameKey(frame: Frame): string {
  const where = frame.module?.trim().slice(0, 300) || (frame.filename ? fileBasename(frame.filename) : "") || "?";
  return `${where}|${functionName(frame.function?.slice(0, 300))}`;
}

const meaningful = (f: Frame) => Boolean(f.module?.trim() || f.filename || f.function);

/** The frames a fingerprint is made of: the top in-app ones, else the top ones. */
export function groupingFrames(frames: Frame[]): Frame[] {
  const usable = frames.filter(meaningful);
  const inApp = usable.filter((f) => f.inApp === true);
  return (inApp.length > 0 ? inApp : usable).slice(0, FINGERPRINT_FRAMES);
}

/** The default grouping key of an occurrence (the text that is hashed). */
export function defaultGroupingKey(input: { type?: string | null; message: string; frames: Frame[] }): string {
  const type = normaliseType(input.type);
  const frames = groupingFrames(input.frames);
  if (frames.length > 0) return ["frames", type, ...frames.map(frameKey)].join("\n");
  return ["message", type, normaliseMessage(input.message)].join("\n");
}

const hash = (key: string) => sha256Hex(key).slice(0, 32);

/**
 * The fingerprint of an occurrence: 32 hex characters (the start of a
 * SHA-256). A client-sent fingerprint wins (Sentry's list form may include
 * `{{ default }}` for the default grouping); it is hashed as well, so every
 * fingerprint has the same shape.
 */
export function fingerprintOf(input: { type?: string | null; message: string; frames: Frame[]; custom?: string | string[] | null }): string {
  const custom = input.custom;
  if (typeof custom === "string" && custom !== "") return hash(`custom\n${custom}`);
  if (Array.isArray(custom) && custom.length > 0) {
    const parts = custom.map((part) => (DEFAULT_MARKERS.has(part) ? defaultGroupingKey(input) : part));
    return hash(`custom\n${parts.join("\n")}`);
  }
  return hash(defaultGroupingKey(input));
}

/** Where it broke, for people: the top in-app frame (else the top frame), `function (module-or-file:line)`. */
export function culpritOf(frames: Frame[]): string | null {
  const usable = frames.filter(meaningful);
  const top = usable.find((f) => f.inApp === true) ?? usable[0];
  if (!top) return null;
  const where = top.module?.trim() || (top.filename ? top.filename.replace(/[?#].*$/, "") : "?");
  const line = top.lineno !== undefined ? `:${top.lineno}` : "";
  return cleanText(`${functionName(top.function)} (${where}${line})`, CULPRIT_MAX);
}

/** Files of the runtime or of dependencies. */
function isLibrary(filename: string): boolean {
  return (
    /(^|[\\/])node_modules[\\/]/.test(filename) ||
    /^(?:node|bun|internal|native|chrome-extension|moz-extension|webpack-internal):/.test(filename) ||
    filename.startsWith("internal/") ||
    filename === "native" ||
    filename === "<anonymous>" ||
    filename === "[native code]"
  );
}

function locationFrame(fn: string | undefined, location: string): Frame {
  const frame: Frame = {};
  if (fn) frame.function = fn;
  // `file:line:col`, `file:line`, or a location without numbers (`native`, `<anonymous>`).
  const m = /:(\d{1,9})(?::(\d{1,9}))?$/.exec(location);
  const filename = (m ? location.slice(0, m.index) : location).replace(/^file:\/\//, "");
  if (filename !== "") frame.filename = filename;
  if (m) {
    frame.lineno = Number(m[1]);
    if (m[2] !== undefined) frame.colno = Number(m[2]);
  }
  // A location without a line (`native`, `<anonymous>`, `index 0` of Promise.all) is never our code.
  frame.inApp = m !== null && frame.filename !== undefined && !isLibrary(frame.filename);
  return frame;
}

/** One V8/Bun line after `at `: `fn (location)` or `location`; `eval at fn (file:1:2), <anonymous>:1:1` keeps the file. */
function v8Frame(rest: string): Frame {
  const open = rest.endsWith(")") ? rest.indexOf(" (") : -1;
  if (open < 0) return locationFrame(undefined, rest);
  let location = rest.slice(open + 2, -1);
  if (location.startsWith("eval at ")) {
    const inner = location.indexOf("(");
    const close = location.indexOf(")", inner);
    if (inner >= 0 && close > inner) location = location.slice(inner + 1, close);
  }
  return locationFrame(rest.slice(0, open), location);
}

const JSC_NAMES = new Set(["global code", "module code", "eval code"]);

/**
 * Frames of a JavaScript stack string, top first: V8/Bun (`    at fn (file:1:2)`,
 * `    at file:1:2`, `    at async fn (...)`) and Firefox/Safari (`fn@file:1:2`).
 * Lines that are neither (the message, `...`) are skipped. Linear in the text.
 */
export function parseStack(stack: string): Frame[] {
  const frames: Frame[] = [];
  for (const raw of stack.split("\n", MAX_STACK_LINES * 2)) {
    if (frames.length >= MAX_STACK_LINES) break;
    const line = raw.trim();
    if (line.length < 3 || line.length > 2000) continue;
    if (line.startsWith("at ")) {
      frames.push(v8Frame(line.slice(3).trim()));
      continue;
    }
    const at = line.indexOf("@");
    const name = at >= 0 ? line.slice(0, at) : "";
    // JavaScriptCore names top-level code with a space (`global code@…`, `module code@…`, `eval code@…`).
    if (at >= 0 && (!name.includes(" ") || JSC_NAMES.has(name)) && /:\d{1,9}(?::\d{1,9})?$/.test(line)) {
      frames.push(locationFrame(line.slice(0, at) || undefined, line.slice(at + 1)));
    }
  }
  return frames;
}
