/**
 * Experiments (issue 14): the analysis sums of `EventStore.experimentStats`
 * and `exposureCounts` over a large experiment, on the embedded SQLite store
 * and (with `--store postgres://...` or SVC_BENCH_PG) on PostgreSQL, each
 * figure with its target (under 2 s) and checked against the fill.
 *
 * The fill (deterministic, the same rows on both engines), over 14 days of
 * exposures plus a 7-day pre-period before them:
 * - 1,000,000 units exposed to `exp_bench`, 2 variants 50/50, first exposure
 *   uniform over the 14 days; 10% of them exposed again later (duplicates);
 * - `purchase` events with a value: ~30% of units buy 1-5 times after their
 *   exposure, ~15% buy 1-2 times in the 7 days before it (the CUPED
 *   pre-period), and 200,000 purchases by units never exposed;
 * - `page.viewed`: 0-2 per exposed unit anywhere in the 21 days, 500,000 by
 *   units never exposed.
 * About 4M rows, appended in time order through `EventStore.append` in
 * 10,000-row batches (so the exposures table is kept by the append path
 * itself). The SQLite file is cached in a stable temp dir and the PostgreSQL
 * fill in its own database `bench_exp`, keyed by FILL_VERSION and the
 * store's schema, so re-runs do not refill.
 *
 * Timed (p50 of RUNS after one untimed first run): a count, a sum with a
 * 7-day CUPED pre-period, a ratio over two event names (the widest scan), a
 * filtered count, and exposureCounts. The expected sums are computed here in
 * TypeScript from the fill and every answer is compared (1e-9 relative).
 *
 * Last, the append path's cost of the exposures table: batches of 1,000
 * events appended to a fresh embedded store, without exposures and with 10%
 * exposures (best of 3); SVC_BENCH_EXP=analysis skips it.
 *
 * These figures are CPU-bound: each engine's part prints the load average
 * around its runs (the machine may be shared; SQLite splits an analysis over
 * one worker per CPU, so busy CPUs slow it the most).
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { PostgresEventStore } from "../src/lib/eventstore/postgres";
import { SqliteEventStore } from "../src/lib/eventstore/sqlite";
import type { EventRow, EventStore, ExperimentStatsQuery, Measure, VariantStats } from "../src/lib/eventstore/types";
import { exposureEventName } from "../src/sdk/experiments";
import {
  type Check,
  type Row,
  type Settings,
  type StoreFill,
  appendUs,
  cachedPostgresFill,
  cachedSqliteFill,
  percentile,
  postgresUrl,
  printChecks,
  prng,
  round,
  thousands,
  timed,
} from "./lib";

const TARGET_MS = 2000;
const RUNS = 5;
/** Bump when the fill below changes: a cached store of another version is refilled. */
const FILL_VERSION = "exp-fill-1";
const DAY_MS = 86_400_000;
const FILL = {
  projectId: "prj_bench_exp",
  experimentId: "exp_bench",
  /** 2026-10-01T00:00Z: exposures start here (a fixed window, so a cached fill stays valid). */
  start: Date.UTC(2026, 9, 1),
  days: 14,
  preDays: 7,
  units: 1_000_000,
  variants: ["control", "treatment"],
  repeatShare: 0.1,
  buyShare: 0.3,
  preBuyShare: 0.15,
  anonPurchases: 200_000,
  anonViews: 500_000,
  plans: ["free", "pro", "team"],
  appendRows: 10_000,
};
const END = FILL.start + FILL.days * DAY_MS;
const PRE_MS = FILL.preDays * DAY_MS;
const KIND = { exposure: 0, purchase: 1, view: 2 } as const;

/** The fill as columns: event i is `kind[i]` by unit `unit[i]` (>= FILL.units: never exposed) at `ts[i]`, in time order. */
type Fill = { kind: Uint8Array; unit: Int32Array; ts: Float64Array; value: Float64Array; plan: Uint8Array; first: Float64Array; variant: Uint8Array; order: Uint32Array };

