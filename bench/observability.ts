/**
 * Observability (issue 13): event ingest and event series, each figure
 * printed with its target next to it.
 *
 * 1. Ingest over HTTP on loopback into the embedded store: batches of 1,000
 *    realistic events (5 names, unitIds from a pool of 100k, 2-3 properties,
 *    `ts` as our SDK sends them: each request's events stamped over the 10 s
 *    before it is sent, rendered per request) POSTed by autocannon (4 and 8
 *    connections, `--duration` s each) to svc (a real server in a temp dir;
 *    `--binary` for dist/svc) and, in the same run, to a bare Bun.serve that
 *    parses the JSON and answers 202 (the HTTP + JSON ceiling). Target: at
 *    least 100,000 events/s. For comparison, the same events without `ts`
 *    (server-stamped, so every index insert is in order). Then an in-process
 *    breakdown of one batch (JSON.parse, TypeBox check, the ingest mapping,
 *    the store's append) says where a request's time goes.
 * 2. Series over 10M stored events of one name (30 days, plus noise names),
 *    filled through `SqliteEventStore.append` in 10k-row batches: a 30-day
 *    hourly count (720 buckets, roll-up plan; target under 100 ms, p50/p95 of
 *    20 runs) against the raw plan (the same window shifted a minute).
 * 3. Unique units: 1M distinct units over the same 30 days (about 100k a
 *    day, each unit on up to 3 days): a daily unique series (target under
 *    1 s) and the whole 30 days as one bucket.
 * 4. 2 and 3 on PostgreSQL through `PostgresEventStore` when `--store
 *    postgres://...` (or SVC_BENCH_PG) names a cluster: in its own database
 *    `bench_obs` (created here).
 *
 * The filled stores are cached (a stable temp dir for SQLite, a marker table
 * in `bench_obs` for PostgreSQL), keyed by FILL_VERSION and the store's
 * schema, so re-runs do not refill 14M rows; the output says when a cached
 * fill is used.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { PostgresEventStore } from "../src/lib/eventstore/postgres";
import { SqliteEventStore } from "../src/lib/eventstore/sqlite";
import type { EventRow, EventStore, SeriesQuery, SeriesResult } from "../src/lib/eventstore/types";
import type { ServiceContext } from "../src/lib/module";
import { IngestBody } from "../src/modules/analytics/contract";
import { AnalyticsService } from "../src/modules/analytics/service";
import {
  BUN,
  type Check,
  type Row,
  type Settings,
  type StoreFill,
  type Target,
  appendUs,
  cachedPostgresFill,
  cachedSqliteFill,
  initProject,
  percentile,
  postgresUrl,
  printChecks,
  prng,
  round,
  shippedGcEnv,
  spawnListening,
  startSvc,
  stop,
  thousands,
  timed,
} from "./lib";

type AutocannonResult = {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  "2xx": number;
  non2xx: number;
  duration: number;
};
// autocannon ships no types; the part used here (a sequence of requests each connection cycles through).
const autocannon = require("autocannon") as (options: {
  url: string;
  method: string;
  headers: Record<string, string>;
  requests: { setupRequest: (req: Record<string, unknown>) => Record<string, unknown> }[];
  connections: number;
  duration: number;
}) => Promise<AutocannonResult>;

const TARGET_EVENTS_PER_SEC = 100_000;
const TARGET_HOURLY_MS = 100;
const TARGET_UNIQUE_MS = 1000;
const BATCH = 1000;
const CONNECTIONS = [4, 8];

/** Bump when the fill below changes: a cached store of another version is refilled. */
const FILL_VERSION = "fill-1";
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const FILL = {
  projectId: "prj_bench_obs",
  /** 2026-10-01T00:00Z: a fixed window, so a cached fill stays valid whatever the date. */
  start: Date.UTC(2026, 9, 1),
  days: 30,
  event: "page.viewed",
  events: 10_000_000,
  noiseNames: ["button.clicked", "checkout.completed", "search.performed", "signup.started"],
  noisePerName: 250_000,
  unitPool: 100_000,
  uniqueEvent: "session.started",
  uniqueUnits: 1_000_000,
  /** Each unit is active on its own day (unit % 30) and on this many more random days: about 100k units a day. */
  extraDays: 2,
  appendRows: 10_000,
};
const HOURS = FILL.days * 24;
const FILL_ROWS = FILL.events + FILL.noiseNames.length * FILL.noisePerName + FILL.uniqueUnits * (1 + FILL.extraDays);

