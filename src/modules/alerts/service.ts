import { recordAudit } from "../../lib/audit";
import { alreadyExists, forbidden, immutableField, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Queryable, Tx } from "../../lib/store";
import { CONTROL_CHARS, checkResourceName } from "../../lib/validate";
import { lockScope as metricsLock } from "../metrics/service";
import { AlertEvaluator, type EvaluationReport, rulesLock } from "./evaluator";
import { type AlertRuleRow, deleteRule, findRule, insertRule, ruleNamesNotifying, ruleNamesUsingMetric, rulesOfProject, updateRuleSettings } from "./store";
import {
  ACTIONS,
  type Actor,
  type AlertNotifier,
  type AlertRule,
  type AlertRuleInput,
  type AlertRulePatch,
  type AlertTransition,
  CHANNEL_MAX,
  COMPARATORS,
  type Comparator,
  NAME_MAX,
  type NotifyTarget,
  URL_MAX,
  WINDOW_HOURS_MAX,
} from "./types";

export * from "./types";

function toRule(r: AlertRuleRow): AlertRule {
  return {
    id: r.id,
    name: r.name,
    metricId: r.metric_id,
    threshold: Number(r.threshold),
    comparator: r.comparator as Comparator,
    windowHours: Number(r.window_hours),
    enabled: Number(r.enabled) === 1,
    notify: r.notify === null ? null : (JSON.parse(r.notify) as NotifyTarget),
    state: r.state,
    lastValue: r.last_value === null ? null : Number(r.last_value),
    lastCheckedAt: r.last_checked_at,
    lastTransitionAt: r.last_transition_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function checkThreshold(threshold: number): void {
  if (typeof threshold !== "number" || !Number.isFinite(threshold)) throw validation("threshold must be a finite number", "threshold: a finite number");
}

function checkComparator(comparator: string): void {
  if (!(COMPARATORS as readonly string[]).includes(comparator)) throw validation("Invalid comparator", `comparator: one of ${COMPARATORS.join(", ")}`);
}

function checkWindowHours(windowHours: number): void {
  if (!Number.isInteger(windowHours) || windowHours < 1 || windowHours > WINDOW_HOURS_MAX) {
    throw validation(`windowHours must be an integer from 1 to ${WINDOW_HOURS_MAX}`, `windowHours: an integer from 1 to ${WINDOW_HOURS_MAX} (hours)`);
  }
}

function checkText(field: string, value: string, max: number): void {
  if (value.length < 1 || value.length > max) throw validation(`${field} must be 1 to ${max} characters`, `${field}: ${value.length} characters`);
  if (CONTROL_CHARS.test(value)) throw validation(`${field} must not contain control characters`, `${field}: control characters are not allowed`);
}

/** A delivery target: null (the project default) or an object naming at least one of connectorId, channel, webhookUrl. */
export function checkNotify(notify: NotifyTarget | null | undefined): NotifyTarget | null {
  if (notify === undefined || notify === null) return null;
  const out: NotifyTarget = {};
  const extra = Object.keys(notify).filter((k) => !["connectorId", "channel", "webhookUrl"].includes(k));
  if (extra.length) throw validation("Invalid notify target", `notify.${extra[0]}: is not a field of notify`);
  if (notify.connectorId !== undefined) checkText("notify.connectorId", (out.connectorId = notify.connectorId), 128);
  if (notify.channel !== undefined) checkText("notify.channel", (out.channel = notify.channel), CHANNEL_MAX);
  if (notify.webhookUrl !== undefined) {
    checkText("notify.webhookUrl", notify.webhookUrl, URL_MAX);
    let url: URL;
    try {
      url = new URL(notify.webhookUrl);
    } catch {
      throw validation("notify.webhookUrl must be an absolute http(s) URL", "notify.webhookUrl: not a URL");
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw validation("notify.webhookUrl must be an absolute http(s) URL", `notify.webhookUrl: ${url.protocol} is not http or https`);
    if (url.username || url.password) throw validation("notify.webhookUrl must not carry credentials", "notify.webhookUrl: remove user:password@ (secrets belong in a connector)");
    out.webhookUrl = notify.webhookUrl;
  }
  if (Object.keys(out).length === 0) {
    throw validation("notify names where to deliver, or is null", "notify: give connectorId, channel or webhookUrl, or null for the project default");
  }
  return out;
}

/** A rule's metric is fixed for its life: 409 IMMUTABLE_FIELD. */
export const immutableMetric = () => immutableField("metricId cannot be changed", "metricId: a rule's metric is fixed; create another rule for another metric");

const duplicateName = (name: string) => alreadyExists(`An alert rule named ${name} already exists in this project`, "name: choose another name");

/**
 * Alert rules: a metric compared with a threshold over a trailing window
 * (evaluator.ts checks every enabled rule every minute, on one server). A
 * rule's metric is fixed for its life; rules are deleted only from the
 * dashboard (a browser session), never with a key or token.
 */
export class AlertsService {
  private readonly evaluator: AlertEvaluator;

  constructor(private readonly ctx: ServiceContext) {
    this.evaluator = new AlertEvaluator(ctx, toRule);
  }

  async list(projectId: string, q?: string): Promise<AlertRule[]> {
    return filterByQuery((await rulesOfProject(this.ctx.store, projectId)).map(toRule), q, (r) => [r.name]);
  }

  async get(projectId: string, idOrName: string): Promise<AlertRule> {
    return toRule(await this.find(this.ctx.store, projectId, idOrName));
  }

  async create(projectId: string, input: AlertRuleInput, actor: Actor): Promise<{ id: string; name: string }> {
    checkResourceName(input.name, { max: NAME_MAX, idPrefix: "ar_", slashReason: "'/' is not allowed in names used in paths" });
    checkThreshold(input.threshold);
    checkComparator(input.comparator);
    const windowHours = input.windowHours ?? 1;
    checkWindowHours(windowHours);
    const notify = checkNotify(input.notify);
    try {
      return await this.ctx.store.write(async (tx) => {
        // The metric's lock first (as metric deletes take it): it cannot go while the rule is made. Then the connector's.
        await tx.lock(metricsLock(projectId));
        const metricId = await this.ctx.services.metrics.resolveId(projectId, input.metricId, tx);
        if (!metricId) throw notFound(`Metric ${input.metricId} not found`, `metricId: no metric ${input.metricId} in this project`);
        await this.checkConnector(tx, projectId, notify);
        await tx.lock(rulesLock(projectId));
        if (await findRule(tx, projectId, input.name)) throw duplicateName(input.name);
        const now = nowIso();
        const row: AlertRuleRow = {
          id: newId("ar"),
          project_id: projectId,
          name: input.name,
          metric_id: metricId,
          threshold: input.threshold,
          comparator: input.comparator,
          window_hours: windowHours,
          enabled: input.enabled === false ? 0 : 1,
          notify: notify === null ? null : JSON.stringify(notify),
          state: "ok",
          last_value: null,
          last_checked_at: null,
          last_transition_at: null,
          created_at: now,
          updated_at: now,
        };
        await insertRule(tx, row);
        await recordAudit(tx, {
          projectId,
          action: ACTIONS.create,
          subjectId: row.id,
          subjectName: row.name,
          actor,
          detail: { metricId, comparator: input.comparator, threshold: input.threshold, windowHours, enabled: row.enabled === 1 },
        });
        return { id: row.id, name: row.name };
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(input.name);
      throw err;
    }
  }

  /**
   * A partial update of threshold, comparator, windowHours, enabled and
   * notify (null: the project default). A body carrying metricId, whatever
   * its value, is IMMUTABLE_FIELD. Disabling a rule puts it back to ok
   * without a notification; the next evaluation after enabling decides anew.
   */
  async update(projectId: string, idOrName: string, patch: AlertRulePatch, actor: Actor): Promise<{ id: string }> {
    if (Object.hasOwn(patch, "metricId")) throw immutableMetric();
    if (patch.threshold !== undefined) checkThreshold(patch.threshold);
    if (patch.comparator !== undefined) checkComparator(patch.comparator);
    if (patch.windowHours !== undefined) checkWindowHours(patch.windowHours);
    const notify = patch.notify === undefined ? undefined : checkNotify(patch.notify);
    return this.ctx.store.write(async (tx) => {
      // Connectors before rules, as in create (the order every writer takes them in).
      if (notify) await this.checkConnector(tx, projectId, notify);
      await tx.lock(rulesLock(projectId));
      const current = await this.find(tx, projectId, idOrName);
      const enabled = patch.enabled === undefined ? Number(current.enabled) : patch.enabled ? 1 : 0;
      const next: AlertRuleRow = {
        ...current,
        threshold: patch.threshold ?? current.threshold,
        comparator: patch.comparator ?? current.comparator,
        window_hours: patch.windowHours ?? current.window_hours,
        enabled,
        notify: notify === undefined ? current.notify : notify === null ? null : JSON.stringify(notify),
        state: enabled === 0 ? "ok" : current.state,
        updated_at: nowIso(),
      };
      await updateRuleSettings(tx, next);
      await recordAudit(tx, { projectId, action: ACTIONS.update, subjectId: current.id, subjectName: current.name, actor, detail: { fields: Object.keys(patch) } });
      return { id: current.id };
    });
  }

  /**
   * Deletes a rule: only from the dashboard (`fromDashboard`, a browser
   * session). Any other credential gets FORBIDDEN once the rule is found.
   */
  async remove(projectId: string, idOrName: string, actor: Actor, fromDashboard: boolean): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(rulesLock(projectId));
      const current = await this.find(tx, projectId, idOrName);
      if (!fromDashboard) {
        throw forbidden("Alert rules are deleted in the dashboard", "Sign in to the dashboard to delete a rule; with a key or token, disable it (PATCH enabled: false)");
      }
      await deleteRule(tx, current.id);
      await recordAudit(tx, { projectId, action: ACTIONS.delete, subjectId: current.id, subjectName: current.name, actor, detail: { metricId: current.metric_id } });
    });
  }

  /** Names of the project's rules that deliver through a connector (a connector in use cannot be deleted). */
  rulesNotifying(q: Queryable, projectId: string, connectorId: string): Promise<string[]> {
    return ruleNamesNotifying(q, projectId, connectorId);
  }

  /**
   * A notify target's connector must be one of the project's (NOT_FOUND
   * otherwise, the same answer for another project's id as for none),
   * checked in the write's transaction under the connectors lock, so a
   * concurrent delete either sees the rule or happens first.
   */
  private async checkConnector(tx: Tx, projectId: string, notify: NotifyTarget | null): Promise<void> {
    const id = notify?.connectorId;
    if (id === undefined) return;
    if (!(await this.ctx.services.connectors.lockReference(tx, projectId, id))) {
      throw notFound(`Connector ${id} not found`, `notify.connectorId: no connector ${id} in this project`);
    }
  }

  /** Names of the project's rules on a metric (a metric in use cannot be deleted). */
  rulesUsingMetric(q: Queryable, projectId: string, metricId: string): Promise<string[]> {
    return ruleNamesUsingMetric(q, projectId, metricId);
  }

  /** Evaluates every enabled rule as of `nowMs` (the timer passes the analytics clock; tests pass times). */
  evaluateDue(nowMs: number): Promise<EvaluationReport> {
    return this.evaluator.evaluateDue(nowMs);
  }

  /** Delivers a transition (server log, then added notifiers): the one place connectors plug in. */
  notify(projectId: string, rule: AlertRule, transition: AlertTransition): Promise<void> {
    return this.evaluator.notify(projectId, rule, transition);
  }

  addNotifier(fn: AlertNotifier): () => void {
    return this.evaluator.addNotifier(fn);
  }

  close(): Promise<void> {
    return this.evaluator.close();
  }

  private async find(q: Queryable, projectId: string, idOrName: string): Promise<AlertRuleRow> {
    const row = await findRule(q, projectId, idOrName);
    if (!row) throw notFound(`Alert rule ${idOrName} not found`);
    return row;
  }
}