function makeFill(): Fill {
  const rand = prng(2026);
  const U = FILL.units;
  const first = new Float64Array(U);
  const variant = new Uint8Array(U);
  for (let u = 0; u < U; u++) {
    first[u] = FILL.start + Math.floor(rand() * FILL.days * DAY_MS);
    variant[u] = rand() < 0.5 ? 0 : 1;
  }
  const kind: number[] = [];
  const unit: number[] = [];
  const ts: number[] = [];
  const value: number[] = [];
  const plan: number[] = [];
  const push = (k: number, u: number, t: number, v: number) => {
    kind.push(k);
    unit.push(u);
    ts.push(t);
    value.push(v);
    plan.push(Math.floor(rand() * FILL.plans.length));
  };
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo));
  for (let u = 0; u < U; u++) {
    const f = first[u]!;
    push(KIND.exposure, u, f, 0);
    if (rand() < FILL.repeatShare) push(KIND.exposure, u, between(f, END), 0);
    // The treatment converts a little more often (an effect for the analysis to find; the bench only times it).
    if (rand() < FILL.buyShare + (variant[u] === 1 ? 0.01 : 0)) for (let k = 1 + Math.floor(rand() * 5); k > 0; k--) push(KIND.purchase, u, between(f, END), round(5 + rand() * 200));
    if (rand() < FILL.preBuyShare) for (let k = 1 + Math.floor(rand() * 2); k > 0; k--) push(KIND.purchase, u, between(f - PRE_MS, f), round(5 + rand() * 200));
    for (let k = Math.floor(rand() * 3); k > 0; k--) push(KIND.view, u, between(FILL.start - PRE_MS, END), 0);
  }
  for (let i = 0; i < FILL.anonPurchases; i++) push(KIND.purchase, U + Math.floor(rand() * 300_000), between(FILL.start - PRE_MS, END), round(5 + rand() * 200));
  for (let i = 0; i < FILL.anonViews; i++) push(KIND.view, U + Math.floor(rand() * 300_000), between(FILL.start - PRE_MS, END), 0);
  const tsArr = Float64Array.from(ts);
  const order = new Uint32Array(tsArr.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort((a, b) => tsArr[a]! - tsArr[b]! || a - b);
  return { kind: Uint8Array.from(kind), unit: Int32Array.from(unit), ts: tsArr, value: Float64Array.from(value), plan: Uint8Array.from(plan), first, variant, order };
}

const EVENT_NAMES = [exposureEventName(FILL.experimentId), "purchase", "page.viewed"];
const unitName = (u: number) => (u < FILL.units ? `u-${u}` : `anon-${u - FILL.units}`);

/** The fill as EventRow batches in time order (`appendRows` each). */
function* fillBatches(f: Fill): Generator<EventRow[]> {
  let rows: EventRow[] = [];
  for (const i of f.order) {
    const k = f.kind[i]!;
    const u = f.unit[i]!;
    rows.push({
      projectId: FILL.projectId,
      name: EVENT_NAMES[k]!,
      ts: f.ts[i]!,
      unitId: unitName(u),
      value: k === KIND.purchase ? f.value[i]! : null,
      props: k === KIND.exposure ? { variant: FILL.variants[f.variant[u]!]! } : k === KIND.purchase ? { plan: FILL.plans[f.plan[i]!]!, currency: "EUR" } : { path: "/pricing" },
    });
    if (rows.length === FILL.appendRows) {
      yield rows;
      rows = [];
    }
  }
  if (rows.length) yield rows;
}

// ---------------------------------------------------------------- the cases and their expected answers

const purchaseCount: Measure = { kind: "count", event: "purchase", filters: [] };
const purchaseValue: Measure = { kind: "sum", event: "purchase", filters: [] };
const viewCount: Measure = { kind: "count", event: "page.viewed", filters: [] };
const proCount: Measure = { kind: "count", event: "purchase", filters: [{ property: "plan", op: "eq", value: "pro" }] };

