import type { SeriesQuery } from "./types";

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
