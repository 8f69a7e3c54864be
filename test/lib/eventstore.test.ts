/**
 * The EventStore contract (src/lib/eventstore/types.ts), run unchanged
 * against every implementation there is: the embedded SQLite store, the
 * PostgreSQL store (a fresh database per test, when SVC_TEST_STORE names the
 * test cluster), and the spooling upstream store over each. Expected numbers
 * come from a plain JavaScript reference over the same rows, so the roll-up
 * plans, the raw plan and every engine are held to one answer. Engine
 * specifics (partitions, upstream errors, the spool's delivery) follow.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { PostgresEventStore, partitionName } from "../../src/lib/eventstore/postgres";
import { SpoolingEventStore } from "../../src/lib/eventstore/spool";
import { type EventRow, type EventStore, type Measure, type PropertyFilter, type SeriesQuery, UpstreamError } from "../../src/lib/eventstore/types";
import { TEST_PG_URL, dropStore, freshStoreUrl, tempDir } from "../helpers";

const SQLITE_FILE = join(import.meta.dir, "../../src/lib/eventstore/sqlite.ts");
const sqliteModule = existsSync(SQLITE_FILE) ? await import("../../src/lib/eventstore/sqlite") : undefined;
const newSqlite = (path: string): EventStore => new sqliteModule!.SqliteEventStore(path);
const DEAD_URL = "postgres://postgres@127.0.0.1:1/nowhere";

const DAY = 86400;
/** A UTC midnight ten days ago (epoch s): recent, so no partition is old enough to be dropped. */
const D0 = Math.floor(Date.now() / 1000 / DAY) * DAY - 10 * DAY;

type Harness = { store: EventStore; settle(): Promise<void>; close(): Promise<void> };
type Impl = { name: string; enabled: boolean; open(): Promise<Harness> };

async function harness(engine: "sqlite" | "postgres", wrap: boolean): Promise<Harness> {
  const dir = tempDir("svc-events-");
  const url = engine === "postgres" ? (await freshStoreUrl())! : undefined;
  const inner = url ? new PostgresEventStore(url, { upstream: wrap }) : newSqlite(join(dir, "events.db"));
  const store = wrap ? new SpoolingEventStore(inner, join(dir, "events-spool.db"), { drainEveryMs: 60_000 }) : inner;
  const settle = async () => (store instanceof SpoolingEventStore ? store.drain() : undefined);
  return { store, settle, close: () => store.close().then(() => dropStore(url)) };
}

const IMPLS: Impl[] = [
  { name: "sqlite", enabled: sqliteModule !== undefined, open: () => harness("sqlite", false) },
  { name: "spool over sqlite", enabled: sqliteModule !== undefined, open: () => harness("sqlite", true) },
  { name: "postgres", enabled: TEST_PG_URL !== "", open: () => harness("postgres", false) },
  { name: "spool over postgres", enabled: TEST_PG_URL !== "", open: () => harness("postgres", true) },
];

const newProject = () => `prj_${crypto.randomUUID().slice(0, 8)}`;

function ev(projectId: string, name: string, tsSeconds: number, extra: Partial<EventRow> = {}): EventRow {
  return { projectId, name, ts: Math.round(tsSeconds * 1000), unitId: null, value: null, props: null, ...extra };
}

/** What a filter means: the property holds a value of the filter's type, compared (booleans as 0/1, text code-wise). */
function matches(props: EventRow["props"], f: PropertyFilter): boolean {
  const v = props?.[f.property];
  if (v === undefined || typeof v !== typeof f.value) return false;
  const a = typeof v === "boolean" ? Number(v) : v;
  const b = typeof f.value === "boolean" ? Number(f.value) : f.value;
  return { eq: a === b, neq: a !== b, gt: a > b, gte: a >= b, lt: a < b, lte: a <= b }[f.op];
}