// ---------------------------------------------------------------- 1. ingest

const PATHS = ["/", "/pricing", "/docs", "/blog", "/signup", "/account", "/checkout", "/search"];
const DEVICES = ["desktop", "phone", "tablet"];
const PLANS = ["free", "pro", "team"];
/** Our SDK stamps each event when tracked and flushes every 10 s: a batch's `ts` lie in the 10 s before it is sent. */
const TS_SPREAD_MS = 10_000;
const TS_MARK = "@ts@";

/** One realistic ingest event (5 names, a unit from a pool of 100k, 2-3 properties), `ts` a placeholder filled at send time. */
function ingestEvent(rand: () => number, withTs: boolean): Record<string, unknown> {
  const unitId = `user-${Math.floor(rand() * FILL.unitPool)}`;
  const ts = withTs ? { ts: TS_MARK } : {};
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)]!;
  const r = rand();
  if (r < 0.5) return { name: "page.viewed", unitId, ...ts, properties: { path: pick(PATHS), device: pick(DEVICES), referrer: rand() < 0.5 ? "google" : "direct" } };
  if (r < 0.75) return { name: "button.clicked", unitId, ...ts, properties: { button: `cta-${Math.floor(rand() * 20)}`, page: pick(PATHS) } };
  if (r < 0.88) return { name: "search.performed", unitId, ...ts, properties: { query_length: 3 + Math.floor(rand() * 30), results: Math.floor(rand() * 200), device: pick(DEVICES) } };
  if (r < 0.96) return { name: "signup.started", unitId, ...ts, properties: { source: rand() < 0.5 ? "ad" : "organic", plan: pick(PLANS) } };
  return { name: "checkout.completed", unitId, ...ts, value: round(5 + rand() * 200), properties: { plan: pick(PLANS), currency: "EUR", items: 1 + Math.floor(rand() * 5) } };
}

/** A body of 1,000 events split around its `ts` values, which `render` fills in as "sent now minus up to 10 s". */
type BodyTemplate = { parts: string[]; offsets: number[] };

/** `count` distinct bodies of 1,000 events each (without `ts` when `withTs` is false: the server stamps them). */
function ingestTemplates(count: number, withTs = true): BodyTemplate[] {
  const rand = prng(7);
  return Array.from({ length: count }, () => {
    const parts = JSON.stringify({ events: Array.from({ length: BATCH }, () => ingestEvent(rand, withTs)) }).split(`"${TS_MARK}"`);
    // Tracked in order over the flush interval: the oldest first.
    const offsets = Array.from({ length: parts.length - 1 }, (_, i) => Math.floor(TS_SPREAD_MS * (1 - i / BATCH)));
    return { parts, offsets };
  });
}

function render(t: BodyTemplate, now: number): string {
  let body = t.parts[0]!;
  for (let i = 0; i < t.offsets.length; i++) body += `${now - t.offsets[i]!}${t.parts[i + 1]!}`;
  return body;
}

/** The baseline: Bun.serve reading the body as svc does (text, then JSON.parse) and answering 202. */
const BARE_INGEST = `
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = JSON.parse(await req.text());
    if (typeof body !== "object" || body === null || !Array.isArray(body.events)) return new Response('{"error":"bad"}', { status: 400 });
    return new Response(JSON.stringify({ accepted: body.events.length }), { status: 202, headers: { "content-type": "application/json" } });
  },
});
console.log("listening on http://127.0.0.1:" + server.port);
process.on("SIGTERM", () => void server.stop().then(() => process.exit(0)));
`;

