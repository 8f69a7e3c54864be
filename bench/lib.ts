/**
 * What every benchmark suite shares: processes under test, the autocannon runner, percentiles, RSS, the report table;
 * and what the event-store suites (observability, experiments) share: seeded fills cached across runs, timing, checks.
 */
import { Database } from "bun:sqlite";
import { SQL, type Subprocess } from "bun";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PostgresEventStore } from "../src/lib/eventstore/postgres";
import { SqliteEventStore } from "../src/lib/eventstore/sqlite";
import type { EventRow, EventStore } from "../src/lib/eventstore/types";

type AutocannonHistogram = { average: number; p50: number; p99: number };
type AutocannonResult = {
  requests: AutocannonHistogram & { total: number };
  latency: AutocannonHistogram;
  errors: number;
  timeouts: number;
  "2xx": number;
  "3xx": number;
};
export type LoadRequest = { url: string; method?: string; headers?: Record<string, string>; body?: string };
// autocannon ships no types; this is the part of its API used here.
const autocannon = require("autocannon") as (options: LoadRequest & { connections: number; duration: number; workers?: number }) => Promise<AutocannonResult>;

export const ROOT = resolve(import.meta.dir, "..");
export const BUN = join(ROOT, "node_modules/.bin/bun");
/** The compiled svc that `--binary` runs (`npm run build` writes it). */
export const DIST_SVC = join(ROOT, "dist/svc");

export type Target = { url: string; proc: Subprocess<"ignore", "pipe", "inherit"> };
export type Settings = {
  duration: number;
  connections: number;
  samples: number;
  binary: boolean;
  ramHint: boolean;
  /** With `binary`: the compiled svc to run instead of dist/svc (a copy of it). */
  executable?: string;
};
export type Row = { name: string; requestsPerSec?: number; p50Ms: number; p99Ms: number; requests?: number; failed?: number };

/** Starts a process that prints `listening on http://HOST:PORT` and resolves with its URL. */
export async function spawnListening(cmd: string[], env: Record<string, string> = {}): Promise<Target> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    seen += decoder.decode(chunk.value, { stream: true });
    const m = /listening on http:\/\/[^:\s]+:(\d+)/.exec(seen);
    if (m) {
      // Keep draining stdout so the child never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done);
      })();
      return { url: `http://127.0.0.1:${m[1]}`, proc };
    }
  }
  throw new Error(`${cmd.join(" ")} exited (${await proc.exited}) before listening:\n${seen}`);
}

/** The svc command line: the compiled binary with `--binary` (build it first), else the sources. */
export function svcCommand(settings: Settings, ...args: string[]): string[] {
  return settings.binary ? [settings.executable ?? DIST_SVC, ...args] : [BUN, "src/main.ts", ...args];
}

/**
 * Drops a file's pages from the page cache, as benchmarks do before a cold run, without root:
 * posix_fadvise(DONTNEED) on the whole file, which GNU dd does for `iflag=nocache count=0`. The next run
 * reads the executable back from disk. Whether it did (false without dd, or off Linux).
 */
export function dropPageCache(path: string): boolean {
  const dd = Bun.which("dd");
  if (dd === null || process.platform !== "linux") return false;
  return Bun.spawnSync([dd, `if=${path}`, "iflag=nocache", "count=0", "status=none"]).exitCode === 0;
}

export function initProject(settings: Settings, dataDir: string): { adminKey: string; serverKey: string; projectId: string } {
  const init = Bun.spawnSync(svcCommand(settings, "init", "--data", dataDir, "--json"), { cwd: ROOT });
  if (init.exitCode !== 0) throw new Error(`svc init failed: ${init.stderr.toString()}`);
  return JSON.parse(init.stdout.toString());
}

/**
 * The GC settings the Dockerfile and the systemd unit ship with (see there): the RAM hint, and how much room
 * the young generation keeps before a full collection.
 */
const SHIPPED_GC_SETTINGS = { BUN_JSC_forceRAMSize: "268435456", BUN_JSC_minEdenToOldGenerationRatio: "0.1" };

