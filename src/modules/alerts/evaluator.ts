import { SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import { ApiError } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { emitEvent } from "../../lib/outbox";
import { LeasedRounds, Notifiers } from "../../lib/rounds";
import { type AlertRuleRow, enabledRules, findRule, recordCheck } from "./store";
import { ACTIONS, type AlertNotifier, type AlertRule, type AlertTransition, type Comparator, EVALUATE_EVERY_MS } from "./types";

/** Whether a value meets a rule's comparison with its threshold. */
export function meets(value: number, comparator: Comparator, threshold: number): boolean {
  switch (comparator) {
    case "gt":
      return value > threshold;
    case "gte":
      return value >= threshold;
    case "lt":
      return value < threshold;
    case "lte":
      return value <= threshold;
  }
}

/** The window a rule looks at when evaluated at `nowMs`: the last `windowHours` hours, [now - window, now) in epoch seconds. */
export function windowAt(nowMs: number, windowHours: number): { from: number; to: number } {
  const to = Math.floor(nowMs / 1000);
  return { from: to - windowHours * 3600, to };
}

/** The lock of a project's alert rules: every rule write and every evaluation's read-then-write. */
export function rulesLock(projectId: string): string {
  return `alert-rules:${projectId}`;
}

export type EvaluationReport = { checked: number; skipped: number; transitions: AlertTransition[] };

/**
 * Evaluates alert rules: each enabled rule's metric over its trailing window
 * as one bucket, compared with its threshold. A change of state (ok → firing,
 * firing → ok) is written with its audit row (`alert.fire`, `alert.resolve`,
 * by the system) in one transaction that locks the project's rules and reads
 * the rule again, so concurrent evaluations (two servers, two timers) make
 * one transition; it is then notified once. No change: only the last value
 * and check time move. A rule whose metric no longer compiles, or whose
 * value could not be read, is logged (once per problem) and left as it is.
 */
export class AlertEvaluator {
  private readonly notifiers = new Notifiers<AlertTransition>();
  /** Rule id → the problem last logged for it (logged again only when it changes). */
  private readonly problems = new Map<string, string>();
  /** The timed rounds: on one server only (the lease), with the analytics clock. */
  private readonly rounds: LeasedRounds;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly toRule: (row: AlertRuleRow) => AlertRule,
  ) {
    this.rounds = new LeasedRounds(
      ctx,
      "alerts:evaluate",
      ctx.options.alertsEveryMs ?? EVALUATE_EVERY_MS,
      () => this.evaluateDue(ctx.services.analytics.now()),
      "alert evaluation failed; retrying at the next round",
    );
  }

  /** Adds a delivery of transitions beside the server log (connectors, tests); answers its removal. */
  addNotifier(fn: AlertNotifier): () => void {
    return this.notifiers.add(fn);
  }

  /** Evaluates every enabled rule of every project as of `nowMs` (epoch ms). */
  async evaluateDue(nowMs: number): Promise<EvaluationReport> {
    const report: EvaluationReport = { checked: 0, skipped: 0, transitions: [] };
    // Rules of one metric and window share one read of the event store.
    const values = new Map<string, Promise<number>>();
    const rows = await enabledRules(this.ctx.store);
    // Problems of rules since deleted or disabled are forgotten (logged again if they come back).
    const enabled = new Set(rows.map((r) => r.id));
    for (const id of this.problems.keys()) if (!enabled.has(id)) this.problems.delete(id);
    for (const row of rows) {
      if (this.ctx.shutdown.aborted) break;
      const windowHours = Number(row.window_hours);
      const { from, to } = windowAt(nowMs, windowHours);
      const key = `${row.project_id}\u0000${row.metric_id}\u0000${windowHours}`;
      let pending = values.get(key);
      if (!pending) values.set(key, (pending = this.ctx.services.metrics.valueOver(row.project_id, row.metric_id, from, to)));
      let value: number;
      try {
        value = await pending;
      } catch (err) {
        this.problem(row, err);
        report.skipped++;
        continue;
      }
      this.problems.delete(row.id);
      const transition = await this.record(row, { value, windowHours, from, to, at: new Date(nowMs).toISOString() });
      report.checked++;
      if (transition) {
        report.transitions.push(transition);
        await this.notify(transition.projectId, transition.rule, transition);
      }
    }
    return report;
  }

  /** Writes one evaluation: the rule is read again under the lock (it may have changed, or been evaluated later, since). */
  private record(row: AlertRuleRow, check: { value: number; windowHours: number; from: number; to: number; at: string }): Promise<AlertTransition | null> {
    const projectId = row.project_id;
    return this.ctx.store.write(async (tx) => {
      await tx.lock(rulesLock(projectId));
      const current = await findRule(tx, projectId, row.id);
      // Gone, disabled or re-windowed meanwhile: this value is not its to record.
      if (!current || Number(current.enabled) !== 1 || Number(current.window_hours) !== check.windowHours) return null;
      // A later evaluation already decided: an older one never moves the state back.
      if (current.last_checked_at !== null && current.last_checked_at > check.at) return null;
      const firing = meets(check.value, current.comparator as Comparator, Number(current.threshold));
      const next = firing ? "firing" : "ok";
      if (next === current.state) {
        await recordCheck(tx, current.id, { value: check.value, checkedAt: check.at });
        return null;
      }
      await recordCheck(tx, current.id, { value: check.value, checkedAt: check.at, state: next });
      const kind = firing ? "fire" : "resolve";
      await recordAudit(tx, {
        projectId,
        action: firing ? ACTIONS.fire : ACTIONS.resolve,
        subjectId: current.id,
        subjectName: current.name,
        actor: SYSTEM_ACTOR,
        detail: { metricId: current.metric_id, value: check.value, comparator: current.comparator, threshold: Number(current.threshold), windowHours: check.windowHours, from: check.from, to: check.to },
      });
      // A queue item for the firing rule (the ops module), in this transaction.
      if (firing) await this.ctx.services.ops.fileForAlert(tx, projectId, { ruleId: current.id, ruleName: current.name, metricId: current.metric_id, value: check.value, comparator: current.comparator, threshold: Number(current.threshold), windowHours: check.windowHours, at: check.at });
      // What connectors hear (the outbox, in this transaction); payload documented in connectors/events.ts.
      await emitEvent(tx, {
        projectId,
        type: firing ? "alert.firing" : "alert.resolved",
        payload: { ruleId: current.id, rule: current.name, metricId: current.metric_id, value: check.value, comparator: current.comparator, threshold: Number(current.threshold), windowHours: check.windowHours, from: check.from, to: check.to, at: check.at },
      });
      const rule = this.toRule({ ...current, state: next, last_value: check.value, last_checked_at: check.at, last_transition_at: check.at });
      return { kind, projectId, rule, value: check.value, from: check.from, to: check.to, at: check.at } satisfies AlertTransition;
    });
  }

  /**
   * Delivers one transition: the server log, then every added notifier
   * (connectors plug in here, issue 15). A failing notifier is logged; the
   * transition stands.
   */
  async notify(projectId: string, rule: AlertRule, transition: AlertTransition): Promise<void> {
    const fields = {
      projectId,
      ruleId: rule.id,
      rule: rule.name,
      metricId: rule.metricId,
      value: transition.value,
      comparator: rule.comparator,
      threshold: rule.threshold,
      windowHours: rule.windowHours,
      notify: rule.notify ?? "project default",
      at: transition.at,
    };
    if (transition.kind === "fire") this.ctx.log.warn("alert firing", fields);
    else this.ctx.log.info("alert resolved", fields);
    await this.notifiers.notify(transition, (err) => this.ctx.log.warn("alert notification failed", { projectId, ruleId: rule.id, error: String(err) }));
  }

  private problem(row: AlertRuleRow, err: unknown): void {
    const uncompilable = err instanceof ApiError && err.status === 422;
    const message = err instanceof ApiError ? `${err.message}${err.detail ? ` (${err.detail})` : ""}` : String(err);
    if (this.problems.get(row.id) === message) return;
    this.problems.set(row.id, message);
    this.ctx.log.warn(uncompilable ? "alert rule skipped: its metric no longer compiles" : "alert rule skipped: its metric could not be read", {
      projectId: row.project_id,
      ruleId: row.id,
      rule: row.name,
      metricId: row.metric_id,
      error: message,
    });
  }

  /** Stops the timer and waits for a round in progress. */
  close(): Promise<void> {
    return this.rounds.close();
  }
}
