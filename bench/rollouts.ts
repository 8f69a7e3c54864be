/**
 * Guarded rollouts (issue 17): one round of the rollout monitor
 * (`RolloutMonitor.checkAll`) over 100 running rollouts and 10 million
 * events, on the embedded SQLite store and (with `--store postgres://...` or
 * SVC_BENCH_PG) on PostgreSQL. Target: under 1 s per round (a round runs
 * every minute) on SQLite.
 *
 * svc runs in process (src/server.ts startServer: the real modules, store
 * and event store) with the monitor's timer off and an injected clock fixed
 * at NOW; the bench calls `services.rollouts.monitor.checkAll(NOW)` itself.
 *
 * The fill (seeded, the same on both engines but for the rollouts' ids and
 * salts, which svc draws):
 * - 10 projects x 10 gates, each gate with a running rollout on prod, stages
 *   5/25/50/100 % of 60 min each; gate g is in stage g % 3 (5, 25 or 50 %),
 *   its current stage began 50 minutes before NOW (so no stage is due: the
 *   check decides "none", and the cached state stays valid). Every rollout
 *   watches the error rate (`$error:*`); odd gates also watch a metric
 *   ("purchases", a count, or "revenue", a sum of the value).
 * - Project p has A = 20,000 + 30,000 p / 9 users active in the stage window
 *   (the last 50 minutes) and 4 A users over the day. Each active user has a
 *   session start in the window; there they evaluate all 10 gates (one
 *   exposure `$exposure:<rollout>_<stage>` each, 10 % a second one later;
 *   variant "new" or "old" by the real bucketing under the rollout's salt),
 *   so each rollout has 20-50k exposed units; after that some err (`$error:
 *   <fingerprint>`, 1-3 of 40 fingerprints) and some buy (`purchase` with a
 *   value), and everyone sends a few other events. The change helps (fewer
 *   errors, more purchases for the "new" group): no check finds a regression,
 *   so no round rolls anything back.
 * - Before the window (the 23 h before it): 60,000 `$error:*` and 30,000
 *   `purchase` events per project from the day's users, then other events
 *   (page.viewed, button.clicked, ...) up to 10,000,000 rows in all.
 * Appended in time order (a counting sort by the second) through the
 * server's own EventStore.append in 25,000-row batches, 8 in flight (on
 * SQLite with a 1 GiB page cache while filling: see fillServer). The data dir
 * (service.db with the projects and rollouts, and events.db) is cached in a
 * stable temp dir, and the PostgreSQL fill in its own database
 * `bench_rollouts`, keyed by FILL_VERSION and the event store's schema.
 *
 * Timed: 3 rounds (the first right after the server started: the analysis
 * workers start and SQLite's caches are empty; the OS page cache may still
 * hold the file), each the whole round: the rollouts read, every watched
 * metric read (statsOfMany: per project on SQLite), the judgement, and each check written to the
 * store. Every check's group sizes and means are compared with those the
 * fill defines. After the rounds their checks are deleted again. Each round
 * also prints svc's CPU time (all its threads: on SQLite the analysis
 * workers' too): the machine may be shared, and the wall time of a round is
 * about that CPU time over the idle cores.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { SYSTEM_ACTOR } from "../src/lib/audit";
import type { EventRow, EventStore } from "../src/lib/eventstore/types";
import type { RoundOutcome } from "../src/modules/rollouts/monitor";
import { type RunningServer, startServer } from "../src/server";
import { rolloutExposureName, inRollout } from "../src/sdk/rollouts";
import { type Check, type Row, type Settings, ROOT, percentile, postgresUrl, printChecks, prng, round, thousands } from "./lib";

const TARGET_MS = 1000;
const RUNS = 3;
/** Bump when the fill below changes: a cached fill of another version is refilled. */
const FILL_VERSION = "rollouts-fill-1";
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The monitor's "now" (a fixed time, so a cached fill stays valid). */
const NOW = Date.UTC(2026, 10, 20, 12, 0);
const DAY_START = NOW - 24 * HOUR;
/** When every rollout's current stage began. */
const STAGE_START = NOW - 50 * MINUTE;
const TOTAL = 10_000_000;
const PROJECTS = 10;
const GATES = 10;
const ROLLOUTS = PROJECTS * GATES;
const STAGES = [
  { percent: 5, minutes: 60 },
  { percent: 25, minutes: 60 },
  { percent: 50, minutes: 60 },
  { percent: 100, minutes: 0 },
];
const FINGERPRINTS = 40;
const BG_ERRORS = 60_000;
const BG_PURCHASES = 30_000;
const APPEND_ROWS = 25_000;
const OTHER_NAMES = ["page.viewed", "button.clicked", "search.performed", "screen.viewed", "session.started", "api.called"];
const KIND = { exposure: 0, error: 1, purchase: 2, other: 3 } as const;

