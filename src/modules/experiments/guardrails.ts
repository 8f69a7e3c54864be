import { SYSTEM_ACTOR } from "../../lib/audit";
import { ApiError } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { LeasedRounds, Notifiers } from "../../lib/rounds";
import { type Results, analyze } from "./analysis";
import { toExperiment } from "./store";
import type { Experiment } from "./types";
import { allRunning } from "./store";

/** How often running experiments' guardrails are checked unless AppOptions.experimentsEveryMs says otherwise. */
export const GUARDRAILS_EVERY_MS = 15 * 60_000;

/** An experiment the guardrail check stopped: what connectors and the dashboard are told. */
export type AutoRollback = { projectId: string; experiment: Experiment; reason: string; results: Results };
export type RollbackNotifier = (event: AutoRollback) => void | Promise<void>;

type Stopper = (projectId: string, id: string, reason: string) => Promise<Experiment>;

/**
 * Auto-rollback: every round (one server per round, by a lease), each
 * running experiment of a project with `analysis.autoRollback` that has run
 * its minimum sample days is analysed on its guardrails; the first
 * treatment whose guardrail moved significantly the harmful way (by the
 * project's method) stops the experiment with outcome rollback, by
 * `system`, with the reason in the outcome and the audit row. Then the
 * server log and every notifier hear it (connectors plug in, issue 15).
 */
export class GuardrailWatcher {
  private readonly notifiers = new Notifiers<AutoRollback>();
  private readonly rounds: LeasedRounds;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly stop: Stopper,
  ) {
    this.rounds = new LeasedRounds(
      ctx,
      "experiments:guardrails",
      ctx.options.experimentsEveryMs ?? GUARDRAILS_EVERY_MS,
      () => this.checkAll(ctx.services.analytics.now()),
      "guardrail check failed; retrying at the next round",
    );
  }

  addNotifier(fn: RollbackNotifier): () => void {
    return this.notifiers.add(fn);
  }

  /** One round as of `nowMs`; answers the experiments it rolled back. A failing experiment is logged and skipped. */
  async checkAll(nowMs: number): Promise<AutoRollback[]> {
    const done: AutoRollback[] = [];
    const settings = new Map<string, { autoRollback: boolean; method: "frequentist" | "bayesian"; significanceThreshold: number; minSampleDays: number } | null>();
    const universes = new Map<string, Map<string, string>>();
    for (const row of await allRunning(this.ctx.store)) {
      if (this.ctx.shutdown.aborted) break;
      const projectId = row.project_id;
      if (!settings.has(projectId)) settings.set(projectId, (await this.ctx.services.projects.find(projectId))?.analysis ?? null);
      const analysis = settings.get(projectId);
      if (!analysis?.autoRollback || JSON.parse(row.guardrail_metric_ids).length === 0) continue;
      if (!universes.has(projectId)) universes.set(projectId, new Map((await this.ctx.services.universes.list(projectId)).map((u) => [u.id, u.name])));
      const experiment = toExperiment(row, universes.get(projectId)!.get(row.universe_id) ?? row.universe_id);
      try {
        const results = await analyze(this.ctx, projectId, experiment, analysis, nowMs, "guardrails");
        if (!results.minimumReached) continue;
        const reason = harmOf(results);
        if (!reason) continue;
        let stopped: Experiment;
        try {
          stopped = await this.stop(projectId, experiment.id, reason);
        } catch (err) {
          // Stopped by a person meanwhile: theirs is the decision.
          if (err instanceof ApiError && err.status === 400) continue;
          throw err;
        }
        const event: AutoRollback = { projectId, experiment: stopped, reason, results };
        done.push(event);
        await this.notify(event);
      } catch (err) {
        this.ctx.log.warn("guardrail check of an experiment failed", { projectId, experimentId: experiment.id, experiment: experiment.name, error: err instanceof ApiError ? `${err.message}${err.detail ? ` (${err.detail})` : ""}` : String(err) });
      }
    }
    return done;
  }

  private async notify(event: AutoRollback): Promise<void> {
    this.ctx.log.warn("experiment rolled back by its guardrail", { projectId: event.projectId, experimentId: event.experiment.id, experiment: event.experiment.name, reason: event.reason });
    await this.notifiers.notify(event, (err) => this.ctx.log.warn("auto-rollback notification failed", { projectId: event.projectId, experimentId: event.experiment.id, error: String(err) }));
  }

  close(): Promise<void> {
    return this.rounds.close();
  }
}

/** The first harmful guardrail move, said so a person can check it; null when none. */
export function harmOf(results: Results): string | null {
  for (const m of results.metrics) {
    if (m.role !== "guardrail") continue;
    for (const t of m.treatments) {
      if (!t.harm) continue;
      const rel = t.frequentist.relative;
      const move = rel ? `${rel.estimate >= 0 ? "+" : ""}${(rel.estimate * 100).toFixed(1)} %` : `${t.verdict}`;
      const evidence =
        results.method === "bayesian"
          ? `chance to beat control ${((t.bayesian?.chanceToBeatControl ?? 0) * 100).toFixed(1)} %`
          : `p = ${(t.frequentist.absolute?.pValue ?? t.sequential?.pValue ?? 1).toPrecision(3)} < ${results.alpha}`;
      return `Guardrail ${m.metric.name} ${m.worseWhen === "increase" ? "rose" : "fell"} in variant ${t.variant} (${move} against control, ${evidence}) after ${results.sampleDays.toFixed(1)} days`;
    }
  }
  return null;
}
