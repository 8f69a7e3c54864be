/** What every benchmark suite shares: processes under test, the autocannon runner, percentiles, RSS, the report table. */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

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

export type Target = { url: string; proc: Subprocess<"ignore", "pipe", "inherit"> };
export type Settings = { duration: number; connections: number; samples: number; binary: boolean; ramHint: boolean };
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
  return settings.binary ? [join(ROOT, "dist/svc"), ...args] : [BUN, "src/main.ts", ...args];
}

export function initProject(settings: Settings, dataDir: string): { adminKey: string; serverKey: string; projectId: string } {
  const init = Bun.spawnSync(svcCommand(settings, "init", "--data", dataDir, "--json"), { cwd: ROOT });
  if (init.exitCode !== 0) throw new Error(`svc init failed: ${init.stderr.toString()}`);
  return JSON.parse(init.stdout.toString());
}

/**
 * The GC hint the Dockerfile ships with (see there); `--no-ram-hint` measures
 * without it. An explicit BUN_JSC_forceRAMSize in the environment wins.
 */
export const SHIPPED_RAM_HINT = { BUN_JSC_forceRAMSize: "268435456" };

export function startSvc(settings: Settings, dataDir: string): Promise<Target> {
  const env = settings.ramHint && !process.env.BUN_JSC_forceRAMSize ? SHIPPED_RAM_HINT : {};
  return spawnListening(svcCommand(settings, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log"), env);
}

/** The bare Bun.serve baseline answering `body` (and its gzip form and 304 for `etag`, when given). */
export function startBare(body: string, options: { gzip?: Uint8Array; etag?: string; type?: string } = {}): Promise<Target> {
  const env: Record<string, string> = { BENCH_BODY: body };
  if (options.type) env.BENCH_TYPE = options.type;
  if (options.gzip) env.BENCH_GZIP_B64 = Buffer.from(options.gzip).toString("base64");
  if (options.etag) env.BENCH_ETAG = options.etag;
  return spawnListening([BUN, join(ROOT, "bench/bare-server.ts")], env);
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