/** Each case's measures; `contrib(measure index, event)` is what one event adds to a unit's value of that measure (null: nothing). */
const CASES: { key: string; label: string; measures: [Measure] | [Measure, Measure]; preMs?: number; contrib: (m: number, f: Fill, i: number) => number | null }[] = [
  { key: "count", label: "count of purchase", measures: [purchaseCount], contrib: (_m, f, i) => (f.kind[i] === KIND.purchase ? 1 : null) },
  {
    key: "sum cuped",
    label: "sum of purchase value, 7-day CUPED pre-period",
    measures: [purchaseValue],
    preMs: PRE_MS,
    contrib: (_m, f, i) => (f.kind[i] === KIND.purchase ? f.value[i]! : null),
  },
  {
    key: "ratio",
    label: "ratio: purchase value / page.viewed count (two names)",
    measures: [purchaseValue, viewCount],
    contrib: (m, f, i) => (m === 0 ? (f.kind[i] === KIND.purchase ? f.value[i]! : null) : f.kind[i] === KIND.view ? 1 : null),
  },
  { key: "count filtered", label: "count of purchase where plan = pro", measures: [proCount], contrib: (_m, f, i) => (f.kind[i] === KIND.purchase && f.plan[i] === 1 ? 1 : null) },
];

/** The per-variant sums a case should answer, from the fill's columns (the definition of ExperimentStatsQuery, in plain TypeScript). */
function expected(f: Fill, c: (typeof CASES)[number]): VariantStats[] {
  const U = FILL.units;
  const two = c.measures.length === 2;
  const pre = c.preMs !== undefined;
  const x = new Float64Array(U);
  const y = new Float64Array(U);
  const p = new Float64Array(U);
  // Units first exposed in the window (here every unit; the first exposure is `first` by construction).
  for (let i = 0; i < f.kind.length; i++) {
    const u = f.unit[i]!;
    if (u >= U) continue;
    const t = f.ts[i]!;
    const first = f.first[u]!;
    if (t >= END) continue;
    const inPost = t >= first;
    const inPre = pre && t < first && t >= first - c.preMs!;
    if (!inPost && !inPre) continue;
    for (let m = 0; m < c.measures.length; m++) {
      const v = c.contrib(m, f, i);
      if (v === null) continue;
      const target = inPost ? (m === 0 ? x : y) : m === 0 ? p : undefined;
      if (target) target[u] = c.measures[m]!.kind === "unique" ? 1 : target[u]! + v;
    }
  }
  return FILL.variants.map((name, vi) => {
    const s: VariantStats = { variant: name, n: 0, sumX: 0, sumXX: 0 };
    if (two) Object.assign(s, { sumY: 0, sumYY: 0, sumXY: 0 });
    if (pre) Object.assign(s, { sumPre: 0, sumPreSq: 0, sumXPre: 0 });
    for (let u = 0; u < U; u++) {
      if (f.variant[u] !== vi) continue;
      s.n++;
      s.sumX += x[u]!;
      s.sumXX += x[u]! * x[u]!;
      if (two) {
        s.sumY! += y[u]!;
        s.sumYY! += y[u]! * y[u]!;
        s.sumXY! += x[u]! * y[u]!;
      }
      if (pre) {
        s.sumPre! += p[u]!;
        s.sumPreSq! += p[u]! * p[u]!;
        s.sumXPre! += x[u]! * p[u]!;
      }
    }
    return s;
  });
}