const activeUsers = (p: number) => 20_000 + Math.round((30_000 * p) / (PROJECTS - 1));
const dayUsers = (p: number) => 4 * activeUsers(p);
const unitName = (u: number) => `user-${u}`;
/** Gate g of a project watches: nothing besides the error rate (even g), purchases (g % 4 = 1) or revenue (g % 4 = 3). */
const watchedMetric = (g: number): "purchases" | "revenue" | null => (g % 2 === 0 ? null : g % 4 === 1 ? "purchases" : "revenue");

/** One rollout as the fill needs it (from the store). */
type BenchRollout = { id: string; project: number; projectId: string; gate: number; stage: number; percent: number; salt: string };

/** What each rollout's check must find per group (0 old, 1 new): units, and per-unit sums of errors, purchases, revenue. */
type Expected = { n: Float64Array; errors: Float64Array; purchases: Float64Array; revenue: Float64Array };

/** The fill as columns, in generation order; `order` is time order. */
type Fill = { kind: Uint8Array; project: Uint8Array; aux: Uint16Array; unit: Int32Array; ts: Int32Array; cents: Uint32Array; order: Uint32Array; length: number; expected: Expected; counts: Record<string, number> };

function makeFill(rollouts: BenchRollout[]): Fill {
  const rand = prng(17);
  const kind = new Uint8Array(TOTAL);
  const project = new Uint8Array(TOTAL);
  const aux = new Uint16Array(TOTAL);
  const unit = new Int32Array(TOTAL);
  const ts = new Int32Array(TOTAL);
  const cents = new Uint32Array(TOTAL);
  let n = 0;
  const push = (k: number, p: number, a: number, u: number, t: number, c = 0) => {
    kind[n] = k;
    project[n] = p;
    aux[n] = a;
    unit[n] = u;
    ts[n] = t - DAY_START;
    cents[n] = c;
    n++;
  };
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo));
  const expected: Expected = { n: new Float64Array(ROLLOUTS * 2), errors: new Float64Array(ROLLOUTS * 2), purchases: new Float64Array(ROLLOUTS * 2), revenue: new Float64Array(ROLLOUTS * 2) };
  const counts: Record<string, number> = { exposures: 0, windowErrors: 0, windowPurchases: 0, windowOther: 0, bgErrors: 0, bgPurchases: 0, bgOther: 0 };
  const arms = new Uint8Array(GATES);
  // The stage window: each active user's session.
  for (let p = 0; p < PROJECTS; p++) {
    const mine = rollouts.filter((r) => r.project === p).sort((a, b) => a.gate - b.gate);
    for (let u = 0; u < activeUsers(p); u++) {
      const start = between(STAGE_START, NOW - 2 * MINUTE);
      const name = unitName(u);
      let errFactor = 1;
      let buyFactor = 1;
      for (const r of mine) {
        const arm = inRollout(r, name) ? 1 : 0;
        arms[r.gate] = arm;
        push(KIND.exposure, p, r.gate * 2 + arm, u, start + Math.floor(rand() * 30_000));
        counts.exposures!++;
        if (rand() < 0.1) {
          push(KIND.exposure, p, r.gate * 2 + arm, u, between(start, NOW));
          counts.exposures!++;
        }
        if (arm === 1) {
          errFactor *= 0.8;
          buyFactor *= 1.05;
        }
      }
      // Outcomes come after the session's exposures (all within 30 s of its start).
      const from = start + 30_000;
      let errors = 0;
      if (rand() < 0.04 * errFactor) {
        errors = 1 + Math.floor(rand() * 3);
        for (let k = 0; k < errors; k++) push(KIND.error, p, Math.floor(FINGERPRINTS * rand() ** 2), u, between(from, NOW));
        counts.windowErrors! += errors;
      }
      let purchases = 0;
      let revenue = 0;
      if (rand() < 0.08 * buyFactor) {
        purchases = 1 + Math.floor(rand() * 2);
        for (let k = 0; k < purchases; k++) {
          const c = 500 + Math.floor(rand() * 19_500);
          revenue += c / 100;
          push(KIND.purchase, p, 0, u, between(from, NOW), c);
        }
        counts.windowPurchases! += purchases;
      }
      for (let k = 2 + Math.floor(rand() * 3); k > 0; k--) {
        push(KIND.other, p, Math.floor(rand() * OTHER_NAMES.length), u, between(start, NOW));
        counts.windowOther!++;
      }
      for (const r of mine) {
        const i = rollouts.indexOf(r) * 2 + arms[r.gate]!;
        expected.n[i]!++;
        expected.errors[i]! += errors;
        expected.purchases[i]! += purchases;
        expected.revenue[i]! += revenue;
      }
    }
  }
  // The day before the window.
  for (let p = 0; p < PROJECTS; p++) {
    for (let i = 0; i < BG_ERRORS; i++) push(KIND.error, p, Math.floor(FINGERPRINTS * rand() ** 2), Math.floor(rand() * dayUsers(p)), between(DAY_START, STAGE_START));
    for (let i = 0; i < BG_PURCHASES; i++) push(KIND.purchase, p, 0, Math.floor(rand() * dayUsers(p)), between(DAY_START, STAGE_START), 500 + Math.floor(rand() * 19_500));
    counts.bgErrors! += BG_ERRORS;
    counts.bgPurchases! += BG_PURCHASES;
  }
  const rest = TOTAL - n;
  for (let i = 0; i < rest; i++) {
    const p = i % PROJECTS;
    push(KIND.other, p, Math.floor(rand() * OTHER_NAMES.length), Math.floor(rand() * dayUsers(p)), between(DAY_START, STAGE_START));
  }
  counts.bgOther = rest;
  // Time order by the second (a counting sort: 10M rows in well under a second); within a second, generation order.
  const seconds = 24 * 3600;
  const starts = new Uint32Array(seconds + 1);
  for (let i = 0; i < n; i++) starts[Math.floor(ts[i]! / 1000) + 1]!++;
  for (let s = 1; s <= seconds; s++) starts[s]! += starts[s - 1]!;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[starts[Math.floor(ts[i]! / 1000)]!++] = i;
  return { kind, project, aux, unit, ts, cents, order, length: n, expected, counts };
}