/** The reference answer of a series over `rows`, in plain JavaScript. */
function reference(rows: EventRow[], q: SeriesQuery): number[] {
  const n = Math.ceil((q.to - q.from) / q.bucket);
  const out = new Array<number>(n).fill(0);
  const units = Array.from({ length: n }, () => new Set<string>());
  const m = q.measure;
  for (const r of rows) {
    if (r.projectId !== q.projectId || r.name !== m.event || r.ts < q.from * 1000 || r.ts >= q.to * 1000) continue;
    if (!m.filters.every((f) => matches(r.props, f))) continue;
    const k = Math.floor((Math.floor(r.ts / 1000) - q.from) / q.bucket);
    if (m.kind === "count") out[k]!++;
    else if (m.kind === "unique") {
      if (r.unitId !== null) units[k]!.add(r.unitId);
    } else if (m.property === undefined) out[k]! += r.value ?? 0;
    else {
      const v = r.props?.[m.property];
      if (typeof v === "number") out[k]! += v;
    }
  }
  return m.kind === "unique" ? units.map((s) => s.size) : out;
}

const query = (projectId: string, from: number, to: number, bucket: number, measure: Measure): SeriesQuery => ({ projectId, from, to, bucket, measure });
const count = (event: string, filters: PropertyFilter[] = []): Measure => ({ kind: "count", event, filters });
const unique = (event: string, filters: PropertyFilter[] = []): Measure => ({ kind: "unique", event, filters });
const sum = (event: string, property?: string, filters: PropertyFilter[] = []): Measure => ({ kind: "sum", event, property, filters });
/** A filter every test row passes: forces the raw plan over the same buckets. */
const ALL: PropertyFilter = { property: "always", op: "eq", value: true };

async function expectUpstreamError(call: Promise<unknown>, kind: UpstreamError["kind"]): Promise<void> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(UpstreamError);
  expect((err as UpstreamError).kind).toBe(kind);
}
/** The value of a series' first bucket. */
const first = async (store: EventStore, q: SeriesQuery) => (await store.series(q)).rows[0]!.v;

function expectClose(actual: number[], expected: number[]): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 6));
}

/**
 * 3,000 units of "open" over six days from D0, each seen on one to three days (more than once on some), with ids
 * of several shapes (digits, hex, non-ASCII) so slice boundaries fall between byte orders; one event without a
 * unit and one of another name.
 */
function severalDaysOfUnits(p: string): EventRow[] {
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const rows: EventRow[] = [];
  for (let u = 0; u < 3000; u++) {
    const unitId = [`member-${u}`, (u * 2_654_435_761).toString(16), `Ülkü-${u}`][u % 3]!;
    for (let seen = 1 + Math.floor(next() * 3); seen > 0; seen--) rows.push(ev(p, "open", D0 + Math.floor(next() * 6 * DAY), { unitId }));
  }
  rows.push(ev(p, "open", D0 + 100), ev(p, "other", D0 + 200, { unitId: "member-1" }));
  return rows;
}

/** Windows over those days: one bucket, buckets of two and four days (the last partial), a bucket past the window, an empty window. */
const severalDaysWindows = (p: string) =>
  ([[D0, D0 + 6 * DAY, 6 * DAY], [D0, D0 + 6 * DAY, 2 * DAY], [D0, D0 + 6 * DAY, 4 * DAY], [D0 + DAY, D0 + 5 * DAY, 30 * DAY], [D0 - 2 * DAY, D0, 2 * DAY]] as const).map(
    ([from, to, bucket]) => query(p, from, to, bucket, unique("open")),
  );