/**
 * The environment a server under test gets for its GC: the shipped settings, or none with `--no-ram-hint`, or
 * when BUN_JSC_forceRAMSize is set in the bench's own environment (its JavaScriptCore settings then stand).
 */
export function shippedGcEnv(settings: Settings): Record<string, string> {
  return settings.ramHint && !process.env.BUN_JSC_forceRAMSize ? SHIPPED_GC_SETTINGS : {};
}

/**
 * Pinning for the comparisons that must share one core fairly: the server under test (svc or the bare
 * baseline) on core SERVER_CPU, the load generator on core LOAD_CPU. Only with taskset and 2+ CPUs.
 */
export const SERVER_CPU = 0;
export const LOAD_CPU = 1;
const TASKSET = Bun.which("taskset");
export const canPin = TASKSET !== null && cpus().length >= 2;

/** `cmd` run on one core (as is without taskset or a second core). */
export function pinned(cmd: string[], cpu: number | undefined): string[] {
  return cpu === undefined || !canPin ? cmd : [TASKSET!, "-c", String(cpu), ...cmd];
}

/**
 * svc serve on a free loopback port. Without `requestLog` it runs with --no-request-log (most suites compare
 * svc's work, not its log); the delivery comparison runs at default settings, as an operator would.
 */
export function startSvc(settings: Settings, dataDir: string, options: { requestLog?: boolean; cpu?: number } = {}): Promise<Target> {
  const env = shippedGcEnv(settings);
  const args = ["serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, ...(options.requestLog ? [] : ["--no-request-log"])];
  return spawnListening(pinned(svcCommand(settings, ...args), options.cpu), env);
}

/** The bare Bun.serve baseline answering `body` (and its gzip form and 304 for `etag`, when given). */
export function startBare(body: string, options: { gzip?: Uint8Array; etag?: string; type?: string; cpu?: number; readBody?: boolean } = {}): Promise<Target> {
  const env: Record<string, string> = { BENCH_BODY: body };
  if (options.readBody) env.BENCH_READ_BODY = "1";
  if (options.type) env.BENCH_TYPE = options.type;
  if (options.gzip) env.BENCH_GZIP_B64 = Buffer.from(options.gzip).toString("base64");
  if (options.etag) env.BENCH_ETAG = options.etag;
  return spawnListening(pinned([BUN, join(ROOT, "bench/bare-server.ts")], options.cpu), env);
}

export async function stop(targets: Target[]): Promise<void> {
  for (const t of targets) {
    t.proc.kill("SIGTERM");
    await t.proc.exited;
  }
}

export function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kb / 1024);
}

/**
 * Where a process's resident memory is, from /proc/PID/smaps (Linux): the pages of its executable that are code
 * (mapped executable), the rest of the executable (read-only data and the embedded modules of a compiled binary),
 * anonymous memory (the JavaScript heap, malloc, JIT code) and everything else (shared libraries, stacks). In MB,
 * to one decimal; undefined off Linux. What the memory suite's figures are made of (issue 32: "what took the memory").
 */
export function rssParts(pid: number, executable: string): { codeMb: number; dataMb: number; anonMb: number; otherMb: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, "utf8");
  } catch {
    return undefined;
  }
  const kb = { code: 0, data: 0, anon: 0, other: 0 };
  let part: keyof typeof kb = "other";
  for (const line of text.split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const [, perms, path] = mapping;
      part = path === executable ? (perms!.includes("x") ? "code" : "data") : path === "" || path === "[heap]" ? "anon" : "other";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kb[part] += Number(rss[1]);
  }
  const mb = (n: number) => Math.round(n / 102.4) / 10;
  return { codeMb: mb(kb.code), dataMb: mb(kb.data), anonMb: mb(kb.anon), otherMb: mb(kb.other) };
}

/** Samples a process's RSS until stopped; returns the peak. */
export function watchPeakRss(pid: number): () => number {
  let peak = rssMb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 250);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssMb(pid));
  };
}

/**
 * One autocannon run; `expect` is the status class every answer must have (304s on the conditional path).
 * `threads` > 1 spreads the connections over that many autocannon worker threads.
 */
