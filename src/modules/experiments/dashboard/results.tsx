import { useId } from "preact/hooks";
import { niceMax } from "../../../web/dashboard/chart";
import { Badge, When } from "../../../web/dashboard/ui";
import {
  DECIDER_TEXT,
  type Decider,
  type Experiment,
  type MetricResult,
  type Results,
  type Tone,
  deciderOf,
  intervalText,
  pText,
  pValueText,
  percent,
  share,
  toneOf,
  verdictText,
} from "./client";

// The forest plot's own units (the SVG scales to its box).
const W = 720;
const LEFT = 150;
const RIGHT = 24;
const ROW = 36;
const TOP = 10;
const AXIS = 34;
const PLOT_W = W - LEFT - RIGHT;

const TONE_BADGE: Record<Tone, "ok" | "danger" | "muted"> = { good: "ok", harm: "danger", none: "muted" };
const level = (alpha: number) => `${Number(((1 - alpha) * 100).toFixed(1))} %`;

type Method = Results["method"];
/** The interval the method reads: the frequentist confidence interval, or the Bayesian credible interval. */
const intervalKind = (method: Method) => (method === "bayesian" ? "credible" : "confidence");

/** One treatment's relative lift with its interval (of the project's method), or null when there is none. */
function liftOf(t: MetricResult["treatments"][number], method: Method) {
  if (method === "bayesian") {
    const rel = t.bayesian?.relative;
    return rel ? { estimate: rel.estimate, ci: rel.credibleInterval as [number, number] } : null;
  }
  const rel = t.frequentist.relative;
  return rel ? { estimate: rel.estimate, ci: rel.ci as [number, number] } : null;
}

/** The plot's description in words: every treatment's lift, interval and verdict. */
export function forestSummary(m: MetricResult, alpha: number, method: Method): string {
  const kind = intervalKind(method);
  const rows = m.treatments.map((t) => {
    const lift = liftOf(t, method);
    if (!lift) return `${t.variant}: no lift (the control's mean is 0, or no test: the warnings say why), ${verdictText(m, t)}`;
    return `${t.variant}: ${percent(lift.estimate)}, ${level(alpha)} ${kind} interval ${percent(lift.ci[0])} to ${percent(lift.ci[1])}, ${verdictText(m, t)}`;
  });
  return `Relative lift of ${m.metric.name} against the control, each treatment with its ${level(alpha)} ${kind} interval around the zero line (no change). ${rows.join("; ")}.`;
}

/**
 * A forest plot: per treatment, its relative lift against the control as a
 * point and its confidence interval as a bar, around a zero line, coloured
 * by the verdict (better, worse, inconclusive: the table says the same in
 * words). The image's name says every interval in words.
 */