const CLOCK_TICKS = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
/** CPU seconds (user + system, every thread) a process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

type IngestRun = { row: Row; eventsPerSec: number; serverCores: number; clientCores: number; accepted: number };

/** One autocannon run; every request's body is rendered when sent (its `ts` as a live SDK's would be). */
async function ingestLoad(settings: Settings, label: string, target: Target, headers: Record<string, string>, templates: BodyTemplate[], connections: number): Promise<IngestRun> {
  const serverBefore = cpuSeconds(target.proc.pid);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const r = await autocannon({
    url: `${target.url}/api/sdk/v1/events`,
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    requests: templates.map((t) => ({ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: render(t, Date.now()) }) })),
    connections,
    duration: settings.duration,
  });
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const accepted = r["2xx"];
  return {
    row: {
      name: `${label}, ${connections} conns (1,000 events a request)`,
      requestsPerSec: Math.round(accepted / seconds),
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      requests: r.requests.total,
      failed: r.requests.total - accepted + r.errors + r.timeouts,
    },
    eventsPerSec: (accepted * BATCH) / seconds,
    serverCores: (cpuSeconds(target.proc.pid) - serverBefore) / seconds,
    clientCores: (client.user + client.system) / 1e6 / seconds,
    accepted,
  };
}

/** A fresh svc (its own events.db), loaded once, then checked: every acknowledged event is stored. */
async function svcIngest(settings: Settings, label: string, templates: BodyTemplate[], connections: number): Promise<IngestRun & { stored: number; consistent: boolean }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-obs-ingest-"));
  try {
    const keys = initProject(settings, dataDir);
    const svc = await startSvc(settings, dataDir);
    let run: IngestRun;
    try {
      // One warm-up batch (first-seen catalog rows, compiled validators), not counted.
      const warm = await fetch(`${svc.url}/api/sdk/v1/events`, { method: "POST", headers: { "x-sdk-key": keys.serverKey, "content-type": "application/json" }, body: render(templates[0]!, Date.now()) });
      if (warm.status !== 202) throw new Error(`ingest answered ${warm.status}: ${await warm.text()}`);
      run = await ingestLoad(settings, label, svc, { "x-sdk-key": keys.serverKey }, templates, connections);
    } finally {
      await stop([svc]);
    }
    const db = new Database(join(dataDir, "events.db"), { readonly: true });
    const stored = (db.query("SELECT COUNT(*) AS n FROM events").get() as { n: number }).n - BATCH;
    db.close();
    // Requests in flight when autocannon stopped may be stored without being counted: at most one per connection.
    const consistent = stored >= run.accepted * BATCH && stored <= (run.accepted + connections) * BATCH;
    if (!consistent) run.row.failed = (run.row.failed ?? 0) + 1;
    return { ...run, stored, consistent };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function ingestSuite(settings: Settings, rows: Row[], checks: Check[], figures: Record<string, number>): Promise<void> {
  const templates = ingestTemplates(100);
  const size = render(templates[0]!, Date.now()).length;
  console.log(`  ingest: ${templates.length} distinct bodies of ${BATCH} events (${round(size / 1024, 1)} KiB each; ts = send time minus up to ${TS_SPREAD_MS / 1000} s, rendered per request), autocannon in this process, ${settings.duration} s per run`);
  const env = shippedGcEnv(settings);
  const bareRuns = new Map<number, IngestRun>();
  const bare = await spawnListening([BUN, "-e", BARE_INGEST], env);
  try {
    for (const c of CONNECTIONS) {
      const run = await ingestLoad(settings, "bare Bun.serve, JSON.parse + 202", bare, {}, templates, c);
      bareRuns.set(c, run);
      rows.push(run.row);
      console.log(`  bare, ${c} conns: ${thousands(run.eventsPerSec)} events/s (server ${round(run.serverCores)} cores, autocannon ${round(run.clientCores)} cores)`);
    }
  } finally {
    await stop([bare]);
  }
  const runs: { label: string; templates: BodyTemplate[]; connections: number; target: boolean }[] = [
    ...CONNECTIONS.map((c) => ({ label: "svc ingest → events.db", templates, connections: c, target: true })),
    // For comparison: the same events without `ts` (the server stamps them): every index insert lands at the end.
    { label: "svc ingest → events.db, no ts (server-stamped)", templates: ingestTemplates(100, false), connections: CONNECTIONS.at(-1)!, target: false },
  ];
  for (const spec of runs) {
    const c = spec.connections;
    const run = await svcIngest(settings, spec.label, spec.templates, c);
    rows.push(run.row);
    const b = bareRuns.get(c)!;
    const tag = spec.target ? `${c} conns` : `${c} conns no-ts`;
    console.log(`  svc, ${tag}: ${thousands(run.eventsPerSec)} events/s (server ${round(run.serverCores)} cores, autocannon ${round(run.clientCores)} cores); ${thousands(run.stored)} rows stored for ${thousands(run.accepted * BATCH)} acknowledged${run.consistent ? "" : "  MISMATCH"}`);
    figures[`ingest svc ${tag} events/s`] = Math.round(run.eventsPerSec);
    figures[`ingest svc ${tag} server cores`] = round(run.serverCores);
    if (spec.target) figures[`ingest bare ${c} conns events/s`] = Math.round(b.eventsPerSec);
    checks.push({
      figure: `ingest, ${c} connections, svc → events.db${spec.target ? "" : ", events without ts (comparison)"}`,
      value: run.eventsPerSec,
      unit: "events/s",
      target: `≥ ${thousands(TARGET_EVENTS_PER_SEC)}`,
      met: spec.target ? run.eventsPerSec >= TARGET_EVENTS_PER_SEC : null,
      baseline: `bare Bun.serve + JSON.parse ${thousands(b.eventsPerSec)} events/s (svc at ${round((100 * run.eventsPerSec) / b.eventsPerSec, 1)}%)`,
      note: `p50 ${run.row.p50Ms} ms, p99 ${run.row.p99Ms} ms a request; svc used ${round(run.serverCores)} cores${run.consistent ? "" : `; STORED ${run.stored} ≠ ACKNOWLEDGED ${run.accepted * BATCH}`}`,
    });
  }
  await ingestBreakdown(templates, checks, figures);
}

/** Microseconds per call: the best of three rounds of `n` (the least disturbed by the machine). */
async function usPerCall(n: number, run: (i: number) => unknown): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    for (let i = 0; i < n; i++) await run(i);
    best = Math.min(best, ((performance.now() - start) * 1000) / n);
  }
  return best;
}