export async function load(settings: Settings, name: string, request: LoadRequest, expect: "2xx" | "3xx" = "2xx", threads = 1): Promise<Row> {
  const workers = threads > 1 ? { workers: threads } : {};
  const r = await autocannon({ ...request, connections: settings.connections, duration: settings.duration, ...workers });
  return {
    name,
    requestsPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    failed: r.requests.total - r[expect] + r.errors + r.timeouts,
  };
}

/** Busy share (0-100) of each CPU between two reads of /proc/stat (undefined where /proc/stat is missing). */
function cpuTimes(): number[][] | undefined {
  try {
    return readFileSync("/proc/stat", "utf8")
      .split("\n")
      .filter((l) => /^cpu\d+ /.test(l))
      .map((l) => l.trim().split(/\s+/).slice(1).map(Number));
  } catch {
    return undefined;
  }
}
function busyBetween(a: number[][], b: number[][]): number[] {
  return a.map((before, cpu) => {
    const after = b[cpu]!;
    const total = after.reduce((x, y) => x + y, 0) - before.reduce((x, y) => x + y, 0);
    // idle + iowait are fields 4 and 5.
    const idle = after[3]! + after[4]! - before[3]! - before[4]!;
    return total > 0 ? Math.round((100 * (total - idle)) / total) : 0;
  });
}

export const WRK = Bun.which("wrk");

/** A Lua string literal (wrk scripts set the method, headers and body). */
export function luaString(text: string): string {
  return `"${[...new TextEncoder().encode(text)].map((b) => (b >= 32 && b < 127 && b !== 34 && b !== 92 ? String.fromCharCode(b) : `\\${String(b).padStart(3, "0")}`)).join("")}"`;
}

/** wrk's latency with its unit (`350.12us`, `1.20ms`, `2.00s`) in milliseconds. */
function wrkMs(value: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}

/** Runs a wrk command line; its standard output (wrk exiting non-zero throws with what it said). */
export async function runWrk(cmd: string[]): Promise<string> {
  const run = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  if (code !== 0) throw new Error(`wrk exited ${code}: ${err}${out}`);
  return out;
}

