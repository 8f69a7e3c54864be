// One piece: the guarded rollout's state machine (create, stages, pause, rollback, complete), whose moves share one lock scope and audit shape.
import { guardPublish, runApproved } from "../../lib/approvals";
import { type AuditActor, SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import type { Env } from "../../lib/envs";
import { ApiError, alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { checkLimit } from "../../lib/validate";
import { newId, randomBase62 } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { emitEvent } from "../../lib/outbox";
import type { OutboxEventType } from "../../lib/outbox-types";
import { bumpRevision } from "../../lib/revisions";
import type { Queryable, Tx } from "../../lib/store";
import type { ConfigRule } from "../../sdk/configs";
import type { GateRule } from "../../sdk/gates";
import { publicRules } from "../configs/rules";
import type { PublishedRollout } from "../../sdk/rollouts";
import { checkDescription, checkEnv } from "../experiments/checks";
import { checkRules } from "../gates/rules";
import { lockScope as metricsLock } from "../metrics/service";
import { checkOnRegression, checkStages, checkStartAt, checkWatch, type WatchInput } from "./checks";
import { RolloutMonitor } from "./monitor";
import { activeConfigRollouts,
  ACTIVE_STATUSES,
  CHECKS_KEPT,
  type CheckRow,
  type RolloutRow,
  SERVING_STATUSES,
  activeFor,
  activeGateRollouts,
  activeOn,
  activeWatching,
  checksOf,
  deleteRollout,
  insertCheck,
  insertRollout,
  rolloutById,
  rolloutsByIdPrefix,
  rolloutsOfProject,
  servingOnEnv,
  setLastCheck,
  updateRollout,
} from "./store";
import { ACTIONS, type CheckResult, DEFAULT_FALSE_ALARM_RATE, DEFAULT_STAGES, type Outcome, type Rollout, type RolloutMoves, type RolloutStatus, STATUSES, type Stage, type WatchedMetric } from "./types";

export type Actor = AuditActor;

/** A body's gate or config the project does not have: NOT_FOUND naming the field. */
const refNotFound = (kind: "gate" | "config", ref: string) => (err: unknown): never => {
  if (err instanceof ApiError && err.status === 404) throw notFound(`${kind === "gate" ? "Gate" : "Config"} ${ref} not found`, `${kind}: no ${kind} ${ref} in this project`);
  throw err;
};

export type CreateInput = {
  gate?: string;
  config?: string;
  env: string;
  /** A gate's new rules. */
  rules?: unknown;
  /** A config's new value (default: the env's draft). */
  value?: unknown;
  stages?: Stage[];
  metrics?: WatchInput[];
  /** Relative increase of the error rate tolerated (default 0). */
  errorTolerance?: number;
  onRegression?: "pause" | "rollback";
  notify?: boolean;
  falseAlarmRate?: number;
  startAt?: string;
  description?: string;
};

export type PatchInput = { description?: string | null; notify?: boolean; onRegression?: "pause" | "rollback" };

const lockScope = (projectId: string) => `rollouts:${projectId}`;
const SERVING: readonly string[] = SERVING_STATUSES;

/**
 * Guarded rollouts of a gate's new rules or a config's new value on one env:
 * stages of growing percentages, the units inside the current stage get the
 * new value (src/sdk/rollouts.ts decides, in SDKs and OFREP alike), and the
 * monitor (monitor.ts) compares them with the rest each round, advancing,
 * pausing or rolling back. Every change is audited in its transaction, and
 * every change of what units get bumps the env's revision (snapshot, SSE).
 */
export class RolloutsService implements RolloutMoves {
  readonly monitor: RolloutMonitor;

  constructor(private readonly ctx: ServiceContext) {
    this.monitor = new RolloutMonitor(ctx, this);
  }

  private now(): number {
    return this.ctx.services.analytics.now();
  }

  /** The snapshot's `rollouts` section: running and paused rollouts of the env, by id. */
  async published(projectId: string, env: Env): Promise<Record<string, PublishedRollout>> {
    const out: Record<string, PublishedRollout> = Object.create(null);
    for (const row of await servingOnEnv(this.ctx.store, projectId, env)) {
      const stages = JSON.parse(row.stages) as Stage[];
      const base = { name: row.subject_name, salt: row.salt, stage: Number(row.stage), percent: stages[Number(row.stage)]!.percent };
      const change = JSON.parse(row.change) as { rules?: GateRule[]; value?: unknown; configRules?: ConfigRule[] };
      const configRules = change.configRules;
      out[row.id] = row.kind === "gate" ? { kind: "gate", ...base, rules: change.rules ?? [] } : { kind: "config", ...base, value: change.value, ...(configRules ? { rules: configRules } : {}) };
    }
    return out;
  }

  async list(projectId: string, options: { q?: string; status?: string; env?: string; kind?: string } = {}): Promise<Rollout[]> {
    if (options.status !== undefined && !(STATUSES as readonly string[]).includes(options.status)) throw validation("Unknown status", `status: one of ${STATUSES.join(", ")}`);
    if (options.env !== undefined) checkEnv(options.env);
    if (options.kind !== undefined && options.kind !== "gate" && options.kind !== "config") throw validation("Unknown kind", "kind: gate or config");
    const rows = (await rolloutsOfProject(this.ctx.store, projectId)).filter(
      (r) => (options.status === undefined || r.status === options.status) && (options.env === undefined || r.env === options.env) && (options.kind === undefined || r.kind === options.kind),
    );
    return filterByQuery(rows.map(toRollout), options.q, (r) => [r.subject, r.description, r.id]);
  }

  async get(projectId: string, ref: string): Promise<Rollout> {
    return toRollout(await this.find(this.ctx.store, projectId, ref));
  }

  /** The rollout's checks, newest first (the dashboard's chart). */
  async checks(projectId: string, ref: string, limit = 500): Promise<CheckResult[]> {
    checkLimit(limit, CHECKS_KEPT);
    const row = await this.find(this.ctx.store, projectId, ref);
    return (await checksOf(this.ctx.store, row.id, limit)).map((c: CheckRow) => JSON.parse(c.result) as CheckResult);
  }

  /**
   * Refuses (VALIDATION naming them) to let a gate or config go while a
   * rollout of it is unfinished: gates and configs call this in their delete
   * transaction, beside the experiments' check.
   */
  async refuseIfRolling(q: Queryable, projectId: string, kind: "gate" | "config", name: string): Promise<void> {
    const active = (await activeFor(q, projectId, name, kind)).map((r) => `${r.id} (${r.env}, ${r.status})`);
    if (active.length === 0) return;
    throw validation(`The ${kind} ${name} has an unfinished rollout: ${active.join(", ")}`, `id: roll back or complete ${active.length > 1 ? "them" : "it"} first (POST /api/admin/rollouts/{id}/rollback)`);
  }

  async create(projectId: string, input: CreateInput, actor: Actor): Promise<Rollout> {
    if ((input.gate === undefined) === (input.config === undefined)) throw validation("Name a gate or a config", "gate: the gate to roll out (with rules), or config: the config (with value or its env's draft)");
    const env = checkEnv(input.env);
    checkDescription(input.description);
    const stages = checkStages(input.stages ?? DEFAULT_STAGES);
    const watch = await checkWatch(this.ctx, projectId, input.metrics ?? [], input.errorTolerance);
    const falseAlarmRate = input.falseAlarmRate ?? DEFAULT_FALSE_ALARM_RATE;
    if (!(falseAlarmRate > 0 && falseAlarmRate <= 0.5)) throw validation("Invalid false alarm rate", "falseAlarmRate: a number above 0, at most 0.5 (default 0.05)");
    const nowMs = this.now();
    const startAt = checkStartAt(input.startAt, nowMs);

    let kind: "gate" | "config";
    let subject: { id: string; name: string };
    let change: { rules?: GateRule[]; value?: unknown; configRules?: ConfigRule[] };
    let previous: { rules?: GateRule[]; value?: unknown; configRules?: ConfigRule[]; version: number };
    if (input.gate !== undefined) {
      if (input.value !== undefined) throw validation("A gate's rollout takes rules", "value: only with config (a gate rolls out new rules)");
      if (input.rules === undefined) throw validation("Say which rules to roll out", "rules: the gate's new rule list");
      const rules = checkRules(input.rules, "rules");
      const gate = await this.ctx.services.gates.get(projectId, input.gate).catch(refNotFound("gate", input.gate));
      kind = "gate";
      subject = { id: gate.id, name: gate.name };
      change = { rules };
      previous = { rules: gate.envs[env].rules, version: gate.envs[env].version };
    } else {
      const config = await this.ctx.services.configs.get(projectId, input.config!).catch(refNotFound("config", input.config!));
      const draft = config.drafts[env];
      let value = input.value;
      let rules = input.rules;
      if (value === undefined && rules === undefined) {
        if (!draft) throw validation(`Config ${config.name} has no draft on ${env}`, `value: give the new value (or rules), or save a draft on ${env} first`);
        value = draft.value;
        rules = draft.rules;
      }
      value ??= draft?.value ?? config.envs[env].value;
      const problems = await this.ctx.services.configs.valueProblems(projectId, config.id, value, "value");
      if (problems.length > 0) throw validation("The value does not match the config's schema", problems.slice(0, 5).join("; "));
      kind = "config";
      subject = { id: config.id, name: config.name };
      change = { value };
      // New rules (issue 29): checked as a draft's are, their splits given buckets continuing the published ones.
      if (rules !== undefined) change.configRules = await this.ctx.services.configs.rulesToPublish(projectId, config.id, env, rules);
      previous = { value: config.envs[env].value, configRules: config.envs[env].rules, version: config.envs[env].version };
    }

    const startsNow = startAt === null || Date.parse(startAt) <= nowMs;
    const now = new Date(nowMs).toISOString();
    const row: RolloutRow = {
      id: newId("rol"),
      project_id: projectId,
      env,
      kind,
      subject_id: subject.id,
      subject_name: subject.name,
      description: input.description ?? null,
      change: JSON.stringify(change),
      previous: JSON.stringify(previous),
      stages: JSON.stringify(stages),
      stage: 0,
      stage_started_at: startsNow ? now : null,
      status: startsNow ? "running" : "scheduled",
      start_at: startAt,
      watch: JSON.stringify(watch),
      on_regression: input.onRegression ?? "rollback",
      notify: input.notify === false ? 0 : 1,
      false_alarm_rate: falseAlarmRate,
      salt: randomBase62(16),
      outcome: null,
      last_check: null,
      created_by: actor.email,
      created_at: now,
      updated_at: now,
    };
    checkOnRegression(row.on_regression);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      // Starting a rollout publishes a percentage on its env: not directly where the env requires approval.
      await guardPublish(tx, { projectId, env, resource: "rollouts", subject: subject.id, actor });
      await this.lockReferences(tx, projectId, kind, subject, watch);
      const busy = await activeOn(tx, projectId, kind, subject.id, env);
      if (busy) throw alreadyExists(`${kind === "gate" ? "Gate" : "Config"} ${subject.name} already has a rollout on ${env}`, `${kind}: ${busy.id} is ${busy.status}; finish or roll it back first`);
      // Units in the stage are evaluated with the new rules: they get the gates' bound on evaluation work too.
      if (change.rules) await this.ctx.services.gates.checkRolloutRules(tx, projectId, env, subject.name, change.rules);
      // A config's new rules may name segments: none of them goes away before this commits (a segment's delete takes this lock).
      if (change.configRules) await this.ctx.services.configs.checkRulesInTransaction(tx, projectId, env, subject.name, change.configRules);
      await insertRollout(tx, row);
      await recordAudit(tx, { projectId, action: ACTIONS.create, subjectId: row.id, subjectName: subject.name, env, actor, detail: { kind, status: row.status, stages, startAt } });
      if (row.status === "running") await bumpRevision(tx, projectId, env);
      return toRollout(row);
    });
  }

  /**
   * The subject and the watched metrics, found above, are still the
   * project's in the write's transaction, under the locks their deletes take
   * (the metrics lock, then the gate's or config's own: the order every
   * writer takes them in), so a concurrent delete either sees the rollout
   * and refuses, or goes first and this is NOT_FOUND.
   */
  private async lockReferences(tx: Tx, projectId: string, kind: "gate" | "config", subject: { id: string; name: string }, watch: WatchedMetric[]): Promise<void> {
    const { metrics, gates, configs } = this.ctx.services;
    if (watch.some((w) => w.metricId !== null)) await tx.lock(metricsLock(projectId));
    for (const [i, w] of watch.entries()) {
      if (w.metricId !== null && !(await metrics.resolveId(projectId, w.metricId, tx))) {
        // watch[0] is the error rate, always there: the body's metrics start at watch[1].
        throw notFound(`Metric ${w.metric} not found`, `metrics[${i - 1}].metric: no metric ${w.metric} in this project`);
      }
    }
    // The gates' project lock first, as a publish takes it: a segment the new rules name cannot be deleted or changed meanwhile.
    if (kind === "gate") await gates.lockProject(tx, projectId);
    const locked = kind === "gate" ? await gates.lockReference(tx, projectId, subject.id) : await configs.lockReference(tx, projectId, subject.id);
    if (!locked) throw notFound(`${kind === "gate" ? "Gate" : "Config"} ${subject.name} not found`, `${kind}: no ${kind} ${subject.name} in this project`);
  }

  /**
   * The new rules of the project's unfinished gate rollouts (the segments they name are in use: the
   * gates module prices them, carries them in the snapshot while `serving`, and refuses their deletion).
   */
  async gateRules(q: Queryable, projectId: string): Promise<{ id: string; env: Env; gate: string; serving: boolean; rules: GateRule[] }[]> {
    return (await activeGateRollouts(q, projectId)).map((r) => ({
      id: r.id,
      env: r.env as Env,
      gate: r.subject_name,
      serving: SERVING.includes(r.status),
      rules: (JSON.parse(r.change) as { rules?: GateRule[] }).rules ?? [],
    }));
  }

  /** The unfinished rollouts of configs' new rules, with the conditions those rules hold (segments named there are in use). */
  async configRules(q: Queryable, projectId: string): Promise<{ id: string; env: Env; config: string; serving: boolean; rules: ConfigRule[] }[]> {
    const out: { id: string; env: Env; config: string; serving: boolean; rules: ConfigRule[] }[] = [];
    for (const r of await activeConfigRollouts(q, projectId)) {
      const rules = (JSON.parse(r.change) as { configRules?: ConfigRule[] }).configRules;
      if (rules) out.push({ id: r.id, env: r.env as Env, config: r.subject_name, serving: SERVING.includes(r.status), rules });
    }
    return out;
  }

  /** Ids of the unfinished rollouts that watch a metric: metrics refuse to delete it (under the metrics lock). */
  metricUsers(q: Queryable, projectId: string, metricId: string): Promise<string[]> {
    return activeWatching(q, projectId, metricId);
  }

  /** Description, notification and the action on regression; the plan and the change are fixed once created. */
  async update(projectId: string, ref: string, patch: PatchInput, actor: Actor): Promise<Rollout> {
    if (patch.description !== undefined) checkDescription(patch.description);
    if (patch.onRegression !== undefined) checkOnRegression(patch.onRegression);
    return this.change(projectId, ref, actor, ACTIONS.update, (row) => ({
      ...row,
      description: patch.description === undefined ? row.description : patch.description,
      notify: patch.notify === undefined ? row.notify : patch.notify ? 1 : 0,
      on_regression: patch.onRegression ?? row.on_regression,
    }));
  }

  /** running → paused by hand: units keep what the stage gives them; nothing advances. */
  pause(projectId: string, ref: string, actor: Actor, reason?: string): Promise<Rollout> {
    return this.change(projectId, ref, actor, ACTIONS.pause, (row) => {
      expectStatus(row, ["running"], "only a running rollout pauses");
      return { ...row, status: "paused", outcome: JSON.stringify(outcomeOf("paused", actor, reason ?? null, this.now())) };
    });
  }

  /** paused → running: the stage's time counts again from now. */
  resume(projectId: string, ref: string, actor: Actor): Promise<Rollout> {
    return this.change(projectId, ref, actor, ACTIONS.resume, (row) => {
      expectStatus(row, ["paused"], "only a paused rollout resumes");
      return { ...row, status: "running", outcome: null, stage_started_at: new Date(this.now()).toISOString() };
    });
  }

  /** The next stage now (by hand), or the completion after the last; a scheduled rollout starts. */
  async advance(projectId: string, ref: string, actor: Actor): Promise<Rollout> {
    const row = await this.find(this.ctx.store, projectId, ref);
    expectStatus(row, ACTIVE_STATUSES, "it is finished");
    if (row.status === "scheduled") return this.startNow(projectId, row.id, actor);
    const stages = JSON.parse(row.stages) as Stage[];
    if (Number(row.stage) >= stages.length - 1) return this.complete(projectId, row.id, actor);
    return this.moveToStage(projectId, row.id, Number(row.stage) + 1, actor, null);
  }

  /** Back to the old value for every unit, by hand or by the monitor. */
  rollback(projectId: string, ref: string, actor: Actor, reason: string | null, regression?: Pick<Outcome, "metric" | "estimate" | "interval">): Promise<Rollout> {
    return this.change(
      projectId,
      ref,
      actor,
      ACTIONS.rollback,
      (row) => {
        expectStatus(row, ACTIVE_STATUSES, "it is finished");
        return { ...row, status: "rolled_back", outcome: JSON.stringify({ ...outcomeOf("rolled_back", actor, reason, this.now()), ...regression }) };
      },
      "rollout.rolled_back",
    );
  }

  /** Deletes a finished or scheduled rollout (a serving one: roll it back first). */
  async remove(projectId: string, ref: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, ref);
      if (SERVING.includes(row.status)) throw validation(`Rollout ${row.id} is ${row.status}`, "status: roll it back (POST /api/admin/rollouts/{id}/rollback) or let it complete first");
      await deleteRollout(tx, row.id);
      await recordAudit(tx, { projectId, action: ACTIONS.delete, subjectId: row.id, subjectName: row.subject_name, env: row.env, actor, detail: { status: row.status } });
    });
  }

  // ---- what the monitor (and advance) call ----

  /** scheduled → running at stage 0. */
  startNow(projectId: string, id: string, actor: Actor): Promise<Rollout> {
    return this.change(projectId, id, actor, ACTIONS.start, (row) => {
      expectStatus(row, ["scheduled"], "only a scheduled rollout starts");
      return { ...row, status: "running", stage: 0, stage_started_at: new Date(this.now()).toISOString() };
    });
  }

  /**
   * To stage `stage`. The monitor passes the stage it judged (`fromStage`):
   * a rollout that moved, or that a person paused, since is left alone; a
   * person's advance (null) also moves a paused one, which then runs.
   */
  moveToStage(projectId: string, id: string, stage: number, actor: Actor, fromStage: number | null): Promise<Rollout> {
    return this.change(
      projectId,
      id,
      actor,
      ACTIONS.advance,
      (row) => {
        expectStatus(row, fromStage === null ? ["running", "paused"] : ["running"], fromStage === null ? "it is not serving" : "it is not running");
        if (fromStage !== null && Number(row.stage) !== fromStage) throw validation("The rollout moved meanwhile", `stage: now ${row.stage}`);
        return { ...row, status: "running", outcome: null, stage, stage_started_at: new Date(this.now()).toISOString() };
      },
      "rollout.advanced",
    );
  }

  /** The automatic pause on a regression. */
  pauseOnRegression(projectId: string, id: string, reason: string, regression: Pick<Outcome, "metric" | "estimate" | "interval">): Promise<Rollout> {
    return this.change(
      projectId,
      id,
      { ...SYSTEM_ACTOR },
      ACTIONS.pause,
      (row) => {
        expectStatus(row, ["running"], "only a running rollout pauses");
        return { ...row, status: "paused", outcome: JSON.stringify({ ...outcomeOf("paused", SYSTEM_ACTOR, reason, this.now()), ...regression }) };
      },
      "rollout.paused",
    );
  }

  /**
   * The change becomes the published value for everyone (the gate's rules
   * or the config's value, through their own services: versions, audit,
   * revision), then the rollout completes. Publishing first means a crash in
   * between leaves a rollout whose next completion publishes the same value
   * again (skipped when it is already published). Servers completing the
   * same rollout at once take turns by a lease, so it publishes once.
   */
  async complete(projectId: string, id: string, actor: Actor, byMonitor = false): Promise<Rollout> {
    // The monitor completes running rollouts only (one a person paused meanwhile stays paused); a person may complete a paused one.
    const allowed = byMonitor ? ["running"] : ["running", "paused"];
    const claimed = await this.find(this.ctx.store, projectId, id);
    if (!(await this.ctx.store.lease(`rollouts:complete:${claimed.id}`, 60_000))) throw validation(`Rollout ${claimed.id} is being completed by another server`, "status: completing");
    const row = await this.find(this.ctx.store, projectId, claimed.id);
    expectStatus(row, allowed, "it is not serving");
    const change = JSON.parse(row.change) as { rules?: GateRule[]; value?: unknown; configRules?: ConfigRule[] };
    const env = row.env as Env;
    const by = { email: actor.email, type: actor.type };
    // Finishing what was started when it was allowed (creating a rollout is guarded): not a new direct publish.
    await runApproved(async () => {
      if (row.kind === "gate") {
        const gate = await this.ctx.services.gates.get(projectId, row.subject_id);
        if (JSON.stringify(gate.envs[env].rules) !== JSON.stringify(change.rules)) await this.ctx.services.gates.setRules(projectId, row.subject_id, env, change.rules, by);
      } else {
        const config = await this.ctx.services.configs.get(projectId, row.subject_id);
        if (change.configRules) {
          // Value and rules go out together as one version; the buckets the stage used are kept.
          if (JSON.stringify(config.envs[env].value) !== JSON.stringify(change.value) || JSON.stringify(config.envs[env].rules) !== JSON.stringify(publicRules(change.configRules))) {
            await this.ctx.services.configs.publishState(projectId, row.subject_id, env, change.value, change.configRules, by);
          }
        } else if (JSON.stringify(config.envs[env].value) !== JSON.stringify(change.value)) await this.ctx.services.configs.patch(projectId, row.subject_id, { [env]: change.value }, by);
      }
    });
    return this.change(
      projectId,
      id,
      actor,
      ACTIONS.complete,
      (current) => {
        expectStatus(current, allowed, "it is not serving");
        const stages = JSON.parse(current.stages) as Stage[];
        return { ...current, status: "completed", stage: stages.length - 1, outcome: JSON.stringify(outcomeOf("completed", actor, null, this.now())) };
      },
      "rollout.completed",
    );
  }

  /** Records one check of the monitor on the rollout (its last_check and a history row), unless it finished meanwhile. */
  async recordCheck(projectId: string, id: string, result: CheckResult): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      const row = await rolloutById(tx, projectId, id);
      if (!row || !SERVING.includes(row.status)) return;
      await insertCheck(tx, id, result.at, result.stage, JSON.stringify(result));
      await setLastCheck(tx, id, JSON.stringify(result));
    });
  }

  close(): Promise<void> {
    return this.monitor.close();
  }

  /**
   * One locked read-modify-write: the row as `next` makes it, its audit row,
   * the env's revision when what units get changed (status in or out of
   * serving, or the stage), and the connectors' event when asked and the
   * rollout notifies.
   */
  private change(projectId: string, ref: string, actor: Actor, action: string, next: (row: RolloutRow) => RolloutRow, event?: OutboxEventType): Promise<Rollout> {
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, ref);
      const updated = { ...next(row), updated_at: new Date(this.now()).toISOString() };
      await updateRollout(tx, updated);
      const view = toRollout(updated);
      await recordAudit(tx, {
        projectId,
        action,
        subjectId: row.id,
        subjectName: row.subject_name,
        env: row.env,
        actor: { email: actor.email, type: actor.type },
        detail: { status: updated.status, stage: view.stage, percent: view.percent, ...(updated.outcome && updated.outcome !== row.outcome ? { outcome: JSON.parse(updated.outcome) } : {}) },
      });
      const served = (r: RolloutRow) => (SERVING.includes(r.status) ? `${r.stage}` : "-");
      if (served(row) !== served(updated)) await bumpRevision(tx, projectId, row.env as Env);
      if (event && Number(updated.notify) === 1) await emitEvent(tx, { projectId, type: event, payload: eventPayload(view, actor) });
      return view;
    });
  }

  private async find(q: Queryable | Tx, projectId: string, ref: string): Promise<RolloutRow> {
    const row = await rolloutById(q, projectId, ref);
    if (row) return row;
    if (ref.startsWith("rol_") && ref.length > 4) {
      const rows = await rolloutsByIdPrefix(q, projectId, ref);
      if (rows.length === 1) return rows[0]!;
      if (rows.length > 1) throw notFound(`Rollout id prefix ${ref} matches several rollouts`, "id: give more of the id");
    } else {
      // A gate's or config's name finds its one unfinished rollout.
      const active = await activeFor(q, projectId, ref);
      if (active.length === 1) return active[0]!;
      if (active.length > 1) throw notFound(`${ref} names several unfinished rollouts`, `id: one of ${active.map((r) => `${r.id} (${r.kind} on ${r.env})`).join(", ")}`);
    }
    throw notFound(`Rollout ${ref} not found`);
  }
}