/**
 * Where one batch's time goes, in this process on one core: parsing, the
 * TypeBox check of the route's schema (compiled with TypeCompiler, as Elysia
 * does), the service's checks and mapping to rows, and the embedded store's
 * append of 300 batches (8 in flight, as concurrent requests are) with `ts`
 * as they would arrive at 100,000 events/s (send time minus up to 10 s), and
 * the same rows with every `ts` in order.
 */
async function ingestBreakdown(templates: BodyTemplate[], checks: Check[], figures: Record<string, number>): Promise<void> {
  const now = Date.now();
  const bodies = templates.map((t) => render(t, now));
  const parsed = bodies.map((b) => JSON.parse(b) as { events: Record<string, unknown>[] });
  const check = TypeCompiler.Compile(IngestBody);
  if (!check.Check(parsed[0])) throw new Error(`the bench body does not pass IngestBody: ${JSON.stringify([...check.Errors(parsed[0])][0])}`);
  let captured: EventRow[] = [];
  const sink: EventStore = {
    kind: "sqlite",
    location: "memory",
    append: async (rows) => void (captured = rows),
    series: async () => ({ sql: "", rows: [] }),
    experimentStats: async () => ({ sql: "", variants: [] }),
    exposureCounts: async () => ({ variants: [], firstAt: null, lastAt: null }),
    prune: async () => 0,
    close: async () => {},
  };
  const ctx = { options: { retentionEveryMs: 3_600_000 }, services: { events: { noteSeen: async () => {} }, attributes: { noteContext: () => {} } } } as unknown as ServiceContext;
  const service = new AnalyticsService(ctx, sink);
  const n = bodies.length;
  const parseUs = await usPerCall(n, (i) => JSON.parse(bodies[i]!));
  const validateUs = await usPerCall(n, (i) => check.Check(parsed[i]));
  const mapUs = await usPerCall(n, (i) => service.ingest(FILL.projectId, parsed[i]!.events as never));
  // 300 batches as sent 10 ms apart (100,000 events/s), mapped by the service; and the same with ts in order.
  const paced: EventRow[][] = [];
  for (let k = 0; k < 3 * n; k++) {
    await service.ingest(FILL.projectId, (JSON.parse(render(templates[k % n]!, now + k * 10)) as { events: never[] }).events);
    paced.push(captured);
  }
  await service.close();
  let seq = now;
  const ordered = paced.map((rows) => rows.map((r) => ({ ...r, ts: seq++ })));
  const groupUs = await appendUs(paced, 8);
  const singleUs = await appendUs(paced, 1);
  const orderedUs = await appendUs(ordered, 8);
  const total = parseUs + validateUs + mapUs + groupUs;
  const perSec = (us: number) => thousands((1e6 * BATCH) / us);
  console.log("  where a batch of 1,000 events goes, in process (one core; parse/check/map best of 3 x 100 batches, append 300 batches):");
  const line = (what: string, us: number, share = true) =>
    console.log(`    ${what.padEnd(62)} ${String(Math.round(us)).padStart(7)} µs/batch  ${perSec(us).padStart(11)} events/s alone${share ? `  ${round((100 * us) / total, 1)}%` : ""}`);
  line("JSON.parse of the body", parseUs);
  line("TypeBox check of IngestBody (TypeCompiler)", validateUs);
  line("AnalyticsService.ingest checks and mapping", mapUs);
  line("SqliteEventStore.append, 8 in flight, ts spread over 10 s", groupUs);
  line("(the same, one batch at a time)", singleUs, false);
  line("(the same rows, 8 in flight, every ts in order)", orderedUs, false);
  line("sum: the in-process ceiling on one core", total, false);
  figures["breakdown parse µs/batch"] = Math.round(parseUs);
  figures["breakdown TypeBox check µs/batch"] = Math.round(validateUs);
  figures["breakdown ingest mapping µs/batch"] = Math.round(mapUs);
  figures["breakdown append 8 in flight µs/batch"] = Math.round(groupUs);
  figures["breakdown append one at a time µs/batch"] = Math.round(singleUs);
  figures["breakdown append ts in order µs/batch"] = Math.round(orderedUs);
  checks.push({
    figure: "in-process ceiling, one core (parse + check + map + append)",
    value: (1e6 * BATCH) / total,
    unit: "events/s",
    target: `≥ ${thousands(TARGET_EVENTS_PER_SEC)} (no HTTP)`,
    met: null,
    note: `append alone ${perSec(groupUs)} events/s; with every ts in order ${perSec(orderedUs)} events/s`,
  });
}