/** What every wrk run reports: requests sent and their time, latency percentiles (--latency), socket errors. */
export function wrkFigures(out: string): { total: number; seconds: number; p50Ms: number; p99Ms: number; socketErrors: number } {
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const ms = (percentile: string) => Math.round(wrkMs(new RegExp(`^\\s+${percentile}%\\s+(\\S+)`, "m").exec(out)?.[1] ?? "") * 1000) / 1000;
  return {
    total: Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN),
    seconds: Number(/requests in ([\d.]+)s/.exec(out)?.[1] ?? Number.NaN),
    p50Ms: ms("50"),
    p99Ms: ms("99"),
    socketErrors: socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

export type PinnedRow = Row & { generator: string; serverCpuPct?: number; generatorCpuPct?: number; perCpuSecond?: number };

/** CPU seconds (user + system) a process has used so far (undefined without /proc). */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime, in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * One load run for a same-core comparison: wrk (a C generator; `apt-get install wrk`) pinned to LOAD_CPU with
 * `threads` threads, while the server under test is pinned to SERVER_CPU (startSvc/startBare with `cpu`).
 * Without wrk it falls back to autocannon, a JavaScript generator that saturates its own core near the rate of a
 * bare Bun.serve: the figures say so (`generator`). Both cores' busy shares are sampled in the middle of the run:
 * a generator core near 100 % while the server core is not means the generator, not the server, set the rate.
 */
export async function loadPinned(settings: Settings, name: string, request: LoadRequest, expect: "2xx" | "3xx", threads = 2, serverPid?: number): Promise<PinnedRow> {
  // The answer's class is checked once up front (wrk counts only non-2xx/3xx answers as errors).
  const probe = await fetch(request.url, { method: request.method ?? "GET", headers: request.headers, body: request.body });
  await probe.arrayBuffer();
  if (`${String(probe.status)[0]}xx` !== expect) throw new Error(`${name}: expected ${expect}, the server answered ${probe.status}`);
  const sampleFrom = Math.min(1000, (settings.duration * 1000) / 4);
  const sampleFor = Math.max(500, settings.duration * 1000 - 2 * sampleFrom);
  const sample = (async () => {
    await Bun.sleep(sampleFrom);
    const before = cpuTimes();
    await Bun.sleep(sampleFor);
    const after = cpuTimes();
    return before && after ? busyBetween(before, after) : undefined;
  })();
  let row: Row;
  let generator: string;
  const cpuBefore = serverPid === undefined ? undefined : cpuSecondsOf(serverPid);
  if (WRK) {
    generator = `wrk -t${threads}`;
    const dir = mkdtempSync(join(tmpdir(), "svc-bench-wrk-"));
    try {
      const script = join(dir, "request.lua");
      const lines = [`wrk.method = ${luaString(request.method ?? "GET")}`];
      if (request.body !== undefined) lines.push(`wrk.body = ${luaString(request.body)}`);
      for (const [k, v] of Object.entries(request.headers ?? {})) lines.push(`wrk.headers[${luaString(k)}] = ${luaString(v)}`);
      writeFileSync(script, `${lines.join("\n")}\n`);
      const cmd = pinned([WRK, `-t${threads}`, `-c${settings.connections}`, `-d${settings.duration}s`, "--latency", "-s", script, request.url], LOAD_CPU);
      const out = await runWrk(cmd);
      const w = wrkFigures(out);
      row = {
        name,
        requestsPerSec: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN)),
        p50Ms: w.p50Ms,
        p99Ms: w.p99Ms,
        requests: w.total,
        failed: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + w.socketErrors,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } else {
    generator = `autocannon (${threads} worker threads; install wrk for a generator that is not the bottleneck)`;
    row = await load(settings, name, request, expect, threads);
  }
  const busy = await sample;
  const cpuAfter = serverPid === undefined ? undefined : cpuSecondsOf(serverPid);
  // Requests per CPU-second the server used: its capacity on a core of its own, whatever else ran on that core.
  const perCpuSecond = cpuBefore !== undefined && cpuAfter !== undefined && cpuAfter > cpuBefore ? Math.round(row.requests! / (cpuAfter - cpuBefore)) : undefined;
  return { ...row, generator, serverCpuPct: busy?.[SERVER_CPU], generatorCpuPct: busy?.[LOAD_CPU], perCpuSecond };
}

/** The 1-minute load average: how busy the machine was besides the benchmark. */
export function loadAverage(): number {
  return Math.round(loadavg()[0]! * 100) / 100;
}

/** A latency row from timed samples (milliseconds). */
export function latencyRow(name: string, samplesMs: number[]): Row {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! * 100) / 100;
  return { name, p50Ms: at(0.5), p99Ms: at(0.99), requests: sorted.length };
}

export function printTable(rows: Row[]): void {
  const width = Math.max(...rows.map((r) => r.name.length), 8);
  const cell = (v: number | undefined, w: number) => (v === undefined ? "" : String(v)).padStart(w);
  const header = `${"scenario".padEnd(width)}  ${"req/s".padStart(8)}  ${"p50 ms".padStart(7)}  ${"p99 ms".padStart(7)}  ${"failed".padStart(6)}`;
  console.log(`\n${header}\n${"-".repeat(header.length)}`);
  for (const r of rows) {
    console.log(`${r.name.padEnd(width)}  ${cell(r.requestsPerSec, 8)}  ${cell(r.p50Ms, 7)}  ${cell(r.p99Ms, 7)}  ${cell(r.failed, 6)}`);
  }
}

// ---------------------------------------------------------------- the event-store suites (observability, experiments)

/** A seeded PRNG (mulberry32): fills and bodies are the same on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1))]!;
}
/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
export const thousands = (n: number) => Math.round(n).toLocaleString("en-US");

/** A figure with its target: what the report lists (and results.json keeps under `checks`). */
export type Check = { figure: string; value: number; unit: string; target: string; met: boolean | null; baseline?: string; note?: string };

export function printChecks(checks: Check[]): void {
  console.log("\nfigures against their targets:");
  for (const c of checks) {
    const verdict = c.met === null ? "     " : c.met ? "  ok " : "MISS ";
    const value = c.unit === "events/s" ? thousands(c.value) : String(round(c.value));
    console.log(`  ${verdict} ${c.figure}: ${value} ${c.unit}  (target ${c.target}${c.baseline ? `; baseline ${c.baseline}` : ""})${c.note ? `  ${c.note}` : ""}`);
  }
}

