import { SYSTEM_ACTOR } from "../../lib/audit";
import { type Measure, type VariantStats, statsOfMany } from "../../lib/eventstore/types";
import type { ServiceContext } from "../../lib/module";
import { LeasedRounds } from "../../lib/rounds";
import { rolloutExposureId } from "../../sdk/rollouts";
import { upstreamFailure } from "../analytics/service";
import { judgeMetric, previousState, regressionOf, testAlpha } from "./judge";
import { type RolloutRow, allDue } from "./store";
import { ERROR_EVENTS, type CheckResult, MAX_INGEST_LAG_MS, type MetricCheck, type RolloutMoves, type Stage, type WatchedMetric } from "./types";

/** How often rollouts are checked unless AppOptions.rolloutsEveryMs says otherwise: the issue asks for at least every minute. */
export const ROLLOUTS_EVERY_MS = 60_000;

const ERROR_MEASURE: Measure[] = [{ kind: "count", event: ERROR_EVENTS, filters: [] }];

/** At most this many rollouts of a project share one reading (the statements' windows list). */
const GROUP_MAX = 100;

type MetricTest = MetricCheck["test"];
/** A watched metric of a rollout's current stage: its two groups, or why they could not be read. */
type Reading = { test: MetricTest; variants: VariantStats[] } | { problem: string };
/** Per rollout id, per watched metric's id (null: the error rate). */
type Readings = Map<string, Map<string | null, Reading>>;

/** Why a metric could not be read, as the API words an event store failure (upstreamFailure). */
function reasonOf(err: unknown): string {
  const failure = upstreamFailure(err);
  return failure instanceof Error ? failure.message : String(failure);
}

/**
 * A running rollout's current stage: its plan and watched metrics, when the stage began, and whether it compares
 * two groups (0 % < percent < 100 %; 100 % has none: it was judged up to the stage before).
 */