// ---------------------------------------------------------------- 2-4. fill and series

type Expected = { hourly: number[]; dailyUnique: number[]; uniqueUnits: number };

/** The hourly counts of `FILL.event` and the daily distinct units of `FILL.uniqueEvent` the fill produces. */
function expectedFill(): Expected {
  const hourly = Array.from({ length: HOURS }, (_, h) => perHour(FILL.events, h));
  const { extra } = uniqueDays();
  const dailyUnique = new Array<number>(FILL.days).fill(0);
  for (let u = 0; u < FILL.uniqueUnits; u++) {
    const days = new Set([u % FILL.days, ...extra.map((e) => e[u]!)]);
    for (const d of days) dailyUnique[d]!++;
  }
  return { hourly, dailyUnique, uniqueUnits: FILL.uniqueUnits };
}

/** Events of a stream of `total` spread evenly over the 720 hours: hour h's share. */
function perHour(total: number, h: number): number {
  return Math.floor(((h + 1) * total) / HOURS) - Math.floor((h * total) / HOURS);
}

function uniqueDays(): { extra: Uint8Array[] } {
  const rand = prng(1234);
  const extra = Array.from({ length: FILL.extraDays }, () => new Uint8Array(FILL.uniqueUnits));
  for (let u = 0; u < FILL.uniqueUnits; u++) for (const e of extra) e[u] = Math.floor(rand() * FILL.days);
  return { extra };
}