for (const impl of IMPLS) {
  describe.skipIf(!impl.enabled)(`EventStore contract: ${impl.name}`, () => {
    let h: Harness;
    beforeEach(async () => {
      h = await impl.open();
    });
    afterEach(async () => {
      await h.close();
    });
    const put = async (rows: EventRow[]) => {
      await h.store.append(rows);
      await h.settle();
    };
    const values = async (q: SeriesQuery) => (await h.store.series(q)).rows.map((r) => r.v);

    test("counts per bucket, every bucket present, empty ones zero", async () => {
      const p = newProject();
      await put([ev(p, "signup", D0 + 1800), ev(p, "signup", D0 + 1900.5), ev(p, "signup", D0 + 2 * 3600 + 600)]);
      const hourly = await h.store.series(query(p, D0, D0 + 4 * 3600, 3600, count("signup")));
      expect(hourly.rows).toEqual([2, 0, 1, 0].map((v, k) => ({ t: D0 + k * 3600, v })));
      expect(hourly.sql).toContain("event_hourly");
      // An unaligned start: raw plan, buckets start at `from`.
      const raw = await h.store.series(query(p, D0 + 1800, D0 + 3 * 3600 + 1800, 3600, count("signup")));
      expect(raw.sql).toMatch(/FROM events\b/);
      expect(raw.rows).toEqual([2, 1, 0].map((v, k) => ({ t: D0 + 1800 + k * 3600, v })));
      // A window ending inside its last bucket still answers that bucket.
      expect(await values(query(p, D0, D0 + 5000, 3600, count("signup")))).toEqual([2, 0]);
      expect(await values(query(p, D0 + 7200, D0 + 7200 + 60, 60, count("signup")))).toEqual([0]);
      expect(await values(query(p, D0, D0 + 3600, 3600, count("other")))).toEqual([0]);
    });

    test("roll-up and raw plans give the same numbers, aligned or not", async () => {
      const p = newProject();
      const rows: EventRow[] = [];
      for (let i = 0; i < 600; i++) {
        const value = i % 5 === 0 ? null : (i % 7) - 2.25;
        rows.push(ev(p, "view", D0 + ((i * 7919) % (2 * DAY)) + (i % 10) / 10, { value, unitId: `u${i % 17}`, props: { always: true, k: i % 3 } }));
      }
      await put(rows);
      for (const bucket of [3600, 7200, DAY, 2 * DAY]) {
        for (const measure of [count("view"), sum("view")]) {
          const q = query(p, D0, D0 + 2 * DAY, bucket, measure);
          const rollup = await h.store.series(q);
          expect(rollup.sql).toContain("event_hourly");
          const raw = await h.store.series({ ...q, measure: { ...measure, filters: [ALL] } });
          expect(raw.sql).toMatch(/FROM events\b/);
          expectClose(rollup.rows.map((r) => r.v), reference(rows, q));
          expectClose(raw.rows.map((r) => r.v), reference(rows, q));
        }
      }
      for (const q of [query(p, D0 + 900, D0 + 2 * DAY - 900, 3600, count("view")), query(p, D0 - 3600, D0 + DAY + 1, 5000, sum("view"))]) {
        const r = await h.store.series(q);
        expect(r.sql).toMatch(/FROM events\b/);
        expectClose(r.rows.map((x) => x.v), reference(rows, q));
      }
    });

    test("sum of the value and of a property; non-numeric values are ignored", async () => {
      const p = newProject();
      const rows = [
        ev(p, "buy", D0 + 10, { value: 1.5, props: { amount: 10 } }),
        ev(p, "buy", D0 + 20, { value: 2.5, props: { amount: "abc" } }),
        ev(p, "buy", D0 + 30, { value: null, props: { amount: 5.25 } }),
        ev(p, "buy", D0 + 40, { props: { amount: true } }),
        ev(p, "buy", D0 + 50, { props: { other: 99 } }),
        ev(p, "buy", D0 + 60),
      ];
      await put(rows);
      expect(await values(query(p, D0, D0 + 3600, 3600, sum("buy")))).toEqual([4]);
      expect(await values(query(p, D0, D0 + 3600, 3600, sum("buy", undefined, [{ property: "amount", op: "eq", value: 10 }])))).toEqual([1.5]);
      expect(await values(query(p, D0, D0 + 3600, 3600, sum("buy", "amount")))).toEqual([15.25]);
      expect(await values(query(p, D0, D0 + 7200, 1800, sum("buy", "amount")))).toEqual([15.25, 0, 0, 0]);
      expect(await values(query(p, D0, D0 + 3600, 3600, sum("buy", "missing")))).toEqual([0]);
    });

    test("unique units: the daily plan and the raw plan agree", async () => {
      const p = newProject();
      const seen: [number, string | null][] = [[100, "u1"], [200, "u1"], [300, "u2"], [400, null], [DAY + 100, "u2"], [DAY + 50_000, "u3"], [3 * DAY, "u9"]];
      const rows = seen.map(([at, unitId]) => ev(p, "open", D0 + at, { unitId, props: { always: true } }));
      await put(rows);
      for (const bucket of [DAY, 2 * DAY, 3 * DAY]) {
        const q = query(p, D0, D0 + 3 * DAY, bucket, unique("open"));
        const daily = await h.store.series(q);
        expect(daily.sql).toContain("event_units_daily");
        const raw = await h.store.series({ ...q, measure: unique("open", [ALL]) });
        expect(raw.sql).toMatch(/FROM events\b/);
        expect(daily.rows.map((r) => r.v)).toEqual(reference(rows, q));
        expect(raw.rows.map((r) => r.v)).toEqual(reference(rows, q));
      }
      expect(await values(query(p, D0, D0 + 3 * DAY, DAY, unique("open")))).toEqual([2, 2, 0]);
      expect(await values(query(p, D0, D0 + 2 * DAY, 2 * DAY, unique("open")))).toEqual([3]);
      const q = query(p, D0 + 3600, D0 + 2 * DAY, 12 * 3600, unique("open"));
      expect(await values(q)).toEqual(reference(rows, q));
    });

    test("unique units over several days: thousands of units (sliced across the analysis workers) agree with the raw plan", async () => {
      const p = newProject();
      const rows = severalDaysOfUnits(p);
      await put(rows);
      for (const q of severalDaysWindows(p)) {
        const r = await h.store.series(q);
        expect(r.sql).toContain("event_units_daily");
        expect(r.rows.map((x) => x.v)).toEqual(reference(rows, q));
      }
      expect(await values(query(p, D0, D0 + 6 * DAY, 6 * DAY, unique("open")))).toEqual([3000]);
    });

    test("each filter operator on strings, numbers and booleans; other types never match", async () => {
      const p = newProject();
      const rows = [
        ev(p, "e", D0 + 1, { props: { plan: "pro", n: 1, beta: true } }),
        ev(p, "e", D0 + 2, { props: { plan: "free", n: 5, beta: false } }),
        ev(p, "e", D0 + 3, { props: { plan: "pro", n: 10, beta: false } }),
        ev(p, "e", D0 + 4, { props: { plan: 7, n: "3", beta: "true" } }),
        ev(p, "e", D0 + 5, { props: { plan: "Pro", n: 2.5, beta: true } }),
        ev(p, "e", D0 + 6, { props: { n: "abc" } }),
        ev(p, "e", D0 + 7),
      ];
      await put(rows);
      const cases: [string, PropertyFilter["value"]][] = [["plan", "pro"], ["plan", "free"], ["plan", "Pro"], ["n", 5], ["n", 2.5], ["n", 3], ["beta", true], ["beta", false]];
      for (const [property, value] of cases) {
        for (const op of ["eq", "neq", "gt", "gte", "lt", "lte"] as const) {
          const filters = [{ property, op, value }];
          const q = query(p, D0, D0 + 3600, 3600, count("e", filters));
          expect({ property, op, value, v: await values(q) }).toEqual({ property, op, value, v: reference(rows, q) });
        }
      }
      expect(await values(query(p, D0, D0 + 3600, 3600, count("e", [{ property: "n", op: "gt", value: 0 }])))).toEqual([4]);
      expect(await values(query(p, D0, D0 + 3600, 3600, count("e", [{ property: "plan", op: "eq", value: "pro" }, { property: "n", op: "gte", value: 5 }])))).toEqual([1]);
      expect(await values(query(p, D0, D0 + 3600, 3600, count("e", [{ property: "beta", op: "neq", value: true }])))).toEqual([2]);
    });

    test("a name, a unit or a property holding quotes and SQL is just data", async () => {
      const p = newProject();
      const name = `it's "quoted"; DROP TABLE events; --`;
      const prop = "a.b:$c-d";
      const value = `x'); DELETE FROM events; -- "`;
      await put([
        ev(p, name, D0 + 10, { unitId: `u'1"`, props: { [prop]: value, "q'": 1 } }),
        ev(p, name, D0 + 20, { unitId: "u2", props: { [prop]: "plain" } }),
        ev(p, "plain", D0 + 30),
      ]);
      expect(await values(query(p, D0, D0 + 3600, 3600, count(name)))).toEqual([2]);
      expect(await values(query(p, D0, D0 + 3600, 3600, count(name, [{ property: prop, op: "eq", value }])))).toEqual([1]);
      expect(await values(query(p, D0, D0 + DAY, DAY, unique(name)))).toEqual([2]);
      expect(await values(query(p, D0, D0 + 3600, 3600, unique(name, [{ property: prop, op: "neq", value }])))).toEqual([1]);
      expect(await values(query(p, D0, D0 + 3600, 3600, count(name, [{ property: "x' OR '1'='1", op: "eq", value: "' OR ''='" }])))).toEqual([0]);
      expect(await values(query(p, D0, D0 + 3600, 3600, count("plain")))).toEqual([1]);
    });

    test("concurrent appends (50 x 100 rows) all land exactly once", async () => {
      const p = newProject();
      const row = (b: number, i: number) => ev(p, "tick", D0 + ((b * 100 + i) % 7200), { unitId: `u${b}`, value: 1, props: { always: true } });
      const batches = Array.from({ length: 50 }, (_, b) => Array.from({ length: 100 }, (_, i) => row(b, i)));
      await Promise.all(batches.map((rows) => h.store.append(rows)));
      await h.settle();
      expect(await values(query(p, D0, D0 + 7200, 7200, count("tick")))).toEqual([5000]);
      expect(await values(query(p, D0, D0 + 7200, 7200, count("tick", [ALL])))).toEqual([5000]);
      expect(await values(query(p, D0, D0 + 7200, 3600, sum("tick")))).toEqual(reference(batches.flat(), query(p, D0, D0 + 7200, 3600, sum("tick"))));
      expect(await values(query(p, D0, D0 + DAY, DAY, unique("tick")))).toEqual([50]);
    });

    test("prune removes only that project's old raw rows; roll-ups go only with rollupsBefore", async () => {
      const p = newProject();
      const q = newProject();
      await put([
        ...[1, 2, 3].map((i) => ev(p, "e", D0 + i, { unitId: `u${i}`, props: { always: true } })),
        ...[1, 2].map((i) => ev(p, "e", D0 + 5 * DAY + i, { unitId: `u${i}`, props: { always: true } })),
        ...[1, 2, 3, 4].map((i) => ev(q, "e", D0 + i, { unitId: `u${i}`, props: { always: true } })),
      ]);
      const cutoff = (D0 + DAY) * 1000;
      expect(await h.store.prune({ projectId: p, rawBefore: cutoff })).toBe(3);
      const raw = (projectId: string) => values(query(projectId, D0, D0 + 6 * DAY, DAY, count("e", [ALL])));
      expect(await raw(p)).toEqual([0, 0, 0, 0, 0, 2]);
      expect(await raw(q)).toEqual([4, 0, 0, 0, 0, 0]);
      const hourly = (projectId: string) => values(query(projectId, D0, D0 + 6 * DAY, DAY, count("e")));
      expect(await hourly(p)).toEqual([3, 0, 0, 0, 0, 2]);
      // Units per day follow the project's raw cutoff.
      expect(await values(query(p, D0, D0 + 6 * DAY, DAY, unique("e")))).toEqual([0, 0, 0, 0, 0, 2]);
      expect(await values(query(q, D0, D0 + 6 * DAY, DAY, unique("e")))).toEqual([4, 0, 0, 0, 0, 0]);
      // Roll-ups older than rollupsBefore go for every project.
      expect(await h.store.prune({ projectId: p, rawBefore: cutoff, rollupsBefore: cutoff })).toBe(0);
      expect(await hourly(p)).toEqual([0, 0, 0, 0, 0, 2]);
      expect(await hourly(q)).toEqual([0, 0, 0, 0, 0, 0]);
      expect(await raw(q)).toEqual([4, 0, 0, 0, 0, 0]);
    });

    test("events of other projects never leak into a series", async () => {
      const p = newProject();
      const q = newProject();
      await put([
        ev(p, "e", D0 + 10, { unitId: "shared", value: 1, props: { always: true, x: 1 } }),
        ev(q, "e", D0 + 10, { unitId: "shared", value: 100, props: { always: true, x: 1 } }),
        ev(q, "e", D0 + 20, { unitId: "other", value: 100, props: { always: true, x: 1 } }),
      ]);
      for (const measure of [count("e"), sum("e"), unique("e"), count("e", [ALL]), sum("e", "x"), unique("e", [ALL])]) {
        const bucket = measure.kind === "unique" ? DAY : 3600;
        expect(await values(query(p, D0, D0 + bucket, bucket, measure))).toEqual([1]);
      }
      expect(await values(query(newProject(), D0, D0 + DAY, DAY, count("e")))).toEqual([0]);
    });
  });
}