/** The fill as EventRow batches in time order. */
function* fillBatches(f: Fill, rollouts: BenchRollout[], projectIds: string[]): Generator<EventRow[]> {
  const fingerprints = Array.from({ length: FINGERPRINTS }, (_, i) => createHash("sha256").update(`fingerprint-${i}`).digest("hex").slice(0, 32));
  const exposureNames = new Map<string, string>();
  for (const r of rollouts) exposureNames.set(`${r.project}:${r.gate}`, rolloutExposureName(r.id, r.stage));
  let rows: EventRow[] = [];
  for (let j = 0; j < f.length; j++) {
    const i = f.order[j]!;
    const p = f.project[i]!;
    const k = f.kind[i]!;
    const a = f.aux[i]!;
    const base = { projectId: projectIds[p]!, ts: DAY_START + f.ts[i]!, unitId: unitName(f.unit[i]!) };
    if (k === KIND.exposure) rows.push({ ...base, name: exposureNames.get(`${p}:${a >> 1}`)!, value: null, props: { variant: a & 1 ? "new" : "old" } });
    else if (k === KIND.error) rows.push({ ...base, name: `$error:${fingerprints[a]}`, value: null, props: { release: "4.2.0", environment: "production" } });
    else if (k === KIND.purchase) rows.push({ ...base, name: "purchase", value: f.cents[i]! / 100, props: { plan: "pro", currency: "EUR" } });
    else rows.push({ ...base, name: OTHER_NAMES[a]!, value: null, props: { path: "/checkout", device: "phone" } });
    if (rows.length === APPEND_ROWS) {
      yield rows;
      rows = [];
    }
  }
  if (rows.length) yield rows;
}

// ---------------------------------------------------------------- svc: the projects, gates, metrics and rollouts

let clockNow = NOW;