/** The fill, day by day in 10k-row batches (deterministic: the same rows for both engines). */
function* fillBatches(): Generator<EventRow[]> {
  const rand = prng(42);
  const { extra } = uniqueDays();
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)]!;
  const p = FILL.projectId;
  for (let d = 0; d < FILL.days; d++) {
    const rows: EventRow[] = [];
    for (let hd = 0; hd < 24; hd++) {
      const h = d * 24 + hd;
      const hourStart = FILL.start + h * HOUR_MS;
      for (let k = perHour(FILL.events, h); k > 0; k--) {
        rows.push({ projectId: p, name: FILL.event, ts: hourStart + Math.floor(rand() * HOUR_MS), unitId: `user-${Math.floor(rand() * FILL.unitPool)}`, value: null, props: { path: pick(PATHS), device: pick(DEVICES) } });
      }
      for (const name of FILL.noiseNames) {
        for (let k = perHour(FILL.noisePerName, h); k > 0; k--) {
          const checkout = name === "checkout.completed";
          rows.push({ projectId: p, name, ts: hourStart + Math.floor(rand() * HOUR_MS), unitId: `user-${Math.floor(rand() * FILL.unitPool)}`, value: checkout ? round(5 + rand() * 200) : null, props: { plan: pick(PLANS), device: pick(DEVICES) } });
        }
      }
    }
    const dayStart = FILL.start + d * DAY_MS;
    for (let u = 0; u < FILL.uniqueUnits; u++) {
      let times = u % FILL.days === d ? 1 : 0;
      for (const e of extra) if (e[u] === d) times++;
      for (; times > 0; times--) {
        rows.push({ projectId: p, name: FILL.uniqueEvent, ts: dayStart + Math.floor(rand() * DAY_MS), unitId: `member-${u}`, value: null, props: { source: rand() < 0.3 ? "email" : "direct", device: pick(DEVICES) } });
      }
    }
    for (let i = 0; i < rows.length; i += FILL.appendRows) yield rows.slice(i, i + FILL.appendRows);
  }
}

const STORE_FILL: StoreFill = { suite: "obs", version: FILL_VERSION, rows: FILL_ROWS, batches: fillBatches };

/** The series of parts 2 and 3 on one store, each checked against the fill it should find. */
async function seriesSuite(engine: string, store: EventStore, expected: Expected, rows: Row[], checks: Check[], figures: Record<string, number>): Promise<void> {
  const from = FILL.start / 1000;
  const to = from + FILL.days * 86400;
  const count = { kind: "count" as const, event: FILL.event, filters: [] };
  const unique = { kind: "unique" as const, event: FILL.uniqueEvent, filters: [] };
  const cases: { key: string; label: string; q: SeriesQuery; runs: number; targetMs?: number; plan: string; verify: (r: SeriesResult) => string | null }[] = [
    {
      key: "hourly count",
      label: `30-day hourly count of ${thousands(FILL.events)} events (720 buckets)`,
      q: { projectId: FILL.projectId, from, to, bucket: 3600, measure: count },
      runs: 20,
      targetMs: TARGET_HOURLY_MS,
      plan: "event_hourly",
      verify: (r) => (r.rows.length === HOURS && r.rows.every((row, i) => row.v === expected.hourly[i]) ? null : `buckets differ from the fill (sum ${r.rows.reduce((s, x) => s + x.v, 0)})`),
    },
    {
      key: "hourly count raw",
      label: "the same, raw plan (window a minute off the hour)",
      q: { projectId: FILL.projectId, from: from + 60, to: to + 60, bucket: 3600, measure: count },
      runs: 5,
      plan: "FROM events",
      verify: (r) => {
        const sum = r.rows.reduce((s, x) => s + x.v, 0);
        return r.rows.length === HOURS && sum <= FILL.events && sum > FILL.events - expected.hourly[0]! ? null : `sum ${sum} outside the fill's`;
      },
    },
    {
      key: "daily unique",
      label: `30-day daily unique units (${thousands(FILL.uniqueUnits)} units, ~${thousands(expected.dailyUnique[0]!)} a day)`,
      q: { projectId: FILL.projectId, from, to, bucket: 86400, measure: unique },
      runs: 20,
      targetMs: TARGET_UNIQUE_MS,
      plan: "event_units_daily",
      verify: (r) => (r.rows.length === FILL.days && r.rows.every((row, i) => row.v === expected.dailyUnique[i]) ? null : "daily uniques differ from the fill"),
    },
    {
      key: "30-day unique",
      label: "unique units over the 30 days as one bucket",
      q: { projectId: FILL.projectId, from, to, bucket: FILL.days * 86400, measure: unique },
      runs: 10,
      targetMs: TARGET_UNIQUE_MS,
      plan: "event_units_daily",
      verify: (r) => (r.rows.length === 1 && r.rows[0]!.v === expected.uniqueUnits ? null : `answered ${r.rows[0]?.v}, not ${expected.uniqueUnits}`),
    },
    {
      key: "daily unique raw",
      label: "daily unique units, raw plan (window a minute off the day)",
      q: { projectId: FILL.projectId, from: from + 60, to: to + 60, bucket: 86400, measure: unique },
      runs: 3,
      plan: "FROM events",
      verify: (r) => (r.rows.length === FILL.days ? null : "wrong bucket count"),
    },
  ];
  const measured = new Map<string, { p50: number; p95: number }>();
  for (const c of cases) {
    const { first, samples, result } = await timed(() => store.series(c.q), c.runs);
    const wrongPlan = result.sql.includes(c.plan) ? null : `plan: expected ${c.plan}, ran ${result.sql}`;
    const problem = wrongPlan ?? c.verify(result);
    const p50 = percentile(samples, 0.5);
    const p95 = percentile(samples, 0.95);
    measured.set(c.key, { p50, p95 });
    rows.push({ name: `${engine}: ${c.label}`, p50Ms: round(p50), p99Ms: round(percentile(samples, 0.99)), requests: samples.length, failed: problem ? 1 : 0 });
    figures[`${engine} ${c.key} p50 ms`] = round(p50);
    figures[`${engine} ${c.key} p95 ms`] = round(p95);
    console.log(`  ${engine}: ${c.label}: p50 ${round(p50)} ms, p95 ${round(p95)} ms over ${c.runs} runs (first run ${round(first)} ms)${problem ? `  WRONG: ${problem}` : ""}`);
    checks.push({
      figure: `${engine}: ${c.label}, p95 of ${c.runs}`,
      value: p95,
      unit: "ms",
      target: c.targetMs === undefined ? "none (comparison)" : `< ${c.targetMs} ms`,
      met: problem ? false : c.targetMs === undefined ? null : p95 < c.targetMs,
      note: `p50 ${round(p50)} ms, first run ${round(first)} ms${problem ? `; WRONG: ${problem}` : ""}`,
    });
  }
  // The raw plan is measured after its roll-up twin: put it next to it as the baseline.
  for (const [key, rawKey] of [["hourly count", "hourly count raw"], ["daily unique", "daily unique raw"]] as const) {
    const c = checks.find((x) => x.figure.startsWith(`${engine}: `) && x.figure.includes(cases.find((k) => k.key === key)!.label));
    const raw = measured.get(rawKey);
    if (c && raw) c.baseline = `raw plan over the same data p50 ${round(raw.p50)} ms, p95 ${round(raw.p95)} ms`;
  }
}