/** Null when `got` matches `want` (every sum to 1e-9 relative), else what differs. */
function compare(got: VariantStats[], want: VariantStats[]): string | null {
  if (got.length !== want.length) return `${got.length} variants, expected ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    const g = got[i] as Record<string, unknown>;
    const w = want[i] as Record<string, unknown>;
    for (const key of Object.keys(w)) {
      const a = g[key];
      const b = w[key];
      if (typeof b === "string" ? a !== b : typeof a !== "number" || Math.abs(a - (b as number)) > 1e-9 * Math.max(1, Math.abs(b as number))) return `${w.variant} ${key}: ${a} ≠ ${b}`;
    }
    if (Object.keys(g).length !== Object.keys(w).length) return `${w.variant}: fields ${Object.keys(g).join(",")}`;
  }
  return null;
}

/** The 1-minute load average: the machine may be shared, and these figures are CPU-bound. */
function load(): number {
  return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
}

async function analysisSuite(engine: string, store: EventStore, f: Fill, rows: Row[], checks: Check[], figures: Record<string, number>): Promise<void> {
  console.log(`  ${engine}: load average ${load()} on ${availableParallelism()} CPUs before the runs`);
  for (const c of CASES) {
    const q: ExperimentStatsQuery = { projectId: FILL.projectId, experimentId: FILL.experimentId, from: FILL.start, to: END, measures: c.measures, ...(c.preMs === undefined ? {} : { preMs: c.preMs }) };
    const { first, samples, result } = await timed(() => store.experimentStats(q), RUNS);
    const problem = compare(result.variants, expected(f, c));
    const p50 = percentile(samples, 0.5);
    rows.push({ name: `${engine}: experimentStats, ${c.label}`, p50Ms: round(p50), p99Ms: round(Math.max(...samples)), requests: samples.length, failed: problem ? 1 : 0 });
    figures[`${engine} ${c.key} p50 ms`] = round(p50);
    console.log(`  ${engine}: ${c.label}: p50 ${round(p50)} ms, max ${round(Math.max(...samples))} ms over ${RUNS} runs (first run ${round(first)} ms)${problem ? `  WRONG: ${problem}` : ""}`);
    checks.push({ figure: `${engine}: experimentStats, ${c.label}, p50 of ${RUNS}`, value: p50, unit: "ms", target: `< ${TARGET_MS} ms`, met: problem ? false : p50 < TARGET_MS, note: `first run ${round(first)} ms${problem ? `; WRONG: ${problem}` : ""}` });
  }
  const { first, samples, result } = await timed(() => store.exposureCounts(FILL.projectId, FILL.experimentId), RUNS);
  const want = FILL.variants.map((variant, vi) => ({ variant, n: f.variant.reduce((n, v) => n + (v === vi ? 1 : 0), 0) }));
  const problem = JSON.stringify(result.variants) === JSON.stringify(want) ? null : `answered ${JSON.stringify(result.variants)}, expected ${JSON.stringify(want)}`;
  const p50 = percentile(samples, 0.5);
  rows.push({ name: `${engine}: exposureCounts`, p50Ms: round(p50), p99Ms: round(Math.max(...samples)), requests: samples.length, failed: problem ? 1 : 0 });
  figures[`${engine} exposureCounts p50 ms`] = round(p50);
  console.log(`  ${engine}: exposureCounts: p50 ${round(p50)} ms (first run ${round(first)} ms)${problem ? `  WRONG: ${problem}` : ""}`);
  checks.push({ figure: `${engine}: exposureCounts of ${thousands(FILL.units)} units, p50 of ${RUNS}`, value: p50, unit: "ms", target: `< ${TARGET_MS} ms`, met: problem ? false : p50 < TARGET_MS });
  figures[`${engine} load average after`] = load();
  console.log(`  ${engine}: load average ${load()} after the runs`);
}

async function sqliteAnalysis(fill: StoreFill, f: Fill, rows: Row[], checks: Check[], figures: Record<string, number>): Promise<void> {
  const { path, fillSeconds } = await cachedSqliteFill(fill);
  figures["SQLite fill seconds"] = round(fillSeconds, 1);
  const store = new SqliteEventStore(path);
  try {
    await analysisSuite("SQLite", store, f, rows, checks, figures);
  } finally {
    await store.close();
  }
}

async function postgresAnalysis(url: string, fill: StoreFill, f: Fill, rows: Row[], checks: Check[], figures: Record<string, number>): Promise<void> {
  const { dbUrl, fillSeconds } = await cachedPostgresFill(url, fill);
  figures["PostgreSQL fill seconds"] = round(fillSeconds, 1);
  const store = new PostgresEventStore(dbUrl);
  try {
    await analysisSuite("PostgreSQL", store, f, rows, checks, figures);
  } finally {
    await store.close();
  }
}

/** Microseconds per 1,000-event batch appended to a fresh embedded store (8 in flight, group commit), best of 3. */
async function appendCost(batches: EventRow[][]): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) best = Math.min(best, await appendUs(batches, 8));
  return best;
}

/** The append path with and without exposures among the events: what the exposures table costs ingest. */
async function appendSuite(checks: Check[], figures: Record<string, number>): Promise<void> {
  const now = Date.UTC(2026, 9, 10);
  const make = (exposureShare: number) => {
    const r = prng(7);
    return Array.from({ length: 300 }, (_, b) =>
      Array.from({ length: 1000 }, (_, i): EventRow => {
        const unitId = `user-${Math.floor(r() * 100_000)}`;
        const ts = now + b * 10 + Math.floor(r() * 10_000) - 10_000 + i;
        if (r() < exposureShare) return { projectId: FILL.projectId, name: exposureEventName(`exp_${Math.floor(r() * 5)}`), ts, unitId, value: null, props: { variant: r() < 0.5 ? "control" : "treatment" } };
        return { projectId: FILL.projectId, name: ["page.viewed", "button.clicked", "search.performed", "signup.started"][Math.floor(r() * 4)]!, ts, unitId, value: null, props: { path: "/pricing", device: "phone" } };
      }),
    );
  };
  const none = await appendCost(make(0));
  const tenth = await appendCost(make(0.1));
  const perSec = (us: number) => (1e6 * 1000) / us;
  console.log(`  append, SqliteEventStore, 300 batches of 1,000 events, 8 in flight: no exposures ${Math.round(none)} µs/batch (${thousands(perSec(none))} events/s), 10% exposures ${Math.round(tenth)} µs/batch (${thousands(perSec(tenth))} events/s)`);
  figures["append no exposures events/s"] = Math.round(perSec(none));
  figures["append 10% exposures events/s"] = Math.round(perSec(tenth));
  checks.push({ figure: "append to events.db, no exposures (in process)", value: perSec(none), unit: "events/s", target: "≥ 100,000", met: perSec(none) >= 100_000 });
  checks.push({ figure: "append to events.db, 10% exposures to 5 experiments (in process)", value: perSec(tenth), unit: "events/s", target: "≥ 100,000", met: perSec(tenth) >= 100_000 });
}

export async function runExperiments(_settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number>; checks: Check[] }> {
  const rows: Row[] = [];
  const checks: Check[] = [];
  const figures: Record<string, number> = {};
  const started = performance.now();
  const f = makeFill();
  const exposures = f.kind.reduce((n, k) => n + (k === KIND.exposure ? 1 : 0), 0);
  const purchases = f.kind.reduce((n, k) => n + (k === KIND.purchase ? 1 : 0), 0);
  console.log(
    `  fill: ${thousands(f.order.length)} rows (${thousands(exposures)} exposures of ${thousands(FILL.units)} units, ${thousands(purchases)} purchase, ${thousands(f.order.length - exposures - purchases)} page.viewed), generated in ${round((performance.now() - started) / 1000, 1)} s`,
  );
  const fill: StoreFill = { suite: "exp", version: FILL_VERSION, rows: f.order.length, batches: () => fillBatches(f) };
  await sqliteAnalysis(fill, f, rows, checks, figures);
  const pg = postgresUrl();
  if (pg) await postgresAnalysis(pg, fill, f, rows, checks, figures);
  else console.log("  PostgreSQL half skipped: pass --store postgres://USER@HOST:PORT/DB (or SVC_BENCH_PG); the bench creates and uses its own database bench_exp there");
  if (process.env.SVC_BENCH_EXP !== "analysis") await appendSuite(checks, figures);
  printChecks(checks);
  return { rows, figures, checks };
}