function serve(dataDir: string, store?: string): Promise<RunningServer> {
  return startServer({
    port: 0,
    host: "127.0.0.1",
    dataDir,
    store,
    logRequests: false,
    quiet: true,
    clock: () => clockNow,
    rolloutsEveryMs: 0,
    alertsEveryMs: 0,
    experimentsEveryMs: 0,
  });
}

/** 10 projects with 10 gates each, and a running rollout on each gate in its stage (see the header); answers the project ids. */
async function createRollouts(server: RunningServer): Promise<string[]> {
  const { projects, events, metrics, gates, rollouts } = server.ctx.services;
  const actor = SYSTEM_ACTOR;
  const projectIds: string[] = [];
  for (let p = 0; p < PROJECTS; p++) {
    clockNow = DAY_START;
    const { project } = await projects.createOrganisationWithProject({ projectName: `Rollouts bench ${p}`, ownerEmail: `owner${p}@example.com` });
    projectIds.push(project.id);
    await events.create(project.id, { name: "purchase" }, actor);
    await metrics.create(project.id, { name: "purchases", kind: "count", event: "purchase" }, actor);
    await metrics.create(project.id, { name: "revenue", kind: "sum", event: "purchase" }, actor);
    for (let g = 0; g < GATES; g++) {
      const stage = g % 3;
      const gate = `checkout-v${g}`;
      await gates.create(project.id, { name: gate }, actor);
      const metric = watchedMetric(g);
      clockNow = STAGE_START - stage * HOUR;
      const r = await rollouts.create(
        project.id,
        {
          gate,
          env: "prod",
          rules: [{ name: "everyone", conditions: [], passPercentage: 100 }],
          stages: STAGES,
          metrics: metric ? [{ metric, direction: "higher", tolerance: 0.05 }] : [],
          onRegression: "rollback",
        },
        actor,
      );
      for (let s = 1; s <= stage; s++) {
        clockNow = STAGE_START - (stage - s) * HOUR;
        await rollouts.moveToStage(project.id, r.id, s, actor, s - 1);
      }
    }
  }
  clockNow = NOW;
  return projectIds;
}

/** The running rollouts as the store holds them (the fill's exposures need their ids, salts and stages). */
async function runningRollouts(server: RunningServer): Promise<{ rollouts: BenchRollout[]; projectIds: string[] }> {
  const rows = await server.store.all<{ id: string; project_id: string; subject_name: string; stage: number | string; stages: string; salt: string; status: string; stage_started_at: string }>(
    "SELECT r.id, r.project_id, r.subject_name, r.stage, r.stages, r.salt, r.status, r.stage_started_at FROM rollouts r WHERE r.status = 'running' ORDER BY r.id",
  );
  const names = await server.store.all<{ id: string; name: string }>("SELECT id, name FROM projects WHERE name LIKE 'Rollouts bench %' ORDER BY id");
  const projectIds: string[] = [];
  for (const row of names) projectIds[Number(row.name.slice("Rollouts bench ".length))] = row.id;
  const rollouts = rows
    .map((row) => {
      const stage = Number(row.stage);
      return {
        id: row.id,
        project: projectIds.indexOf(row.project_id),
        projectId: row.project_id,
        gate: Number(row.subject_name.slice("checkout-v".length)),
        stage,
        percent: (JSON.parse(row.stages) as { percent: number }[])[stage]!.percent,
        salt: row.salt,
        ok: Date.parse(row.stage_started_at) === STAGE_START && stage === Number(row.subject_name.slice("checkout-v".length)) % 3,
      };
    })
    .filter((r) => r.project >= 0 && r.ok)
    .map(({ ok: _ok, ...r }) => r)
    .sort((a, b) => a.project - b.project || a.gate - b.gate);
  return { rollouts, projectIds };
}

/** Appends the fill through the server's event store (8 batches in flight: group commit joins them, 200,000 rows a commit on SQLite); answers seconds. */
async function appendFill(store: EventStore, batches: Iterable<EventRow[]>, label: string): Promise<number> {
  const started = performance.now();
  let done = 0;
  let nextReport = 2_000_000;
  const pending: Promise<void>[] = [];
  for (const batch of batches) {
    pending.push(store.append(batch));
    if (pending.length >= 8) await Promise.all(pending.splice(0));
    done += batch.length;
    if (done >= nextReport) {
      nextReport += 2_000_000;
      const s = (performance.now() - started) / 1000;
      console.log(`    ${label} fill: ${thousands(done)} of ${thousands(TOTAL)} rows, ${round(s, 1)} s (${thousands(done / s)} rows/s)`);
    }
  }
  await Promise.all(pending);
  return (performance.now() - started) / 1000;
}

