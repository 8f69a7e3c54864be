import { SYSTEM_ACTOR } from "../../lib/audit";
import type { Measure, VariantStats } from "../../lib/eventstore/types";
import type { ServiceContext } from "../../lib/module";
import { LeasedRounds } from "../../lib/rounds";
import { rolloutExposureId } from "../../sdk/rollouts";
import { upstream } from "../analytics/service";
import { judgeMetric, previousState, regressionOf, testAlpha } from "./judge";
import type { RolloutsService } from "./service";
import { type RolloutRow, allDue } from "./store";
import { ERROR_EVENTS, type CheckResult, MAX_INGEST_LAG_MS, type MetricCheck, type Stage, type WatchedMetric } from "./types";

/** How often rollouts are checked unless AppOptions.rolloutsEveryMs says otherwise: the issue asks for at least every minute. */
export const ROLLOUTS_EVERY_MS = 60_000;

const ERROR_MEASURE: Measure[] = [{ kind: "count", event: ERROR_EVENTS, filters: [] }];

/** What one round did to one rollout (tests and the bench read it). */
export type RoundOutcome = { projectId: string; rolloutId: string; check: CheckResult | null; error?: string };

/**
 * The monitor: every round (one server per round, by the store's lease),
 * each scheduled rollout whose time came starts, and each running rollout
 * is checked as of `nowMs`:
 * - the current stage's two groups (exposures of `<id>_<stage>` since the
 *   stage began) are compared on every watched metric (judge.ts);
 * - a regression pauses or rolls back at once (by `system`, audited, the
 *   snapshot revised, connectors told);
 * - otherwise the stage advances when its time is up, unless the data is
 *   stale (ingest lag over MAX_INGEST_LAG_MS) or a metric could not be read:
 *   then it waits for a check that can see.
 * Everything lives in the store (stage, its start, the last check), so a
 * restart mid-stage picks up where it was.
 */
export class RolloutMonitor {
  private readonly rounds: LeasedRounds;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly service: RolloutsService,
  ) {
    this.rounds = new LeasedRounds(ctx, "rollouts:monitor", ctx.options.rolloutsEveryMs ?? ROLLOUTS_EVERY_MS, () => this.checkAll(ctx.services.analytics.now()), "rollout check failed; retrying at the next round");
  }

  /** One round as of `nowMs`. A rollout that fails is logged and skipped. */
  async checkAll(nowMs: number): Promise<RoundOutcome[]> {
    const rows = await allDue(this.ctx.store);
    // Rollouts are independent: a few at a time keep the store's readers (SQLite's analysis workers) busy. Each
    // lane takes the next rollout as soon as it is done (not in batches that wait for their slowest): the workers
    // never sit idle mid-round, and with analyses in flight SQLite runs each whole, not split (see experimentStats).
    const PARALLEL = 4;
    const done: (RoundOutcome | undefined)[] = new Array(rows.length);
    let next = 0;
    const lane = async () => {
      while (next < rows.length && !this.ctx.shutdown.aborted) {
        const i = next++;
        done[i] = await this.checkOne(rows[i]!, nowMs);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, lane));
    return done.filter((o): o is RoundOutcome => o !== undefined);
  }

  private async checkOne(row: RolloutRow, nowMs: number): Promise<RoundOutcome> {
    const base = { projectId: row.project_id, rolloutId: row.id };
    try {
      if (row.status === "scheduled") {
        if (row.start_at !== null && Date.parse(row.start_at) > nowMs) return { ...base, check: null };
        await this.service.startNow(row.project_id, row.id, SYSTEM_ACTOR);
        return { ...base, check: null };
      }
      const check = await this.check(row, nowMs);
      await this.service.recordCheck(row.project_id, row.id, check);
      await this.act(row, check);
      return { ...base, check };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.ctx.log.warn("rollout check failed", { projectId: row.project_id, rolloutId: row.id, error });
      return { ...base, check: null, error };
    }
  }

  /** The check of a running rollout's current stage as of `nowMs`, and what it calls for. */
  async check(row: RolloutRow, nowMs: number): Promise<CheckResult> {
    const stages = JSON.parse(row.stages) as Stage[];
    const watch = JSON.parse(row.watch) as WatchedMetric[];
    const stage = Number(row.stage);
    const { percent, minutes } = stages[stage]!;
    const started = Date.parse(row.stage_started_at ?? row.created_at);
    const store = this.ctx.services.analytics.eventStore;
    const ingestLagMs = store.ingestLagMs?.(nowMs) ?? 0;
    const stale = ingestLagMs > MAX_INGEST_LAG_MS;
    const alpha = testAlpha(Number(row.false_alarm_rate), stages, watch.length);
    const last = row.last_check === null ? null : (JSON.parse(row.last_check) as CheckResult);
    const metrics: MetricCheck[] = [];
    const problems: string[] = [];
    // Only a stage with both groups has a comparison; 100 % has none (it was judged up to the stage before).
    if (percent > 0 && percent < 100) {
      for (const w of watch) {
        try {
          const measures = w.metricId === null ? ERROR_MEASURE : await this.ctx.services.metrics.compiled(row.project_id, w.metricId);
          const test = measures.length === 2 ? "ratio" : measures[0]!.kind === "unique" ? "proportion" : "mean";
          const { variants } = await upstream(
            store.experimentStats({ projectId: row.project_id, experimentId: rolloutExposureId(row.id, stage), from: started, to: nowMs + 1, measures: measures as [Measure] | [Measure, Measure] }),
          );
          const arm = (name: string): VariantStats | undefined => variants.find((v) => v.variant === name);
          metrics.push(judgeMetric(w, test, { old: arm("old"), new: arm("new") }, alpha, previousState(last, stage, w.metric, alpha)));
        } catch (err) {
          problems.push(`${w.metric}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    const regression = regressionOf(metrics);
    const timeUp = nowMs - started >= minutes * 60_000;
    const decision: CheckResult["decision"] = regression
      ? (row.on_regression as "pause" | "rollback")
      : stale || problems.length > 0
        ? "wait"
        : timeUp
          ? stage >= stages.length - 1
            ? "complete"
            : "advance"
          : "none";
    return { at: new Date(nowMs).toISOString(), stage, percent, ingestLagMs, stale, metrics, decision, problems };
  }

  /** Carries out a check's decision (a rollout someone changed meanwhile is left as they made it). */
  private async act(row: RolloutRow, check: CheckResult): Promise<void> {
    const { project_id: projectId, id } = row;
    switch (check.decision) {
      case "advance":
        await this.service.moveToStage(projectId, id, check.stage + 1, SYSTEM_ACTOR, check.stage);
        return;
      case "complete":
        await this.service.complete(projectId, id, SYSTEM_ACTOR, true);
        return;
      case "pause":
      case "rollback": {
        const found = regressionOf(check.metrics)!;
        const regression = { metric: found.check.metric, estimate: found.check.estimate!, interval: found.check.interval! };
        const done = check.decision === "pause" ? await this.service.pauseOnRegression(projectId, id, found.reason, regression) : await this.service.rollback(projectId, id, SYSTEM_ACTOR, found.reason, regression);
        this.ctx.log.warn(`rollout ${check.decision === "pause" ? "paused" : "rolled back"} on a regression`, { projectId, rolloutId: id, subject: done.subject, env: done.env, reason: found.reason });
        return;
      }
      default:
        return;
    }
  }

  close(): Promise<void> {
    return this.rounds.close();
  }
}