function stageOf(row: RolloutRow) {
  const stages = JSON.parse(row.stages) as Stage[];
  const stage = Number(row.stage);
  const { percent, minutes } = stages[stage]!;
  return {
    stages,
    watch: JSON.parse(row.watch) as WatchedMetric[],
    stage,
    percent,
    minutes,
    started: Date.parse(row.stage_started_at ?? row.created_at),
    compared: percent > 0 && percent < 100,
  };
}

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
    private readonly service: RolloutMoves,
  ) {
    this.rounds = new LeasedRounds(ctx, "rollouts:monitor", ctx.options.rolloutsEveryMs ?? ROLLOUTS_EVERY_MS, () => this.checkAll(ctx.services.analytics.now()), "rollout check failed; retrying at the next round");
  }

  /** One round as of `nowMs`. A rollout that fails is logged and skipped. */
  async checkAll(nowMs: number): Promise<RoundOutcome[]> {
    const rows = await allDue(this.ctx.store);
    // A project's rollouts are checked together: each metric's events are read once for all of them (statsOfMany).
    const groups: RolloutRow[][] = [];
    for (const row of rows) {
      const last = groups[groups.length - 1];
      if (last && last[0]!.project_id === row.project_id && last.length < GROUP_MAX) last.push(row);
      else groups.push([row]);
    }
    // Groups are independent: a few at a time keep the store's readers (SQLite's analysis workers) busy. Each lane
    // takes the next group as soon as it is done (not in batches that wait for their slowest).
    const PARALLEL = 4;
    const done: RoundOutcome[][] = new Array(groups.length);
    let next = 0;
    const lane = async () => {
      while (next < groups.length && !this.ctx.shutdown.aborted) {
        const i = next++;
        done[i] = await this.checkGroup(groups[i]!, nowMs);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, lane));
    return done.flat().filter((o) => o !== undefined);
  }

  /** One project's rollouts (`rows`, allDue's order): the readings of all, then each checked and acted on in turn. */
  private async checkGroup(rows: RolloutRow[], nowMs: number): Promise<RoundOutcome[]> {
    let readings: Readings = new Map();
    try {
      readings = await this.read(rows.filter((r) => r.status === "running"), nowMs);
    } catch (err) {
      // Each compared stage then waits with the reason as its problem (see check).
      this.ctx.log.warn("rollout metrics could not be read", { projectId: rows[0]!.project_id, error: err instanceof Error ? err.message : String(err) });
    }
    const outcomes: RoundOutcome[] = [];
    for (const row of rows) {
      if (this.ctx.shutdown.aborted) break;
      outcomes.push(await this.checkOne(row, nowMs, readings));
    }
    return outcomes;
  }

  private async checkOne(row: RolloutRow, nowMs: number, readings: Readings): Promise<RoundOutcome> {
    const base = { projectId: row.project_id, rolloutId: row.id };
    try {
      if (row.status === "scheduled") {
        if (row.start_at !== null && Date.parse(row.start_at) > nowMs) return { ...base, check: null };
        await this.service.startNow(row.project_id, row.id, SYSTEM_ACTOR);
        return { ...base, check: null };
      }
      const check = this.check(row, nowMs, readings);
      await this.service.recordCheck(row.project_id, row.id, check);
      await this.act(row, check);
      return { ...base, check };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.ctx.log.warn("rollout check failed", { projectId: row.project_id, rolloutId: row.id, error });
      return { ...base, check: null, error };
    }
  }

  /**
   * What every watched metric of the running rollouts `rows` (one project) reads as of `nowMs`: per rollout and
   * metric, the current stage's groups, or why they could not be read (only stages that compare: see stageOf).
   */
  private async read(rows: RolloutRow[], nowMs: number): Promise<Readings> {
    const readings: Readings = new Map();
    const compared = rows.map((row) => ({ row, ...stageOf(row) })).filter((r) => r.compared);
    if (compared.length === 0) return readings;
    const projectId = compared[0]!.row.project_id;
    const experiments = compared.map((r) => ({ experimentId: rolloutExposureId(r.row.id, r.stage), from: r.started }));
    // Each metric once (the error rate by its null id), with the rollouts that watch it.
    const metrics = new Map<string | null, { measures: Measure[] | Error; rollouts: number[] }>();
    compared.forEach((r, i) => {
      for (const w of r.watch) {
        const m = metrics.get(w.metricId) ?? { measures: [], rollouts: [] };
        m.rollouts.push(i);
        metrics.set(w.metricId, m);
      }
    });
    for (const [metricId, m] of metrics) {
      try {
        m.measures = metricId === null ? ERROR_MEASURE : await this.ctx.services.metrics.compiled(projectId, metricId);
      } catch (err) {
        m.measures = err instanceof Error ? err : new Error(String(err));
      }
    }
    const readable = [...metrics.values()].filter((m): m is typeof m & { measures: Measure[] } => !(m.measures instanceof Error));
    let answers: (Map<string, VariantStats[]> | Error)[];
    try {
      answers = await statsOfMany(this.ctx.services.analytics.eventStore, {
        projectId,
        to: nowMs + 1,
        experiments,
        metrics: readable.map((m) => ({ measures: m.measures as [Measure] | [Measure, Measure], experimentIds: m.rollouts.map((i) => experiments[i]!.experimentId) })),
      });
    } catch (err) {
      answers = readable.map(() => (err instanceof Error ? err : new Error(String(err))));
    }
    compared.forEach((r) => readings.set(r.row.id, new Map()));
    for (const [metricId, m] of metrics) {
      const k = readable.indexOf(m as (typeof readable)[number]);
      const answer = m.measures instanceof Error ? m.measures : answers[k]!;
      const problem = answer instanceof Error ? reasonOf(answer) : undefined;
      const test: MetricTest = m.measures instanceof Error ? "mean" : m.measures.length === 2 ? "ratio" : m.measures[0]!.kind === "unique" ? "proportion" : "mean";
      for (const i of m.rollouts) {
        const reading: Reading = problem !== undefined ? { problem } : { test, variants: (answer as Map<string, VariantStats[]>).get(experiments[i]!.experimentId) ?? [] };
        readings.get(compared[i]!.row.id)!.set(metricId, reading);
      }
    }
    return readings;
  }

  /** The check of a running rollout's current stage as of `nowMs` from its readings, and what it calls for. */
  check(row: RolloutRow, nowMs: number, readings: Readings): CheckResult {
    const { stages, watch, stage, percent, minutes, started, compared } = stageOf(row);
    const ingestLagMs = this.ctx.services.analytics.eventStore.ingestLagMs?.(nowMs) ?? 0;
    const stale = ingestLagMs > MAX_INGEST_LAG_MS;
    const alpha = testAlpha(Number(row.false_alarm_rate), stages, watch.length);
    const last = row.last_check === null ? null : (JSON.parse(row.last_check) as CheckResult);
    const metrics: MetricCheck[] = [];
    const problems: string[] = [];
    if (compared) {
      for (const w of watch) {
        const reading = readings.get(row.id)?.get(w.metricId) ?? { problem: "not read this round (see the server log)" };
        if ("problem" in reading) {
          problems.push(`${w.metric}: ${reading.problem}`);
          continue;
        }
        const arm = (name: string): VariantStats | undefined => reading.variants.find((v) => v.variant === name);
        metrics.push(judgeMetric(w, reading.test, { old: arm("old"), new: arm("new") }, alpha, previousState(last, stage, w.metric, alpha)));
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