/** Makes the rollouts, generates the events from their ids and salts, appends them: the fill's facts. */
async function fillServer(server: RunningServer, label: string): Promise<{ fillSeconds: number; setupSeconds: number; generateSeconds: number }> {
  let t = performance.now();
  await createRollouts(server);
  const setupSeconds = (performance.now() - t) / 1000;
  const { rollouts, projectIds } = await runningRollouts(server);
  if (rollouts.length !== ROLLOUTS) throw new Error(`${label}: ${rollouts.length} rollouts in their stage after the setup, expected ${ROLLOUTS}`);
  t = performance.now();
  const f = makeFill(rollouts);
  const generateSeconds = (performance.now() - t) / 1000;
  console.log(`  ${label}: 100 rollouts made in ${round(setupSeconds, 1)} s; ${thousands(f.length)} events generated in ${round(generateSeconds, 1)} s: ${Object.entries(f.counts).map(([k, v]) => `${k} ${thousands(v)}`).join(", ")}`);
  const store = server.ctx.services.analytics.eventStore;
  // SQLite: a 1 GiB page cache while filling (the server's is 64 MiB). The exposures' two unit-keyed B-trees
  // (experiment_exposures, event_units_daily) grow to hundreds of MB with 100 rollouts; past the cache every
  // upsert reads a page and every commit rewrites its dirty pages to the WAL (the fill slowed to ~11,000 rows/s).
  const db = (store as unknown as { db?: { run(sql: string): void } }).db;
  if (store.kind === "sqlite") db?.run("PRAGMA cache_size = -1048576");
  const fillSeconds = await appendFill(store, fillBatches(f, rollouts, projectIds), label);
  if (store.kind === "sqlite") db?.run("PRAGMA cache_size = -65536");
  console.log(`  ${label}: appended in ${round(fillSeconds, 1)} s (${thousands(f.length / fillSeconds)} rows/s)`);
  return { fillSeconds, setupSeconds, generateSeconds };
}

// ---------------------------------------------------------------- the timed rounds

function load(): number {
  return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
}

/** Null when the round's checks found what the fill defines (group sizes, and each metric's mean per unit), else what differs. */
function verify(outcomes: RoundOutcome[], rollouts: BenchRollout[], expected: Expected | null): string | null {
  if (outcomes.length !== ROLLOUTS) return `${outcomes.length} outcomes, expected ${ROLLOUTS}`;
  for (const o of outcomes) {
    const r = rollouts.findIndex((x) => x.id === o.rolloutId);
    if (r < 0) return `unknown rollout ${o.rolloutId}`;
    if (o.error || !o.check) return `${o.rolloutId}: ${o.error ?? "no check"}`;
    if (o.check.decision !== "none") return `${o.rolloutId}: decided ${o.check.decision} (${o.check.problems.join("; ")})`;
    const metric = watchedMetric(rollouts[r]!.gate);
    if (o.check.metrics.length !== (metric ? 2 : 1)) return `${o.rolloutId}: ${o.check.metrics.length} metrics checked`;
    if (!expected) continue;
    for (const m of o.check.metrics) {
      const sums = m.metric === "errors" ? expected.errors : m.metric === "purchases" ? expected.purchases : expected.revenue;
      for (const [arm, got] of [[0, m.old] as const, [1, m.new] as const]) {
        const n = expected.n[r * 2 + arm]!;
        const mean = sums[r * 2 + arm]! / n;
        if (got.n !== n || got.mean === null || Math.abs(got.mean - mean) > 1e-9 * Math.max(1, mean)) return `${o.rolloutId} ${m.metric} ${arm ? "new" : "old"}: n ${got.n} mean ${got.mean}, expected n ${n} mean ${mean}`;
      }
    }
  }
  return null;
}

