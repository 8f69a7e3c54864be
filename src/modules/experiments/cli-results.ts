import type { Static } from "elysia";
import type { ResultsSchema } from "./results-contract";
import { table, when } from "../../cli/client-command";

// What `svc experiments results` prints for people: the exposures with the sample-ratio check, then a table
// per metric (lift, p-values, chance to beat control, verdict). The number formats are shared with cli.ts.

type Results = Static<typeof ResultsSchema>;
type MetricResult = Results["metrics"][number];
type TreatmentResult = MetricResult["treatments"][number];

export const pct = (x: number, digits = 1) => `${Number((x * 100).toFixed(digits))} %`;
const signedPct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)} %`;
/** A number for people: 4 significant digits, whole numbers as they are. */
function num(x: number | null | undefined): string {
  if (x === null || x === undefined) return "-";
  if (Number.isInteger(x)) return String(x);
  return String(Number(x.toPrecision(4)));
}
/** `p = 0.0021`, or `p < 0.0001`. */
const pEquals = (p: number) => (p < 0.0001 ? "p < 0.0001" : `p = ${pText(p)}`);
/** A chance as a share, never rounded to a certainty it is not. */
function chanceText(x: number): string {
  if (x > 0.999 && x < 1) return ">99.9 %";
  if (x < 0.001 && x > 0) return "<0.1 %";
  return pct(x);
}
const signedNum = (x: number) => `${x >= 0 ? "+" : "−"}${num(Math.abs(x))}`;
function pText(p: number | null | undefined): string {
  if (p === null || p === undefined) return "-";
  return p < 0.0001 ? "<0.0001" : String(Number(p.toPrecision(2)));
}

const TESTS: Record<MetricResult["test"], string> = {
  mean: "mean per unit, Welch t-test",
  proportion: "share of units that converted, two-proportion test",
  ratio: "ratio of sums, delta method",
};

/** The per-variant value of a metric: a share for proportions. */
const armValue = (m: MetricResult, mean: number | null) => (mean === null ? "-" : m.test === "proportion" ? pct(mean, 2) : num(mean));

function liftText(t: TreatmentResult): string {
  const f = t.frequentist;
  if (f.relative) return `${signedPct(f.relative.estimate)} [${signedPct(f.relative.ci[0])}, ${signedPct(f.relative.ci[1])}]`;
  if (f.absolute) return `Δ ${signedNum(f.absolute.estimate)} [${signedNum(f.absolute.ci[0])}, ${signedNum(f.absolute.ci[1])}]`;
  return "-";
}

function verdictText(t: TreatmentResult): string {
  return t.harm ? `${t.verdict}: HARM` : t.verdict;
}

function metricSection(m: MetricResult, r: Results): string {
  const level = `${Number(((1 - r.alpha) * 100).toFixed(1))} %`;
  const role = m.role === "primary" ? "Primary metric" : `Guardrail (${m.worseWhen === "increase" ? "an increase" : "a decrease"} is harm)`;
  const first = m.treatments[0]?.frequentist.control;
  const rows: (string | number)[][] = [];
  if (first) rows.push([r.exposures.variants[0]?.variant ?? "control", first.n, armValue(m, first.mean), "(control)", "", "", "", ""]);
  for (const t of m.treatments) {
    rows.push([
      t.variant,
      t.frequentist.treatment.n,
      armValue(m, t.frequentist.treatment.mean),
      liftText(t),
      pText(t.frequentist.absolute?.pValue),
      pText(t.sequential?.pValue),
      t.bayesian ? chanceText(t.bayesian.chanceToBeatControl) : "-",
      verdictText(t),
    ]);
  }
  const lines = [
    `${role}: ${m.metric.name} (${m.metric.kind}; ${TESTS[m.test] ?? m.test})`,
    table(["VARIANT", "UNITS", m.test === "proportion" ? "CONVERTED" : m.test === "ratio" ? "RATIO" : "MEAN", `LIFT [${level} CI]`, "P-VALUE", "ALWAYS-VALID P", "CHANCE TO BEAT CONTROL", "VERDICT"], rows, {
      full: ["VARIANT", `LIFT [${level} CI]`],
    }),
  ];
  if (m.cuped) lines.push(`CUPED: variance reduced by ${m.cuped.varianceReduction.map((v) => pct(v)).join(", ")} (pre-period ${m.cuped.preDays} days before each unit's first exposure)`);
  return lines.join("\n");
}

export function resultsText(r: Results): string {
  const e = r.experiment;
  if (e.startedAt === null) return `${e.name} (${e.id}) is a draft: no results until it runs (\`svc experiments start ${e.name}\`).`;
  const since = e.stoppedAt ? `ran ${when(e.startedAt)} to ${when(e.stoppedAt)}` : `running since ${when(e.startedAt)}`;
  const days = `${Number(r.sampleDays.toFixed(1))} of ${r.minSampleDays} minimum sample days`;
  const reading =
    r.method === "bayesian"
      ? `bayesian: a chance to beat control of at least ${pct(1 - r.alpha)} is an increase, at most ${pct(r.alpha)} a decrease`
      : r.minimumReached
        ? `frequentist at α = ${r.alpha}: the fixed-horizon test decides`
        : `frequentist at α = ${r.alpha}: before the minimum sample days only the always-valid sequential test decides`;
  const lines = [`${e.name} (${e.id}): ${e.status}, ${since}, ${days}`, `Verdicts read the project's method, ${reading}.`, ""];

  const srm = r.srm;
  if (srm.flagged) {
    const banner = "!".repeat(78);
    lines.push(
      banner,
      `!!! SAMPLE RATIO MISMATCH: exposures ${r.exposures.variants.map((v) => v.n).join(" / ")} do not fit the weights (expected ${srm.expected.map((x) => num(Number(x.toFixed(1)))).join(" / ")};`,
      `!!! χ² = ${num(srm.chiSquare)}, ${pEquals(srm.pValue)}, flagged below ${srm.threshold}). Assignment or exposure logging is broken:`,
      "!!! do not trust any result below until it is fixed.",
      banner,
      "",
    );
  }
  const total = r.exposures.total;
  lines.push(
    `Exposures: ${total} unit${total === 1 ? "" : "s"}${r.exposures.firstAt ? `, first ${when(r.exposures.firstAt)}, last ${when(r.exposures.lastAt)}` : ""}`,
    table(
      ["VARIANT", "UNITS", "SHARE", "EXPECTED"],
      r.exposures.variants.map((v) => [v.variant, v.n, total ? pct(v.n / total) : "-", pct(v.expectedShare)]),
    ),
    srm.flagged ? `Sample ratio: MISMATCH (χ² = ${num(srm.chiSquare)}, ${pEquals(srm.pValue)})` : `Sample ratio: ok (χ² = ${num(srm.chiSquare)}, ${pEquals(srm.pValue)}; flagged below ${srm.threshold})`,
  );
  if (r.metrics.length === 0) {
    lines.push("", `No metrics to analyse: give it one with \`svc experiments update ${e.name} --primary-metric METRIC\`.`);
  }
  for (const m of r.metrics) lines.push("", metricSection(m, r));
  // The mismatch is the banner above; the other warnings are listed.
  const warnings = r.warnings.filter((w) => !(srm.flagged && w.startsWith("Sample ratio mismatch")));
  if (warnings.length) lines.push("", "Warnings:", ...warnings.map((w) => `  - ${w}`));
  return lines.join("\n");
}
