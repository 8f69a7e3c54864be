/** One bucket of a series: its start (epoch seconds) and its value. */
export type SeriesPoint = { t: number; v: number };

// The drawing's own units (the SVG scales to its box, whose aspect ratio is fixed: nothing moves when data arrives).
const W = 720;
const H = 240;
const PAD = { left: 52, right: 12, top: 12, bottom: 30 };
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;
/** More buckets than this draw a line with an area under it instead of bars. */
const MAX_BARS = 60;

const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const HOUR = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const DAY_HOUR = new Intl.DateTimeFormat(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" });
const LONG = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
// Daily buckets are UTC days: they are named in UTC, so a bucket never reads as the day before.
const DAY = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" });

/** 1, 2 or 5 times a power of ten, at least `max`: round axis labels (`none` when there is nothing above 0). */
export function niceMax(max: number, none = 1): number {
  if (!(max > 0)) return none;
  const p = 10 ** Math.floor(Math.log10(max));
  const m = max / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/** How a bucket start reads: a day for daily buckets, a time (with the weekday over several days) for shorter ones. */
export function bucketLabel(t: number, bucket: number, span: number, long = false): string {
  const d = new Date(t * 1000);
  if (bucket >= 86_400) return DAY.format(d);
  if (long) return LONG.format(d);
  return span > 86_400 ? DAY_HOUR.format(d) : HOUR.format(d);
}


/**
 * A time series as an SVG chart: bars (up to 60 buckets) or a line with
 * its area, axis labels for time and value, each bucket's value on hover.
 * Screen readers get a summary as the image's name and every bucket in a
 * visually hidden table. Colours are the theme's variables (light and dark).
 * `rows` undefined draws the empty frame (loading), at the same size.
 */
export function SeriesChart({ rows, bucket, title, summable = true, format = (v: number) => NUMBER.format(v) }: { rows: SeriesPoint[] | undefined; bucket: number; title: string; summable?: boolean; format?: (v: number) => string }) {
  const n = rows?.length ?? 0;
  const span = n * bucket;
  const max = niceMax(Math.max(0, ...(rows ?? []).map((r) => r.v)));
  const x = (i: number) => PAD.left + (n === 0 ? 0 : (i * PLOT_W) / n);
  const y = (v: number) => PAD.top + PLOT_H - (Math.max(0, v) / max) * PLOT_H;
  const step = n === 0 ? 0 : PLOT_W / n;
  // Counts get whole-number ticks only.
  const whole = (rows ?? []).every((r) => Number.isInteger(r.v));
  const ticks = [0, max / 2, max].filter((v) => !whole || Number.isInteger(v));
  const labelEvery = Math.max(1, Math.ceil(n / 6));
  const bars = n <= MAX_BARS;

  let summary = `${title}: loading`;
  if (rows && n > 0) {
    const top = rows.reduce((a, b) => (b.v > a.v ? b : a));
    const total = rows.reduce((s, r) => s + r.v, 0);
    summary =
      `${title}: ${n} buckets from ${bucketLabel(rows[0]!.t, bucket, span, true)} to ${bucketLabel(rows[n - 1]!.t, bucket, span, true)}. ` +
      `${summable ? `Total ${format(total)}, ` : ""}highest ${format(top.v)} (${bucketLabel(top.t, bucket, span, true)}), latest ${format(rows[n - 1]!.v)}.`;
  } else if (rows) summary = `${title}: no buckets`;

  const line = rows?.map((r, i) => `${i === 0 ? "M" : "L"}${(x(i) + step / 2).toFixed(1)},${y(r.v).toFixed(1)}`).join(" ") ?? "";
  const area = n > 0 ? `${line} L${(x(n - 1) + step / 2).toFixed(1)},${y(0)} L${(x(0) + step / 2).toFixed(1)},${y(0)} Z` : "";

  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label={summary}>
        {ticks.map((v) => (
          <g key={v}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} class="chart-grid" />
            <text x={PAD.left - 6} y={y(v) + 4} text-anchor="end" class="chart-text">
              {format(v)}
            </text>
          </g>
        ))}
        {rows?.map((r, i) =>
          i % labelEvery === 0 ? (
            <text key={r.t} x={x(i) + step / 2} y={H - 10} text-anchor="middle" class="chart-text">
              {bucketLabel(r.t, bucket, span)}
            </text>
          ) : null,
        )}
        {!rows && (
          <text x={W / 2} y={H / 2} text-anchor="middle" class="chart-text">
            Loading…
          </text>
        )}
        {rows &&
          (bars ? (
            rows.map((r, i) => (
              <rect key={r.t} class="chart-bar" x={x(i) + step * 0.1} width={Math.max(1, step * 0.8)} y={y(r.v)} height={Math.max(0, y(0) - y(r.v))}>
                <title>{`${bucketLabel(r.t, bucket, span, true)}: ${format(r.v)}`}</title>
              </rect>
            ))
          ) : (
            <g>
              <path class="chart-area" d={area} />
              <path class="chart-line" d={line} />
              {rows.map((r, i) => (
                <circle key={r.t} class="chart-point" cx={x(i) + step / 2} cy={y(r.v)} r={Math.min(3, Math.max(1.5, step / 3))}>
                  <title>{`${bucketLabel(r.t, bucket, span, true)}: ${format(r.v)}`}</title>
                </circle>
              ))}
            </g>
          ))}
      </svg>
      {/* In a box: a table's own height and overflow are not clipped, a div's are. */}
      {rows && (
        <div class="visually-hidden">
          <table>
            <caption>{title}, one row per bucket</caption>
            <thead>
              <tr>
                <th scope="col">Bucket start</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.t}>
                  <th scope="row">{bucketLabel(r.t, bucket, span, true)}</th>
                  <td>{format(r.v)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </figure>
  );
}

/** The windows a series page offers: whole hours or whole UTC days, so the server reads its roll-ups. */
export const SERIES_WINDOWS = [
  { id: "24h", label: "24 h, hourly", bucket: 3600, buckets: 24 },
  { id: "7d", label: "7 d, hourly", bucket: 3600, buckets: 168 },
  { id: "30d", label: "30 d, daily", bucket: 86_400, buckets: 30 },
] as const;
export type SeriesWindow = (typeof SERIES_WINDOWS)[number];

/** The request of a window ending with the bucket that holds now. */
export function windowRange(w: SeriesWindow, nowMs = Date.now()): { from: number; to: number; bucket: number } {
  const to = Math.floor(nowMs / 1000 / w.bucket + 1) * w.bucket;
  return { from: to - w.buckets * w.bucket, to, bucket: w.bucket };
}

/** The window presets as toggle buttons (one pressed). */
export function WindowPicker({ current, onSelect }: { current: SeriesWindow; onSelect: (w: SeriesWindow) => void }) {
  return (
    <div class="row" role="group" aria-label="Window">
      {SERIES_WINDOWS.map((w) => (
        <button key={w.id} type="button" class={w.id === current.id ? "small" : "secondary small"} aria-pressed={w.id === current.id} onClick={() => onSelect(w)}>
          {w.label}
        </button>
      ))}
    </div>
  );
}