/** RUNS rounds of checkAll(NOW) on a started server; rows, figures and checks for `engine`. Answers whether every round decided "none". */
async function timeRounds(engine: string, server: RunningServer, expected: Expected | null, rows: Row[], checks: Check[], figures: Record<string, number>): Promise<boolean> {
  const { rollouts } = await runningRollouts(server);
  const store = server.ctx.services.analytics.eventStore;
  // Each read timed: on SQLite one experimentStatsMany per project (every metric of its 10 rollouts), elsewhere one
  // experimentStats per rollout and metric (150 a round: the error rate of 100 rollouts, a metric of 50).
  const calls: number[] = [];
  const many = store.experimentStatsMany !== undefined;
  const readName = many ? "experimentStatsMany" : "experimentStats";
  const originalOne = store.experimentStats;
  const originalMany = store.experimentStatsMany;
  const timed =
    <A extends unknown[], R>(f: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const start = performance.now();
      try {
        return await f(...args);
      } finally {
        calls.push(performance.now() - start);
      }
    };
  if (originalMany) store.experimentStatsMany = timed(originalMany.bind(store));
  else store.experimentStats = timed(originalOne.bind(store));
  const monitor = server.ctx.services.rollouts.monitor;
  console.log(`  ${engine}: ${rollouts.length} running rollouts; load average ${load()} on ${availableParallelism()} CPUs before the rounds`);
  const totals: number[] = [];
  const cpuTotals: number[] = [];
  let clean = true;
  try {
    for (let run = 0; run < RUNS; run++) {
      calls.length = 0;
      const loadBefore = load();
      const start = performance.now();
      const cpuStart = process.cpuUsage();
      const outcomes = await monitor.checkAll(NOW);
      const ms = performance.now() - start;
      // The process's CPU time over the round, every thread (SQLite's analysis workers too; PostgreSQL's own is not in it).
      const cpu = process.cpuUsage(cpuStart);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      totals.push(ms);
      cpuTotals.push(cpuMs);
      const problem = verify(outcomes, rollouts, expected);
      if (problem?.includes("decided")) clean = false;
      const label = run === 0 ? "round 1 (cold: first after start)" : `round ${run + 1} (warm)`;
      rows.push({ name: `${engine}: checkAll of ${outcomes.length} rollouts, ${label}`, p50Ms: round(ms), p99Ms: round(ms), requests: outcomes.length, failed: problem ? 1 : 0 });
      rows.push({ name: `${engine}:   per rollout (total / ${outcomes.length})`, p50Ms: round(ms / Math.max(1, outcomes.length)), p99Ms: round(ms / Math.max(1, outcomes.length)) });
      rows.push({ name: `${engine}:   ${readName} calls (${calls.length}, ${many ? "one per project, " : ""}4 at a time)`, p50Ms: round(percentile(calls, 0.5)), p99Ms: round(Math.max(...calls)), requests: calls.length });
      console.log(
        `  ${engine}: ${label}: ${round(ms)} ms for ${outcomes.length} rollouts (${round(ms / Math.max(1, outcomes.length))} ms per rollout; svc's CPU time ${round(cpuMs)} ms; ${readName} p50 ${round(percentile(calls, 0.5))} ms, max ${round(Math.max(...calls))} ms over ${calls.length} calls); load average ${loadBefore} before${problem ? `  WRONG: ${problem}` : ""}`,
      );
      if (problem) checks.push({ figure: `${engine}: ${label} answers`, value: 0, unit: "", target: "as the fill defines", met: false, note: problem });
    }
  } finally {
    store.experimentStats = originalOne;
    if (originalMany) store.experimentStatsMany = originalMany;
    // The rounds' checks go again: the cached rollouts stay as the fill left them (no last check, no history).
    await server.store.run("DELETE FROM rollout_checks");
    await server.store.run("UPDATE rollouts SET last_check = NULL");
  }
  const warm = Math.max(...totals.slice(1));
  const key = engine === "SQLite" ? "" : ` ${engine}`;
  figures[`rolloutChecksMs${key}`] = round(warm);
  figures[`rolloutChecksColdMs${key}`] = round(totals[0]!);
  figures[`${engine} per rollout ms (warm)`] = round(warm / ROLLOUTS);
  figures[`${engine} svc CPU ms per warm round`] = round(Math.max(...cpuTotals.slice(1)));
  figures[`${engine} load average after`] = load();
  checks.push({ figure: `${engine}: rolloutChecksMs, one monitor round over ${ROLLOUTS} rollouts and ${thousands(TOTAL)} events (slower of the ${RUNS - 1} warm rounds)`, value: warm, unit: "ms", target: `< ${TARGET_MS} ms (issue 17)`, met: warm < TARGET_MS });
  checks.push({ figure: `${engine}: the first round after a start (cold)`, value: totals[0]!, unit: "ms", target: `< ${TARGET_MS} ms`, met: totals[0]! < TARGET_MS });
  console.log(`  ${engine}: load average ${load()} after the rounds`);
  return clean;
}

