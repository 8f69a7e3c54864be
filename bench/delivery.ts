/**
 * `bun bench/delivery.ts [--duration 10] [--connections 50] [--samples 200]`: SDK delivery figures on loopback.
 *
 * Seeds 50 killswitches and 20 configs into a fresh `svc serve`, then measures
 * with autocannon (same runner shape as bench/run.ts):
 * - the snapshot 304 path (If-None-Match) against a bare Bun.serve answering the same 304 in the same run;
 * - the full snapshot (plain and gzip) against the bare server answering the same bytes;
 * - toggle latency (sequential HTTP toggles), p50/p99;
 * - publish-to-SSE-delivery (toggle, then time until the stream event arrives), p50/p99;
 * - svc RSS at start, peak under load, and after.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
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
type AutocannonOptions = { url: string; connections: number; duration: number; method?: string; headers?: Record<string, string>; body?: string };
// autocannon ships no types; this is the part of its API used here.
const autocannon = require("autocannon") as (options: AutocannonOptions) => Promise<AutocannonResult>;

const ROOT = resolve(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules/.bin/bun");

const { values: flags } = parseArgs({
  args: process.argv.slice(2),
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    samples: { type: "string", default: "200" },
  },
  strict: true,
});
const duration = Number(flags.duration);
const connections = Number(flags.connections);
const samples = Number(flags.samples);
if (!(duration > 0) || !Number.isInteger(connections) || connections < 1 || !Number.isInteger(samples) || samples < 1) {
  console.error("usage: bun bench/delivery.ts [--duration SECONDS] [--connections N] [--samples N]");
  process.exit(2);
}

type Target = { url: string; proc: Subprocess<"ignore", "pipe", "inherit"> };
type LoadResult = { name: string; requestsPerSec: number; p50Ms: number; p99Ms: number; requests: number; failed: number };

/** The bare baseline: answers If-None-Match requests with the same 304, everything else with the same 200 bytes. */
const BARE_SERVER = `
const body = Bun.gunzipSync(Buffer.from(process.env.BENCH_BODY_GZ_B64, "base64"));
const gzip = Buffer.from(process.env.BENCH_BODY_GZ_B64, "base64");
const etag = process.env.BENCH_ETAG;
const base = { etag, "cache-control": "no-cache", vary: "Accept-Encoding, Origin" };
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    if (req.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers: base });
    if ((req.headers.get("accept-encoding") ?? "").includes("gzip")) {
      return new Response(gzip, { headers: { ...base, "content-type": "application/json", "content-encoding": "gzip" } });
    }
    return new Response(body, { headers: { ...base, "content-type": "application/json" } });
  },
});
console.log("listening on http://127.0.0.1:" + server.port);
process.on("SIGTERM", () => server.stop().then(() => process.exit(0)));
`;

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

/** One autocannon run; `expect` is the status class every answer must have (304s are expected on the conditional path). */
async function load(name: string, request: Omit<AutocannonOptions, "connections" | "duration">, expect: "2xx" | "3xx"): Promise<LoadResult> {
  const r = await autocannon({ ...request, connections, duration });
  return {
    name,
    requestsPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    failed: r.requests.total - r[expect] + r.errors + r.timeouts,
  };
}

function percentile(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! * 100) / 100;
}