export function ForestPlot({ metric, alpha, method }: { metric: MetricResult; alpha: number; method: Method }) {
  const titleId = useId();
  const rows = metric.treatments;
  const lifts = rows.map((t) => liftOf(t, method));
  const reach = Math.max(0, ...lifts.flatMap((l) => (l ? [Math.abs(l.ci[0]), Math.abs(l.ci[1]), Math.abs(l.estimate)] : [])));
  // A round edge for the lift axis (1 % when nothing reaches beyond 0).
  const edge = niceMax(reach * 1.05, 0.01);
  const x = (v: number) => LEFT + ((Math.max(-edge, Math.min(edge, v)) + edge) / (2 * edge)) * PLOT_W;
  const H = TOP + rows.length * ROW + AXIS;
  const ticks = [-edge, -edge / 2, 0, edge / 2, edge];
  const summary = forestSummary(metric, alpha, method);
  return (
    <figure class="chart forest">
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" style={{ aspectRatio: `${W} / ${H}` }} role="img" aria-labelledby={titleId}>
        <title id={titleId}>{summary}</title>
        {ticks.map((v) => (
          <g key={v}>
            <line x1={x(v)} x2={x(v)} y1={TOP} y2={H - AXIS} class={v === 0 ? "forest-zero" : "chart-grid"} />
            <text x={x(v)} y={H - AXIS + 16} text-anchor="middle" class="chart-text">
              {v === 0 ? "0 %" : percent(v, edge < 0.01 ? 2 : edge < 0.1 ? 1 : 0)}
            </text>
          </g>
        ))}
        <text x={LEFT + PLOT_W / 2} y={H - 4} text-anchor="middle" class="chart-text">
          lift against control ({level(alpha)} {intervalKind(method)} interval)
        </text>
        {rows.map((t, i) => {
          const lift = lifts[i];
          const cy = TOP + i * ROW + ROW / 2;
          const tone = toneOf(metric, t);
          return (
            <g key={t.variant} class={`forest-row forest-${tone}`}>
              <text x={LEFT - 10} y={cy + 4} text-anchor="end" class="forest-label">
                {t.variant.length > 18 ? `${t.variant.slice(0, 17)}…` : t.variant}
              </text>
              {lift ? (
                <>
                  <line class="forest-interval" x1={x(lift.ci[0])} x2={x(lift.ci[1])} y1={cy} y2={cy} />
                  <line class="forest-interval" x1={x(lift.ci[0])} x2={x(lift.ci[0])} y1={cy - 7} y2={cy + 7} />
                  <line class="forest-interval" x1={x(lift.ci[1])} x2={x(lift.ci[1])} y1={cy - 7} y2={cy + 7} />
                  <rect class="forest-point" x={x(lift.estimate) - 6} y={cy - 6} width={12} height={12} transform={`rotate(45 ${x(lift.estimate)} ${cy})`} />
                </>
              ) : (
                <text x={x(0) + 8} y={cy + 4} class="chart-text">
                  no lift: the control's mean is 0, or no test (the warnings say why)
                </text>
              )}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

/** A number of a mean column: 3 significant digits, n/a when undefined. */
const mean = (v: number | null | undefined) => (v === null || v === undefined ? "n/a" : Number(v.toPrecision(3)).toLocaleString("en"));

/** One metric: the forest plot, then the numbers in a table; the column that decides is marked. */
function MetricResults({ metric, results }: { metric: MetricResult; results: Results }) {
  const decider = deciderOf(results);
  const decides = (d: Decider) =>
    decider === d ? (
      <>
        {" "}
        <Badge tone="accent" strong>
          decides
        </Badge>
      </>
    ) : null;
  const role = metric.role === "primary" ? "primary metric" : `guardrail, worse when it ${metric.worseWhen === "increase" ? "increases" : "decreases"}`;
  const testText = metric.test === "proportion" ? "two proportions (converted or not)" : metric.test === "ratio" ? "ratio by the delta method" : "Welch test of the per-unit mean";
  return (
    <section class="panel metric-result" aria-labelledby={`m-${metric.metric.id}`}>
      <h3 id={`m-${metric.metric.id}`}>
        {metric.metric.name} <span class="muted small">({role})</span>
      </h3>
      <p class="muted small">
        {metric.metric.kind}: {testText}
        {metric.cuped ? `; CUPED over ${metric.cuped.preDays} pre-period days reduced the variance by ${metric.cuped.varianceReduction.map((r) => share(r)).join(" / ")}` : ""}
      </p>
      <ForestPlot metric={metric} alpha={results.alpha} method={results.method} />
      <table class="numbers">
        <caption>
          {metric.metric.name}: each treatment against the control. Decided by {DECIDER_TEXT[decider]}.
        </caption>
        <thead>
          <tr>
            <th scope="col">Variant</th>
            <th scope="col">Control mean</th>
            <th scope="col">Variant mean</th>
            <th scope="col">Lift</th>
            <th scope="col">
              {level(results.alpha)} {intervalKind(results.method)} interval
            </th>
            <th scope="col">p-value{decides("fixed")}</th>
            <th scope="col">Chance to beat control{decides("bayesian")}</th>
            <th scope="col">Sequential p{decides("sequential")}</th>
            <th scope="col">Verdict</th>
          </tr>
        </thead>
        <tbody>
          {metric.treatments.map((t) => {
            const f = t.frequentist;
            const lift = liftOf(t, results.method);
            const tone = toneOf(metric, t);
            return (
              <tr key={t.variant}>
                <th scope="row">{t.variant}</th>
                <td>{mean(f.control.mean)}</td>
                <td>{mean(f.treatment.mean)}</td>
                <td>{percent(lift?.estimate)}</td>
                <td>{intervalText(lift?.ci)}</td>
                <td>{pValueText(f.absolute?.pValue)}</td>
                <td>{t.bayesian ? share(t.bayesian.chanceToBeatControl) : "n/a"}</td>
                <td>{pValueText(t.sequential?.pValue)}</td>
                <td>
                  <Badge tone={TONE_BADGE[tone]} strong={tone !== "none"}>
                    {verdictText(metric, t)}
                  </Badge>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <details>
        <summary>SQL that computed the sums</summary>
        <pre class="value sql" tabIndex={0} aria-label={`SQL that computed the sums of ${metric.metric.name}`}>
          {metric.sql}
        </pre>
      </details>
    </section>
  );
}

/**
 * The analysis: how it is read (method, threshold, days), exposures per
 * variant, a loud sample-ratio-mismatch warning when the split is off, the
 * warnings, then each metric's plot and numbers.
 */
export function ResultsView({ experiment, results }: { experiment: Experiment; results: Results }) {
  const r = results;
  const decider = deciderOf(r);
  const byKey = new Map(experiment.variants.map((v) => [v.key, v]));
  return (
    <>
      <p>
        Method <strong>{r.method}</strong>, significance threshold <strong>{r.alpha}</strong>. {r.sampleDays.toFixed(1)} of at least {r.minSampleDays} days{" "}
        {r.minimumReached ? <Badge tone="ok">minimum reached</Badge> : <Badge tone="accent">minimum not reached</Badge>}
        {r.window.from && (
          <span class="muted small">
            {" "}
            · window from <When iso={r.window.from} /> to {r.window.to ? <When iso={r.window.to} /> : "now"}
          </span>
        )}
      </p>
      <p class="small">Verdicts are read from {DECIDER_TEXT[decider]}.</p>
      {r.srm.flagged && (
        <div class="srm-alert" role="alert">
          <h3>Sample ratio mismatch: do not trust these results</h3>
          <p>
            Exposures {r.exposures.variants.map((v) => `${v.variant} ${v.n.toLocaleString("en")}`).join(" / ")} are unlikely under the weights (expected{" "}
            {r.srm.expected.map((e) => Math.round(e).toLocaleString("en")).join(" / ")}; χ² = {r.srm.chiSquare.toFixed(2)}, {pText(r.srm.pValue)}, below {r.srm.threshold}).
          </p>
          <p>Check how units are assigned and how exposures are logged before reading any metric below.</p>
        </div>
      )}
      <h3>Exposures</h3>
      <table class="numbers">
        <caption class="visually-hidden">Units exposed per variant against the share the weights expect</caption>
        <thead>
          <tr>
            <th scope="col">Variant</th>
            <th scope="col">Units exposed</th>
            <th scope="col">Observed share</th>
            <th scope="col">Expected share</th>
          </tr>
        </thead>
        <tbody>
          {r.exposures.variants.map((v) => (
            <tr key={v.variant}>
              <th scope="row">
                {v.variant}
                {byKey.get(v.variant) && byKey.get(v.variant)!.name !== v.variant && <span class="muted small"> ({byKey.get(v.variant)!.name})</span>}
              </th>
              <td>{v.n.toLocaleString("en")}</td>
              <td>{r.exposures.total > 0 ? share(v.n / r.exposures.total) : "n/a"}</td>
              <td>{share(v.expectedShare)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Total</th>
            <td>{r.exposures.total.toLocaleString("en")}</td>
            <td colSpan={2} class="muted small">
              {r.srm.flagged ? "sample ratio mismatch" : `sample ratio check passed (${pText(r.srm.pValue)})`}
            </td>
          </tr>
        </tfoot>
      </table>
      {r.warnings.length > 0 && (
        <>
          <h3>Warnings</h3>
          <ul class="warnings">
            {r.warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </>
      )}
      {r.metrics.length === 0 ? (
        <p class="muted">No metrics to analyse: give the experiment a primary metric or guardrails.</p>
      ) : (
        r.metrics.map((m) => <MetricResults key={`${m.role}-${m.metric.id}`} metric={m} results={r} />)
      )}
    </>
  );
}