// ---------------------------------------------------------------- the engines

function schemaKey(file: string, pattern: RegExp): string {
  const source = readFileSync(join(ROOT, file), "utf8");
  return createHash("sha256")
    .update(pattern.exec(source)?.[0] ?? source)
    .digest("hex")
    .slice(0, 12);
}

type Marker = { rows: number; fillSeconds: number; setupSeconds: number; at: string; expected: Record<keyof Expected, number[]>; rollouts: string[] };

const toMarker = (expected: Expected) => Object.fromEntries(Object.entries(expected).map(([k, v]) => [k, Array.from(v as Float64Array)])) as Marker["expected"];
const fromMarker = (m: Marker["expected"]): Expected => ({ n: Float64Array.from(m.n), errors: Float64Array.from(m.errors), purchases: Float64Array.from(m.purchases), revenue: Float64Array.from(m.revenue) });

/** The expected sums of a fill: generated again from the stored rollouts (the same seed; only the sums are kept). */
async function expectedOf(server: RunningServer): Promise<{ expected: Expected; ids: string[] }> {
  const { rollouts } = await runningRollouts(server);
  return { expected: makeFill(rollouts).expected, ids: rollouts.map((r) => r.id) };
}

async function sqliteHalf(rows: Row[], checks: Check[], figures: Record<string, number>): Promise<void> {
  const key = `${FILL_VERSION}-${schemaKey("src/lib/eventstore/sqlite.ts", /const SCHEMA = `[\s\S]*?`;/)}`;
  const prefix = "svc-bench-rollouts-sqlite-";
  const dir = join(tmpdir(), `${prefix}${key}`);
  for (const old of readdirSync(tmpdir())) if (old.startsWith(prefix) && old !== `${prefix}${key}`) rmSync(join(tmpdir(), old), { recursive: true, force: true });
  const markerPath = join(dir, "bench-fill.json");
  let marker: Marker | null = existsSync(markerPath) ? (JSON.parse(readFileSync(markerPath, "utf8")) as Marker) : null;
  if (marker) console.log(`  SQLite: cached fill reused: ${dir} (${thousands(marker.rows)} rows, appended in ${round(marker.fillSeconds, 1)} s on ${marker.at}; delete the dir to refill)`);
  else {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    console.log(`  SQLite: filling ${dir} (service.db and events.db) with ${thousands(TOTAL)} events through the server's EventStore.append; cached for the next runs`);
    const server = await serve(dir);
    try {
      const { fillSeconds, setupSeconds } = await fillServer(server, "SQLite");
      const { expected, ids } = await expectedOf(server);
      marker = { rows: TOTAL, fillSeconds, setupSeconds, at: new Date().toISOString(), expected: toMarker(expected), rollouts: ids };
    } finally {
      await server.stop();
    }
    writeFileSync(markerPath, JSON.stringify(marker));
  }
  figures["SQLite fill seconds"] = round(marker.fillSeconds, 1);
  const sizeMb = Bun.file(join(dir, "events.db")).size / 1e6;
  console.log(`  SQLite: events.db ${thousands(sizeMb)} MB`);
  // A fresh start: the first round is the cold one.
  clockNow = NOW;
  const server = await serve(dir);
  let clean = false;
  try {
    clean = await timeRounds("SQLite", server, fromMarker(marker.expected), rows, checks, figures);
  } finally {
    await server.stop();
  }
  if (!clean) {
    rmSync(markerPath, { force: true });
    console.log("  SQLite: a round changed a rollout (see WRONG above): the cached fill is dropped; the next run refills");
  }
}