/** `runs` timed runs after one untimed first run (reported apart: it may read from disk). */
export async function timed<T>(run: () => Promise<T>, runs: number): Promise<{ first: number; samples: number[]; result: T }> {
  let start = performance.now();
  let result = await run();
  const first = performance.now() - start;
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    start = performance.now();
    result = await run();
    samples.push(performance.now() - start);
  }
  return { first, samples, result };
}

/** Microseconds per batch appending `batches` to a fresh embedded store, `inFlight` at a time (group commit joins them). */
export async function appendUs(batches: EventRow[][], inFlight: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-append-"));
  try {
    const store = new SqliteEventStore(join(dir, "events.db"));
    const start = performance.now();
    for (let i = 0; i < batches.length; i += inFlight) await Promise.all(batches.slice(i, i + inFlight).map((b) => store.append(b)));
    const us = ((performance.now() - start) * 1000) / batches.length;
    await store.close();
    return us;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The PostgreSQL cluster of the event-store suites: `--store` (run.ts sets SVC_BENCH_PG), else SVC_BENCH_PG; none skips their PostgreSQL half. */
export function postgresUrl(): string | undefined {
  const url = process.env.SVC_BENCH_PG;
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
}

/**
 * A suite's fill: `rows` rows in `batches` (deterministic: the same rows for both engines), appended through the
 * store's own `append`. Cached under `suite` (a stable temp dir for SQLite, the database `bench_<suite>` for
 * PostgreSQL), keyed by `version` and the store's schema, so re-runs do not refill; the output says when a cached fill is used.
 */
export type StoreFill = { suite: string; version: string; rows: number; batches: () => Iterable<EventRow[]> };

/** Appends the whole fill (`inFlight` appends pending at once); answers seconds taken. */
async function appendFill(store: EventStore, fill: StoreFill, label: string, inFlight: number): Promise<number> {
  const started = performance.now();
  let done = 0;
  let nextReport = 1_000_000;
  const pending: Promise<void>[] = [];
  for (const batch of fill.batches()) {
    pending.push(store.append(batch));
    if (pending.length >= inFlight) await Promise.all(pending.splice(0));
    done += batch.length;
    if (done >= nextReport) {
      nextReport += 2_000_000;
      const s = (performance.now() - started) / 1000;
      console.log(`    ${label} fill: ${thousands(done)} of ${thousands(fill.rows)} rows, ${round(s, 1)} s (${thousands(done / s)} rows/s)`);
    }
  }
  await Promise.all(pending);
  return (performance.now() - started) / 1000;
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}

/** The SQLite store's schema as it creates it (a throwaway file), so a schema change means a new cache key. */
async function sqliteSchemaHash(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-schema-"));
  try {
    const s = new SqliteEventStore(join(dir, "events.db"));
    await s.close();
    const db = new Database(join(dir, "events.db"), { readonly: true });
    const sql = (db.query("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name").all() as { sql: string }[]).map((r) => r.sql).join("\n");
    db.close();
    return hash(sql);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The fill in an embedded store file, filled now or reused from an earlier run: its path and how long filling took. */
export async function cachedSqliteFill(fill: StoreFill): Promise<{ path: string; fillSeconds: number }> {
  const key = `${fill.version}-${await sqliteSchemaHash()}`;
  const prefix = `svc-bench-${fill.suite}-sqlite-`;
  const dir = join(tmpdir(), `${prefix}${key}`);
  // Older versions' caches are ours and stale: they go.
  for (const old of readdirSync(tmpdir())) if (old.startsWith(prefix) && old !== `${prefix}${key}`) rmSync(join(tmpdir(), old), { recursive: true, force: true });
  const marker = join(dir, "fill.json");
  const path = join(dir, "events.db");
  let info: { rows: number; fillSeconds: number; at: string };
  if (existsSync(marker)) {
    info = JSON.parse(readFileSync(marker, "utf8"));
    console.log(`  SQLite: cached fill reused: ${path} (${thousands(info.rows)} rows, filled in ${round(info.fillSeconds, 1)} s on ${info.at}; delete ${dir} to refill)`);
  } else {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    console.log(`  SQLite: filling ${path} with ${thousands(fill.rows)} rows through SqliteEventStore.append; cached for the next runs`);
    const store = new SqliteEventStore(path);
    const fillSeconds = await appendFill(store, fill, "SQLite", 1);
    await store.close();
    info = { rows: fill.rows, fillSeconds, at: new Date().toISOString() };
    writeFileSync(marker, JSON.stringify(info));
    console.log(`  SQLite: filled in ${round(fillSeconds, 1)} s (${thousands(fill.rows / fillSeconds)} rows/s)`);
  }
  return { path, fillSeconds: info.fillSeconds };
}

/** The event store's tables (all of them go when a fill starts over, and are vacuumed after one). */
const EVENT_TABLES = "events, event_hourly, event_units_daily, experiment_exposures";

/** The fill in the database `bench_<suite>` of the cluster at `url` (created here), filled now or reused: its URL and how long filling took. */
export async function cachedPostgresFill(url: string, fill: StoreFill): Promise<{ dbUrl: string; fillSeconds: number }> {
  const database = `bench_${fill.suite}`;
  const admin = new SQL({ url, max: 1 });
  try {
    const exists = await admin.unsafe("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.length === 0) await admin.unsafe(`CREATE DATABASE ${database}`);
  } finally {
    await admin.close();
  }
  const target = new URL(url);
  target.pathname = `/${database}`;
  const dbUrl = target.toString();
  const source = readFileSync(join(ROOT, "src/lib/eventstore/postgres.ts"), "utf8");
  const key = `${fill.version}-${hash(/const SCHEMA = \[[\s\S]*?\];/.exec(source)?.[0] ?? source)}`;
  const marker = `${database}_fill`;
  const sql = new SQL({ url: dbUrl, max: 1 });
  try {
    await sql.unsafe(`CREATE TABLE IF NOT EXISTS ${marker} (version text PRIMARY KEY, rows bigint NOT NULL, fill_seconds double precision NOT NULL, at timestamptz NOT NULL)`);
    const cached = (await sql.unsafe(`SELECT rows, fill_seconds, at FROM ${marker} WHERE version = $1`, [key])) as { rows: string; fill_seconds: number; at: Date }[];
    const where = `${target.host}/${database}`;
    if (cached[0]) {
      console.log(`  PostgreSQL: cached fill reused: ${where} (${thousands(Number(cached[0].rows))} rows, filled in ${round(cached[0].fill_seconds, 1)} s on ${cached[0].at.toISOString()}; DROP DATABASE ${database} to refill)`);
      return { dbUrl, fillSeconds: cached[0].fill_seconds };
    }
    // Only our own database's tables: a fill of another version (or an interrupted one) starts over.
    await sql.unsafe(`DROP TABLE IF EXISTS ${EVENT_TABLES} CASCADE`);
    await sql.unsafe(`DELETE FROM ${marker}`);
    console.log(`  PostgreSQL: filling ${where} with ${thousands(fill.rows)} rows through PostgresEventStore.append (4 in flight); cached for the next runs`);
    const store = new PostgresEventStore(dbUrl);
    let fillSeconds: number;
    try {
      fillSeconds = await appendFill(store, fill, "PostgreSQL", 4);
    } finally {
      await store.close();
    }
    console.log(`  PostgreSQL: filled in ${round(fillSeconds, 1)} s (${thousands(fill.rows / fillSeconds)} rows/s); VACUUM ANALYZE (what autovacuum does after such a load)`);
    const vacuumStart = performance.now();
    await sql.unsafe(`VACUUM (ANALYZE) ${EVENT_TABLES}`);
    console.log(`  PostgreSQL: VACUUM ANALYZE took ${round((performance.now() - vacuumStart) / 1000, 1)} s`);
    await sql.unsafe(`INSERT INTO ${marker} (version, rows, fill_seconds, at) VALUES ($1, $2, $3, now())`, [key, fill.rows, fillSeconds]);
    return { dbUrl, fillSeconds };
  } finally {
    await sql.close();
  }
}
