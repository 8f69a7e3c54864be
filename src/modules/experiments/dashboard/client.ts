import { apiOf, call } from "../../../web/dashboard/api";
import { SEGMENTS } from "../../universes/dashboard/client";
import type { experimentRoutes } from "../routes";

export const experimentApi = apiOf<ReturnType<typeof experimentRoutes>>();

export type Experiment = NonNullable<Awaited<ReturnType<typeof experimentApi.api.admin.experiments.get>>["data"]>[number];
export type Results = NonNullable<Awaited<ReturnType<ReturnType<typeof experimentApi.api.admin.experiments>["results"]["get"]>>["data"]>;
export type MetricResult = Results["metrics"][number];
export type TreatmentResult = MetricResult["treatments"][number];

export { ENVS, type Env } from "../../../lib/envs";
export { SEGMENTS };

/** The server's states (the page does not import server code). */
export const STATUSES = ["draft", "running", "stopped"] as const;
export type Status = (typeof STATUSES)[number];
export const WORSE_WHEN = ["increase", "decrease"] as const;
export type WorseWhen = (typeof WORSE_WHEN)[number];

export const loadExperiments = (query: { q?: string; status?: string } = {}) => call(experimentApi.api.admin.experiments.get({ query }));
export const experimentOf = (ref: string) => experimentApi.api.admin.experiments({ id: ref });

/** An allocation is a range of the universe's segments, said as a holdout is: its share (30) and "segments 0–2,999 (30 % of units)". */
export { segmentShare as allocationShare, segmentsText as allocationText } from "../../universes/dashboard/client";

/** Whether two [start, end) ranges share a segment. */
export const overlaps = (a: readonly number[], b: readonly number[]) => a[0]! < b[1]! && b[0]! < a[1]!;

/** "+4.1 %", "−2.3 %" (a real minus sign), from a fraction. */
export function percent(fraction: number | null | undefined, digits = 1): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return "n/a";
  const text = (Math.abs(fraction) * 100).toFixed(digits);
  if (Number(text) === 0) return `0${digits > 0 ? `.${"0".repeat(digits)}` : ""} %`;
  return `${fraction < 0 ? "−" : "+"}${text} %`;
}

/** A share without a sign: "50 %". */
export const share = (fraction: number, digits = 1) => `${Number((fraction * 100).toFixed(digits))} %`;

/** A p-value as people read them: "0.003", "< 0.0001". */
export function pValueText(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return "n/a";
  if (p < 0.0001) return "< 0.0001";
  return p < 0.001 ? p.toPrecision(2) : p.toFixed(p < 0.01 ? 4 : 3);
}

/** "p = 0.003", "p < 0.0001". */
export const pText = (p: number | null | undefined) => (p !== null && p !== undefined && p < 0.0001 ? "p < 0.0001" : `p = ${pValueText(p)}`);

/** "[−0.3 %, +8.5 %]". */
export const intervalText = (ci: readonly number[] | null | undefined) => (ci && ci.length === 2 ? `[${percent(ci[0])}, ${percent(ci[1])}]` : "n/a");

/** Which result decides the verdicts, as the reply's settings say (analysis.ts verdictOf). */
export type Decider = "fixed" | "sequential" | "bayesian";
export function deciderOf(r: Pick<Results, "method" | "minimumReached">): Decider {
  return r.method === "bayesian" ? "bayesian" : r.minimumReached ? "fixed" : "sequential";
}
export const DECIDER_TEXT: Record<Decider, string> = {
  fixed: "the fixed-horizon test (p-value): the minimum sample days are reached",
  sequential: "the always-valid sequential test (sequential p): the minimum sample days are not reached yet, so the fixed-horizon p-value is not read",
  bayesian: "the chance to beat control (Bayesian)",
};

/** What a treatment's verdict means for this metric: good, harm or nothing known yet. */
export type Tone = "good" | "harm" | "none";
export function toneOf(m: Pick<MetricResult, "role" | "worseWhen">, t: Pick<TreatmentResult, "verdict" | "harm">): Tone {
  if (t.verdict === "inconclusive") return "none";
  if (m.role === "guardrail") return t.harm ? "harm" : "good";
  return t.verdict === "increase" ? "good" : "harm";
}

/** The verdict in words: "increase", "harm: increase", "inconclusive". */
export function verdictText(m: Pick<MetricResult, "role" | "worseWhen">, t: Pick<TreatmentResult, "verdict" | "harm">): string {
  if (t.verdict === "inconclusive") return "inconclusive";
  return toneOf(m, t) === "harm" ? `${t.verdict} (worse)` : `${t.verdict} (better)`;
}

/** The experiment's state in words, with its outcome once stopped. */
export function statusText(e: Pick<Experiment, "status" | "outcome">): string {
  if (e.status !== "stopped" || !e.outcome) return e.status;
  if (e.outcome.decision === "ship") return `stopped: shipped ${e.outcome.variant}`;
  return e.outcome.auto ? "stopped: rolled back automatically" : "stopped: rolled back";
}

/** The request fields a refusal's detail may name, for errorsByPath (web/dashboard/ui.tsx). */
export const EXPERIMENT_FIELDS = ["name", "description", "universe", "env", "variants", "allocation", "gate", "primaryMetric", "guardrailMetrics", "decision", "variant", "reason"] as const;
