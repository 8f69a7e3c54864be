import { useId } from "preact/hooks";
import { niceMax } from "../../../web/dashboard/chart";
import { DataTable } from "../../../web/dashboard/data-table";
import { type Check, MIN_UNITS_PER_GROUP, type MetricCheck, directionText, intervalText, metricLabel, signed, toleranceText } from "./client";

// The drawing's own units (the SVG scales to its box, whose aspect ratio is fixed).
const W = 720;
const H = 240;
const PAD = { left: 64, right: 12, top: 14, bottom: 30 };
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;

const TIME = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const DAY_TIME = new Intl.DateTimeFormat(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" });
const LONG = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** One look at one metric: when, in which stage, and what it saw. */
export type Point = { t: number; stage: number; percent: number; m: MetricCheck; tolerated: number | null };

/** The checks (newest first, as the API gives them) as one metric's points, oldest first. */
export function pointsOf(checks: Check[], metric: string): Point[] {
  const out: Point[] = [];
  for (let i = checks.length - 1; i >= 0; i--) {
    const c = checks[i]!;
    const m = c.metrics.find((x) => x.metric === metric);
    if (!m) continue;
    // The regression threshold on the worse side: tolerance × |old mean| (regression when the whole interval is beyond it).
    const tolerated = m.old.mean === null ? null : (m.direction === "lower" ? 1 : -1) * m.tolerance * Math.abs(m.old.mean);
    // Eden hands ISO times over as Date objects: read either as milliseconds (Date.parse would drop them).
    out.push({ t: new Date(c.at).getTime(), stage: c.stage, percent: c.percent, m, tolerated });
  }
  return out;
}

/** The chart's description in words: the span, the latest difference with its interval, the regressions seen. */
export function chartSummary(label: string, points: Point[], direction: "lower" | "higher", tolerance: number): string {
  const judged = points.filter((p) => p.m.estimate !== null);
  const head = `Difference of ${label} (with the change minus without), ${directionText(direction)}, ${toleranceText(tolerance)}`;
  if (judged.length === 0) return `${head}: no difference yet (${points.length} checks; each group needs ${MIN_UNITS_PER_GROUP} units in the stage).`;
  const last = judged[judged.length - 1]!;
  const regressions = judged.filter((p) => p.m.regression).length;
  return (
    `${head}: ${judged.length} checks with a difference from ${LONG.format(judged[0]!.t)} to ${LONG.format(last.t)}. ` +
    `Latest ${signed(last.m.estimate)}, interval ${intervalText(last.m.interval)} at stage ${last.stage + 1} (${last.percent} %). ` +
    (regressions ? `${regressions} ${regressions === 1 ? "check saw" : "checks saw"} a regression.` : "No regression seen.")
  );
}

/**
 * One watched metric's difference (new − old per unit) over the checks: the
 * estimate as a line, its always-valid interval as a band, the zero line
 * (no change) and the tolerated regression on the worse side (dashed, in the
 * danger colour). Each stage is its own comparison, so lines break where the
 * stage changes and a rule marks the change. The image's name says it all in
 * words; every check is in a visually hidden table.
 */
export function DifferenceChart({ watch, checks }: { watch: { metric: string; direction: "lower" | "higher"; tolerance: number }; checks: Check[] }) {
  const titleId = useId();
  const label = metricLabel(watch.metric);
  const points = pointsOf(checks, watch.metric);
  const judged = points.filter((p) => p.m.estimate !== null && p.m.interval !== null);
  const summary = chartSummary(label, points, watch.direction, watch.tolerance);

  // The vertical reach: every estimate and threshold, and the interval bounds up to their 80th percentile
  // (the first looks of a stage are wide; beyond the reach a band is clipped at the edge).
  const bounds = judged.flatMap((p) => [Math.abs(p.m.interval![0]), Math.abs(p.m.interval![1])]).sort((a, b) => a - b);
  const reach = niceMax(
    Math.max(...judged.map((p) => Math.abs(p.m.estimate!)), ...judged.map((p) => Math.abs(p.tolerated ?? 0)), bounds[Math.floor(bounds.length * 0.8)] ?? 0, 1e-9) * 1.15,
  );
  const t0 = points[0]?.t ?? 0;
  const t1 = points[points.length - 1]?.t ?? 1;
  const span = Math.max(1, t1 - t0);
  const x = (t: number) => PAD.left + (points.length <= 1 ? PLOT_W / 2 : ((t - t0) / span) * PLOT_W);
  const y = (v: number) => PAD.top + PLOT_H / 2 - (Math.max(-reach, Math.min(reach, v)) / reach) * (PLOT_H / 2);
  const ticks = [-reach, -reach / 2, 0, reach / 2, reach];
  const timeFormat = span > 86_400_000 ? DAY_TIME : TIME;

  // One run of points per stage.
  const runs: Point[][] = [];
  for (const p of judged) {
    const run = runs[runs.length - 1];
    if (run && run[0]!.stage === p.stage) run.push(p);
    else runs.push([p]);
  }
  const stageStarts = points.filter((p, i) => i > 0 && points[i - 1]!.stage !== p.stage);
  const line = (run: Point[], v: (p: Point) => number) => run.map((p, i) => `${i === 0 ? "M" : "L"}${x(p.t).toFixed(1)},${y(v(p)).toFixed(1)}`).join(" ");
  const band = (run: Point[]) => {
    const upper = run.map((p, i) => `${i === 0 ? "M" : "L"}${x(p.t).toFixed(1)},${y(p.m.interval![1]).toFixed(1)}`).join(" ");
    const lower = [...run].reverse().map((p) => `L${x(p.t).toFixed(1)},${y(p.m.interval![0]).toFixed(1)}`).join(" ");
    // A single look is a band as wide as a few pixels.
    return run.length === 1 ? `M${x(run[0]!.t) - 3},${y(run[0]!.m.interval![1])} L${x(run[0]!.t) + 3},${y(run[0]!.m.interval![1])} L${x(run[0]!.t) + 3},${y(run[0]!.m.interval![0])} L${x(run[0]!.t) - 3},${y(run[0]!.m.interval![0])} Z` : `${upper} ${lower} Z`;
  };
  const labelEvery = Math.max(1, Math.ceil(points.length / 6));

  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-labelledby={titleId}>
        <title id={titleId}>{summary}</title>
        {ticks.map((v) => (
          <g key={v}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} class={v === 0 ? "forest-zero" : "chart-grid"} />
            <text x={PAD.left - 6} y={y(v) + 4} text-anchor="end" class="chart-text">
              {v === 0 ? "0" : signed(v)}
            </text>
          </g>
        ))}
        {points.map((p, i) =>
          i % labelEvery === 0 ? (
            <text key={`t${i}`} x={x(p.t)} y={H - 10} text-anchor={x(p.t) < PAD.left + 40 ? "start" : x(p.t) > W - PAD.right - 40 ? "end" : "middle"} class="chart-text">
              {timeFormat.format(p.t)}
            </text>
          ) : null,
        )}
        {stageStarts.map((p, i) => (
          <g key={`s${i}`}>
            <line x1={x(p.t)} x2={x(p.t)} y1={PAD.top} y2={H - PAD.bottom} class="chart-grid" style={{ strokeDasharray: "2 3" }} />
            <text x={x(p.t) + 4} y={PAD.top + 10} class="chart-text">
              stage {p.stage + 1} ({p.percent} %)
            </text>
          </g>
        ))}
        {runs.map((run, i) => (
          <g key={`r${i}`}>
            <path class="chart-area" d={band(run)} />
            {run.some((p) => p.tolerated !== null && p.tolerated !== 0) && (
              <path d={line(run.filter((p) => p.tolerated !== null), (p) => p.tolerated!)} style={{ fill: "none", stroke: "var(--danger)", strokeWidth: "1.5", strokeDasharray: "6 4" }} />
            )}
            <path class="chart-line" d={line(run, (p) => p.m.estimate!)} />
            {run.map((p, i) => (
              <circle key={i} cx={x(p.t)} cy={y(p.m.estimate!)} r={p.m.regression ? 4.5 : 2.5} class="chart-point" style={p.m.regression ? { fill: "var(--danger)" } : undefined}>
                <title>{`${LONG.format(p.t)}, stage ${p.stage + 1}: ${signed(p.m.estimate)} ${intervalText(p.m.interval)}${p.m.regression ? ", regression" : ""}`}</title>
              </circle>
            ))}
          </g>
        ))}
        {judged.length === 0 && (
          <text x={PAD.left + PLOT_W / 2} y={PAD.top + PLOT_H / 2 - 8} text-anchor="middle" class="chart-text">
            {points.length === 0 ? "No checks yet" : `No difference yet: each group needs ${MIN_UNITS_PER_GROUP} units in the stage, and a spread`}
          </text>
        )}
      </svg>
      <figcaption class="muted small">
        Line: the difference with the change minus without, per unit; band: its always-valid interval; dashed: zero{watch.tolerance > 0 ? " and the tolerated regression (red)" : ""}. {watch.direction === "lower" ? "Lower" : "Higher"} is better.
      </figcaption>
      {points.length > 0 && (
        <div class="visually-hidden">
          <DataTable
            caption={`${label}: every check`}
            captionShown
            rows={points}
            rowKey={(p) => String(p.t)}
            rowHeader={{ header: "Checked", cell: (p) => LONG.format(p.t) }}
            columns={[
              { header: "Stage", cell: (p) => `${p.stage + 1} (${p.percent} %)` },
              { header: "Units without / with", cell: (p) => `${p.m.old.n} / ${p.m.new.n}` },
              { header: "Difference", cell: (p) => signed(p.m.estimate) },
              { header: "Interval", cell: (p) => intervalText(p.m.interval) },
              { header: "Regression", cell: (p) => (p.m.regression ? "yes" : "no") },
            ]}
          />
        </div>
      )}
    </figure>
  );
}