function expectStatus(row: RolloutRow, allowed: readonly string[], why: string): void {
  if (!allowed.includes(row.status)) throw validation(`Rollout ${row.id} is ${row.status}: ${why}`, `status: ${row.status}`);
}

function outcomeOf(kind: Outcome["kind"], actor: Actor, reason: string | null, nowMs: number): Outcome {
  return { kind, by: actor.email, auto: actor.type === "system", reason, at: new Date(nowMs).toISOString() };
}

function eventPayload(r: Rollout, actor: Actor): Record<string, unknown> {
  return {
    rolloutId: r.id,
    kind: r.kind,
    name: r.subject,
    env: r.env,
    status: r.status,
    stage: r.stage,
    percent: r.percent,
    reason: r.outcome?.reason ?? null,
    metric: r.outcome?.metric ?? null,
    estimate: r.outcome?.estimate ?? null,
    interval: r.outcome?.interval ?? null,
    actor: actor.email,
  };
}

export function toRollout(row: RolloutRow): Rollout {
  const stages = JSON.parse(row.stages) as Stage[];
  const stage = Number(row.stage);
  const status = row.status as RolloutStatus;
  return {
    id: row.id,
    env: row.env as Env,
    kind: row.kind as "gate" | "config",
    subject: row.subject_name,
    subjectId: row.subject_id,
    description: row.description,
    change: JSON.parse(row.change),
    previous: JSON.parse(row.previous),
    stages,
    stage,
    percent: status === "scheduled" || status === "rolled_back" ? 0 : status === "completed" ? 100 : stages[stage]!.percent,
    stageStartedAt: row.stage_started_at,
    status,
    startAt: row.start_at,
    watch: JSON.parse(row.watch),
    onRegression: row.on_regression as "pause" | "rollback",
    notify: Number(row.notify) === 1,
    falseAlarmRate: Number(row.false_alarm_rate),
    outcome: row.outcome === null ? null : JSON.parse(row.outcome),
    lastCheck: row.last_check === null ? null : JSON.parse(row.last_check),
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
