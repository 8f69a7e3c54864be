/**
 * `bun run bench [--duration 10] [--connections 50]`: loads svc and a bare Bun.serve on loopback
 * with autocannon and prints req/s, p50 and p99 per scenario, then the server's RSS.
 * Results also go to bench/results.json (gitignored).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";

type AutocannonHistogram = { average: number; p50: number; p99: number };
type AutocannonResult = { requests: AutocannonHistogram & { total: number }; latency: AutocannonHistogram; non2xx: number; errors: number; timeouts: number };
type AutocannonOptions = { url: string; connections: number; duration: number; method?: string; headers?: Record<string, string>; body?: string };
// autocannon ships no types; this is the part of its API used here.
const autocannon = require("autocannon") as (options: AutocannonOptions) => Promise<AutocannonResult>;

const ROOT = resolve(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules/.bin/bun");

const { values: flags } = parseArgs({
  args: process.argv.slice(2),
  options: { duration: { type: "string", default: "10" }, connections: { type: "string", default: "50" } },
  strict: true,
});
const duration = Number(flags.duration);
const connections = Number(flags.connections);
if (!(duration > 0) || !Number.isInteger(connections) || connections < 1) {
  console.error("usage: bun run bench [--duration SECONDS] [--connections N]");
  process.exit(2);
}

type Target = { url: string; proc: Subprocess<"ignore", "pipe", "inherit"> };
type BenchContext = { svc: Target; bare: Target; adminKey: string; serverKey: string; projectId: string };
type Measurement = { requestsPerSec: number; p50Ms: number; p99Ms: number; meanMs: number; requests: number; failed: number };
/** One row of the report. Load scenarios use `load()`; others (e.g. toggle-to-visible latency) measure their own way. */
type Scenario = { name: string; run(ctx: BenchContext): Promise<Measurement> };

async function load(request: Omit<AutocannonOptions, "connections" | "duration">): Promise<Measurement> {
  const r = await autocannon({ ...request, connections, duration });
  return {
    requestsPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    meanMs: Math.round(r.latency.average * 100) / 100,
    requests: r.requests.total,
    failed: r.non2xx + r.errors + r.timeouts,
  };
}

const SCENARIOS: Scenario[] = [
  { name: "bare Bun.serve, same JSON body", run: (c) => load({ url: `${c.bare.url}/` }) },
  { name: "GET /healthz", run: (c) => load({ url: `${c.svc.url}/healthz` }) },
  {
    name: "GET /api/admin/projects/current (admin key)",
    run: (c) => load({ url: `${c.svc.url}/api/admin/projects/current`, headers: { authorization: `Bearer ${c.adminKey}` } }),
  },
];

/** Starts a process that prints `listening on http://HOST:PORT` and resolves with its URL. */
async function spawnListening(cmd: string[], env: Record<string, string> = {}): Promise<Target> {
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

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kb / 1024);
}

const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
const targets: Target[] = [];
try {
  const init = Bun.spawnSync([BUN, "src/main.ts", "init", "--data", dataDir, "--json"], { cwd: ROOT });
  if (init.exitCode !== 0) throw new Error(`svc init failed: ${init.stderr.toString()}`);
  const keys = JSON.parse(init.stdout.toString()) as { adminKey: string; serverKey: string; projectId: string };

  const svc = await spawnListening([BUN, "src/main.ts", "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log"]);
  targets.push(svc);
  const sample = await fetch(`${svc.url}/api/admin/projects/current`, { headers: { authorization: `Bearer ${keys.adminKey}` } });
  if (sample.status !== 200) throw new Error(`svc answered ${sample.status} to the authenticated route`);
  const sampleBody = await sample.text();
  const bare = await spawnListening([BUN, join(ROOT, "bench/bare-server.ts")], { BENCH_BODY: sampleBody });
  targets.push(bare);
  const ctx: BenchContext = { svc, bare, ...keys };
  const rssStartMb = rssMb(svc.proc.pid);

  console.log(`${SCENARIOS.length} scenarios, ${connections} connections, ${duration} s each, ${cpus().length} CPUs, bun ${Bun.version}; JSON body ${sampleBody.length} bytes\n`);
  const results: (Measurement & { name: string })[] = [];
  for (const scenario of SCENARIOS) {
    // A short warm-up so the JIT and SQLite caches are hot before the measured run.
    await fetch(`${svc.url}/healthz`);
    const m = await scenario.run(ctx);
    results.push({ name: scenario.name, ...m });
    console.log(`  done: ${scenario.name}`);
  }
  const rssAfterMb = rssMb(svc.proc.pid);

  const width = Math.max(...results.map((r) => r.name.length));
  const header = `${"scenario".padEnd(width)}  ${"req/s".padStart(8)}  ${"p50 ms".padStart(7)}  ${"p99 ms".padStart(7)}  ${"mean ms".padStart(8)}  ${"failed".padStart(6)}`;
  console.log(`\n${header}\n${"-".repeat(header.length)}`);
  for (const r of results) {
    console.log(
      `${r.name.padEnd(width)}  ${String(r.requestsPerSec).padStart(8)}  ${String(r.p50Ms).padStart(7)}  ${String(r.p99Ms).padStart(7)}  ${String(r.meanMs).padStart(8)}  ${String(r.failed).padStart(6)}`,
    );
  }
  console.log(`\nsvc RSS: ${rssStartMb} MB at start, ${rssAfterMb} MB after the load (VmRSS)`);
  console.log("autocannon records latency in whole milliseconds: p50 0 means under 1 ms.");

  const report = {
    at: new Date().toISOString(),
    bun: Bun.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    connections,
    durationSeconds: duration,
    bodyBytes: sampleBody.length,
    results,
    svcRssMb: { start: rssStartMb, afterLoad: rssAfterMb },
  };
  writeFileSync(join(ROOT, "bench/results.json"), `${JSON.stringify(report, null, 2)}\n`);
  console.log("written to bench/results.json");
  if (results.some((r) => r.failed > 0)) {
    console.error("some requests failed: the figures above are not comparable");
    process.exitCode = 1;
  }
} finally {
  for (const t of targets) {
    t.proc.kill("SIGTERM");
    await t.proc.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}
