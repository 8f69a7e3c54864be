/**
 * Public intake figures (issue 15 target in brackets): POST /ops/feature-request
 * with client keys, the rate limits on (counted in the store, shared by every
 * server: each call's two hits are upserts in a batch per event-loop turn), on loopback: the throughput run by wrk
 * when installed (else autocannon), the flood and dedupe runs by autocannon.
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
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Row, type Settings, type Target, WRK, luaString, rssMb, runWrk, spawnListening, stop, svcCommand, watchPeakRss, wrkFigures, shippedGcEnv } from "./lib";

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

/**
 * The throughput run with wrk when installed: autocannon runs in this process and takes most of a core of the
 * two it shares with svc (its figure swung 4.4k-6.6k req/s from run to run here; wrk, in C, uses a few percent).
 * Each request a new title, its key taken in turn; answers counted by status in the script.
 */
async function intakeByWrk(url: string, keys: string[], prefix: string, settings: Settings): Promise<{ row: Row; accepted: number; limited: number }> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-intake-wrk-"));
  try {
    const script = join(dir, "intake.lua");
    writeFileSync(
      script,
      [
        `keys = { ${keys.map(luaString).join(", ")} }`,
        "threads, made, counter, accepted, limited = {}, 0, 0, 0, 0",
        "function setup(thread) made = made + 1; thread:set(\"id\", made); table.insert(threads, thread) end",
        "function request()",
        "  counter = counter + 1",
        `  local body = '{"title":"${prefix} idea ' .. id .. '-' .. counter .. '","useCase":"Benchmarks need a use case too"}'`,
        '  return wrk.format("POST", "/ops/feature-request", { ["content-type"] = "application/json", ["x-sdk-key"] = keys[(counter % #keys) + 1] }, body)',
        "end",
        "function response(status) if status >= 200 and status < 300 then accepted = accepted + 1 elseif status == 429 then limited = limited + 1 end end",
        "function done() local a, l = 0, 0; for _, t in ipairs(threads) do a = a + t:get(\"accepted\"); l = l + t:get(\"limited\") end; io.write(\"ACCEPTED \" .. a .. \" LIMITED \" .. l .. \"\\n\") end",
      ].join("\n"),
    );
    const out = await runWrk([WRK!, "-t2", `-c${settings.connections}`, `-d${settings.duration}s`, "--latency", "-s", script, url]);
    const w = wrkFigures(out);
    const accepted = Number(/ACCEPTED (\d+)/.exec(out)?.[1] ?? Number.NaN);
    const limited = Number(/LIMITED (\d+)/.exec(out)?.[1] ?? Number.NaN);
    return {
      row: {
        name: "",
        requestsPerSec: Math.round(accepted / (w.seconds || settings.duration)),
        p50Ms: w.p50Ms,
        p99Ms: w.p99Ms,
        requests: w.total,
        failed: w.total - accepted - limited + w.socketErrors,
      },
      accepted,
      limited,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
      ...shippedGcEnv(settings),
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
    let limitedInSpread: number;
    if (WRK) {
      const spread = await intakeByWrk(svc.url, clientKeys, "Spread", settings);
      rows.push({ ...spread.row, name: `new items over ${KEYS} keys, accepted (wrk -t2)` });
      limitedInSpread = spread.limited;
      console.log(`  done: throughput by wrk (${spread.accepted} accepted, ${limitedInSpread} limited)`);
    } else {
      const spread = await run(svc.url, clientKeys, "Spread", { connections: settings.connections, duration: settings.duration });
      rows.push(row(`new items over ${KEYS} keys, accepted (autocannon in the bench's process: install wrk)`, spread));
      limitedInSpread = spread.statusCodeStats["429"]?.count ?? 0;
      console.log(`  done: throughput (${spread["2xx"]} accepted, ${limitedInSpread} limited)`);
    }

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
