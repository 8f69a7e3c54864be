import { notFound, validation } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { ERRORS_METRIC, STAGES_MAX, STAGE_MINUTES_MAX, type Stage, TOLERANCE_MAX, WATCH_MAX, type WatchedMetric } from "./types";

// The checks of a rollout's plan and watched metrics, each failure a VALIDATION naming its field (a metric the project does not have: NOT_FOUND).

/** Stages: 1 to 20, percentages growing strictly, the last 100; whole minutes each. */
export function checkStages(stages: Stage[]): Stage[] {
  if (!Array.isArray(stages) || stages.length < 1 || stages.length > STAGES_MAX) throw validation("Invalid stages", `stages: 1 to ${STAGES_MAX} stages`);
  let last = 0;
  stages.forEach((s, i) => {
    if (!(typeof s.percent === "number" && s.percent > last && s.percent <= 100)) {
      throw validation("Invalid stage percentage", `stages[${i}].percent: above ${last} (the previous stage's) and at most 100`);
    }
    if (!Number.isInteger(s.minutes) || s.minutes < 0 || s.minutes > STAGE_MINUTES_MAX) throw validation("Invalid stage duration", `stages[${i}].minutes: a whole number from 0 to ${STAGE_MINUTES_MAX}`);
    last = s.percent;
  });
  if (last !== 100) throw validation("The last stage must reach everyone", `stages[${stages.length - 1}].percent: 100 (the rollout completes there)`);
  return stages.map((s) => ({ percent: s.percent, minutes: s.minutes }));
}

/** An ISO 8601 time, or null to start now. */
export function checkStartAt(startAt: string | undefined, nowMs: number): string | null {
  if (startAt === undefined) return null;
  const at = Date.parse(startAt);
  if (!Number.isFinite(at) || !/^\d{4}-\d{2}-\d{2}T/.test(startAt)) throw validation("Invalid start time", "startAt: an ISO 8601 time such as 2026-11-24T09:00:00Z");
  if (at > nowMs + 366 * 86_400_000) throw validation("Start time too far ahead", "startAt: within a year");
  return new Date(at).toISOString();
}

/** What a regression does: pause or rollback. */
export function checkOnRegression(action: string): void {
  if (action !== "pause" && action !== "rollback") throw validation("Unknown action on regression", "onRegression: pause or rollback");
}

export type WatchInput = { metric: string; direction: "lower" | "higher"; tolerance?: number };

function checkTolerance(tolerance: number | undefined, field: string): number {
  const t = tolerance ?? 0;
  if (!(typeof t === "number" && t >= 0 && t <= TOLERANCE_MAX)) throw validation("Invalid tolerance", `${field}: the relative regression tolerated, from 0 to ${TOLERANCE_MAX} (0.05 = 5 % worse)`);
  return t;
}

/**
 * The watched metrics: the error rate always first (tracked errors per unit,
 * lower is better), then each named metric of the project once, with its
 * direction.
 */
export async function checkWatch(ctx: ServiceContext, projectId: string, metrics: WatchInput[], errorTolerance: number | undefined): Promise<WatchedMetric[]> {
  if (metrics.length > WATCH_MAX) throw validation("Too many metrics", `metrics: at most ${WATCH_MAX} (the error rate is always watched besides)`);
  const out: WatchedMetric[] = [{ metric: ERRORS_METRIC, metricId: null, direction: "lower", tolerance: checkTolerance(errorTolerance, "errorTolerance") }];
  for (let i = 0; i < metrics.length; i++) {
    const m = metrics[i]!;
    if (m.direction !== "lower" && m.direction !== "higher") throw validation("Say which way is better", `metrics[${i}].direction: lower or higher (is better)`);
    if (m.metric === ERRORS_METRIC) throw validation("The error rate is always watched", `metrics[${i}].metric: set errorTolerance for it instead`);
    // One lookup by id, id prefix or name; not found is the field's error here.
    const metric = await ctx.services.metrics.get(projectId, m.metric).catch(() => null);
    if (!metric) throw notFound(`Metric ${m.metric} not found`, `metrics[${i}].metric: no metric ${m.metric} in this project (GET /api/admin/metrics lists them)`);
    if (out.some((w) => w.metricId === metric.id)) throw validation("A metric is named twice", `metrics[${i}].metric: ${metric.name} is already watched`);
    out.push({ metric: metric.name, metricId: metric.id, direction: m.direction, tolerance: checkTolerance(m.tolerance, `metrics[${i}].tolerance`) });
  }
  return out;
}
