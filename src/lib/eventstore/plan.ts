import type { ExperimentStatsQuery, Measure, PropertyFilter, SeriesQuery } from "./types";

const HOUR_MS = 3_600_000;

/**
 * Which table answers a series (the same choice on every engine):
 * - `hourly`: count or sum of the event's value with no filters, over a
 *   window and buckets in whole hours (the hourly roll-up holds exactly that);
 * - `daily-units`: unique units with no filters in whole UTC days;
 * - `raw`: everything else (only as far back as raw events are kept).
 */
export function rollupPlan(q: SeriesQuery): "hourly" | "daily-units" | "raw" {
  const m = q.measure;
  if (m.filters.length > 0) return "raw";
  const aligned = (unit: number) => q.from % unit === 0 && q.to % unit === 0 && q.bucket % unit === 0;
  if ((m.kind === "count" || (m.kind === "sum" && m.property === undefined)) && aligned(3600)) return "hourly";
  if (m.kind === "unique" && aligned(86400)) return "daily-units";
  return "raw";
}

/** Every bucket of the window in order (`t` its start), with `v: 0` where the query found nothing. */
export function bucketRows(q: SeriesQuery, found: { b: number | string; v: number | string | null }[]): { t: number; v: number }[] {
  const count = Math.ceil((q.to - q.from) / q.bucket);
  const values = new Float64Array(count);
  for (const row of found) {
    const b = Number(row.b);
    if (b >= 0 && b < count) values[b] = Number(row.v ?? 0);
  }
  const rows: { t: number; v: number }[] = new Array(count);
  for (let i = 0; i < count; i++) rows[i] = { t: q.from + i * q.bucket, v: values[i]! };
  return rows;
}

/**
 * A measure's `event` ending in `*` stands for every event whose name starts
 * with what comes before it: `$error:*` counts a unit's tracked errors of
 * every fingerprint (the guarded rollouts' error rate). Only experiment
 * statistics read it, as a single measure.
 */
export function namePrefix(event: string): string | null {
  return event.length > 1 && event.endsWith("*") ? event.slice(0, -1) : null;
}

/** The least text above every text starting with `prefix` (its last character's code plus one). */
function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** How an engine spells what experimentParts builds. */
export type ExperimentDialect = {
  /** Parameter `n`'s placeholder (1-based). */
  param: (n: number) => string;
  /** Text as the engine binds it. */
  text: (s: string) => string;
  /** One property filter (a whole condition), its parameters pushed. */
  filter: (f: PropertyFilter, params: (string | number)[]) => string;
  /** One measure's value per unit over the rows where `cond` holds (all rows when empty), its parameters pushed. */
  unitValue: (m: Measure, cond: string[], params: (string | number)[]) => string;
  /** `e.name` starts with the text of `prefix`; `end` holds the least text above all such names (see prefixEnd). */
  namePrefix: (prefix: string, end: string) => string;
  /** The aggregate that adds per-unit values up per variant: TOTAL (SQLite) or SUM. */
  sum: string;
};

/**
 * What every engine's experiment statement shares (see experimentSql there), over the metric's events `e` each
 * joined to its unit's first exposure `x`:
 * - `params`: 1 project, 2 experiment, 3 from, 4 to, 5 where the scan starts (`from − preMs`), 6 and 7 its hours,
 *   8 preMs, 9 (and 10) the event names; then the filters' and the measures' own;
 * - `names`: the condition on the event names scanned (one name, two, or a prefix: see namePrefix);
 * - `where`: conditions on the scan (a single measure's filters narrow the scan itself);
 * - `columns`: one row per unit: X (and Y, the ratio's denominator; with a pre-period X counts from the first
 *   exposure on, and P is X's value before it);
 * - `shifts`: over `u` grouped by variant, the means kx, ky, kp (0 where the query has no such column), the
 *   shifts the second-order sums are about (VariantStats says why);
 * - `sums`: over `u` joined to its variant's shifts `k`, grouped by variant: m (units with events), the shifts,
 *   then ΣX, Σ(X − kx)², ΣY, Σ(Y − ky)², Σ(X − kx)(Y − ky), ΣP, Σ(P − kp)², Σ(X − kx)(P − kp) (0 where the
 *   query has no such column), each named as VariantStatsRow's columns.
 */
export function experimentParts(
  q: ExperimentStatsQuery,
  d: ExperimentDialect,
): { params: (string | number)[]; names: string; where: string[]; columns: string[]; shifts: string[]; sums: string[] } {
  const [mx, my] = q.measures;
  const pre = q.preMs !== undefined;
  const scanFrom = q.from - (q.preMs ?? 0);
  const prefix = namePrefix(mx.event);
  if (prefix !== null && my !== undefined) throw new Error("a name prefix (event ending in *) measures alone, never in a ratio");
  const params: (string | number)[] = [d.text(q.projectId), d.text(q.experimentId), q.from, q.to, scanFrom, Math.floor(scanFrom / HOUR_MS), Math.floor((q.to - 1) / HOUR_MS), q.preMs ?? 0, d.text(prefix ?? mx.event)];
  let names = `e.name = ${d.param(9)}`;
  const twoNames = my !== undefined && my.event !== mx.event;
  if (twoNames) {
    params.push(d.text(my.event));
    names = `e.name IN (${d.param(9)}, ${d.param(10)})`;
  } else if (prefix !== null) {
    params.push(d.text(prefixEnd(prefix)));
    names = d.namePrefix(d.param(9), d.param(10));
  }
  const where: string[] = [];
  const cond = (m: Measure, name: string): string[] => {
    const filters = m.filters.map((f) => d.filter(f, params));
    if (my === undefined) {
      // One measure: its filters narrow the scan itself.
      where.push(...filters);
      return [];
    }
    return twoNames ? [`e.name = ${name}`, ...filters] : filters;
  };
  const cx = cond(mx, d.param(9));
  const cy = my ? cond(my, d.param(10)) : [];
  const post = pre ? ["e.ts >= x.first_ts"] : [];
  const columns = [`${d.unitValue(mx, [...cx, ...post], params)} AS x`];
  if (my) columns.push(`${d.unitValue(my, [...cy, ...post], params)} AS y`);
  if (pre) columns.push(`${d.unitValue(mx, [...cx, "e.ts < x.first_ts"], params)} AS p`);
  const s = (e: string) => `${d.sum}(${e})`;
  const shifts = ["AVG(x) AS kx", `${my ? "AVG(y)" : "0"} AS ky`, `${pre ? "AVG(p)" : "0"} AS kp`];
  const [cx2, cy2, cp2] = ["(x - k.kx)", "(y - k.ky)", "(p - k.kp)"];
  const sums = [
    "COUNT(*) AS m",
    "MAX(k.kx) AS kx",
    "MAX(k.ky) AS ky",
    "MAX(k.kp) AS kp",
    `${s("x")} AS sx`,
    `${s(`${cx2} * ${cx2}`)} AS sxx`,
    `${my ? s("y") : "0"} AS sy`,
    `${my ? s(`${cy2} * ${cy2}`) : "0"} AS syy`,
    `${my ? s(`${cx2} * ${cy2}`) : "0"} AS sxy`,
    `${pre ? s("p") : "0"} AS sp`,
    `${pre ? s(`${cp2} * ${cp2}`) : "0"} AS spp`,
    `${pre ? s(`${cx2} * ${cp2}`) : "0"} AS sxp`,
  ];
  return { params, names, where, columns, shifts, sums };
}
