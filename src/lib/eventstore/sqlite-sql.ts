/** The statements of the SQLite event store's reads: series, experiment analysis and the pieces they share with sqlite-many.ts. */
import {
  type ExperimentStatsQuery,
  type Measure,
  type PropertyFilter,
  type SeriesQuery,
  type VariantStats,
  SUM_COLUMNS,
  addShiftedRows,
  type VariantStatsRow,
  variantStatsOf,
} from "./types";
import { type ExperimentDialect, experimentParts, namePrefix } from "./plan";


/** A JSON path for one property name: `$."name"` (names never hold a double quote: ingest refuses them). */
export function jsonPath(property: string): string {
  return `$."${property.replaceAll('"', "")}"`;
}

function filterSql(filter: PropertyFilter, params: (string | number)[]): string {
  const ops = { eq: "=", neq: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;
  params.push(jsonPath(filter.property));
  const value = typeof filter.value === "boolean" ? (filter.value ? 1 : 0) : filter.value;
  params.push(value);
  // json_extract answers numbers as numbers and strings as text; SQLite orders a number below any text, so a
  // string stored where a number is compared never matches `>`-style filters by accident: the type check makes it explicit.
  const typeCheck =
    typeof filter.value === "number"
      ? `json_type(props, ?${params.length - 1}) IN ('integer', 'real')`
      : typeof filter.value === "boolean"
        ? `json_type(props, ?${params.length - 1}) IN ('true', 'false')`
        : `json_type(props, ?${params.length - 1}) = 'text'`;
  if (filter.op === "neq") return `(${typeCheck} AND json_extract(props, ?${params.length - 1}) <> ?${params.length})`;
  return `(${typeCheck} AND json_extract(props, ?${params.length - 1}) ${ops[filter.op]} ?${params.length})`;
}

/** The raw-table statement of a measure: bucket index and value per group, everything bound. */
export function rawSql(q: SeriesQuery, measure: Measure): { sql: string; params: (string | number)[] } {
  // ?1 from (s), ?2 bucket (s), ?3 project, ?4 event, ?5 from (ms), ?6 to (ms), ?7 and ?8 the hours they fall in, then the measure's own.
  const params: (string | number)[] = [q.from, q.bucket, q.projectId, measure.event, q.from * 1000, q.to * 1000, Math.floor(q.from / 3600), Math.floor((q.to * 1000 - 1) / 3_600_000)];
  let aggregate: string;
  const where: string[] = [];
  if (measure.kind === "count") aggregate = "COUNT(*)";
  else if (measure.kind === "unique") {
    aggregate = "COUNT(DISTINCT unit_id)";
  } else if (measure.property === undefined) aggregate = "TOTAL(value)";
  else {
    params.push(jsonPath(measure.property));
    const p = params.length;
    aggregate = `TOTAL(CASE WHEN json_type(props, ?${p}) IN ('integer', 'real') THEN json_extract(props, ?${p}) END)`;
  }
  for (const f of measure.filters) where.push(filterSql(f, params));
  const sql =
    `SELECT (ts / 1000 - ?1) / ?2 AS b, ${aggregate} AS v FROM events WHERE project_id = ?3 AND name = ?4 AND hour BETWEEN ?7 AND ?8 AND ts >= ?5 AND ts < ?6` +
    (where.length ? ` AND ${where.join(" AND ")}` : "") +
    " GROUP BY b";
  return { sql, params };
}

/** One measure's value per unit over the rows where `cond` holds (all rows when empty): count, sum (non-numeric as 0) or 0/1. */
function unitValue(m: Measure, cond: string[], params: (string | number)[]): string {
  const c = cond.join(" AND ");
  if (m.kind === "count") return c ? `SUM(CASE WHEN ${c} THEN 1 ELSE 0 END)` : "COUNT(*)";
  if (m.kind === "unique") return c ? `MAX(CASE WHEN ${c} THEN 1 ELSE 0 END)` : "1";
  let v = "e.value";
  if (m.property !== undefined) {
    params.push(jsonPath(m.property));
    const p = params.length;
    v = `CASE WHEN json_type(e.props, ?${p}) IN ('integer', 'real') THEN json_extract(e.props, ?${p}) END`;
  }
  return c ? `TOTAL(CASE WHEN ${c} THEN ${v} END)` : `TOTAL(${v})`;
}

export const SQLITE_DIALECT: ExperimentDialect = {
  param: (n) => `?${n}`,
  text: (t) => t,
  filter: filterSql,
  unitValue,
  // The names themselves come from prefixNamesCte (a range on the name would read the hour index over all time).
  namePrefix: () => "e.name IN (SELECT name FROM prefix_names WHERE name IS NOT NULL)",
  sum: "TOTAL",
};

/**
 * `prefix_names`: the distinct event names of the project in [?9, ?10) (a
 * name prefix, see namePrefix in plan.ts), found by a skip scan of `table`'s
 * (project_id, name, ...) key: one seek per name, then a NULL row. Names
 * compare bytewise (BINARY). Without it a prefix is a range on the index's
 * second column, where the hour (the third) no longer narrows the scan:
 * `$error:*` over the last hour read the index entries of every error the
 * project kept (bench/rollouts.ts: 62,000 entries, 3 ms, per rollout and
 * round, for one day of errors; a month of them, 30 times that). With the
 * names, each is one range on (project, name, hour).
 */
export const prefixNamesCte = (table: string) =>
  `prefix_names(name) AS (SELECT (SELECT MIN(name) FROM ${table} WHERE project_id = ?1 AND name >= ?9 AND name < ?10)` +
  ` UNION ALL SELECT (SELECT MIN(name) FROM ${table} WHERE project_id = ?1 AND name > p.name AND name < ?10) FROM prefix_names AS p WHERE p.name IS NOT NULL)`;

/**
 * Which slice of the units a unit falls in: the code points of its last two
 * characters (0 for none), modulo the slice count. Cheap per row and spread
 * well for the ids units have (digits, hex, base62); a skewed set only makes
 * one slice bigger, never a wrong answer: every unit is in exactly one slice.
 */
const unitSlice = (column: string, count: string, index: string) =>
  `(ifnull(unicode(substr(${column}, -1)), 0) + ifnull(unicode(substr(${column}, -2)), 0)) % ${count} = ${index}`;

/**
 * What `u`'s columns read of each sorted event (the rest goes as NULL):
 * every column carried makes the sort slower (a sixth for a count, which
 * needs only the unit and the time). Read off the columns' own text
 * (experimentParts), so a column that starts reading another field carries
 * it: `e.name`, `e.value`, and `props` (filters name it bare, properties as
 * `e.props`).
 */
function sortedColumns(columns: string[]): string[] {
  const text = columns.join(" ");
  const reads = { name: /\be\.name\b/.test(text), value: /\be\.value\b/.test(text), props: /\bprops\b/.test(text) };
  return ["unit_id", "ts", ...(["name", "value", "props"] as const).map((c) => (reads[c] ? c : `NULL AS ${c}`))];
}

/**
 * The statement of an experiment's per-variant sums over one slice of the
 * units (`slices` > 1; see unitSlice), everything bound:
 * 1. `s`: the metric's events of the window (hour index; from `from − preMs`
 *    with a pre-period), of the slice's units, sorted by unit into a
 *    temporary table;
 * 2. `u`: each of those joined to its unit's first exposure (the covering
 *    index by unit; CROSS JOIN keeps `s` outside: the other way round would
 *    need an index on events by unit), kept from `first − preMs` (or
 *    `first`), then one row per unit: X (and Y, and the pre-period X). In
 *    unit order the lookups walk the index forward instead of jumping
 *    around it, and the rows come grouped already: one sort of the events
 *    instead of a random lookup and a sort per event (a quarter less time);
 * 3. `k`: per variant, the means of u's columns, the shifts the
 *    second-order sums are about (`u` is materialized so it is computed once
 *    for both; VariantStats says why the shifts);
 * 4. per variant: `n` from the exposures themselves (units without outcome
 *    events count, as 0; the variant index walks them in order), joined to
 *    the sums from `u` about `k` (a join, not a UNION summed up, so that a
 *    sum SQLite answers as NULL, a NaN, stays NULL: see variantStatsOf).
 * The slices' answers add up to the whole (sums of disjoint sets of units; addShiftedRows).
 */
export function experimentSql(q: ExperimentStatsQuery, slices = 1): { sql: string; params: (string | number)[]; sliceParam: number } {
  const { params, names, where, columns, shifts, sums } = experimentParts(q, SQLITE_DIALECT);
  // The slice (its count, then its index: bound last, replaced per slice).
  let slice = (_column: string) => "";
  const sliceParam = params.length + 1;
  if (slices > 1) {
    params.push(slices, 0);
    slice = (column) => ` AND ${unitSlice(column, `?${sliceParam}`, `?${sliceParam + 1}`)}`;
  }
  const prefix = namePrefix(q.measures[0].event) !== null;
  const sql =
    (prefix ? `WITH RECURSIVE ${prefixNamesCte("events")}, ` : "WITH ") +
    `s AS MATERIALIZED (SELECT ${sortedColumns(columns).join(", ")} FROM events AS e` +
    ` WHERE e.project_id = ?1 AND ${names} AND e.hour BETWEEN ?6 AND ?7 AND e.ts >= ?5 AND e.ts < ?4 AND e.unit_id IS NOT NULL` +
    where.map((w) => ` AND ${w}`).join("") +
    slice("e.unit_id") +
    " ORDER BY unit_id), " +
    `u AS MATERIALIZED (SELECT x.variant AS variant, ${columns.join(", ")} FROM (SELECT * FROM s) AS e CROSS JOIN experiment_exposures AS x` +
    ` WHERE x.project_id = ?1 AND x.experiment_id = ?2 AND x.unit_id = e.unit_id AND x.first_ts >= ?3 AND x.first_ts < ?4 AND e.ts >= x.first_ts - ?8 GROUP BY e.unit_id), ` +
    `k AS (SELECT variant, ${shifts.join(", ")} FROM u GROUP BY variant)` +
    ` SELECT c.variant AS variant, c.n AS n, ${["m", "kx", "ky", "kp", ...SUM_COLUMNS].map((col) => `a.${col} AS ${col}`).join(", ")} FROM (` +
    "SELECT variant, COUNT(*) AS n FROM experiment_exposures WHERE project_id = ?1 AND experiment_id = ?2 AND first_ts >= ?3 AND first_ts < ?4" +
    // Each slice counts its own units, in the same statement (one read snapshot) as their sums: counted once for
    // all slices, by one of them, an exposure committed between two slices' starts could be in the sums, not in n.
    slice("unit_id") +
    ` GROUP BY variant) AS c LEFT JOIN (SELECT u.variant AS variant, ${sums.join(", ")} FROM u CROSS JOIN k WHERE k.variant = u.variant GROUP BY u.variant) AS a ON a.variant = c.variant ORDER BY c.variant`;
  return { sql, params, sliceParam };
}

/** SQLite's order of variant names (bytewise, BINARY), for rows put together in JavaScript. */
export const byVariantBytes = (a: { variant: string }, b: { variant: string }): number => Buffer.compare(Buffer.from(a.variant), Buffer.from(b.variant));

/** Adds the slices' per-variant rows (each sorted by variant) into one list sorted by variant (byte order, as SQLite's). */
export function mergeSlices(slices: VariantStatsRow[][]): VariantStatsRow[] {
  const byVariant = new Map<string, VariantStatsRow>();
  for (const rows of slices) {
    for (const row of rows) {
      const seen = byVariant.get(row.variant);
      byVariant.set(row.variant, seen ? addShiftedRows(seen, row) : { ...row });
    }
  }
  return [...byVariant.values()].sort(byVariantBytes);
}

/**
 * Unique units over buckets of several whole days, from the daily roll-up (one row per unit and day). Bound: ?1
 * from, ?2 bucket, ?3 project, ?4 name, ?5 the days to read (`days: "listed"`, a JSON list) or the window's end
 * (`"range"`), and with `lower`/`upper` a slice of the units, ?6 <= unit_id < ?7. Listed days (`day IN`) make
 * each day a seek on the primary key that a slice narrows to its own units: slices read disjoint rows, so together
 * they read the window once and each sorts only its units (after a range on `day`, `unit_id` narrows nothing).
 * A unit counts once per bucket, so its rows are grouped by bucket and unit, then counted (one sort;
 * COUNT(DISTINCT) keeps a B-tree per bucket: 1.7 s against 1.2 s for 2M rows, measured); one bucket over the
 * whole window groups by the unit alone.
 */
export function unitsOverDaysSql(single: boolean, days: "listed" | "range", slice: { lower: boolean; upper: boolean }): string {
  const window =
    "FROM event_units_daily WHERE project_id = ?3 AND name = ?4 AND " +
    (days === "listed" ? "day IN (SELECT value FROM json_each(?5))" : "day >= ?1 AND day < ?5") +
    (slice.lower ? " AND unit_id >= ?6" : "") +
    (slice.upper ? " AND unit_id < ?7" : "");
  return single
    ? `SELECT 0 AS b, COUNT(*) AS v FROM (SELECT unit_id ${window} GROUP BY unit_id)`
    : `SELECT b, COUNT(*) AS v FROM (SELECT (day - ?1) / ?2 AS b ${window} GROUP BY b, unit_id) GROUP BY b`;
}

/**
 * The first and last day with units of the name in the window (?3 <= day < ?4: a seek each) and how many units
 * the last one has, the day slices are cut from.
 */
export const UNITS_SPAN_SQL =
  "SELECT first, last, (SELECT COUNT(*) FROM event_units_daily WHERE project_id = ?1 AND name = ?2 AND day = last) AS n FROM (SELECT" +
  " (SELECT MIN(day) FROM event_units_daily WHERE project_id = ?1 AND name = ?2 AND day >= ?3 AND day < ?4) AS first," +
  " (SELECT MAX(day) FROM event_units_daily WHERE project_id = ?1 AND name = ?2 AND day >= ?3 AND day < ?4) AS last)";

/**
 * The units at positions ?4, ?5… (from 0, in SQLite's byte order) of day ?3, in one statement: one snapshot, so
 * they come in order however units arrive meanwhile (separate statements could each see more of the day).
 */
export function unitsAtSql(positions: number): string {
  const at = (k: number) => `(SELECT unit_id FROM event_units_daily WHERE project_id = ?1 AND name = ?2 AND day = ?3 ORDER BY unit_id LIMIT 1 OFFSET ?${k + 4}) AS u${k}`;
  return `SELECT ${Array.from({ length: positions }, (_, k) => at(k)).join(", ")}`;
}

/** Events per name over a trailing day and week, from the hourly roll-ups (one range of the primary key per project). */
export const COUNTS_BY_NAME_SQL =
  "SELECT name, SUM(CASE WHEN hour >= ?2 THEN n ELSE 0 END) AS day, SUM(n) AS week FROM event_hourly WHERE project_id = ?1 AND hour >= ?3 GROUP BY name";

/**
 * A page of one name's newest raw events. The index is keyed by the hour and, within it, by arrival (rowid):
 * walked backwards by hour, only the rows of the hours the page reaches are sorted by `ts`. A cursor names the
 * last row given (its ts and rowid), so rows arriving meanwhile never shift a page.
 */
export function recentSql(q: { projectId: string; name: string; limit: number; before?: { ts: number; tie: string } }): { sql: string; params: (string | number)[] } {
  const columns = "SELECT rowid AS tie, ts, unit_id, value, props FROM events WHERE project_id = ?1 AND name = ?2";
  const order = "ORDER BY hour DESC, ts DESC, rowid DESC";
  if (!q.before) return { sql: `${columns} ${order} LIMIT ?3`, params: [q.projectId, q.name, q.limit] };
  return {
    sql: `${columns} AND hour <= ?4 AND (ts < ?5 OR (ts = ?5 AND rowid < ?6)) ${order} LIMIT ?3`,
    params: [q.projectId, q.name, q.limit, Math.floor(q.before.ts / 3_600_000), q.before.ts, Number(q.before.tie)],
  };
}