describe.skipIf(!sqliteModule)("SqliteEventStore: unique units over several days in slices", () => {
  test("three workers count three slices of the units (the middle one bounded both ways); the answers are the raw plan's", async () => {
    const store = new sqliteModule!.SqliteEventStore(join(tempDir("svc-events-"), "events.db"), { analysisWorkers: 3 });
    try {
      const p = newProject();
      const rows = severalDaysOfUnits(p);
      await store.append(rows);
      for (const q of severalDaysWindows(p)) {
        const r = await store.series(q);
        const empty = q.to <= D0;
        // The first slice's statement: below the first boundary. An empty window reads only where the units are.
        expect(r.sql).toContain(empty ? "MAX(day)" : "unit_id < ?7");
        expect(r.rows.map((x) => x.v)).toEqual(reference(rows, q));
      }
    } finally {
      await store.close();
    }
  });

  test("units spread over more days than it lists are counted from one range of days, unsliced, with the same answer", async () => {
    const store = new sqliteModule!.SqliteEventStore(join(tempDir("svc-events-"), "events.db"), { analysisWorkers: 3 });
    try {
      const p = newProject();
      const old = D0 - 1200 * DAY;
      const rows = [ev(p, "open", old + 10, { unitId: "a" }), ev(p, "open", old + DAY, { unitId: "b" }), ev(p, "open", D0 + 5, { unitId: "a" }), ev(p, "open", D0 + 7, { unitId: "c" })];
      await store.append(rows);
      for (const bucket of [1300 * DAY, 600 * DAY]) {
        const q = query(p, old, D0 + DAY, bucket, unique("open"));
        const r = await store.series(q);
        expect(r.sql).toContain("day >= ?1 AND day < ?5");
        expect(r.sql).not.toContain("unit_id <");
        expect(r.rows.map((x) => x.v)).toEqual(reference(rows, q));
      }
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!TEST_PG_URL)("PostgresEventStore specifics", () => {
  const urls: string[] = [];
  const stores: EventStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close().catch(() => {});
    for (const u of urls.splice(0)) await dropStore(u);
  });
  async function fresh(options: ConstructorParameters<typeof PostgresEventStore>[1] = {}) {
    const url = (await freshStoreUrl())!;
    urls.push(url);
    const store = new PostgresEventStore(url, options);
    stores.push(store);
    const admin = new SQL({ url, max: 1 });
    return { url, store, admin };
  }
  const partitions = async (admin: SQL) =>
    ((await admin.unsafe("SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = CAST('events' AS regclass) ORDER BY 1")) as { name: string }[]).map((r) => r.name);

  test("one partition per UTC day, made on demand by concurrent servers; old ones dropped by prune", async () => {
    const { url, store, admin } = await fresh();
    const other = new PostgresEventStore(url);
    stores.push(other);
    const p = newProject();
    const days = [0, 1, 2, 3].map((d) => D0 + d * DAY);
    await Promise.all(days.flatMap((d) => [store.append([ev(p, "e", d + 5)]), other.append([ev(p, "e", d + 7)])]));
    expect(await partitions(admin)).toEqual(days.map((d) => partitionName(d * 1000)));
    expect(partitionName(Date.UTC(2025, 0, 31, 13))).toBe("events_d20250131");
    const ancient = Math.floor(Date.now() / 1000 / DAY) * DAY - 500 * DAY;
    await store.append([ev(p, "e", ancient + 1), ev("prj_other", "e", ancient + 2)]);
    expect(await partitions(admin)).toContain(partitionName(ancient * 1000));
    expect(await store.prune({ projectId: p, rawBefore: (D0 + DAY) * 1000 })).toBe(3);
    expect(await partitions(admin)).not.toContain(partitionName(ancient * 1000));
    // A server that still believed in the dropped partition makes it again.
    await other.append([ev(p, "e", ancient + 3)]);
    expect(await first(other, query(p, ancient + 1, ancient + DAY, DAY, count("e")))).toBe(1);
    expect((await admin.unsafe("SELECT COUNT(*)::int AS n FROM events"))[0].n).toBe(7);
    await admin.close();
  });

  test("text PostgreSQL cannot hold is made safe and never fails the rows it shares a commit with", async () => {
    const { store, admin } = await fresh();
    const p = newProject();
    await Promise.all([
      store.append([ev(p, "ok", D0 + 1)]),
      store.append([ev(p, "nul\u0000name", D0 + 2, { unitId: "u\u0000", props: { "k\u0000": "v\u0000\ud800" } })]),
    ]);
    expect(await first(store, query(p, D0, D0 + 3600, 3600, count("nul\u0000name")))).toBe(1);
    expect((await admin.unsafe("SELECT COUNT(*)::int AS n FROM events"))[0].n).toBe(2);
    // A row no store can take fails its own call only.
    await expect(store.append([ev(p, "bad", Number.NaN)])).rejects.toThrow(RangeError);
    await admin.close();
  });

  test("upstream: unreachable, failed (statement timeout, query error); not upstream: errors pass through", async () => {
    const dead = new PostgresEventStore(DEAD_URL, { upstream: true, timeoutMs: 2000 });
    stores.push(dead);
    const q = query("p", D0, D0 + 3600, 3600, count("e"));
    await expectUpstreamError(dead.series(q), "unreachable");
    await expectUpstreamError(dead.append([ev("p", "e", D0)]), "unreachable");
    await expectUpstreamError(dead.prune({ projectId: "p", rawBefore: 0 }), "unreachable");

    const { store, admin, url } = await fresh({ upstream: true, timeoutMs: 300 });
    await store.append([ev("p", "e", D0 + 1)]);
    // Another session holds the roll-up table: the statement is cancelled at timeoutMs.
    const locker = new SQL({ url, max: 1 });
    const reserved = await locker.reserve();
    await reserved.unsafe("BEGIN");
    await reserved.unsafe("LOCK TABLE event_hourly IN ACCESS EXCLUSIVE MODE");
    const started = performance.now();
    await expectUpstreamError(store.series(q), "failed");
    expect(performance.now() - started).toBeLessThan(3000);
    await reserved.unsafe("ROLLBACK");
    reserved.release();
    await locker.close();
    expect(await first(store, q)).toBe(1);

    const plain = new PostgresEventStore(url);
    stores.push(plain);
    await plain.series(q);
    await admin.unsafe("ALTER TABLE event_hourly RENAME TO event_hourly_gone");
    await expectUpstreamError(store.series(q), "failed");
    const raw = await plain.series(q).catch((e) => e);
    expect(raw).not.toBeInstanceOf(UpstreamError);
    expect(raw.errno).toBe("42P01");
    await admin.close();
  });
});

describe("SpoolingEventStore delivery", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  /** A working upstream: PostgreSQL when the test cluster is there, else the SQLite store. */
  async function working(): Promise<EventStore | undefined> {
    if (TEST_PG_URL) {
      const url = (await freshStoreUrl())!;
      cleanups.push(() => dropStore(url));
      return new PostgresEventStore(url, { upstream: true });
    }
    return sqliteModule ? newSqlite(join(tempDir("svc-events-"), "events.db")) : undefined;
  }
  const total = (s: EventStore, p: string) => first(s, query(p, D0, D0 + DAY, DAY, count("e", [{ property: "i", op: "gte", value: 0 }])));

  test("with the upstream down, append still resolves and series is unreachable; a working upstream then gets every row once", async () => {
    const spoolPath = join(tempDir("svc-spool-"), "events-spool.db");
    const down = new SpoolingEventStore(new PostgresEventStore(DEAD_URL, { upstream: true, timeoutMs: 2000 }), spoolPath, { drainEveryMs: 20 });
    const p = newProject();
    await Promise.all(Array.from({ length: 30 }, (_, b) => down.append(Array.from({ length: 100 }, (_, i) => ev(p, "e", D0 + b * 100 + i, { props: { i } })))));
    expect(down.pending()).toBe(3000);
    await expectUpstreamError(down.series(query(p, D0, D0 + DAY, DAY, count("e"))), "unreachable");
    await Bun.sleep(100);
    expect(down.lastError).toBeInstanceOf(UpstreamError);
    expect(down.pending()).toBe(3000);
    await down.close();

    const upstream = await working();
    if (!upstream) return;
    const up = new SpoolingEventStore(upstream, spoolPath, { drainEveryMs: 20 });
    cleanups.push(() => up.close());
    expect(up.pending()).toBe(3000);
    const deadline = performance.now() + 10_000;
    while (up.pending() > 0 && performance.now() < deadline) await Bun.sleep(20);
    expect(up.pending()).toBe(0);
    await up.drain();
    expect(await total(up, p)).toBe(3000);
  });

  test("batches of at most batchSize; a failed batch stays spooled and is sent again, no loss, no duplicates", async () => {
    const upstream = await working();
    if (!upstream) return;
    const sizes: number[] = [];
    let failNext = false;
    // The upstream, counting batch sizes, and failing once when told to.
    const flaky: EventStore = {
      ...{ kind: "upstream", location: upstream.location, close: () => upstream.close() },
      ...{ series: (q) => upstream.series(q), prune: (o) => upstream.prune(o) },
      ...{ experimentStats: (q) => upstream.experimentStats(q), exposureCounts: (p, e) => upstream.exposureCounts(p, e) },
      append: async (rows) => {
        if (failNext) {
          failNext = false;
          throw new UpstreamError("failed", "injected");
        }
        sizes.push(rows.length);
        await upstream.append(rows);
      },
    };
    const errors: unknown[] = [];
    const spool = new SpoolingEventStore(flaky, join(tempDir("svc-spool-"), "events-spool.db"), { drainEveryMs: 60_000, batchSize: 5000, onError: (e) => errors.push(e) });
    cleanups.push(() => spool.close());
    const p = newProject();
    await spool.append(Array.from({ length: 12_000 }, (_, i) => ev(p, "e", D0 + (i % DAY), { props: { i } })));
    expect(spool.pending()).toBe(12_000);
    await spool.drain();
    expect(sizes).toEqual([5000, 5000, 2000]);
    expect(spool.pending()).toBe(0);
    expect(await total(spool, p)).toBe(12_000);

    sizes.length = 0;
    await spool.append([ev(p, "e", D0 + 5, { props: { i: 1 } }), ev(p, "e", D0 + 6, { props: { i: 2 } })]);
    failNext = true;
    await expect(spool.drain()).rejects.toThrow("injected");
    expect(errors.length).toBe(1);
    expect(spool.lastError).toBeInstanceOf(UpstreamError);
    expect(spool.pending()).toBe(2);
    await spool.drain();
    expect(spool.lastError).toBeUndefined();
    expect(sizes).toEqual([2]);
    expect(spool.pending()).toBe(0);
    expect(await total(spool, p)).toBe(12_002);
    await spool.drain();
    expect(sizes).toEqual([2]);
  });

  test("spooled rows survive a SIGKILL of the process right after append resolved", async () => {
    const dir = tempDir("svc-spool-");
    const spoolPath = join(dir, "events-spool.db");
    const script = join(dir, "child.ts");
    const p = newProject();
    await Bun.write(
      script,
      `import { SpoolingEventStore } from ${JSON.stringify(join(import.meta.dir, "../../src/lib/eventstore/spool.ts"))};
import { PostgresEventStore } from ${JSON.stringify(join(import.meta.dir, "../../src/lib/eventstore/postgres.ts"))};
const s = new SpoolingEventStore(new PostgresEventStore(${JSON.stringify(DEAD_URL)}, { upstream: true }), ${JSON.stringify(spoolPath)}, { drainEveryMs: 60000 });
await Promise.all([0, 1, 2].map((b) => s.append(Array.from({ length: 100 }, (_, i) => ({ projectId: ${JSON.stringify(p)}, name: "e", ts: ${D0 * 1000} + b * 100000 + i, unitId: null, value: null, props: { i } })))));
require("node:fs").writeFileSync(${JSON.stringify(join(dir, "appended"))}, "yes");
process.kill(process.pid, "SIGKILL");
`,
    );
    const child = Bun.spawnSync([process.execPath, script], { stdout: "pipe", stderr: "pipe" });
    expect(existsSync(join(dir, "appended"))).toBe(true);
    expect(child.signalCode).toBe("SIGKILL");
    const upstream = await working();
    if (!upstream) return;
    const spool = new SpoolingEventStore(upstream, spoolPath, { drainEveryMs: 60_000 });
    cleanups.push(() => spool.close());
    expect(spool.pending()).toBe(300);
    await spool.drain();
    expect(await total(spool, p)).toBe(300);
  });
});