/** Parts 2 and 3 on the embedded store. */
async function sqliteSeries(rows: Row[], checks: Check[], figures: Record<string, number>, expected: Expected): Promise<void> {
  const { path, fillSeconds } = await cachedSqliteFill(STORE_FILL);
  figures["SQLite fill seconds"] = round(fillSeconds, 1);
  const store = new SqliteEventStore(path);
  try {
    await seriesSuite("SQLite", store, expected, rows, checks, figures);
  } finally {
    await store.close();
  }
}

/** Part 4: parts 2 and 3 on PostgreSQL, in the database `bench_obs` of the cluster at `url`. */
async function postgresSeries(url: string, rows: Row[], checks: Check[], figures: Record<string, number>, expected: Expected): Promise<void> {
  const { dbUrl, fillSeconds } = await cachedPostgresFill(url, STORE_FILL);
  figures["PostgreSQL fill seconds"] = round(fillSeconds, 1);
  const store = new PostgresEventStore(dbUrl);
  try {
    await seriesSuite("PostgreSQL", store, expected, rows, checks, figures);
  } finally {
    await store.close();
  }
}

export async function runObservability(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number>; checks: Check[] }> {
  const rows: Row[] = [];
  const checks: Check[] = [];
  const figures: Record<string, number> = {};
  // SVC_BENCH_OBS=ingest or =series runs one half (the series half refills 14M rows after a schema change).
  const part = process.env.SVC_BENCH_OBS ?? "all";
  if (part !== "series") await ingestSuite(settings, rows, checks, figures);
  if (part === "ingest") {
    printChecks(checks);
    return { rows, figures, checks };
  }
  const expected = expectedFill();
  await sqliteSeries(rows, checks, figures, expected);
  const pg = postgresUrl();
  if (pg) await postgresSeries(pg, rows, checks, figures, expected);
  else console.log("  PostgreSQL half skipped: pass --store postgres://USER@HOST:PORT/DB (or SVC_BENCH_PG); the bench creates and uses its own database bench_obs there");
  printChecks(checks);
  return { rows, figures, checks };
}