const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-delivery-"));
const targets: Target[] = [];
try {
  const init = Bun.spawnSync([BUN, "src/main.ts", "init", "--data", dataDir, "--json"], { cwd: ROOT });
  if (init.exitCode !== 0) throw new Error(`svc init failed: ${init.stderr.toString()}`);
  const keys = JSON.parse(init.stdout.toString()) as { adminKey: string; serverKey: string; projectId: string };
  const svc = await spawnListening([BUN, "src/main.ts", "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log"]);
  targets.push(svc);
  const rssStartMb = rssMb(svc.proc.pid);

  const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
  const post = async (path: string, body: unknown) => {
    const r = await fetch(svc.url + path, { method: "POST", headers: admin, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
  };
  for (let i = 0; i < 50; i++) await post("/api/admin/killswitches", { name: `killswitch-${i}`, value: i % 7 === 0, switches: { eu: i % 2 === 0, us: false } });
  for (let i = 0; i < 20; i++) {
    await post("/api/admin/configs", {
      name: `config-${i}`,
      schema: { type: "object", properties: { limit: { type: "integer" }, label: { type: "string" }, tags: { type: "array" } } },
      value: { limit: 100 + i, label: `Config number ${i}`, tags: ["a", "b", "c"] },
    });
  }

  const sdk = { "x-sdk-key": keys.serverKey };
  const snapshotUrl = `${svc.url}/api/sdk/v1/snapshot?env=prod`;
  const plain = await fetch(snapshotUrl, { headers: { ...sdk, "accept-encoding": "identity" } });
  const body = await plain.text();
  const etag = plain.headers.get("etag")!;
  const gz = await fetch(snapshotUrl, { headers: { ...sdk, "accept-encoding": "gzip" }, decompress: false } as RequestInit);
  const gzipBytes = new Uint8Array(await gz.arrayBuffer());
  const bare = await spawnListening([BUN, "-e", BARE_SERVER], { BENCH_BODY_GZ_B64: Buffer.from(gzipBytes).toString("base64"), BENCH_ETAG: etag });
  targets.push(bare);

  console.log(
    `${connections} connections, ${duration} s per load run, ${samples} latency samples, ${cpus().length} CPUs, bun ${Bun.version}; ` +
      `snapshot ${body.length} bytes (${gzipBytes.length} gzip), 50 killswitches + 20 configs\n`,
  );

  let rssPeakMb = rssStartMb;
  const rssTimer = setInterval(() => (rssPeakMb = Math.max(rssPeakMb, rssMb(svc.proc.pid))), 250);
  const conditional = { ...sdk, "if-none-match": etag };
  const loads: LoadResult[] = [];
  for (const [name, url, headers, expect] of [
    ["bare Bun.serve, 304", `${bare.url}/api/sdk/v1/snapshot?env=prod`, conditional, "3xx"],
    ["svc snapshot, If-None-Match → 304", snapshotUrl, conditional, "3xx"],
    ["bare Bun.serve, full body", `${bare.url}/api/sdk/v1/snapshot?env=prod`, { ...sdk, "accept-encoding": "identity" }, "2xx"],
    ["svc snapshot, full body", snapshotUrl, { ...sdk, "accept-encoding": "identity" }, "2xx"],
    ["svc snapshot, full body gzip", snapshotUrl, { ...sdk, "accept-encoding": "gzip" }, "2xx"],
  ] as const) {
    loads.push(await load(name, { url, headers }, expect));
    console.log(`  done: ${name}`);
  }
  clearInterval(rssTimer);

  // Toggle latency: sequential admin toggles, one HTTP round trip each.
  const toggleMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    const r = await fetch(`${svc.url}/api/admin/killswitches/killswitch-1/toggle`, { method: "POST", headers: admin, body: "{}" });
    await r.arrayBuffer();
    toggleMs.push(performance.now() - start);
    if (!r.ok) throw new Error(`toggle answered ${r.status}`);
  }
  toggleMs.sort((a, b) => a - b);

  // Publish to SSE delivery: time from sending the toggle until its event arrives on an open stream.
  const stream = await fetch(`${svc.url}/api/sdk/v1/stream?env=prod`, { headers: sdk });
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const nextEvent = async (): Promise<string> => {
    for (;;) {
      const end = buffered.indexOf("\n\n");
      if (end !== -1) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!block.startsWith(":")) return block;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("stream ended");
      buffered += decoder.decode(value, { stream: true });
    }
  };
  await nextEvent(); // the current snapshot
  const deliveryMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    const eventArrived = nextEvent();
    const toggled = fetch(`${svc.url}/api/admin/killswitches/killswitch-2/toggle`, { method: "POST", headers: admin, body: "{}" });
    await eventArrived;
    deliveryMs.push(performance.now() - start);
    await (await toggled).arrayBuffer();
  }
  await reader.cancel();
  deliveryMs.sort((a, b) => a - b);
  const rssAfterMb = rssMb(svc.proc.pid);

  const width = Math.max(...loads.map((r) => r.name.length));
  const header = `${"scenario".padEnd(width)}  ${"req/s".padStart(8)}  ${"p50 ms".padStart(7)}  ${"p99 ms".padStart(7)}  ${"failed".padStart(6)}`;
  console.log(`\n${header}\n${"-".repeat(header.length)}`);
  for (const r of loads) {
    console.log(`${r.name.padEnd(width)}  ${String(r.requestsPerSec).padStart(8)}  ${String(r.p50Ms).padStart(7)}  ${String(r.p99Ms).padStart(7)}  ${String(r.failed).padStart(6)}`);
  }
  const ratio304 = loads[1]!.requestsPerSec / loads[0]!.requestsPerSec;
  const ratioFull = loads[3]!.requestsPerSec / loads[2]!.requestsPerSec;
  console.log(`\n304 path: svc at ${Math.round(ratio304 * 100)} % of bare Bun.serve; full body: ${Math.round(ratioFull * 100)} %`);
  console.log(`toggle latency (${samples} sequential): p50 ${percentile(toggleMs, 0.5)} ms, p99 ${percentile(toggleMs, 0.99)} ms`);
  console.log(`publish to SSE delivery (${samples} samples): p50 ${percentile(deliveryMs, 0.5)} ms, p99 ${percentile(deliveryMs, 0.99)} ms`);
  console.log(`svc RSS: ${rssStartMb} MB at start, ${rssPeakMb} MB peak under load, ${rssAfterMb} MB after (VmRSS)`);
  console.log("autocannon records latency in whole milliseconds: p50 0 means under 1 ms.");

  if (loads.some((r) => r.failed > 0)) {
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
