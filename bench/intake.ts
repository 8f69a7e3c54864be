/**
 * Public intake figures (issue 15 target in brackets): POST /ops/feature-request
 * with client keys, the rate limits on, loaded by autocannon on loopback.
 * - accepted (2xx) req/s with every request a new title, spread over many keys
 *   so that the per-key limit is not what is measured [>= 5k req/s];
 * - one key flooding past its per-key limit while another key of the same
 *   project files at a steady 50 req/s: the other key gets only 2xx, and its
 *   latency is shown beside the flood's;
 * - the same title again and again (dedupe: 200 `{number, deduped: true}`).
 * svc runs with SERVICE_INTAKE_LIMIT_PER_KEY=6000 (per minute; the default
 * is 600) and SERVICE_INTAKE_LIMIT_PER_ADDRESS=100000000: every request
 * comes from 127.0.0.1, so the per-address limit would otherwise be all
 * that is measured.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Row, type Settings, type Target, rssMb, spawnListening, stop, svcCommand, watchPeakRss, SHIPPED_RAM_HINT } from "./lib";

// autocannon ships no types; this is the part of its API used here.
type Result = { requests: { average: number; total: number }; latency: { p50: number; p99: number }; errors: number; timeouts: number; "2xx": number; non2xx: number; statusCodeStats: Record<string, { count: number }>; duration: number };
type Request = { method: string; path: string; headers: Record<string, string>; body?: string };
const autocannon = require("autocannon") as (options: Record<string, unknown>) => Promise<Result>;

const KEYS = 200;
const PER_KEY_PER_MINUTE = 6000;

function initProject(settings: Settings, dataDir: string): { adminKey: string; clientKey: string; projectId: string } {
  const init = Bun.spawnSync(svcCommand(settings, "init", "--data", dataDir, "--public-tickets", "--json"), { cwd: join(import.meta.dir, "..") });
  if (init.exitCode !== 0) throw new Error(`svc init failed: ${init.stderr.toString()}`);
  return JSON.parse(init.stdout.toString());
}

/** A load that files a new title on each request, its key taken in turn from `keys`. */
function run(url: string, keys: string[], prefix: string, options: { connections: number; duration: number; overallRate?: number; sameTitle?: boolean }): Promise<Result> {
  let n = 0;
  return autocannon({
    url,
    connections: options.connections,
    duration: options.duration,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    requests: [
      {
        method: "POST",
        path: "/ops/feature-request",
        setupRequest: (req: Request) => {
          const i = n++;
          req.headers = { "content-type": "application/json", "x-sdk-key": keys[i % keys.length]! };
          req.body = JSON.stringify({ title: options.sameTitle ? `${prefix} the same idea` : `${prefix} idea ${i}`, useCase: "Benchmarks need a use case too" });
          return req;
        },
      },
    ],
  });
}

const row = (name: string, r: Result): Row => ({
  name,
  requestsPerSec: Math.round(r["2xx"] / r.duration),
  p50Ms: r.latency.p50,
  p99Ms: r.latency.p99,
  requests: r.requests.total,
  failed: r.errors + r.timeouts + (r.requests.total - r["2xx"] - (r.statusCodeStats["429"]?.count ?? 0)),
});

export async function runIntake(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-intake-"));
  const targets: Target[] = [];
  try {
    const keys = initProject(settings, dataDir);
    const env: Record<string, string> = {
      ...(settings.ramHint && !process.env.BUN_JSC_forceRAMSize ? SHIPPED_RAM_HINT : {}),
      SERVICE_INTAKE_LIMIT_PER_KEY: String(PER_KEY_PER_MINUTE),
      SERVICE_INTAKE_LIMIT_PER_ADDRESS: "100000000",
    };
    const svc = await spawnListening(svcCommand(settings, "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, "--no-request-log"), env);
    targets.push(svc);
    const admin = { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" };
    const clientKeys: string[] = [];
    for (let i = 0; i < KEYS; i++) {
      const r = await fetch(`${svc.url}/api/admin/keys`, { method: "POST", headers: admin, body: JSON.stringify({ type: "client", name: `bench ${i}` }) });
      if (!r.ok) throw new Error(`minting a client key: ${r.status} ${await r.text()}`);
      clientKeys.push(((await r.json()) as { key: string }).key);
    }
    const rssStartMb = rssMb(svc.proc.pid);
    const peakRss = watchPeakRss(svc.proc.pid);
    const rows: Row[] = [];

    // 1. Throughput: new titles over 200 keys (each far below its 6,000 a minute).
    const spread = await run(svc.url, clientKeys, "Spread", { connections: settings.connections, duration: settings.duration });
    rows.push(row(`new items over ${KEYS} keys, accepted`, spread));
    const limitedInSpread = spread.statusCodeStats["429"]?.count ?? 0;
    console.log(`  done: throughput (${spread["2xx"]} accepted, ${limitedInSpread} limited)`);

    // 2. One key floods, another files at 50 req/s meanwhile.
    const flooder = (await (await fetch(`${svc.url}/api/admin/keys`, { method: "POST", headers: admin, body: JSON.stringify({ type: "client", name: "flooder" }) })).json()) as { key: string };
    const [flood, steady] = await Promise.all([
      run(svc.url, [flooder.key], "Flood", { connections: Math.max(1, settings.connections - 5), duration: settings.duration }),
      run(svc.url, [keys.clientKey], "Steady", { connections: 5, duration: settings.duration, overallRate: 50 }),
    ]);
    const floodLimited = flood.statusCodeStats["429"]?.count ?? 0;
    rows.push({ ...row("one key flooding: accepted (rest 429)", flood), requests: flood.requests.total });
    rows.push(row("another key at 50 req/s meanwhile", steady));
    console.log(`  done: flood (${flood["2xx"]} accepted, ${floodLimited} limited) beside a steady key (${steady["2xx"]} accepted, ${steady.non2xx} not)`);

    // 3. Dedupe: the same title over and over (one item, then 200 deduped).
    const dedupe = await run(svc.url, clientKeys, "Dedupe", { connections: settings.connections, duration: Math.min(5, settings.duration), sameTitle: true });
    rows.push(row("same title repeated (200 deduped)", dedupe));
    const rssPeakMb = peakRss();

    const items = (await (await fetch(`${svc.url}/api/admin/ops?type=feature_request&status=pending_approval`, { headers: admin })).json()) as { number: number; title: string }[];
    const numbers = items.map((i) => i.number).sort((a, b) => a - b);
    const gapless = numbers.every((n, i) => n === i + 1);
    const dedupeItems = items.filter((i) => i.title.startsWith("Dedupe")).length;
    if (!gapless) throw new Error("item numbers have a gap or a duplicate");
    if (dedupeItems !== 1) throw new Error(`the repeated title filed ${dedupeItems} items, not 1`);

    return {
      rows,
      figures: {
        intakeAcceptedReqPerSec: rows[0]!.requestsPerSec!,
        intakeLimitedInThroughputRun: limitedInSpread,
        floodAccepted: flood["2xx"],
        floodLimited429: floodLimited,
        steadyKeyAccepted: steady["2xx"],
        steadyKeyRefused: steady.non2xx + steady.errors + steady.timeouts,
        steadyKeyP99Ms: steady.latency.p99,
        dedupeReqPerSec: rows[3]!.requestsPerSec!,
        itemsFiled: items.length,
        rssStartMb,
        rssPeakMb,
      },
    };
  } finally {
    await stop(targets);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