async function postgresHalf(url: string, rows: Row[], checks: Check[], figures: Record<string, number>): Promise<void> {
  const database = "bench_rollouts";
  const key = `${FILL_VERSION}-${schemaKey("src/lib/eventstore/postgres.ts", /const SCHEMA = \[[\s\S]*?\];/)}`;
  const target = new URL(url);
  target.pathname = `/${database}`;
  const dbUrl = target.toString();
  const admin = new SQL({ url, max: 1 });
  let marker: Marker | null = null;
  try {
    const exists = (await admin.unsafe("SELECT 1 FROM pg_database WHERE datname = $1", [database])).length > 0;
    if (exists) {
      const db = new SQL({ url: dbUrl, max: 1 });
      try {
        await db.unsafe("CREATE TABLE IF NOT EXISTS bench_rollouts_fill (version text PRIMARY KEY, marker text NOT NULL)");
        const found = (await db.unsafe("SELECT marker FROM bench_rollouts_fill WHERE version = $1", [key])) as { marker: string }[];
        if (found[0]) marker = JSON.parse(found[0].marker) as Marker;
      } finally {
        await db.close();
      }
    }
    // Another version (or an interrupted fill) starts over in a new database of ours.
    if (!marker) {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.unsafe(`CREATE DATABASE ${database}`);
    }
  } finally {
    await admin.close();
  }
  const dataDir = join(tmpdir(), "svc-bench-rollouts-pg-data");
  mkdirSync(dataDir, { recursive: true });
  if (marker) console.log(`  PostgreSQL: cached fill reused: ${target.host}/${database} (${thousands(marker.rows)} rows, appended in ${round(marker.fillSeconds, 1)} s on ${marker.at}; DROP DATABASE ${database} to refill)`);
  else {
    console.log(`  PostgreSQL: filling ${target.host}/${database} (svc's store and its event tables) with ${thousands(TOTAL)} events through the server's EventStore.append`);
    const server = await serve(dataDir, dbUrl);
    try {
      const { fillSeconds, setupSeconds } = await fillServer(server, "PostgreSQL");
      const vacuumStart = performance.now();
      const vacuum = new SQL({ url: dbUrl, max: 1 });
      try {
        await vacuum.unsafe("VACUUM (ANALYZE) events, event_hourly, event_units_daily, experiment_exposures");
      } finally {
        await vacuum.close();
      }
      console.log(`  PostgreSQL: VACUUM ANALYZE (what autovacuum does after such a load) took ${round((performance.now() - vacuumStart) / 1000, 1)} s`);
      const { expected, ids } = await expectedOf(server);
      marker = { rows: TOTAL, fillSeconds, setupSeconds, at: new Date().toISOString(), expected: toMarker(expected), rollouts: ids };
      await server.store.run("CREATE TABLE IF NOT EXISTS bench_rollouts_fill (version text PRIMARY KEY, marker text NOT NULL)");
      await server.store.run("INSERT INTO bench_rollouts_fill (version, marker) VALUES (?, ?)", key, JSON.stringify(marker));
    } finally {
      await server.stop();
    }
  }
  figures["PostgreSQL fill seconds"] = round(marker.fillSeconds, 1);
  clockNow = NOW;
  const server = await serve(dataDir, dbUrl);
  let clean = false;
  try {
    clean = await timeRounds("PostgreSQL", server, fromMarker(marker.expected), rows, checks, figures);
    if (!clean) await server.store.run("DELETE FROM bench_rollouts_fill");
  } finally {
    await server.stop();
  }
  if (!clean) console.log("  PostgreSQL: a round changed a rollout (see WRONG above): the cached fill is dropped; the next run refills");
}

export async function runRollouts(_settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number>; checks: Check[] }> {
  const rows: Row[] = [];
  const checks: Check[] = [];
  const figures: Record<string, number> = {};
  console.log(
    `  ${PROJECTS} projects x ${GATES} gates, a running rollout each (stages ${STAGES.map((s) => `${s.percent} %`).join(", ")}; current stage 5/25/50 % since ${new Date(STAGE_START).toISOString()}), ${thousands(TOTAL)} events over the 24 h before ${new Date(NOW).toISOString()}`,
  );
  await sqliteHalf(rows, checks, figures);
  const pg = postgresUrl();
  if (pg) await postgresHalf(pg, rows, checks, figures);
  else console.log("  PostgreSQL half skipped: pass --store postgres://USER@HOST:PORT/DB (or SVC_BENCH_PG); the bench creates and uses its own database bench_rollouts there");
  const met = (figures.rolloutChecksMs ?? Number.POSITIVE_INFINITY) < TARGET_MS;
  console.log(`  rolloutChecksMs ${figures.rolloutChecksMs} ms: ${met ? "meets" : "MISSES"} the target (< ${TARGET_MS} ms per round on SQLite)`);
  printChecks(checks);
  return { rows, figures, checks };
}
