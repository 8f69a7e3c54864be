import { apiOf, call } from "../../../web/dashboard/api";
import type { alertRoutes } from "../routes";

export const alertApi = apiOf<ReturnType<typeof alertRoutes>>();

export type AlertRule = NonNullable<Awaited<ReturnType<typeof alertApi.api.admin["alert-rules"]["get"]>>["data"]>[number];
/** The server's comparators (the page does not import server code). */
export const COMPARATORS = ["gt", "gte", "lt", "lte"] as const;
export type Comparator = (typeof COMPARATORS)[number];
export const COMPARATOR_SIGNS: Record<Comparator, string> = { gt: ">", gte: "≥", lt: "<", lte: "≤" };
export const COMPARATOR_LABELS: Record<Comparator, string> = { gt: "gt: above", gte: "gte: at least", lt: "lt: below", lte: "lte: at most" };

export const loadRules = () => call(alertApi.api.admin["alert-rules"].get({ query: {} }));

const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

/** "value over 24 h > 100", with the metric's name when known. */
export function conditionText(r: AlertRule, metricName?: string): string {
  const sign = COMPARATOR_SIGNS[r.comparator as Comparator] ?? r.comparator;
  return `${metricName ?? "value"} over ${r.windowHours} h ${sign} ${number.format(r.threshold)}`;
}
export const formatValue = (v: number | null) => (v === null ? "not checked yet" : number.format(v));
